//! malleable.conf: Slurm's key=value style, one setting per line, `#` starts
//! a comment, keys case-insensitive. Unknown keys and bad values are errors
//! that name the file, the line, the key and what is allowed.

use std::path::Path;
use std::time::Duration;

use malleable_core::StrategyKind;

/// The plugin's settings, after validation.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Which core strategy schedules (`Strategy=`).
    pub strategy: StrategyKind,
    /// The longest time between two scheduling passes (`SchedulerTick=`),
    /// however quiet the cluster: time limits expire without an event.
    pub scheduler_tick: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config { strategy: StrategyKind::Easy, scheduler_tick: Duration::from_secs(10) }
    }
}

impl std::fmt::Display for Config {
    /// As malleable.conf would say it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Strategy={} SchedulerTick={}", self.strategy.name(), self.scheduler_tick.as_secs())
    }
}

const KEYS: &[&str] = &["Strategy", "SchedulerTick"];
const TICK_RANGE: std::ops::RangeInclusive<u64> = 1..=3600;

impl Config {
    /// Read the file; a missing file means the defaults.
    pub fn load(path: &Path) -> Result<(Config, bool), String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text).map(|c| (c, true)).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Config::default(), false)),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    pub fn parse(text: &str) -> Result<Config, String> {
        let mut config = Config::default();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |msg: String| format!("line {}: {msg}", n + 1);
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| at(format!("'{line}' is not Key=Value")))?;
            let (key, value) = (key.trim(), value.trim());
            if key.eq_ignore_ascii_case("Strategy") {
                config.strategy = StrategyKind::parse(value).map_err(|e| at(format!("Strategy={value}: {e}")))?;
            } else if key.eq_ignore_ascii_case("SchedulerTick") {
                let secs = value
                    .parse::<u64>()
                    .ok()
                    .filter(|s| TICK_RANGE.contains(s))
                    .ok_or_else(|| {
                        at(format!(
                            "SchedulerTick={value} is not valid: expected whole seconds from {} to {}",
                            TICK_RANGE.start(),
                            TICK_RANGE.end()
                        ))
                    })?;
                config.scheduler_tick = Duration::from_secs(secs);
            } else {
                return Err(at(format!("unknown key '{key}'; allowed keys: {}", KEYS.join(", "))));
            }
        }
        Ok(config)
    }
}

/// slurmctld must leave all job starts to us: its periodic FIFO pass is off
/// with `sched_interval=-1`, and `defer` keeps it from starting srun/salloc
/// allocations at submit time. Returns what is missing, said as the fix.
pub fn check_scheduler_parameters(params: Option<&str>) -> Result<(), String> {
    let tokens: Vec<&str> = params.unwrap_or("").split(',').map(str::trim).collect();
    let missing: Vec<&str> = ["sched_interval=-1", "defer"]
        .into_iter()
        .filter(|want| !tokens.iter().any(|t| t.eq_ignore_ascii_case(want)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "SchedulerParameters in slurm.conf must contain {} (it is '{}'): otherwise slurmctld's own \
         scheduler starts jobs too. Add: SchedulerParameters={}",
        missing.join(" and "),
        params.unwrap_or(""),
        tokens.iter().copied().filter(|t| !t.is_empty()).chain(missing.iter().copied()).collect::<Vec<_>>().join(",")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_the_file_would_say_it() {
        let c = Config::parse("Strategy=fcfs\nSchedulerTick=7").unwrap();
        assert_eq!(c.to_string(), "Strategy=fcfs SchedulerTick=7");
        assert_eq!(Config::parse(&c.to_string().replace(' ', "\n")).unwrap(), c);
    }

    #[test]
    fn defaults_when_empty() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
        assert_eq!(Config::parse("# only a comment\n\n").unwrap(), Config::default());
    }

    #[test]
    fn reads_keys_case_insensitively_with_comments() {
        let c = Config::parse("strategy = FCFS  # first come\nSCHEDULERTICK=5\n").unwrap();
        assert_eq!(c.strategy, StrategyKind::Fcfs);
        assert_eq!(c.scheduler_tick, Duration::from_secs(5));
    }

    #[test]
    fn unknown_key_is_named_with_the_allowed_ones() {
        let e = Config::parse("Strategy=easy\nStrategi=easy\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("'Strategi'"), "{e}");
        assert!(e.contains("Strategy, SchedulerTick"), "{e}");
    }

    #[test]
    fn bad_values_name_the_key_and_what_is_allowed() {
        let e = Config::parse("Strategy=fastest").unwrap_err();
        assert!(e.contains("Strategy=fastest") && e.contains("fcfs") && e.contains("easy"), "{e}");
        for bad in ["0", "-3", "abc", "3601", "1.5", ""] {
            let e = Config::parse(&format!("SchedulerTick={bad}")).unwrap_err();
            assert!(e.contains("SchedulerTick=") && e.contains("1 to 3600"), "{bad}: {e}");
        }
        let e = Config::parse("Strategy").unwrap_err();
        assert!(e.contains("not Key=Value"), "{e}");
    }

    #[test]
    fn missing_file_gives_defaults_but_unreadable_is_an_error() {
        let (c, found) = Config::load(Path::new("/nonexistent/malleable.conf")).unwrap();
        assert_eq!((c, found), (Config::default(), false));
        let dir = std::env::temp_dir().join(format!("malleable-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = Config::load(&dir).unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
        std::fs::write(dir.join("malleable.conf"), "SchedulerTick=x\n").unwrap();
        let e = Config::load(&dir.join("malleable.conf")).unwrap_err();
        assert!(e.contains("malleable.conf: line 1"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn scheduler_parameters_must_hand_over_scheduling() {
        assert!(check_scheduler_parameters(Some("defer,sched_interval=-1")).is_ok());
        assert!(check_scheduler_parameters(Some("bf_interval=30, sched_interval=-1 ,defer")).is_ok());
        let e = check_scheduler_parameters(Some("defer")).unwrap_err();
        assert!(e.contains("must contain sched_interval=-1") && e.contains("SchedulerParameters=defer,sched_interval=-1"), "{e}");
        let e = check_scheduler_parameters(None).unwrap_err();
        assert!(e.contains("sched_interval=-1 and defer"), "{e}");
        // "defer" must be its own option, not part of another one.
        let e = check_scheduler_parameters(Some("sched_interval=-1,nodeferral")).unwrap_err();
        assert!(e.contains("must contain defer"), "{e}");
        assert!(check_scheduler_parameters(Some("sched_interval=-10,defer")).is_err());
    }
}
