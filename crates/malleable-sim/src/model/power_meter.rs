//! The machine's draw over a run, against its power corridor: energy, time
//! outside the corridor, and violations.
//!
//! A *break* is a stretch of time the draw spends outside the corridor. It is
//! a *violation* when the scheduler did not repair it at its next pass: the
//! draw is still outside once the first scheduling pass after the break was
//! seen, the adaptations that pass ordered, and the pass at their end have
//! run. The break is seen at the end of an instant (all its events and its
//! pass done), so a break an event causes and that instant's own pass
//! repairs is never seen at all; an idle machine below the corridor at the
//! start is seen, and the pass at the next submission gets to repair it.

use malleable_model::{Corridor, Watts};
use serde::Serialize;

/// One step of the draw: from `t` on, until the next step.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct PowerSample {
    pub t: f64,
    pub draw: Watts,
    pub low: Watts,
    pub high: Watts,
}

impl PowerSample {
    /// Whether the draw is inside the corridor in force.
    pub fn inside(&self) -> bool {
        Corridor { low: self.low, high: self.high }.holds(self.draw)
    }
}

/// What a run's power looked like.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PowerReport {
    /// Breaks not repaired at the scheduler's next pass.
    pub violations: u64,
    /// All breaks, repaired or not.
    pub breaks: u64,
    pub seconds_outside: f64,
    pub energy_j: f64,
    pub timeline: Vec<PowerSample>,
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Break {
    /// Seen at the end of an instant; the next pass is the scheduler's chance.
    Seen,
    /// A pass has responded and ordered adaptations; judged once they end.
    Responding,
    /// Counted as a violation; lasts until the draw is back inside.
    Violation,
}

#[derive(Default)]
pub struct PowerMeter {
    report: PowerReport,
    current: Option<Break>,
    /// Energy and time outside are summed up to here.
    integrated_to: f64,
}

impl PowerMeter {
    /// The state at the end of instant `now`: the draw and corridor from
    /// now on, whether a scheduling pass ran in this instant, and whether an
    /// adaptation is under way after it.
    pub fn record(&mut self, now: f64, draw: Watts, corridor: Corridor, pass_ran: bool, adapting: bool) {
        self.integrate_to(now);
        let inside = corridor.holds(draw);
        self.current = match (self.current, inside) {
            (Some(_), true) => {
                self.report.breaks += 1;
                None
            }
            (None, true) => None,
            (None, false) => Some(Break::Seen),
            (Some(Break::Violation), false) => Some(Break::Violation),
            (Some(_), false) if pass_ran => {
                if adapting {
                    Some(Break::Responding)
                } else {
                    self.report.violations += 1;
                    Some(Break::Violation)
                }
            }
            (Some(state), false) => Some(state),
        };
        let sample = PowerSample { t: now, draw, low: corridor.low, high: corridor.high };
        match self.report.timeline.last_mut() {
            Some(last) if last.t == now => *last = sample,
            Some(last) if (last.draw, last.low, last.high) == (draw, corridor.low, corridor.high) => {}
            _ => self.report.timeline.push(sample),
        }
    }

    /// Energy and time outside from the last sample up to `now`.
    fn integrate_to(&mut self, now: f64) {
        if let Some(last) = self.report.timeline.last() {
            let dt = (now - self.integrated_to).max(0.0);
            self.report.energy_j += last.draw * dt;
            if !last.inside() {
                self.report.seconds_outside += dt;
            }
        }
        self.integrated_to = self.integrated_to.max(now);
    }

    /// The report, closed at `end` (the last job's end); a break still open
    /// then counts as a break, and as a violation only if judged one already.
    pub fn finish(mut self, end: f64) -> PowerReport {
        self.integrate_to(end);
        if let Some(last) = self.report.timeline.last().copied() {
            if last.t < end {
                self.report.timeline.push(PowerSample { t: end, ..last });
            }
        }
        if self.current.is_some() {
            self.report.breaks += 1;
        }
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(l: f64, h: f64) -> Corridor {
        Corridor::new(l, h).unwrap()
    }

    #[test]
    fn energy_and_time_outside_integrate_the_steps() {
        let mut m = PowerMeter::default();
        m.record(0.0, 1000.0, c(500.0, 1500.0), true, false);
        m.record(10.0, 2000.0, c(500.0, 1500.0), false, false);
        m.record(15.0, 1000.0, c(500.0, 1500.0), false, false);
        // The same step again adds no sample and counts no time twice.
        m.record(17.0, 1000.0, c(500.0, 1500.0), true, false);
        let r = m.finish(20.0);
        assert_eq!(r.energy_j, 1000.0 * 10.0 + 2000.0 * 5.0 + 1000.0 * 5.0);
        assert_eq!(r.seconds_outside, 5.0);
        assert_eq!(r.breaks, 1);
        // Seen at 10, back inside at 15 before any pass: repaired.
        assert_eq!(r.violations, 0);
        assert_eq!(r.timeline.last().unwrap().t, 20.0);
    }

    #[test]
    fn a_break_the_next_pass_leaves_outside_is_a_violation() {
        let mut m = PowerMeter::default();
        m.record(0.0, 2000.0, c(500.0, 1500.0), true, false); // seen
        m.record(2.0, 2000.0, c(500.0, 1500.0), true, false); // next pass did nothing
        m.record(4.0, 2100.0, c(500.0, 1500.0), true, false); // the same break
        let r = m.finish(6.0);
        assert_eq!((r.violations, r.breaks), (1, 1));
    }

    #[test]
    fn adaptations_ordered_by_the_next_pass_are_waited_for() {
        let mut m = PowerMeter::default();
        m.record(0.0, 2000.0, c(500.0, 1500.0), true, false); // seen
        m.record(2.0, 2000.0, c(500.0, 1500.0), true, true); // shrinks ordered
        m.record(3.5, 1400.0, c(500.0, 1500.0), true, false); // shrinks done: inside
        let r = m.finish(5.0);
        assert_eq!((r.violations, r.breaks), (0, 1));
        // Still outside after the adaptations: a violation.
        let mut m = PowerMeter::default();
        m.record(0.0, 2000.0, c(500.0, 1500.0), true, false);
        m.record(2.0, 2000.0, c(500.0, 1500.0), true, true);
        m.record(3.5, 1600.0, c(500.0, 1500.0), true, false);
        assert_eq!(m.finish(5.0).violations, 1);
    }

    #[test]
    fn instants_without_a_pass_do_not_judge() {
        let mut m = PowerMeter::default();
        m.record(0.0, 2000.0, c(500.0, 1500.0), true, false); // seen
        m.record(1.0, 2000.0, c(500.0, 1500.0), false, false); // no pass
        m.record(2.0, 1000.0, c(500.0, 1500.0), true, false); // repaired by then
        assert_eq!(m.finish(3.0).violations, 0);
    }
}
