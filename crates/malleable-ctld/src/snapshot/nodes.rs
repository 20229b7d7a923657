//! The node table as every read reads it: each node's state at every read,
//! and what changes only with slurmctld's configuration (its name, CPUs,
//! memory, GPUs) kept between reads, read again at whole reads and in turn.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use malleable_model::Node;
use slurm::ctld::{LockGuard, NodeView, Scheduling};

use super::Room;
use crate::config::Config;

/// What a node's record says that changes only with the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
struct NodeConfig {
    /// Where the record lay when read: another place is another record.
    address: usize,
    /// Shared with each pass's snapshot (a count, not a copy, a node).
    name: Arc<str>,
    cpus: u32,
    memory_mb: u64,
    gpus: u32,
}

impl NodeConfig {
    fn read(n: &NodeView<'_>) -> NodeConfig {
        NodeConfig {
            address: n.record_address(),
            name: n.name().into(),
            cpus: n.cpus(),
            memory_mb: n.memory_mb(),
            gpus: n.gpus(),
        }
    }
}

/// Each node's configuration by table index, and whose turn it is to be
/// read again (an admin's `scontrol update NodeName= Gres=` moves no stamp).
#[derive(Default)]
pub struct NodeConfigs {
    by_index: Vec<Option<NodeConfig>>,
    cursor: usize,
}

/// The node table as one read found it.
pub(crate) struct NodeTable {
    pub nodes: Vec<Node>,
    pub table_index: Vec<usize>,
    pub usable_at: Vec<bool>,
    pub core_index: Vec<usize>,
    /// The largest node's CPUs, for the nodes a job's CPUs need, from this
    /// walk rather than another over the whole table.
    pub largest_cpus: u32,
    /// And, with memory consumable, the largest node's memory, for the
    /// nodes a job's memory per CPU needs.
    pub largest_memory: u64,
    pub room: Room,
}

impl NodeTable {
    /// Every node's state, and its configuration as kept in `configs`
    /// (all read again when `all`, else `recheck` of them in turn). Nodes
    /// in `suspects` are not free; with a strategy that places cores, each
    /// node's GPUs and spare cores (less what running jobs hold, counted as
    /// they are read).
    pub fn read(
        guard: &LockGuard<Scheduling>,
        config: &Config,
        suspects: &HashMap<String, Instant>,
        configs: &mut NodeConfigs,
        all: bool,
        recheck: usize,
    ) -> NodeTable {
        let cores = config.strategy.info.places_cores;
        // Room made once: ten thousand nodes at a big site, whose Vecs would
        // otherwise be copied as they grow, under the locks.
        let table_len = guard.node_table_len();
        let mut t = NodeTable {
            nodes: Vec::with_capacity(table_len),
            table_index: Vec::with_capacity(table_len),
            usable_at: Vec::with_capacity(table_len),
            core_index: vec![usize::MAX; table_len],
            largest_cpus: 1,
            largest_memory: 0,
            room: Room { memory_consumable: slurm::ctld::select::memory_consumable(), ..Room::default() },
        };
        configs.by_index.resize(table_len, None);
        let turn = configs.cursor..configs.cursor.saturating_add(recheck);
        configs.cursor = if turn.end >= table_len { 0 } else { turn.end };
        for n in guard.nodes() {
            let i = n.index();
            let kept = &mut configs.by_index[i];
            let again = all || turn.contains(&i) || kept.as_ref().is_none_or(|c| c.address != n.record_address());
            if again {
                *kept = Some(NodeConfig::read(&n));
            }
            let Some(c) = kept.as_ref() else { continue };
            t.largest_cpus = t.largest_cpus.max(c.cpus);
            t.largest_memory = t.largest_memory.max(c.memory_mb);
            t.room.add(c.memory_mb, c.gpus);
            t.core_index[i] = t.nodes.len();
            t.table_index.push(i);
            t.usable_at.push(n.is_usable());
            // A node an expand just failed on is offered to no one for a while.
            let suspect = !suspects.is_empty() && suspects.contains_key(&*c.name);
            let free = n.is_free() && !suspect;
            let mut node = Node { name: c.name.clone(), free, cores: c.cpus.max(1), ..Node::default() };
            if cores {
                node.gpus = c.gpus;
                // What running jobs leave of it is counted as they are read.
                if n.takes_more() && !suspect {
                    (node.spare_cores, node.spare_gpus) = (node.cores, node.gpus);
                }
            }
            t.nodes.push(node);
        }
        t
    }

    /// What a waiting job's read takes from the node table, as one number:
    /// when it changes, every kept read may be wrong (see `feed::Whole::NodeTable`).
    pub fn shape(&self) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        let memory = (self.largest_memory, self.room.memory_consumable);
        (self.table_index.len(), self.core_index.len(), self.largest_cpus, memory, self.room.least).hash(&mut h);
        h.finish()
    }
}
