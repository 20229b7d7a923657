//! Strict first come, first served: jobs start in `queue_order()` until the
//! first one that does not fit, and no job overtakes it. The baseline that
//! EASY improves on, and EASY's first phase.

use crate::common::{runnable_queue, FreePool};
use crate::model::{Decision, Snapshot};
use crate::strategy::Strategy;

pub struct Fcfs;

impl Strategy for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn schedule(&mut self, s: &Snapshot) -> Vec<Decision> {
        fcfs(s)
    }
}

/// One FCFS pass. A job asking more nodes than the whole cluster has is
/// skipped rather than made to block the queue forever (it can never run);
/// a job that could run later, once nodes come back, does block it.
pub fn fcfs(s: &Snapshot) -> Vec<Decision> {
    let mut pool = FreePool::new(s);
    let mut decisions = Vec::new();
    for (job, size) in runnable_queue(s) {
        match pool.start(job, size) {
            Some(d) => decisions.push(d),
            None => break,
        }
    }
    decisions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_support::{cluster, job, start};
    use crate::model::{JobId, RunningJob};

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
        s.running = vec![RunningJob {
            id: JobId(9),
            nodes: vec![3],
            start: 0,
            end_limit: Some(200),
            malleable: None,
            adapting: false,
            mtct_ratio: None,
            power: None,
        }];
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
