//! Cover rows for IPSCHED's program: at most k of a set of jobs can start
//! when any k + 1 of them ask more cores, or more nodes, than the open nodes
//! they may use have. They cut off no start, and they bring the relaxation's
//! bound down to what whole jobs can do (module docs of `model.rs`).

use good_lp::{Constraint, Expression, Variable};

use super::problem::{usable, Ask, Problem};

/// The cover rows of `p`, over its jobs' s_j (`s`). For each GPU count g
/// some job asks per node, and for g = 0: the jobs asking at least g may
/// only use the open nodes with g GPUs or more, and each takes at least its
/// cores and [`Problem::fewest`] of them (each node takes one job of the
/// window); so for cores and for nodes, [`at_most`] over those nodes.
pub fn cover_rows(p: &Problem, s: &[Variable]) -> Vec<Constraint> {
    let fewest: Vec<Option<u32>> = (0..p.jobs.len()).map(|j| p.fewest(j)).collect();
    // The cores a whole-node job takes at least: its count of the narrowest free node.
    let narrowest_free = p.nodes.iter().filter(|n| n.free).map(|n| n.cores).min().unwrap_or(0);
    let mut thresholds: Vec<u32> = p
        .jobs
        .iter()
        .filter_map(|j| match j.ask {
            Ask::Cores { gpus, .. } => Some(gpus),
            Ask::WholeNodes(_) => None,
        })
        .chain([0])
        .collect();
    thresholds.sort_unstable();
    thresholds.dedup();
    let mut rows = Vec::new();
    for g in thresholds {
        let nodes: Vec<_> = p.nodes.iter().filter(|n| n.gpus >= g).collect();
        let mut cores = Vec::new();
        let mut counts = Vec::new();
        for (j, job) in p.jobs.iter().enumerate() {
            let (Some(n), true) = (fewest[j], nodes.iter().any(|node| usable(job, node))) else {
                continue;
            };
            let c = match job.ask {
                Ask::Cores { cores, gpus, .. } if gpus >= g => cores,
                Ask::WholeNodes(k) if g == 0 => k * narrowest_free,
                _ => continue,
            };
            cores.push((u64::from(c), j));
            counts.push((u64::from(n), j));
        }
        let core_cap: u64 = nodes.iter().map(|n| u64::from(n.cores)).sum();
        for (k, set) in at_most(cores, core_cap).into_iter().chain(at_most(counts, nodes.len() as u64)) {
            rows.push(set.into_iter().map(|j| Expression::from(s[j])).sum::<Expression>().leq(k as f64));
        }
    }
    rows
}

/// For `items` (a size, a job) and a capacity: each (k, jobs) such that at
/// most k of those jobs fit, because they are the m largest and the k + 1
/// smallest of them are more than the capacity; for each k the longest such
/// set (it implies the shorter ones), and none where all m fit.
pub fn at_most(mut items: Vec<(u64, usize)>, capacity: u64) -> Vec<(usize, Vec<usize>)> {
    // Largest first; equal sizes in window order, so the rows are the same
    // on every run.
    items.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // k(m), the most of the m largest that fit, is the longest run of the
    // smallest of them within the capacity; it never falls as m grows (an
    // item added is no larger than those before it), so it is found by
    // walking k up alongside m.
    let mut prefix = vec![0u64; items.len() + 1];
    for (i, &(size, _)) in items.iter().enumerate() {
        prefix[i + 1] = prefix[i] + size;
    }
    let mut sets: Vec<(usize, usize)> = Vec::new();
    let mut k = 0;
    for m in 1..=items.len() {
        while k < m && prefix[m] - prefix[m - k - 1] <= capacity {
            k += 1;
        }
        if k < m {
            match sets.last_mut() {
                Some(last) if last.0 == k => last.1 = m,
                _ => sets.push((k, m)),
            }
        }
    }
    sets.into_iter().map(|(k, m)| (k, items[..m].iter().map(|&(_, j)| j).collect())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_jobs_that_cannot_all_fit_are_capped() {
        // Capacity 10, sizes 6, 5, 4, 3 (jobs 0-3). Of the 2 largest only
        // 1 fits (6 + 5 = 11): at most 1 of {0, 1}. Of the 3 largest, 5 + 4
        // = 9 fits and all three do not: at most 2. Of all 4, 3 + 4 = 7 fits
        // and 3 + 4 + 5 = 12 does not: at most 2 again, a row that implies
        // the one for three, which is left out.
        let sets = at_most(vec![(4, 2), (6, 0), (3, 3), (5, 1)], 10);
        assert_eq!(sets, vec![(1, vec![0, 1]), (2, vec![0, 1, 2, 3])]);
        // Everything fits: no row.
        assert!(at_most(vec![(1, 0), (2, 1)], 3).is_empty());
        // A job larger than the capacity on its own: at most 0 of it (and
        // at most 1 of both, which s_j <= 1 implies, harmless).
        assert_eq!(at_most(vec![(11, 0), (1, 1)], 10), vec![(0, vec![0]), (1, vec![0, 1])]);
    }

    /// Every row is right: brute force over all subsets of small random sets.
    #[test]
    fn no_set_that_fits_breaks_a_row() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..300 {
            let n = rng.gen_range(1..8);
            let items: Vec<(u64, usize)> = (0..n).map(|j| (rng.gen_range(1..10), j)).collect();
            let cap = rng.gen_range(1..30);
            let sets = at_most(items.clone(), cap);
            for mask in 0u32..(1 << n) {
                let size: u64 = (0..n).filter(|j| mask >> j & 1 == 1).map(|j| items[j].0).sum();
                if size > cap {
                    continue;
                }
                for (k, set) in &sets {
                    let inside = set.iter().filter(|&&j| mask >> j & 1 == 1).count();
                    assert!(inside <= *k, "{items:?} cap {cap}: {mask:b} fits but has {inside} of {set:?} (k {k})");
                }
            }
            // And each row is tight: k of its set do fit (its k smallest).
            for (k, set) in &sets {
                let mut sizes: Vec<u64> = set.iter().map(|&j| items[j].0).collect();
                sizes.sort_unstable();
                assert!(sizes[..*k].iter().sum::<u64>() <= cap);
            }
        }
    }
}
