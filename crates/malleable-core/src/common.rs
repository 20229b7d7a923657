//! What the strategies share within one scheduling pass: the queue of jobs that
//! could ever run, each with the node count it really gets, and the free nodes
//! handed out lowest index first so that decisions are deterministic.

use std::collections::HashSet;

use crate::model::{Decision, NodeIndex, PendingJob, Snapshot, Time};

/// Nodes a rigid job gets: what it asks for, but at least one (a job asking
/// for 0 nodes still needs somewhere to run).
pub(crate) fn job_size(job: &PendingJob) -> usize {
    usize::try_from(job.nodes).unwrap_or(usize::MAX).max(1)
}

/// When a job started now at most ends; `None` if unlimited. A negative time
/// limit makes no sense and is read as 0; the sum saturates rather than wrap.
pub(crate) fn end_if_started(now: Time, job: &PendingJob) -> Option<Time> {
    job.time_limit.map(|limit| now.saturating_add(limit.max(0)))
}

/// The pending jobs in `queue_order()` with their sizes, leaving out:
/// - jobs asking more nodes than the cluster has in total: they can never run,
///   and letting them hold the queue would stop it for good;
/// - a second entry with an id already seen (a job starts at most once).
pub(crate) fn runnable_queue(s: &Snapshot) -> Vec<(&PendingJob, usize)> {
    let total = s.nodes.len();
    let mut seen = HashSet::new();
    s.queue_order()
        .into_iter()
        .filter(|job| seen.insert(job.id))
        .map(|job| (job, job_size(job)))
        .filter(|&(_, size)| size <= total)
        .collect()
}

/// When each busy node comes back, for the nodes that do (unsorted). The
/// `free` flag is the truth about now: a running job listing a free node does
/// not hold it. A busy node held by several jobs comes back when the last one
/// ends; one held by an unlimited job, or by no job (down, drained), never.
pub(crate) fn node_release_times(s: &Snapshot) -> Vec<Time> {
    // None: nothing known gives it back; Some(None): an unlimited job holds it.
    let mut back: Vec<Option<Option<Time>>> = vec![None; s.nodes.len()];
    for job in &s.running {
        for &i in &job.nodes {
            let busy = s.nodes.get(i).is_some_and(|node| !node.free);
            if !busy {
                continue;
            }
            back[i] = Some(match back[i] {
                None => job.end_limit,
                Some(prev) => prev.zip(job.end_limit).map(|(a, b)| a.max(b)),
            });
        }
    }
    back.into_iter().flatten().flatten().collect()
}

/// The nodes free now that no decision of this pass has taken yet.
pub(crate) struct FreePool {
    free: Vec<NodeIndex>,
    /// `free[..taken]` are given away; taking from the front keeps the
    /// lowest indices first and never hands a node out twice.
    taken: usize,
}

impl FreePool {
    pub(crate) fn new(s: &Snapshot) -> Self {
        FreePool { free: s.free_nodes(), taken: 0 }
    }

    pub(crate) fn len(&self) -> usize {
        self.free.len() - self.taken
    }

    /// Hand out the `n` lowest free nodes left (for an expand), or `None`.
    pub(crate) fn take(&mut self, n: usize) -> Option<Vec<NodeIndex>> {
        if n > self.len() {
            return None;
        }
        let nodes = self.free[self.taken..self.taken + n].to_vec();
        self.taken += n;
        Some(nodes)
    }

    /// Start `job` on the `size` lowest free nodes, or `None` if too few are left.
    pub(crate) fn start(&mut self, job: &PendingJob, size: usize) -> Option<Decision> {
        if size > self.len() {
            return None;
        }
        let nodes = self.free[self.taken..self.taken + size].to_vec();
        self.taken += size;
        Some(Decision::Start { job: job.id, nodes })
    }
}

/// Small builders for the unit tests of both strategies.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::model::{Decision, JobId, Node, PendingJob, RunningJob, Snapshot, Time};

    /// A snapshot at time 100 with these nodes (true = free) and nothing else.
    pub(crate) fn cluster(free: &[bool]) -> Snapshot {
        Snapshot { now: 100, nodes: Node::numbered(free.iter().copied()), ..Snapshot::default() }
    }

    /// A pending job with a 60 s time limit.
    pub(crate) fn job(id: u32, priority: u32, submit: i64, nodes: u32) -> PendingJob {
        PendingJob { id: JobId(id), priority, submit, nodes, time_limit: Some(60), malleable: None, power: None }
    }

    /// A rigid running job on these nodes, ending by `end_limit`.
    pub(crate) fn running(id: u32, nodes: &[usize], end_limit: Option<Time>) -> RunningJob {
        RunningJob {
            id: JobId(id),
            nodes: nodes.to_vec(),
            start: 0,
            end_limit,
            malleable: None,
            adapting: false,
            mtct_ratio: None,
            power: None,
        }
    }

    /// `j` with another time limit.
    pub(crate) fn limited(mut j: PendingJob, time_limit: Option<Time>) -> PendingJob {
        j.time_limit = time_limit;
        j
    }

    pub(crate) fn start(id: u32, nodes: &[usize]) -> Decision {
        Decision::Start { job: JobId(id), nodes: nodes.to_vec() }
    }
}
