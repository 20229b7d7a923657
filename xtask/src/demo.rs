//! The main job: a local cluster with sched/malleable under our MTCT with
//! backfilling, a mixed workload that backs the queue up: rigid jobs, and
//! elastic ones running the example application under mall-run, which grow
//! into idle nodes and shrink for waiting jobs; the schedule it produced,
//! every resize with its latency, and the elastic jobs' results checked.

use std::time::Duration;

use testcluster::jobs::{summarize, JobInfo};
use testcluster::plugins::tool_dir;
use testcluster::process::output;
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

/// Elastic jobs: (name, place in the submission order, max nodes for 8,
/// node constraint, iterations). They start on one node; the example
/// application takes 25 us a cell and iteration over 4096 cells: 100 ms an
/// iteration on one node, 12.5 ms on eight.
const ELASTIC: &[(&str, usize, usize, &str, u32)] =
    &[("elastic", 0, 8, "none", 300), ("elastic2", 6, 4, "pof2", 200), ("elastic", 12, 8, "even", 300)];

const APP: &str = "--cells 4096 --unit-us 25";

pub fn run(nodes: usize, keep: bool) -> Result<()> {
    let staged = setup::build_plugins(&repo_root())?;
    let spec = plugins::sched_malleable(ClusterSpec::new("demo", nodes), &staged)
        .file("malleable.conf", "Strategy=mtct-backfill\nSchedulerTick=5\n");
    let mut cluster = Cluster::up(spec)?;
    cluster.keep = keep;
    println!("cluster up: {nodes} nodes, SchedulerType=sched/malleable, Strategy=mtct-backfill");

    let bin = tool_dir(&repo_root());
    let mut ids = Vec::new();
    let mut elastic = Vec::new();
    for (i, (name, want, limit, work)) in WORKLOAD.iter().enumerate() {
        for &(ename, _, max, constraint, iterations) in ELASTIC.iter().filter(|e| e.1 == i) {
            let max = (max * nodes).div_ceil(8).clamp(1, nodes);
            let script = cluster.dir.join(format!("{ename}-{i}.sh"));
            let args = format!("{APP} --iterations {iterations}");
            std::fs::write(
                &script,
                format!(
                    "#!/bin/sh\nexec {} -- {} {args}\n",
                    bin.join("mall-run").display(),
                    bin.join("mall-example").display()
                ),
            )
            .map_err(|e| e.to_string())?;
            let out = cluster.dir.join(format!("{ename}-{i}.out"));
            let id = cluster.sbatch(&[
                &format!("--job-name={ename}"),
                &format!("--output={}", out.display()),
                "--nodes=1",
                "--min-nodes-invasive=1",
                &format!("--max-nodes-invasive={max}"),
                &format!("--node-constraints={constraint}"),
                "--time=5",
                script.to_str().unwrap_or_default(),
            ])?;
            ids.push(id);
            elastic.push((id, out, args));
        }
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
    println!(
        "submitted {} jobs ({} elastic, {}..{}), waiting for them",
        ids.len(),
        elastic.len(),
        ids[0],
        ids[ids.len() - 1]
    );
    let mut jobs = cluster.wait_all_finished(&ids, Duration::from_secs(600))?;
    jobs.sort_by_key(|j| j.id);

    let log = cluster.ctld_log();
    let by_plugin =
        jobs.iter().filter(|j| log.contains(&format!("sched/malleable: started JobId={} on", j.id))).count();
    print_schedule(&jobs);
    let mut s = summarize(&jobs, nodes as u32).ok_or("no job ran")?;
    // An elastic job's nodes changed as it ran: count them as they were.
    let mut used = s.utilization * (nodes as f64) * s.makespan_s as f64;
    for j in jobs.iter().filter(|j| elastic.iter().any(|e| e.0 == j.id)) {
        if let (Some(start), Some(end)) = (j.start, j.end) {
            used += elastic_node_seconds(&log, j.id, start, end) - f64::from(j.num_nodes) * (end - start) as f64;
        }
    }
    s.utilization = used / ((nodes as f64) * s.makespan_s as f64);
    println!();
    println!("jobs completed:              {}/{}", jobs.iter().filter(|j| j.state == "COMPLETED").count(), jobs.len());
    println!("started by sched/malleable:  {by_plugin}/{}", jobs.len());
    println!("backfilled (overtook an earlier job): {}", backfilled(&jobs).len());
    println!("mean wait:   {:.1} s", s.mean_wait_s);
    println!("makespan:    {} s", s.makespan_s);
    println!("utilization: {:.1} %", 100.0 * s.utilization);
    let wrong = report_elastic(&log, &elastic, &bin)?;
    if keep {
        println!("cluster left running: export SLURM_CONF={}", cluster.conf_path().display());
    }
    if by_plugin != jobs.len() || jobs.iter().any(|j| j.state != "COMPLETED") {
        cluster.print_logs();
        return Err("not every job completed through sched/malleable".into());
    }
    if wrong > 0 {
        return Err(format!("{wrong} elastic jobs did not compute what the application computes alone"));
    }
    Ok(())
}

/// The node-seconds an elastic job used from `start` to `end`, from the
/// plugin's lines: it starts on one node, each expand adds its nodes when
/// decided, each shrink (or rollback, or loss) takes them when done.
fn elastic_node_seconds(log: &str, id: u32, start: i64, end: i64) -> f64 {
    let head = format!("sched/malleable: JobId={id}: ");
    let count = |list: &str| list.split(' ').next().unwrap_or("").split(',').count() as i64;
    let mut events: Vec<(i64, i64)> = Vec::new();
    for line in log.lines() {
        let Some(at) = line.find(&head) else { continue };
        let what = &line[at + head.len()..];
        let Some(t) = line.get(1..20).and_then(testcluster::jobs::parse_time) else { continue };
        if let Some(list) = what.strip_prefix("expand onto ") {
            if what.contains("(resize ") {
                events.push((t, count(list)));
            } else if what.contains("rolled back") {
                events.push((t, -count(list)));
            }
        } else if let Some(list) = what.strip_prefix("shrink off ") {
            if what.contains(" committed ") || what.contains("forced") {
                events.push((t, -count(list)));
            }
        } else if let Some(list) = what.strip_prefix("lost ") {
            events.push((t, -count(list)));
        }
    }
    let (mut nodes, mut at, mut used) = (1i64, start, 0i64);
    for (t, change) in events {
        let t = t.clamp(start, end);
        used += nodes * (t - at);
        (nodes, at) = (nodes + change, t);
    }
    (used + nodes * (end - at)) as f64
}

/// Each elastic job's resizes, as the plugin logged them with their
/// latency, and whether its result is the application's alone; how many
/// results were wrong.
fn report_elastic(log: &str, elastic: &[(u32, std::path::PathBuf, String)], bin: &std::path::Path) -> Result<usize> {
    let checksum = |text: &str| {
        text.lines()
            .find(|l| l.contains(": done iterations="))
            .and_then(|l| l.split(' ').find_map(|w| w.strip_prefix("checksum=")))
            .map(str::to_string)
    };
    let mut wrong = 0;
    println!();
    println!("resizes (decision to commit):");
    for (id, out, args) in elastic {
        let head = format!("sched/malleable: JobId={id}: ");
        for line in log.lines().filter(|l| l.contains(&head) && l.contains(" committed ")) {
            let what = &line[line.find(&head).unwrap_or(0) + head.len()..];
            println!("  JobId={id}: {}", what.split(';').next().unwrap_or(what));
        }
        let mut serial = std::process::Command::new(bin.join("mall-example"));
        serial.arg("--serial").args(args.split_whitespace());
        let alone = checksum(&output(&mut serial)?);
        let got = checksum(&std::fs::read_to_string(out).unwrap_or_default());
        let same = got.is_some() && got == alone;
        println!(
            "  JobId={id}: checksum {} ({})",
            got.as_deref().unwrap_or("missing"),
            if same { "the same as the application alone" } else { "DIFFERENT from the application alone" }
        );
        wrong += usize::from(!same);
    }
    Ok(wrong)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_elastic_jobs_node_seconds_follow_its_resizes() {
        let log = "[2026-11-23T10:00:10.1] sched/malleable: JobId=4: expand onto n2,n3,n4 (resize 1, through JobId=5); x\n\
                   [2026-11-23T10:00:10.3] sched/malleable: JobId=4: expand onto n2,n3,n4 committed 0.2 s after the decision\n\
                   [2026-11-23T10:00:20.0] sched/malleable: JobId=4: shrink off n3,n4 (resize 2, mtct); waiting\n\
                   [2026-11-23T10:00:21.0] sched/malleable: JobId=4: shrink off n3,n4 committed 1.0 s after the decision\n\
                   [2026-11-23T10:00:25.0] sched/malleable: JobId=9: expand onto n5 (resize 3, through JobId=10); x\n";
        let t = |s: &str| testcluster::jobs::parse_time(s).unwrap();
        // 1 node for 10 s, 4 for 11 s, 2 for 9 s.
        let used = elastic_node_seconds(log, 4, t("2026-11-23T10:00:00"), t("2026-11-23T10:00:30"));
        assert_eq!(used, 10.0 + 44.0 + 18.0);
    }
}
