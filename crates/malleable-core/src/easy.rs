//! EASY backfill (Lifka 1995; Mu'alem & Feitelson 2001) for rigid jobs: FCFS
//! until the head job does not fit, one reservation for that head job, and
//! later jobs start early only where they cannot delay the reservation.

use crate::common::{end_if_started, node_release_times, runnable_queue, FreePool};
use crate::model::{Decision, PendingJob, Snapshot, Time};
use crate::strategy::Strategy;

pub struct Easy;

impl Strategy for Easy {
    fn name(&self) -> &'static str {
        "easy"
    }
    fn schedule(&mut self, s: &Snapshot) -> Vec<Decision> {
        easy(s)
    }
}

/// The head job's reservation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// Earliest time enough nodes are back for the head job, going by time limits.
    pub shadow_time: Time,
    /// Nodes back by the shadow time beyond what the head job needs: a
    /// backfilled job may hold them past the shadow time.
    pub extra_nodes: usize,
}

/// One EASY pass. Jobs larger than the whole cluster are skipped (they can
/// never run). If the head job can never get enough nodes (they are held by
/// unlimited jobs, or down), it gets no reservation and blocks nothing: every
/// later job that fits starts. Nodes go lowest index first, in queue order.
pub fn easy(s: &Snapshot) -> Vec<Decision> {
    let mut pool = FreePool::new(s);
    let mut decisions = Vec::new();
    // Jobs started in this pass hand their nodes back too, which can bring
    // the shadow time forward: (when they at most end, how many nodes).
    let mut started: Vec<(Option<Time>, usize)> = Vec::new();
    let mut queue = runnable_queue(s).into_iter();

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
    let Some(head_size) = head_size else {
        return decisions;
    };

    decisions.extend(backfill_behind_head(s, queue, &mut pool, &started, head_size));
    decisions
}

/// EASY's second phase: with the head job (needing `head_size`) blocked, start
/// the jobs of `queue` (those behind it) that cannot delay its reservation.
/// `started`: the jobs started earlier in this pass (when they end, size).
pub(crate) fn backfill_behind_head<'a>(
    s: &Snapshot,
    queue: impl Iterator<Item = (&'a PendingJob, usize)>,
    pool: &mut FreePool,
    started: &[(Option<Time>, usize)],
    head_size: usize,
) -> Vec<Decision> {
    let mut decisions = Vec::new();
    let mut reservation = reservation(s, pool.len(), started, head_size);
    for (job, size) in queue {
        if size > pool.len() {
            continue;
        }
        let may_start = match reservation.as_mut() {
            None => true,
            Some(r) => {
                let done_by_shadow = end_if_started(s.now, job).is_some_and(|end| end <= r.shadow_time);
                if done_by_shadow {
                    true
                } else if size <= r.extra_nodes {
                    r.extra_nodes -= size;
                    true
                } else {
                    false
                }
            }
        };
        if may_start {
            decisions.extend(pool.start(job, size));
        }
    }
    decisions
}

/// The head job's reservation given `free_now` nodes left free after the jobs
/// started this pass (`started`: when each at most ends, and its size), or
/// `None` if it can never get `need` nodes.
pub fn reservation(
    s: &Snapshot,
    free_now: usize,
    started: &[(Option<Time>, usize)],
    need: usize,
) -> Option<Reservation> {
    if free_now >= need {
        // Not a head job at all (it fits now); answered so the function is total.
        return Some(Reservation { shadow_time: s.now, extra_nodes: free_now - need });
    }
    let mut releases: Vec<(Time, usize)> = node_release_times(s).into_iter().map(|t| (t, 1)).collect();
    releases.extend(started.iter().filter_map(|&(end, n)| end.map(|e| (e, n))));
    releases.sort_unstable();

    let mut available = free_now;
    let mut shadow_time = None;
    for (t, n) in releases {
        // Keep counting nodes back at the shadow time itself: they are extra.
        if shadow_time.is_some_and(|shadow| t > shadow) {
            break;
        }
        available += n;
        if shadow_time.is_none() && available >= need {
            shadow_time = Some(t);
        }
    }
    shadow_time.map(|shadow_time| Reservation { shadow_time, extra_nodes: available - need })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_support::{cluster, job, limited, running, start};

    /// Nodes 0-1 busy until 200 (now is 100), 2-3 free; head job 1 wants all 4,
    /// so its shadow time is 200 with no extra nodes.
    fn head_waits_for_200() -> Snapshot {
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(9, &[0, 1], Some(200))];
        s.pending = vec![job(1, 0, 1, 4)];
        s
    }

    #[test]
    fn backfills_short_job_that_ends_by_shadow_time() {
        let mut s = head_waits_for_200();
        s.pending.push(limited(job(2, 0, 2, 2), Some(100))); // ends at 200
        assert_eq!(easy(&s), vec![start(2, &[2, 3])]);
    }

    #[test]
    fn refuses_long_job_that_would_delay_head() {
        let mut s = head_waits_for_200();
        s.pending.push(limited(job(2, 0, 2, 1), Some(101))); // ends at 201
        s.pending.push(limited(job(3, 0, 3, 1), None));
        assert_eq!(easy(&s), vec![]);
    }

    #[test]
    fn allows_long_job_on_extra_nodes_and_shrinks_them() {
        // 5 nodes, 0-1 back at 200: at 200 all 5 are free, head needs 4, 1 extra.
        let mut s = cluster(&[false, false, true, true, true]);
        s.running = vec![running(9, &[0, 1], Some(200))];
        s.pending = vec![
            job(1, 0, 1, 4),
            limited(job(2, 0, 2, 1), None),       // takes the extra node
            limited(job(3, 0, 3, 1), Some(1000)), // no extra left: refused
            limited(job(4, 0, 4, 1), Some(50)),   // ends at 150: fine
        ];
        assert_eq!(reservation(&s, 3, &[], 4), Some(Reservation { shadow_time: 200, extra_nodes: 1 }));
        assert_eq!(easy(&s), vec![start(2, &[2]), start(4, &[3])]);
    }

    #[test]
    fn unlimited_running_job_never_gives_nodes_back() {
        // Node 0-1 held forever, node 2 back at 200, node 3 free.
        let mut s = cluster(&[false, false, false, true]);
        s.running = vec![running(8, &[0, 1], None), running(9, &[2], Some(200))];
        // Head wants 2: shadow 200 (free node 3 + node 2), nothing extra.
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), None), limited(job(3, 0, 3, 1), Some(100))];
        assert_eq!(easy(&s), vec![start(3, &[3])]);
        // Head wants 3: it never gets them, so it blocks nothing.
        s.pending[0].nodes = 3;
        assert_eq!(reservation(&s, 1, &[], 3), None);
        assert_eq!(easy(&s), vec![start(2, &[3])]);
    }

    #[test]
    fn jobs_started_this_pass_bring_shadow_time_forward() {
        let mut s = cluster(&[true, true, true]);
        s.pending = vec![
            limited(job(1, 0, 1, 2), Some(50)), // starts, back at 150
            job(2, 0, 2, 3),                    // head: shadow 150, no extra
            limited(job(3, 0, 3, 1), Some(51)), // ends at 151: refused
            limited(job(4, 0, 4, 1), Some(50)), // ends at 150: fine
        ];
        assert_eq!(easy(&s), vec![start(1, &[0, 1]), start(4, &[2])]);
    }

    #[test]
    fn nodes_back_at_the_shadow_time_itself_count_as_extra() {
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(8, &[0], Some(200)), running(9, &[1], Some(200))];
        s.pending = vec![job(1, 0, 1, 3), limited(job(2, 0, 2, 1), None)];
        assert_eq!(reservation(&s, 2, &[], 3), Some(Reservation { shadow_time: 200, extra_nodes: 1 }));
        assert_eq!(easy(&s), vec![start(2, &[2])]);
    }

    #[test]
    fn inconsistent_running_jobs_do_not_panic() {
        // Node 0 is free though job 8 lists it (free wins); node 1 is held by 8
        // and 9, so back at 300; node 2 is busy with no job (drained); 7 does
        // not exist.
        let mut s = cluster(&[true, false, false]);
        s.running = vec![running(8, &[0, 1, 7, 1], Some(150)), running(9, &[1], Some(300))];
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), Some(200))];
        assert_eq!(reservation(&s, 1, &[], 2), Some(Reservation { shadow_time: 300, extra_nodes: 0 }));
        assert_eq!(easy(&s), vec![start(2, &[0])]);
    }

    #[test]
    fn node_shared_with_an_unlimited_job_never_comes_back() {
        let mut s = cluster(&[false, false]);
        s.running = vec![running(8, &[0], None), running(9, &[0, 1], Some(200))];
        assert_eq!(reservation(&s, 0, &[], 1), Some(Reservation { shadow_time: 200, extra_nodes: 0 }));
        assert_eq!(reservation(&s, 0, &[], 2), None);
        let fits_now = Reservation { shadow_time: 100, extra_nodes: 1 };
        assert_eq!(reservation(&s, 2, &[], 1), Some(fits_now));
    }

    #[test]
    fn skips_jobs_larger_than_the_cluster_and_sizes_zero_as_one() {
        let mut s = cluster(&[true, false]);
        s.running = vec![running(9, &[1], Some(200))];
        s.pending = vec![job(1, 0, 1, 3), job(2, 0, 2, 0)];
        assert_eq!(easy(&s), vec![start(2, &[0])]);
        assert_eq!(easy(&Snapshot::default()), vec![]);
    }
}
