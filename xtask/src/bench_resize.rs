//! `cargo xtask bench-resize`: how long a malleable job's resize takes in
//! slurmctld, from the scheduler's decision to the application's commit
//! (the plugin logs both ends), expanding from 1 node to N and shrinking
//! from N back to 1, for N = 2, 8 and every node of a 32-node cluster.
//! The application is mall-example under mall-run with a small line, so
//! its own data movement is a few kilobytes; what is measured is the
//! scheduler, slurmctld, srun and the runtime.

use std::time::Duration;

use testcluster::plugins::{self, tool_dir};
use testcluster::{wait, Cluster, ClusterSpec};

use crate::{repo_root, setup, Result};

/// One measured resize.
#[derive(Clone, Debug, PartialEq)]
struct Resize {
    expand: bool,
    nodes: usize,
    seconds: f64,
}

/// The resizes of job `id` the plugin logged as committed.
fn resizes_of(log: &str, id: u32) -> Vec<Resize> {
    let head = format!("sched/malleable: JobId={id}: ");
    log.lines()
        .filter_map(|l| {
            let rest = &l[l.find(&head)? + head.len()..];
            let (expand, rest) = match rest.split_once(' ') {
                Some(("expand", r)) => (true, r.strip_prefix("onto ")?),
                Some(("shrink", r)) => (false, r.strip_prefix("off ")?),
                _ => return None,
            };
            let (list, rest) = rest.split_once(" committed ")?;
            let seconds = rest.split(' ').next()?.parse().ok()?;
            Some(Resize { expand, nodes: list.split(',').count(), seconds })
        })
        .collect()
}

fn figures(mut s: Vec<f64>) -> String {
    if s.is_empty() {
        return "-".into();
    }
    s.sort_by(f64::total_cmp);
    format!("{:.2} / {:.2} / {:.2} s ({} runs)", s[0], s[s.len() / 2], s[s.len() - 1], s.len())
}

pub fn run(nodes: usize, sizes: &[usize], rounds: usize) -> Result<()> {
    let staged = setup::build_plugins(&repo_root())?;
    let spec = plugins::sched_malleable(ClusterSpec::new("bench", nodes), &staged)
        .file("malleable.conf", "Strategy=mtct\nSchedulerTick=5\n");
    let cluster = Cluster::up(spec)?;
    let bin = tool_dir(&repo_root());
    let script = cluster.dir.join("bench.sh");
    // About 20 ms an iteration on one node, so a probe is never far.
    let app = format!("--cells {} --iterations 100000000 --unit-us 10 --report-every 50", 64 * nodes);
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {} --poll-ms 50 -- {} {app}\n",
            bin.join("mall-run").display(),
            bin.join("mall-example").display()
        ),
    )
    .map_err(|e| e.to_string())?;
    println!(
        "{nodes}-node cluster, Strategy=mtct; each size: expand 1 -> N, then {rounds} x (shrink N -> 1, expand 1 -> N)"
    );
    let mut table = Vec::new();
    for &n in sizes {
        let n = n.clamp(2, nodes);
        let out = cluster.dir.join(format!("bench-{n}.out"));
        let id = cluster.sbatch(&[
            &format!("--output={}", out.display()),
            "-N1",
            "--min-nodes-invasive=1",
            &format!("--max-nodes-invasive={n}"),
            "-t",
            "30",
            script.to_str().unwrap_or_default(),
        ])?;
        let commits = |want: usize| {
            wait::until(&format!("JobId={id}'s {want} resizes"), Duration::from_secs(120), || {
                let got = resizes_of(&cluster.ctld_log(), id).len();
                if got >= want {
                    Ok(Some(()))
                } else {
                    Err(format!("{got} so far"))
                }
            })
        };
        commits(1)?;
        for round in 0..rounds {
            // A rigid job for every node but one: the elastic job gives up
            // all but its batch host, then grows back once it has run.
            let rigid = cluster.sbatch(&[&format!("-N{}", nodes - 1), "-t", "1", "--wrap", "sleep 1"])?;
            commits(2 + 2 * round)?;
            cluster.wait_job(rigid, "to finish", Duration::from_secs(60), |j| j.is_finished())?;
            commits(3 + 2 * round)?;
        }
        let _ = cluster.cmd("scancel").arg(id.to_string()).status();
        cluster.wait_job(id, "to end", Duration::from_secs(60), |j| j.is_finished())?;
        let all = resizes_of(&cluster.ctld_log(), id);
        let pick = |expand: bool| all.iter().filter(|r| r.expand == expand).map(|r| r.seconds).collect::<Vec<_>>();
        table.push((n, figures(pick(true)), figures(pick(false))));
    }
    println!();
    println!("decision to commit, min / median / max:");
    println!("{:>6}  {:<34} {:<34}", "nodes", "expand 1 -> N", "shrink N -> 1");
    for (n, e, s) in table {
        println!("{n:>6}  {e:<34} {s:<34}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_resizes_are_read_from_the_plugins_lines() {
        let log = "[t] sched/malleable: JobId=3: expand onto n2,n3,n4 (resize 1, through JobId=4); it now holds n[1-4]\n\
                   [t] sched/malleable: JobId=3: expand onto n2,n3,n4 committed 0.35 s after the decision\n\
                   [t] sched/malleable: JobId=3: shrink off n3,n4 committed 0.25 s after the decision; it now holds n[1-2]\n\
                   [t] sched/malleable: JobId=5: shrink off n2 committed 0.10 s after the decision; it now holds n1\n";
        assert_eq!(
            resizes_of(log, 3),
            vec![Resize { expand: true, nodes: 3, seconds: 0.35 }, Resize { expand: false, nodes: 2, seconds: 0.25 }]
        );
        assert_eq!(figures(vec![0.3, 0.1, 0.2]), "0.10 / 0.20 / 0.30 s (3 runs)");
    }
}
