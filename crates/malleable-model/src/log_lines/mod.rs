//! The lines the controller-side agent writes into slurmctld's log that other
//! programs read back (the evaluation, the benchmarks, the cluster tests): each
//! one's wording is its `Display` here, and [`LogLine::parse`] its only reader.
//!
//! A reworded line then fails the round-trip tests below instead of silently
//! matching nothing in a reader. Only lines some program reads are declared:
//!
//! | line | written by (malleable-ctld) | read by |
//! |------|-----------------------------|---------|
//! | [`AgentStarted`](LogLine::AgentStarted) `agent started: Strategy=...` | agent.rs run | cluster_restart, cluster_malleable_restart, cluster_power |
//! | [`AgentStopped`](LogLine::AgentStopped) `agent stopped after 12 passes` | agent.rs run | cluster_restart |
//! | [`Reconfigured`](LogLine::Reconfigured) `reconfigured: Strategy=...` | agent.rs run | xtask bench_scale, cluster_reconfig, cluster_resizing_strategies |
//! | [`CorridorNow`](LogLine::CorridorNow) `power corridor now 0-1000 (reconfigured)` | agent.rs run | cluster_power |
//! | [`Started`](LogLine::Started) `started JobId=4 on n[1-2] (mtct)` | agent/apply.rs, share.rs, oversubscribe.rs | cluster-eval records, xtask bench_ipsched, cluster-tests start_lines/timeline and several tests |
//! | [`CouldNotStart`](LogLine::CouldNotStart) `could not start JobId=4 on 2 nodes: ...` | agent/apply.rs refused_start | cluster_moldable |
//! | [`Preempting`](LogLine::Preempting) `JobId=4: preempting JobId=2 for its start on n1 ...` | agent/apply.rs | cluster_preemption |
//! | [`Growing`](LogLine::Growing) `JobId=4: growing onto n3 (mtct)` | agent/apply.rs | cluster-eval resize_latency |
//! | [`Expanding`](LogLine::Expanding) `JobId=4: expand onto n3 (resize 17, through JobId=5); it now holds n[1-3] ...` | agent/apply.rs | cluster-eval records, resize_latency, xtask bench_site, tests |
//! | [`ExpandNotDone`](LogLine::ExpandNotDone) `JobId=4: expand onto n3 not done, it keeps its nodes: ...` | agent/apply.rs | cluster-eval resize_latency |
//! | [`ExpandCommitted`](LogLine::ExpandCommitted) `JobId=4: expand onto n3 committed 0.25 s after the decision` | adaptation.rs | cluster-eval records, resize_latency, tests |
//! | [`Shrinking`](LogLine::Shrinking) `JobId=4: shrink off n3 (resize 18, mtct); waiting ...` | agent/apply.rs | cluster-eval resize_latency, tests |
//! | [`Released`](LogLine::Released) `JobId=4: shrink off n3 committed ...; it now holds n[1-2]` (also forced, rolled back) | adaptation.rs + agent/settle.rs | cluster-eval records, resize_latency, xtask soak, bench_site, tests |
//! | [`ReleaseFailed`](LogLine::ReleaseFailed) `JobId=4: shrink off n3 committed, but freeing the nodes failed: ...` | agent/settle.rs | cluster-eval resize_latency |
//! | [`ReleaseHeld`](LogLine::ReleaseHeld) `JobId=4: shrink off n3 committed; freeing the nodes waits for slurmdbd, which does not answer (...)` (or away or behind, or the job's own record or memory resize) | agent/settle.rs | compose_site |
//! | [`RequeuedAfterResize`](LogLine::RequeuedAfterResize) `JobId=4: requeued after a resize: its next run recorded as a new one, ...` | snapshot/jobs.rs | compose_faults |
//! | [`RequeueFinished`](LogLine::RequeueFinished) `JobId=4: its requeue finished, which slurmctld left undone when its node went down ...` (warn) | snapshot/jobs.rs | compose_faults |
//! | [`UsageTakenBack`](LogLine::UsageTakenBack) `JobId=4: fair-share usage of 88 billable TRES-s counted twice by Slurm at the resize taken back` | agent/settle.rs | cluster-eval chaos |
//! | [`BatchHostRestored`](LogLine::BatchHostRestored) `JobId=4: its batch script runs on n2, not on n1, which slurmctld took for its batch host ...` (warn) | snapshot/jobs.rs | cluster_malleable_restart |
//! | [`Dropped`](LogLine::Dropped) `JobId=4: no longer runs (requeued): its expand onto n3 dropped` | agent/settle.rs | cluster_node_failure |
//! | [`Stretched`](LogLine::Stretched) `JobId=4: time limit stretched to 12 min for the work left on fewer nodes` | agent/settle.rs | cluster_malleable |
//! | [`Suspect`](LogLine::Suspect) `n2 kept from the strategies for 60 s` | agent/settle.rs | cluster_adapt_failures |
//! | [`Lost`](LogLine::Lost) `JobId=4: lost n3; it goes on with 2 nodes` | adaptation.rs | cluster-eval records |
//! | [`AdaptBound`](LogLine::AdaptBound) `JobId=4: its runtime bounds an adaptation at 16 s (AdaptTimeout=1): its adaptations are given 16 s` | adaptation.rs | cluster_mpi |
//! | [`Cancelled`](LogLine::Cancelled) `JobId=4: cancelled: its runtime ... has said nothing for 300 s ...` | agent/settle.rs | cluster_adapt_failures |
//! | [`LostCommitted`](LogLine::LostCommitted) `JobId=4: going on without n3 committed` | adaptation.rs | cluster_node_failure |
//! | [`PriorityRaised`](LogLine::PriorityRaised) `JobId=4: priority raised to 4294967293: ...` | agent/pass.rs | cluster_select_natural |
//! | [`Capped`](LogLine::Capped) `JobId=4: grows to 3 nodes at most: ...` | agent/pass.rs | compose_policies |
//! | [`ReleasedAtSyncPoint`](LogLine::ReleasedAtSyncPoint) `JobId=5: JobId=4, asking at its sync point, releases 2 nodes for it; it starts first` (a note of natural.rs) | malleable-core strategies/natural.rs | cluster-tests malleable, cluster_natural, compose_site |
//! | [`PowerHeld`](LogLine::PowerHeld) `JobId=4 held back by the power budget: starting it on 1 node(s) would raise ...` (a note of power/mod.rs) | malleable-core strategies/power | cluster_power |
//! | [`TasksSplitOff`](LogLine::TasksSplitOff) `JobId=4: tasks split off as JobIds [5, 6] for their aftercorr dependency` | snapshot.rs | cluster_scheduling |
//! | [`ShrinkInsteadOfPreempt`](LogLine::ShrinkInsteadOfPreempt) `JobId=4: shrinking off n3 for JobId=1 instead of preempting it ...` (a note of the core's preemption.rs) | malleable-core blocks/preemption.rs | cluster_preemption, compose_policies |
//! | [`LocksHeld`](LogLine::LocksHeld) `pass 3: slurmctld's locks held 1.2 ms to read, 0.4 ms to apply, on the CPU 1.5 ms of them ...` (`not again to apply`: nothing to write) (debug) | agent/pass.rs | xtask soak, bench_scale, bench_ipsched, bench_site |
//! | [`FeedRead`](LogLine::FeedRead) `feed: 12 records read, 5566 waiting kept, nodes walked` or `feed: whole read (Partitions), ...` (debug) | snapshot.rs | cluster_feed |
//! | [`ResizesHeld`](LogLine::ResizesHeld) `resizes held: slurmdbd does not answer (slurmdbd:6819: its PersistInit unanswered after 2s)` or `... is away or behind (sdiag: DBD Agent queue size)` (warn) | agent/pass.rs | compose_site, compose_faults |
//! | [`ResizesResumed`](LogLine::ResizesResumed) `resizes resumed: slurmdbd has caught up` | agent/pass.rs | compose_site |
//! | [`ParametersAdded`](LogLine::ParametersAdded) `SchedulerParameters in slurm.conf lacks defer (without defer ...; it is '...'): sched/malleable adds them, so slurmctld runs with SchedulerParameters=...; set that in slurm.conf to silence this` (warn) | config/slurm_conf.rs | cluster_refusal, cluster_power |
//! | [`RequestTaken`](LogLine::RequestTaken) `JobId=4: its runtime's request: mall1 seq=7 COMMIT job=4 resize=17` (job_submit/malleable) | job-submit-malleable | cluster-eval resize_latency, tests |
//!
//! Not here: the strategies' other notes (malleable-core words them),
//! Slurm's own lines (slurm_lines), and the safe layer's refusals of a load,
//! a start, a reconfigure, a submission or an update (the slurm crate's
//! `common::refusal`, which this crate may not import, nor it this one). The fixed parts of the wording are in
//! words.rs, which Display here and the reading in parse.rs share.

use std::fmt;

use crate::{Corridor, JobId, Watts};

mod parse;
#[cfg(test)]
mod tests;
mod words;

pub use words::NOT_COMMITTED_WITHIN;
use words::*;

/// The plugins the agent runs in, and job_submit/malleable, which takes
/// the runtime's requests; a line of theirs starts with one of these and
/// `": "` after slurmctld's timestamp.
pub const PLUGINS: [&str; 3] = ["sched/malleable", "select/natural", "job_submit/malleable"];

/// Why the power corridor line is said.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CorridorCause {
    /// The agent started with it.
    Start,
    /// malleable.conf changed it.
    Reconfigured,
    /// Its `PowerCorridorSchedule=` changed it.
    Scheduled,
}

/// How an adaptation ended with nodes given back to slurmctld.
#[derive(Clone, Debug, PartialEq)]
pub enum Ending {
    /// The application left the nodes and committed: `shrink off N committed[ S s after the decision]`.
    ShrinkCommitted { nodes: Vec<String>, after: Option<f64> },
    /// Without the application: `shrink off N WHY: forced (its tasks there are ended; not resized again for H s)`.
    ShrinkForced { nodes: Vec<String>, why: String, hold_s: u64 },
    /// Without the application: `expand onto N WHY: rolled back (not resized again for H s)`.
    RolledBack { nodes: Vec<String>, why: String, hold_s: u64 },
}

impl Ending {
    /// The nodes given back.
    pub fn nodes(&self) -> &[String] {
        match self {
            Ending::ShrinkCommitted { nodes, .. }
            | Ending::ShrinkForced { nodes, .. }
            | Ending::RolledBack { nodes, .. } => nodes,
        }
    }

    /// The nodes given back, mutably (a loss takes some out of it).
    pub fn nodes_mut(&mut self) -> &mut Vec<String> {
        match self {
            Ending::ShrinkCommitted { nodes, .. }
            | Ending::ShrinkForced { nodes, .. }
            | Ending::RolledBack { nodes, .. } => nodes,
        }
    }

    /// Ended because the application did not commit in time.
    pub fn timed_out(&self) -> bool {
        match self {
            Ending::ShrinkForced { why, .. } | Ending::RolledBack { why, .. } => why.starts_with(NOT_COMMITTED_WITHIN),
            Ending::ShrinkCommitted { .. } => false,
        }
    }

    /// An expand undone, not a shrink carried out.
    pub fn is_rollback(&self) -> bool {
        matches!(self, Ending::RolledBack { .. })
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::ShrinkCommitted { nodes, after } => {
                write!(f, "shrink off {} committed{}", nodes.join(","), AfterDecision(*after))
            }
            Ending::ShrinkForced { nodes, why, hold_s } => write!(
                f,
                "shrink off {} {why}: forced (its tasks there are ended; not resized again for {hold_s} s)",
                nodes.join(",")
            ),
            Ending::RolledBack { nodes, why, hold_s } => {
                write!(f, "expand onto {} {why}: rolled back (not resized again for {hold_s} s)", nodes.join(","))
            }
        }
    }
}

/// One line of the agent's, as its fields. `nodes` lists are the
/// comma-separated names the agent chose; `holds` is slurmctld's hostlist
/// of a job's nodes after a change (`n[1-3]`).
#[derive(Clone, Debug, PartialEq)]
pub enum LogLine {
    AgentStarted {
        config: String,
    },
    AgentStopped {
        passes: u64,
    },
    Reconfigured {
        config: String,
    },
    CorridorNow {
        corridor: Corridor,
        cause: CorridorCause,
    },
    /// `started JobId=J on LIST{detail}`, or on `C of the OF cores of each
    /// of LIST` for a start on mates' cores. `detail` is the rest of the line
    /// (the strategy, a stretched limit, the CPUs, a preemption), from its
    /// leading space or comma.
    Started {
        job: JobId,
        cores: Option<(u32, u32)>,
        nodes: String,
        detail: String,
    },
    /// `why` runs to the end of the line (the repeat count with it).
    CouldNotStart {
        job: JobId,
        nodes: usize,
        why: String,
    },
    Preempting {
        job: JobId,
        victims: Vec<JobId>,
        nodes: Vec<String>,
    },
    /// The expand's decision, before slurmctld merged the nodes in.
    Growing {
        job: JobId,
        nodes: Vec<String>,
        strategy: String,
    },
    /// slurmctld merged the nodes in; the application is to commit.
    Expanding {
        job: JobId,
        nodes: Vec<String>,
        resize: u64,
        helper: JobId,
        holds: String,
        strategy: String,
    },
    ExpandNotDone {
        job: JobId,
        nodes: Vec<String>,
        error: String,
    },
    ExpandCommitted {
        job: JobId,
        nodes: Vec<String>,
        after: Option<f64>,
    },
    /// The agent cancelled the job (below its minimum, its runtime silent).
    Cancelled {
        job: JobId,
        why: String,
    },
    /// Its runtime's bound on an adaptation (`REPORT adapt_s=`) is longer
    /// than `AdaptTimeout`: the job's adaptations are given the bound.
    AdaptBound {
        job: JobId,
        bound_s: u32,
        timeout_s: u64,
    },
    Shrinking {
        job: JobId,
        nodes: Vec<String>,
        resize: u64,
        strategy: String,
    },
    /// Nodes freed at an adaptation's end: `JobId=J: ENDING; it now holds LIST`.
    Released {
        job: JobId,
        ending: Ending,
        holds: String,
    },
    ReleaseFailed {
        job: JobId,
        ending: Ending,
        error: String,
    },
    /// An adaptation ended while a resize of the job must wait: its nodes
    /// are freed once it may (said once per job and hold). `waits_for` says
    /// on what: slurmdbd away or behind, or the job's own accounting or
    /// memory resize.
    ReleaseHeld {
        job: JobId,
        ending: Ending,
        waits_for: String,
    },
    /// A resized job waits again (requeued): its next run is recorded as
    /// a new one, not into the record of its last resize.
    RequeuedAfterResize {
        job: JobId,
    },
    /// A requeued job's requeue finished (new submission, its records
    /// apart): slurmctld before 25.11 leaves it undone when a node of the
    /// job goes down while the job's last run ends.
    RequeueFinished {
        job: JobId,
    },
    /// Usage that Slurm counted twice at a job's resize taken back from
    /// its association and QOS (billable TRES-seconds, rounded).
    UsageTakenBack {
        job: JobId,
        tres_s: u64,
    },
    /// slurmctld took another node than the one a job's batch script runs
    /// on for its batch host (it takes the first of the job's nodes when it
    /// reads its state), and it was set back.
    BatchHostRestored {
        job: JobId,
        said: String,
        runs_on: String,
    },
    /// A job that no longer runs (requeued) had an adaptation under way,
    /// or a loss untold: `what` (`expand onto n3`, `shrink off n3`, `going
    /// on without n3`) is dropped with its application.
    Dropped {
        job: JobId,
        what: String,
    },
    Stretched {
        job: JobId,
        minutes: u32,
    },
    Suspect {
        nodes: Vec<String>,
        secs: u64,
    },
    /// Slurm took failed nodes out of the job; with `resize` when its
    /// application is to commit going on without them.
    Lost {
        job: JobId,
        nodes: Vec<String>,
        holds: u32,
        resize: Option<u64>,
    },
    LostCommitted {
        job: JobId,
        nodes: Vec<String>,
        after: Option<f64>,
    },
    PriorityRaised {
        job: JobId,
        priority: u32,
    },
    Capped {
        job: JobId,
        most: u32,
    },
    /// A note of select/natural's (natural.rs): `releaser`, asking at its
    /// sync point, shrinks by `nodes` for waiting `job`, which starts first.
    ReleasedAtSyncPoint {
        job: JobId,
        releaser: JobId,
        nodes: usize,
    },
    /// A note of the power-aware strategies' (power/mod.rs): waiting `job`
    /// held back, as starting it on `nodes` would raise the estimated draw
    /// from `before_w` to `after_w`, above the corridor's top.
    PowerHeld {
        job: JobId,
        nodes: usize,
        before_w: Watts,
        after_w: Watts,
        corridor: Corridor,
    },
    /// The pending tasks of array `job` slurmctld split off as jobs of
    /// their own, so that each runs when its aftercorr dependency allows.
    TasksSplitOff {
        job: JobId,
        split: Vec<u32>,
    },
    /// A strategy's note (preemption.rs): elastic `job` shrinks off `nodes`
    /// for `preemptor` instead of being preempted by it, keeping the
    /// `node_s` node-seconds it has run (`ran_s` on `on_nodes` nodes).
    ShrinkInsteadOfPreempt {
        job: JobId,
        nodes: Vec<String>,
        preemptor: JobId,
        node_s: i64,
        ran_s: i64,
        on_nodes: usize,
    },
    /// The debug line at each pass's end, in milliseconds: the locks held
    /// to read and to apply (wall time), how much of that the agent thread
    /// was on the CPU, and how much it was runnable but waiting for a CPU
    /// (the kernel's run delay; `None` where the kernel keeps none), and
    /// the deciding between, without them: the core's whole pass (answers,
    /// the strategy, preemption, the model's checks), not the strategy's
    /// alone, since the pass became malleable_core's. The rest of the hold the thread
    /// was blocked (a mutex, a write). `apply_ms` is `None` when the pass
    /// had nothing to write, so the locks were not taken a second time.
    LocksHeld {
        pass: u64,
        read_ms: f64,
        apply_ms: Option<f64>,
        on_cpu_ms: f64,
        queued_ms: Option<f64>,
        decide_ms: f64,
    },
    /// slurmdbd away or behind for some seconds: no job is resized until it
    /// is back. `unanswered`: why the plugin's probe found it away (its
    /// address and the error), when that is how it was found; otherwise
    /// slurmctld's own connection to it is down, or its queue waits.
    ResizesHeld {
        unanswered: Option<String>,
    },
    ResizesResumed,
    /// job_submit/malleable took the runtime's request off an update of the
    /// job's comment (the Comment stays its owner's) and kept it in the
    /// job's SystemComment for the agent: `request` as the runtime sent it.
    RequestTaken {
        job: JobId,
        request: String,
    },
    /// The debug line of each read of the cluster: how many job records it
    /// read, why it read them all (`None`: only those that may have
    /// changed), how many waiting records it keeps, and whether it walked
    /// the node table (else the last walk stood: no node change stamped).
    FeedRead {
        records: usize,
        whole: Option<String>,
        kept: usize,
        nodes_walked: bool,
    },
    /// slurm.conf's SchedulerParameters (`was`) lacked the options the
    /// plugin needs (`lacks`, each with why in `reasons`); the plugin added
    /// them, and slurmctld runs with `now`.
    ParametersAdded {
        lacks: Vec<String>,
        reasons: String,
        was: String,
        now: String,
    },
}

/// ` S.SS s after the decision`, or nothing when the decision's time is unknown.
struct AfterDecision(Option<f64>);

impl fmt::Display for AfterDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, " {s:.2} s after the decision"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for LogLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |n: &[String]| n.join(",");
        match self {
            LogLine::ParametersAdded { lacks, reasons, was, now } => write!(
                f,
                "{PARAMETERS_HEAD}{} ({reasons}{PARAMETERS_WAS}{was}{PARAMETERS_NOW}{now}{PARAMETERS_TAIL}",
                lacks.join(" and ")
            ),
            LogLine::AgentStarted { config } => write!(f, "agent started: {config}"),
            LogLine::AgentStopped { passes } => write!(f, "agent stopped after {passes} passes"),
            LogLine::Reconfigured { config } => write!(f, "reconfigured: {config}"),
            LogLine::CorridorNow { corridor, cause } => {
                write!(f, "power corridor now {corridor}")?;
                match cause {
                    CorridorCause::Start => Ok(()),
                    CorridorCause::Reconfigured => write!(f, " (reconfigured)"),
                    CorridorCause::Scheduled => write!(f, " (scheduled change)"),
                }
            }
            LogLine::Started { job, cores, nodes, detail } => match cores {
                Some((c, of)) => write!(f, "started JobId={job} on {c} of the {of} cores of each of {nodes}{detail}"),
                None => write!(f, "started JobId={job} on {nodes}{detail}"),
            },
            LogLine::CouldNotStart { job, nodes, why } => {
                write!(f, "could not start JobId={job} on {nodes} nodes: {why}")
            }
            LogLine::Preempting { job, victims, nodes } => {
                let victims: Vec<String> = victims.iter().map(|v| format!("JobId={v}")).collect();
                write!(
                    f,
                    "JobId={job}: preempting {} for its start on {}{PREEMPTING_TAIL}",
                    victims.join(","),
                    list(nodes)
                )
            }
            LogLine::Growing { job, nodes, strategy } => {
                write!(f, "JobId={job}: growing onto {} ({strategy})", list(nodes))
            }
            LogLine::Expanding { job, nodes, resize, helper, holds, strategy } => write!(
                f,
                "JobId={job}: expand onto {} (resize {resize}, through JobId={helper}); it now holds {holds} \
                 ({strategy}{EXPANDING_TAIL}",
                list(nodes)
            ),
            LogLine::ExpandNotDone { job, nodes, error } => {
                write!(f, "JobId={job}: expand onto {} not done, it keeps its nodes: {error}", list(nodes))
            }
            LogLine::ExpandCommitted { job, nodes, after } => {
                write!(f, "JobId={job}: expand onto {} committed{}", list(nodes), AfterDecision(*after))
            }
            LogLine::Cancelled { job, why } => write!(f, "JobId={job}: cancelled: {why}"),
            LogLine::AdaptBound { job, bound_s, timeout_s } => write!(
                f,
                "JobId={job}: {ADAPT_BOUND_HEAD}{bound_s} s (AdaptTimeout={timeout_s}): its adaptations are given {} s",
                timeout_s.max(&u64::from(*bound_s))
            ),
            LogLine::Shrinking { job, nodes, resize, strategy } => {
                write!(f, "JobId={job}: shrink off {} (resize {resize}, {strategy}{SHRINKING_TAIL}", list(nodes))
            }
            LogLine::Released { job, ending, holds } => write!(f, "JobId={job}: {ending}; it now holds {holds}"),
            LogLine::ReleaseFailed { job, ending, error } => {
                write!(f, "JobId={job}: {ending}, but freeing the nodes failed: {error}")
            }
            LogLine::ReleaseHeld { job, ending, waits_for } => {
                write!(f, "JobId={job}: {ending}{RELEASE_HELD_MID}{waits_for}")
            }
            LogLine::RequeuedAfterResize { job } => write!(f, "JobId={job}: {REQUEUED_AFTER_RESIZE}"),
            LogLine::RequeueFinished { job } => write!(f, "JobId={job}: {REQUEUE_FINISHED}"),
            LogLine::UsageTakenBack { job, tres_s } => {
                write!(f, "JobId={job}: {TAKEN_BACK_HEAD}{tres_s}{TAKEN_BACK_TAIL}")
            }
            LogLine::BatchHostRestored { job, said, runs_on } => {
                write!(f, "JobId={job}: {BATCH_HOST_HEAD}{runs_on}{BATCH_HOST_MID}{said}{BATCH_HOST_TAIL}")
            }
            LogLine::Dropped { job, what } => write!(f, "JobId={job}: {DROPPED_HEAD}{what} dropped"),
            LogLine::Stretched { job, minutes } => {
                write!(f, "JobId={job}: time limit stretched to {minutes}{STRETCHED_TAIL}")
            }
            LogLine::Suspect { nodes, secs } => write!(f, "{} kept from the strategies for {secs} s", list(nodes)),
            LogLine::Lost { job, nodes, holds, resize } => {
                write!(f, "JobId={job}: lost {}; it goes on with {holds} nodes", list(nodes))?;
                match resize {
                    Some(r) => write!(f, " (resize {r}{LOST_TAIL}"),
                    None => Ok(()),
                }
            }
            LogLine::LostCommitted { job, nodes, after } => {
                write!(f, "JobId={job}: going on without {} committed{}", list(nodes), AfterDecision(*after))
            }
            LogLine::PriorityRaised { job, priority } => {
                write!(f, "JobId={job}: priority raised to {priority}{PRIORITY_TAIL}")
            }
            LogLine::Capped { job, most } => write!(f, "JobId={job}: grows to {most}{CAPPED_TAIL}"),
            LogLine::ReleasedAtSyncPoint { job, releaser, nodes } => {
                write!(f, "JobId={job}: JobId={releaser}{SYNC_MID}{nodes}{SYNC_TAIL}")
            }
            LogLine::PowerHeld { job, nodes, before_w, after_w, corridor } => write!(
                f,
                "JobId={job}{POWER_HELD_HEAD}{nodes}{POWER_HELD_DRAW}{}{POWER_HELD_TO}{}{POWER_HELD_TOP}{corridor} W",
                watts(*before_w),
                watts(*after_w)
            ),
            LogLine::TasksSplitOff { job, split } => write!(f, "JobId={job}: {SPLIT_HEAD}{split:?}{SPLIT_TAIL}"),
            LogLine::ShrinkInsteadOfPreempt { job, nodes, preemptor, node_s, ran_s, on_nodes } => write!(
                f,
                "JobId={job}: shrinking off {} for JobId={preemptor}{INSTEAD_MID}{node_s}{INSTEAD_RAN}{ran_s} s on \
                 {on_nodes}{INSTEAD_TAIL}",
                list(nodes)
            ),
            LogLine::RequestTaken { job, request } => write!(f, "JobId={job}: {REQUEST_HEAD}{request}"),
            LogLine::FeedRead { records, whole, kept, nodes_walked } => {
                match whole {
                    None => write!(f, "feed: {records} records read, {kept} waiting kept")?,
                    Some(why) => write!(f, "feed: whole read ({why}), {records} records, {kept} waiting kept")?,
                }
                write!(f, ", nodes {}", if *nodes_walked { "walked" } else { "as last walked" })
            }
            LogLine::LocksHeld { pass, read_ms, apply_ms, on_cpu_ms, queued_ms, decide_ms } => {
                let apply = apply_ms.map_or("not again".to_string(), |a| format!("{a:.1} ms"));
                write!(
                    f,
                    "pass {pass}: slurmctld's locks held {read_ms:.1} ms to read, {apply} to apply, on the CPU \
                     {on_cpu_ms:.1} ms of them"
                )?;
                if let Some(q) = queued_ms {
                    write!(f, ", waiting for one {q:.1} ms")?;
                }
                write!(f, " (none while deciding, {decide_ms:.1} ms)")
            }
            LogLine::ResizesHeld { unanswered: Some(why) } => {
                write!(f, "resizes held: slurmdbd does not answer ({why})")
            }
            LogLine::ResizesHeld { unanswered: None } => {
                write!(f, "resizes held: slurmdbd is away or behind (sdiag: DBD Agent queue size)")
            }
            LogLine::ResizesResumed => write!(f, "resizes resumed: slurmdbd has caught up"),
        }
    }
}

impl LogLine {
    /// A line of slurmctld's log as it is printed (timestamp, plugin, an
    /// optional `warning: `, the message), or its message alone; `None` for
    /// any other line, a reworded one included.
    pub fn parse(line: &str) -> Option<LogLine> {
        let message = PLUGINS
            .iter()
            .find_map(|p| line.find(p).and_then(|i| line[i + p.len()..].strip_prefix(": ")))
            .unwrap_or(line);
        let message = message.strip_prefix("warning: ").unwrap_or(message);
        Self::parse_message(message)
    }

    /// Every declared line of a log, in order.
    pub fn all(log: &str) -> impl Iterator<Item = LogLine> + '_ {
        log.lines().filter_map(LogLine::parse)
    }

    /// The job the line is about, if it is about one.
    pub fn job(&self) -> Option<JobId> {
        match self {
            LogLine::Started { job, .. }
            | LogLine::CouldNotStart { job, .. }
            | LogLine::Preempting { job, .. }
            | LogLine::Growing { job, .. }
            | LogLine::Expanding { job, .. }
            | LogLine::ExpandNotDone { job, .. }
            | LogLine::ExpandCommitted { job, .. }
            | LogLine::AdaptBound { job, .. }
            | LogLine::Cancelled { job, .. }
            | LogLine::Shrinking { job, .. }
            | LogLine::Released { job, .. }
            | LogLine::ReleaseFailed { job, .. }
            | LogLine::ReleaseHeld { job, .. }
            | LogLine::Stretched { job, .. }
            | LogLine::RequeuedAfterResize { job }
            | LogLine::RequeueFinished { job }
            | LogLine::UsageTakenBack { job, .. }
            | LogLine::BatchHostRestored { job, .. }
            | LogLine::Dropped { job, .. }
            | LogLine::Lost { job, .. }
            | LogLine::LostCommitted { job, .. }
            | LogLine::PriorityRaised { job, .. }
            | LogLine::Capped { job, .. }
            | LogLine::TasksSplitOff { job, .. }
            | LogLine::ReleasedAtSyncPoint { job, .. }
            | LogLine::PowerHeld { job, .. }
            | LogLine::ShrinkInsteadOfPreempt { job, .. }
            | LogLine::RequestTaken { job, .. } => Some(*job),
            _ => None,
        }
    }
}
