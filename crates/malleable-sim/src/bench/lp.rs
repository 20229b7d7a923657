//! How long one solve of Equation 1 (the power strategy's `lp`) takes, on
//! problems shaped like Chadha et al. 2020's power scenario and on a large machine.
//! Wall-clock figures, not tests: the target is a median of at most 2 ms on
//! the scenario-like problems.

use std::time::Instant;

use malleable_core::lp::backend;
use malleable_core::strategies::power::lp::{solve, LpJob, LpNodes, LpProblem};
use malleable_model::{Corridor, JobPower, MalleableSpec, NodeConstraint};

/// Chadha et al. 2020's scenario (section VI-C): 14 nodes at 71 W idle, 5 running
/// malleable jobs of the two applications (PI at 170 W, heat at 250 W per
/// node) that may take 1 to 14 nodes, and a waiting 3-node PI job.
pub fn scenario_problem(corridor: Corridor) -> LpProblem {
    let any = LpNodes::Choose(MalleableSpec { min: 1, max: 14, constraint: NodeConstraint::None });
    let running = [(3, 170.0), (3, 250.0), (2, 170.0), (3, 250.0), (3, 170.0)];
    let mut jobs: Vec<LpJob> =
        running.iter().map(|&(current, w)| LpJob { nodes: any, current, power: JobPower::fixed(w) }).collect();
    jobs.push(LpJob { nodes: LpNodes::Fixed(3), current: 0, power: JobPower::fixed(170.0) });
    LpProblem { total_nodes: 14, idle_node: 71.0, corridor, jobs }
}

/// 64 running malleable jobs on 200 nodes, 194 of them in use, constraints
/// cycling none / even / odd / pof2 / ncube (1 to 16 nodes, even from 2),
/// 120 to 280 W per node (some with a min-max estimate, some measured). They
/// draw about 39 kW; the corridor 25-34 kW makes the optimum move most nodes
/// to the low-power jobs.
pub fn large_problem() -> LpProblem {
    let kinds = [
        (NodeConstraint::None, 1, 3),
        (NodeConstraint::Even, 2, 4),
        (NodeConstraint::Odd, 1, 3),
        (NodeConstraint::PowerOfTwo, 1, 4),
        (NodeConstraint::NCube, 1, 1),
    ];
    let jobs = (0..64u32)
        .map(|i| {
            let (constraint, min, current) = kinds[i as usize % kinds.len()];
            let w = 120.0 + 20.0 * f64::from(i % 9);
            let power = match i % 3 {
                0 => JobPower::fixed(w),
                1 => JobPower { min_per_node: w - 15.0, max_per_node: w + 15.0, measured_per_node: None },
                _ => JobPower { min_per_node: w - 30.0, max_per_node: w + 30.0, measured_per_node: Some(w + 3.5) },
            };
            LpJob { nodes: LpNodes::Choose(MalleableSpec { min, max: 16, constraint }), current, power }
        })
        .collect();
    LpProblem { total_nodes: 200, idle_node: 71.0, corridor: Corridor { low: 25_000.0, high: 34_000.0 }, jobs }
}

/// Median and largest time of `iterations` solves, in milliseconds, after
/// one untimed solve (which loads and warms the solver); and what the solve
/// found, for the label.
fn time(p: &LpProblem, iterations: usize) -> (f64, f64, String) {
    let outcome = match solve(p) {
        Ok(Some(s)) => format!("{} idle", s.idle),
        Ok(None) => "infeasible".to_string(),
        Err(e) => format!("error: {e}"),
    };
    let mut ms: Vec<f64> = (0..iterations.max(1))
        .map(|_| {
            let t = Instant::now();
            let r = solve(p);
            let elapsed = t.elapsed().as_secs_f64() * 1e3;
            std::hint::black_box(r).ok();
            elapsed
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() - 1], outcome)
}

/// `(label, median ms, max ms)` for each problem, timing `solve` with this
/// build's backend ([`backend`], named in the label): the scenario in the
/// corridor of its middle phase (1000-1700 W, where the waiting job cannot
/// start and the solver must prove it), the same without the waiting job
/// (Algorithm 2's running-jobs-only step), the scenario in its first corridor
/// (1700-2500 W, feasible with the waiting job), and [`large_problem`].
pub fn lp_bench(iterations: usize) -> Vec<(String, f64, f64)> {
    let narrow = Corridor { low: 1000.0, high: 1700.0 };
    let wide = Corridor { low: 1700.0, high: 2500.0 };
    let mut running_only = scenario_problem(narrow);
    running_only.jobs.pop();
    let cases = [
        ("scenario 14 nodes, 5 running + waiting 3, 1000-1700 W", scenario_problem(narrow)),
        ("scenario 14 nodes, 5 running only, 1000-1700 W", running_only),
        ("scenario 14 nodes, 5 running + waiting 3, 1700-2500 W", scenario_problem(wide)),
        ("64 malleable jobs on 200 nodes, 25-34 kW", large_problem()),
    ];
    let mut rows: Vec<(String, f64, f64)> = cases
        .iter()
        .map(|(label, p)| {
            let (median, max, outcome) = time(p, iterations);
            (format!("{}: {label} ({outcome})", backend()), median, max)
        })
        .collect();
    // One fixed problem says little about the tail: some problems of this
    // size make the tie-break's search long (the power strategy's TIE_BREAK_NODE_LIMIT).
    let problems = random_large_problems(iterations, 7);
    let mut ms: Vec<f64> = problems
        .iter()
        .map(|p| {
            let t = Instant::now();
            std::hint::black_box(solve(p)).ok();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    rows.push((
        format!(
            "{}: {} random problems of 64 jobs on 200 nodes (90th percentile {:.3} ms)",
            backend(),
            ms.len(),
            ms[ms.len() * 9 / 10]
        ),
        ms[ms.len() / 2],
        ms[ms.len() - 1],
    ));
    rows
}

/// `count` problems like [`large_problem`] drawn from `seed`: each job's
/// constraint, current count (its lowest or second valid count) and power
/// (120-280 W, estimated +-10 W) at random, the corridor's floor in
/// 20-32 kW and its top 9 kW above.
pub fn random_large_problems(count: usize, seed: u64) -> Vec<LpProblem> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let kinds = NodeConstraint::ALL;
    (0..count.max(1))
        .map(|_| {
            let jobs = (0..64)
                .map(|_| {
                    let spec = MalleableSpec { min: 1, max: 16, constraint: kinds[rng.gen_range(0..kinds.len())] };
                    let valid: Vec<u32> = (1..=16).filter(|&v| spec.allows(v)).collect();
                    let current = valid[rng.gen_range(0..valid.len().min(2))];
                    let w = rng.gen_range(120.0..280.0);
                    LpJob {
                        nodes: LpNodes::Choose(spec),
                        current,
                        power: JobPower { min_per_node: w - 10.0, max_per_node: w + 10.0, measured_per_node: None },
                    }
                })
                .collect();
            let low = rng.gen_range(20_000.0..32_000.0);
            LpProblem { total_nodes: 200, idle_node: 71.0, corridor: Corridor { low, high: low + 9000.0 }, jobs }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_problems_solve_as_described() {
        assert_eq!(solve(&scenario_problem(Corridor { low: 1000.0, high: 1700.0 })), Ok(None));
        let s = solve(&scenario_problem(Corridor { low: 1700.0, high: 2500.0 })).unwrap().unwrap();
        assert_eq!(s.counts[5], 3);
        let p = large_problem();
        let s = solve(&p).unwrap().expect("the large problem is feasible");
        let moved: u32 = s.counts.iter().zip(&p.jobs).map(|(&k, j)| k.abs_diff(j.current)).sum();
        assert!(moved > 0, "the corridor should force resizing");
        let rows = lp_bench(2);
        assert_eq!(rows.len(), 5);
        assert!(rows.iter().all(|(label, median, max)| !label.contains("error") && median <= max));
    }
}
