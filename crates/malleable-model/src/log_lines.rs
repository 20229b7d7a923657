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
//! | [`RequestTaken`](LogLine::RequestTaken) `JobId=4: its runtime's request: mall1 seq=7 COMMIT job=4 resize=17` (job_submit/malleable) | job-submit-malleable | cluster-eval resize_latency, tests |
//!
//! Not here: the strategies' other notes (malleable-core words them) and
//! Slurm's own lines (`sched: Allocate JobId=...`, `_job_complete: ...`).

use std::fmt;

use crate::{Corridor, JobId, Watts};

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

    fn parse(text: &str) -> Option<Ending> {
        if let Some(rest) = text.strip_prefix("shrink off ") {
            let (nodes, rest) = rest.split_once(' ')?;
            let nodes = node_names(nodes)?;
            if let Some(after) = rest.strip_prefix("committed") {
                return Some(Ending::ShrinkCommitted { nodes, after: after_decision(after)? });
            }
            let (why, held) = rest.rsplit_once(": forced (its tasks there are ended; not resized again for ")?;
            return Some(Ending::ShrinkForced { nodes, why: why.to_string(), hold_s: seconds_closing(held)? });
        }
        let rest = text.strip_prefix("expand onto ")?;
        let (nodes, rest) = rest.split_once(' ')?;
        let (why, held) = rest.rsplit_once(": rolled back (not resized again for ")?;
        Some(Ending::RolledBack { nodes: node_names(nodes)?, why: why.to_string(), hold_s: seconds_closing(held)? })
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
    /// the deciding between, without them. The rest of the hold the thread
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

const EXPANDING_TAIL: &str = "); waiting for its application to commit";
const SHRINKING_TAIL: &str = "); waiting for its application to leave them and commit";
const PREEMPTING_TAIL: &str = " (slurm.conf's PreemptType and PreemptMode); it starts once their nodes are back";
const STRETCHED_TAIL: &str = " min for the work left on fewer nodes";
const PRIORITY_TAIL: &str = ": a job released nodes for it";
const CAPPED_TAIL: &str = " nodes at most: its QOS's and association's node limits allow no more";
const SYNC_MID: &str = ", asking at its sync point, releases ";
const SYNC_TAIL: &str = " nodes for it; it starts first";
const POWER_HELD_HEAD: &str = " held back by the power budget: starting it on ";
const POWER_HELD_DRAW: &str = " node(s) would raise the estimated draw from ";
const POWER_HELD_TO: &str = " W to ";
const POWER_HELD_TOP: &str = " W, above the top of the power corridor ";
const SPLIT_HEAD: &str = "tasks split off as JobIds ";
const SPLIT_TAIL: &str = " for their aftercorr dependency";
const INSTEAD_MID: &str = " instead of preempting it (ShrinkBeforePreempt): it keeps running, and the ";
const INSTEAD_RAN: &str = " node-seconds it has run (";
const INSTEAD_TAIL: &str = " nodes) are not lost";
/// How the reason of an adaptation that ran out of time starts
/// (`not committed within 30 s`): [`Ending::timed_out`] reads it.
pub const NOT_COMMITTED_WITHIN: &str = "not committed within";
/// What a kept request line says before the request.
const REQUEST_HEAD: &str = "its runtime's request: ";
const LOST_TAIL: &str = "); waiting for its application to commit";
const ADAPT_BOUND_HEAD: &str = "its runtime bounds an adaptation at ";
const REQUEUED_AFTER_RESIZE: &str =
    "requeued after a resize: its next run recorded as a new one, not into the record of that resize";
const REQUEUE_FINISHED: &str = "its requeue finished, which slurmctld left undone when its node went down as its last run ended: its next run recorded as a new one";
const TAKEN_BACK_HEAD: &str = "fair-share usage of ";
const TAKEN_BACK_TAIL: &str = " billable TRES-s counted twice by Slurm at the resize taken back";
const DROPPED_HEAD: &str = "no longer runs (requeued): its ";
const BATCH_HOST_HEAD: &str = "its batch script runs on ";
const BATCH_HOST_MID: &str = ", not on ";
const BATCH_HOST_TAIL: &str =
    ", which slurmctld took for its batch host when it read its state (the first of its nodes): set back";
const RELEASE_HELD_MID: &str = "; freeing the nodes waits for ";

impl fmt::Display for LogLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |n: &[String]| n.join(",");
        match self {
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

    fn parse_message(m: &str) -> Option<LogLine> {
        if let Some(config) = m.strip_prefix("agent started: ") {
            return Some(LogLine::AgentStarted { config: config.to_string() });
        }
        if let Some(rest) = m.strip_prefix("agent stopped after ") {
            return Some(LogLine::AgentStopped { passes: rest.strip_suffix(" passes")?.parse().ok()? });
        }
        if let Some(config) = m.strip_prefix("reconfigured: ") {
            return Some(LogLine::Reconfigured { config: config.to_string() });
        }
        if let Some(rest) = m.strip_prefix("power corridor now ") {
            let (corridor, cause) = match rest.split_once(' ') {
                None => (rest, CorridorCause::Start),
                Some((c, "(reconfigured)")) => (c, CorridorCause::Reconfigured),
                Some((c, "(scheduled change)")) => (c, CorridorCause::Scheduled),
                Some(_) => return None,
            };
            return Some(LogLine::CorridorNow { corridor: Corridor::parse(corridor).ok()?, cause });
        }
        if let Some(rest) = m.strip_prefix("started JobId=") {
            let (job, rest) = rest.split_once(" on ")?;
            let (cores, rest) = match of_each(rest) {
                Some((c, of, rest)) => (Some((c, of)), rest),
                None => (None, rest),
            };
            // A hostlist has no space; what follows it starts with one.
            let end = rest.find(' ').unwrap_or(rest.len());
            let (nodes, detail) = rest.split_at(end);
            if nodes.is_empty() {
                return None;
            }
            return Some(LogLine::Started {
                job: job_id(job)?,
                cores,
                nodes: nodes.to_string(),
                detail: detail.to_string(),
            });
        }
        if let Some(rest) = m.strip_prefix("could not start JobId=") {
            let (job, rest) = rest.split_once(" on ")?;
            let (nodes, why) = rest.split_once(" nodes: ")?;
            return Some(LogLine::CouldNotStart {
                job: job_id(job)?,
                nodes: nodes.parse().ok()?,
                why: why.to_string(),
            });
        }
        if m == "resizes held: slurmdbd is away or behind (sdiag: DBD Agent queue size)" {
            return Some(LogLine::ResizesHeld { unanswered: None });
        }
        if let Some(why) = m.strip_prefix("resizes held: slurmdbd does not answer (").and_then(|r| r.strip_suffix(')'))
        {
            return Some(LogLine::ResizesHeld { unanswered: Some(why.to_string()) });
        }
        if m == "resizes resumed: slurmdbd has caught up" {
            return Some(LogLine::ResizesResumed);
        }
        if let Some(rest) = m.strip_prefix("feed: ") {
            let (rest, nodes_walked) = match rest.rsplit_once(", nodes ")? {
                (rest, "walked") => (rest, true),
                (rest, "as last walked") => (rest, false),
                _ => return None,
            };
            let (head, kept) = rest.strip_suffix(" waiting kept")?.rsplit_once(", ")?;
            let kept = kept.parse().ok()?;
            if let Some(rest) = head.strip_prefix("whole read (") {
                let (why, records) = rest.split_once("), ")?;
                let records = records.strip_suffix(" records")?.parse().ok()?;
                return Some(LogLine::FeedRead { records, whole: Some(why.to_string()), kept, nodes_walked });
            }
            let records = head.strip_suffix(" records read")?.parse().ok()?;
            return Some(LogLine::FeedRead { records, whole: None, kept, nodes_walked });
        }
        if let Some(rest) = m.strip_prefix("pass ") {
            let (pass, rest) = rest.split_once(": slurmctld's locks held ")?;
            let (read, rest) = rest.split_once(" ms to read, ")?;
            let (apply, rest) = rest.split_once(" to apply, on the CPU ")?;
            // "not again": nothing to write, the locks were not taken for it.
            let apply_ms = match apply {
                "not again" => None,
                a => Some(a.strip_suffix(" ms")?.parse().ok()?),
            };
            let (held, rest) = rest.split_once(" (none while deciding, ")?;
            let decide = rest.strip_suffix(" ms)")?;
            // The run delay is said only where the kernel keeps it.
            let (on_cpu, queued) = match held.split_once(" ms of them, waiting for one ") {
                Some((on_cpu, queued)) => (on_cpu, Some(queued.strip_suffix(" ms")?.parse().ok()?)),
                None => (held.strip_suffix(" ms of them")?, None),
            };
            return Some(LogLine::LocksHeld {
                pass: pass.parse().ok()?,
                read_ms: read.parse().ok()?,
                apply_ms,
                on_cpu_ms: on_cpu.parse().ok()?,
                queued_ms: queued,
                decide_ms: decide.parse().ok()?,
            });
        }
        if let Some((nodes, rest)) = m.split_once(" kept from the strategies for ") {
            return Some(LogLine::Suspect { nodes: node_names(nodes)?, secs: rest.strip_suffix(" s")?.parse().ok()? });
        }
        if let Some((job, rest)) = m.strip_prefix("JobId=").and_then(|r| r.split_once(POWER_HELD_HEAD)) {
            let (nodes, rest) = rest.split_once(POWER_HELD_DRAW)?;
            let (before_w, rest) = rest.split_once(POWER_HELD_TO)?;
            let (after_w, corridor) = rest.split_once(POWER_HELD_TOP)?;
            return Some(LogLine::PowerHeld {
                job: job_id(job)?,
                nodes: nodes.parse().ok()?,
                before_w: before_w.parse().ok()?,
                after_w: after_w.parse().ok()?,
                corridor: Corridor::parse(corridor.strip_suffix(" W")?).ok()?,
            });
        }
        let (job, what) = m.strip_prefix("JobId=")?.split_once(": ")?;
        let job = job_id(job)?;
        Self::parse_about(job, what)
    }

    /// The lines `JobId=J: WHAT`.
    fn parse_about(job: JobId, what: &str) -> Option<LogLine> {
        // Nodes freed: the hostlist at the end has no space, which sets it
        // apart from the expand's "it now holds LIST (strategy); waiting".
        if let Some((ending, holds)) = what.rsplit_once("; it now holds ") {
            if !holds.contains(' ') {
                return Some(LogLine::Released { job, ending: Ending::parse(ending)?, holds: holds.to_string() });
            }
        }
        if let Some(why) = what.strip_prefix("cancelled: ") {
            return Some(LogLine::Cancelled { job, why: why.to_string() });
        }
        if let Some(rest) = what.strip_prefix(ADAPT_BOUND_HEAD) {
            let (bound, rest) = rest.split_once(" s (AdaptTimeout=")?;
            let (timeout, _) = rest.split_once("): its adaptations are given ")?;
            return Some(LogLine::AdaptBound { job, bound_s: bound.parse().ok()?, timeout_s: timeout.parse().ok()? });
        }
        if what == REQUEUED_AFTER_RESIZE {
            return Some(LogLine::RequeuedAfterResize { job });
        }
        if what == REQUEUE_FINISHED {
            return Some(LogLine::RequeueFinished { job });
        }
        if let Some(rest) = what.strip_prefix(TAKEN_BACK_HEAD) {
            return Some(LogLine::UsageTakenBack { job, tres_s: rest.strip_suffix(TAKEN_BACK_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix(BATCH_HOST_HEAD) {
            let (runs_on, said) = rest.strip_suffix(BATCH_HOST_TAIL)?.split_once(BATCH_HOST_MID)?;
            return Some(LogLine::BatchHostRestored { job, said: said.to_string(), runs_on: runs_on.to_string() });
        }
        if let Some(rest) = what.strip_prefix(DROPPED_HEAD) {
            return Some(LogLine::Dropped { job, what: rest.strip_suffix(" dropped")?.to_string() });
        }
        if let Some((ending, waits_for)) = what.split_once(RELEASE_HELD_MID) {
            return Some(LogLine::ReleaseHeld {
                job,
                ending: Ending::parse(ending)?,
                waits_for: waits_for.to_string(),
            });
        }
        if let Some((ending, error)) = what.split_once(", but freeing the nodes failed: ") {
            return Some(LogLine::ReleaseFailed { job, ending: Ending::parse(ending)?, error: error.to_string() });
        }
        if let Some(rest) = what.strip_prefix("expand onto ") {
            let (nodes, rest) = rest.split_once(' ')?;
            let nodes = node_names(nodes)?;
            if let Some(rest) = rest.strip_prefix("(resize ") {
                let (resize, rest) = rest.split_once(", through JobId=")?;
                let (helper, rest) = rest.split_once("); it now holds ")?;
                let (holds, rest) = rest.split_once(" (")?;
                return Some(LogLine::Expanding {
                    job,
                    nodes,
                    resize: resize.parse().ok()?,
                    helper: job_id(helper)?,
                    holds: holds.to_string(),
                    strategy: rest.strip_suffix(EXPANDING_TAIL)?.to_string(),
                });
            }
            if let Some(error) = rest.strip_prefix("not done, it keeps its nodes: ") {
                return Some(LogLine::ExpandNotDone { job, nodes, error: error.to_string() });
            }
            let after = after_decision(rest.strip_prefix("committed")?)?;
            return Some(LogLine::ExpandCommitted { job, nodes, after });
        }
        if let Some(rest) = what.strip_prefix("shrink off ") {
            let (nodes, rest) = rest.split_once(" (resize ")?;
            let (resize, strategy) = rest.split_once(", ")?;
            return Some(LogLine::Shrinking {
                job,
                nodes: node_names(nodes)?,
                resize: resize.parse().ok()?,
                strategy: strategy.strip_suffix(SHRINKING_TAIL)?.to_string(),
            });
        }
        if let Some(rest) = what.strip_prefix("growing onto ") {
            let (nodes, strategy) = rest.split_once(" (")?;
            let strategy = strategy.strip_suffix(')')?.to_string();
            return Some(LogLine::Growing { job, nodes: node_names(nodes)?, strategy });
        }
        if let Some(rest) = what.strip_prefix("preempting ") {
            let (victims, rest) = rest.split_once(" for its start on ")?;
            let victims = victims.split(',').map(|v| job_id(v.strip_prefix("JobId=")?)).collect::<Option<_>>()?;
            let nodes = node_names(rest.strip_suffix(PREEMPTING_TAIL)?)?;
            return Some(LogLine::Preempting { job, victims, nodes });
        }
        if let Some(rest) = what.strip_prefix("lost ") {
            let (nodes, rest) = rest.split_once("; it goes on with ")?;
            let (holds, rest) = rest.split_once(" nodes")?;
            let resize = match rest {
                "" => None,
                r => Some(r.strip_prefix(" (resize ")?.strip_suffix(LOST_TAIL)?.parse().ok()?),
            };
            return Some(LogLine::Lost { job, nodes: node_names(nodes)?, holds: holds.parse().ok()?, resize });
        }
        if let Some(rest) = what.strip_prefix("going on without ") {
            let (nodes, after) = rest.split_once(" committed")?;
            return Some(LogLine::LostCommitted { job, nodes: node_names(nodes)?, after: after_decision(after)? });
        }
        if let Some(rest) = what.strip_prefix("time limit stretched to ") {
            return Some(LogLine::Stretched { job, minutes: rest.strip_suffix(STRETCHED_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix("priority raised to ") {
            return Some(LogLine::PriorityRaised { job, priority: rest.strip_suffix(PRIORITY_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix("grows to ") {
            return Some(LogLine::Capped { job, most: rest.strip_suffix(CAPPED_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix("JobId=") {
            let (releaser, rest) = rest.split_once(SYNC_MID)?;
            let nodes = rest.strip_suffix(SYNC_TAIL)?.parse().ok()?;
            return Some(LogLine::ReleasedAtSyncPoint { job, releaser: job_id(releaser)?, nodes });
        }
        if let Some(rest) = what.strip_prefix(SPLIT_HEAD) {
            let ids = rest.strip_suffix(SPLIT_TAIL)?.strip_prefix('[')?.strip_suffix(']')?;
            let split = ids.split(", ").map(|i| i.parse().ok()).collect::<Option<_>>()?;
            return Some(LogLine::TasksSplitOff { job, split });
        }
        if let Some(rest) = what.strip_prefix("shrinking off ") {
            let (nodes, rest) = rest.split_once(" for JobId=")?;
            let (preemptor, rest) = rest.split_once(INSTEAD_MID)?;
            let (node_s, rest) = rest.split_once(INSTEAD_RAN)?;
            let (ran_s, rest) = rest.split_once(" s on ")?;
            return Some(LogLine::ShrinkInsteadOfPreempt {
                job,
                nodes: node_names(nodes)?,
                preemptor: job_id(preemptor)?,
                node_s: node_s.parse().ok()?,
                ran_s: ran_s.parse().ok()?,
                on_nodes: rest.strip_suffix(INSTEAD_TAIL)?.parse().ok()?,
            });
        }
        if let Some(request) = what.strip_prefix(REQUEST_HEAD) {
            return Some(LogLine::RequestTaken { job, request: request.to_string() });
        }
        None
    }
}

/// Watts as the log says them: at most one decimal, none when whole.
fn watts(w: Watts) -> String {
    let t = format!("{w:.1}");
    t.strip_suffix(".0").map_or(t.clone(), str::to_string)
}

fn job_id(s: &str) -> Option<JobId> {
    // A plain number: "+4" or " 4" would read as 4 and hide a rewording.
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().map(JobId)
}

/// `n1,n3`: names without spaces.
fn node_names(s: &str) -> Option<Vec<String>> {
    if s.is_empty() || s.contains(' ') {
        return None;
    }
    Some(s.split(',').map(str::to_string).collect())
}

/// What follows "committed": nothing, or ` S.SS s after the decision`.
fn after_decision(s: &str) -> Option<Option<f64>> {
    if s.is_empty() {
        return Some(None);
    }
    let secs = s.strip_prefix(' ')?.strip_suffix(" s after the decision")?;
    Some(Some(secs.parse().ok()?))
}

/// `H s)`, the end of a hold.
fn seconds_closing(s: &str) -> Option<u64> {
    s.strip_suffix(" s)")?.parse().ok()
}

/// `C of the OF cores of each of REST`.
fn of_each(s: &str) -> Option<(u32, u32, &str)> {
    let (c, rest) = s.split_once(" of the ")?;
    let (of, rest) = rest.split_once(" cores of each of ")?;
    Some((c.parse().ok()?, of.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    /// One of each kind, with the fields a writer would give.
    fn samples() -> Vec<LogLine> {
        let j = JobId(4);
        vec![
            LogLine::AgentStarted { config: "Strategy=mtct SchedulerTick=1".into() },
            LogLine::AgentStopped { passes: 12 },
            LogLine::Reconfigured { config: "Strategy=fcfs SchedulerTick=7".into() },
            LogLine::CorridorNow { corridor: Corridor::new(0.0, 300.0).unwrap(), cause: CorridorCause::Start },
            LogLine::CorridorNow { corridor: Corridor::new(0.0, 1000.0).unwrap(), cause: CorridorCause::Reconfigured },
            LogLine::CorridorNow { corridor: Corridor::new(100.0, 1000.5).unwrap(), cause: CorridorCause::Scheduled },
            LogLine::Started { job: j, cores: None, nodes: "n[1-2]".into(), detail: " (mtct)".into() },
            LogLine::Started {
                job: j,
                cores: None,
                nodes: "n1,m[1-2]".into(),
                detail: " (ipsched), CPUs as decided: n1:3".into(),
            },
            LogLine::Started { job: j, cores: None, nodes: "n1".into(), detail: String::new() },
            LogLine::Started {
                job: j,
                cores: Some((2, 8)),
                nodes: "n[1-2]".into(),
                detail: " (sd-policy), taken from JobId=2; its time limit 5 min".into(),
            },
            LogLine::CouldNotStart {
                job: j,
                nodes: 2,
                why: "Requested nodes are busy; said once while it repeats".into(),
            },
            LogLine::Preempting { job: j, victims: vec![JobId(2), JobId(3)], nodes: names("n1,n2") },
            LogLine::Growing { job: j, nodes: names("n3"), strategy: "mtct".into() },
            LogLine::Expanding {
                job: j,
                nodes: names("n2,n3"),
                resize: 17,
                helper: JobId(5),
                holds: "n[1-3]".into(),
                strategy: "mtct-backfill".into(),
            },
            LogLine::ExpandNotDone {
                job: j,
                nodes: names("n2"),
                error: "Requested node configuration is not available".into(),
            },
            LogLine::ExpandCommitted { job: j, nodes: names("n2,n3"), after: Some(0.25) },
            LogLine::ExpandCommitted { job: j, nodes: names("n2"), after: None },
            LogLine::AdaptBound { job: j, bound_s: 16, timeout_s: 1 },
            LogLine::Cancelled { job: j, why: "it lost n3 and holds 1 nodes, fewer than its minimum".into() },
            LogLine::Shrinking { job: j, nodes: names("n3"), resize: 18, strategy: "mtct".into() },
            LogLine::Released {
                job: j,
                ending: Ending::ShrinkCommitted { nodes: names("n3,n4"), after: Some(0.15) },
                holds: "n[1-2]".into(),
            },
            LogLine::Released {
                job: j,
                ending: Ending::ShrinkForced { nodes: names("n2"), why: "not committed within 2 s".into(), hold_s: 2 },
                holds: "n1".into(),
            },
            LogLine::Released {
                job: j,
                ending: Ending::RolledBack {
                    nodes: names("n4"),
                    why: "not done: n4 stopped answering or was drained".into(),
                    hold_s: 30,
                },
                holds: "n[1-3]".into(),
            },
            LogLine::ReleaseFailed {
                job: j,
                ending: Ending::ShrinkCommitted { nodes: names("n3"), after: None },
                error: "Invalid job id specified".into(),
            },
            LogLine::ReleaseHeld {
                job: j,
                ending: Ending::ShrinkCommitted { nodes: names("n3"), after: Some(4.5) },
                waits_for: "slurmdbd, away or behind (sdiag: DBD Agent queue size)".into(),
            },
            LogLine::ReleaseHeld {
                job: j,
                ending: Ending::ShrinkForced { nodes: names("n2"), why: "not committed within 2 s".into(), hold_s: 2 },
                waits_for: "slurmdbd, which does not answer (slurmdbd:6819: Connection refused)".into(),
            },
            LogLine::Stretched { job: j, minutes: 12 },
            LogLine::RequeuedAfterResize { job: j },
            LogLine::RequeueFinished { job: j },
            LogLine::UsageTakenBack { job: j, tres_s: 88 },
            LogLine::BatchHostRestored { job: j, said: "n1".into(), runs_on: "n2".into() },
            LogLine::Dropped { job: j, what: "expand onto n3,n4".into() },
            LogLine::Suspect { nodes: names("n2,n3"), secs: 60 },
            LogLine::Lost { job: j, nodes: names("n3"), holds: 2, resize: None },
            LogLine::Lost { job: j, nodes: names("n3"), holds: 2, resize: Some(19) },
            LogLine::LostCommitted { job: j, nodes: names("n3"), after: Some(1.5) },
            LogLine::PriorityRaised { job: j, priority: 4_294_967_293 },
            LogLine::Capped { job: j, most: 3 },
            LogLine::TasksSplitOff { job: j, split: vec![5, 6] },
            LogLine::ReleasedAtSyncPoint { job: j, releaser: JobId(2), nodes: 2 },
            LogLine::PowerHeld {
                job: j,
                nodes: 1,
                before_w: 284.0,
                after_w: 463.5,
                corridor: Corridor::new(0.0, 300.0).unwrap(),
            },
            LogLine::ShrinkInsteadOfPreempt {
                job: j,
                nodes: names("n3,n2"),
                preemptor: JobId(1),
                node_s: 2400,
                ran_s: 600,
                on_nodes: 4,
            },
            LogLine::RequestTaken { job: j, request: "mall1 seq=7 COMMIT job=4 resize=17".into() },
            LogLine::LocksHeld {
                pass: 3,
                read_ms: 1.2,
                apply_ms: Some(0.4),
                on_cpu_ms: 1.5,
                queued_ms: None,
                decide_ms: 12.0,
            },
            LogLine::LocksHeld {
                pass: 4,
                read_ms: 2.2,
                apply_ms: Some(0.4),
                on_cpu_ms: 1.5,
                queued_ms: Some(0.9),
                decide_ms: 12.0,
            },
            // Nothing to write: the locks were not taken again.
            LogLine::LocksHeld {
                pass: 5,
                read_ms: 0.6,
                apply_ms: None,
                on_cpu_ms: 0.5,
                queued_ms: Some(0.0),
                decide_ms: 0.3,
            },
            LogLine::FeedRead { records: 12, whole: None, kept: 5566, nodes_walked: false },
            LogLine::FeedRead { records: 5570, whole: Some("Partitions".into()), kept: 5566, nodes_walked: true },
            LogLine::ResizesHeld { unanswered: None },
            LogLine::ResizesHeld {
                unanswered: Some("slurmdbd:6819 (172.18.0.2:6819): Connection refused (os error 111)".into()),
            },
            LogLine::ResizesResumed,
        ]
    }

    #[test]
    fn each_line_reads_back_as_written() {
        for l in samples() {
            let text = l.to_string();
            assert_eq!(LogLine::parse(&text), Some(l.clone()), "{text}");
            // As slurmctld prints it, from either plugin, at info or as a warning.
            for p in PLUGINS {
                let printed = format!("[2026-11-24T00:24:55.030+01:00] {p}: {text}");
                assert_eq!(LogLine::parse(&printed), Some(l.clone()), "{printed}");
                let warned = format!("[2026-11-24T00:24:55.030] {p}: warning: {text}");
                assert_eq!(LogLine::parse(&warned), Some(l.clone()), "{warned}");
            }
        }
    }

    #[test]
    fn the_lines_read_as_slurmctld_printed_them() {
        let log = "\
[2026-11-24T00:24:54.123] sched/malleable: started JobId=1 on n1 (mtct)
[2026-11-24T00:24:55.030] sched/malleable: JobId=1: expand onto n2,n3,n4 (resize 17, through JobId=2); it now holds n[1-4] (mtct); waiting for its application to commit
[2026-11-24T00:24:55.282] sched/malleable: JobId=1: expand onto n2,n3,n4 committed 0.25 s after the decision
[2026-11-24T00:24:56.033] sched/malleable: JobId=1: shrink off n3,n4 (resize 18, mtct); waiting for its application to leave them and commit
[2026-11-24T00:24:56.184] sched/malleable: JobId=1: shrink off n3,n4 committed 0.15 s after the decision; it now holds n[1-2]
[2026-11-24T00:24:56.200] sched/malleable: pass 41: slurmctld's locks held 0.8 ms to read, 2.5 ms to apply, on the CPU 0.0 ms of them (none while deciding, 0.3 ms)
[2026-11-24T14:14:58.351] select/natural: JobId=4: priority raised to 4294967293: a job released nodes for it
[2026-11-24T00:24:57.000] sched: Allocate JobId=9 NodeList=n5 #CPUs=1 Partition=debug
";
        let read: Vec<LogLine> = LogLine::all(log).collect();
        assert_eq!(read.len(), 7, "{read:?}");
        assert_eq!(
            read[0],
            LogLine::Started { job: JobId(1), cores: None, nodes: "n1".into(), detail: " (mtct)".into() }
        );
        assert!(
            matches!(&read[1], LogLine::Expanding { resize: 17, helper: JobId(2), holds, .. } if holds == "n[1-4]")
        );
        assert!(matches!(&read[2], LogLine::ExpandCommitted { after: Some(a), .. } if *a == 0.25));
        assert!(matches!(&read[3], LogLine::Shrinking { resize: 18, .. }));
        assert!(
            matches!(&read[4], LogLine::Released { ending: Ending::ShrinkCommitted { nodes, .. }, holds, .. } if nodes.len() == 2 && holds == "n[1-2]")
        );
        assert!(matches!(read[5], LogLine::LocksHeld { pass: 41, .. }));
        assert_eq!(read[6].job(), Some(JobId(4)));
    }

    #[test]
    fn a_reworded_line_does_not_read() {
        for text in [
            "[2026-11-24T00:24:54.123] sched/malleable: began JobId=1 on n1 (mtct)",
            "sched/malleable: JobId=1: expand onto n2 (resize 17, via JobId=2); it now holds n[1-2] (mtct); waiting for its application to commit",
            "sched/malleable: JobId=1: expand onto n2 committed 0.25 s since the decision",
            "sched/malleable: JobId=1: shrink off n3 (resize 18, mtct); waiting for its application",
            "sched/malleable: JobId=1: shrink off n3 done; it now holds n1",
            "sched/malleable: JobId=1: expand onto n2 not committed within 30 s: undone (not resized again for 30 s); it now holds n1",
            "sched/malleable: pass 4: slurmctld's locks held 1.0 ms to read, 2.0 ms to apply",
            "sched/malleable: agent stopped after many passes",
            "sched/malleable: power corridor now 0-1000 (changed)",
            "sched/malleable: JobId=x: grows to 3 nodes at most: its QOS's and association's node limits allow no more",
            "sched/malleable: JobId=4: time limit stretched to 12 min",
        ] {
            assert_eq!(LogLine::parse(text), None, "{text}");
        }
    }

    #[test]
    fn an_ending_reads_apart_from_the_lines_around_it() {
        let e = Ending::RolledBack { nodes: names("n4,n5"), why: "not committed within 30 s".into(), hold_s: 30 };
        assert_eq!(
            e.to_string(),
            "expand onto n4,n5 not committed within 30 s: rolled back (not resized again for 30 s)"
        );
        assert_eq!(Ending::parse(&e.to_string()), Some(e.clone()));
        assert!(e.is_rollback());
        // A refused expand is not an ending, nor a committed one.
        let not_done = "JobId=4: expand onto n2 not done, it keeps its nodes: busy";
        assert!(matches!(LogLine::parse(not_done), Some(LogLine::ExpandNotDone { .. })));
    }
}
