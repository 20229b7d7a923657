//! NATURAL under sched/malleable (Iserte et al. 2025's pull model): a
//! malleable job is resized only when its application asks, at its own
//! sync points, whether to reconfigure; it then grows into idle nodes, or
//! releases exactly what a waiting job lacks, and that job starts on them.
//! Under `natural-plan` it releases nodes no further than the count it was
//! submitted with (job_submit/malleable records it).

use std::time::Duration;

use cluster_tests::malleable::{
    example_script, grows_then_releases_when_asking, job_field, malleable_spec, submit, wait_said,
};
use cluster_tests::said;
use cluster_tests::up_with;
use testcluster::process::run;

const APP: &str = "--cells 4096 --iterations 100000 --unit-us 20 --report-every 10";
const ELASTIC: [&str; 3] = ["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4"];

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_is_resized_when_it_asks_and_only_then() {
    let c = up_with(malleable_spec("t-natural", 4, "Strategy=natural\nSchedulerTick=5\n"));

    // A job that never asks stays on its one node, three idle beside it,
    // while its runtime reports three times (30 iterations, each with a probe).
    let quiet = submit(&c, &example_script(&c, "quiet", APP), "quiet.out", &ELASTIC);
    wait_said(&c, 0, &said::request_taken(quiet, "mall1 seq=4 REPORT"), Duration::from_secs(60));
    assert_eq!(job_field(&c, quiet, "NumNodes"), "1");
    assert!(!said::expanding(quiet, "").in_log(&c.ctld_log()), "a job that does not ask was resized");
    run(c.cmd("scancel").arg(quiet.to_string())).unwrap();
    c.wait_job(quiet, "cancelled", Duration::from_secs(30), |j| j.is_finished()).unwrap();

    // One that asks grows to its maximum, then releases exactly what a
    // waiting job lacks, and that job starts on them.
    let (id, rigid, _) = grows_then_releases_when_asking(&c, APP);
    run(c.cmd("scancel").arg(id.to_string()).arg(rigid.to_string())).unwrap();
    c.wait_job(id, "cancelled", Duration::from_secs(30), |j| j.is_finished()).unwrap();
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn the_variant_shrinks_a_job_no_further_than_it_was_submitted_with() {
    let c = up_with(malleable_spec("t-natplan", 5, "Strategy=natural-plan\nSchedulerTick=5\n"));
    // Submitted on 2 within [1, 4]: on an idle cluster the variant starts
    // it on its maximum, 4; one node stays idle.
    let elastic = ["-N2", "--min-nodes-invasive=1", "--max-nodes-invasive=4"];
    let id = submit(&c, &example_script(&c, "asking", &format!("{APP} --ask-every 5")), "asking.out", &elastic);
    wait_said(&c, 0, &said::started_on(id, "n[1-4]"), Duration::from_secs(60));
    assert_eq!(job_field(&c, id, "NumNodes"), "4");
    let from = c.ctld_log().len();
    // A job of 4 lacks 3: the paper's rule would take the job down to its
    // minimum, 1, for it; below 2 it is not taken. One of 3 lacks 2: for it
    // the job goes back to the 2 it asked for, and it starts.
    let four = c.sbatch(&["-N4", "-t", "1", "--wrap", "sleep 300"]).unwrap();
    // Two questions after it: the first was answered (its runtime waits
    // for the answer before it goes on).
    let asked = said::request_verb(id, "SHOULD_RECONFIGURE");
    let first = wait_said(&c, from, &asked, Duration::from_secs(60));
    let after = from + c.ctld_log()[from..].find(&first).unwrap_or(0) + first.len();
    wait_said(&c, after, &asked, Duration::from_secs(60));
    let log = c.ctld_log();
    assert!(
        !said::released_at_sync_point(four, id, 0).in_log(&log[from..]),
        "shrunk below its size for JobId={four}:\n{log}"
    );
    let three = c.sbatch(&["-N3", "-t", "1", "--wrap", "sleep 300"]).unwrap();
    wait_said(&c, from, &said::released_at_sync_point(three, id, 2), Duration::from_secs(60));
    wait_said(&c, from, &said::shrink_committed(id, ""), Duration::from_secs(60));
    c.wait_job(three, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
    assert_eq!(job_field(&c, id, "NumNodes"), "2");
    let log = c.ctld_log();
    assert!(
        !said::released_at_sync_point(four, id, 0).in_log(&log[from..]),
        "shrunk below its size for JobId={four}:\n{log}"
    );
    assert!(c.job(four).unwrap().is_pending(), "JobId={four} cannot have started");
    run(c.cmd("scancel").args([id.to_string(), three.to_string(), four.to_string()])).unwrap();
    c.wait_job(id, "cancelled", Duration::from_secs(30), |j| j.is_finished()).unwrap();
}
