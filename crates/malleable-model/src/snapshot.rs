//! Everything one scheduling pass sees.

use crate::ids::{NodeIndex, Time};
use crate::job::{PendingJob, RunningJob};
use crate::node::Node;
use crate::power::PowerState;

/// The cluster at one instant: nodes, running jobs and the queue.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub now: Time,
    pub nodes: Vec<Node>,
    pub running: Vec<RunningJob>,
    pub pending: Vec<PendingJob>,
    /// The corridor and idle draw, when the site keeps a power corridor;
    /// strategies that do not use one ignore it.
    pub power: Option<PowerState>,
}

impl Snapshot {
    /// Indices of the nodes a job could start on now, in table order.
    pub fn free_nodes(&self) -> Vec<NodeIndex> {
        (0..self.nodes.len()).filter(|&i| self.nodes[i].free).collect()
    }

    /// Pending jobs in the order the queue serves them, as Slurm's: tier
    /// first (reservation, partition PriorityTier), then priority, then the
    /// earlier submission, then the lower id (so the order is total).
    pub fn queue_order(&self) -> Vec<&PendingJob> {
        let mut q: Vec<&PendingJob> = self.pending.iter().collect();
        q.sort_by(|a, b| PendingJob::queue_cmp(a, b));
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_order_is_tier_then_priority_then_submit_then_id() {
        let s = Snapshot {
            pending: vec![
                PendingJob::new(3, 1).submit(5),
                PendingJob::new(2, 1).submit(5),
                PendingJob::new(1, 1).submit(9),
                PendingJob::new(4, 1).submit(99).priority(1),
                PendingJob::new(5, 1).submit(99).tier(crate::tier_of(false, 1)),
                PendingJob::new(6, 1).submit(99).tier(crate::tier_of(true, 0)),
            ],
            ..Snapshot::default()
        };
        let ids: Vec<u32> = s.queue_order().iter().map(|j| j.id.0).collect();
        assert_eq!(ids, vec![6, 5, 4, 2, 3, 1]);
    }

    #[test]
    fn free_nodes_in_table_order() {
        let s = Snapshot { nodes: Node::numbered([false, true, true, false, true]), ..Snapshot::default() };
        assert_eq!(s.free_nodes(), vec![1, 2, 4]);
    }
}
