//! What squeue tells users about their waiting jobs under sched/malleable
//! (Strategy=easy), as under Slurm's own backfill: the head job waits for
//! Resources and `squeue --start` shows when its reservation begins; the
//! jobs behind it wait for Priority; a `--time-min` job starts in the hole
//! before the head's start under a cut limit. Under conservative, every
//! booked job shows its booking.

use std::time::Duration;

use cluster_tests::malleable::malleable_spec;
use cluster_tests::{up, up_with};
use testcluster::process::output;
use testcluster::Cluster;

/// squeue's `%r` (Reason) and `%S` (start, expected for a waiting job).
fn reason_and_start(c: &Cluster, id: u32) -> (String, String) {
    let text = output(c.cmd("squeue").args(["-h", "-j", &id.to_string(), "-o", "%r|%S"])).unwrap_or_default();
    let (r, s) = text.trim().split_once('|').unwrap_or(("", ""));
    (r.to_string(), s.to_string())
}

/// Job A on three of the four nodes for up to 2 minutes, then a job
/// needing all four for a minute (it waits for A's limit), then one needing
/// two for 5 minutes (only one is free, and it would delay the other): when
/// A's limit runs out, and the two waiting jobs' ids.
fn a_queue(c: &Cluster) -> (i64, u32, u32) {
    let a = c.sbatch(&["-N3", "-t", "2", "--wrap", "sleep 300"]).unwrap();
    let a = c.wait_job(a, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let head = c.sbatch(&["-N4", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    let behind = c.sbatch(&["-N2", "-t", "5", "--wrap", "sleep 1"]).unwrap();
    (a.end.expect("a running job has an end"), head, behind)
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn waiting_jobs_show_a_true_reason_and_the_head_its_expected_start() {
    let c = up("t-reasons", 4);
    let (end, head, behind) = a_queue(&c);
    testcluster::wait::until("the reasons and the head's start", Duration::from_secs(30), || {
        let (h, b) = (reason_and_start(&c, head), reason_and_start(&c, behind));
        let head_start = c.job(head)?.start;
        if h.0 == "Resources" && b.0 == "Priority" && head_start == Some(end) && b.1 == "N/A" {
            Ok(Some(()))
        } else {
            Err(format!("head {h:?} (start {head_start:?}, A ends {end}), behind {b:?}"))
        }
    })
    .unwrap();

    // --time-min: a job too long for the hole before the head's start
    // starts in it, its limit cut to the whole minutes left (as Slurm's
    // backfill cuts it), and ends before the head needs its node.
    let short = c.sbatch(&["-N1", "-t", "10", "--time-min=1", "--wrap", "sleep 300"]).unwrap();
    let j = c.wait_job(short, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    // The hole is just under or exactly 2 minutes, by the second A started in.
    assert!(["00:01:00", "00:02:00"].contains(&j.time_limit.as_str()), "{j:?}");
    assert!(j.end.is_some_and(|e| e <= end), "{j:?} ends after the head's start {end}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn under_conservative_every_booked_job_shows_its_expected_start() {
    let c = up_with(malleable_spec("t-bookings", 4, "Strategy=conservative\n"));
    let (end, first, second) = a_queue(&c);
    // The first is booked when A's limit runs out, the second when the first's does.
    testcluster::wait::until("both bookings", Duration::from_secs(30), || {
        let (f, s) = (c.job(first)?.start, c.job(second)?.start);
        let reasons = (reason_and_start(&c, first).0, reason_and_start(&c, second).0);
        if f == Some(end) && s == Some(end + 60) && reasons == ("Resources".into(), "Priority".into()) {
            Ok(Some(()))
        } else {
            Err(format!("starts {f:?} and {s:?} (A ends {end}), reasons {reasons:?}"))
        }
    })
    .unwrap();
}
