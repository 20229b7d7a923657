//! `cargo xtask bench-ipsched`'s run: IPSCHED's pass inside slurmctld on a local
//! cluster of nodes with 8 CPUs and 2 GPUs (select/cons_tres, GPUs as
//! GRES), the queue the CPU-GPU ESP's 456 A-M jobs scaled to its cores
//! (Table 4's fractions, sizes moved by up to 4 cores as Table 7, each once
//! on CPUs and once with 2 GPUs a node; `sleep`, so nothing ends). Each
//! round submits the queue anew into a closed partition and opens it: the
//! first pass then solves the whole window over every node, the passes
//! after it over what is left. Pass, lock-hold and deciding times come
//! from the plugin's debug line per pass, for `Strategy=ipsched` and EASY
//! on the same queue.

use std::path::Path;
use std::time::{Duration, Instant};

use malleable_model::log_lines::LogLine;
use malleable_sim::workloads::cpu_gpu_esp::{CORES, GPUS, RAGGED, TABLE_4};
use testcluster::plugins;
use testcluster::{Cluster, ClusterSpec, NodeShape};

use super::common::{pass_times, switch_strategy, PassTimes, Result};
use crate::records::log_time;
use crate::throughput::quantile;

/// Rounds per strategy, each from an empty cluster.
const ROUNDS: usize = 5;

/// How long each round's passes are watched.
const WATCH: Duration = Duration::from_secs(5);

/// The queue: each A-M job of Table 4 twice (CPUs only, then 2 GPUs a
/// node), its cores the type's fraction of `nodes` x 8, moved by up to 4
/// (by a fixed sequence, so every round and strategy sees the same queue).
pub fn queue(nodes: usize) -> Vec<Vec<String>> {
    let total = (nodes as u32 * CORES) as f64;
    let mut jobs = Vec::new();
    let mut k: i64 = 0;
    for &(name, fraction, count, _) in TABLE_4.iter().filter(|t| t.0 != "Z") {
        for _ in 0..count {
            let base = (fraction * total).round() as i64;
            k += 1;
            let moved = (k * 7919) % (2 * RAGGED + 1) - RAGGED;
            let cores = (base + moved).clamp(1, total as i64);
            for gpus in [0, GPUS] {
                let mut args = vec![format!("--job-name={name}"), format!("-n{cores}"), "-t60".to_string()];
                if gpus > 0 {
                    args.push(format!("--gres=gpu:{gpus}"));
                }
                jobs.push(args);
            }
        }
    }
    jobs
}

/// The bench, with the plugins staged in `staged`.
pub fn run(staged: &Path, nodes: usize, keep: bool) -> Result<()> {
    let spec = plugins::sched_malleable(ClusterSpec::new("bench-ipsched", nodes), staged)
        .shape(NodeShape { cores: CORES, gpus: GPUS, memory_mb: 0 })
        .set("SelectType", "select/cons_tres")
        .set("SelectTypeParameters", "CR_Core")
        .set("MaxJobCount", "10000")
        // The plugin says its pass and lock-hold times at debug level.
        .set("SlurmctldDebug", "debug")
        .file("malleable.conf", "Strategy=ipsched\nSchedulerTick=1\n");
    let mut cluster = Cluster::up(spec)?;
    cluster.keep = keep;
    let jobs = queue(nodes);
    println!(
        "bench-ipsched: {nodes} nodes of {CORES} CPUs and {GPUS} GPUs, {} jobs waiting (the CPU-GPU ESP's A-M, sizes \
         scaled to {} cores); {ROUNDS} rounds a strategy, each from an empty cluster",
        jobs.len(),
        nodes as u32 * CORES
    );
    println!();
    println!(
        "{:<12}{:>14}{:>14}{:>10}{:>16}{:>12}{:>16}{:>12}",
        "strategy", "first pass", "(max)", "started", "later passes", "(max)", "locks median", "(max)"
    );
    for name in ["ipsched", "easy"] {
        switch_strategy(&cluster, name, "")?;
        let (mut first, mut later, mut locks, mut started) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            empty(&cluster)?;
            partition(&cluster, "DOWN")?;
            for args in &jobs {
                let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
                a.extend(["--wrap", "sleep 3600"]);
                cluster.sbatch(&a)?;
            }
            let from = cluster.ctld_log().len();
            partition(&cluster, "UP")?;
            std::thread::sleep(WATCH);
            let log = cluster.ctld_log();
            let window: Vec<&str> = log[from..].lines().filter(|l| log_time(l).is_some()).collect();
            let PassTimes { read, apply, decide, .. } = pass_times(&window.join("\n"));
            let pass: Vec<f64> = read.iter().zip(&apply).zip(&decide).map(|((r, a), d)| r + a + d).collect();
            // The pass that made the first starts (its line follows them):
            // the whole window on every node.
            let said: Vec<Option<LogLine>> = window.iter().map(|l| LogLine::parse(l)).collect();
            let is_start = |l: &Option<LogLine>| matches!(l, Some(LogLine::Started { .. }));
            let first_start = said.iter().position(is_start);
            let pass_lines: Vec<usize> =
                (0..said.len()).filter(|&i| matches!(said[i], Some(LogLine::LocksHeld { .. }))).collect();
            let first_at = first_start.and_then(|s| pass_lines.iter().position(|&i| i > s));
            if let Some(p) = first_at.and_then(|k| pass.get(k)) {
                first.push(*p);
            }
            later.extend(pass.iter().enumerate().filter(|(k, _)| Some(*k) != first_at).map(|(_, p)| *p));
            locks.extend(read.iter().zip(&apply).map(|(r, a)| r + a));
            started.push(said.iter().filter(|l| is_start(l)).count() as f64);
        }
        for v in [&mut first, &mut later, &mut locks, &mut started] {
            v.sort_by(f64::total_cmp);
        }
        let ms = |v: &[f64], q: f64| quantile(v, q).map_or("-".to_string(), |x| format!("{x:.1} ms"));
        println!(
            "{name:<12}{:>14}{:>14}{:>10}{:>16}{:>12}{:>16}{:>12}",
            ms(&first, 0.5),
            ms(&first, 1.0),
            quantile(&started, 0.5).map_or(0.0, |s| s),
            ms(&later, 0.5),
            ms(&later, 1.0),
            ms(&locks, 0.5),
            ms(&locks, 1.0)
        );
    }
    println!();
    println!("first pass: the pass that made a round's first starts, on the emptied cluster (median and max over");
    println!(
        "the rounds); started: jobs started in a round (median); later passes: the others ({} s a round)",
        WATCH.as_secs()
    );
    Ok(())
}

fn partition(c: &Cluster, state: &str) -> Result<()> {
    testcluster::process::run(c.cmd("scontrol").args(["update", "PartitionName=batch", &format!("State={state}")]))
}

/// Cancel every job and wait until every node is idle.
fn empty(c: &Cluster) -> Result<()> {
    let live: Vec<String> = c.jobs()?.iter().filter(|j| !j.is_finished()).map(|j| j.id.to_string()).collect();
    if !live.is_empty() {
        testcluster::process::run(c.cmd("scancel").args(&live))?;
    }
    let t = Instant::now();
    c.wait_nodes_idle(Duration::from_secs(120)).map_err(|e| format!("{e} (after {:.0?})", t.elapsed()))
}
