//! `cargo xtask bench-scale`'s run: sched/malleable in a slurmctld with a big
//! machine's node table (a few nodes with a slurmd, the rest without, which
//! slurmctld marks not responding and then down) and a long queue. Each
//! strategy in turn (switched by `scontrol reconfigure` on the same queue):
//! its pass time and slurmctld lock hold time, median and max, from the
//! plugin's debug line per pass, and how long `squeue` took meanwhile.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use testcluster::plugins;
use testcluster::{Cluster, ClusterSpec};

use super::common::{pass_times, switch_strategy, Result};
use crate::records::log_time;
use crate::throughput::quantile;

/// Nodes with a slurmd; the rest are phantoms.
const REAL: usize = 4;

/// How long each strategy is watched.
const WATCH: Duration = Duration::from_secs(20);

/// The strategies, with what each needs in malleable.conf besides its name.
const STRATEGIES: &[(&str, &str)] = &[
    ("fcfs", ""),
    ("easy", ""),
    ("conservative", ""),
    ("mtct", ""),
    ("fpsma", ""),
    ("mtct-backfill", ""),
    ("power", "PowerCorridor=0-10000000\n"),
    ("power-running-only", "PowerCorridor=0-10000000\n"),
    ("natural", ""),
    ("natural-plan", ""),
];

/// The bench, with the plugins staged in `staged`.
pub fn run(staged: &Path, nodes: usize, jobs: usize, keep: bool) -> Result<()> {
    let nodes = nodes.max(REAL);
    println!("bench-scale: {nodes} nodes in slurmctld's table ({REAL} with a slurmd), {jobs} jobs waiting");
    let spec = plugins::sched_malleable(ClusterSpec::new("scale", REAL), staged)
        .phantoms(nodes - REAL)
        // The power strategies need defer; it changes nothing for sbatch jobs.
        .set("SchedulerParameters", plugins::POWER_SCHEDULER_PARAMETERS)
        .set("MaxJobCount", &(jobs * 2 + 1000).to_string())
        .set("SlurmdTimeout", "30")
        // The plugin says its pass and lock-hold times at debug level.
        .set("SlurmctldDebug", "debug")
        .file("malleable.conf", "Strategy=fcfs\nSchedulerTick=1\n");
    let mut cluster = Cluster::up(spec)?;
    // --keep: left running, its queue full, to look at (perf, squeue).
    cluster.keep = keep;
    submit_all(&cluster, jobs)?;
    let queued = cluster.jobs()?.iter().filter(|j| j.is_pending()).count();
    println!("{queued} jobs pending; each strategy watched for {} s (SchedulerTick=1)", WATCH.as_secs());
    println!();
    println!(
        "{:<20}{:>8}{:>16}{:>12}{:>16}{:>12}{:>14}",
        "strategy", "passes", "pass median", "pass max", "locks median", "locks max", "squeue max"
    );
    let mut worst_squeue = 0.0f64;
    let mut worst_pass = 0.0f64;
    for (name, extra) in STRATEGIES {
        switch_strategy(&cluster, name, extra)?;
        let start_at = cluster.ctld_log().len();
        let mut squeue = Vec::new();
        let until = Instant::now() + WATCH;
        while Instant::now() < until {
            let t = Instant::now();
            let out = cluster.cmd("squeue").args(["-h", "-o", "%i"]).output().map_err(|e| e.to_string())?;
            squeue.push(t.elapsed().as_secs_f64());
            if !out.status.success() {
                return Err(format!("squeue failed: {}", String::from_utf8_lossy(&out.stderr)));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        let log = cluster.ctld_log();
        let window: String = log[start_at..].lines().filter(|l| log_time(l).is_some()).collect::<Vec<_>>().join("\n");
        let (read, apply, decide) = pass_times(&window);
        let mut pass: Vec<f64> = read.iter().zip(&apply).zip(&decide).map(|((r, a), d)| r + a + d).collect();
        let mut locks: Vec<f64> = read.iter().zip(&apply).map(|(r, a)| r + a).collect();
        pass.sort_by(f64::total_cmp);
        locks.sort_by(f64::total_cmp);
        squeue.sort_by(f64::total_cmp);
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1} ms"));
        println!(
            "{name:<20}{:>8}{:>16}{:>12}{:>16}{:>12}{:>14}",
            pass.len(),
            ms(quantile(&pass, 0.5)),
            ms(quantile(&pass, 1.0)),
            ms(quantile(&locks, 0.5)),
            ms(quantile(&locks, 1.0)),
            format!("{:.2} s", quantile(&squeue, 1.0).unwrap_or(0.0))
        );
        worst_squeue = worst_squeue.max(quantile(&squeue, 1.0).unwrap_or(0.0));
        worst_pass = worst_pass.max(quantile(&pass, 0.5).unwrap_or(0.0));
    }
    println!();
    println!(
        "targets: pass median at most 10 ms (worst {worst_pass:.1} ms), squeue within 1 s (worst {worst_squeue:.2} s)"
    );
    if worst_squeue > 1.0 {
        return Err(format!("squeue took {worst_squeue:.2} s, above 1 s"));
    }
    Ok(())
}

/// Submit `jobs` jobs of 1 to REAL nodes with limits from 1 to 60 minutes,
/// from a few threads at once, with a progress line.
fn submit_all(cluster: &Cluster, jobs: usize) -> Result<()> {
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    let threads = 4;
    std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let done = &done;
                s.spawn(move || -> Result<()> {
                    for i in (t..jobs).step_by(threads) {
                        let nodes = format!("-N{}", 1 + i % REAL);
                        let limit = format!("-t{}", 1 + (i * 7) % 60);
                        cluster.sbatch(&[&nodes, &limit, "--wrap", "sleep 3600"])?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        // Redrawn in place on a terminal, a line every 30 s in a log.
        let tty = std::io::stderr().is_terminal();
        let mut said = Instant::now();
        while handles.iter().any(|h| !h.is_finished()) {
            let line = format!(
                "submitted {} of {jobs} ({:.0} s)",
                done.load(Ordering::Relaxed),
                started.elapsed().as_secs_f64()
            );
            if tty {
                eprint!("\r{line}");
                let _ = std::io::stderr().flush();
            } else if said.elapsed() >= Duration::from_secs(30) {
                eprintln!("{line}");
                said = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        eprintln!("{}submitted {jobs} in {:.0} s", if tty { "\r" } else { "" }, started.elapsed().as_secs_f64());
        for h in handles {
            h.join().map_err(|_| "a submitting thread panicked".to_string())??;
        }
        Ok(())
    })
}
