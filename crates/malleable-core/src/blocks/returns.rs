//! When each busy node comes back, going by the time limits of the jobs
//! holding it: what EASY's reservation and conservative's node plan are
//! both built on.

use malleable_model::{NodeIndex, Snapshot, Time};

/// Each busy node that comes back, and when (unsorted): as
/// [`node_release_times`](crate::blocks::reservation::node_release_times), by node.
pub fn node_returns(s: &Snapshot) -> Vec<(NodeIndex, Time)> {
    node_backs(s).iter().enumerate().filter_map(|(i, b)| b.flatten().map(|t| (i, t))).collect()
}

/// For each node that is busy: when it comes back (`Some(None)`: never, an
/// unlimited job holds it); `None` for a free node and for a busy one no
/// job holds (never back either).
pub(crate) fn node_backs(s: &Snapshot) -> Vec<Option<Option<Time>>> {
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
    back
}
