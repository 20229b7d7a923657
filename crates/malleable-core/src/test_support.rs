//! Small builders for the core's unit tests.

use malleable_model::{Decision, JobId, Node, PendingJob, RunningJob, Snapshot, Time};

/// A snapshot at time 100 with these nodes (true = free) and nothing else.
pub(crate) fn cluster(free: &[bool]) -> Snapshot {
    Snapshot { now: 100, nodes: Node::numbered(free.iter().copied()), ..Snapshot::default() }
}

/// A rigid pending job with a 60 s time limit.
pub(crate) fn job(id: u32, priority: u32, submit: i64, nodes: u32) -> PendingJob {
    PendingJob::new(id, nodes).priority(priority).submit(submit).time_limit(Some(60))
}

/// A rigid running job on these nodes, ending by `end_limit`.
pub(crate) fn running(id: u32, nodes: &[usize], end_limit: Option<Time>) -> RunningJob {
    RunningJob::new(id, nodes.iter().copied()).end_limit(end_limit)
}

/// `j` with another time limit.
pub(crate) fn limited(j: PendingJob, time_limit: Option<Time>) -> PendingJob {
    j.time_limit(time_limit)
}

pub(crate) fn start(id: u32, nodes: &[usize]) -> Decision {
    Decision::Start { job: JobId(id), nodes: nodes.to_vec(), time_limit: None }
}
