//! Where a job may run: the nodes of its partition less those it excludes or
//! others have reserved, the nodes it names as required, and whether they
//! must be consecutive (`--contiguous`). The plugin fills it from
//! slurmctld's records; the simulator's jobs run anywhere.

use crate::ids::NodeIndex;

/// The nodes a job may be given, and those it must be given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The only nodes it may use, ascending; `None`: any node.
    pub allowed: Option<Vec<NodeIndex>>,
    /// Nodes it must get, every one of them (`--nodelist`), ascending.
    pub required: Vec<NodeIndex>,
    /// Its nodes must be consecutive in the node table (`--contiguous`), as
    /// Slurm's node selection reads it.
    pub contiguous: bool,
}

impl Placement {
    /// Any node, none required.
    pub fn anywhere() -> Placement {
        Placement::default()
    }

    /// Only these nodes (sorted and deduplicated here).
    pub fn only(nodes: impl IntoIterator<Item = NodeIndex>) -> Placement {
        Placement { allowed: Some(sorted(nodes)), ..Placement::default() }
    }

    /// These nodes required as well (sorted and deduplicated here).
    pub fn requiring(mut self, nodes: impl IntoIterator<Item = NodeIndex>) -> Placement {
        self.required = sorted(nodes);
        self
    }

    /// Its nodes consecutive (`--contiguous`) if `yes`.
    pub fn contiguous_if(mut self, yes: bool) -> Placement {
        self.contiguous = yes;
        self
    }

    /// Whether nothing restricts it: every strategy's count-only reasoning
    /// holds for such a job.
    pub fn is_anywhere(&self) -> bool {
        self.allowed.is_none() && self.required.is_empty() && !self.contiguous
    }

    /// Whether it may use node `i`.
    pub fn allows(&self, i: NodeIndex) -> bool {
        self.allowed.as_ref().is_none_or(|a| a.binary_search(&i).is_ok())
    }

    /// Whether node `i` is one it must get.
    pub fn requires(&self, i: NodeIndex) -> bool {
        self.required.binary_search(&i).is_ok()
    }

    /// How many of `n` nodes (the table's size) it may use.
    pub fn allowed_count(&self, n: usize) -> usize {
        self.allowed.as_ref().map_or(n, |a| a.iter().filter(|&&i| i < n).count())
    }

    /// For a contiguous job: the lowest `size` consecutive nodes, all in
    /// `open` (ascending: the nodes it could be given), that hold every node
    /// it requires; `None` if there are none.
    pub fn window(&self, open: &[NodeIndex], size: usize) -> Option<Vec<NodeIndex>> {
        let span = self.required_span();
        if size == 0 || span.is_some_and(|(lo, hi)| hi - lo + 1 > size) {
            return None;
        }
        runs(open).find_map(|(a, b)| {
            let start = match span {
                Some((lo, hi)) if a <= lo && hi <= b => a.max((hi + 1).saturating_sub(size)),
                Some(_) => return None,
                None => a,
            };
            (start + size - 1 <= b).then(|| (start..start + size).collect())
        })
    }

    /// For a contiguous job: the most consecutive nodes of `open`
    /// (ascending) it could be given, holding every node it requires.
    pub fn room(&self, open: &[NodeIndex]) -> usize {
        let span = self.required_span();
        runs(open)
            .filter(|&(a, b)| span.is_none_or(|(lo, hi)| a <= lo && hi <= b))
            .map(|(a, b)| b - a + 1)
            .max()
            .unwrap_or(0)
    }

    /// The lowest and highest node it requires.
    fn required_span(&self) -> Option<(NodeIndex, NodeIndex)> {
        Some((*self.required.first()?, *self.required.last()?))
    }
}

/// The runs of consecutive nodes in `open` (ascending), as first and last.
fn runs(open: &[NodeIndex]) -> impl Iterator<Item = (NodeIndex, NodeIndex)> + '_ {
    let mut k = 0;
    std::iter::from_fn(move || {
        let first = *open.get(k)?;
        let mut last = first;
        k += 1;
        while open.get(k) == Some(&(last + 1)) {
            last += 1;
            k += 1;
        }
        Some((first, last))
    })
}

fn sorted(nodes: impl IntoIterator<Item = NodeIndex>) -> Vec<NodeIndex> {
    let mut v: Vec<NodeIndex> = nodes.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anywhere_allows_every_node_and_requires_none() {
        let p = Placement::anywhere();
        assert!(p.is_anywhere() && p.allows(0) && p.allows(999) && !p.requires(0));
        assert_eq!(p.allowed_count(7), 7);
    }

    #[test]
    fn only_and_requiring_read_their_nodes_in_any_order() {
        let p = Placement::only([5, 2, 2, 9]).requiring([5]);
        assert_eq!(p.allowed, Some(vec![2, 5, 9]));
        assert!(!p.is_anywhere() && p.allows(2) && !p.allows(3) && p.requires(5) && !p.requires(2));
        // Nodes past the table do not count.
        assert_eq!(p.allowed_count(6), 2);
        assert!(!Placement::anywhere().requiring([1]).is_anywhere());
    }

    #[test]
    fn a_contiguous_job_gets_the_lowest_run_long_enough_around_its_required_nodes() {
        let open = [0, 1, 3, 4, 5, 6, 9, 10];
        let p = Placement::anywhere().contiguous_if(true);
        assert!(!p.is_anywhere());
        assert_eq!(p.window(&open, 2), Some(vec![0, 1]));
        assert_eq!(p.window(&open, 3), Some(vec![3, 4, 5]), "0-1 is too short");
        assert_eq!(p.window(&open, 5), None, "eight open, but at most four in a row");
        assert_eq!(p.room(&open), 4);
        // Required 5 and 6: the window must hold both, as low as it can.
        let p = p.requiring([6, 5]);
        assert_eq!(p.window(&open, 3), Some(vec![4, 5, 6]));
        assert_eq!(p.window(&open, 4), Some(vec![3, 4, 5, 6]));
        assert_eq!(p.window(&open, 1), None, "two required");
        assert_eq!(p.room(&open), 4);
        // Required nodes in different runs: never.
        let p = Placement::anywhere().contiguous_if(true).requiring([1, 3]);
        assert_eq!((p.window(&open, 4), p.room(&open)), (None, 0));
        assert_eq!(Placement::anywhere().contiguous_if(true).room(&[]), 0);
    }
}
