//! The node table as every read reads it: each node's state, walked again
//! (in place, in the last walk's table) when slurmctld stamped a change on
//! a node since the last walk, and what changes only with slurmctld's
//! configuration (its name, CPUs, memory, GPUs) kept between reads, read
//! again at whole reads and in turn.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use malleable_model::Node;
use slurm::ctld::{LockGuard, NodeView, Scheduling};

use super::placing::Room;
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
    /// Whether this walk's table is the one a walk now would fill: the same
    /// table, spare cores counted or not as now, and no node kept from the
    /// strategies (the walk would have to mark them).
    fn fits(&self, cores: bool, table_len: usize, suspects: bool) -> bool {
        self.cores == cores && self.table.core_index.len() == table_len && !suspects
    }

    /// Whether its states say what a walk now would: no node change stamped
    /// since, in a second after the stamp (a change later in the stamp's
    /// own second would not move it), and not too old.
    fn stands(&self, stamp: i64, now: i64) -> bool {
        self.stamp == stamp && self.at > stamp && now - self.at < WALK_KEPT_SECS
    }
}

/// What a walk reads of a node's state, beside its configuration.
#[derive(Copy, Clone, PartialEq, Eq)]
struct NodeState {
    free: bool,
    usable: bool,
    /// A job may start on the cores no job holds (counted only with a
    /// strategy that places cores).
    takes_more: bool,
}

impl NodeState {
    /// A node's state as read, none of it kept from the strategies.
    fn read(n: &NodeView<'_>, cores: bool) -> NodeState {
        NodeState { free: n.is_free(), usable: n.is_usable(), takes_more: cores && n.takes_more() }
    }

    /// As a walk left it in `t` at snapshot index `k`.
    fn in_table(t: &NodeTable, k: usize) -> NodeState {
        let node = &t.nodes[k];
        NodeState { free: node.free, usable: t.usable_at[k], takes_more: node.spare_cores > 0 }
    }

    /// Written into `t` at `k`, as a walk writes it: spare cores and GPUs
    /// as the node has, before running jobs' are taken off.
    fn write(self, t: &mut NodeTable, k: usize) {
        t.usable_at[k] = self.usable;
        let node = &mut t.nodes[k];
        node.free = self.free;
        (node.spare_cores, node.spare_gpus) = if self.takes_more { (node.cores, node.gpus) } else { (0, 0) };
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
        let fits = !all && configs.last_walk.as_ref().is_some_and(|w| w.fits(cores, table_len, !suspects.is_empty()));
        if fits && configs.turn_as_kept(guard, recheck, table_len) {
            if configs.last_walk.as_ref().is_some_and(|w| w.stands(stamp, now)) {
                // The spare, else (a second read under the same locks) a copy.
                let spare = configs.spare.take().or_else(|| configs.last_walk.as_ref().map(|w| w.table.clone()));
                if let Some(t) = spare {
                    return NodeTable { walked: false, ..t };
                }
            }
            // A change stamped, or the walk too old: the states walked again
            // into the last walk's table, where they moved. At 10,000 nodes
            // a walk that built the table anew held the locks 1.2 to 3.9 ms,
            // one pass in twenty (bench-scale, fcfs); each node's name
            // counted again was most of it.
            if let Some(t) = configs.walk_states(guard, stamp, now) {
                return t;
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
            room: Room::new(slurm::ctld::select::memory_consumable()),
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
            let k = t.nodes.len();
            t.core_index[i] = k;
            t.table_index.push(i);
            t.usable_at.push(false);
            let gpus = if cores { c.gpus } else { 0 };
            t.nodes.push(Node { name: c.name.clone(), cores: c.cpus.max(1), gpus, ..Node::default() });
            let mut state = NodeState::read(&n, cores);
            // A node an expand just failed on is offered to no one for a while.
            if !suspects.is_empty() && suspects.contains_key(&*c.name) {
                (state.free, state.takes_more) = (false, false);
            }
            state.write(&mut t, k);
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
    /// Walk every node's state into the last walk's table (and its spare
    /// copy), changing only the nodes whose state moved: the table for this
    /// read, and the last walk as of now. `None` when a node is not where
    /// the last walk found it (a record made anew, a node added or gone):
    /// then the table is walked whole.
    fn walk_states(&mut self, guard: &LockGuard<Scheduling>, stamp: i64, now: i64) -> Option<NodeTable> {
        let walk = self.last_walk.as_mut()?;
        let mut spare = self.spare.take();
        let (mut seen, mut all_placed) = (0, true);
        for n in guard.nodes() {
            let i = n.index();
            let k = walk.table.core_index.get(i).copied().unwrap_or(usize::MAX);
            all_placed = k != usize::MAX
                && self.by_index.get(i).is_some_and(|c| c.as_ref().is_some_and(|c| c.address == n.record_address()));
            if !all_placed {
                break;
            }
            seen += 1;
            let state = NodeState::read(&n, walk.cores);
            if state != NodeState::in_table(&walk.table, k) {
                state.write(&mut walk.table, k);
                if let Some(t) = spare.as_mut() {
                    state.write(t, k);
                }
            }
        }
        if !all_placed || seen != walk.table.nodes.len() {
            // Half written: neither stands for anything now.
            self.retired.extend(spare);
            self.retired.extend(self.last_walk.take().map(|w| w.table));
            return None;
        }
        (walk.stamp, walk.at) = (stamp, now);
        // The spare, else (a second read under the same locks) a copy.
        let t = spare.unwrap_or_else(|| walk.table.clone());
        Some(NodeTable { walked: true, ..t })
    }

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
        assert!(w.stands(100, 106));
        assert!(!w.stands(107, 107), "a change stamped since");
        assert!(!w.stands(100, 105 + WALK_KEPT_SECS), "too old: unstamped moves");
    }

    #[test]
    fn a_walk_fits_the_same_table_counted_the_same_way() {
        let w = walk(100, 105, 4);
        assert!(w.fits(false, 4, false));
        assert!(!w.fits(true, 4, false), "spare cores not counted in it");
        assert!(!w.fits(false, 5, false), "a node added");
        assert!(!w.fits(false, 4, true), "a node to keep from the strategies");
    }

    #[test]
    fn a_walk_in_the_second_of_the_last_stamp_does_not_stand() {
        // A change later in second 100 would leave the stamp at 100.
        let w = walk(100, 100, 4);
        assert!(!w.stands(100, 101));
    }

    #[test]
    fn a_state_written_in_place_reads_back_and_resets_the_spare_cores() {
        let mut t = walk(100, 105, 1).table;
        t.nodes.push(Node { name: "n1".into(), cores: 8, gpus: 2, ..Node::default() });
        t.usable_at.push(false);
        t.core_index[0] = 0;
        for state in [
            NodeState { free: true, usable: true, takes_more: true },
            NodeState { free: false, usable: true, takes_more: false },
            NodeState { free: false, usable: false, takes_more: false },
        ] {
            state.write(&mut t, 0);
            assert!(NodeState::in_table(&t, 0) == state);
        }
        // A walk gives a node that takes more all its cores and GPUs, before
        // running jobs' come off: whatever a read took off the last time.
        t.nodes[0].spare_cores = 3;
        NodeState { free: false, usable: true, takes_more: true }.write(&mut t, 0);
        assert_eq!((t.nodes[0].spare_cores, t.nodes[0].spare_gpus), (8, 2));
    }
}
