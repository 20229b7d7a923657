//! The main job: a local cluster with sched/malleable, a mixed workload that
//! backs the queue up (so EASY has something to backfill), and the schedule
//! it produced.

use std::time::Duration;

use testcluster::jobs::{summarize, JobInfo};
use testcluster::{plugins, Cluster, ClusterSpec};

use crate::{repo_root, setup, Result};

/// (name, nodes, time limit in minutes, seconds of work). Sizes are for 8
/// nodes and scale down with fewer. Limits are what the scheduler plans
/// with; the work is what the job really takes.
const WORKLOAD: &[(&str, usize, u32, u32)] = &[
    ("wide", 6, 3, 10),
    ("mid", 4, 2, 6),
    ("small", 2, 1, 4),
    ("full", 8, 2, 5),
    ("tiny", 1, 1, 3),
    ("long", 1, 5, 8),
    ("trio", 3, 1, 4),
    ("half", 4, 2, 6),
    ("tiny", 1, 1, 2),
    ("pair", 2, 1, 3),
    ("wide", 7, 2, 5),
    ("tiny", 1, 1, 2),
    ("quad", 4, 1, 4),
    ("trio", 3, 2, 5),
    ("single", 1, 3, 6),
    ("full", 8, 1, 4),
    ("pair", 2, 1, 2),
    ("half", 4, 1, 3),
    ("tiny", 1, 1, 2),
    ("wide", 6, 1, 4),
];

pub fn run(nodes: usize, keep: bool) -> Result<()> {
    let staged = setup::build_plugins(&repo_root())?;
    let mut cluster = Cluster::up(plugins::sched_malleable(ClusterSpec::new("demo", nodes), &staged))?;
    cluster.keep = keep;
    println!("cluster up: {nodes} nodes, SchedulerType=sched/malleable, Strategy=easy");

    let mut ids = Vec::new();
    for (name, want, limit, work) in WORKLOAD {
        let n = (want * nodes).div_ceil(8).clamp(1, nodes);
        let id = cluster.sbatch(&[
            &format!("--job-name={name}"),
            &format!("--nodes={n}"),
            &format!("--time={limit}"),
            "--wrap",
            &format!("sleep {work}"),
        ])?;
        ids.push(id);
    }
    println!("submitted {} jobs ({}..{}), waiting for them", ids.len(), ids[0], ids[ids.len() - 1]);
    let mut jobs = cluster.wait_all_finished(&ids, Duration::from_secs(600))?;
    jobs.sort_by_key(|j| j.id);

    let log = cluster.ctld_log();
    let by_plugin =
        jobs.iter().filter(|j| log.contains(&format!("sched/malleable: started JobId={} on", j.id))).count();
    print_schedule(&jobs);
    let s = summarize(&jobs, nodes as u32).ok_or("no job ran")?;
    println!();
    println!("jobs completed:              {}/{}", jobs.iter().filter(|j| j.state == "COMPLETED").count(), jobs.len());
    println!("started by sched/malleable:  {by_plugin}/{}", jobs.len());
    println!("backfilled (overtook an earlier job): {}", backfilled(&jobs).len());
    println!("mean wait:   {:.1} s", s.mean_wait_s);
    println!("makespan:    {} s", s.makespan_s);
    println!("utilization: {:.1} %", 100.0 * s.utilization);
    if keep {
        println!("cluster left running: export SLURM_CONF={}", cluster.conf_path().display());
    }
    if by_plugin != jobs.len() || jobs.iter().any(|j| j.state != "COMPLETED") {
        cluster.print_logs();
        return Err("not every job completed through sched/malleable".into());
    }
    Ok(())
}

/// Jobs that started before some job submitted ahead of them: EASY's backfill.
fn backfilled(jobs: &[JobInfo]) -> Vec<u32> {
    jobs.iter().filter(|j| jobs.iter().any(|e| e.id < j.id && e.start > j.start)).map(|j| j.id).collect()
}

fn print_schedule(jobs: &[JobInfo]) {
    let t0 = jobs.iter().filter_map(|j| j.submit).min().unwrap_or(0);
    let rel = |t: Option<i64>| t.map_or("-".to_string(), |t| format!("{:+}", t - t0));
    let bf = backfilled(jobs);
    println!();
    println!(
        "{:>6} {:<8} {:>5} {:>6} {:>7} {:>6} {:>5} {:>5}  nodelist",
        "job", "name", "nodes", "limit", "submit", "start", "end", "wait"
    );
    for j in jobs {
        let wait = match (j.submit, j.start) {
            (Some(a), Some(b)) => format!("{}", b - a),
            _ => "-".into(),
        };
        println!(
            "{:>6} {:<8} {:>5} {:>6} {:>7} {:>6} {:>5} {:>5}  {:<12} {}",
            j.id,
            j.name,
            j.num_nodes,
            j.time_limit.trim_start_matches("00:"),
            rel(j.submit),
            rel(j.start),
            rel(j.end),
            wait,
            j.node_list,
            if bf.contains(&j.id) { "backfilled" } else { "" }
        );
    }
}
