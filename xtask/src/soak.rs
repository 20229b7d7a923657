//! `cargo xtask soak`: many jobs, a third of them elastic, through a local
//! cluster under mtct-backfill with arrivals compressed so that the queue
//! stays full and jobs resize often. It fails on any job lost, stuck or
//! ended in a way the workload did not ask for, and on a slurmctld that
//! died or restarted; it prints the counts and the pass and lock-hold times.

use std::time::Duration;

use cluster_eval::records::log_time;
use cluster_eval::replay::{ElasticApp, Replay};
use cluster_eval::throughput::quantile;
use cluster_eval::workloads;
use malleable_model::log_lines::{Ending, LogLine};
use testcluster::plugins::{self, tool_dir};
use testcluster::{Cluster, ClusterSpec};

use crate::evaluate;
use crate::{repo_root, setup, Result};

/// Mean seconds between arrivals on 32 nodes: a job brings about 22
/// node-seconds of work, so 0.6 s offers a little more than the machine
/// takes and the queue stays full (1,000 jobs: about 12 minutes); scaled
/// with the node count.
const GAP_ON_32: f64 = 0.6;

pub fn run(jobs: usize, nodes: usize) -> Result<()> {
    let gap = GAP_ON_32 * 32.0 / nodes as f64;
    let w = workloads::soak(jobs, nodes, gap, 1);
    println!(
        "soak: {jobs} jobs ({} elastic) on {nodes} nodes, one every {gap:.1} s on average, Strategy=mtct-backfill",
        w.jobs.iter().filter(|j| j.malleable.is_some()).count()
    );
    let staged = setup::build_plugins(&repo_root())?;
    let spec = plugins::sched_malleable(ClusterSpec::new("soak", nodes), &staged)
        .file("malleable.conf", "Strategy=mtct-backfill\nSchedulerTick=5\n")
        // The plugin says its pass and lock-hold times at debug level.
        .set("SlurmctldDebug", "debug");
    let cluster = Cluster::up(spec)?;
    let pid = cluster.controller_pid();
    let bin = tool_dir(&repo_root());
    let replay = Replay {
        app: ElasticApp::Example,
        cluster: &cluster,
        bin: &bin,
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
    let (read, apply, decide) = pass_times(&log);
    println!();
    println!("jobs:       {} submitted, {started} started by sched/malleable, {completed} completed", run.jobs.len());
    println!(
        "resizes:    {expands} expands and {shrinks} shrinks committed ({forced} shrinks forced), {} rolled back",
        run.rollbacks()
    );
    println!("passes:     {}", read.len());
    println!("  locks held to read:  {}", figures(read));
    println!("  locks held to apply: {}", figures(apply));
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

/// The plugin's debug line per pass: (read, apply, decide) milliseconds.
pub(crate) fn pass_times(log: &str) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut read, mut apply, mut decide) = (Vec::new(), Vec::new(), Vec::new());
    for line in log.lines().filter(|l| log_time(l).is_some()) {
        if let Some(LogLine::LocksHeld { read_ms, apply_ms, decide_ms, .. }) = LogLine::parse(line) {
            read.push(read_ms);
            apply.push(apply_ms);
            decide.push(decide_ms);
        }
    }
    (read, apply, decide)
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
    fn pass_times_are_read_from_the_debug_lines() {
        let log = "[2026-11-24T01:00:00.100] debug:  sched/malleable: pass 7: slurmctld's locks held 0.4 ms to read, 1.5 ms to apply (none while deciding, 2.0 ms)\n\
                   [2026-11-24T01:00:01.100] debug:  sched/malleable: pass 8: slurmctld's locks held 0.2 ms to read, 0.5 ms to apply (none while deciding, 9.0 ms)\n\
                   [2026-11-24T01:00:01.200] sched/malleable: started JobId=3 on n1 (mtct-backfill)\n";
        let (r, a, d) = pass_times(log);
        assert_eq!((r, a, d), (vec![0.4, 0.2], vec![1.5, 0.5], vec![2.0, 9.0]));
        assert_eq!(figures(vec![3.0, 1.0, 2.0]), "median 2.0 ms, 99th percentile 3.0 ms, max 3.0 ms");
    }
}
