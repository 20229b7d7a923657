//! A start for IPSCHED's search, in plain Rust: the window's jobs placed one
//! at a time on the fewest open nodes that hold them, in two orders (most
//! weight per node first, and the window's), the better kept. CBC begins
//! from it as its incumbent, so a bound at the optimum ends the search at
//! once, and a search cut short keeps at least this.

use super::problem::{usable, Ask, HeadHold, Problem, Starts};

/// The better of the two orders' starts by the program's objective; each
/// keeps every rule (`Problem::check`), the head's hold included.
pub fn greedy(p: &Problem) -> Starts {
    let mut dense: Vec<usize> = (0..p.jobs.len()).filter(|&j| p.fewest(j).is_some()).collect();
    let per_node = |j: usize| p.jobs[j].weight / f64::from(p.fewest(j).unwrap_or(1).max(1));
    dense.sort_by(|&a, &b| per_node(b).total_cmp(&per_node(a)).then(a.cmp(&b)));
    let in_order: Vec<usize> = (0..p.jobs.len()).collect();
    let value = |s: &Starts| p.check(s).unwrap_or(f64::NEG_INFINITY);
    let (a, b) = (place_in(p, &dense), place_in(p, &in_order));
    if value(&b) > value(&a) {
        b
    } else {
        a
    }
}

/// Each job of `order` that fits on what the ones before it left; with a
/// hold the head first, and later jobs past its shadow time only while they
/// take no more than its extra nodes.
fn place_in(p: &Problem, order: &[usize]) -> Starts {
    let by_width = widest_first(p);
    let mut taken = vec![false; p.nodes.len()];
    let mut starts = Vec::new();
    let mut held = 0;
    let head_first = p.hold.as_ref().map(|_| 0).into_iter();
    for j in head_first.chain(order.iter().copied().filter(|&j| p.hold.is_none() || j != 0)) {
        let Some(chosen) = place(p, j, &by_width, &taken) else {
            continue;
        };
        if let Some(HeadHold::Until { extra, .. }) = &p.hold {
            if p.held_against(j) {
                let more = chosen.iter().filter(|&&(k, _)| p.back_by_shadow(p.nodes[k].index)).count() as u32;
                if held + more > *extra {
                    continue;
                }
                held += more;
            }
        }
        for &(k, _) in &chosen {
            taken[k] = true;
        }
        starts.push((j, chosen.into_iter().map(|(k, c)| (p.nodes[k].index, c)).collect()));
    }
    starts
}

/// Whether job `j` could start on the open nodes alone.
pub fn fits_alone(p: &Problem, j: usize) -> bool {
    place(p, j, &widest_first(p), &vec![false; p.nodes.len()]).is_some()
}

/// The open nodes' positions, widest first, lowest index among equals.
fn widest_first(p: &Problem) -> Vec<usize> {
    let mut by_width: Vec<usize> = (0..p.nodes.len()).collect();
    by_width.sort_by(|&a, &b| p.nodes[b].cores.cmp(&p.nodes[a].cores).then(a.cmp(&b)));
    by_width
}

/// Job `j` on the fewest open nodes not `taken` (positions in `p.nodes`,
/// each with its cores): the widest, the last of them swapped for the
/// narrowest that still holds its share, so wide nodes stay for later jobs.
/// A whole-node job takes the lowest free nodes.
fn place(p: &Problem, j: usize, by_width: &[usize], taken: &[bool]) -> Option<Vec<(usize, u32)>> {
    let ask = p.jobs[j].ask;
    // A job that names its nodes is left to the search.
    if !p.jobs[j].placement.required.is_empty() {
        return None;
    }
    let open: Vec<usize> = by_width.iter().copied().filter(|&k| !taken[k] && usable(&p.jobs[j], &p.nodes[k])).collect();
    let (cores, min_nodes, max_nodes) = match ask {
        Ask::Cores { cores, min_nodes, max_nodes, .. } => (cores, min_nodes, max_nodes),
        Ask::WholeNodes(n) => {
            let mut free = open;
            free.sort_unstable();
            let chosen = free.get(..n as usize)?;
            return Some(chosen.iter().map(|&k| (k, p.nodes[k].cores)).collect());
        }
    };
    let mut sum = 0;
    let fewest = open.iter().position(|&k| {
        sum += p.nodes[k].cores;
        sum >= cores
    })? + 1;
    let n = fewest.max(min_nodes as usize);
    if n > max_nodes as usize || n > open.len() || n > cores as usize {
        return None;
    }
    // One core on each node kept for the nodes after it, the rest widest first.
    let mut left = cores;
    let mut chosen: Vec<(usize, u32)> = open[..n]
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let give = p.nodes[k].cores.min(left - (n - 1 - i) as u32);
            left -= give;
            (k, give)
        })
        .collect();
    if let Some(last) = chosen.last_mut() {
        // `open` is widest first: the narrowest unchosen node that holds it.
        let width = p.nodes[last.0].cores;
        if let Some(&k) = open[n..].iter().rev().find(|&&k| p.nodes[k].cores >= last.1 && p.nodes[k].cores < width) {
            last.0 = k;
        }
    }
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::ipsched::problem::{OpenNode, WindowJob};
    use malleable_model::{JobId, NodeIndex};

    /// The nodes job `j` starts on in `s`.
    fn nodes_of(s: &Starts, j: usize) -> Vec<NodeIndex> {
        s.iter().find(|(k, _)| *k == j).map(|(_, l)| l.iter().map(|&(i, _)| i).collect()).unwrap_or_default()
    }

    fn node(index: usize, free: bool, cores: u32, gpus: u32) -> OpenNode {
        OpenNode { index, free, cores, gpus }
    }

    fn job(id: u32, weight: f64, cores: u32, gpus: u32) -> WindowJob {
        WindowJob::anywhere(JobId(id), weight, Ask::Cores { cores, gpus, min_nodes: 1, max_nodes: 8 })
    }

    #[test]
    fn a_job_takes_the_widest_nodes_and_the_narrowest_that_holds_the_rest() {
        // Nodes: 0 and 1 free (8 cores), 2 with 3 spare cores, 3 with 5.
        // 11 cores: 8 on a free node, 3 on node 2 (not 5's node 3, nor a
        // second free node).
        let nodes = vec![node(0, true, 8, 2), node(1, true, 8, 2), node(2, false, 3, 0), node(3, false, 5, 0)];
        let p = Problem { jobs: vec![job(1, 1.0, 11, 0)], nodes, machine_nodes: 4, hold: None };
        assert_eq!(greedy(&p), vec![(0, vec![(0, 8), (2, 3)])]);
        // With a GPU a node it may use only nodes 0 and 1: 8 + 3.
        let p = Problem { jobs: vec![job(1, 1.0, 11, 1)], ..p };
        assert_eq!(greedy(&p), vec![(0, vec![(0, 8), (1, 3)])]);
    }

    #[test]
    fn more_weight_per_node_goes_first_unless_the_window_order_does_better() {
        // 2 free nodes. Job 0 (16 cores, weight 1.2) fills both; jobs 1
        // and 2 (8 each, weight 1) take one each. Per node: 0.6 against 1,
        // so 1 and 2 go first: value 2 - 2/8 = 1.75 against 1.2 - 1.2*2/8 = 0.9.
        let nodes = vec![node(0, true, 8, 0), node(1, true, 8, 0)];
        let p = Problem {
            jobs: vec![job(1, 1.2, 16, 0), job(2, 1.0, 8, 0), job(3, 1.0, 8, 0)],
            nodes,
            machine_nodes: 4,
            hold: None,
        };
        let s = greedy(&p);
        assert_eq!(s.iter().map(|(j, _)| *j).collect::<Vec<_>>(), vec![1, 2]);
        assert!((p.check(&s).unwrap() - 1.75).abs() < 1e-12);
        // Weight 3 for job 0: per node 1.5 beats 1, and 3 - 0.75 = 2.25.
        let mut p = p;
        p.jobs[0].weight = 3.0;
        assert_eq!(greedy(&p).iter().map(|(j, _)| *j).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn with_a_hold_late_jobs_keep_to_the_extra_nodes() {
        // 3 free nodes, all back by the shadow time, 1 extra. The head (job
        // 0) asks 4 nodes' cores: it cannot start. Jobs 1 and 2 (one node
        // each) would run past the shadow: only one may start; job 3, which
        // ends by then, starts too.
        let nodes: Vec<OpenNode> = (0..3).map(|i| node(i, true, 8, 0)).collect();
        let hold = HeadHold::Until { back: (0..3).collect(), extra: 1, late: vec![true, true, true, false] };
        let p = Problem {
            jobs: vec![job(1, 1.0, 32, 0), job(2, 1.0, 8, 0), job(3, 1.0, 8, 0), job(4, 1.0, 8, 0)],
            nodes,
            machine_nodes: 4,
            hold: Some(hold),
        };
        let s = greedy(&p);
        assert_eq!(s.iter().map(|(j, _)| *j).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!((nodes_of(&s, 1), nodes_of(&s, 3)), (vec![0], vec![1]));
        assert!(p.check(&s).is_ok());
    }
}
