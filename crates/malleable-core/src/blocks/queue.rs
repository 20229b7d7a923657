//! The queue as a pass serves it: the jobs that could ever run, in
//! `queue_order()`, each with the node count it asks for, and the prefix of
//! it that starts while it fits.

use std::collections::HashSet;

use malleable_model::{Decision, JobId, NodeIndex, PendingJob, Snapshot, Time};

use crate::blocks::pool::FreePool;

/// When a job started now at most ends; `None` if unlimited. A negative time
/// limit makes no sense and is read as 0; the sum saturates rather than wrap.
pub fn end_if_started(now: Time, job: &PendingJob) -> Option<Time> {
    job.time_limit.map(|limit| now.saturating_add(limit.max(0)))
}

/// When `job` (asking `size` nodes) at most ends if started now on `n`
/// nodes. On fewer nodes than asked its limit is stretched by size/n: no
/// parallel job runs more than n/size as fast on n nodes as on size nodes
/// when its efficiency falls with node count, so this bound is safe. On its
/// own size it is [`end_if_started`].
pub fn end_on(now: Time, job: &PendingJob, size: usize, n: usize) -> Option<Time> {
    let limit = job.time_limit?.max(0);
    let scaled = if n < size {
        let (num, den) = (i128::from(limit) * size as i128, n.max(1) as i128);
        i64::try_from((num + den - 1) / den).unwrap_or(i64::MAX)
    } else {
        limit
    };
    Some(now.saturating_add(scaled))
}

/// When a job started in this pass (a `Start` on `n` nodes) at most ends:
/// now plus the limit the strategy gave it, else its own ([`end_on`]).
pub fn decided_end(s: &Snapshot, job: JobId, n: usize, time_limit: Option<Time>) -> Option<Time> {
    match time_limit {
        Some(limit) => Some(s.now.saturating_add(limit)),
        None => s.pending.iter().find(|p| p.id == job).and_then(|p| end_on(s.now, p, p.size(), n)),
    }
}

/// The pending jobs in `queue_order()` with their sizes, leaving out:
/// - jobs asking more nodes than the cluster has in total, or than their
///   placement allows (its partition, less what it excludes): they can never
///   run, and letting them hold the queue would stop it for good;
/// - a second entry with an id already seen (a job starts at most once).
pub fn runnable_queue(s: &Snapshot) -> Vec<(&PendingJob, usize)> {
    let total = s.nodes.len();
    // Each job's size, 0 for one that can never run, read in one sweep in
    // the snapshot's order, where the records lie one after the other: in
    // queue order each was a cache miss (100,000 jobs, several calls a pass).
    let sized: Vec<usize> = s
        .pending
        .iter()
        .map(|p| {
            let size = p.size();
            if may_hold(&p.placement, size, total) {
                size
            } else {
                0
            }
        })
        .collect();
    // Ids are unique in a queue from slurmctld: then no set is needed.
    let mut seen = repeated_ids(&s.pending).then(HashSet::new);
    queue_order(s)
        .into_iter()
        .filter(|&k| seen.as_mut().is_none_or(|seen| seen.insert(s.pending[k].id)))
        .filter(|&k| sized[k] > 0)
        .map(|k| (&s.pending[k], sized[k]))
        .collect()
}

/// Whether an id appears twice among `pending`: a bitmap over the ids'
/// range when it is not much wider than the queue (Slurm's ids are
/// consecutive, mostly), else a sort of the ids.
fn repeated_ids(pending: &[PendingJob]) -> bool {
    let Some(lo) = pending.iter().map(|p| p.id.0).min() else { return false };
    let hi = pending.iter().map(|p| p.id.0).max().unwrap_or(lo);
    let span = (hi - lo) as usize + 1;
    if span <= pending.len().saturating_mul(64).max(1 << 16) {
        let mut bits = vec![0u64; span.div_ceil(64)];
        for p in pending {
            let i = (p.id.0 - lo) as usize;
            let (w, b) = (i / 64, 1u64 << (i % 64));
            if bits[w] & b != 0 {
                return true;
            }
            bits[w] |= b;
        }
        false
    } else {
        let mut ids: Vec<u32> = pending.iter().map(|p| p.id.0).collect();
        ids.sort_unstable();
        ids.windows(2).any(|w| w[0] == w[1])
    }
}

/// `Snapshot::queue_order()`'s order, as indices into `s.pending`, by
/// sorting compact keys rather than comparing jobs through references (at
/// 100,000 jobs most of a pass went there). The entry's index breaks ties,
/// as the stable sort kept them.
fn queue_order(s: &Snapshot) -> Vec<usize> {
    let mut keys: Vec<(u64, Time, u64)> = s
        .pending
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let ahead = (u64::from(!p.tier) << 32) | u64::from(!p.priority);
            (ahead, p.submit, (u64::from(p.id.0) << 32) | k as u64)
        })
        .collect();
    keys.sort_unstable();
    keys.iter().map(|&(_, _, tail)| (tail & u64::from(u32::MAX)) as usize).collect()
}

/// Whether a placement lets a job have `size` of the `total` nodes:
/// `size <= p.allowed_count(total)`, counting no further than `size`.
fn may_hold(p: &malleable_model::Placement, size: usize, total: usize) -> bool {
    match &p.allowed {
        None => size <= total,
        Some(list) => list.iter().filter(|&&i| i < total).take(size).count() == size,
    }
}

/// What starting the queue in order while jobs fit leaves.
pub struct InOrder<'a> {
    pub decisions: Vec<Decision>,
    /// For each job started: when it at most ends, and its nodes.
    pub started: Vec<(Option<Time>, Vec<NodeIndex>)>,
    /// The first job that did not fit (the head job), with its size.
    pub head: Option<(&'a PendingJob, usize)>,
}

/// Start jobs from `queue` in order while they fit, FCFS's rule and the
/// first phase of EASY and of Chadha et al. 2020's Algorithm 1 (lines 4-6).
/// `size_now(job, size, free)` is the count a job starts on with `free`
/// nodes left that it may use: its size for a rigid start; a moldable start
/// may give fewer.
/// Stops at the first job that gets no start (the head job).
pub fn start_in_order<'a>(
    s: &Snapshot,
    queue: &mut impl Iterator<Item = (&'a PendingJob, usize)>,
    pool: &mut FreePool,
    size_now: impl Fn(&PendingJob, usize, usize) -> Option<usize>,
) -> InOrder<'a> {
    let mut out = InOrder { decisions: Vec::new(), started: Vec::new(), head: None };
    for (job, size) in queue.by_ref() {
        match size_now(job, size, pool.available(&job.placement)).and_then(|n| pool.start(job, n).map(|d| (d, n))) {
            Some((d, n)) => {
                if let Decision::Start { nodes, .. } = &d {
                    out.started.push((end_on(s.now, job, size, n), nodes.clone()));
                }
                out.decisions.push(d);
            }
            None => {
                out.head = Some((job, size));
                break;
            }
        }
    }
    out
}

/// A rigid start: the job's own size, whatever is free.
pub fn rigid_size(_: &PendingJob, size: usize, _: usize) -> Option<usize> {
    Some(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, job, limited};

    #[test]
    fn keys_sort_as_the_snapshots_queue_order_and_counts_agree() {
        use malleable_model::Placement;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(35);
        for _ in 0..50 {
            let mut s = cluster(&[true; 40]);
            // Few distinct ids, priorities and times: ties and repeated ids.
            s.pending = (0..rng.gen_range(0..300))
                .map(|_| {
                    let p = job(rng.gen_range(0..60), rng.gen_range(0..3), rng.gen_range(0..5), rng.gen_range(0..50));
                    let p = p.tier(rng.gen_range(0..2));
                    if rng.gen_bool(0.2) {
                        p.placement(Placement::only((0..60).filter(|_| rng.gen_bool(0.4))))
                    } else {
                        p
                    }
                })
                .collect();
            let ptrs = |q: Vec<&PendingJob>| q.into_iter().map(|p| p as *const PendingJob).collect::<Vec<_>>();
            let ordered: Vec<&PendingJob> = queue_order(&s).into_iter().map(|k| &s.pending[k]).collect();
            assert_eq!(ptrs(ordered), ptrs(s.queue_order()));
            let mut seen = HashSet::new();
            let before: Vec<_> = s
                .queue_order()
                .into_iter()
                .filter(|job| seen.insert(job.id))
                .map(|job| (job as *const PendingJob, job.size()))
                .filter(|&(job, size)| size <= allowed_count_at(&s, job))
                .collect();
            let now: Vec<_> = runnable_queue(&s).into_iter().map(|(j, n)| (j as *const PendingJob, n)).collect();
            assert_eq!(now, before);
        }
    }

    /// `allowed_count` of the job at `job` in `s`, found by address.
    fn allowed_count_at(s: &Snapshot, job: *const PendingJob) -> usize {
        let p = s.pending.iter().find(|p| std::ptr::eq(*p, job)).unwrap();
        p.placement.allowed_count(s.nodes.len())
    }

    #[test]
    fn repeated_ids_are_found_over_a_narrow_range_and_a_wide_one() {
        let jobs = |ids: &[u32]| ids.iter().map(|&i| job(i, 0, 0, 1)).collect::<Vec<_>>();
        assert!(!repeated_ids(&[]));
        assert!(!repeated_ids(&jobs(&[5, 6, 7, 70, 9])));
        assert!(repeated_ids(&jobs(&[5, 6, 7, 6, 9])));
        // Ids four billion apart: sorted, not mapped.
        assert!(!repeated_ids(&jobs(&[1, u32::MAX, 3])));
        assert!(repeated_ids(&jobs(&[u32::MAX, 1, u32::MAX])));
    }

    #[test]
    fn a_stretched_limit_rounds_up_and_saturates() {
        let j = limited(job(1, 0, 0, 3), Some(100));
        assert_eq!(end_on(10, &j, 3, 3), Some(110));
        assert_eq!(end_on(10, &j, 3, 2), Some(160));
        assert_eq!(end_on(10, &j, 3, 1), Some(310));
        assert_eq!(end_on(10, &j, 3, 3), end_if_started(10, &j));
        let huge = limited(job(1, 0, 0, 3), Some(i64::MAX));
        assert_eq!(end_on(10, &huge, 3, 1), Some(i64::MAX));
        assert_eq!(end_on(10, &limited(j, None), 3, 1), None);
    }

    #[test]
    fn the_first_job_that_gets_no_start_is_the_head() {
        let mut s = cluster(&[true, true, true]);
        s.pending = vec![job(1, 0, 1, 2), job(2, 0, 2, 2), job(3, 0, 3, 1)];
        let queue = runnable_queue(&s);
        let mut it = queue.into_iter();
        let mut pool = FreePool::new(&s);
        let r = start_in_order(&s, &mut it, &mut pool, rigid_size);
        assert_eq!(r.decisions.len(), 1);
        assert_eq!(r.started, vec![(Some(160), vec![0, 1])]);
        assert_eq!(r.head.map(|(j, n)| (j.id.0, n)), Some((2, 2)));
        assert_eq!(it.next().map(|(j, _)| j.id.0), Some(3), "the jobs behind the head are left");
    }
}
