//! `cargo xtask mpdata`: Iserte et al. 2025's MPDATA workload (30 jobs of
//! three classes, `malleable-sim`'s `mpdata`) scaled to run faster on a
//! local 31-node cluster: its static flavor (every job rigid at its Max,
//! conservative backfill, Slurm's sched/backfill rule) against its dynamic
//! one under Strategy=natural, each job mall-example following its class's
//! iteration times (Table 2) and asking at every 4th iteration; the same
//! two runs in the simulator with this cluster's measured overheads, and
//! the paper's figures side by side.

use std::time::Duration;

use malleable_sim::metrics::{jobs_csv, Summary};
use malleable_sim::mpdata::{mpdata, static_flavor, MPDATA_JOBS};
use malleable_sim::workload::for_slurm;

use crate::evaluate::{self, Setup};
use crate::{repo_root, Result};

/// The paper's runs last 2,655 to 4,567 s: ten times faster, about 5 and 7
/// minutes here, with iterations of 0.1 to 1.2 s beside resizes of tenths
/// of a second (the paper's: iterations of 1 to 12 s, resizes of seconds).
pub const DEFAULT_SCALE: f64 = 10.0;

pub fn run(nodes: usize, scale: f64, seed: u64, keep: bool) -> Result<()> {
    let base = mpdata(MPDATA_JOBS, nodes, seed);
    let dynamic = for_slurm(&base, scale)?;
    let fixed = for_slurm(&static_flavor(&base), scale)?;
    println!(
        "mpdata (seed {seed}): {} jobs on {nodes} nodes, {scale} times faster, the last submitted at {:.0} s",
        dynamic.jobs.len(),
        dynamic.jobs.last().map_or(0.0, |j| j.submit)
    );
    let setup = |name: &str, keep: bool| Setup {
        name: name.into(),
        nodes,
        tick: 5,
        poll_ms: 500,
        keep,
        drain_timeout: Duration::from_secs(3600),
    };
    let mut runs = evaluate::real_runs(&fixed, &["conservative".into()], &setup("mpdata-static", false))?;
    runs.extend(evaluate::real_runs(&dynamic, &["natural".into()], &setup("mpdata-natural", keep))?);
    let failed: Vec<String> = runs.iter().flat_map(evaluate::failures).collect();
    let over = evaluate::measured_overheads(&runs);
    println!(
        "measured (median): launch and completion overhead rigid {:.2} s, malleable {:.2} s; event to start {:.3} s",
        over.start_delay, over.malleable_start_delay, over.pass_delay
    );
    let out = repo_root().join("target").join("mpdata").join(format!("seed-{seed}-scale-{scale}"));
    let mut real = Vec::new();
    let mut sim = Vec::new();
    for (run, w) in runs.iter().zip([&fixed, &dynamic]) {
        real.push(evaluate::real_summary(run)?);
        let (s, r) = evaluate::sim_run(w, &run.label, 5, over)?;
        write(&out, &format!("{}.real.jobs.csv", run.label), &jobs_csv(&run.as_sim_result()))?;
        write(&out, &format!("{}.sim.jobs.csv", run.label), &jobs_csv(&r))?;
        sim.push(s);
    }
    print!("{}", table(&real, &sim));
    evaluate::write_json(&out, "real.json", &real)?;
    evaluate::write_json(&out, "sim.json", &sim)?;
    println!("in {}: real.json, sim.json, per-job CSVs", out.display());
    if !failed.is_empty() {
        return Err(failed.join("\n"));
    }
    Ok(())
}

/// The paper's figures, static and natural, real and simulated, each with
/// natural's ratio to static.
fn table(real: &[Summary], sim: &[Summary]) -> String {
    type Read = Box<dyn Fn(&Summary) -> Option<f64>>;
    let mut rows: Vec<(String, Read)> = vec![
        ("makespan_s".into(), Box::new(|s: &Summary| Some(s.makespan_s))),
        ("utilization".into(), Box::new(|s: &Summary| Some(s.utilization))),
        ("mean_wait_s".into(), Box::new(|s: &Summary| Some(s.mean_wait_s))),
        ("expands".into(), Box::new(|s: &Summary| Some(s.expands as f64))),
        ("shrinks".into(), Box::new(|s: &Summary| Some(s.shrinks as f64))),
    ];
    for class in ["small", "medium", "large"] {
        type Field = fn(&malleable_sim::metrics::ClassFigures) -> f64;
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
    let mut t = format!(
        "\n{:<28}{:>12}{:>12}{:>8}{:>12}{:>12}{:>8}\n",
        "", "static real", "natural", "ratio", "static sim", "natural", "ratio"
    );
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a != 0.0 => format!("{:.3}", b / a),
        _ => "-".into(),
    };
    for (name, read) in &rows {
        let (rs, rn, ss, sn) = (read(&real[0]), read(&real[1]), read(&sim[0]), read(&sim[1]));
        t += &format!(
            "{name:<28}{:>12}{:>12}{:>8}{:>12}{:>12}{:>8}\n",
            cell(rs),
            cell(rn),
            ratio(rs, rn),
            cell(ss),
            cell(sn),
            ratio(ss, sn)
        );
    }
    let makespan = |s: &[Summary]| s[1].makespan_s / s[0].makespan_s;
    let gap = (makespan(real) - makespan(sim)).abs();
    t += &format!(
        "natural / static makespan: real {:.3}, simulated {:.3}, {} apart ({})\n",
        makespan(real),
        makespan(sim),
        format_args!("{gap:.3}"),
        if gap <= 0.1 { "within 0.1" } else { "more than 0.1" }
    );
    t
}

fn write(dir: &std::path::Path, file: &str, text: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join(file), text).map_err(|e| format!("{}: {e}", dir.join(file).display()))
}
