//! `cargo xtask soak`'s run: many jobs, a third of them elastic, through a local
//! cluster under mtct-backfill with arrivals compressed so that the queue
//! stays full and jobs resize often. It fails on any job lost, stuck or
//! ended in a way the workload did not ask for, and on a slurmctld that
//! died or restarted; it prints the counts and the pass and lock-hold times.

use std::path::Path;
use std::time::Duration;

use malleable_model::log_lines::{Ending, LogLine};
use testcluster::plugins;
use testcluster::{Cluster, ClusterSpec};

use super::common::{self as evaluate, pass_times, PassTimes, Result};
use crate::replay::{ElasticApp, Replay};
use crate::throughput::quantile;
use crate::workloads;

/// Mean seconds between arrivals on 32 nodes: a job brings about 22
/// node-seconds of work, so 0.6 s offers a little more than the machine
/// takes and the queue stays full (1,000 jobs: about 12 minutes); scaled
/// with the node count.
const GAP_ON_32: f64 = 0.6;

/// The soak, with the plugins staged in `staged` and the jobs' tools
/// (mall-run, mall-example) in `tools`.
pub fn run(staged: &Path, tools: &Path, jobs: usize, nodes: usize) -> Result<()> {
    let gap = GAP_ON_32 * 32.0 / nodes as f64;
    let w = workloads::soak(jobs, nodes, gap, 1);
    println!(
        "soak: {jobs} jobs ({} elastic) on {nodes} nodes, one every {gap:.1} s on average, Strategy=mtct-backfill",
        w.jobs.iter().filter(|j| j.malleable.is_some()).count()
    );
    let spec = plugins::sched_malleable(ClusterSpec::new("soak", nodes), staged)
        .file("malleable.conf", "Strategy=mtct-backfill\nSchedulerTick=5\n")
        // The plugin says its pass and lock-hold times at debug level.
        .set("SlurmctldDebug", "debug");
    let cluster = Cluster::up(spec)?;
    let pid = cluster.controller_pid();
    let replay = Replay {
        app: ElasticApp::Example,
        cluster: &cluster,
        bin: tools,
        poll_ms: 500,
        label: "mtct-backfill".into(),
        drain_timeout: Duration::from_secs(900),
    };
    let run = replay.run(&w).inspect_err(|_| cluster.print_logs())?;
    let log = cluster.ctld_log();
    let alive = cluster.controller_running() && cluster.controller_pid() == pid;

    let started = run.jobs.iter().filter(|j| j.logged.start.is_some()).count();
    let completed = run.jobs.iter().filter(|j| j.state == "COMPLETED").count();
    let expands: u32 = run.jobs.iter().map(|j| j.logged.expands).sum();
    let shrinks: u32 = run.jobs.iter().map(|j| j.logged.shrinks).sum();
    let forced = LogLine::all(&log)
        .filter(|l| matches!(l, LogLine::Released { ending: Ending::ShrinkForced { .. }, .. }))
        .count();
    let PassTimes { read, apply, on_cpu, decide, .. } = pass_times(&log);
    println!();
    println!("jobs:       {} submitted, {started} started by sched/malleable, {completed} completed", run.jobs.len());
    println!(
        "resizes:    {expands} expands and {shrinks} shrinks committed ({forced} shrinks forced), {} rolled back",
        run.rollbacks()
    );
    println!("passes:     {}", read.len());
    println!("  locks held to read:  {}", figures(read));
    println!("  locks held to apply: {}", figures(apply));
    println!("  of which on the CPU: {}", figures(on_cpu));
    println!("  deciding (no locks): {}", figures(decide));
    println!("slurmctld:  {}", if alive { "alive throughout (same pid)" } else { "DIED or restarted" });
    let mut wrong = evaluate::failures(&run);
    if !alive {
        wrong.push("slurmctld did not stay up".into());
    }
    if wrong.is_empty() {
        println!("0 lost, 0 stuck, 0 failed");
        Ok(())
    } else {
        cluster.print_logs();
        Err(wrong.join("\n"))
    }
}

/// Median, 99th percentile and maximum.
fn figures(mut v: Vec<f64>) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| quantile(&v, q).unwrap_or(0.0);
    format!("median {:.1} ms, 99th percentile {:.1} ms, max {:.1} ms", at(0.5), at(0.99), at(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_median_99th_percentile_and_max() {
        assert_eq!(figures(vec![3.0, 1.0, 2.0]), "median 2.0 ms, 99th percentile 3.0 ms, max 3.0 ms");
    }
}
