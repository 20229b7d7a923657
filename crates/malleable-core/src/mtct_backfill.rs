//! `mtct-backfill`, ours (beyond seed 002): Algorithm 1's MTCT-ordered shrinks
//! and expands, plus EASY backfilling behind a head job that shrinking cannot
//! place, so that a workload with few malleable jobs does at least as well as EASY.
//!
//! One pass:
//! 1. Start jobs in priority order while they fit (as FCFS, EASY and Algorithm 1).
//! 2. If a malleable job is ADAPTING, stop here: a shrink under way is making
//!    room for the head job, and backfilling onto the idle nodes could take
//!    them from it.
//! 3. If the head job is blocked, shrink running malleable jobs in decreasing
//!    MTCT ratio when that frees enough for it (Algorithm 1, lines 17-20); the
//!    head starts in the pass after the shrinks complete.
//! 4. Otherwise give the head job an EASY reservation from the running jobs'
//!    time limits and backfill later jobs that cannot delay it (easy.rs).
//! 5. Expand running malleable jobs in increasing MTCT ratio onto the nodes
//!    still idle. While jobs wait, a job whose MTCT ratio is 1 or more (as much
//!    time in MPI as in computation) is not expanded: the nodes would buy it
//!    little speed and must be shrunk back, at a cost, when the head job needs
//!    them. With nothing waiting, every job may grow.

use crate::common::{end_if_started, runnable_queue, FreePool};
use crate::easy::backfill_behind_head;
use crate::model::{Decision, RunningJob, Snapshot, Time};
use crate::mtct::{any_adapting, expand_into_idle, resizable_jobs, shrink_for_head, AdaptOrder};
use crate::strategy::Strategy;

/// Above this MTCT ratio a job is not grown while others wait.
pub const EXPAND_MTCT_LIMIT: f64 = 1.0;

pub struct MtctBackfill;

impl Strategy for MtctBackfill {
    fn name(&self) -> &'static str {
        "mtct-backfill"
    }
    fn schedule(&mut self, s: &Snapshot) -> Vec<Decision> {
        mtct_backfill(s)
    }
}

pub fn mtct_backfill(s: &Snapshot) -> Vec<Decision> {
    let mut pool = FreePool::new(s);
    let mut decisions = Vec::new();
    let mut started: Vec<(Option<Time>, usize)> = Vec::new();
    let mut queue = runnable_queue(s).into_iter();

    // 1. Priority order while jobs fit.
    let mut head_size = None;
    for (job, size) in queue.by_ref() {
        match pool.start(job, size) {
            Some(d) => {
                decisions.push(d);
                started.push((end_if_started(s.now, job), size));
            }
            None => {
                head_size = Some(size);
                break;
            }
        }
    }

    // 2. An adaptation under way: nothing more this pass.
    if any_adapting(s) {
        return decisions;
    }
    let candidates = resizable_jobs(s);

    if let Some(need) = head_size {
        // 3. Shrink for the head job if that places it.
        let order = AdaptOrder::MtctRatio.shrink_candidates(&candidates);
        if let Some(shrinks) = shrink_for_head(&order, need - pool.len()) {
            decisions.extend(shrinks);
            return decisions;
        }
        // 4. EASY behind the head.
        decisions.extend(backfill_behind_head(
            s,
            queue.by_ref(),
            &mut pool,
            &started,
            need,
        ));
    }

    // 5. Grow onto what is still idle.
    let jobs_wait = head_size.is_some();
    let order = AdaptOrder::MtctRatio.expand_candidates(&candidates);
    decisions.extend(expand_into_idle(&order, &mut pool, |job| {
        expansion_cap(job, jobs_wait)
    }));
    decisions
}

/// The most nodes `job` may grow to in this pass.
fn expansion_cap(job: &RunningJob, jobs_wait: bool) -> u32 {
    let inefficient = job.mtct_ratio.is_some_and(|r| r >= EXPAND_MTCT_LIMIT);
    if jobs_wait && inefficient {
        job.nodes.len() as u32
    } else {
        u32::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_support::{cluster, job, start};
    use crate::model::{JobId, MalleableSpec, NodeConstraint, PendingJob};

    fn running(id: u32, nodes: &[usize], end: Time, mtct: Option<f64>) -> RunningJob {
        RunningJob {
            id: JobId(id),
            nodes: nodes.to_vec(),
            start: 0,
            end_limit: Some(end),
            malleable: mtct.map(|_| MalleableSpec {
                min: 1,
                max: 8,
                constraint: NodeConstraint::None,
            }),
            adapting: false,
            mtct_ratio: mtct,
        }
    }

    fn limited(mut j: PendingJob, limit: Time) -> PendingJob {
        j.time_limit = Some(limit);
        j
    }

    #[test]
    fn backfills_like_easy_when_shrinking_cannot_place_the_head() {
        // Rigid jobs only: nodes 0-1 back at 200, 2-3 free, head wants 4.
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(9, &[0, 1], 200, None)];
        s.pending = vec![
            job(1, 0, 1, 4),
            limited(job(2, 0, 2, 2), 100),
            limited(job(3, 0, 3, 1), 500),
        ];
        assert_eq!(mtct_backfill(&s), crate::easy::easy(&s));
        assert_eq!(mtct_backfill(&s), vec![start(2, &[2, 3])]);
    }

    #[test]
    fn shrinks_for_the_head_before_backfilling() {
        let mut s = cluster(&[false, false, false, true]);
        s.running = vec![running(9, &[0, 1, 2], 900, Some(0.3))];
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), 10)];
        assert_eq!(
            mtct_backfill(&s),
            vec![Decision::Shrink {
                job: JobId(9),
                remove_nodes: vec![2]
            }]
        );
    }

    #[test]
    fn inefficient_jobs_do_not_grow_while_others_wait() {
        // Node 0 rigid until 200; 1 (MTCT 1.5) and 2 (MTCT 0.4) malleable; 3 free.
        let mut s = cluster(&[false, false, false, true]);
        s.running = vec![
            running(8, &[0], 200, None),
            running(9, &[1], 900, Some(1.5)),
            running(10, &[2], 900, Some(0.4)),
        ];
        // A rigid-sized head job that shrinking cannot place (each keeps 1 node).
        s.pending = vec![job(1, 0, 1, 4)];
        assert_eq!(
            mtct_backfill(&s),
            vec![Decision::Expand {
                job: JobId(10),
                add_nodes: vec![3]
            }]
        );
        s.running[2].mtct_ratio = Some(1.2);
        assert_eq!(mtct_backfill(&s), vec![]);
        // Nothing waiting: the inefficient job may grow too.
        s.pending.clear();
        assert_eq!(
            mtct_backfill(&s),
            vec![Decision::Expand {
                job: JobId(10),
                add_nodes: vec![3]
            }]
        );
    }
}
