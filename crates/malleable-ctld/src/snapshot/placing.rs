//! Where a job may run and what it holds, as the snapshot reads it: the
//! nodes' room for its memory and GPUs, its partition's nodes, the
//! placement a strategy may choose from, its cores when cores are placed,
//! and its batch host first among its nodes.

use std::collections::HashSet;
use std::sync::Arc;

use malleable_model::{CoreRequest, Node, NodeIndex, Placement};
use rustc_hash::FxHashMap;
use slurm::ctld::{JobView, Reserved};

/// What running job `job` holds of its nodes comes off their spare cores
/// and GPUs: the CPUs of its allocation on each, and the GPUs it asked for
/// on every node it uses (a job whose GPUs do not read holds them all).
pub(super) fn take_spare(nodes: &mut [Node], job: &JobView, core_index: &[usize]) {
    let gpus = job.gpus_per_node();
    for (i, cpus) in job.cpus_by_node() {
        let Some(node) = core_index.get(i).and_then(|&c| nodes.get_mut(c)) else { continue };
        node.spare_cores = node.spare_cores.saturating_sub(cpus);
        node.spare_gpus = gpus.map_or(0, |g| node.spare_gpus.saturating_sub(g));
    }
}

/// What waiting job `job` asks of a strategy that places cores, on a
/// machine of `total` nodes: its CPUs (`--ntasks` x `--cpus-per-task`),
/// its GPUs per node and its node-count bounds. `None` (whole nodes, as
/// every other strategy gives) for a job that takes its nodes whole
/// (`--exclusive`), lays its tasks out itself (`--cpus-per-task` above 1,
/// `--ntasks-per-node`: select/cons_tres would not split its CPUs as the
/// strategy does), or asks for GPUs otherwise than per node.
pub(super) fn core_request(job: &JobView, total: usize) -> Option<CoreRequest> {
    if job.takes_whole_nodes() || job.lays_out_its_tasks() {
        return None;
    }
    let gpus = job.gpus_per_node()?;
    let most = u32::try_from(total).unwrap_or(u32::MAX);
    let cores = job.min_cpus();
    let min_nodes = job.min_nodes();
    // No more nodes than CPUs: each node used gets one at least.
    let max_nodes = job.max_nodes().unwrap_or(most).min(most).min(cores).max(min_nodes);
    Some(CoreRequest { cores, gpus_per_node: gpus, min_nodes, max_nodes })
}

/// A partition's nodes in the strategies' indices, read once a pass for
/// each partition (`table` gives them in node-table indices).
pub(super) fn partition_cached(
    partitions: &mut FxHashMap<usize, Arc<Vec<usize>>>,
    key: usize,
    table: impl FnOnce() -> Vec<usize>,
    core_index: &[usize],
) -> Arc<Vec<usize>> {
    partitions.entry(key).or_insert_with(|| Arc::new(to_core(&table(), core_index))).clone()
}

/// Node-table indices as the strategies' (`core_index` maps them).
fn to_core(table: &[usize], core_index: &[usize]) -> Vec<usize> {
    table.iter().filter_map(|&i| core_index.get(i).copied()).filter(|&c| c != usize::MAX).collect()
}

/// What each node has for a job, in the strategies' indices: its memory
/// and GPUs, and the least of each over the nodes, so that a job every node
/// can hold (the usual case) costs no walk.
#[derive(Clone, Default)]
pub(crate) struct Room {
    nodes: Vec<(u64, u32)>,
    pub(super) least: Option<(u64, u32)>,
    /// SelectTypeParameters' CR_*_Memory (see `JobView::memory_per_node_mb`).
    pub memory_consumable: bool,
}

impl Room {
    /// No nodes yet; memory consumable or not (SelectTypeParameters).
    pub(super) fn new(memory_consumable: bool) -> Room {
        Room { memory_consumable, ..Room::default() }
    }

    pub(super) fn add(&mut self, memory_mb: u64, gpus: u32) {
        self.nodes.push((memory_mb, gpus));
        let (m, g) = self.least.unwrap_or((memory_mb, gpus));
        self.least = Some((m.min(memory_mb), g.min(gpus)));
    }

    /// The nodes with the memory and GPUs `job` asks for on each node it
    /// uses; `None` when every node has them. A node without them can never
    /// take the job (select_nodes would refuse it there at every pass).
    pub(super) fn holding(&self, job: &JobView) -> Option<HashSet<usize>> {
        let memory = job.memory_per_node_mb(self.memory_consumable).unwrap_or(0);
        self.with(memory, job.gpus_per_node().unwrap_or(0))
    }

    /// The nodes with `memory` MB and `gpus` GPUs at least; `None` when all have.
    pub(super) fn with(&self, memory: u64, gpus: u32) -> Option<HashSet<usize>> {
        let (least_memory, least_gpus) = self.least?;
        if memory <= least_memory && gpus <= least_gpus {
            return None;
        }
        Some((0..self.nodes.len()).filter(|&i| self.nodes[i].0 >= memory && self.nodes[i].1 >= gpus).collect())
    }
}

/// Where `job` may run, in the strategies' node indices (`core_index` maps
/// the node table to the `total` of them): the nodes of its partition
/// (`partition`, strategies' indices) less those it excludes, those
/// reservations keep from it (`reserved`), those without the features
/// its `--constraint` asks (`features`, when it has one) and those without
/// the memory or GPUs it asks on a node (`holding`, strategies' indices,
/// when some lack them), and the nodes it requires. A job
/// free to use every node is `anywhere`, so the usual case stays
/// count-only for the strategies. `None` when reservations keep it from
/// starting now.
pub(super) fn placement_of(
    job: &JobView,
    partition: &[usize],
    reserved: &Reserved,
    features: Option<&[usize]>,
    holding: Option<&HashSet<usize>>,
    core_index: &[usize],
    total: usize,
) -> Option<Placement> {
    let excluded: HashSet<usize> = to_core(&job.excluded_nodes(), core_index).into_iter().collect();
    let featured: Option<HashSet<usize>> = features.map(|f| to_core(f, core_index).into_iter().collect());
    let kept: Option<HashSet<usize>> = match reserved {
        Reserved::NotNow(..) => return None,
        Reserved::Unrestricted => None,
        Reserved::Only(nodes) => Some(to_core(nodes, core_index).into_iter().collect()),
    };
    let required = to_core(&job.required_nodes(), core_index);
    // The usual case, and the one a long queue on a big machine is made
    // of: nothing narrows it, nothing to walk.
    let contiguous = job.contiguous();
    if excluded.is_empty() && featured.is_none() && holding.is_none() && kept.is_none() && partition.len() == total {
        return Some(Placement::anywhere().requiring(required).contiguous_if(contiguous));
    }
    let allowed: Vec<usize> = partition
        .iter()
        .copied()
        .filter(|i| {
            !excluded.contains(i)
                && kept.as_ref().is_none_or(|k| k.contains(i))
                && featured.as_ref().is_none_or(|f| f.contains(i))
                && holding.is_none_or(|h| h.contains(i))
        })
        .collect();
    let placement = if allowed.len() == total { Placement::anywhere() } else { Placement::only(allowed) };
    Some(placement.requiring(required).contiguous_if(contiguous))
}

/// Whether a job of `size` nodes could start under `p` on the free nodes now.
pub(super) fn fits_now(p: &Placement, nodes: &[Node], size: usize) -> bool {
    let free = |i: usize| nodes.get(i).is_some_and(|n| n.free);
    if p.contiguous {
        let open: Vec<usize> = (0..nodes.len()).filter(|&i| free(i) && p.allows(i)).collect();
        return p.room(&open) >= size;
    }
    let allowed_free = match &p.allowed {
        Some(allowed) => allowed.iter().filter(|&&i| free(i)).count(),
        None => nodes.iter().filter(|n| n.free).count(),
    };
    p.required.iter().all(|&i| free(i)) && allowed_free >= size
}

/// The model's rule is that a job's first node is its batch host, which a
/// shrink may never take; slurmctld's node bitmap is in table order, so a
/// job that started on n8 and grew onto n1..n7 would otherwise show n1
/// first, and a shrink would pick n8 (which slurmctld refuses).
pub(super) fn batch_host_first(held: &mut [NodeIndex], batch_host: &str, nodes: &[Node]) {
    if let Some(at) = held.iter().position(|&i| nodes.get(i).is_some_and(|n| *n.name == *batch_host)) {
        held[..=at].rotate_right(1);
    }
}

#[cfg(test)]
mod room_tests {
    use super::*;

    #[test]
    fn only_nodes_with_the_memory_and_gpus_asked_hold_a_job_and_none_is_named_when_all_do() {
        let mut room = Room::default();
        for (memory, gpus) in [(4000, 0), (4000, 2), (1000, 0), (1000, 2)] {
            room.add(memory, gpus);
        }
        assert_eq!(room.with(0, 0), None);
        assert_eq!(room.with(1000, 0), None, "every node has 1000 MB");
        assert_eq!(room.with(3000, 0), Some(HashSet::from([0, 1])));
        assert_eq!(room.with(500, 1), Some(HashSet::from([1, 3])));
        assert_eq!(room.with(3000, 2), Some(HashSet::from([1])));
        assert_eq!(room.with(8000, 0), Some(HashSet::new()), "no node holds it");
        assert_eq!(Room::default().with(1, 1), None, "no nodes, nothing to narrow");
    }
}

#[cfg(test)]
mod batch_host_tests {
    use super::*;

    #[test]
    fn the_batch_host_comes_first_and_the_rest_keep_their_order() {
        let nodes: Vec<Node> =
            (1..=8).map(|i| Node { name: format!("n{i}").into(), free: false, cores: 1, ..Node::default() }).collect();
        let mut held: Vec<NodeIndex> = (0..8).collect();
        batch_host_first(&mut held, "n8", &nodes);
        assert_eq!(held, [7, 0, 1, 2, 3, 4, 5, 6]);
        let mut held: Vec<NodeIndex> = vec![0, 2, 5];
        batch_host_first(&mut held, "n3", &nodes);
        assert_eq!(held, [2, 0, 5]);
        // Unknown or already first: unchanged.
        let mut held: Vec<NodeIndex> = vec![0, 2, 5];
        batch_host_first(&mut held, "", &nodes);
        batch_host_first(&mut held, "n1", &nodes);
        assert_eq!(held, [0, 2, 5]);
    }
}
