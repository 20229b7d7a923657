//! `cargo xtask bench-site`'s run: how long a resize holds slurmctld's job and node
//! write locks on the compose site, where each resize waits under them for
//! slurmdbd's answers (on MariaDB): alice's elastic job grows onto two hosts,
//! bob's two-host job makes it shrink, it grows back, `--rounds` times. The
//! figures are the plugin's own (`pass N: slurmctld's locks held`, logged at
//! SlurmctldDebug=debug): for an expand, the locks held to apply in the pass
//! that made it; for a shrink, held to read in the pass that committed it.

use std::path::Path;
use std::time::Duration;

use malleable_model::log_lines::{Ending, LogLine};
use malleable_model::JobId;
use testcluster::compose::{spec::USERS, Site, SiteSpec};
use testcluster::wait;

use super::common::Result;

/// The elastic job: the README's, long enough for every round.
const JOB: &str = "#!/bin/sh
#SBATCH --nodes=2 --min-nodes-invasive=2 --max-nodes-invasive=4 --node-constraints=even
#SBATCH --time=20 --output=bench-%j.out
mall-run -- mall-example --cells 8192 --iterations 1000000 --unit-us 25
";

/// The bench on a site of Slurm `slurm` ("26.05"), with the plugins
/// staged for it in `staged`, the site's files under `target` (the
/// workspace's target/); `controller_first`: the compute hosts at a low
/// CPU weight ([`SiteSpec::controller_first`]).
pub fn run(staged: &Path, target: &Path, slurm: &str, rounds: usize, controller_first: bool) -> Result<()> {
    let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let spec = SiteSpec::new("bench-site", 4, cores).slurm(slurm)?.set("SlurmctldDebug", "debug");
    let spec = if controller_first { spec.controller_first() } else { spec };
    let site = Site::up(spec, target.parent().ok_or("target/ has no parent")?, staged)?;
    let result = measure(&site, rounds.max(1));
    site.down();
    result
}

fn measure(site: &Site, rounds: usize) -> Result<()> {
    let (_, uid, _) = USERS.iter().find(|u| u.0 == "alice").ok_or("no user alice on the site")?;
    let script = site.dir.join("home/alice/bench.sh");
    std::fs::write(&script, JOB).map_err(|e| format!("{}: {e}", script.display()))?;
    std::os::unix::fs::chown(&script, Some(*uid), Some(*uid)).map_err(|e| e.to_string())?;
    let out = site.output(Some("alice"), "login", &["sbatch", "--parsable", "/home/alice/bench.sh"])?;
    let id: u32 = out.trim().parse().map_err(|_| format!("sbatch printed {out:?}"))?;
    // The job's expands onto c3 and c4 committed, and its shrinks off them.
    let on_c3_c4 = |nodes: &[String]| nodes.join(",") == "c3,c4";
    let expands =
        |l: &LogLine| matches!(l, LogLine::ExpandCommitted { job, nodes, .. } if *job == JobId(id) && on_c3_c4(nodes));
    let shrinks = |l: &LogLine| {
        matches!(l, LogLine::Released { job, ending: Ending::ShrinkCommitted { nodes, .. }, .. }
            if *job == JobId(id) && on_c3_c4(nodes))
    };
    let count =
        |which: &dyn Fn(&LogLine) -> bool| LogLine::all(&site.log("slurmctld", "slurmctld.log")).filter(which).count();
    let until = |what: &str, which: &dyn Fn(&LogLine) -> bool, n: usize| {
        wait::until(what, Duration::from_secs(120), || Ok((count(which) >= n).then_some(())))
    };
    until("the first expand", &expands, 1)?;
    for round in 1..=rounds {
        site.output(Some("bob"), "login", &["sbatch", "-N2", "-t", "1", "--wrap", "sleep 1"])?;
        until(&format!("shrink {round}"), &shrinks, round)?;
        until(&format!("expand {}", round + 1), &expands, round + 1)?;
        println!("bench-site: round {round} of {rounds} done");
    }
    site.output(Some("alice"), "login", &["scancel", &id.to_string()])?;

    let log = site.log("slurmctld", "slurmctld.log");
    let (expands, shrinks) = held_by_resizes(&log, id);
    println!(
        "bench-site: Slurm {}, 4 hosts, slurmdbd on MariaDB, {} cores{}",
        site.spec.release().upstream(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        if site.spec.compute_cpu_shares.is_some() { ", the compute hosts at a low CPU weight" } else { "" }
    );
    say("expand (the helper's start and two records: 3 answers from slurmdbd on 22.05)", &expands);
    say("shrink (one record: 1 answer on 22.05)", &shrinks);
    Ok(())
}

/// One kind's line: the hold's median and max, and the medians of how
/// the agent thread spent it (on the CPU, runnable but waiting for one,
/// and the rest: blocked, on slurmdbd's answers where Slurm waits for
/// them under the locks, or on munged's).
fn say(what: &str, holds: &[Hold]) {
    let of = |f: fn(&Hold) -> f64| summary(&holds.iter().map(f).collect::<Vec<_>>());
    match (of(|h| h.held), of(|h| h.on_cpu), of(|h| h.queued), of(Hold::blocked)) {
        (Some((median, max)), Some((cpu, _)), Some((queued, _)), Some((blocked, _))) => println!(
            "bench-site: {what}: locks held median {median:.1} ms, max {max:.1} ms ({} resizes); medians of \
             the hold: on the CPU {cpu:.1} ms, waiting for a CPU {queued:.1} ms, blocked {blocked:.1} ms",
            holds.len()
        ),
        _ => println!("bench-site: {what}: none seen"),
    }
}

/// How long one resize held the locks, and how the agent thread spent it
/// (the pass's figures: for an expand its read takes well under a
/// millisecond beside the apply).
#[derive(Debug, PartialEq)]
struct Hold {
    held: f64,
    on_cpu: f64,
    queued: f64,
}

impl Hold {
    fn blocked(&self) -> f64 {
        (self.held - self.on_cpu - self.queued).max(0.0)
    }
}

/// The locks held by the passes that resized job `id`: for each expand,
/// "to apply" of the first pass line after its decision; for each shrink,
/// "to read" of the first pass line after its commit.
fn held_by_resizes(log: &str, id: u32) -> (Vec<Hold>, Vec<Hold>) {
    let job = JobId(id);
    let c3c4 = |nodes: &[String]| nodes == ["c3", "c4"];
    let (mut expands, mut shrinks) = (Vec::new(), Vec::new());
    let mut waiting: Option<bool> = None;
    for line in LogLine::all(log) {
        match line {
            LogLine::Expanding { job: j, nodes, .. } if j == job && c3c4(&nodes) => waiting = Some(true),
            LogLine::Released { job: j, ending: Ending::ShrinkCommitted { nodes, .. }, .. }
                if j == job && c3c4(&nodes) =>
            {
                waiting = Some(false)
            }
            LogLine::LocksHeld { read_ms, apply_ms, on_cpu_ms, queued_ms, .. } => {
                let hold = |held| Hold { held, on_cpu: on_cpu_ms, queued: queued_ms.unwrap_or(0.0) };
                match waiting.take() {
                    Some(true) => expands.push(hold(apply_ms.unwrap_or(0.0))),
                    Some(false) => shrinks.push(hold(read_ms)),
                    None => {}
                }
            }
            _ => {}
        }
    }
    (expands, shrinks)
}

/// Median and max.
fn summary(ms: &[f64]) -> Option<(f64, f64)> {
    let mut v = ms.to_vec();
    v.sort_by(f64::total_cmp);
    Some((*v.get(v.len() / 2)?, *v.last()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_resize_takes_the_pass_line_after_it() {
        let log = "\
[t] sched/malleable: JobId=1: expand onto c3,c4 (resize 1, through JobId=2); it now holds c[1-4] (mtct); waiting for its application to commit
[t] debug:  sched/malleable: pass 8: slurmctld's locks held 0.1 ms to read, 226.9 ms to apply, on the CPU 1.5 ms of them, waiting for one 4.0 ms (none while deciding, 0.0 ms)
[t] debug:  sched/malleable: pass 9: slurmctld's locks held 0.3 ms to read, 0.2 ms to apply, on the CPU 0.0 ms of them (none while deciding, 0.0 ms)
[t] sched/malleable: JobId=1: shrink off c3,c4 committed 0.12 s after the decision; it now holds c[1-2]
[t] debug:  sched/malleable: pass 23: slurmctld's locks held 93.1 ms to read, 2.3 ms to apply, on the CPU 0.0 ms of them (none while deciding, 0.0 ms)
[t] sched/malleable: JobId=7: expand onto c3,c4 (resize 3, through JobId=8); it now holds c[1-4] (mtct); waiting for its application to commit
[t] debug:  sched/malleable: pass 30: slurmctld's locks held 0.3 ms to read, 50.0 ms to apply, on the CPU 0.0 ms of them (none while deciding, 0.0 ms)
";
        let (expands, shrinks) = held_by_resizes(log, 1);
        assert_eq!(expands, vec![Hold { held: 226.9, on_cpu: 1.5, queued: 4.0 }]);
        assert_eq!(expands[0].blocked(), 226.9 - 1.5 - 4.0);
        assert_eq!(shrinks, vec![Hold { held: 93.1, on_cpu: 0.0, queued: 0.0 }]);
        assert_eq!(summary(&[3.0, 1.0, 2.0]), Some((2.0, 3.0)));
        assert_eq!(summary(&[]), None);
    }
}
