//! `cargo xtask mpdata`'s run: Iserte et al. 2025's MPDATA workload (30 jobs of
//! three classes, `malleable-sim`'s `mpdata`) scaled to run faster on a
//! local 31-node cluster: its static flavor (every job rigid at its Max,
//! conservative backfill, Slurm's sched/backfill rule, in sched/malleable)
//! against its dynamic one answered by NATURAL, in sched/malleable and in
//! select/natural beside Slurm's own sched/backfill (the paper's set-up),
//! each job mall-example following its class's iteration times (Table 2)
//! and asking at every 4th iteration; this project's variant (`VARIANT`)
//! under sched/malleable; the same in the simulator with this cluster's
//! measured overheads; the paper's figures side by side.

use std::path::Path;
use std::time::Duration;

use malleable_sim::report::metrics::{jobs_csv, Summary};
use malleable_sim::workloads::mpdata::{mpdata, static_flavor, MPDATA_JOBS};
use malleable_sim::workloads::workload::for_slurm;

use super::common::{self as evaluate, Result, Setup};
use crate::replay::ElasticApp;

/// The paper's runs last 2,655 to 4,567 s: ten times faster, about 5 and 7
/// minutes here, with iterations of 0.1 to 1.2 s beside resizes of tenths
/// of a second (the paper's: iterations of 1 to 12 s, resizes of seconds).
pub const DEFAULT_SCALE: f64 = 10.0;

/// NATURAL with what the paper's section 6 asks for: shortest waiting job
/// first, no growing into nodes the backfill plan books (docs/evaluation.md).
const VARIANT: &str = "natural-plan[ShortestFirst=1,WideUnbooked=1]";

/// The runs, with the plugins staged in `staged`, the files under `target`
/// (the workspace's target/).
pub fn run(staged: &Path, target: &Path, nodes: usize, scale: f64, seed: u64, keep: bool) -> Result<()> {
    let base = mpdata(MPDATA_JOBS, nodes, seed);
    let dynamic = for_slurm(&base, scale)?;
    let fixed = for_slurm(&static_flavor(&base), scale)?;
    println!(
        "mpdata (seed {seed}): {} jobs on {nodes} nodes, {scale} times faster, the last submitted at {:.0} s",
        dynamic.jobs.len(),
        dynamic.jobs.last().map_or(0.0, |j| j.submit)
    );
    let setup = |name: &str, keep: bool, beside_backfill: bool| Setup {
        name: name.into(),
        nodes,
        tick: 5,
        poll_ms: 500,
        keep,
        drain_timeout: Duration::from_secs(3600),
        beside_backfill,
        app: ElasticApp::Example,
    };
    let mut runs =
        evaluate::real_runs(staged, &fixed, &["conservative".into()], &setup("mpdata-static", false, false))?;
    runs.extend(evaluate::real_runs(staged, &dynamic, &["natural".into()], &setup("mpdata-natural", false, false))?);
    runs.extend(evaluate::real_runs(staged, &dynamic, &["natural".into()], &setup("mpdata-backfill", false, true))?);
    runs.extend(evaluate::real_runs(staged, &dynamic, &[VARIANT.into()], &setup("mpdata-variant", keep, false))?);
    let failed: Vec<String> = runs.iter().flat_map(evaluate::failures).collect();
    let over = evaluate::measured_overheads(&runs);
    println!(
        "measured (median): launch and completion overhead rigid {:.2} s, malleable {:.2} s; event to start {:.3} s",
        over.start_delay, over.malleable_start_delay, over.pass_delay
    );
    let out = target.join("mpdata").join(format!("seed-{seed}-scale-{scale}"));
    let labels = ["static", "natural", "natural beside sched/backfill", "natural-plan variant"];
    let files = ["static", "natural", "natural-backfill", "natural-plan"];
    let mut real = Vec::new();
    for ((run, label), file) in runs.iter().zip(labels).zip(files) {
        let mut s = evaluate::real_summary(run)?;
        s.strategy = label.into();
        evaluate::write_text(&out, &format!("{file}.real.jobs.csv"), &jobs_csv(&run.as_sim_result()))?;
        real.push(s);
    }
    let mut sim = Vec::new();
    let simulated =
        [(&fixed, "conservative", files[0]), (&dynamic, "natural", files[1]), (&dynamic, VARIANT, files[3])];
    for (w, strategy, file) in simulated {
        let (mut s, r) = evaluate::sim_run(w, strategy, 5, over)?;
        s.strategy = file.into();
        evaluate::write_text(&out, &format!("{file}.sim.jobs.csv"), &jobs_csv(&r))?;
        sim.push(s);
    }
    println!("\nreal cluster (ratio to static):");
    print!("{}", table(&real));
    println!("\nsimulated, with this cluster's overheads (ratio to static):");
    print!("{}", table(&sim));
    let makespan = |s: &[Summary], k: usize| s[k].makespan_s / s[0].makespan_s;
    // (real run, its simulated counterpart)
    for (k, m) in [(1, 1), (2, 1), (3, 2)] {
        let gap = (makespan(&real, k) - makespan(&sim, m)).abs();
        println!(
            "{} / static makespan: real {:.3}, simulated {:.3}: {gap:.3} apart ({})",
            labels[k],
            makespan(&real, k),
            makespan(&sim, m),
            if gap <= 0.1 { "within 0.1" } else { "more than 0.1" }
        );
    }
    evaluate::write_json(&out, "real.json", &real)?;
    evaluate::write_json(&out, "sim.json", &sim)?;
    println!("in {}: real.json, sim.json, per-job CSVs", out.display());
    if !failed.is_empty() {
        return Err(failed.join("\n"));
    }
    Ok(())
}

/// The paper's figures, one column per run, each with its ratio to the first's.
fn table(runs: &[Summary]) -> String {
    type Read = Box<dyn Fn(&Summary) -> Option<f64>>;
    let mut rows: Vec<(String, Read)> = vec![
        ("makespan_s".into(), Box::new(|s: &Summary| Some(s.makespan_s))),
        ("utilization".into(), Box::new(|s: &Summary| Some(s.utilization))),
        ("mean_wait_s".into(), Box::new(|s: &Summary| Some(s.mean_wait_s))),
        ("expands".into(), Box::new(|s: &Summary| Some(s.expands as f64))),
        ("shrinks".into(), Box::new(|s: &Summary| Some(s.shrinks as f64))),
    ];
    for class in ["small", "medium", "large"] {
        type Field = fn(&malleable_sim::report::metrics::ClassFigures) -> f64;
        let fields: [(&str, Field); 3] = [
            ("median_wait_s", |c| c.median_wait_s),
            ("median_run_s", |c| c.median_run_s),
            ("median_turnaround_s", |c| c.median_turnaround_s),
        ];
        for (what, f) in fields {
            let read = move |s: &Summary| s.classes.iter().find(|c| c.class == class).map(f);
            rows.push((format!("{class} {what}"), Box::new(read)));
        }
    }
    let mut t = format!("{:<28}", "");
    for r in runs {
        t += &format!("{:>32}", r.strategy);
    }
    t.push('\n');
    for (name, read) in &rows {
        t += &format!("{name:<28}");
        let base = read(&runs[0]);
        for r in runs {
            let cell = match (read(r), base) {
                (Some(v), Some(b)) if b != 0.0 => format!("{v:.2} ({:.3})", v / b),
                (Some(v), _) => format!("{v:.2}"),
                (None, _) => "-".into(),
            };
            t += &format!("{cell:>32}");
        }
        t.push('\n');
    }
    t
}
