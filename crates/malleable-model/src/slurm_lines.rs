//! Slurm's own lines in slurmctld's log that programs here read back, the
//! sibling of [`crate::log_lines`] (which holds the plugin's): each declared
//! once, with the wording of the Slurm releases that print it.
//!
//! A batch job's submission, a job's allocation (by slurmctld's main
//! scheduler, by sched/backfill, or at submit) and its completion; the
//! usage priority/multifactor counts for each job, printed with
//! `DebugFlags=Priority` (the chaos campaign reads it to find which job a
//! user's RawUsage and records disagree over), and srun's word that a task
//! could not be launched (srun then exits 0 all the same: mall-run reads
//! it to know that a step never started).

/// One of Slurm's lines.
#[derive(Clone, Debug, PartialEq)]
pub enum SlurmLine {
    /// slurmctld took batch job `job` (`_slurm_rpc_submit_batch_job`).
    Submitted { job: u32 },
    /// Job `job` given `nodes` (a hostlist; `(null)` when the allocation
    /// at submit was deferred to the scheduler) by `by`.
    Allocated { job: u32, nodes: String, by: Allocator },
    /// `_job_complete: JobId=N WHAT`: `done` once the job has ended, or
    /// its exit status before.
    JobComplete { job: u32, what: String },
    /// priority/multifactor counted `secs` of job `job`'s run (its usage
    /// is that times each of the job's TRES counts, the lines after it).
    UsageRan { job: u32, secs: f64 },
    /// One TRES count of the job of the last [`SlurmLine::UsageRan`].
    TresCount { name: String, count: u64 },
    /// srun (its stderr): slurmstepd could not launch task `task`
    /// (api/step_launch.c); `why` is Slurm's error string.
    TaskLaunchFailed { task: u32, why: String },
    /// slurmctld took `node`, failed, out of `--no-kill` job `job` (a
    /// resize of Slurm's own; job_mgr.c, or read_config.c at a restart).
    FailedNodeRemoved { node: String, job: u32 },
    /// slurmctld could not load its scheduler plugin (SchedulerType), and
    /// stops (read_config.c until 25.11, controller.c in 26.05).
    SchedPluginFailed,
    /// slurmctld started (controller.c), at `version`.
    CtldStarted { version: String },
}

/// `N REST` after `JobId=`: the id, and what follows it.
fn id_and_rest(s: &str) -> Option<(u32, &str)> {
    let (id, rest) = s.split_once(' ').unwrap_or((s, ""));
    Some((id.parse().ok()?, rest))
}

/// Which of slurmctld's parts allocated a job.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Allocator {
    /// Its main scheduler (`sched: Allocate JobId=N NodeList=...`).
    MainScheduler,
    /// sched/backfill (`_start_job: Started JobId=N in PART on NODES`).
    Backfill,
    /// srun's or salloc's request, at submit
    /// (`_slurm_rpc_allocate_resources JobId=N NodeList=...`).
    AtSubmit,
}

const SUBMITTED: &str = "_slurm_rpc_submit_batch_job: JobId=";
const ALLOCATE: &str = "sched: Allocate JobId=";
const BACKFILL_START: &str = "_start_job: Started JobId=";
const AT_SUBMIT: &str = "_slurm_rpc_allocate_resources JobId=";
const JOB_COMPLETE: &str = "_job_complete: JobId=";
const NODE_REMOVED: &str = "Removing failed node ";
const NODE_REMOVED_MID: &str = " from JobId=";
/// 22.05 begins it with a capital, 26.05 does not.
const SCHED_FAILED: &str = "ailed to initialize sched plugin";
const CTLD_STARTED: &str = "slurmctld version ";
/// 26.05 puts the cluster's id after its name: `on cluster c(1234)`.
const CTLD_STARTED_MID: &str = " started on cluster ";

/// What slurmctld's log puts before a plugin's message (log.h: its
/// plugin_type and function), here priority/multifactor's usage count.
const USAGE_HEAD: &str = "priority/multifactor: _apply_new_usage: ";
const RAN_HEAD: &str = "job ";
const RAN_MID: &str = " ran for ";
const RAN_TAIL: &str = " seconds with TRES counts of";
const TRES_HEAD: &str = "TRES ";
const LAUNCH_HEAD: &str = "srun: error: task ";
const LAUNCH_MID: &str = " launch failed: ";

impl SlurmLine {
    /// A line as slurmctld prints it (`[timestamp] message`), or its message.
    pub fn parse(line: &str) -> Option<SlurmLine> {
        let message = crate::stamped::Stamped::parse(line).map_or(line, |s| s.message);
        if let Some(rest) = message.strip_prefix(LAUNCH_HEAD) {
            let (task, why) = rest.split_once(LAUNCH_MID)?;
            return Some(SlurmLine::TaskLaunchFailed { task: task.parse().ok()?, why: why.to_string() });
        }
        // Slurm's lines are found after what its log puts before them
        // (a plugin's name and function, `sched: `, or nothing).
        let after = |head: &str| message.find(head).map(|i| &message[i + head.len()..]);
        if let Some((job, _)) = after(SUBMITTED).and_then(id_and_rest) {
            return Some(SlurmLine::Submitted { job });
        }
        let node_list =
            |rest: &str| rest.strip_prefix("NodeList=").map(|r| r.split(' ').next().unwrap_or("").to_string());
        if let Some((job, rest)) = after(ALLOCATE).and_then(id_and_rest) {
            return Some(SlurmLine::Allocated { job, nodes: node_list(rest)?, by: Allocator::MainScheduler });
        }
        if let Some((job, rest)) = after(AT_SUBMIT).and_then(id_and_rest) {
            return Some(SlurmLine::Allocated { job, nodes: node_list(rest)?, by: Allocator::AtSubmit });
        }
        if let Some((job, rest)) = after(BACKFILL_START).and_then(id_and_rest) {
            let nodes = rest.split_once(" on ")?.1.split(' ').next().unwrap_or("").to_string();
            return Some(SlurmLine::Allocated { job, nodes, by: Allocator::Backfill });
        }
        if let Some((job, what)) = after(JOB_COMPLETE).and_then(id_and_rest) {
            return Some(SlurmLine::JobComplete { job, what: what.to_string() });
        }
        let said = message.strip_prefix("error: ").or_else(|| message.strip_prefix("fatal: ")).unwrap_or(message);
        if said.strip_prefix(['F', 'f']) == Some(SCHED_FAILED) {
            return Some(SlurmLine::SchedPluginFailed);
        }
        if let Some((version, _)) = message.strip_prefix(CTLD_STARTED).and_then(|r| r.split_once(CTLD_STARTED_MID)) {
            return Some(SlurmLine::CtldStarted { version: version.to_string() });
        }
        if let Some((node, job)) = after(NODE_REMOVED).and_then(|r| r.split_once(NODE_REMOVED_MID)) {
            return Some(SlurmLine::FailedNodeRemoved { node: node.to_string(), job: id_and_rest(job)?.0 });
        }
        let usage = message.strip_prefix(USAGE_HEAD)?;
        if let Some(rest) = usage.strip_prefix(RAN_HEAD).and_then(|r| r.strip_suffix(RAN_TAIL)) {
            let (job, secs) = rest.split_once(RAN_MID)?;
            return Some(SlurmLine::UsageRan { job: job.parse().ok()?, secs: secs.parse().ok()? });
        }
        let (name, count) = usage.strip_prefix(TRES_HEAD)?.split_once(": ")?;
        Some(SlurmLine::TresCount { name: name.to_string(), count: count.parse().ok()? })
    }
}

impl std::fmt::Display for SlurmLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SlurmLine::Submitted { job } => write!(f, "{SUBMITTED}{job}"),
            SlurmLine::Allocated { job, nodes, by: Allocator::MainScheduler } => {
                write!(f, "{ALLOCATE}{job} NodeList={nodes}")
            }
            SlurmLine::Allocated { job, nodes, by: Allocator::AtSubmit } => {
                write!(f, "{AT_SUBMIT}{job} NodeList={nodes}")
            }
            SlurmLine::Allocated { job, nodes, by: Allocator::Backfill } => {
                write!(f, "sched/backfill: {BACKFILL_START}{job} in debug on {nodes}")
            }
            SlurmLine::JobComplete { job, what } => write!(f, "{JOB_COMPLETE}{job} {what}"),
            SlurmLine::UsageRan { job, secs } => write!(f, "{USAGE_HEAD}{RAN_HEAD}{job}{RAN_MID}{secs}{RAN_TAIL}"),
            SlurmLine::TresCount { name, count } => write!(f, "{USAGE_HEAD}{TRES_HEAD}{name}: {count}"),
            SlurmLine::TaskLaunchFailed { task, why } => write!(f, "{LAUNCH_HEAD}{task}{LAUNCH_MID}{why}"),
            SlurmLine::FailedNodeRemoved { node, job } => {
                write!(f, "error: {NODE_REMOVED}{node}{NODE_REMOVED_MID}{job}")
            }
            SlurmLine::SchedPluginFailed => write!(f, "error: F{SCHED_FAILED}"),
            SlurmLine::CtldStarted { version } => write!(f, "{CTLD_STARTED}{version}{CTLD_STARTED_MID}site"),
        }
    }
}

/// Whether `line` tells that a daemon crashed or is about to: Slurm's
/// `fatal:`, a Rust panic the plugins' guard caught and logged
/// (`panicked`), or the C library's words for memory gone wrong.
pub fn tells_a_crash(line: &str) -> bool {
    ["panicked", "fatal:", "Segmentation fault", "double free"].iter().any(|w| line.contains(w))
}

/// Whether `line` is an error `plugin` (`sched/malleable`) logged: Slurm's
/// log.c puts `error: ` before the message, and the plugins' logger their
/// name after it.
pub fn is_error_of(line: &str, plugin: &str) -> bool {
    let message = crate::stamped::Stamped::parse(line).map_or(line, |s| s.message);
    message.strip_prefix("error: ").and_then(|m| m.strip_prefix(plugin)).is_some_and(|m| m.starts_with(": "))
}

/// The billable TRES-seconds priority/multifactor counted for each job in
/// `log`: each counted run's seconds times the `billing` count that
/// follows it.
pub fn usage_by_job(log: &str) -> std::collections::BTreeMap<u32, f64> {
    let mut usage = std::collections::BTreeMap::new();
    let mut last: Option<(u32, f64)> = None;
    for line in log.lines().filter_map(SlurmLine::parse) {
        match line {
            SlurmLine::UsageRan { job, secs } => last = Some((job, secs)),
            SlurmLine::TresCount { name, count } if name == "billing" => {
                if let Some((job, secs)) = last.take() {
                    *usage.entry(job).or_insert(0.0) += secs * count as f64;
                }
            }
            _ => {}
        }
    }
    usage
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_reads_back_as_it_is_written() {
        for line in [SlurmLine::UsageRan { job: 211, secs: 60.0 }, SlurmLine::UsageRan { job: 7, secs: 1.5 }] {
            assert_eq!(SlurmLine::parse(&format!("[2026-12-06T14:21:33.905] {line}")), Some(line));
        }
        let tres = SlurmLine::TresCount { name: "gres/gpu".into(), count: 2 };
        assert_eq!(SlurmLine::parse(&tres.to_string()), Some(tres));
        // As chaos run 16's JobId=99 printed it (its pmix socket taken).
        let failed = "srun: error: task 0 launch failed: Unspecified error";
        let parsed = SlurmLine::TaskLaunchFailed { task: 0, why: "Unspecified error".into() };
        assert_eq!(SlurmLine::parse(failed), Some(parsed.clone()));
        assert_eq!(parsed.to_string(), failed);
        assert_eq!(SlurmLine::parse("srun: error: task x launch failed: y"), None);
    }

    #[test]
    fn starts_and_ends_read_as_each_release_prints_them() {
        // As 22.05 and 26.05 print them (with their plugin and function
        // before, or not).
        let lines = [
            ("_slurm_rpc_submit_batch_job: JobId=12 InitPrio=4294901759 usec=538", SlurmLine::Submitted { job: 12 }),
            (
                "sched: Allocate JobId=9 NodeList=c[1-2] #CPUs=2 Partition=debug",
                SlurmLine::Allocated { job: 9, nodes: "c[1-2]".into(), by: Allocator::MainScheduler },
            ),
            (
                "_slurm_rpc_allocate_resources JobId=4 NodeList=(null) usec=1027",
                SlurmLine::Allocated { job: 4, nodes: "(null)".into(), by: Allocator::AtSubmit },
            ),
            (
                "sched/backfill: _start_job: Started JobId=3 in debug on n[1-4]",
                SlurmLine::Allocated { job: 3, nodes: "n[1-4]".into(), by: Allocator::Backfill },
            ),
            ("_job_complete: JobId=9 done", SlurmLine::JobComplete { job: 9, what: "done".into() }),
            ("_job_complete: JobId=9 WEXITSTATUS 0", SlurmLine::JobComplete { job: 9, what: "WEXITSTATUS 0".into() }),
            ("error: Failed to initialize sched plugin", SlurmLine::SchedPluginFailed),
            ("slurmctld version 22.05.8 started on cluster site", SlurmLine::CtldStarted { version: "22.05.8".into() }),
            (
                "slurmctld version 26.05.3 started on cluster chaos2605(2411)",
                SlurmLine::CtldStarted { version: "26.05.3".into() },
            ),
            ("fatal: failed to initialize sched plugin", SlurmLine::SchedPluginFailed),
            (
                "error: Removing failed node c1 from JobId=94",
                SlurmLine::FailedNodeRemoved { node: "c1".into(), job: 94 },
            ),
        ];
        for (text, line) in lines {
            assert_eq!(SlurmLine::parse(&format!("[2026-12-05T10:00:00.000] {text}")), Some(line.clone()), "{text}");
            assert_eq!(SlurmLine::parse(&line.to_string()), Some(line));
        }
        assert_eq!(SlurmLine::parse("_job_complete: JobId=x done"), None);
        assert_eq!(SlurmLine::parse("sched: Allocate JobId=9 Partition=debug"), None);
    }

    #[test]
    fn a_plugins_error_is_told_from_its_other_lines_and_from_slurms() {
        assert!(is_error_of("[2026-12-07T10:00:00.000] error: sched/malleable: JobId=4 asked ...", "sched/malleable"));
        assert!(!is_error_of("[2026-12-07T10:00:00.000] sched/malleable: started JobId=4 on n1", "sched/malleable"));
        assert!(!is_error_of("error: Removing failed node c1 from JobId=94", "sched/malleable"));
        assert!(!is_error_of("error: sched/malleablex: other", "sched/malleable"));
    }

    #[test]
    fn a_jobs_usage_is_its_runs_seconds_times_its_billing() {
        // As 22.05 printed them in a chaos campaign (priority_multifactor.c,
        // DebugFlags=Priority; log.h puts the plugin and function first),
        // with lines of others between.
        let log = "\
[2026-12-06T17:40:00.073] priority/multifactor: _apply_new_usage: job 2 ran for 14 seconds with TRES counts of
[2026-12-06T17:40:00.073] priority/multifactor: _apply_new_usage: TRES cpu: 4
[2026-12-06T17:40:00.073] priority/multifactor: _apply_new_usage: TRES mem: 2000
[2026-12-06T17:40:00.073] priority/multifactor: _apply_new_usage: TRES energy: 18446744073709551614
[2026-12-06T17:40:00.073] priority/multifactor: _apply_new_usage: TRES node: 4
[2026-12-06T17:40:00.073] priority/multifactor: _apply_new_usage: TRES billing: 4
[2026-12-06T17:40:00.074] priority/multifactor: _apply_new_usage: job 3 ran for 0.5 seconds with TRES counts of
[2026-12-06T17:40:00.074] sched/malleable: JobId=2: something else
[2026-12-06T17:40:00.074] priority/multifactor: _apply_new_usage: TRES billing: 2
[2026-12-06T17:41:00.073] priority/multifactor: _apply_new_usage: job 2 ran for 60 seconds with TRES counts of
[2026-12-06T17:41:00.073] priority/multifactor: _apply_new_usage: No allocated TRES, state is PENDING
[2026-12-06T17:41:00.074] TRES billing: 9
[2026-12-06T17:41:00.074] priority/multifactor: _apply_new_usage: TRES billing: 9
";
        let usage = usage_by_job(log);
        // The 60 s run and its billing count once; a TRES line of
        // another's is not the plugin's.
        assert_eq!(usage[&2], 14.0 * 4.0 + 60.0 * 9.0);
        assert_eq!(usage[&3], 0.5 * 2.0);
        let bad = "[2026-12-06T17:40:00.073] priority/multifactor: _apply_new_usage: job x ran for 1 seconds with TRES counts of";
        assert_eq!(SlurmLine::parse(bad), None);
    }
}
