//! The waiting jobs' priority, set before each pass (`--priority`): FCFS,
//! Slurm's basic plugin (every job 0: the queue in submission order), or
//! Slurm's multifactor plugin with age and job size alone, as Soner and
//! Ozturan ran it (their experiments 4-6): the two weights equal, and +1 for
//! each minute waited.

/// How waiting jobs are ranked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Priority {
    Fcfs,
    /// Slurm's multifactor: PriorityWeightAge = PriorityWeightJobSize =
    /// `max_age_minutes` (PriorityMaxAge in minutes, so that age adds 1 a
    /// minute until then); the job size factor is the job's share of the
    /// machine's cores (PriorityFavorSmall=NO). No fair share, no QOS.
    Multifactor {
        max_age_minutes: u32,
    },
}

/// Slurm's default PriorityMaxAge, 7 days, in minutes.
pub const DEFAULT_MAX_AGE_MINUTES: u32 = 7 * 24 * 60;

impl Priority {
    /// `fcfs`, `multifactor` (PriorityMaxAge 7 days) or
    /// `multifactor:MINUTES`.
    pub fn parse(v: &str) -> Result<Priority, String> {
        let v = v.trim().to_ascii_lowercase();
        match v.split_once(':') {
            None if v == "fcfs" => Ok(Priority::Fcfs),
            None if v == "multifactor" => Ok(Priority::Multifactor { max_age_minutes: DEFAULT_MAX_AGE_MINUTES }),
            Some(("multifactor", m)) => match m.parse::<u32>() {
                Ok(m) if m > 0 => Ok(Priority::Multifactor { max_age_minutes: m }),
                _ => Err(format!("'{v}' is not allowed: multifactor:MINUTES takes a whole number of minutes above 0")),
            },
            _ => Err(format!("'{v}' is not allowed: fcfs, multifactor or multifactor:MINUTES (PriorityMaxAge)")),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Priority::Fcfs => "fcfs".into(),
            Priority::Multifactor { max_age_minutes } => format!("multifactor:{max_age_minutes}"),
        }
    }

    /// The priority of a job waiting `age` seconds that asks `share` (0 to 1)
    /// of the machine's cores: the weighted sum rounded down, as Slurm's
    /// plugin stores it.
    pub fn of(&self, age: f64, share: f64) -> u32 {
        match *self {
            Priority::Fcfs => 0,
            Priority::Multifactor { max_age_minutes } => {
                let weight = f64::from(max_age_minutes);
                let age_factor = (age.max(0.0) / 60.0 / weight).min(1.0);
                (weight * age_factor + weight * share.clamp(0.0, 1.0)).floor() as u32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multifactor_adds_one_a_minute_and_the_machine_share_times_the_weight() {
        let p = Priority::parse("multifactor").unwrap();
        // A 256-core job of 8,192 (1/32) after 90 s: 1.5 + 10,080 / 32 = 316.5 -> 316.
        assert_eq!(p.of(90.0, 256.0 / 8192.0), 316);
        // The whole machine, just submitted: 10,080; after 20 days the age
        // factor stops at 1: 20,160.
        assert_eq!(p.of(0.0, 1.0), 10_080);
        assert_eq!(p.of(20.0 * 86_400.0, 1.0), 20_160);
        // PriorityMaxAge 60 minutes: a quarter of the machine after 30 min: 30 + 15.
        assert_eq!(Priority::parse("Multifactor:60").unwrap().of(1800.0, 0.25), 45);
        assert_eq!(Priority::parse("fcfs").unwrap().of(1e6, 1.0), 0);
        assert!(Priority::parse("multifactor:0").is_err() && Priority::parse("age").is_err());
    }
}
