//! When busy nodes come back, going by time limits, and the head job's
//! reservation built from that: EASY's shadow time and extra nodes
//! (Lifka 1995; Mu'alem and Feitelson 2001).

use malleable_model::{NodeIndex, Placement, Snapshot, Time};

use crate::blocks::node_plan::NodePlan;
use crate::blocks::returns::node_backs;

/// When each busy node comes back, for the nodes that do (unsorted). The
/// `free` flag is the truth about now: a running job listing a free node does
/// not hold it. A busy node held by several jobs comes back when the last one
/// ends; one held by an unlimited job, or by no job (down, drained), never.
pub fn node_release_times(s: &Snapshot) -> Vec<Time> {
    release_times(&node_backs(s), &Placement::anywhere())
}

/// The release times in `backs` ([`node_backs`]) of the nodes a job placed
/// `p` may use.
fn release_times(backs: &[Option<Option<Time>>], p: &Placement) -> Vec<Time> {
    backs.iter().enumerate().filter(|&(i, _)| p.allows(i)).filter_map(|(_, b)| b.flatten()).collect()
}

/// When every node `head` requires is back (`Time::MIN` when all are free
/// and not started on in this pass, or it requires none); `None` if one
/// never is.
fn required_back(
    s: &Snapshot,
    backs: &[Option<Option<Time>>],
    started: &[(Option<Time>, Vec<NodeIndex>)],
    head: &Placement,
) -> Option<Time> {
    let mut last = Time::MIN;
    for &r in &head.required {
        let at = match started.iter().find(|(_, nodes)| nodes.contains(&r)) {
            Some((end, _)) => *end,
            None if s.nodes.get(r).is_some_and(|n| n.free) => Some(Time::MIN),
            None => backs.get(r).copied().flatten().flatten(),
        };
        last = last.max(at?);
    }
    Some(last)
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

/// The head job's reservation given `free_now` nodes it may use left free
/// after the jobs started this pass (`started`: when each at most ends, and
/// its nodes), or `None` if it can never get `need` nodes. Only nodes the
/// head may use (`head`) count, and the shadow time is no earlier than the
/// moment the last node it requires is back.
pub fn reservation(
    s: &Snapshot,
    free_now: usize,
    started: &[(Option<Time>, Vec<NodeIndex>)],
    head: &Placement,
    need: usize,
) -> Option<Reservation> {
    if head.contiguous {
        return contiguous_reservation(s, started, head, need);
    }
    let backs = node_backs(s);
    let required = required_back(s, &backs, started, head)?;
    if free_now >= need && required == Time::MIN {
        // Not a head job at all (it fits now); answered so the function is total.
        return Some(Reservation { shadow_time: s.now, extra_nodes: free_now - need });
    }
    let mut releases: Vec<(Time, usize)> = release_times(&backs, head).into_iter().map(|t| (t, 1)).collect();
    let theirs = |nodes: &[NodeIndex]| nodes.iter().filter(|&&i| head.allows(i)).count();
    releases.extend(started.iter().filter_map(|(end, nodes)| end.map(|e| (e, theirs(nodes)))));
    releases.sort_unstable();

    let mut available = free_now;
    let mut shadow_time = (available >= need).then_some(required);
    for (t, n) in releases {
        // Keep counting nodes back at the shadow time itself: they are extra.
        if shadow_time.is_some_and(|shadow| t > shadow) {
            break;
        }
        available += n;
        if shadow_time.is_none() && available >= need {
            shadow_time = Some(t.max(required));
        }
    }
    shadow_time.map(|shadow_time| Reservation { shadow_time, extra_nodes: available - need })
}

/// A contiguous head's reservation: when `need` of its nodes are back in a
/// row, by node ([`NodePlan`]). Counting cannot say which nodes come back
/// next to which, so no node is extra: a job backfilled past that time
/// could hold one of the row.
fn contiguous_reservation(
    s: &Snapshot,
    started: &[(Option<Time>, Vec<NodeIndex>)],
    head: &Placement,
    need: usize,
) -> Option<Reservation> {
    let mut plan = NodePlan::new(s, s.free_nodes());
    for (end, nodes) in started {
        plan.book(s.now, end.map(|e| e.saturating_sub(s.now).max(0)), nodes);
    }
    let (shadow_time, _) = plan.earliest(s.now, need, None, head)?;
    Some(Reservation { shadow_time, extra_nodes: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, running};

    const ANY: Placement = Placement { allowed: None, required: Vec::new(), contiguous: false };

    #[test]
    fn node_shared_with_an_unlimited_job_never_comes_back() {
        let mut s = cluster(&[false, false]);
        s.running = vec![running(8, &[0], None), running(9, &[0, 1], Some(200))];
        assert_eq!(reservation(&s, 0, &[], &ANY, 1), Some(Reservation { shadow_time: 200, extra_nodes: 0 }));
        assert_eq!(reservation(&s, 0, &[], &ANY, 2), None);
        assert_eq!(reservation(&s, 2, &[], &ANY, 1), Some(Reservation { shadow_time: 100, extra_nodes: 1 }));
    }

    #[test]
    fn jobs_started_this_pass_bring_the_shadow_time_forward() {
        let mut s = cluster(&[false, true]);
        s.running = vec![running(8, &[0], Some(500))];
        assert_eq!(
            reservation(&s, 0, &[(Some(150), vec![1])], &ANY, 2),
            Some(Reservation { shadow_time: 500, extra_nodes: 0 })
        );
        assert_eq!(
            reservation(&s, 0, &[(Some(150), vec![1, 2])], &ANY, 2),
            Some(Reservation { shadow_time: 150, extra_nodes: 0 })
        );
    }

    #[test]
    fn only_the_nodes_the_head_may_use_count() {
        // Nodes 0 and 1 back at 100, 2 and 3 at 300; the head may use 1 to 3.
        let mut s = cluster(&[false; 4]);
        s.running = vec![running(8, &[0, 1], Some(100)), running(9, &[2, 3], Some(300))];
        let head = Placement::only([1, 2, 3]);
        assert_eq!(reservation(&s, 0, &[], &head, 2), Some(Reservation { shadow_time: 300, extra_nodes: 1 }));
        assert_eq!(reservation(&s, 0, &[], &ANY, 2), Some(Reservation { shadow_time: 100, extra_nodes: 0 }));
        // A job started this pass on nodes it may not use brings nothing forward.
        assert_eq!(
            reservation(&s, 0, &[(Some(50), vec![0])], &head, 1),
            Some(Reservation { shadow_time: 100, extra_nodes: 0 })
        );
        assert_eq!(reservation(&s, 0, &[], &Placement::only([0]), 2), None);
    }

    #[test]
    fn a_contiguous_head_waits_for_a_row_and_leaves_no_extra_nodes() {
        // Nodes 0 and 2 free; 1 back at 300, 3 at 200.
        let mut s = cluster(&[true, false, true, false]);
        s.running = vec![running(8, &[1], Some(300)), running(9, &[3], Some(200))];
        let row = Placement::anywhere().contiguous_if(true);
        assert_eq!(reservation(&s, 2, &[], &row, 2), Some(Reservation { shadow_time: 200, extra_nodes: 0 }));
        // Node 2 started on this pass until 400: the row is 0-1, at 300.
        assert_eq!(
            reservation(&s, 1, &[(Some(400), vec![2])], &row, 2),
            Some(Reservation { shadow_time: 300, extra_nodes: 0 })
        );
        assert_eq!(reservation(&s, 2, &[], &row, 5), None);
    }
}
