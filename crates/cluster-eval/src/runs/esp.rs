//! `cargo xtask esp` and `cargo xtask fidelity`'s run: a workload (Chadha et al. 2020's
//! ESP, scaled to run faster, or the demo's) on a local cluster under each
//! strategy and in the simulator with this cluster's measured costs; the
//! figures side by side, the same JSON and per-job CSV as `malleable-sim
//! compare --out`, the node-occupancy chart. `fidelity` fails when a
//! target is missed.

use std::path::Path;
use std::time::Duration;

use malleable_sim::report::metrics::jobs_csv;
use malleable_sim::workloads::workload::{esp, for_slurm};

use super::common::{self as evaluate, Result, Setup};
use crate::fidelity::{self, Pair};
use crate::replay::ElasticApp;
use crate::{gantt, workloads};

/// ESP's 30 s arrivals and 100..1846 s jobs, twenty times faster: a run
/// of about 12 to 13 minutes on 32 nodes (ESP's makespan is about twice its
/// 6,870 s of arrivals), with jobs of 5 to 92 s, long beside Slurm's launch
/// and resize costs (tenths of a second). Measured: 60 times faster takes
/// about 4 minutes a run.
pub const DEFAULT_SCALE: f64 = 20.0;

pub struct EvalOpts {
    pub workload: String,
    pub nodes: usize,
    pub scale: f64,
    pub fraction: f64,
    pub seed: u64,
    pub strategies: Vec<String>,
    pub keep: bool,
}

/// The run, with the plugins staged in `staged`, its files under `target`
/// (the workspace's target/); `strict`: fidelity's, a missed target fails it.
pub fn run(staged: &Path, target: &Path, o: &EvalOpts, strict: bool) -> Result<()> {
    let (w, name) = match o.workload.as_str() {
        "demo" => (workloads::demo(o.nodes), "fidelity-demo".to_string()),
        _ => (for_slurm(&esp(o.nodes, o.fraction, o.seed), o.scale)?, "esp".to_string()),
    };
    let malleable = w.jobs.iter().filter(|j| j.malleable.is_some()).count();
    println!(
        "{}: {} jobs ({malleable} malleable), the last submitted at {:.0} s, on {} nodes; strategies {}",
        w.name,
        w.jobs.len(),
        w.jobs.last().map_or(0.0, |j| j.submit),
        o.nodes,
        o.strategies.join(", ")
    );
    let setup = Setup {
        name: name.clone(),
        nodes: o.nodes,
        tick: 5,
        // Up to a few dozen malleable jobs poll slurmctld at once.
        poll_ms: 500,
        keep: o.keep,
        drain_timeout: Duration::from_secs(3600),
        beside_backfill: false,
        app: ElasticApp::Example,
    };
    let runs = evaluate::real_runs(staged, &w, &o.strategies, &setup)?;
    let failed: Vec<String> = runs.iter().flat_map(evaluate::failures).collect();
    // Launch and completion overhead, measured on the jobs that never
    // resized, and how long after an event its pass starts jobs.
    let over = evaluate::measured_overheads(&runs);
    println!(
        "measured (median): launch and completion overhead of a job that never resized: rigid {:.2} s, malleable {:.2} s; from a submission or an end to the start it allowed {:.3} s",
        over.start_delay, over.malleable_start_delay, over.pass_delay
    );
    println!(
        "simulator: linear application model, SchedulerTick 5 s, those overheads as start and pass delays, resize cost {}",
        malleable_sim::model::app_model::ResizeCost::MEASURED
    );
    let out = match o.workload.as_str() {
        "demo" => target.join(&name),
        _ => target.join(&name).join(format!("fraction-{}-scale-{}", o.fraction, o.scale)),
    };
    let mut pairs = Vec::new();
    for run in &runs {
        let real = evaluate::real_summary(run)?;
        let (sim, sim_result) = evaluate::sim_run(&w, &run.label, 5, over)?;
        let file = run.label.replace(['[', ']', '=', ','], "_");
        evaluate::write_text(&out, &format!("{file}.real.jobs.csv"), &jobs_csv(&run.as_sim_result()))?;
        evaluate::write_text(&out, &format!("{file}.sim.jobs.csv"), &jobs_csv(&sim_result))?;
        pairs.push(Pair {
            strategy: run.label.clone(),
            malleable: malleable > 0 && run.label != "easy",
            real,
            sim,
            real_jobs: run.records(),
            sim_jobs: sim_result.jobs,
        });
    }
    let real: Vec<_> = pairs.iter().map(|p| p.real.clone()).collect();
    let sim: Vec<_> = pairs.iter().map(|p| p.sim.clone()).collect();
    println!();
    println!("real cluster:");
    print!("{}", evaluate::summary_table(&real));
    println!();
    let (report, missed) = fidelity::report(&pairs, &o.strategies[0]);
    println!("real / simulated:");
    print!("{report}");
    evaluate::write_json(&out, "real.json", &real)?;
    evaluate::write_json(&out, "sim.json", &sim)?;
    let png = out.join("occupancy.png");
    gantt::draw(&runs.iter().collect::<Vec<_>>(), &png)?;
    println!();
    println!(
        "in {}: real.json and sim.json (as malleable-sim compare --json), per-job CSVs, occupancy.png",
        out.display()
    );
    if !failed.is_empty() {
        return Err(failed.join("\n"));
    }
    if strict && !missed.is_empty() {
        return Err(format!("fidelity targets missed: {}", missed.join("; ")));
    }
    Ok(())
}
