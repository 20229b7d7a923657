//! Property tests for the power strategy's `lp::solve` (Equation 1 of
//! Chadha et al. 2020) against a
//! brute-force enumeration written independently here: on random small
//! problems, feasibility agrees exactly, every returned configuration meets
//! every row of Equation 1 and the node-count rules, its k_idle is the least
//! possible, and among those its number of node moves is the least too.

use malleable_core::strategies::power::lp::{solve, LpJob, LpNodes, LpProblem, LpSolution};
use malleable_model::{Corridor, JobPower, MalleableSpec, NodeConstraint};
use proptest::prelude::*;

/// The slack the solver allows on the corridor's bounds.
const TOL: f64 = 1e-6;

// ---- generators ----------------------------------------------------------

/// Watts in steps of 0.5: configurations either meet a bound exactly (to
/// the last bit, which the tolerance covers) or miss it by 0.5 W or more,
/// so the brute force and the solver cannot disagree on a hair's breadth.
fn watts(max_halves: u32) -> impl Strategy<Value = f64> {
    (0..=max_halves).prop_map(|h| f64::from(h) / 2.0)
}

fn constraint() -> impl Strategy<Value = NodeConstraint> {
    prop::sample::select(NodeConstraint::ALL.to_vec())
}

fn nodes() -> impl Strategy<Value = LpNodes> {
    prop_oneof![
        // Mostly counts that fit, sometimes 0 or more than any N here.
        3 => prop_oneof![8 => 1u32..=6, 1 => Just(0u32), 1 => Just(13u32)]
            .prop_map(LpNodes::Fixed),
        12 => (0u32..=5, 0u32..=9, constraint()).prop_map(|(min, span, constraint)| {
            LpNodes::Choose(MalleableSpec { min, max: min + span, constraint })
        }),
        // min > max, or a range past N: few or no valid counts.
        1 => (0u32..=13, 0u32..=14, constraint()).prop_map(|(min, max, constraint)| {
            LpNodes::Choose(MalleableSpec { min, max, constraint })
        }),
    ]
}

fn power() -> impl Strategy<Value = JobPower> {
    (watts(600), watts(200), prop::option::weighted(0.3, watts(700))).prop_map(|(min, extra, measured)| JobPower {
        min_per_node: min,
        max_per_node: min + extra,
        measured_per_node: measured,
    })
}

fn job() -> impl Strategy<Value = LpJob> {
    (nodes(), 0u32..=12, power()).prop_map(|(nodes, current, power)| LpJob { nodes, current, power })
}

/// The corridor: half the time around the draw of a configuration made of
/// valid counts (so that many problems are feasible, some only just), half
/// the time anywhere (so that many are not). N is raised to that
/// configuration's node count when that fits in 12.
fn problem() -> impl Strategy<Value = LpProblem> {
    let around = (prop::collection::vec(any::<prop::sample::Index>(), 4), 0u32..=300, 0u32..=300);
    let anywhere = (0u32..=2500, 1u32..=1500);
    (1u32..=12, watts(200), prop::collection::vec(job(), 1..=4), around, anywhere, any::<bool>()).prop_map(
        |(n, idle_node, jobs, (picks, below, above), (low, width), near)| {
            if !near {
                let corridor = Corridor { low: f64::from(low), high: f64::from(low + width) };
                return LpProblem { total_nodes: n, idle_node, corridor, jobs };
            }
            let counts: Vec<u32> = jobs
                .iter()
                .zip(&picks)
                .map(|(j, pick)| {
                    let ok = allowed(j, 12);
                    if ok.is_empty() {
                        1
                    } else {
                        ok[pick.index(ok.len())]
                    }
                })
                .collect();
            let used: u32 = counts.iter().sum();
            let n = if used <= 12 { n.max(used) } else { n };
            let (lo, hi) = draw_of(&jobs, idle_node, &counts, n.saturating_sub(used));
            let low = (lo - f64::from(below)).max(0.0);
            let corridor = Corridor { low, high: (hi + f64::from(above)).max(low + 0.5) };
            LpProblem { total_nodes: n, idle_node, corridor, jobs }
        },
    )
}

// ---- the reference -------------------------------------------------------

/// The counts job `j` may get on `n` nodes, by the rules' plain reading.
fn allowed(j: &LpJob, n: u32) -> Vec<u32> {
    (1..=n)
        .filter(|&k| match j.nodes {
            LpNodes::Fixed(m) => k == m,
            LpNodes::Choose(spec) => k >= spec.min && k <= spec.max && spec.constraint.is_valid(k),
        })
        .collect()
}

fn draw_of(jobs: &[LpJob], idle_node: f64, counts: &[u32], idle: u32) -> (f64, f64) {
    let mut low = f64::from(idle) * idle_node;
    let mut high = low;
    for (j, &k) in jobs.iter().zip(counts) {
        low += f64::from(k) * j.power.low();
        high += f64::from(k) * j.power.high();
    }
    (low, high)
}

fn draws(p: &LpProblem, counts: &[u32], idle: u32) -> (f64, f64) {
    draw_of(&p.jobs, p.idle_node, counts, idle)
}

/// Whether `counts` and `idle` meet every row of Equation 1 and the rules.
fn feasible(p: &LpProblem, counts: &[u32], idle: u32) -> bool {
    let n = p.total_nodes;
    let (low, high) = draws(p, counts, idle);
    counts.len() == p.jobs.len()
        && p.jobs.iter().zip(counts).all(|(j, k)| allowed(j, n).contains(k))
        && idle < n
        && counts.iter().sum::<u32>() + idle == n
        && low >= p.corridor.low - TOL
        && high <= p.corridor.high + TOL
}

fn moves(p: &LpProblem, counts: &[u32]) -> u32 {
    p.jobs
        .iter()
        .zip(counts)
        .map(|(j, &k)| match j.nodes {
            // A fixed job cannot move; its distance to `current` is not
            // the solver's to reduce.
            LpNodes::Fixed(_) => 0,
            LpNodes::Choose(_) => k.abs_diff(j.current),
        })
        .sum()
}

/// The least (k_idle, moves) over all configurations, or None.
fn brute_force(p: &LpProblem) -> Option<(u32, u32)> {
    let n = p.total_nodes;
    let options: Vec<Vec<u32>> = p.jobs.iter().map(|j| allowed(j, n)).collect();
    let mut best: Option<(u32, u32)> = None;
    let mut counts = vec![0u32; p.jobs.len()];
    fn walk(p: &LpProblem, options: &[Vec<u32>], i: usize, counts: &mut Vec<u32>, best: &mut Option<(u32, u32)>) {
        if i == options.len() {
            let used: u32 = counts.iter().sum();
            if used <= p.total_nodes {
                let idle = p.total_nodes - used;
                if feasible(p, counts, idle) {
                    let key = (idle, moves(p, counts));
                    if best.is_none_or(|b| key < b) {
                        *best = Some(key);
                    }
                }
            }
            return;
        }
        for &k in &options[i] {
            counts[i] = k;
            walk(p, options, i + 1, counts, best);
        }
    }
    walk(p, &options, 0, &mut counts, &mut best);
    best
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn solve_agrees_with_brute_force(p in problem()) {
        let got = solve(&p);
        prop_assert!(got.is_ok(), "solver error: {:?}", got);
        let got: Option<LpSolution> = got.unwrap();
        let want = brute_force(&p);
        prop_assert_eq!(got.is_some(), want.is_some(), "feasibility: got {:?}", got);
        if let (Some(s), Some((idle, moves_min))) = (got, want) {
            prop_assert!(feasible(&p, &s.counts, s.idle), "not a valid configuration: {:?}", s);
            let (low, high) = draws(&p, &s.counts, s.idle);
            prop_assert!((s.low_draw - low).abs() < 1e-6 && (s.high_draw - high).abs() < 1e-6,
                "draws reported {} / {}, are {} / {}", s.low_draw, s.high_draw, low, high);
            prop_assert_eq!(s.idle, idle, "k_idle not least: {:?}", s);
            prop_assert_eq!(moves(&p, &s.counts), moves_min, "moves not least: {:?}", s);
        }
    }
}
