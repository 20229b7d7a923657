//! When busy nodes come back, going by time limits, and the head job's
//! reservation built from that: EASY's shadow time and extra nodes
//! (Lifka 1995; Mu'alem and Feitelson 2001).

use malleable_model::{Snapshot, Time};

/// When each busy node comes back, for the nodes that do (unsorted). The
/// `free` flag is the truth about now: a running job listing a free node does
/// not hold it. A busy node held by several jobs comes back when the last one
/// ends; one held by an unlimited job, or by no job (down, drained), never.
pub fn node_release_times(s: &Snapshot) -> Vec<Time> {
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

/// The head job's reservation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// Earliest time enough nodes are back for the head job, going by time limits.
    pub shadow_time: Time,
    /// Nodes back by the shadow time beyond what the head job needs: a
    /// backfilled job may hold them past the shadow time.
    pub extra_nodes: usize,
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
    use crate::test_support::{cluster, running};

    #[test]
    fn node_shared_with_an_unlimited_job_never_comes_back() {
        let mut s = cluster(&[false, false]);
        s.running = vec![running(8, &[0], None), running(9, &[0, 1], Some(200))];
        assert_eq!(reservation(&s, 0, &[], 1), Some(Reservation { shadow_time: 200, extra_nodes: 0 }));
        assert_eq!(reservation(&s, 0, &[], 2), None);
        assert_eq!(reservation(&s, 2, &[], 1), Some(Reservation { shadow_time: 100, extra_nodes: 1 }));
    }

    #[test]
    fn jobs_started_this_pass_bring_the_shadow_time_forward() {
        let mut s = cluster(&[false, true]);
        s.running = vec![running(8, &[0], Some(500))];
        assert_eq!(reservation(&s, 0, &[(Some(150), 1)], 2), Some(Reservation { shadow_time: 500, extra_nodes: 0 }));
        assert_eq!(reservation(&s, 0, &[(Some(150), 2)], 2), Some(Reservation { shadow_time: 150, extra_nodes: 0 }));
    }
}
