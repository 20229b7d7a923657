//! The main job: what malleability does, on a local cluster. The demo's mix
//! of rigid and elastic jobs (the example application, with node constraints)
//! runs once per strategy, by default `easy` (elastic jobs stay at their
//! --nodes) and `mtct-backfill`: each run's jobs, the runs side by side with
//! ratios, a node-occupancy chart of both, and the elastic jobs' results checked.
//! With `--mpi` the elastic jobs run the MPI Jacobi under `mall-run --mpi
//! restart`, half with Open MPI and half with MPICH.

use std::path::Path;
use std::time::Duration;

use cluster_eval::replay::{ElasticApp, RealRun};
use cluster_eval::{gantt, workloads};
use testcluster::process::output;

use cluster_eval::runs::common::{self as evaluate, Setup};

use crate::{repo_root, Result};

pub fn run(nodes: usize, keep: bool, strategies: &[String], app: ElasticApp) -> Result<()> {
    let w = workloads::demo(nodes);
    let elastic = w.jobs.iter().filter(|j| j.malleable.is_some()).count();
    // The Slurm it runs on, as its daemon names it ("slurm-wlm 24.11.5";
    // the client commands need a configuration even for --version).
    let slurm = output(std::process::Command::new("slurmctld").arg("-V")).unwrap_or_default();
    let running = match app {
        ElasticApp::Example => "",
        ElasticApp::MpiRestart => ", the elastic ones the MPI Jacobi restarted (Open MPI and MPICH)",
    };
    println!(
        "demo: {} jobs ({elastic} elastic{running}) over {:.0} s on {nodes} nodes, once under each of: {}; {}",
        w.jobs.len(),
        w.jobs.last().map_or(0.0, |j| j.submit),
        strategies.join(", "),
        slurm.trim()
    );
    let set_up = Setup {
        name: "demo".into(),
        nodes,
        tick: 5,
        poll_ms: 250,
        keep,
        drain_timeout: Duration::from_secs(300),
        beside_backfill: false,
        app,
    };
    let staged = provision::build::staged_plugins(&repo_root())?;
    let runs = evaluate::real_runs(&staged, &w, strategies, &set_up)?;
    let mut summaries = Vec::new();
    for run in &runs {
        println!();
        println!("{} (times in s from the first submission):", run.label);
        print!("{}", evaluate::job_table(run));
        summaries.push(evaluate::real_summary(run)?);
    }
    println!();
    print!("{}", evaluate::summary_table(&summaries));
    let out = repo_root().join("target/demo");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let png = out.join("occupancy.png");
    gantt::draw(&runs.iter().collect::<Vec<_>>(), &png)?;
    let json = evaluate::write_json(&out, "summary.json", &summaries)?;
    println!();
    println!("node occupancy of each run (a row per node, a colour per job, elastic jobs outlined): {}", png.display());
    println!("summaries as malleable-sim compare writes them: {}", json.display());
    let mut wrong: Vec<String> = runs.iter().flat_map(evaluate::failures).collect();
    wrong.extend(check_elastic(&runs, &staged.join("bin"), app)?);
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n"))
    }
}

/// Each elastic job's result against the application alone (`--serial`):
/// what went wrong, if anything.
fn check_elastic(runs: &[RealRun], bin: &Path, app: ElasticApp) -> Result<Vec<String>> {
    let checksum = |text: &str| {
        text.lines()
            .find(|l| l.contains(": done iterations="))
            .and_then(|l| l.split(' ').find_map(|w| w.strip_prefix("checksum=")))
            .map(str::to_string)
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for run in runs {
        for j in run.jobs.iter().filter(|j| j.spec.malleable.is_some()) {
            let Some(out) = &j.output else { continue };
            let (command, _, args) = app.for_job(&j.spec);
            let mut serial = std::process::Command::new(bin.join(command));
            serial.arg("--serial").args(args.split_whitespace());
            let alone = checksum(&output(&mut serial)?);
            let got = checksum(&std::fs::read_to_string(out).unwrap_or_default());
            checked += 1;
            if got.is_none() || got != alone {
                wrong.push(format!(
                    "{}: job {} computed {} where the application alone computes {}",
                    run.label,
                    j.spec.id,
                    got.as_deref().unwrap_or("nothing"),
                    alone.as_deref().unwrap_or("nothing")
                ));
            }
        }
    }
    println!("elastic results checked against the application alone: {checked}, wrong: {}", wrong.len());
    Ok(wrong)
}
