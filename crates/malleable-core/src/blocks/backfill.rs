//! EASY backfilling (Lifka 1995; Mu'alem and Feitelson 2001): FCFS until the
//! head job does not fit, one reservation for that head job, and later jobs
//! start early only where they cannot delay it. The `easy` strategy is
//! exactly [`easy`]; the power-aware strategy filters its starts by the
//! power budget; `mtct-backfill` backfills with [`backfill`] on moldable
//! sizes.

use malleable_model::{Decision, NodeIndex, PendingJob, Snapshot, Time};

use crate::blocks::pool::FreePool;
use crate::blocks::queue::{end_on, rigid_size, runnable_queue, start_in_order};
use crate::blocks::reservation::reservation;

/// One EASY pass. Jobs larger than the whole cluster are skipped (they can
/// never run). If the head job can never get enough nodes (they are held by
/// unlimited jobs, or down), it gets no reservation and blocks nothing: every
/// later job that fits starts. Nodes go lowest index first, in queue order.
pub fn easy(s: &Snapshot) -> Vec<Decision> {
    let mut pool = FreePool::new(s);
    let mut queue = runnable_queue(s).into_iter();
    // Jobs started in this pass hand their nodes back too, which can bring
    // the shadow time forward.
    let first = start_in_order(s, &mut queue, &mut pool, rigid_size);
    let mut decisions = first.decisions;
    if let Some(head) = first.head {
        decisions.extend(backfill(s, queue, &mut pool, &first.started, head, |_, size, _| vec![size]));
    }
    decisions
}

/// EASY's second phase: with the head job (and its size) blocked, start
/// the jobs of `queue` (those behind it) that cannot delay its reservation.
/// `started`: the jobs started earlier in this pass (when they end, nodes).
/// `sizes(job, size, free)` lists the counts to try for a job, largest
/// first: its size for a rigid job; a malleable job may also try fewer, with
/// its time limit stretched by [`end_on`]. A job starts on the first count
/// that fits and either ends by the shadow time or takes no more of the
/// nodes the head may use than the extra ones (it is given nodes the head
/// may not use first, and never one the head requires). A job with a
/// `--time-min` may start at its size under a limit cut to end by the
/// shadow time, as Slurm's backfill starts it.
pub fn backfill<'a>(
    s: &Snapshot,
    queue: impl Iterator<Item = (&'a PendingJob, usize)>,
    pool: &mut FreePool,
    started: &[(Option<Time>, Vec<NodeIndex>)],
    head: (&PendingJob, usize),
    sizes: impl Fn(&PendingJob, usize, usize) -> Vec<usize>,
) -> Vec<Decision> {
    let mut decisions = Vec::new();
    let (head, head_size) = (&head.0.placement, head.1);
    let mut reservation = reservation(s, pool.allowed_free(head), started, head, head_size);
    for (job, size) in queue {
        for n in sizes(job, size, pool.available(&job.placement)) {
            let Some(nodes) = pool.pick(&job.placement, n, Some(head)) else {
                continue;
            };
            // Some(limit): it may start, under that limit if one is given.
            let may_start = match reservation.as_mut() {
                None => Some(None),
                Some(r) => {
                    let theirs = nodes.iter().filter(|&&i| head.allows(i)).count();
                    if end_on(s.now, job, size, n).is_some_and(|end| end <= r.shadow_time) {
                        Some(None)
                    } else if theirs <= r.extra_nodes && !nodes.iter().any(|&i| head.requires(i)) {
                        r.extra_nodes -= theirs;
                        Some(None)
                    } else if n == size {
                        shortened(s.now, job, r.shadow_time).map(Some)
                    } else {
                        None
                    }
                }
            };
            if let Some(time_limit) = may_start {
                pool.commit(&nodes);
                decisions.push(Decision::Start { job: job.id, nodes, time_limit });
                break;
            }
        }
    }
    decisions
}

/// The limit `job` may start under to end by `shadow`: the whole minutes
/// until then (Slurm's limits are minutes), if that is its `--time-min` or
/// more; `None` if it has no time-min or the hole is shorter.
fn shortened(now: Time, job: &PendingJob, shadow: Time) -> Option<Time> {
    let min = job.time_min?;
    let limit = (shadow.saturating_sub(now) / 60) * 60;
    (limit >= min.max(60) && job.time_limit.is_none_or(|own| limit < own)).then_some(limit)
}
