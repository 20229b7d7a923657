//! The node table as every read reads it: each node's state, walked again
//! when slurmctld stamped a change on a node since the last walk, and what
//! changes only with slurmctld's configuration (its name, CPUs, memory,
//! GPUs) kept between reads, read again at whole reads and in turn.

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
    /// Whether `n` says what this says, read where it lies: a turn of
    /// hundreds of nodes a pass, under the locks, copies nothing.
    fn is_of(&self, n: &NodeView<'_>) -> bool {
        self.address == n.record_address()
            && self.cpus == n.cpus()
            && self.memory_mb == n.memory_mb()
            && self.gpus == n.gpus()
            && n.name_is(&self.name)
    }

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

/// Each node's configuration by table index, whose turn it is to be read
/// again (an admin's `scontrol update NodeName= Gres=` moves no stamp), and
/// the last walk's table.
#[derive(Default)]
pub struct NodeConfigs {
    by_index: Vec<Option<NodeConfig>>,
    cursor: usize,
    last_walk: Option<LastWalk>,
    /// A copy of the last walk's table, made away from the locks
    /// ([`NodeConfigs::tidy`]) for the next read it stands for: a copy
    /// counts a reference to each node's name, as a drop uncounts it, one
    /// scattered cache line a node (at 5,000 nodes as long as the walk).
    spare: Option<NodeTable>,
    /// Tables let go under the locks, dropped away from them.
    retired: Vec<NodeTable>,
}

/// A walk of the node table, kept for the reads after it while slurmctld
/// stamps no change on a node: at 5,000 nodes the walk was about a third
/// of what a read of a few changed jobs held the locks for (bench-scale:
/// 1.4 ms median walked, 1.0 ms with the walk kept).
struct LastWalk {
    /// slurmctld's node stamp when walked, and the second of the walk.
    stamp: i64,
    at: i64,
    /// Whether it counted spare cores (the strategy places cores).
    cores: bool,
    table: NodeTable,
}

/// How long a walk is kept at most. slurmctld does not stamp every move:
/// power saving's (a node powered down or up) are not, and a node that
/// became free unseen would wait this long at most to be offered.
pub const WALK_KEPT_SECS: i64 = 10;

impl LastWalk {
    /// Whether this walk says what a walk now would: no node change stamped
    /// since, in a second after the stamp (a change later in the stamp's
    /// own second would not move it), not too old, the same table, and no
    /// node kept from the strategies (the walk would have to mark them).
    fn stands(&self, stamp: i64, now: i64, cores: bool, table_len: usize, suspects: bool) -> bool {
        self.stamp == stamp
            && self.at > stamp
            && now - self.at < WALK_KEPT_SECS
            && self.cores == cores
            && self.table.core_index.len() == table_len
            && !suspects
    }
}

/// The node table as one read found it.
#[derive(Clone)]
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
    /// Walked for this read (else the last walk's, as it stood).
    pub walked: bool,
}

impl NodeTable {
    /// Every node's state, and its configuration as kept in `configs`
    /// (all read again when `all`, else `recheck` of them in turn). Nodes
    /// in `suspects` are not free; with a strategy that places cores, each
    /// node's GPUs and spare cores (less what running jobs hold, counted as
    /// they are read). The last walk stands in for this one while
    /// slurmctld's node stamp (`stamp`, read under these locks) has not
    /// moved and the nodes read in turn are as kept.
    pub fn read(
        guard: &LockGuard<Scheduling>,
        config: &Config,
        suspects: &HashMap<String, Instant>,
        configs: &mut NodeConfigs,
        (all, recheck): (bool, usize),
        (stamp, now): (i64, i64),
    ) -> NodeTable {
        let cores = config.strategy.info.places_cores;
        let table_len = guard.node_table_len();
        let stands = !all
            && configs.last_walk.as_ref().is_some_and(|w| w.stands(stamp, now, cores, table_len, !suspects.is_empty()));
        if stands && configs.turn_as_kept(guard, recheck, table_len) {
            // The spare, else (a second read under the same locks) a copy.
            let spare = configs.spare.take().or_else(|| configs.last_walk.as_ref().map(|w| w.table.clone()));
            if let Some(t) = spare {
                return NodeTable { walked: false, ..t };
            }
        }
        let t = NodeTable::walk(guard, cores, suspects, configs, all, recheck);
        configs.retired.extend(configs.spare.take());
        configs.retired.extend(configs.last_walk.take().map(|w| w.table));
        if suspects.is_empty() {
            configs.last_walk = Some(LastWalk { stamp, at: now, cores, table: t.clone() });
        }
        t
    }

    /// Walk the node table (see [`NodeTable::read`]).
    fn walk(
        guard: &LockGuard<Scheduling>,
        cores: bool,
        suspects: &HashMap<String, Instant>,
        configs: &mut NodeConfigs,
        all: bool,
        recheck: usize,
    ) -> NodeTable {
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
            walked: true,
        };
        configs.by_index.resize(table_len, None);
        let turn = configs.next_turn(recheck, table_len);
        for n in guard.nodes() {
            let i = n.index();
            let kept = &mut configs.by_index[i];
            let again = all || turn.contains(&i) || kept.as_ref().is_none_or(|c| c.address != n.record_address());
            // Copied (its name, its Gres parsed) only where it moved.
            if again && kept.as_ref().is_none_or(|c| !c.is_of(&n)) {
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

impl NodeConfigs {
    /// Away from the locks, after a read: drop what the read let go, and
    /// copy the last walk for the next read it may stand for.
    pub fn tidy(&mut self) {
        self.retired.clear();
        if self.spare.is_none() {
            self.spare = self.last_walk.as_ref().map(|w| w.table.clone());
        }
    }

    /// The table indices whose configuration this read reads again in
    /// turn, `recheck` of them from where the last turn ended, wrapping.
    fn next_turn(&mut self, recheck: usize, table_len: usize) -> std::ops::Range<usize> {
        let turn = self.cursor..self.cursor.saturating_add(recheck).min(table_len);
        self.cursor = if turn.end >= table_len { 0 } else { turn.end };
        turn
    }

    /// Read this read's turn of node configurations (as a walk would) and
    /// say whether every one is as kept: one that moved (an admin's
    /// `scontrol update NodeName= Gres=`, which stamps nothing) asks for a walk.
    fn turn_as_kept(&mut self, guard: &LockGuard<Scheduling>, recheck: usize, table_len: usize) -> bool {
        let mut same = true;
        for i in self.next_turn(recheck, table_len) {
            let node = guard.node(i);
            let kept = &mut self.by_index[i];
            let moved = match (&*kept, &node) {
                (Some(c), Some(n)) => !c.is_of(n),
                (None, None) => false,
                _ => true,
            };
            if moved {
                *kept = node.map(|n| NodeConfig::read(&n));
                same = false;
            }
        }
        same
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(stamp: i64, at: i64, table_len: usize) -> LastWalk {
        let table = NodeTable {
            nodes: Vec::new(),
            table_index: Vec::new(),
            usable_at: Vec::new(),
            core_index: vec![usize::MAX; table_len],
            largest_cpus: 1,
            largest_memory: 0,
            room: Room::default(),
            walked: true,
        };
        LastWalk { stamp, at, cores: false, table }
    }

    #[test]
    fn a_walk_stands_while_no_node_change_is_stamped_after_its_second() {
        let w = walk(100, 105, 4);
        assert!(w.stands(100, 106, false, 4, false));
        assert!(!w.stands(107, 107, false, 4, false), "a change stamped since");
        assert!(!w.stands(100, 105 + WALK_KEPT_SECS, false, 4, false), "too old: unstamped moves");
        assert!(!w.stands(100, 106, true, 4, false), "spare cores not counted in it");
        assert!(!w.stands(100, 106, false, 5, false), "a node added");
        assert!(!w.stands(100, 106, false, 4, true), "a node to keep from the strategies");
    }

    #[test]
    fn a_walk_in_the_second_of_the_last_stamp_does_not_stand() {
        // A change later in second 100 would leave the stamp at 100.
        let w = walk(100, 100, 4);
        assert!(!w.stands(100, 101, false, 4, false));
    }
}
