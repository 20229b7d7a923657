//! `mtct-backfill`, ours (beyond Chadha et al. 2020): Algorithm 1's MTCT-ordered shrinks
//! and expands, plus EASY backfilling behind a head job that shrinking cannot
//! place, and moldable starts, so that a workload with few malleable jobs does
//! at least as well as EASY and a fully malleable one runs efficiently.
//!
//! Why moldable starts: with any speedup whose efficiency falls with node
//! count (the fitted model: 97% of one-node efficiency on 2 nodes, 48% on 16,
//! 27% on 32), a backed-up queue is served fastest by running more jobs on
//! fewer nodes each. Starting every job at its `--nodes` (Algorithm 1) and
//! shrinking others to make room pays adaptation costs and keeps big jobs big.
//!
//! One pass:
//! 1. Start jobs in priority order while they fit. A malleable job that does
//!    not fit at its `--nodes` starts at once on the largest count its spec
//!    allows that the idle nodes cover (it is grown later when nodes idle).
//! 2. If a malleable job is ADAPTING, stop here: a shrink under way is making
//!    room for the head job, and backfilling onto the idle nodes could take
//!    them from it.
//! 3. If the head job is blocked, shrink running malleable jobs in decreasing
//!    MTCT ratio when that frees enough for it (Algorithm 1, lines 17-20): a
//!    rigid head needs its size, a malleable head only its lowest valid count
//!    (it then starts moldably in the pass after the shrinks complete).
//! 4. Otherwise give the head job an EASY reservation from the running jobs'
//!    time limits and backfill later jobs that cannot delay it (blocks/backfill.rs). A
//!    malleable job may backfill on fewer nodes: the largest valid count that
//!    fits and ends by the shadow time or fits in the extra nodes, with its
//!    time limit stretched by `--nodes / n` (a safe bound whenever efficiency
//!    does not rise as nodes are taken away).
//! 5. Expand running malleable jobs round robin in increasing MTCT ratio onto
//!    the nodes still idle (blocks/adapt.rs). While jobs wait, a job whose MTCT
//!    ratio is `ExpandMtctLimit` (1) or more (as much time in MPI as in
//!    computation) is not expanded:
//!    the nodes would buy it little speed and must be shrunk back, at a cost,
//!    when the head job needs them. With nothing waiting, every job may grow.

use malleable_model::{Decision, PendingJob, RunningJob, Snapshot};

use crate::blocks::adapt::{any_adapting, expand_into_idle, resizable_jobs, shrink_for_head, AdaptOrder};
use crate::blocks::backfill::backfill;
use crate::blocks::pool::FreePool;
use crate::blocks::queue::{runnable_queue, start_in_order};
use crate::params::{Param, Span};
use crate::strategy::{Stateless, StrategyInfo};

/// Above this MTCT ratio a job is not grown while others wait (by default).
pub const EXPAND_MTCT_LIMIT: f64 = 1.0;

pub const EXPAND_MTCT_LIMIT_PARAM: Param<f64> = Param {
    key: "ExpandMtctLimit",
    default: EXPAND_MTCT_LIMIT,
    allowed: Span { min: 0.0, max: 1e6 },
    help: "while jobs wait, a job with this MTCT ratio or more is not grown",
};

pub const MTCT_BACKFILL: StrategyInfo = StrategyInfo {
    name: "mtct-backfill",
    about: "ours: Algorithm 1's MTCT-ordered resizes with EASY backfilling and moldable starts",
    params: &[&EXPAND_MTCT_LIMIT_PARAM],
    measures: &[],
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: false,
    build: |p| {
        let expand_mtct_limit = p.get(&EXPAND_MTCT_LIMIT_PARAM);
        Stateless::new("mtct-backfill", move |s| mtct_backfill(s, expand_mtct_limit))
    },
};

pub fn mtct_backfill(s: &Snapshot, expand_mtct_limit: f64) -> Vec<Decision> {
    let mut pool = FreePool::new(s);
    let mut queue = runnable_queue(s).into_iter();

    // 1. Priority order while jobs fit; a malleable job that does not fit at
    //    its --nodes starts on fewer nodes if its spec allows a count the idle
    //    nodes cover (it is grown later when nodes are idle).
    let first = start_in_order(s, &mut queue, &mut pool, |job, size, free| {
        if size <= free {
            Some(size)
        } else {
            moldable_size(job, size, free)
        }
    });
    let mut decisions = first.decisions;
    let head = first.head;

    // 2. An adaptation under way: nothing more this pass.
    if any_adapting(s) {
        return decisions;
    }
    let candidates = resizable_jobs(s);

    if let Some((job, size)) = head {
        // 3. Shrink for the head job if that places it: a malleable head only
        //    needs its lowest valid count (it starts there, moldably, once the
        //    shrinks are done).
        let need = job.malleable.and_then(|m| m.lowest_valid()).map_or(size, |lo| (lo as usize).min(size));
        let order = AdaptOrder::MtctRatio.shrink_candidates(&candidates);
        let short = need.saturating_sub(pool.available(&job.placement));
        if let Some(shrinks) = shrink_for_head(&order, &job.placement, short) {
            decisions.extend(shrinks);
            return decisions;
        }
        // 4. EASY behind the head; malleable jobs may backfill on fewer nodes.
        decisions.extend(backfill(s, queue.by_ref(), &mut pool, &first.started, (job, size), backfill_sizes));
    }

    // 5. Grow onto what is still idle.
    let jobs_wait = head.is_some();
    let order = AdaptOrder::MtctRatio.expand_candidates(&candidates);
    decisions.extend(expand_into_idle(&order, &mut pool, |job| expansion_cap(job, jobs_wait, expand_mtct_limit)));
    decisions
}

/// The largest count below `size` that `job`'s spec allows and `idle` nodes
/// cover; `None` for a rigid job or if there is none.
fn moldable_size(job: &PendingJob, size: usize, idle: usize) -> Option<usize> {
    let spec = job.malleable?;
    let hi = u32::try_from(size.min(idle)).unwrap_or(u32::MAX);
    (1..=hi).rev().find(|&n| spec.allows(n)).map(|n| n as usize)
}

/// The counts a job behind the head may backfill on, largest first: its
/// size, and for a malleable job every smaller count its spec allows that
/// the `free` nodes cover.
fn backfill_sizes(job: &PendingJob, size: usize, free: usize) -> Vec<usize> {
    match job.malleable {
        None => vec![size],
        Some(spec) => (1..=size.min(free)).rev().filter(|&n| n == size || spec.allows(n as u32)).collect(),
    }
}

/// The most nodes `job` may grow to in this pass.
fn expansion_cap(job: &RunningJob, jobs_wait: bool, limit: f64) -> u32 {
    let inefficient = job.mtct_ratio.is_some_and(|r| r >= limit);
    if jobs_wait && inefficient {
        job.nodes.len() as u32
    } else {
        u32::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, job, start};
    use malleable_model::{JobId, MalleableSpec, NodeConstraint, Time};

    fn mtct_backfill(s: &Snapshot) -> Vec<Decision> {
        super::mtct_backfill(s, EXPAND_MTCT_LIMIT)
    }

    /// A running job until `end`, malleable (any count 1..8) when it has an MTCT ratio.
    fn running(id: u32, nodes: &[usize], end: Time, mtct: Option<f64>) -> RunningJob {
        let spec = mtct.map(|_| MalleableSpec { min: 1, max: 8, constraint: NodeConstraint::None });
        RunningJob::new(id, nodes.iter().copied()).end_limit(Some(end)).malleable(spec).mtct_ratio(mtct)
    }

    fn limited(j: PendingJob, limit: Time) -> PendingJob {
        j.time_limit(Some(limit))
    }

    #[test]
    fn backfills_like_easy_when_shrinking_cannot_place_the_head() {
        // Rigid jobs only: nodes 0-1 back at 200, 2-3 free, head wants 4.
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(9, &[0, 1], 200, None)];
        s.pending = vec![job(1, 0, 1, 4), limited(job(2, 0, 2, 2), 100), limited(job(3, 0, 3, 1), 500)];
        assert_eq!(mtct_backfill(&s), crate::blocks::backfill::easy(&s));
        assert_eq!(mtct_backfill(&s), vec![start(2, &[2, 3])]);
    }

    #[test]
    fn a_blocked_malleable_job_starts_on_fewer_nodes() {
        // 3 nodes free, head asks 4 (even, min 2): it starts on 2 at once.
        let mut s = cluster(&[false, true, true, true]);
        s.running = vec![running(9, &[0], 900, None)];
        let mut head = job(1, 0, 1, 4);
        head.malleable = Some(MalleableSpec { min: 2, max: 4, constraint: NodeConstraint::Even });
        s.pending = vec![head, job(2, 0, 2, 1)];
        assert_eq!(mtct_backfill(&s), vec![start(1, &[1, 2]), start(2, &[3])]);
    }

    #[test]
    fn a_malleable_job_backfills_on_fewer_nodes_if_it_ends_by_the_shadow_time() {
        // Nodes 0-1 back at 200 (now 100), 2-3 free; head 1 wants all 4.
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(9, &[0, 1], 200, None)];
        // Job 2 asks 3 nodes for 60 s: on 2 nodes at most 90 s, done by 200.
        let mut j2 = job(2, 0, 2, 3);
        j2.malleable = Some(MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::None });
        s.pending = vec![job(1, 0, 1, 4), j2.clone()];
        assert_eq!(mtct_backfill(&s), vec![start(2, &[2, 3])]);
        // With a 120 s limit it would end at 280 on 2 nodes, 460 on 1: it waits.
        j2.time_limit = Some(120);
        s.pending = vec![job(1, 0, 1, 4), j2];
        assert_eq!(mtct_backfill(&s), vec![]);
    }

    #[test]
    fn shrinks_for_the_head_before_backfilling() {
        let mut s = cluster(&[false, false, false, true]);
        s.running = vec![running(9, &[0, 1, 2], 900, Some(0.3))];
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), 10)];
        assert_eq!(mtct_backfill(&s), vec![Decision::Shrink { job: JobId(9), remove_nodes: vec![2] }]);
    }

    #[test]
    fn inefficient_jobs_do_not_grow_while_others_wait() {
        // Node 0 rigid until 200; 1 (MTCT 1.5) and 2 (MTCT 0.4) malleable; 3 free.
        let mut s = cluster(&[false, false, false, true]);
        s.running =
            vec![running(8, &[0], 200, None), running(9, &[1], 900, Some(1.5)), running(10, &[2], 900, Some(0.4))];
        // A rigid-sized head job that shrinking cannot place (each keeps 1 node).
        s.pending = vec![job(1, 0, 1, 4)];
        assert_eq!(mtct_backfill(&s), vec![Decision::Expand { job: JobId(10), add_nodes: vec![3] }]);
        s.running[2].mtct_ratio = Some(1.2);
        assert_eq!(mtct_backfill(&s), vec![]);
        // ExpandMtctLimit=1.3 lets a job at 1.2 grow, still not the one at 1.5.
        let mut p = crate::params::Params::defaults(MTCT_BACKFILL.params);
        p.set("ExpandMtctLimit", "1.3").unwrap();
        let report = (MTCT_BACKFILL.build)(&p).schedule(&s);
        assert_eq!(report.decisions, vec![Decision::Expand { job: JobId(10), add_nodes: vec![3] }]);
        // Nothing waiting: the inefficient job may grow too.
        s.pending.clear();
        assert_eq!(mtct_backfill(&s), vec![Decision::Expand { job: JobId(10), add_nodes: vec![3] }]);
    }
}
