//! The nodes free now that no decision of this pass has taken yet, handed
//! out lowest index first so that decisions are deterministic.

use malleable_model::{Decision, NodeIndex, PendingJob, Snapshot};

pub struct FreePool {
    free: Vec<NodeIndex>,
    /// `free[..taken]` are given away; taking from the front keeps the
    /// lowest indices first and never hands a node out twice.
    taken: usize,
}

impl FreePool {
    pub fn new(s: &Snapshot) -> Self {
        FreePool { free: s.free_nodes(), taken: 0 }
    }

    pub fn len(&self) -> usize {
        self.free.len() - self.taken
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hand out the `n` lowest free nodes left (for an expand), or `None`.
    pub fn take(&mut self, n: usize) -> Option<Vec<NodeIndex>> {
        if n > self.len() {
            return None;
        }
        let nodes = self.free[self.taken..self.taken + n].to_vec();
        self.taken += n;
        Some(nodes)
    }

    /// Start `job` on the `size` lowest free nodes, or `None` if too few are left.
    pub fn start(&mut self, job: &PendingJob, size: usize) -> Option<Decision> {
        self.take(size).map(|nodes| Decision::Start { job: job.id, nodes })
    }
}
