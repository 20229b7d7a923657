//! How a job's cores go onto the nodes it is placed on, as select/cons_tres
//! lays them out when a job asking for CPUs is pinned to exactly those
//! nodes (Slurm 22.05 has no request left that names the CPUs of each
//! node). A strategy that places jobs on part of nodes (IPSCHED) decides
//! the nodes and the cores in all; the cores per node follow this rule in
//! the simulator as in slurmctld, so both see the same spare cores after.

use crate::NodeIndex;

/// `cores` over `nodes` (each with the cores it has available, in
/// node-table order, all of the same scheduling weight) as cons_tres's
/// `_eval_nodes` (plugins/select/cons_tres/job_test.c, 22.05) takes them:
/// the nodes fall into runs of neighbours in the table; a run is chosen
/// the way it picks one (among those with enough cores and nodes for what
/// is left, the one with the fewest cores; while none has, the one with the
/// most, and then a bigger one that lacks nodes still wins); in a run, each
/// node in order gives what it has, less one core for each node still to
/// come (`_cpus_to_use`); a run that is to give one node only gives its
/// smallest node that holds what is left. Its task layout then keeps these
/// counts (they add up to the job's CPUs). `None` when the nodes do not hold
/// `cores`, or there are more nodes than cores (a node would get none).
pub fn cons_tres(cores: u32, nodes: &[(NodeIndex, u32)]) -> Option<Vec<(NodeIndex, u32)>> {
    let room: u64 = nodes.iter().map(|&(_, a)| u64::from(a)).sum();
    let count = nodes.len();
    if count == 0 || count as u64 > u64::from(cores) || room < u64::from(cores) || nodes.iter().any(|&(_, a)| a == 0) {
        return None;
    }
    // Runs of neighbours: (first, past the last) positions in `nodes`.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for k in 0..count {
        match runs.last_mut() {
            Some((_, end)) if nodes[k - 1].0 + 1 == nodes[k].0 => *end = k + 1,
            _ => runs.push((k, k + 1)),
        }
    }
    let mut got = vec![0u32; count];
    let mut left_cpus = i64::from(cores);
    let mut left_nodes = count as i64;
    let cpus_of = |r: &(usize, usize)| nodes[r.0..r.1].iter().map(|&(_, a)| i64::from(a)).sum::<i64>();
    while left_nodes > 0 || left_cpus > 0 {
        // The run `_eval_nodes` picks (equal weights, no required node).
        let mut best: Option<(usize, i64, bool)> = None;
        for (r, run) in runs.iter().enumerate() {
            let cpus = cpus_of(run);
            let enough = cpus >= left_cpus && (run.1 - run.0) as i64 >= left_nodes;
            let better = match best {
                None => true,
                Some((_, best_cpus, best_enough)) => {
                    if enough {
                        !best_enough || cpus < best_cpus
                    } else {
                        cpus > best_cpus
                    }
                }
            };
            if better {
                best = Some((r, cpus, enough));
            }
        }
        let (r, _, _) = best?;
        let (first, end) = runs.remove(r);
        let mut open: Vec<usize> = (first..end).collect();
        if left_nodes <= 1 {
            // One node more: the smallest that holds what is left, alone.
            let fits = open.iter().copied().filter(|&k| i64::from(nodes[k].1) >= left_cpus);
            if let Some(k) = fits.min_by_key(|&k| nodes[k].1) {
                open = vec![k];
            }
        }
        for k in open {
            if left_nodes <= 0 && left_cpus <= 0 {
                break;
            }
            let avail = i64::from(nodes[k].1);
            // A last node that cannot hold the rest is passed over.
            if left_nodes == 1 && avail < left_cpus {
                continue;
            }
            let take = avail.min(left_cpus - (left_nodes - 1)).max(1);
            got[k] = take as u32;
            left_cpus -= take;
            left_nodes -= 1;
        }
    }
    (left_cpus == 0 && got.iter().all(|&c| c > 0)).then(|| nodes.iter().zip(got).map(|(&(i, _), c)| (i, c)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_go_as_cons_tres_lays_them_out() {
        // Seen on the real cluster (cluster_ipsched): 10 CPUs on two free
        // neighbours of 8 give 8 and 2; on a node with 4 spare and its free
        // neighbour, 4 and 6.
        assert_eq!(cons_tres(10, &[(0, 8), (1, 8)]), Some(vec![(0, 8), (1, 2)]));
        assert_eq!(cons_tres(10, &[(1, 4), (2, 8)]), Some(vec![(1, 4), (2, 6)]));
        // Each node keeps a core for every node after it in its run.
        assert_eq!(cons_tres(3, &[(0, 8), (1, 8), (2, 8)]), Some(vec![(0, 1), (1, 1), (2, 1)]));
        assert_eq!(cons_tres(20, &[(0, 8), (1, 8), (2, 8)]), Some(vec![(0, 8), (1, 8), (2, 4)]));
        // Apart, the bigger run goes first while neither holds the job:
        // node 5 (8 spare) before node 2 (3 spare).
        assert_eq!(cons_tres(10, &[(2, 3), (5, 8)]), Some(vec![(2, 2), (5, 8)]));
        // No run holds 7 CPUs on three nodes: the first with the most
        // cores (node 0's 8; 7-8's 4 + 4 tie) goes first, keeping a core
        // for each node to come.
        assert_eq!(cons_tres(7, &[(0, 8), (7, 4), (8, 4)]), Some(vec![(0, 5), (7, 1), (8, 1)]));
        // Once a run holds all that is left, the smallest such run, and in
        // it, for the last node, its smallest node that holds the rest:
        // node 2 first (7), then 5-6 (1 and 1), then node 0 for the last core.
        assert_eq!(cons_tres(10, &[(0, 2), (2, 8), (5, 4), (6, 4)]), Some(vec![(0, 1), (2, 7), (5, 1), (6, 1)]));
        // Too few cores in all, a node that would get none, or a node with none.
        assert_eq!(cons_tres(17, &[(0, 8), (1, 8)]), None);
        assert_eq!(cons_tres(1, &[(0, 8), (1, 8)]), None);
        assert_eq!(cons_tres(3, &[]), None);
        assert_eq!(cons_tres(2, &[(0, 2), (1, 0)]), None);
    }

    #[test]
    fn every_layout_gives_each_node_a_core_within_what_it_has() {
        for a in 1..5u32 {
            for b in 1..5u32 {
                for c in 1..5u32 {
                    for nodes in [[(0, a), (1, b), (2, c)], [(0, a), (2, b), (3, c)], [(0, a), (2, b), (4, c)]] {
                        for cores in 3..=a + b + c {
                            let got = cons_tres(cores, &nodes).unwrap_or_else(|| panic!("{cores} on {nodes:?}"));
                            assert_eq!(got.iter().map(|&(_, c)| c).sum::<u32>(), cores, "{got:?}");
                            assert!(got.iter().zip(&nodes).all(|(&(i, c), &(j, a))| i == j && (1..=a).contains(&c)));
                        }
                    }
                }
            }
        }
    }
}
