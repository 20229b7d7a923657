//! Chadha et al. 2020's Table II scenario (`power-corridor`), seeded: golden figures of
//! the three runs, and the properties behind them that have their own
//! reasons (Algorithm 2 keeps the corridor; static backfill, blind to it,
//! breaks it; energy is the integral of the draw).
//!
//! To regenerate the golden figures: `malleable-sim compare --workload
//! power-corridor --strategies easy,power-running-only,power --seed 1 --resize-cost paper --json F`
//! (the paper's scenario with the paper's resize cost, as the runs below).

use malleable_core::StrategyChoice;
use malleable_sim::model::app_model::ResizeCost;
use malleable_sim::workloads::power_scenario::power_corridor;
use malleable_sim::{simulate, summarize, SimOptions, SimResult, Summary};

fn run(kind: &str, seed: u64) -> (Summary, SimResult) {
    let w = power_corridor(seed);
    let choice = StrategyChoice::named(kind).unwrap();
    let opts = SimOptions { resize_cost: ResizeCost::PAPER, ..SimOptions::default() };
    let r = simulate(&w, choice.build().as_mut(), opts);
    (summarize(&choice, &r), r)
}

#[test]
fn golden_power_corridor_seed_1() {
    // (strategy, makespan s, violations, breaks, expands, shrinks)
    let expected = [
        ("easy", 861.0, 2, 3, 0, 0),
        ("power-running-only", 1245.4643519751958, 2, 5, 4, 2),
        ("power", 775.0382264962966, 0, 3, 9, 2),
    ];
    for (kind, makespan, violations, breaks, expands, shrinks) in expected {
        let (s, _) = run(kind, 1);
        assert_eq!(s.jobs, 20, "{kind}");
        assert!((s.makespan_s - makespan).abs() < 1e-6, "{kind}: {s:?}");
        assert_eq!(s.power_violations, Some(violations), "{kind}: {s:?}");
        assert_eq!(s.corridor_breaks, Some(breaks), "{kind}: {s:?}");
        assert_eq!((s.expands, s.shrinks), (expands, shrinks), "{kind}: {s:?}");
    }
}

#[test]
fn power_keeps_the_corridor_where_static_backfill_breaks_it() {
    for seed in 1..=5 {
        let (easy, _) = run("easy", seed);
        let (power, r) = run("power", seed);
        assert!(easy.power_violations.unwrap() > 0, "seed {seed}: {easy:?}");
        assert_eq!(power.power_violations, Some(0), "seed {seed}: {power:?}");
        // Resizing is what keeps it: the LP ran and found configurations.
        let (found, solves) = (power.figure("lp_repairs_found"), power.figure("lp_solves"));
        assert!(found > Some(0.0) && solves > Some(0.0), "seed {seed}: {:?}", r.tally);
        assert!(power.expands + power.shrinks > 0, "seed {seed}");
        assert_eq!(easy.figure("lp_solves"), None);
    }
}

#[test]
fn energy_is_the_integral_of_the_timeline_and_bounded_by_the_machine() {
    let (s, r) = run("power", 2);
    let p = r.power.unwrap();
    let integral: f64 = p.timeline.windows(2).map(|w| w[0].draw * (w[1].t - w[0].t)).sum();
    assert!((integral - s.energy_j.unwrap()).abs() < 1e-6 * integral, "{integral} vs {s:?}");
    // Every node draws between idle (71 W) and heat (250 W).
    let span = p.timeline.last().unwrap().t - p.timeline[0].t;
    assert!(integral >= 14.0 * 71.0 * span && integral <= 14.0 * 250.0 * span);
    for w in &p.timeline {
        assert!((14.0 * 71.0..=14.0 * 250.0).contains(&w.draw), "{w:?}");
    }
}
