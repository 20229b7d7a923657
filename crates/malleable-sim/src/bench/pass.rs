//! What `malleable-sim bench` measures (issue 3, item 8): the simulator on the
//! NASA trace and on a 200,000-job synthetic machine, and one scheduling pass
//! of each strategy on a large snapshot. Wall-clock figures, not tests.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use malleable_core::StrategyChoice;
use malleable_model::{
    Corridor, JobPower, MalleableSpec, Node, NodeConstraint, PendingJob, PowerState, RunningJob, Snapshot,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The NASA iPSC/860 trace's file name in the Parallel Workloads Archive.
pub const NASA_TRACE: &str = "NASA-iPSC-1993-3.1-cln.swf.gz";

/// `<repo>/../shared/workloads`, where the project keeps its traces (resolved
/// from this crate's source directory at build time).
pub fn default_workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/workloads")
}

/// The NASA trace in `dir`, or an error naming `--workloads-dir`.
pub fn nasa_trace(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join(NASA_TRACE);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "--workloads-dir {}: no {NASA_TRACE} there; give --workloads-dir DIR, the \
             folder holding the Parallel Workloads Archive traces",
            dir.display()
        ))
    }
}

/// A scheduling pass's input at scale: `nodes` nodes, about half of them held
/// by running jobs of 1-32 nodes scattered over the machine (half of those
/// malleable, with MTCT ratios), and `waiting` pending jobs of 1-256 nodes,
/// half malleable. No job is adapting, so the malleable strategies may shrink
/// and expand: the pass does all the work it can.
pub fn pass_snapshot(nodes: usize, waiting: usize, seed: u64) -> Snapshot {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let now = 1_000_000;
    let constraints = [NodeConstraint::None, NodeConstraint::PowerOfTwo, NodeConstraint::Even];
    let mut order: Vec<usize> = (0..nodes).collect();
    order.shuffle(&mut rng);
    let mut taken = 0;
    let mut running = Vec::new();
    let mut free = vec![true; nodes];
    while taken < nodes / 2 {
        let size = rng.gen_range(1..=32usize).min(nodes / 2 - taken);
        let held: Vec<usize> = order[taken..taken + size].to_vec();
        taken += size;
        for &n in &held {
            free[n] = false;
        }
        let malleable =
            rng.gen_bool(0.5).then_some(MalleableSpec { min: 1, max: 64, constraint: NodeConstraint::None });
        // The builder's arguments draw from `rng` in the order they are written.
        let job = RunningJob::new(running.len() as u32 + 1, held).start(now - rng.gen_range(0..3_600));
        let job = job.end_limit(Some(now + rng.gen_range(60..36_000))).malleable(malleable);
        running.push(job.mtct_ratio(malleable.map(|_| rng.gen_range(0.0..0.5))).power(JobPower::fixed(200.0)));
    }
    let first_pending = running.len() as u32 + 1;
    let pending = (0..waiting)
        .map(|i| {
            let size = (rng.gen_range(0.0f64..256f64.ln()).exp() as u32).clamp(1, 256);
            let malleable = rng.gen_bool(0.5).then(|| {
                let constraint = *constraints.choose(&mut rng).unwrap();
                MalleableSpec { min: 1, max: 512, constraint }
            });
            // Start sizes obey the constraint (round up to one it allows).
            let size = match malleable {
                Some(spec) => (size..=512).find(|&n| spec.allows(n)).unwrap_or(size),
                None => size,
            };
            let job = PendingJob::new(first_pending + i as u32, size).submit(now - (waiting - i) as i64);
            let job = job.time_limit(Some(rng.gen_range(60..86_400))).malleable(malleable);
            job.power(JobPower::fixed(rng.gen_range(150.0..300.0)))
        })
        .collect();
    Snapshot {
        now,
        nodes: Node::numbered(free),
        running,
        pending,
        // A corridor that holds (200 W per busy node, 71 W idle, the top at
        // twice that): the power strategy's pass is its budgeted starts.
        power: Some(PowerState {
            corridor: Corridor { low: 0.0, high: 2.0 * (taken as f64 * 200.0 + (nodes - taken) as f64 * 71.0) },
            idle_node: 71.0,
            measured_draw: None,
        }),
    }
}

/// One strategy's pass on `snapshot`: the median of `reps` timed passes, each
/// by a freshly built strategy, and how many decisions a pass took.
pub fn time_pass(choice: &StrategyChoice, snapshot: &Snapshot, reps: usize) -> (Duration, usize) {
    let t = time_pass_spread(choice, snapshot, reps);
    (t.median, t.decisions)
}

/// One strategy's pass times on a snapshot: the median and the p99 of its
/// reps, and how many decisions a pass took.
#[derive(Clone, Copy, Debug)]
pub struct PassTimes {
    pub median: Duration,
    pub p99: Duration,
    pub decisions: usize,
}

/// Time `reps` passes of `choice` on `snapshot`, each by a freshly built
/// strategy. The p99 is the nearest-rank one: with fewer than 100 reps, the
/// slowest.
pub fn time_pass_spread(choice: &StrategyChoice, snapshot: &Snapshot, reps: usize) -> PassTimes {
    let mut times = Vec::with_capacity(reps);
    let mut decisions = 0;
    for _ in 0..reps.max(1) {
        let mut strategy = choice.build();
        let t = Instant::now();
        let d = strategy.schedule(std::hint::black_box(snapshot));
        times.push(t.elapsed());
        decisions = d.decisions.len();
    }
    times.sort_unstable();
    let rank = (times.len() * 99).div_ceil(100).max(1);
    PassTimes { median: times[times.len() / 2], p99: times[rank - 1], decisions }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_snapshot_is_half_busy_and_consistent() {
        let s = pass_snapshot(1_000, 500, 1);
        assert_eq!(s.nodes.len(), 1_000);
        assert_eq!(s.pending.len(), 500);
        assert_eq!(s.free_nodes().len(), 500);
        let mut held: Vec<usize> = s.running.iter().flat_map(|r| r.nodes.clone()).collect();
        held.sort_unstable();
        held.dedup();
        assert_eq!(held.len(), 500, "no node held twice");
        assert!(held.iter().all(|&n| !s.nodes[n].free));
        assert!(s.pending.iter().all(|p| p.malleable.is_none_or(|m| m.allows(p.nodes))));
        assert!(s.running.iter().any(|r| r.malleable.is_some()));
        assert!(s.pending.iter().any(|p| p.malleable.is_some()));
    }

    #[test]
    fn every_strategy_passes_on_a_small_snapshot() {
        let s = pass_snapshot(256, 200, 2);
        for info in malleable_core::REGISTRY {
            let (_, decisions) = time_pass(&StrategyChoice::named(info.name).unwrap(), &s, 1);
            assert!(decisions > 0, "{} took no decision", info.name);
        }
    }

    #[test]
    fn missing_trace_names_the_option() {
        let e = nasa_trace(Path::new("/nonexistent-dir")).unwrap_err();
        assert!(e.contains("--workloads-dir") && e.contains(NASA_TRACE), "{e}");
    }
}
