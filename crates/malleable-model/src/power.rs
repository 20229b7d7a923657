//! The power model of Chadha et al. 2020's power-aware strategy (section V-B): what a
//! job draws per node, what an idle node draws, and the power corridor
//! [l, u] the site's contract bounds the machine's draw with, as a schedule
//! of changes over time (the supplier may move it during the day).

use crate::ids::Time;

/// Watts.
pub type Watts = f64;

/// A job's draw per node: the user's `--min-power` / `--max-power` estimates
/// (Chadha et al. 2020, Listing 2) and, once the job runs and has been measured, its
/// average (section IV-D).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct JobPower {
    pub min_per_node: Watts,
    pub max_per_node: Watts,
    pub measured_per_node: Option<Watts>,
}

impl JobPower {
    /// A job whose draw is known to be `w` per node.
    pub fn fixed(w: Watts) -> Self {
        JobPower { min_per_node: w, max_per_node: w, measured_per_node: None }
    }

    /// The per-node draw Equation 1's lower bound is checked with: the
    /// measurement when there is one, else the user's minimum.
    pub fn low(&self) -> Watts {
        self.measured_per_node.unwrap_or(self.min_per_node)
    }

    /// The per-node draw the upper bound is checked with: the measurement,
    /// else the user's maximum.
    pub fn high(&self) -> Watts {
        self.measured_per_node.unwrap_or(self.max_per_node)
    }
}

/// The power corridor: the machine's draw must stay within `[low, high]`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Corridor {
    pub low: Watts,
    pub high: Watts,
}

impl Corridor {
    /// A corridor with `0 <= low < high`, both finite; the error says which
    /// rule `LOW-HIGH` broke.
    pub fn new(low: Watts, high: Watts) -> Result<Self, String> {
        if !low.is_finite() || !high.is_finite() {
            return Err(format!("{low}-{high}: bounds must be finite numbers of watts"));
        }
        if low < 0.0 {
            return Err(format!("{low}-{high}: LOW must not be negative"));
        }
        if low >= high {
            return Err(format!("{low}-{high}: LOW must be below HIGH"));
        }
        Ok(Corridor { low, high })
    }

    /// Parse `LOW-HIGH` in watts, e.g. `1700-2500`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let (l, h) = t.split_once('-').ok_or_else(|| format!("'{t}' is not LOW-HIGH in watts (e.g. 1700-2500)"))?;
        let num = |s: &str, which: &str| {
            s.trim().parse::<f64>().map_err(|_| format!("'{t}': {which} '{}' is not a number of watts", s.trim()))
        };
        Corridor::new(num(l, "LOW")?, num(h, "HIGH")?)
    }

    /// Whether a draw of `w` is inside.
    pub fn holds(&self, w: Watts) -> bool {
        self.low <= w && w <= self.high
    }
}

impl std::fmt::Display for Corridor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.low, self.high)
    }
}

/// The corridor now and its announced changes: from each change's time on,
/// its corridor holds, until the next change.
#[derive(Clone, Debug, PartialEq)]
pub struct CorridorSchedule {
    pub initial: Corridor,
    /// Sorted by time.
    pub changes: Vec<(Time, Corridor)>,
}

impl CorridorSchedule {
    pub fn constant(c: Corridor) -> Self {
        CorridorSchedule { initial: c, changes: Vec::new() }
    }

    /// Changes in any order; they are kept sorted by time.
    pub fn new(initial: Corridor, mut changes: Vec<(Time, Corridor)>) -> Self {
        changes.sort_by_key(|&(t, _)| t);
        CorridorSchedule { initial, changes }
    }

    /// The corridor in force at `t`.
    pub fn at(&self, t: Time) -> Corridor {
        self.changes.iter().take_while(|&&(when, _)| when <= t).last().map_or(self.initial, |&(_, c)| c)
    }
}

/// What the power-aware strategy knows of the machine at one pass.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PowerState {
    /// The corridor in force now.
    pub corridor: Corridor,
    /// What a node without a job draws (Chadha et al. 2020: 71 W).
    pub idle_node: Watts,
    /// What the machine draws now, when measured; otherwise strategies
    /// estimate it from the jobs' power and the idle nodes.
    pub measured_draw: Option<Watts>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corridor_parses_and_rejects_with_the_rule_broken() {
        assert_eq!(Corridor::parse(" 1700-2500 ").unwrap(), Corridor { low: 1700.0, high: 2500.0 });
        assert!(Corridor::parse("2500-1700").unwrap_err().contains("LOW must be below HIGH"));
        assert!(Corridor::parse("100-100").unwrap_err().contains("below"));
        assert!(Corridor::parse("abc-100").unwrap_err().contains("LOW 'abc' is not a number"));
        assert!(Corridor::parse("100").unwrap_err().contains("LOW-HIGH"));
        // "-5-100" splits at the first '-': LOW is empty, not a number.
        assert!(Corridor::parse("-5-100").is_err());
        assert!(Corridor::new(-5.0, 100.0).unwrap_err().contains("negative"));
        assert!(Corridor::new(f64::NAN, 100.0).is_err());
    }

    #[test]
    fn schedule_gives_the_corridor_in_force() {
        let c = |l, h| Corridor::new(l, h).unwrap();
        let s = CorridorSchedule::new(c(1700.0, 2500.0), vec![(600, c(2500.0, 3500.0)), (300, c(1000.0, 1700.0))]);
        assert_eq!(s.at(0), c(1700.0, 2500.0));
        assert_eq!(s.at(299), c(1700.0, 2500.0));
        assert_eq!(s.at(300), c(1000.0, 1700.0));
        assert_eq!(s.at(599), c(1000.0, 1700.0));
        assert_eq!(s.at(600), c(2500.0, 3500.0));
        assert_eq!(s.at(1_000_000), c(2500.0, 3500.0));
    }

    #[test]
    fn measured_power_overrides_the_estimates() {
        let mut p = JobPower { min_per_node: 150.0, max_per_node: 190.0, measured_per_node: None };
        assert_eq!((p.low(), p.high()), (150.0, 190.0));
        p.measured_per_node = Some(170.0);
        assert_eq!((p.low(), p.high()), (170.0, 170.0));
    }
}
