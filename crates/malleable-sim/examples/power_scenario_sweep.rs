//! The power-corridor scenario's change times against the outcomes, over
//! seeds 1-10: how often `power` has no violation, how often
//! `power-running-only` and `easy` have more than `power`, and `power`'s
//! makespan against `easy`'s. The paper gives no change times; this shows
//! how much the scenario's default (drop at 100 s, rise at 170 s) matters.
//!
//! `cargo run --release -p malleable-sim --example power_scenario_sweep`

use malleable_core::StrategyChoice;
use malleable_sim::workloads::power_scenario::Scenario;
use malleable_sim::{simulate, summarize, SimOptions};
fn main() {
    for drop in [60i64, 80, 100, 130, 160, 200] {
        for gap in [50i64, 70, 100, 150] {
            let sc = Scenario { drop_at: drop, rise_at: drop + gap, ..Scenario::default() };
            let (mut p0, mut ro_more, mut ms_ok, mut easy_more) = (0, 0, 0, 0);
            let mut ratios = vec![];
            for seed in 1..=10 {
                let w = sc.build(seed);
                let r = |k: &str| {
                    let choice = StrategyChoice::named(k).unwrap();
                    summarize(&choice, &simulate(&w, choice.build().as_mut(), SimOptions::default()))
                };
                let (e, ro, p) = (r("easy"), r("power-running-only"), r("power"));
                let pv = p.power_violations.unwrap();
                if pv == 0 {
                    p0 += 1;
                }
                if ro.power_violations.unwrap() > pv {
                    ro_more += 1;
                }
                if e.power_violations.unwrap() > pv {
                    easy_more += 1;
                }
                let ratio = p.makespan_s / e.makespan_s;
                if ratio <= 1.02 {
                    ms_ok += 1;
                }
                ratios.push(ratio);
            }
            let mean: f64 = ratios.iter().sum::<f64>() / ratios.len() as f64;
            println!("drop {drop:3} rise {:3}: power0 {p0}/10 ro>power {ro_more}/10 easy>power {easy_more}/10 makespan<=1.02 {ms_ok}/10 mean ratio {mean:.3}", drop + gap);
        }
    }
}
