//! On a real cluster: `Strategy=` in malleable.conf picks the core's policy
//! that slurmctld runs. Each test sets up a queue on which that policy and
//! EASY (the default, cluster_scheduling.rs) start different jobs.

use std::time::Duration;

use cluster_tests::{spec, start_lines, up_with};
use testcluster::Cluster;

fn up_with_strategy(name: &str, strategy: &str) -> Cluster {
    up_with(spec(name, 4).file("malleable.conf", &format!("Strategy={strategy}\nSchedulerTick=5\n")))
}

/// Every job completed and was started once, by the plugin running `strategy`.
fn check_all_started_by(c: &Cluster, jobs: &[testcluster::jobs::JobInfo], strategy: &str) {
    for j in jobs {
        assert_eq!(j.state, "COMPLETED", "{} ended {}", j.name, j.state);
        let lines = start_lines(c, j.id);
        assert_eq!(lines.len(), 1, "{} should be started once by the plugin: {lines:?}", j.name);
        assert!(lines[0].ends_with(&format!("({strategy})")), "{} started by another strategy: {}", j.name, lines[0]);
    }
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn mtct_serves_rigid_jobs_strictly_in_order() {
    let c = up_with_strategy("t-mtct", "mtct");
    // A holds 3 of 4 nodes; B, needing all 4, is the blocked head job.
    let a = c.sbatch(&["-J", "A", "-N3", "-t", "2", "--wrap", "sleep 15"]).unwrap();
    c.wait_job(a, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let b = c.sbatch(&["-J", "B", "-N4", "-t", "1", "--wrap", "sleep 2"]).unwrap();
    // C would end long before A's limit: EASY backfills it, Algorithm 1's
    // line 7 does not ("no lower-priority application is chosen").
    let cj = c.sbatch(&["-J", "C", "-N1", "-t", "1", "--wrap", "sleep 2"]).unwrap();

    let jobs = c.wait_all_finished(&[a, b, cj], Duration::from_secs(120)).unwrap();
    check_all_started_by(&c, &jobs, "mtct");
    let get = |id| jobs.iter().find(|j| j.id == id).unwrap().clone();
    let (a, b, cj) = (get(a), get(b), get(cj));
    assert!(b.start >= a.end, "B starts when A's nodes come back");
    assert!(cj.start >= b.end, "C must wait for B, the job ahead of it: C {:?}, B ended {:?}", cj.start, b.end);
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn conservative_backfill_protects_every_waiting_job_not_only_the_head() {
    let c = up_with_strategy("t-conservative", "conservative");
    // A holds 2 of 4 nodes until at most 2 minutes from now.
    let a = c.sbatch(&["-J", "A", "-N2", "-t", "2", "--wrap", "sleep 20"]).unwrap();
    c.wait_job(a, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    // B (3 nodes) is the head, booked from A's limit; C (all 4) after B.
    let b = c.sbatch(&["-J", "B", "-N3", "-t", "1", "--wrap", "sleep 2"]).unwrap();
    let cj = c.sbatch(&["-J", "C", "-N4", "-t", "1", "--wrap", "sleep 2"]).unwrap();
    // D's 5 minutes fit beside B (EASY starts it on B's one spare node) but
    // run into C's booking: conservative keeps it waiting.
    let d = c.sbatch(&["-J", "D", "-N1", "-t", "5", "--wrap", "sleep 2"]).unwrap();
    // E ends before B's booking: both policies start it.
    let e = c.sbatch(&["-J", "E", "-N1", "-t", "1", "--wrap", "sleep 2"]).unwrap();

    // E started in a pass that saw D (queued ahead of it).
    c.wait_job(e, "started (backfilled)", Duration::from_secs(30), |j| j.has_started()).unwrap();
    let (bj, dj) = (c.job(b).unwrap(), c.job(d).unwrap());
    assert!(bj.is_pending(), "B should still wait for A, is {}", bj.state);
    assert!(dj.is_pending(), "D must not start while it would delay C, is {}", dj.state);

    let jobs = c.wait_all_finished(&[a, b, cj, d, e], Duration::from_secs(150)).unwrap();
    check_all_started_by(&c, &jobs, "conservative");
    let get = |id| jobs.iter().find(|j| j.id == id).unwrap().clone();
    let (b, cj, d, e) = (get(b), get(cj), get(d), get(e));
    assert!(e.start < b.start, "E ({:?}) should start before B ({:?})", e.start, b.start);
    assert!(d.start >= cj.end, "D runs after C (C holds every node): D {:?}, C ended {:?}", d.start, cj.end);
}
