//! Strict first come, first served: jobs start in `queue_order()` until the
//! first one that does not fit, and no job overtakes it. The baseline that
//! EASY improves on, and EASY's first phase.

use malleable_model::{Decision, Snapshot};

use crate::blocks::pool::FreePool;
use crate::blocks::queue::{rigid_size, runnable_queue, start_in_order};
use crate::strategy::{Stateless, StrategyInfo};

pub const FCFS: StrategyInfo = StrategyInfo {
    name: "fcfs",
    about: "first come, first served: nothing overtakes the first waiting job",
    params: &[],
    measures: &[],
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: false,
    build: |_| Stateless::new("fcfs", fcfs),
};

/// One FCFS pass. A job asking more nodes than the whole cluster has is
/// skipped rather than made to block the queue forever (it can never run);
/// a job that could run later, once nodes come back, does block it.
pub fn fcfs(s: &Snapshot) -> Vec<Decision> {
    start_in_order(s, &mut runnable_queue(s).into_iter(), &mut FreePool::new(s), rigid_size).decisions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, job, running, start};

    #[test]
    fn starts_fitting_jobs_in_queue_order_on_lowest_nodes() {
        let mut s = cluster(&[true, false, true, true, true]);
        // Queue order: 3 (priority 5), then 1 (submitted earlier than 2), then 2.
        s.pending = vec![job(2, 1, 20, 1), job(1, 1, 10, 2), job(3, 5, 30, 1)];
        assert_eq!(fcfs(&s), vec![start(3, &[0]), start(1, &[2, 3]), start(2, &[4])]);
    }

    #[test]
    fn first_job_that_does_not_fit_blocks_the_rest() {
        let mut s = cluster(&[true, true, true, false]);
        s.running = vec![running(9, &[3], Some(200))];
        // 1 fits; 2 needs 3 of the 2 left; 3 would fit but must not overtake 2.
        s.pending = vec![job(1, 0, 1, 1), job(2, 0, 2, 3), job(3, 0, 3, 1)];
        assert_eq!(fcfs(&s), vec![start(1, &[0])]);
    }

    #[test]
    fn job_larger_than_cluster_is_skipped_not_blocking() {
        let mut s = cluster(&[true, true]);
        s.pending = vec![job(1, 0, 1, 3), job(2, 0, 2, 2)];
        assert_eq!(fcfs(&s), vec![start(2, &[0, 1])]);
    }

    #[test]
    fn zero_node_request_gets_one_node() {
        let mut s = cluster(&[false, true]);
        s.pending = vec![job(1, 0, 1, 0)];
        assert_eq!(fcfs(&s), vec![start(1, &[1])]);
    }

    #[test]
    fn duplicate_pending_id_starts_once() {
        let mut s = cluster(&[true, true]);
        s.pending = vec![job(1, 0, 1, 1), job(1, 0, 2, 1)];
        assert_eq!(fcfs(&s), vec![start(1, &[0])]);
    }

    #[test]
    fn empty_snapshot_starts_nothing() {
        assert_eq!(fcfs(&Snapshot::default()), vec![]);
        let s = Snapshot { pending: vec![job(1, 0, 1, 1)], ..Snapshot::default() };
        assert_eq!(fcfs(&s), vec![]);
    }
}
