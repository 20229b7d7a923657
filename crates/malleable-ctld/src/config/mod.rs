//! malleable.conf: Slurm's key=value style, one setting per line, `#` starts
//! a comment, keys case-insensitive. The plugin's own keys are here, one
//! declaration each in [`KEYS`]; each strategy's keys come from its
//! parameter table in the core's registry, so a new strategy's settings
//! need nothing here. Unknown keys and bad values are errors that name the
//! file, the line, the key and what is allowed.

use std::path::Path;
use std::time::Duration;

use jiff::tz::TimeZone;
use malleable_core::strategies::ipsched;
use malleable_core::{AnyParam, Flag, Param, Setting, StrategyChoice, Whole, Within, REGISTRY};
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
            strategy: StrategyChoice::named(DEFAULT_STRATEGY).expect("the default strategy is registered"),
            scheduler_tick: SCHEDULER_TICK.default,
            power: PowerSettings::default(),
            adapt_timeout: ADAPT_TIMEOUT.default,
            other_strategy_keys: Vec::new(),
            strategy_given: false,
            shrink_before_preempt: SHRINK_BEFORE_PREEMPT.default,
            batch_start_delay: BATCH_START_DELAY.default,
            feed: DEFAULT_FEED,
        }
    }
}

impl std::fmt::Display for Config {
    /// As malleable.conf would say it, key by key in [`KEYS`]' order. With a
    /// corridor, the idle and job draws in force are shown too, defaults
    /// included; without one, only the power keys the file set.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let said: Vec<String> = KEYS.iter().filter_map(|k| (k.show)(self)).collect();
        f.write_str(&said.join(" "))
    }
}

/// The strategy unless `Strategy=` says otherwise.
const DEFAULT_STRATEGY: &str = "easy";

/// `SchedulerTick=`: the longest time between two passes.
pub const SCHEDULER_TICK: Param<Duration> = Param {
    key: "SchedulerTick",
    default: Duration::from_secs(10),
    allowed: Within::seconds(1, 3600),
    help: "longest time between two passes; a pass also runs on every job or node change",
};

/// `AdaptTimeout=`: ample by default for a launcher to start or end its
/// workers (Chadha et al. 2020 measured at most 3.1 s at 32 nodes) and for
/// an application to move its data.
pub const ADAPT_TIMEOUT: Param<Duration> = Param {
    key: "AdaptTimeout",
    default: Duration::from_secs(60),
    allowed: Within::seconds(1, 3600),
    help: "how long an application has to commit a resize; then an expand is rolled back and a shrink forced",
};

/// `ShrinkBeforePreempt=`: written yes or no (1 and 0 are read too).
pub const SHRINK_BEFORE_PREEMPT: Param<bool> = Param {
    key: "ShrinkBeforePreempt",
    default: true,
    allowed: Flag::YES_NO,
    help: "a job that may preempt gets nodes by shrinking preemptable elastic jobs when that gives it enough",
};

/// `BatchStartDelay=`: by default well past the time a client takes to act
/// on sbatch's answer (6 ms measured for the test's scancel; a loaded
/// machine takes more), and well inside stock's own delay (0.86 s
/// measured, up to 3 s).
pub const BATCH_START_DELAY: Param<Duration> = Param {
    key: "BatchStartDelay",
    default: Duration::from_millis(500),
    allowed: Within::millis(0, 10_000),
    help: "how old a batch job must be, since the plugin first saw it waiting, before it is started",
};

/// `WholeReadBelow=`. Below 1,000 waiting records by default every pass
/// reads every job: a whole read costs 1 to 3 us a record here
/// (bench-scale, 5,000 nodes), so about a millisecond or two, and nothing
/// kept can be stale. 0 reads changes only whatever the queue (tests).
pub const WHOLE_READ_BELOW: Param<usize> = Param {
    key: "WholeReadBelow",
    default: 1_000,
    allowed: Whole::of("waiting jobs", 0, 10_000_000),
    help: "below this many waiting job records, every pass reads every job",
};

/// `RecheckPerPass=`. Above `WholeReadBelow`, 500 records a pass are looked
/// at again in turn by default (a fingerprint each, read whole when it
/// moved: about 0.3 ms for 500 here), so what changed with no sign
/// (`scontrol top`, multifactor's new priorities) is seen within
/// ceil(waiting / 500) passes: 12 at 5,600 waiting records, 112 at 55,600.
/// At least one a pass, so that every record is read again, in time.
pub const RECHECK_PER_PASS: Param<usize> = Param {
    key: "RecheckPerPass",
    default: 500,
    allowed: Whole::of("jobs", 1, 10_000_000),
    help: "with a longer queue, how many waiting records a pass looks at again in turn",
};

/// How long an application has to commit an adaptation unless
/// `AdaptTimeout=` says otherwise.
pub const DEFAULT_ADAPT_TIMEOUT: Duration = ADAPT_TIMEOUT.default;
/// How old a batch job is before it may start unless `BatchStartDelay=`
/// says otherwise.
pub const DEFAULT_BATCH_START_DELAY: Duration = BATCH_START_DELAY.default;
/// How much of the queue a pass reads unless malleable.conf says otherwise.
pub const DEFAULT_FEED: FeedSettings =
    FeedSettings { whole_below: WHOLE_READ_BELOW.default, recheck: RECHECK_PER_PASS.default };

/// What a key is: a typed parameter, or one with a syntax of its own (the
/// strategy's name, the power keys), said in words.
#[derive(Clone, Copy)]
enum Decl {
    Typed(&'static dyn AnyParam),
    Own { name: &'static str, allowed: &'static str, help: &'static str },
}

/// One of the plugin's own keys: its declaration, how a line sets it and
/// what Display says of it. Reading, Display, the list of keys in messages
/// and the defaults all come from [`KEYS`].
struct Key {
    decl: Decl,
    /// Read `value` for the key as the file wrote it.
    read: fn(&mut Reading, &str, &str) -> Result<(), String>,
    /// `Key=value` (or more) as the file would say it; `None` when there is
    /// nothing to say (at its default, or not set).
    show: fn(&Config) -> Option<String>,
}

impl Key {
    fn name(&self) -> &'static str {
        match self.decl {
            Decl::Typed(p) => p.key(),
            Decl::Own { name, .. } => name,
        }
    }

    /// What is allowed, as messages say it.
    // Read by the test that holds README's table of keys to this one.
    #[cfg_attr(not(test), allow(dead_code))]
    fn allowed(&self) -> String {
        match self.decl {
            Decl::Typed(p) => p.allowed(),
            Decl::Own { allowed, .. } => allowed.to_string(),
        }
    }

    #[cfg_attr(not(test), allow(dead_code))]
    fn help(&self) -> &'static str {
        match self.decl {
            Decl::Typed(p) => p.help(),
            Decl::Own { help, .. } => help,
        }
    }
}

/// A file being read: the configuration so far, and what the schedule's
/// check needs once every line is in.
struct Reading<'a> {
    config: Config,
    tz: &'a Result<TimeZone, String>,
    /// The current line (1-based).
    line: usize,
    /// The schedule's line and changes, checked against the corridor at the end.
    schedule: Option<(usize, Vec<(Time, Corridor)>)>,
}

/// `value` as `p`'s, or the error that names the key as written, the value
/// and what is allowed.
fn checked<T: Setting>(p: &Param<T>, key: &str, value: &str) -> Result<T, String> {
    p.read(value).ok_or_else(|| format!("{key}={value} is not valid: expected {}", AnyParam::allowed(p)))
}

/// A key of [`Param`] `$param` kept in the config's field `$field`, said
/// when it differs from its default.
macro_rules! typed {
    ($param:expr, $($field:ident).+) => {
        Key {
            decl: Decl::Typed(&$param),
            read: |r, key, value| {
                r.config.$($field).+ = checked(&$param, key, value)?;
                Ok(())
            },
            show: |c| (c.$($field).+ != $param.default).then(|| format!("{}={}", $param.key, $param.show(c.$($field).+))),
        }
    };
}

/// The plugin's own keys, in the order Display says them; the strategies'
/// keys come from the registry.
const KEYS: &[Key] = &[
    Key {
        decl: Decl::Own {
            name: "Strategy",
            allowed: "a registered strategy's name (malleable-sim strategies lists them)",
            help: "the policy that decides which pending job starts where and which elastic job grows or shrinks",
        },
        // Read before every other line (its keys may come before it).
        read: |_, _, _| Ok(()),
        show: |c| {
            let params: Vec<String> = c.strategy.params.explicit().into_iter().map(|kv| format!(" {kv}")).collect();
            Some(format!("Strategy={}{}", c.strategy.name(), params.concat()))
        },
    },
    Key {
        decl: Decl::Typed(&SCHEDULER_TICK),
        read: |r, key, value| {
            r.config.scheduler_tick = checked(&SCHEDULER_TICK, key, value)?;
            Ok(())
        },
        // Always said: the log line of the configuration shows the tick in force.
        show: |c| Some(format!("SchedulerTick={}", SCHEDULER_TICK.show(c.scheduler_tick))),
    },
    typed!(ADAPT_TIMEOUT, adapt_timeout),
    typed!(SHRINK_BEFORE_PREEMPT, shrink_before_preempt),
    typed!(BATCH_START_DELAY, batch_start_delay),
    typed!(WHOLE_READ_BELOW, feed.whole_below),
    typed!(RECHECK_PER_PASS, feed.recheck),
    Key {
        decl: Decl::Own {
            name: "PowerCorridor",
            allowed: CORRIDOR_ALLOWED,
            help: "the draw the whole machine must stay within",
        },
        read: |r, _, value| {
            let c = parse_corridor(value)
                .map_err(|e| format!("PowerCorridor={value} is not valid ({e}): {CORRIDOR_ALLOWED}"))?;
            r.config.power.corridor = Some(CorridorSchedule::constant(c));
            Ok(())
        },
        show: |c| c.power.corridor.as_ref().map(|s| format!("PowerCorridor={}", s.initial)),
    },
    Key {
        decl: Decl::Own {
            name: "PowerCorridorSchedule",
            allowed: SCHEDULE_ALLOWED,
            help: "announced corridor changes: from each WHEN on, its corridor replaces the one before",
        },
        read: read_schedule,
        show: |c| {
            let p = &c.power;
            (p.corridor.is_some() && !p.schedule_written.is_empty())
                .then(|| format!("PowerCorridorSchedule={}", p.schedule_written.join(",")))
        },
    },
    Key {
        decl: Decl::Own { name: "IdleNodeWatts", allowed: IDLE_ALLOWED, help: "what a node without a job draws" },
        read: |r, _, value| {
            let w =
                parse_watts(value).map_err(|e| format!("IdleNodeWatts={value} is not valid ({e}): {IDLE_ALLOWED}"))?;
            r.config.power.idle_node = Some(w);
            Ok(())
        },
        show: |c| {
            let p = &c.power;
            (p.corridor.is_some() || p.idle_node.is_some()).then(|| format!("IdleNodeWatts={}", p.idle_node()))
        },
    },
    Key {
        decl: Decl::Own { name: "DefaultJobWatts", allowed: JOB_WATTS_ALLOWED, help: "every job's draw per node" },
        read: |r, _, value| {
            let p = parse_job_watts(value)
                .map_err(|e| format!("DefaultJobWatts={value} is not valid ({e}): {JOB_WATTS_ALLOWED}"))?;
            r.config.power.default_job = Some(p);
            Ok(())
        },
        show: |c| {
            let p = &c.power;
            (p.corridor.is_some() || p.default_job.is_some())
                .then(|| format!("DefaultJobWatts={}", job_watts_text(&p.default_job())))
        },
    },
];

/// `PowerCorridorSchedule=`: its changes, each checked, none at the same
/// time as another; matched with the corridor once every line is read.
fn read_schedule(r: &mut Reading, _: &str, value: &str) -> Result<(), String> {
    let mut changes = Vec::new();
    let mut written = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (t, c, text) = parse_change(entry, r.tz)
            .map_err(|e| format!("PowerCorridorSchedule: '{entry}' is not valid ({e}): {SCHEDULE_ALLOWED}"))?;
        if let Some(i) = changes.iter().position(|&(u, _)| u == t) {
            return Err(format!(
                "PowerCorridorSchedule: '{entry}' is not valid (another change, '{}', is at the same time): \
                 {SCHEDULE_ALLOWED}",
                written[i]
            ));
        }
        changes.push((t, c));
        written.push(text);
    }
    r.config.power.schedule_written = written;
    r.schedule = Some((r.line, changes));
    Ok(())
}

/// Parameters whose default in slurmctld differs from the strategy's own
/// (which the simulator keeps): (strategy, parameter, value), applied when
/// the file does not set the key, and shown in the log line of the
/// configuration. IPSCHED's search is bounded by a node count by default,
/// the same answer on every machine; on a big window that still took up
/// to 10 s (docs/evaluation.md), which in slurmctld would hold every start
/// back as long: there the paper's way, a time limit, keeps its best
/// solution found by then.
const DAEMON_DEFAULTS: &[(&str, &dyn AnyParam, &str)] = &[("ipsched", &ipsched::SOLVER_SECONDS, "2")];

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
            match params.iter_mut().find(|(k, _)| *k == p.key()) {
                Some((_, owners)) => *owners += &format!(", {}", s.name),
                None => params.push((p.key(), s.name.to_string())),
            }
        }
    }
    let params: Vec<String> = params.into_iter().map(|(k, owners)| format!("{k} ({owners})")).collect();
    let keys: Vec<&str> = KEYS.iter().map(Key::name).collect();
    format!("{}, and the strategies' own: {}", keys.join(", "), params.join(", "))
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
        let mut r = Reading { config, tz: &tz, line: 0, schedule: None };
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            r.line = n + 1;
            let at = |msg: String| format!("line {}: {msg}", n + 1);
            let (key, value) = line.split_once('=').ok_or_else(|| at(format!("'{line}' is not Key=Value")))?;
            let (key, value) = (key.trim(), value.trim());
            if r.config.strategy.info.params.iter().any(|p| p.matches(key)) {
                r.config.strategy.set(key, value).map_err(at)?;
            } else if let Some((owner, owners)) = strategies_taking(key) {
                // Another strategy's key: checked as that strategy would, kept unused.
                let mut other = StrategyChoice::named(owner).expect("a registered name");
                other.set(key, value).map_err(at)?;
                r.config.other_strategy_keys.push((key.to_string(), owners));
            } else if let Some(k) = KEYS.iter().find(|k| k.name().eq_ignore_ascii_case(key)) {
                (k.read)(&mut r, key, value).map_err(at)?;
            } else {
                return Err(at(format!("unknown key '{key}'; allowed keys: {}", allowed_keys())));
            }
        }
        let Reading { mut config, schedule, .. } = r;
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
        for &(strategy, param, value) in DAEMON_DEFAULTS {
            let key = param.key();
            if config.strategy.name() == strategy && !config.strategy.params.is_set(param) {
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

    /// README's table of malleable.conf's keys says what [`KEYS`] declares:
    /// the same keys (in the order a reader looks for them, not Display's),
    /// each typed key's default, and its bounds where the table gives them
    /// as "LOW to HIGH".
    #[test]
    fn the_readmes_table_of_keys_follows_the_declarations() {
        let readme = include_str!("../../../../README.md");
        let head = "| key | values | default | meaning |";
        let table = &readme[readme.find(head).expect("README has the table of malleable.conf's keys")..];
        let rows: Vec<Vec<&str>> = table
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
            .collect();
        let names: Vec<String> = rows.iter().map(|r| r[0].trim_matches('`').to_string()).collect();
        let mut declared: Vec<&str> = KEYS.iter().map(Key::name).collect();
        let mut written: Vec<&str> = names.iter().map(String::as_str).collect();
        declared.sort_unstable();
        written.sort_unstable();
        assert_eq!(written, declared, "README's keys against KEYS");
        for (row, key) in rows.iter().zip(&names) {
            let k = KEYS.iter().find(|k| k.name() == key).unwrap();
            assert!(!k.help().is_empty() && !k.allowed().is_empty(), "{key}");
            let Decl::Typed(p) = k.decl else { continue };
            assert_eq!(row[2].trim_matches('`'), p.show_value(p.default_value()), "{key}'s default in README");
            if let Some((low, rest)) = row[1].split_once(" to ") {
                let high = rest.split_whitespace().next().unwrap_or("");
                assert!(
                    p.allowed().contains(&format!("from {low} to {high}")),
                    "{key}: README {}, declared {}",
                    row[1],
                    p.allowed()
                );
            }
        }
    }

    /// Where README gives a strategy parameter's default as "`Key` (DEFAULT",
    /// it is the declared one, or slurmctld's own where that differs
    /// ([`DAEMON_DEFAULTS`]).
    #[test]
    fn the_readmes_strategy_defaults_follow_the_declarations() {
        let readme = include_str!("../../../../README.md");
        let mut checked = 0;
        for info in REGISTRY {
            for p in info.params {
                let Some((_, after)) = readme.split_once(&format!("`{}` (", p.key())) else { continue };
                let written = after.split([' ', ')', ';', ':', ',']).next().unwrap_or("");
                let daemon = DAEMON_DEFAULTS.iter().find(|(s, d, _)| *s == info.name && d.key() == p.key());
                let declared = daemon.map_or_else(|| p.show_value(p.default_value()), |(_, _, v)| v.to_string());
                assert_eq!(written, declared, "{}: README's default of {}", info.name, p.key());
                checked += 1;
            }
        }
        // Shared keys count once per strategy; most parameters are in README.
        assert!(checked >= 14, "only {checked} defaults found in README");
    }

    #[test]
    fn keys_read_yes_no_and_their_old_spellings_and_display_from_their_declarations() {
        // ShrinkBeforePreempt also takes 0 and 1 (a switch of the strategies' kind), said as no.
        let c = Config::parse("ShrinkBeforePreempt=0").unwrap();
        assert!(!c.shrink_before_preempt);
        assert_eq!(c.to_string(), "Strategy=easy SchedulerTick=10 ShrinkBeforePreempt=no");
        // Every typed key set away from its default is said, in the table's order, and reads back.
        let c = Config::parse(
            "RecheckPerPass=7\nWholeReadBelow=3\nBatchStartDelay=9\nShrinkBeforePreempt=no\nAdaptTimeout=4\n\
             SchedulerTick=2\nStrategy=natural-plan\nshortest_first=yes",
        )
        .unwrap();
        assert_eq!(
            c.to_string(),
            "Strategy=natural-plan ShortestFirst=1 SchedulerTick=2 AdaptTimeout=4 ShrinkBeforePreempt=no \
             BatchStartDelay=9 WholeReadBelow=3 RecheckPerPass=7"
        );
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
