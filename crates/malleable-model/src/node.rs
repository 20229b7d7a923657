//! A node as a scheduling pass sees it.

/// What a strategy needs to know about one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// Up, not drained, and allocated to no job: a job may start on it now.
    pub free: bool,
    /// Its cores (Slurm's CPUs): what a job started on part of it, or
    /// sharing it, is counted in. 1 where only whole nodes are known.
    pub cores: u32,
}

impl Node {
    /// Nodes named `n0`, `n1`, ... in order, free as given: the machines of
    /// the simulator, the benchmarks and the tests, which have no names.
    pub fn numbered(free: impl IntoIterator<Item = bool>) -> Vec<Node> {
        Node::numbered_with_cores(free, 1)
    }

    /// The same, each node with `cores` cores.
    pub fn numbered_with_cores(free: impl IntoIterator<Item = bool>, cores: u32) -> Vec<Node> {
        free.into_iter().enumerate().map(|(i, free)| Node { name: format!("n{i}"), free, cores }).collect()
    }
}
