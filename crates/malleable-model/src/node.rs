//! A node as a scheduling pass sees it.

/// What a strategy needs to know about one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// Up, not drained, and allocated to no job: a job may start on it now.
    pub free: bool,
}

impl Node {
    /// Nodes named `n0`, `n1`, ... in order, free as given: the machines of
    /// the simulator, the benchmarks and the tests, which have no names.
    pub fn numbered(free: impl IntoIterator<Item = bool>) -> Vec<Node> {
        free.into_iter().enumerate().map(|(i, free)| Node { name: format!("n{i}"), free }).collect()
    }
}
