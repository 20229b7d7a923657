//! A node as a scheduling pass sees it.

use std::sync::Arc;

/// What a strategy needs to know about one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// Shared, not copied: a read of 10,000 nodes under slurmctld's locks
    /// at every pass took a copy of each name (most of that read's time).
    pub name: Arc<str>,
    /// Up, not drained, and allocated to no job: a job may start on it now.
    pub free: bool,
    /// Its cores (Slurm's CPUs): what a job started on part of it, or
    /// sharing it, is counted in. 1 where only whole nodes are known.
    pub cores: u32,
    /// Its GPUs (Slurm's `gpu` GRES).
    pub gpus: u32,
    /// Of a node that is not free, the cores no job holds (jobs placed on
    /// part of it hold the rest); 0 on a node held whole, or down. Unused on
    /// a free node, all of which is available.
    pub spare_cores: u32,
    /// The same for its GPUs.
    pub spare_gpus: u32,
}

impl Node {
    /// Nodes named `n0`, `n1`, ... in order, free as given: the machines of
    /// the simulator, the benchmarks and the tests, which have no names.
    pub fn numbered(free: impl IntoIterator<Item = bool>) -> Vec<Node> {
        Node::numbered_with_cores(free, 1)
    }

    /// The same, each node with `cores` cores.
    pub fn numbered_with_cores(free: impl IntoIterator<Item = bool>, cores: u32) -> Vec<Node> {
        Node::numbered_with(free, cores, 0)
    }

    /// The same, each node with `cores` cores and `gpus` GPUs.
    pub fn numbered_with(free: impl IntoIterator<Item = bool>, cores: u32, gpus: u32) -> Vec<Node> {
        free.into_iter()
            .enumerate()
            .map(|(i, free)| Node { name: format!("n{i}").into(), free, cores, gpus, ..Node::default() })
            .collect()
    }

    /// The cores a job placed on part of nodes may have here now.
    pub fn cores_available(&self) -> u32 {
        if self.free {
            self.cores
        } else {
            self.spare_cores.min(self.cores)
        }
    }

    /// The GPUs a job placed on part of nodes may have here now.
    pub fn gpus_available(&self) -> u32 {
        if self.free {
            self.gpus
        } else {
            self.spare_gpus.min(self.gpus)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_node_offers_all_a_held_one_its_spare_part() {
        let mut n = Node::numbered_with([true], 8, 2).remove(0);
        assert_eq!((n.cores_available(), n.gpus_available()), (8, 2));
        n.free = false;
        assert_eq!((n.cores_available(), n.gpus_available()), (0, 0), "held whole");
        n.spare_cores = 3;
        n.spare_gpus = 1;
        assert_eq!((n.cores_available(), n.gpus_available()), (3, 1));
        n.spare_cores = 12;
        assert_eq!(n.cores_available(), 8, "never more than it has");
    }
}
