//! Where a job may run: the nodes of its partition less those it excludes or
//! others have reserved, and the nodes it names as required. The plugin
//! fills it from slurmctld's records; the simulator's jobs run anywhere.

use crate::ids::NodeIndex;

/// The nodes a job may be given, and those it must be given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The only nodes it may use, ascending; `None`: any node.
    pub allowed: Option<Vec<NodeIndex>>,
    /// Nodes it must get, every one of them (`--nodelist`), ascending.
    pub required: Vec<NodeIndex>,
}

impl Placement {
    /// Any node, none required.
    pub fn anywhere() -> Placement {
        Placement::default()
    }

    /// Only these nodes (sorted and deduplicated here).
    pub fn only(nodes: impl IntoIterator<Item = NodeIndex>) -> Placement {
        Placement { allowed: Some(sorted(nodes)), required: Vec::new() }
    }

    /// These nodes required as well (sorted and deduplicated here).
    pub fn requiring(mut self, nodes: impl IntoIterator<Item = NodeIndex>) -> Placement {
        self.required = sorted(nodes);
        self
    }

    /// Whether nothing restricts it: every strategy's count-only reasoning
    /// holds for such a job.
    pub fn is_anywhere(&self) -> bool {
        self.allowed.is_none() && self.required.is_empty()
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
}
