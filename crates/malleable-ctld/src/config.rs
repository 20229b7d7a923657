//! malleable.conf: Slurm's key=value style, one setting per line, `#` starts
//! a comment, keys case-insensitive. The plugin's own keys are here; each
//! strategy's keys come from its parameter table in the core's registry, so
//! a new strategy's settings need nothing here. Unknown keys and bad values
//! are errors that name the file, the line, the key and what is allowed.

use std::path::Path;
use std::time::Duration;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use malleable_core::{StrategyChoice, REGISTRY};
use malleable_model::{Corridor, CorridorSchedule, JobPower, PowerState, Time, Watts};

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
}

/// `PowerCorridor=`, `PowerCorridorSchedule=`, `IdleNodeWatts=` and
/// `DefaultJobWatts=`. `None` means the key was not in the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PowerSettings {
    /// The corridor and its announced changes; `None` without `PowerCorridor=`.
    pub corridor: Option<CorridorSchedule>,
    /// The schedule's changes as the file says them (normalised to
    /// `YYYY-MM-DDTHH:MM:SS@LOW-HIGH`), for the log: the instants in
    /// `corridor` are seconds since the epoch.
    pub schedule_written: Vec<String>,
    pub idle_node: Option<Watts>,
    pub default_job: Option<JobPower>,
}

/// What a node without a job draws unless `IdleNodeWatts=` says otherwise:
/// Chadha et al. 2020 measured 71 W on SuperMUC-NG's nodes (section VI-C).
pub const DEFAULT_IDLE_NODE_WATTS: Watts = 71.0;
/// Every job's per-node draw unless `DefaultJobWatts=` says otherwise, until
/// sbatch's `--min-power`/`--max-power` exist: the range of Chadha et al. 2020's two
/// applications (Pi at 170 W, the heat solver at 250 W per node), so the
/// upper bound of the corridor is checked with the heavier one.
pub const DEFAULT_JOB_WATTS: (Watts, Watts) = (170.0, 250.0);

impl PowerSettings {
    pub fn idle_node(&self) -> Watts {
        self.idle_node.unwrap_or(DEFAULT_IDLE_NODE_WATTS)
    }

    /// The draw per node every job is given (there are no per-job
    /// estimates yet).
    pub fn default_job(&self) -> JobPower {
        self.default_job.unwrap_or(JobPower {
            min_per_node: DEFAULT_JOB_WATTS.0,
            max_per_node: DEFAULT_JOB_WATTS.1,
            measured_per_node: None,
        })
    }

    /// What the power-aware strategy sees at `now`; `None` without a corridor.
    pub fn state_at(&self, now: Time) -> Option<PowerState> {
        let schedule = self.corridor.as_ref()?;
        Some(PowerState { corridor: schedule.at(now), idle_node: self.idle_node(), measured_draw: None })
    }

    /// The keys the file set, for the "unused" note.
    fn keys_set(&self) -> Vec<&'static str> {
        let mut keys = Vec::new();
        if self.corridor.is_some() {
            keys.push("PowerCorridor");
        }
        if !self.schedule_written.is_empty() {
            keys.push("PowerCorridorSchedule");
        }
        if self.idle_node.is_some() {
            keys.push("IdleNodeWatts");
        }
        if self.default_job.is_some() {
            keys.push("DefaultJobWatts");
        }
        keys
    }
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
        }
    }
}

/// `250` for a fixed draw, `170-250` for a range.
fn job_watts_text(p: &JobPower) -> String {
    if p.min_per_node == p.max_per_node {
        format!("{}", p.min_per_node)
    } else {
        format!("{}-{}", p.min_per_node, p.max_per_node)
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
const TICK_RANGE: std::ops::RangeInclusive<u64> = 1..=3600;

const CORRIDOR_ALLOWED: &str = "expected LOW-HIGH in watts with 0 <= LOW < HIGH, e.g. PowerCorridor=1700-2500";
const IDLE_ALLOWED: &str = "expected a number of watts >= 0, e.g. IdleNodeWatts=71";
const JOB_WATTS_ALLOWED: &str =
    "expected watts per node, W or MIN-MAX with 0 <= MIN <= MAX, e.g. DefaultJobWatts=250 or DefaultJobWatts=170-250";
const SCHEDULE_ALLOWED: &str = "expected a comma-separated list of WHEN@LOW-HIGH, WHEN in slurmctld's local time as \
     YYYY-MM-DDTHH:MM[:SS] and 0 <= LOW < HIGH watts, e.g. \
     PowerCorridorSchedule=2026-06-01T18:00@1000-1700,2026-06-01T22:00@2500-3500";

/// A whole number of `unit` in `range`, or the error that names the key as
/// written, the value and what is allowed.
fn whole(key: &str, value: &str, range: std::ops::RangeInclusive<u64>, unit: &str) -> Result<u64, String> {
    value.parse::<u64>().ok().filter(|n| range.contains(n)).ok_or_else(|| {
        format!("{key}={value} is not valid: expected whole {unit} from {} to {}", range.start(), range.end())
    })
}

/// `LOW-HIGH` by the core's rules; Corridor::parse would read "-5-100" as
/// an empty LOW, so a negative LOW is caught first.
fn parse_corridor(text: &str) -> Result<Corridor, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("'{t}': LOW must not be negative"));
    }
    Corridor::parse(t)
}

/// A number of watts: finite and not negative.
fn parse_watts(text: &str) -> Result<Watts, String> {
    let t = text.trim();
    let w: f64 = t.parse().map_err(|_| format!("'{t}' is not a number"))?;
    if !w.is_finite() {
        return Err(format!("'{t}' is not a finite number"));
    }
    if w < 0.0 {
        return Err(format!("'{t}' is negative"));
    }
    Ok(w)
}

/// `W` or `MIN-MAX`. A leading '-' is a negative number, not a range.
fn parse_job_watts(text: &str) -> Result<JobPower, String> {
    let t = text.trim();
    match t.get(1..).and_then(|rest| rest.split_once('-')) {
        Some((min, max)) => {
            let (min, max) = (parse_watts(&t[..1 + min.len()])?, parse_watts(max)?);
            if min > max {
                return Err(format!("MIN {min} is above MAX {max}"));
            }
            Ok(JobPower { min_per_node: min, max_per_node: max, measured_per_node: None })
        }
        None => parse_watts(t).map(JobPower::fixed),
    }
}

/// Slurm's own time format, `YYYY-MM-DDTHH:MM[:SS]`, read in `tz`. A time
/// that a daylight-saving change skips is moved forward by the gap; one it
/// repeats is the first of the two (jiff's "compatible" rule, as in
/// Temporal and RFC 5545).
fn parse_local_time(text: &str, tz: &TimeZone) -> Result<(Time, DateTime), String> {
    let dt = DateTime::strptime("%Y-%m-%dT%H:%M:%S", text)
        .or_else(|_| DateTime::strptime("%Y-%m-%dT%H:%M", text))
        .map_err(|_| format!("'{text}' is not YYYY-MM-DDTHH:MM[:SS]"))?;
    let zoned = tz.to_zoned(dt).map_err(|e| format!("'{text}' cannot be placed in the local time zone: {e}"))?;
    Ok((zoned.timestamp().as_second(), dt))
}

/// One `WHEN@LOW-HIGH` entry: its instant, its corridor, and how to say it.
fn parse_change(entry: &str, tz: &Result<TimeZone, String>) -> Result<(Time, Corridor, String), String> {
    let (when, corridor) = entry.split_once('@').ok_or_else(|| format!("'{entry}' is not WHEN@LOW-HIGH"))?;
    let tz = tz.as_ref().map_err(|e| format!("cannot tell slurmctld's local time zone: {e}"))?;
    let (at, dt) = parse_local_time(when.trim(), tz)?;
    let corridor = parse_corridor(corridor)?;
    Ok((at, corridor, format!("{}@{corridor}", dt.strftime("%Y-%m-%dT%H:%M:%S"))))
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

/// What slurm.conf's SchedulerParameters must hold, and why.
const REQUIRED_PARAMETERS: &[(&str, &str)] = &[
    ("sched_interval=-1", "slurmctld's periodic scheduler would start jobs too"),
    ("permit_job_expansion", "slurmctld refuses to grow a running job without it"),
];

/// What a power corridor needs on top: without `defer`, slurmctld starts
/// an srun or salloc job at submit when it is first in its partition's
/// queue and fits, which every strategy would do too, except that a power
/// strategy may hold that job for the budget.
const POWER_PARAMETER: (&str, &str) =
    ("defer", "slurmctld would start srun and salloc jobs at submit without asking the power budget");

/// What a strategy that shares cores needs on top (see [`check_core_sharing`]).
const SHARING_PARAMETER: (&str, &str) =
    ("defer", "slurmctld would start srun and salloc jobs at submit on cores that running jobs allow to share");

/// slurmctld must leave job starts to us (its periodic pass off with
/// `sched_interval=-1`; with a power corridor, no starts at submit either,
/// `defer`) and let running jobs grow (`permit_job_expansion`) and shrink
/// (no `disable_job_shrink`). Without a corridor, `defer` is allowed but not
/// needed: slurmctld's start at submit of an interactive job that heads its
/// queue is the start any strategy makes, and without it srun and salloc
/// wait for a pass and say "queued and waiting for resources".
/// Returns what is wrong, said as the fix.
pub fn check_scheduler_parameters(params: Option<&str>, power: bool) -> Result<(), String> {
    let required: Vec<(&str, &str)> =
        REQUIRED_PARAMETERS.iter().copied().chain(power.then_some(POWER_PARAMETER)).collect();
    check_parameters(params, &required)
}

/// A strategy that starts jobs on cores taken from running jobs (SD-Policy)
/// needs slurmctld to put two jobs on a core, which select/cons_tres does
/// in a partition with OverSubscribe (job_submit/malleable checks that per
/// job), and the nodes to give each job its own cores, which task/drom
/// does. `strategy` is malleable.conf's Strategy, `select` and `task`
/// slurm.conf's SelectType, TaskPlugin and SchedulerParameters: the
/// last must have `defer`, or slurmctld would itself start an srun or
/// salloc job at submit on cores of running jobs that allow sharing,
/// where SD-Policy's rules were never asked and task/drom has no record.
pub fn check_core_sharing(
    strategy: &malleable_core::StrategyInfo,
    select: Option<&str>,
    task: Option<&str>,
    params: Option<&str>,
) -> Result<(), String> {
    if !strategy.shares_cores {
        return Ok(());
    }
    check_parameters(params, &[SHARING_PARAMETER])?;
    let name = strategy.name;
    let select = select.unwrap_or("select/linear");
    if select != "select/cons_tres" {
        return Err(format!(
            "Strategy={name} starts jobs on cores taken from running jobs, which needs SelectType=select/cons_tres \
             in slurm.conf (it has {select}): only cons_tres lets two jobs hold a node's cores"
        ));
    }
    let task = task.unwrap_or("task/none");
    if !task.split(',').map(str::trim).any(|t| t == "task/drom" || t == "drom") {
        return Err(format!(
            "Strategy={name} starts jobs on cores taken from running jobs, which needs task/drom in slurm.conf's \
             TaskPlugin (it has {task}), e.g. TaskPlugin=task/affinity,task/drom: it gives each job on a shared node \
             its own cores"
        ));
    }
    Ok(())
}

/// A strategy that starts jobs on part of nodes (IPSCHED: the cores and
/// GPUs of its choice) needs select/cons_tres, the select plugin that
/// lets jobs hold part of a node; under select/linear every job holds its
/// nodes whole. `select` is slurm.conf's SelectType.
pub fn check_core_placing(strategy: &malleable_core::StrategyInfo, select: Option<&str>) -> Result<(), String> {
    let select = select.unwrap_or("select/linear");
    if strategy.places_cores && select != "select/cons_tres" {
        return Err(format!(
            "Strategy={} starts jobs on part of nodes (the cores and GPUs it chooses), which needs \
             SelectType=select/cons_tres in slurm.conf (it has {select}): only cons_tres lets jobs hold part of a node",
            strategy.name
        ));
    }
    Ok(())
}

/// Beside another scheduler (select/natural under sched/backfill), slurmctld
/// must let running jobs grow (`permit_job_expansion`) and shrink (no
/// `disable_job_shrink`); starting jobs is the other scheduler's.
pub fn check_answerer_parameters(params: Option<&str>) -> Result<(), String> {
    check_parameters(params, &REQUIRED_PARAMETERS[1..])
}

/// What `params` lacks of `required`, or has that stops a shrink, said as the fix.
fn check_parameters(params: Option<&str>, required: &[(&str, &str)]) -> Result<(), String> {
    let tokens: Vec<&str> = params.unwrap_or("").split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    let has = |want: &str| tokens.iter().any(|t| t.eq_ignore_ascii_case(want));
    let required = required.iter().copied();
    let missing: Vec<(&str, &str)> = required.filter(|(want, _)| !has(want)).collect();
    let refused: Vec<&str> = tokens.iter().copied().filter(|t| t.eq_ignore_ascii_case("disable_job_shrink")).collect();
    if missing.is_empty() && refused.is_empty() {
        return Ok(());
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|(w, _)| *w).collect();
        let reasons: Vec<String> = missing.iter().map(|(w, r)| format!("without {w} {r}")).collect();
        let with_power =
            if missing.contains(&POWER_PARAMETER) { " with a PowerCorridor in malleable.conf" } else { "" };
        why.push(format!("must contain {}{with_power} ({})", names.join(" and "), reasons.join("; ")));
    }
    if !refused.is_empty() {
        why.push("must not contain disable_job_shrink (the plugin shrinks running jobs)".to_string());
    }
    let fixed: Vec<&str> = tokens
        .iter()
        .copied()
        .filter(|t| !t.eq_ignore_ascii_case("disable_job_shrink"))
        .chain(missing.iter().map(|(w, _)| *w))
        .collect();
    Err(format!(
        "SchedulerParameters in slurm.conf {} (it is '{}'). Set: SchedulerParameters={}",
        why.join(", and "),
        params.unwrap_or(""),
        fixed.join(",")
    ))
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
    fn unknown_key_is_named_with_the_allowed_ones() {
        let e = Config::parse("Strategy=easy\nStrategi=easy\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("'Strategi'"), "{e}");
        assert!(
            e.contains(
                "Strategy, SchedulerTick, AdaptTimeout, ShrinkBeforePreempt, BatchStartDelay, PowerCorridor, \
                 PowerCorridorSchedule, IdleNodeWatts, DefaultJobWatts"
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
    fn cet() -> Result<TimeZone, String> {
        TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").map_err(|e| e.to_string())
    }

    fn power(text: &str) -> Config {
        Config::parse_in(text, cet()).unwrap()
    }

    fn power_err(text: &str) -> String {
        Config::parse_in(text, cet()).unwrap_err()
    }

    #[test]
    fn power_keys_are_read_and_displayed_for_the_log() {
        let c = power("Strategy=power\nPowerCorridor=1700-2500\nIdleNodeWatts=60.5\nDefaultJobWatts=150-190\n");
        let schedule = c.power.corridor.clone().unwrap();
        assert_eq!(schedule, CorridorSchedule::constant(Corridor::new(1700.0, 2500.0).unwrap()));
        assert_eq!(c.power.idle_node(), 60.5);
        assert_eq!((c.power.default_job().low(), c.power.default_job().high()), (150.0, 190.0));
        assert_eq!(
            c.to_string(),
            "Strategy=power SchedulerTick=10 PowerCorridor=1700-2500 IdleNodeWatts=60.5 DefaultJobWatts=150-190"
        );
        assert_eq!(Config::parse_in(&c.to_string().replace(' ', "\n"), cet()).unwrap(), c);
        // A fixed per-job draw is one number.
        let c = power("Strategy=power-running-only\nPowerCorridor=0-300\nDefaultJobWatts=250");
        assert_eq!(c.power.default_job(), JobPower::fixed(250.0));
        assert!(c.to_string().ends_with("DefaultJobWatts=250"), "{c}");
        // Without power keys the line is as before.
        assert_eq!(power("Strategy=fcfs").to_string(), "Strategy=fcfs SchedulerTick=10");
    }

    #[test]
    fn power_defaults_are_the_papers_figures_and_shown_in_force() {
        let c = power("Strategy=power\nPowerCorridor=0-300");
        assert_eq!(c.power.idle_node(), DEFAULT_IDLE_NODE_WATTS);
        assert_eq!(DEFAULT_IDLE_NODE_WATTS, 71.0);
        assert_eq!((c.power.default_job().low(), c.power.default_job().high()), (170.0, 250.0));
        assert_eq!(
            c.to_string(),
            "Strategy=power SchedulerTick=10 PowerCorridor=0-300 IdleNodeWatts=71 DefaultJobWatts=170-250"
        );
        let state = c.power.state_at(0).unwrap();
        assert_eq!(state.corridor, Corridor::new(0.0, 300.0).unwrap());
        assert_eq!((state.idle_node, state.measured_draw), (71.0, None));
        assert!(Config::default().power.state_at(0).is_none());
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
    fn a_strategy_that_shares_cores_needs_cons_tres_and_task_drom() {
        let c = Config::parse_in("SchedulerTick=5\nStrategy=sd-policy\nMaxSlowdown=dynavgsd\n", cet()).unwrap();
        let sd = c.strategy.info;
        let params = Some("sched_interval=-1,defer,permit_job_expansion");
        assert!(check_core_sharing(sd, Some("select/cons_tres"), Some("task/affinity,task/drom"), params).is_ok());
        assert!(check_core_sharing(sd, Some("select/cons_tres"), Some("drom"), params).is_ok());
        let e = check_core_sharing(sd, Some("select/cons_tres"), Some("drom"), Some("sched_interval=-1")).unwrap_err();
        assert!(e.contains("defer"), "{e}");
        let e = check_core_sharing(sd, Some("select/linear"), Some("task/drom"), params).unwrap_err();
        assert!(
            e.starts_with(
                "Strategy=sd-policy starts jobs on cores taken from running jobs, which needs \
             SelectType=select/cons_tres in slurm.conf (it has select/linear)"
            ),
            "{e}"
        );
        let e = check_core_sharing(sd, Some("select/cons_tres"), None, params).unwrap_err();
        assert!(e.contains("needs task/drom in slurm.conf's TaskPlugin (it has task/none)"), "{e}");
        // A strategy that shares nothing needs neither.
        let easy = Config::parse_in("Strategy=easy\n", cet()).unwrap().strategy.info;
        assert!(check_core_sharing(easy, Some("select/linear"), None, None).is_ok());
    }

    #[test]
    fn bad_corridors_name_the_key_the_value_and_the_rule() {
        for (bad, why) in [
            ("300-200", "LOW must be below HIGH"),
            ("300-300", "LOW must be below HIGH"),
            ("-5-100", "LOW must not be negative"),
            ("abc-100", "LOW 'abc' is not a number"),
            ("100-lots", "HIGH 'lots' is not a number"),
            ("300", "is not LOW-HIGH"),
            ("0-inf", "finite"),
            ("", "is not LOW-HIGH"),
        ] {
            let e = power_err(&format!("Strategy=power\nPowerCorridor={bad}"));
            assert!(e.starts_with(&format!("line 2: PowerCorridor={bad} is not valid (")), "{bad}: {e}");
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.contains("expected LOW-HIGH in watts with 0 <= LOW < HIGH"), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_idle_and_job_watts_name_the_key_the_value_and_the_rule() {
        for (bad, why) in
            [("-1", "negative"), ("lots", "not a number"), ("NaN", "not a finite number"), ("", "not a number")]
        {
            let e = power_err(&format!("IdleNodeWatts={bad}"));
            assert!(e.starts_with(&format!("line 1: IdleNodeWatts={bad} is not valid (")), "{bad}: {e}");
            assert!(e.contains(why) && e.contains("expected a number of watts >= 0"), "{bad}: {e}");
        }
        assert_eq!(power("IdleNodeWatts=0").power.idle_node(), 0.0);
        for (bad, why) in [
            ("-250", "negative"),
            ("250-170", "MIN 250 is above MAX 170"),
            ("-5-100", "negative"),
            ("100-", "not a number"),
            ("many", "not a number"),
            ("inf", "finite"),
        ] {
            let e = power_err(&format!("Strategy=easy\nDefaultJobWatts={bad}"));
            assert!(e.starts_with(&format!("line 2: DefaultJobWatts={bad} is not valid (")), "{bad}: {e}");
            assert!(e.contains(why) && e.contains("W or MIN-MAX with 0 <= MIN <= MAX"), "{bad}: {e}");
        }
        assert_eq!(power("DefaultJobWatts=200-200").power.default_job(), JobPower::fixed(200.0));
    }

    #[test]
    fn schedule_times_are_local_and_the_corridor_changes_at_them() {
        // 18:00 CEST (UTC+2) in June and 18:00 CET (UTC+1) in December.
        let c = power(
            "Strategy=power\nPowerCorridor=1700-2500\n\
             PowerCorridorSchedule=2026-12-01T18:00@2500-3500, 2026-06-01T18:00:30@1000-1700\n",
        );
        let june = 1_780_272_000 + 18 * 3600 - 2 * 3600 + 30; // 2026-06-01T16:00:30Z
        let december = 1_796_083_200 + 18 * 3600 - 3600; // 2026-12-01T17:00:00Z
        let s = c.power.corridor.clone().unwrap();
        assert_eq!(s.changes.iter().map(|&(t, _)| t).collect::<Vec<_>>(), vec![june, december]);
        assert_eq!(s.at(june - 1), Corridor::new(1700.0, 2500.0).unwrap());
        assert_eq!(s.at(june), Corridor::new(1000.0, 1700.0).unwrap());
        assert_eq!(s.at(december), Corridor::new(2500.0, 3500.0).unwrap());
        assert_eq!(c.power.state_at(december + 5).unwrap().corridor, Corridor::new(2500.0, 3500.0).unwrap());
        // Said in the order they take effect, seconds written out.
        assert_eq!(
            c.to_string(),
            "Strategy=power SchedulerTick=10 PowerCorridor=1700-2500 \
             PowerCorridorSchedule=2026-06-01T18:00:30@1000-1700,2026-12-01T18:00:00@2500-3500 \
             IdleNodeWatts=71 DefaultJobWatts=170-250"
        );
        // The line reads back as the same settings (the defaults now given).
        let again = Config::parse_in(&c.to_string().replace(' ', "\n"), cet()).unwrap();
        assert_eq!((again.to_string(), again.power.corridor), (c.to_string(), c.power.corridor.clone()));
        // 02:30 on the last Sunday of March does not exist in CET: it is
        // moved forward by the hour skipped, 01:30Z.
        let c = power("PowerCorridor=0-1\nPowerCorridorSchedule=2026-03-29T02:30@1-2");
        assert_eq!(c.power.corridor.unwrap().changes[0].0, 1_774_747_800);
        // An empty schedule is no changes.
        let c = power("PowerCorridor=0-1\nPowerCorridorSchedule=");
        assert!(c.power.corridor.unwrap().changes.is_empty());
    }

    #[test]
    fn bad_schedules_name_the_key_the_entry_and_the_format() {
        for (bad, why) in [
            ("2026-06-01 18:00@1000-1700", "is not YYYY-MM-DDTHH:MM[:SS]"),
            ("2026-13-01T18:00@1000-1700", "is not YYYY-MM-DDTHH:MM[:SS]"),
            ("now+1hour@1000-1700", "is not YYYY-MM-DDTHH:MM[:SS]"),
            ("2026-06-01T18:00", "is not WHEN@LOW-HIGH"),
            ("2026-06-01T18:00@1700-1000", "LOW must be below HIGH"),
            ("2026-06-01T18:00@-1-1000", "LOW must not be negative"),
        ] {
            let e = power_err(&format!("PowerCorridor=0-1\nPowerCorridorSchedule=2026-05-01T00:00@0-5,{bad}"));
            assert!(e.starts_with(&format!("line 2: PowerCorridorSchedule: '{bad}' is not valid (")), "{bad}: {e}");
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.contains("WHEN in slurmctld's local time as YYYY-MM-DDTHH:MM[:SS]"), "{bad}: {e}");
        }
        let e = power_err("PowerCorridor=0-1\nPowerCorridorSchedule=2026-05-01T00:00@0-5,2026-05-01T00:00:00@0-9");
        assert!(e.contains("another change, '2026-05-01T00:00:00@0-5', is at the same time"), "{e}");
        let e = power_err("Strategy=easy\nPowerCorridorSchedule=2026-05-01T00:00@0-5");
        assert!(e.starts_with("line 2: PowerCorridorSchedule= needs PowerCorridor=LOW-HIGH too"), "{e}");
        // Without a known local zone, a schedule cannot be read; a file
        // without one does not care.
        let e = Config::parse_in("PowerCorridor=0-1\nPowerCorridorSchedule=2026-05-01T00:00@0-5", Err("no TZ".into()))
            .unwrap_err();
        assert!(e.contains("cannot tell slurmctld's local time zone: no TZ"), "{e}");
        assert!(Config::parse_in("PowerCorridor=0-1", Err("no TZ".into())).is_ok());
    }

    #[test]
    fn power_keys_with_another_strategy_are_kept_but_said_unused() {
        let c = power("Strategy=easy\nPowerCorridor=0-300\nDefaultJobWatts=250");
        let note = c.unused_notes().remove(0);
        assert_eq!(
            note,
            "PowerCorridor, DefaultJobWatts set but unused: Strategy=easy does not use power settings, \
             only power and power-running-only do"
        );
        assert!(c.power_in_use().is_none());
        assert!(c.to_string().contains("PowerCorridor=0-300"), "{c}");
        let c = power("Strategy=power\nPowerCorridor=0-300");
        assert!(c.unused_notes().is_empty() && c.power_in_use().is_some());
        assert!(power("Strategy=mtct").unused_notes().is_empty());
        // IdleNodeWatts alone with another strategy shows in the log line.
        assert_eq!(power("IdleNodeWatts=80").to_string(), "Strategy=easy SchedulerTick=10 IdleNodeWatts=80");
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

    #[test]
    fn scheduler_parameters_must_hand_over_scheduling_and_permit_resizing() {
        let check = |p: Option<&str>| check_scheduler_parameters(p, false);
        assert!(check(Some("sched_interval=-1,permit_job_expansion")).is_ok());
        assert!(check(Some("defer,sched_interval=-1,permit_job_expansion")).is_ok());
        assert!(check(Some("bf_interval=30, sched_interval=-1 ,defer,permit_job_expansion")).is_ok());
        let e = check(Some("defer")).unwrap_err();
        assert!(
            e.contains("must contain sched_interval=-1 and permit_job_expansion")
                && e.contains("Set: SchedulerParameters=defer,sched_interval=-1,permit_job_expansion"),
            "{e}"
        );
        assert!(e.contains("without permit_job_expansion slurmctld refuses to grow a running job"), "{e}");
        let e = check(None).unwrap_err();
        assert!(e.contains("must contain sched_interval=-1 and permit_job_expansion ("), "{e}");
        assert!(check(Some("sched_interval=-10,permit_job_expansion")).is_err());
        let e = check(Some("sched_interval=-1,permit_job_expansion,disable_job_shrink")).unwrap_err();
        assert!(e.contains("must not contain disable_job_shrink"), "{e}");
        assert!(e.ends_with("Set: SchedulerParameters=sched_interval=-1,permit_job_expansion"), "{e}");
    }

    #[test]
    fn a_power_corridor_needs_defer() {
        let check = |p: Option<&str>| check_scheduler_parameters(p, true);
        assert!(check(Some("defer,sched_interval=-1,permit_job_expansion")).is_ok());
        let e = check(Some("sched_interval=-1,permit_job_expansion")).unwrap_err();
        assert!(e.contains("must contain defer with a PowerCorridor in malleable.conf"), "{e}");
        assert!(e.contains("at submit without asking the power budget"), "{e}");
        assert!(e.ends_with("Set: SchedulerParameters=sched_interval=-1,permit_job_expansion,defer"), "{e}");
        // "defer" must be its own option, not part of another one.
        let e = check(Some("sched_interval=-1,nodeferral,permit_job_expansion")).unwrap_err();
        assert!(e.contains("must contain defer"), "{e}");
    }
}
