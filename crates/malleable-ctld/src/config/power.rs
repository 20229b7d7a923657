//! malleable.conf's power keys (Chadha et al. 2020's corridor):
//! `PowerCorridor=`, `PowerCorridorSchedule=` (its announced changes, in
//! slurmctld's local time), `IdleNodeWatts=` and `DefaultJobWatts=`.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use malleable_model::{Corridor, CorridorSchedule, JobPower, PowerState, Time, Watts};

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
    pub(super) fn keys_set(&self) -> Vec<&'static str> {
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

/// `250` for a fixed draw, `170-250` for a range.
pub(super) fn job_watts_text(p: &JobPower) -> String {
    if p.min_per_node == p.max_per_node {
        format!("{}", p.min_per_node)
    } else {
        format!("{}-{}", p.min_per_node, p.max_per_node)
    }
}

pub(super) const CORRIDOR_ALLOWED: &str =
    "expected LOW-HIGH in watts with 0 <= LOW < HIGH, e.g. PowerCorridor=1700-2500";
pub(super) const IDLE_ALLOWED: &str = "expected a number of watts >= 0, e.g. IdleNodeWatts=71";
pub(super) const JOB_WATTS_ALLOWED: &str =
    "expected watts per node, W or MIN-MAX with 0 <= MIN <= MAX, e.g. DefaultJobWatts=250 or DefaultJobWatts=170-250";
pub(super) const SCHEDULE_ALLOWED: &str =
    "expected a comma-separated list of WHEN@LOW-HIGH, WHEN in slurmctld's local time as \
     YYYY-MM-DDTHH:MM[:SS] and 0 <= LOW < HIGH watts, e.g. \
     PowerCorridorSchedule=2026-06-01T18:00@1000-1700,2026-06-01T22:00@2500-3500";

/// `LOW-HIGH` by the core's rules; Corridor::parse would read "-5-100" as
/// an empty LOW, so a negative LOW is caught first.
pub(super) fn parse_corridor(text: &str) -> Result<Corridor, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("'{t}': LOW must not be negative"));
    }
    Corridor::parse(t)
}

/// A number of watts: finite and not negative.
pub(super) fn parse_watts(text: &str) -> Result<Watts, String> {
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
pub(super) fn parse_job_watts(text: &str) -> Result<JobPower, String> {
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
pub(super) fn parse_local_time(text: &str, tz: &TimeZone) -> Result<(Time, DateTime), String> {
    let dt = DateTime::strptime("%Y-%m-%dT%H:%M:%S", text)
        .or_else(|_| DateTime::strptime("%Y-%m-%dT%H:%M", text))
        .map_err(|_| format!("'{text}' is not YYYY-MM-DDTHH:MM[:SS]"))?;
    let zoned = tz.to_zoned(dt).map_err(|e| format!("'{text}' cannot be placed in the local time zone: {e}"))?;
    Ok((zoned.timestamp().as_second(), dt))
}

/// One `WHEN@LOW-HIGH` entry: its instant, its corridor, and how to say it.
pub(super) fn parse_change(entry: &str, tz: &Result<TimeZone, String>) -> Result<(Time, Corridor, String), String> {
    let (when, corridor) = entry.split_once('@').ok_or_else(|| format!("'{entry}' is not WHEN@LOW-HIGH"))?;
    let tz = tz.as_ref().map_err(|e| format!("cannot tell slurmctld's local time zone: {e}"))?;
    let (at, dt) = parse_local_time(when.trim(), tz)?;
    let corridor = parse_corridor(corridor)?;
    Ok((at, corridor, format!("{}@{corridor}", dt.strftime("%Y-%m-%dT%H:%M:%S"))))
}
