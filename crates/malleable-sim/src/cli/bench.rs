//! The `bench` and `bench-ipsched` drivers: wall-clock figures of the
//! simulator, single passes, Equation 1's LP and IPSCHED's program, each
//! line against its target.

use std::path::Path;
use std::time::{Duration, Instant};

use malleable_core::{StrategyChoice, REGISTRY};
use malleable_sim::report::metrics::summarize;
use malleable_sim::workloads::power_scenario::power_corridor;
use malleable_sim::workloads::workload::synthetic;
use malleable_sim::workloads::Workload;
use malleable_sim::{bench, simulate, SimOptions};

use super::load::{load_workload, SYNTHETIC_LOAD};
use super::progress::simulate_shown;

/// A duration in milliseconds, for a label.
fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// One line of bench's report.
pub(super) fn bench_line(what: &str, took: Duration, target: Duration) {
    let fmt = |d: Duration| {
        if d < Duration::from_millis(100) {
            format!("{:.3} ms", d.as_secs_f64() * 1e3)
        } else {
            format!("{:.3} s", d.as_secs_f64())
        }
    };
    outln!(
        "{what:<62} {:>12}  target < {:<8} {}",
        fmt(took),
        fmt(target).replace(".000", ""),
        if took < target { "PASS" } else { "MISS" }
    );
}

/// Time a whole EASY run: making the workload (`step` names that phase) plus
/// simulating it, against `target`, then the two phases and the pass count.
pub(super) fn bench_whole_run(
    step: &str,
    prepare: impl FnOnce() -> Result<Workload, String>,
    label: impl FnOnce(usize, usize) -> String,
    target: Duration,
    quiet: bool,
) -> Result<(), String> {
    let t = Instant::now();
    let w = prepare()?;
    let prepared = t.elapsed();
    let t = Instant::now();
    let easy = StrategyChoice::named("easy")?;
    let r = simulate_shown(&w, &easy, SimOptions::default(), quiet);
    let sim = t.elapsed();
    bench_line(&label(r.jobs.len(), w.nodes), prepared + sim, target);
    outln!("  ({step} {:.3} s, simulate {:.3} s, {} passes)", prepared.as_secs_f64(), sim.as_secs_f64(), r.passes);
    Ok(())
}

/// The large pass table's size, and whether bench times the passes alone.
pub(super) struct Scale {
    pub(super) nodes: usize,
    pub(super) jobs: usize,
    pub(super) passes_only: bool,
    /// The strategies whose passes are timed; all if empty.
    pub(super) strategies: Vec<String>,
}

impl Scale {
    fn times(&self, name: &str) -> bool {
        self.strategies.is_empty() || self.strategies.iter().any(|s| s == name)
    }
}

pub(super) fn run_bench(dir: &Path, reps: usize, scale: Scale, quiet: bool) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!("malleable-sim bench: a debug build; time a --release build");
    }
    if !scale.passes_only {
        let trace = bench::nasa_trace(dir)?;
        bench_whole_run(
            "read",
            || load_workload(&format!("swf:{}", trace.display()), None, 0.0, 1, 1.0, false),
            |jobs, nodes| format!("NASA trace under easy: read + simulate ({jobs} jobs, {nodes} nodes)"),
            Duration::from_secs(2),
            quiet,
        )?;
        bench_whole_run(
            "generate",
            || Ok(synthetic(200_000, 5_000, SYNTHETIC_LOAD, 0.0, 1)),
            |jobs, nodes| format!("synthetic under easy ({jobs} jobs, {nodes} nodes, load {SYNTHETIC_LOAD})"),
            Duration::from_secs(60),
            quiet,
        )?;
    }

    let snapshot = bench::pass_snapshot(5_000, 10_000, 1);
    outln!(
        "one pass at {} nodes ({} free), {} running, {} waiting; median of {reps} (p99 in brackets):",
        snapshot.nodes.len(),
        snapshot.free_nodes().len(),
        snapshot.running.len(),
        snapshot.pending.len()
    );
    for info in REGISTRY.iter().filter(|i| scale.times(i.name)) {
        let k = StrategyChoice::named(info.name)?;
        let t = bench::time_pass_spread(&k, &snapshot, reps);
        bench_line(
            &format!("  {} pass ({} decisions) [p99 {}]", k.name(), t.decisions, ms(t.p99)),
            t.median,
            Duration::from_millis(10),
        );
    }
    drop(snapshot);

    // Issue 35: a site's queue, where the pass must stay within tens of
    // milliseconds at its slowest, not only at its median.
    let snapshot = bench::scale_snapshot(scale.nodes, scale.jobs, 1);
    let arrays = snapshot.pending.windows(2).filter(|w| w[0].submit == w[1].submit).count();
    let placed = snapshot.pending.iter().filter(|p| !p.placement.is_anywhere()).count();
    outln!(
        "one pass at {} nodes ({} free), {} running, {} waiting ({arrays} in arrays behind their first, \
         {placed} in partitions); p99 of {reps} (median in brackets):",
        snapshot.nodes.len(),
        snapshot.free_nodes().len(),
        snapshot.running.len(),
        snapshot.pending.len()
    );
    for info in REGISTRY.iter().filter(|i| scale.times(i.name)) {
        let k = StrategyChoice::named(info.name)?;
        let t = bench::time_pass_spread(&k, &snapshot, reps);
        bench_line(
            &format!("  {} pass ({} decisions) [median {}]", k.name(), t.decisions, ms(t.median)),
            t.p99,
            Duration::from_millis(50),
        );
    }
    if scale.passes_only {
        return Ok(());
    }

    // Chadha et al. 2020 report 20 ms per LP; the issue asks for 10 times faster.
    outln!("Equation 1 ({} backend), median and max of {LP_BENCH_SOLVES} solves:", malleable_core::lp::backend());
    for (what, median_ms, max_ms) in bench::lp::lp_bench(LP_BENCH_SOLVES) {
        // The 2 ms is for the scenario's size; the 200-node case has
        // no target of its own and is held to the paper's 20 ms average.
        let target = if what.contains("200 nodes") { 20 } else { 2 };
        bench_line(
            &format!("  {what} (max {max_ms:.3} ms)"),
            Duration::from_secs_f64(median_ms / 1e3),
            Duration::from_millis(target),
        );
    }
    // The whole scenario: the LP as the strategy calls it, in the simulator.
    let w = power_corridor(1);
    let power = StrategyChoice::named("power")?;
    let r = simulate(&w, power.build().as_mut(), SimOptions::default());
    let s = summarize(&power, &r);
    bench_line(
        &format!("  power-corridor under power: median of its {} solves", s.figure("lp_solves").unwrap_or(0.0)),
        Duration::from_secs_f64(s.figure("lp_median_ms").unwrap_or(f64::NAN).max(0.0) / 1e3),
        Duration::from_millis(2),
    );
    Ok(())
}

/// `bench-ipsched`: per window size, each form's median and largest solve
/// (model building included), how many a limit stopped, and whether the
/// forms found the same optimum on the windows both solved.
pub(super) fn run_bench_ipsched(windows: usize, exact_windows: usize, exact_seconds: f64) {
    use malleable_core::strategies::ipsched::model::Limits;
    use malleable_sim::bench::ipsched::{time_form, WINDOWS};
    if cfg!(debug_assertions) {
        eprintln!("malleable-sim bench-ipsched: a debug build; time a --release build");
    }
    outln!(
        "IPSCHED's program ({} backend), windows of the ragged CPU-GPU ESP on 1,024 nodes x 8 cores x 2 GPUs:",
        malleable_core::lp::backend()
    );
    // The strategy's own default bound, so the figures are a pass's.
    let solver_nodes = malleable_core::strategies::ipsched::SOLVER_NODES.default;
    let nodes = Some(solver_nodes);
    outln!("  (search bounded at SolverNodes={solver_nodes}, the strategy's default: beyond, the best found is kept)");
    let classes = Limits { nodes, seconds: None };
    let exact = Limits { nodes, seconds: Some(exact_seconds) };
    for m in WINDOWS {
        let c = time_form(m, windows, false, classes);
        bench_line(
            &format!("  M = {m:>3}, classes: median of {windows} (max {:.1} ms, {} stopped)", c.max(), c.stopped),
            Duration::from_secs_f64(c.median() / 1e3),
            Duration::from_millis(300),
        );
        if exact_windows == 0 {
            continue;
        }
        let e = time_form(m, exact_windows, true, exact);
        let both = c.values.iter().zip(&e.values).filter_map(|(a, b)| a.zip(*b));
        let (agree, of) = both.fold((0, 0), |(k, n), (a, b)| (k + usize::from((a - b).abs() < 1e-6), n + 1));
        outln!(
            "  M = {m:>3}, exact:   median of {exact_windows} {:>10.1} ms, max {:.1} ms, {} stopped at {exact_seconds} s; \
             same optimum as classes on {agree} of {of} both proved",
            e.median(),
            e.max(),
            e.stopped
        );
    }
}

/// Solves per LP benchmark case.
pub(super) const LP_BENCH_SOLVES: usize = 200;
