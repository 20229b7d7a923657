//! malleable.conf: Slurm's key=value style, one setting per line, `#` starts
//! a comment, keys case-insensitive. The plugin's own keys are here; each
//! strategy's keys come from its parameter table in the core's registry, so
//! a new strategy's settings need nothing here. Unknown keys and bad values
//! are errors that name the file, the line, the key and what is allowed.

use std::path::Path;
use std::time::Duration;

use jiff::tz::TimeZone;
use malleable_core::{StrategyChoice, REGISTRY};
use malleable_model::{Corridor, CorridorSchedule, Time};

use crate::feed::FeedSettings;

mod power;
#[cfg(test)]
mod power_tests;
mod slurm_conf;
use power::{
    job_watts_text, parse_change, parse_corridor, parse_job_watts, parse_watts, CORRIDOR_ALLOWED, IDLE_ALLOWED,
    JOB_WATTS_ALLOWED, SCHEDULE_ALLOWED,
};
pub use power::{PowerSettings, DEFAULT_IDLE_NODE_WATTS, DEFAULT_JOB_WATTS};
pub use slurm_conf::{
    check_answerer_parameters, check_core_placing, check_core_sharing, check_job_submit, check_scheduler_parameters,
    parameters_added, Needed,
};

/// The plugin's settings, after validation.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Which core strategy schedules (`Strategy=`), with the values of its
    /// parameters the file set.
    pub strategy: StrategyChoice,
    /// The longest time between two scheduling passes (`SchedulerTick=`),
    /// however quiet the cluster: time limits expire without an event.
    pub scheduler_tick: Duration,
    /// What the power-aware strategies need (Chadha et al. 2020, section V-B).
    pub power: PowerSettings,
    /// How long an application has to commit an expand or shrink
    /// (`AdaptTimeout=`): then an expand is rolled back and a shrink forced.
    pub adapt_timeout: Duration,
    /// Keys of other strategies than the one chosen, checked and kept (so
    /// that switching `Strategy=` is one line), but unused: (key, the
    /// strategies that take it).
    pub other_strategy_keys: Vec<(String, String)>,
    /// Whether the file says `Strategy=` (else the default is in force).
    pub strategy_given: bool,
    /// A job that may preempt gets nodes from preemptable elastic jobs by
    /// shrinking them (down to their minimum), when that gives it enough,
    /// rather than by preempting them (`ShrinkBeforePreempt=`, yes by
    /// default).
    pub shrink_before_preempt: bool,
    /// How old a batch job must be, since the controller first saw it
    /// waiting, before a pass starts it (`BatchStartDelay=`, milliseconds).
    /// Stock Slurm never starts a batch job in its submit RPC but in its
    /// scheduler's next cycle (0 to `batch_sched_delay`, 3 s, later); a
    /// user's `scancel --signal` sent right after sbatch then finds the job
    /// waiting, and scancel sends it again once the job runs. Started within
    /// a pass (20 ms), the job's first step does not exist yet, and such a
    /// signal reached nothing (Slurm's srun/test_signal_forwarding).
    pub batch_start_delay: Duration,
    /// How much of the queue a pass reads under slurmctld's locks
    /// (`WholeReadBelow=`, `RecheckPerPass=`; see `feed::FeedSettings`).
    pub feed: FeedSettings,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            strategy: StrategyChoice::named("easy").expect("easy is registered"),
            scheduler_tick: Duration::from_secs(10),
            power: PowerSettings::default(),
            adapt_timeout: DEFAULT_ADAPT_TIMEOUT,
            other_strategy_keys: Vec::new(),
            strategy_given: false,
            shrink_before_preempt: true,
            batch_start_delay: DEFAULT_BATCH_START_DELAY,
            feed: DEFAULT_FEED,
        }
    }
}

impl std::fmt::Display for Config {
    /// As malleable.conf would say it. With a corridor, the idle and job
    /// draws in force are shown too, defaults included; without one, only
    /// the power keys the file set.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Strategy={}", self.strategy.name())?;
        for kv in self.strategy.params.explicit() {
            write!(f, " {kv}")?;
        }
        write!(f, " SchedulerTick={}", self.scheduler_tick.as_secs())?;
        if self.adapt_timeout != DEFAULT_ADAPT_TIMEOUT {
            write!(f, " AdaptTimeout={}", self.adapt_timeout.as_secs())?;
        }
        if !self.shrink_before_preempt {
            write!(f, " ShrinkBeforePreempt=no")?;
        }
        if self.batch_start_delay != DEFAULT_BATCH_START_DELAY {
            write!(f, " BatchStartDelay={}", self.batch_start_delay.as_millis())?;
        }
        if self.feed.whole_below != DEFAULT_FEED.whole_below {
            write!(f, " WholeReadBelow={}", self.feed.whole_below)?;
        }
        if self.feed.recheck != DEFAULT_FEED.recheck {
            write!(f, " RecheckPerPass={}", self.feed.recheck)?;
        }
        let p = &self.power;
        if let Some(s) = &p.corridor {
            write!(f, " PowerCorridor={}", s.initial)?;
            if !p.schedule_written.is_empty() {
                write!(f, " PowerCorridorSchedule={}", p.schedule_written.join(","))?;
            }
        }
        if p.corridor.is_some() || p.idle_node.is_some() {
            write!(f, " IdleNodeWatts={}", p.idle_node())?;
        }
        if p.corridor.is_some() || p.default_job.is_some() {
            write!(f, " DefaultJobWatts={}", job_watts_text(&p.default_job()))?;
        }
        Ok(())
    }
}

/// The plugin's own keys; the strategies' keys come from the registry.
const KEYS: &[&str] = &[
    "Strategy",
    "SchedulerTick",
    "AdaptTimeout",
    "ShrinkBeforePreempt",
    "BatchStartDelay",
    "WholeReadBelow",
    "RecheckPerPass",
    "PowerCorridor",
    "PowerCorridorSchedule",
    "IdleNodeWatts",
    "DefaultJobWatts",
];

/// Parameters whose default in slurmctld differs from the strategy's own
/// (which the simulator keeps): (strategy, key, value), applied when the
/// file does not set the key, and shown in the log line of the
/// configuration. IPSCHED's search is bounded by a node count by default,
/// the same answer on every machine; on a big window that still took up
/// to 10 s (docs/evaluation.md), which in slurmctld would hold every start
/// back as long: there the paper's way, a time limit, keeps its best
/// solution found by then.
const DAEMON_DEFAULTS: &[(&str, &str, &str)] = &[("ipsched", "SolverSeconds", "2")];

/// How long an application has to commit an adaptation unless
/// `AdaptTimeout=` says otherwise: ample for a launcher to start or end its
/// workers (Chadha et al. 2020 measured at most 3.1 s at 32 nodes) and for
/// an application to move its data.
pub const DEFAULT_ADAPT_TIMEOUT: Duration = Duration::from_secs(60);

/// How old a batch job is before it may start unless `BatchStartDelay=`
/// says otherwise: well past the time a client takes to act on sbatch's
/// answer (6 ms measured for the test's scancel; a loaded machine takes
/// more), and well inside stock's own delay (0.86 s measured, up to 3 s).
pub const DEFAULT_BATCH_START_DELAY: Duration = Duration::from_millis(500);
/// How much of the queue a pass reads unless malleable.conf says otherwise.
/// Below 1,000 waiting records every pass reads every job: a whole read
/// costs 1 to 3 us a record here (bench-scale, 5,000 nodes), so about a
/// millisecond or two, and nothing kept can be stale. Above, 500 records a
/// pass are looked at again in turn (a fingerprint each, read whole when it
/// moved: about 0.3 ms for 500 here), so what changed with no sign
/// (`scontrol top`, multifactor's new priorities) is seen within
/// ceil(waiting / 500) passes: 12 at 5,600 waiting records, 112 at 55,600.
pub const DEFAULT_FEED: FeedSettings = FeedSettings { whole_below: 1_000, recheck: 500 };
/// The ranges of `WholeReadBelow=` and `RecheckPerPass=`: 0 reads changes
/// only whatever the queue (tests), and at least one record a pass is
/// read again in turn, so that every record is, in time.
const WHOLE_BELOW_RANGE: std::ops::RangeInclusive<u64> = 0..=10_000_000;
const RECHECK_RANGE: std::ops::RangeInclusive<u64> = 1..=10_000_000;
/// `BatchStartDelay=`'s range, milliseconds.
const BATCH_DELAY_RANGE: std::ops::RangeInclusive<u64> = 0..=10_000;

/// The first registered strategy that takes `key`, and the names of all
/// that do (for a message); `None` when none does.
fn strategies_taking(key: &str) -> Option<(&'static str, String)> {
    let names: Vec<&str> =
        REGISTRY.iter().filter(|s| s.params.iter().any(|p| p.matches(key))).map(|s| s.name).collect();
    (!names.is_empty()).then(|| (names[0], names.join(", ")))
}

/// Every key the file may hold, for the unknown-key error: the plugin's, then
/// each strategy parameter with the strategies that take it.
fn allowed_keys() -> String {
    let mut params: Vec<(&str, String)> = Vec::new();
    for s in REGISTRY.iter() {
        for p in s.params {
            match params.iter_mut().find(|(k, _)| *k == p.key) {
                Some((_, owners)) => *owners += &format!(", {}", s.name),
                None => params.push((p.key, s.name.to_string())),
            }
        }
    }
    let params: Vec<String> = params.into_iter().map(|(k, owners)| format!("{k} ({owners})")).collect();
    format!("{}, and the strategies' own: {}", KEYS.join(", "), params.join(", "))
}
pub(crate) const TICK_RANGE: std::ops::RangeInclusive<u64> = 1..=3600;

/// A whole number of `unit` in `range`, or the error that names the key as
/// written, the value and what is allowed.
fn whole(key: &str, value: &str, range: std::ops::RangeInclusive<u64>, unit: &str) -> Result<u64, String> {
    value.parse::<u64>().ok().filter(|n| range.contains(n)).ok_or_else(|| {
        format!("{key}={value} is not valid: expected whole {unit} from {} to {}", range.start(), range.end())
    })
}

/// The strategies that answer the jobs that ask whether to reconfigure
/// (beside another scheduler, only they resize anything).
pub const ANSWERING: &[&str] = &["natural", "natural-plan"];

impl Config {
    /// For select/natural beside another scheduler: the strategy must be
    /// one of [`ANSWERING`]; `natural` when the file names none.
    pub fn for_answering(mut self) -> Result<Config, String> {
        if !self.strategy_given {
            self.strategy = StrategyChoice::named("natural")?;
        } else if !ANSWERING.contains(&self.strategy.name()) {
            return Err(format!(
                "Strategy={}: select/natural answers the jobs that ask with one of {} (beside sched/backfill, \
                 the scheduler starts jobs and only a job that asks is resized)",
                self.strategy.name(),
                ANSWERING.join(", ")
            ));
        }
        Ok(self)
    }

    /// Read the file; a missing file means the defaults.
    pub fn load(path: &Path) -> Result<(Config, bool), String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text).map(|c| (c, true)).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Config::default(), false)),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// Parse with schedule times in slurmctld's local time zone (TZ, else
    /// /etc/localtime).
    pub fn parse(text: &str) -> Result<Config, String> {
        Config::parse_in(text, TimeZone::try_system().map_err(|e| e.to_string()))
    }

    /// Parse with schedule times read in `tz` (the error is reported only if
    /// the file has a schedule).
    pub fn parse_in(text: &str, tz: Result<TimeZone, String>) -> Result<Config, String> {
        let mut config = Config::default();
        // Where the settings that other keys depend on were given.
        let mut strategy_line = 0;
        // The strategy first: its keys may come before it in the file. The
        // last Strategy= line counts, as for every other key.
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("");
            if let Some((_, value)) = line.split_once('=').filter(|(k, _)| k.trim().eq_ignore_ascii_case("Strategy")) {
                let value = value.trim();
                config.strategy =
                    StrategyChoice::named(value).map_err(|e| format!("line {}: Strategy={value}: {e}", n + 1))?;
                strategy_line = n + 1;
                config.strategy_given = true;
            }
        }
        let mut schedule: Option<(usize, Vec<(Time, Corridor)>)> = None;
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |msg: String| format!("line {}: {msg}", n + 1);
            let (key, value) = line.split_once('=').ok_or_else(|| at(format!("'{line}' is not Key=Value")))?;
            let (key, value) = (key.trim(), value.trim());
            if key.eq_ignore_ascii_case("Strategy") {
                // Read above.
            } else if config.strategy.info.params.iter().any(|p| p.matches(key)) {
                config.strategy.set(key, value).map_err(at)?;
            } else if let Some((owner, owners)) = strategies_taking(key) {
                // Another strategy's key: checked as that strategy would, kept unused.
                let mut other = StrategyChoice::named(owner).expect("a registered name");
                other.set(key, value).map_err(at)?;
                config.other_strategy_keys.push((key.to_string(), owners));
            } else if key.eq_ignore_ascii_case("AdaptTimeout") {
                let secs = whole(key, value, TICK_RANGE, "seconds").map_err(at)?;
                config.adapt_timeout = Duration::from_secs(secs);
            } else if key.eq_ignore_ascii_case("ShrinkBeforePreempt") {
                config.shrink_before_preempt = match value.to_ascii_lowercase().as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(at(format!("ShrinkBeforePreempt={value} is not valid: expected yes or no"))),
                };
            } else if key.eq_ignore_ascii_case("BatchStartDelay") {
                let ms = whole(key, value, BATCH_DELAY_RANGE, "milliseconds").map_err(at)?;
                config.batch_start_delay = Duration::from_millis(ms);
            } else if key.eq_ignore_ascii_case("WholeReadBelow") {
                let n = whole(key, value, WHOLE_BELOW_RANGE, "waiting jobs").map_err(at)?;
                config.feed.whole_below = usize::try_from(n).unwrap_or(usize::MAX);
            } else if key.eq_ignore_ascii_case("RecheckPerPass") {
                let n = whole(key, value, RECHECK_RANGE, "jobs").map_err(at)?;
                config.feed.recheck = usize::try_from(n).unwrap_or(usize::MAX);
            } else if key.eq_ignore_ascii_case("SchedulerTick") {
                let secs = whole(key, value, TICK_RANGE, "seconds").map_err(at)?;
                config.scheduler_tick = Duration::from_secs(secs);
            } else if key.eq_ignore_ascii_case("PowerCorridor") {
                let c = parse_corridor(value)
                    .map_err(|e| at(format!("PowerCorridor={value} is not valid ({e}): {CORRIDOR_ALLOWED}")))?;
                config.power.corridor = Some(CorridorSchedule::constant(c));
            } else if key.eq_ignore_ascii_case("IdleNodeWatts") {
                let w = parse_watts(value)
                    .map_err(|e| at(format!("IdleNodeWatts={value} is not valid ({e}): {IDLE_ALLOWED}")))?;
                config.power.idle_node = Some(w);
            } else if key.eq_ignore_ascii_case("DefaultJobWatts") {
                let p = parse_job_watts(value)
                    .map_err(|e| at(format!("DefaultJobWatts={value} is not valid ({e}): {JOB_WATTS_ALLOWED}")))?;
                config.power.default_job = Some(p);
            } else if key.eq_ignore_ascii_case("PowerCorridorSchedule") {
                let mut changes = Vec::new();
                let mut written = Vec::new();
                for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                    let (t, c, text) = parse_change(entry, &tz).map_err(|e| {
                        at(format!("PowerCorridorSchedule: '{entry}' is not valid ({e}): {SCHEDULE_ALLOWED}"))
                    })?;
                    if let Some(i) = changes.iter().position(|&(u, _)| u == t) {
                        return Err(at(format!(
                            "PowerCorridorSchedule: '{entry}' is not valid (another change, '{}', is at the same \
                             time): {SCHEDULE_ALLOWED}",
                            written[i]
                        )));
                    }
                    changes.push((t, c));
                    written.push(text);
                }
                config.power.schedule_written = written;
                schedule = Some((n + 1, changes));
            } else {
                return Err(at(format!("unknown key '{key}'; allowed keys: {}", allowed_keys())));
            }
        }
        if let Some((line, changes)) = schedule {
            let Some(corridor) = &mut config.power.corridor else {
                return Err(format!(
                    "line {line}: PowerCorridorSchedule= needs PowerCorridor=LOW-HIGH too, the corridor in force \
                     before the first change: add e.g. PowerCorridor=1700-2500"
                ));
            };
            // The log lists the changes in the order they take effect.
            let mut changes: Vec<((Time, Corridor), String)> =
                changes.into_iter().zip(std::mem::take(&mut config.power.schedule_written)).collect();
            changes.sort_by_key(|&((t, _), _)| t);
            let (changes, written) = changes.into_iter().unzip();
            *corridor = CorridorSchedule::new(corridor.initial, changes);
            config.power.schedule_written = written;
        }
        for &(strategy, key, value) in DAEMON_DEFAULTS {
            if config.strategy.name() == strategy && !config.strategy.params.is_set(key) {
                config.strategy.set(key, value).map_err(|e| format!("{strategy}'s default {key}={value}: {e}"))?;
            }
        }
        if config.strategy.info.uses_power_corridor && config.power.corridor.is_none() {
            return Err(format!(
                "line {strategy_line}: Strategy={} needs a power corridor: add PowerCorridor=LOW-HIGH, the watts the \
                 machine may draw (e.g. PowerCorridor=1700-2500), to malleable.conf",
                config.strategy.name()
            ));
        }
        Ok(config)
    }

    /// The power settings, when the strategy uses them; with another
    /// strategy they are accepted but do nothing.
    pub fn power_in_use(&self) -> Option<&PowerSettings> {
        (self.strategy.info.uses_power_corridor && self.power.corridor.is_some()).then_some(&self.power)
    }

    /// What to say in the log about keys the file sets that the strategy
    /// does not use (they are kept, so switching Strategy= is one line):
    /// power settings, and other strategies' parameters.
    pub fn unused_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let keys = self.power.keys_set();
        if !self.strategy.info.uses_power_corridor && !keys.is_empty() {
            let users: Vec<&str> = REGISTRY.iter().filter(|s| s.uses_power_corridor).map(|s| s.name).collect();
            notes.push(format!(
                "{} set but unused: Strategy={} does not use power settings, only {} do",
                keys.join(", "),
                self.strategy.name(),
                users.join(" and ")
            ));
        }
        for (key, owners) in &self.other_strategy_keys {
            notes.push(format!(
                "{key} set but unused: Strategy={} does not take it, only {owners} does",
                self.strategy.name()
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beside_another_scheduler_only_growing_and_shrinking_are_needed() {
        assert!(check_answerer_parameters(Some("permit_job_expansion,bf_interval=5")).is_ok());
        let e = check_answerer_parameters(Some("bf_interval=5")).unwrap_err();
        assert!(e.contains("must contain permit_job_expansion") && !e.contains("sched_interval"), "{e}");
        assert!(e.contains("Set: SchedulerParameters=bf_interval=5,permit_job_expansion"), "{e}");
        let e = check_answerer_parameters(Some("permit_job_expansion,disable_job_shrink")).unwrap_err();
        assert!(e.contains("must not contain disable_job_shrink"), "{e}");
        assert!(Config::parse("Strategy=natural").unwrap().strategy_given);
        assert_eq!(Config::parse("SchedulerTick=5").unwrap().for_answering().unwrap().strategy.name(), "natural");
        let e = Config::parse("Strategy=easy").unwrap().for_answering().unwrap_err();
        assert!(e.contains("Strategy=easy") && e.contains("natural, natural-plan"), "{e}");
        assert!(!Config::parse("SchedulerTick=5").unwrap().strategy_given);
    }

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
    fn adapt_timeout_is_read_checked_and_shown_when_set() {
        assert_eq!(Config::parse("").unwrap().adapt_timeout, DEFAULT_ADAPT_TIMEOUT);
        let c = Config::parse("AdaptTimeout=5").unwrap();
        assert_eq!(c.adapt_timeout, Duration::from_secs(5));
        assert_eq!(c.to_string(), "Strategy=easy SchedulerTick=10 AdaptTimeout=5");
        for bad in ["0", "x", "3601"] {
            let e = Config::parse(&format!("AdaptTimeout={bad}")).unwrap_err();
            assert_eq!(e, format!("line 1: AdaptTimeout={bad} is not valid: expected whole seconds from 1 to 3600"));
        }
    }

    #[test]
    fn reads_keys_case_insensitively_with_comments() {
        let c = Config::parse("strategy = FCFS  # first come\nSCHEDULERTICK=5\n").unwrap();
        assert_eq!(c.strategy.name(), "fcfs");
        assert_eq!(c.scheduler_tick, Duration::from_secs(5));
    }

    #[test]
    fn shrink_before_preempt_is_yes_unless_the_file_says_no() {
        assert!(Config::parse("").unwrap().shrink_before_preempt);
        let c = Config::parse("ShrinkBeforePreempt=No").unwrap();
        assert!(!c.shrink_before_preempt);
        assert_eq!(c.to_string(), "Strategy=easy SchedulerTick=10 ShrinkBeforePreempt=no");
        assert!(Config::parse("shrinkbeforepreempt=YES").unwrap().shrink_before_preempt);
        let e = Config::parse("ShrinkBeforePreempt=maybe").unwrap_err();
        assert_eq!(e, "line 1: ShrinkBeforePreempt=maybe is not valid: expected yes or no");
    }

    #[test]
    fn batch_start_delay_is_half_a_second_unless_the_file_says_otherwise() {
        assert_eq!(Config::parse("").unwrap().batch_start_delay, Duration::from_millis(500));
        let c = Config::parse("BatchStartDelay=0").unwrap();
        assert_eq!(c.batch_start_delay, Duration::ZERO);
        assert_eq!(c.to_string(), "Strategy=easy SchedulerTick=10 BatchStartDelay=0");
        for bad in ["0.5", "-1", "10001", "500ms"] {
            let e = Config::parse(&format!("BatchStartDelay={bad}")).unwrap_err();
            assert_eq!(
                e,
                format!("line 1: BatchStartDelay={bad} is not valid: expected whole milliseconds from 0 to 10000")
            );
        }
    }

    #[test]
    fn how_much_a_pass_reads_has_defaults_and_is_checked() {
        assert_eq!(Config::parse("").unwrap().feed, DEFAULT_FEED);
        let c = Config::parse("WholeReadBelow=0\nrecheckperpass=2").unwrap();
        assert_eq!(c.feed, FeedSettings { whole_below: 0, recheck: 2 });
        assert_eq!(c.to_string(), "Strategy=easy SchedulerTick=10 WholeReadBelow=0 RecheckPerPass=2");
        for (bad, allowed) in [
            ("WholeReadBelow=-1", "whole waiting jobs from 0 to 10000000"),
            ("WholeReadBelow=many", "whole waiting jobs from 0 to 10000000"),
            ("RecheckPerPass=0", "whole jobs from 1 to 10000000"),
            ("RecheckPerPass=1.5", "whole jobs from 1 to 10000000"),
        ] {
            assert_eq!(Config::parse(bad).unwrap_err(), format!("line 1: {bad} is not valid: expected {allowed}"));
        }
    }

    #[test]
    fn unknown_key_is_named_with_the_allowed_ones() {
        let e = Config::parse("Strategy=easy\nStrategi=easy\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("'Strategi'"), "{e}");
        assert!(
            e.contains(
                "Strategy, SchedulerTick, AdaptTimeout, ShrinkBeforePreempt, BatchStartDelay, WholeReadBelow, \
                 RecheckPerPass, PowerCorridor, PowerCorridorSchedule, IdleNodeWatts, DefaultJobWatts"
            ),
            "{e}"
        );
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

    /// Central European time with its DST rules, so the tests do not
    /// depend on this machine's zone.
    pub(super) fn cet() -> Result<TimeZone, String> {
        TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").map_err(|e| e.to_string())
    }

    pub(super) fn power(text: &str) -> Config {
        Config::parse_in(text, cet()).unwrap()
    }

    pub(super) fn power_err(text: &str) -> String {
        Config::parse_in(text, cet()).unwrap_err()
    }

    #[test]
    fn power_strategy_without_a_corridor_says_what_to_add() {
        for strategy in ["power", "power-running-only"] {
            let e = power_err(&format!("SchedulerTick=5\nStrategy={strategy}\nIdleNodeWatts=71\n"));
            assert!(e.starts_with(&format!("line 2: Strategy={strategy} needs a power corridor")), "{e}");
            assert!(e.contains("add PowerCorridor=LOW-HIGH") && e.contains("e.g. PowerCorridor=1700-2500"), "{e}");
        }
        // The same through load() names the file.
        let dir = std::env::temp_dir().join(format!("malleable-power-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("malleable.conf"), "Strategy=power\n").unwrap();
        let e = Config::load(&dir.join("malleable.conf")).unwrap_err();
        assert!(e.contains("malleable.conf: line 1: Strategy=power needs a power corridor"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_strategy_that_places_cores_needs_cons_tres() {
        let c = Config::parse_in("SchedulerTick=5\nStrategy=ipsched\nWindow=50\n", cet()).unwrap();
        let ip = c.strategy.info;
        // In slurmctld its search stops after 2 s unless the file says otherwise.
        assert_eq!(c.strategy.to_string(), "ipsched[Window=50,SolverSeconds=2]");
        let c = Config::parse_in("Strategy=ipsched\nSolverSeconds=0\n", cet()).unwrap();
        assert_eq!(c.strategy.to_string(), "ipsched[SolverSeconds=0]");
        assert!(check_core_placing(ip, Some("select/cons_tres")).is_ok());
        let e = check_core_placing(ip, Some("select/linear")).unwrap_err();
        assert!(
            e.starts_with(
                "Strategy=ipsched starts jobs on part of nodes (the cores and GPUs it chooses), which needs \
                 SelectType=select/cons_tres in slurm.conf (it has select/linear)"
            ),
            "{e}"
        );
        assert!(check_core_placing(ip, None).unwrap_err().contains("(it has select/linear)"));
        // Its keys are checked and, under another strategy, said unused.
        let other = Config::parse_in("Window=10\n", cet()).unwrap();
        assert!(other.unused_notes().iter().any(|n| n.contains("Window") && n.contains("ipsched")));
        assert!(Config::parse_in("Window=0\n", cet()).unwrap_err().contains("Window"));
        let easy = Config::parse_in("Strategy=easy\n", cet()).unwrap().strategy.info;
        assert!(check_core_placing(easy, Some("select/linear")).is_ok());
    }

    #[test]
    fn a_strategys_keys_come_from_its_parameter_table() {
        // Before or after Strategy=, any case or spelling.
        let c = Config::parse("max_job_test=100\nStrategy=conservative\n").unwrap();
        assert_eq!(c.strategy.to_string(), "conservative[MaxJobTest=100]");
        assert_eq!(c.to_string(), "Strategy=conservative MaxJobTest=100 SchedulerTick=10");
        assert_eq!(Config::parse(&c.to_string().replace(' ', "\n")).unwrap(), c);
        assert!(c.unused_notes().is_empty());
        // A bad value names the line, the strategy, the key, the value and what is allowed.
        let e = Config::parse("Strategy=conservative\nMaxJobTest=0").unwrap_err();
        assert!(
            e.starts_with("line 2: conservative: MaxJobTest=0 is not valid: expected a whole number from 1 to 1000000"),
            "{e}"
        );
        // Another strategy's key is checked as that strategy would, and said unused.
        let c = Config::parse("Strategy=easy\nExpandMtctLimit=2").unwrap();
        assert_eq!(
            c.unused_notes(),
            vec!["ExpandMtctLimit set but unused: Strategy=easy does not take it, only mtct-backfill does".to_string()]
        );
        let e = Config::parse("Strategy=easy\nExpandMtctLimit=-1").unwrap_err();
        assert!(e.starts_with("line 2: mtct-backfill: ExpandMtctLimit=-1 is not valid"), "{e}");
        // The same key in two strategies.
        let c = Config::parse("Strategy=power-running-only\nPowerCorridor=0-9\nCombinationWindow=3").unwrap();
        assert_eq!(c.strategy.to_string(), "power-running-only[CombinationWindow=3]");
        let c = Config::parse("CombinationWindow=3").unwrap();
        assert_eq!(
            c.other_strategy_keys,
            vec![("CombinationWindow".to_string(), "power, power-running-only".to_string())]
        );
        // Unknown keys list the strategies' keys too.
        let e = Config::parse("MaxJobTests=3").unwrap_err();
        assert!(
            e.contains("and the strategies' own: MaxJobTest (conservative, natural, natural-plan, sd-policy), ExpandMtctLimit (mtct-backfill)"),
            "{e}"
        );
        assert!(e.contains("CombinationWindow (power, power-running-only)"), "{e}");
    }
}
