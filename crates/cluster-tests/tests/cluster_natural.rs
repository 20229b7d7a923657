//! NATURAL under sched/malleable (Iserte et al. 2025's pull model): a
//! malleable job is resized only when its application asks, at its own
//! sync points, whether to reconfigure; it then grows into idle nodes, or
//! releases exactly what a waiting job lacks, and that job starts on them.

use std::time::Duration;

use cluster_tests::malleable::{
    example_script, grows_then_releases_when_asking, job_field, malleable_spec, submit, wait_log,
};
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
    wait_log(&c, 0, &[&format!("setting comment to mall1 seq=4 REPORT job={quiet}")], Duration::from_secs(60));
    assert_eq!(job_field(&c, quiet, "NumNodes"), "1");
    assert!(!c.ctld_log().contains(&format!("JobId={quiet}: expand")), "a job that does not ask was resized");
    run(c.cmd("scancel").arg(quiet.to_string())).unwrap();
    c.wait_job(quiet, "cancelled", Duration::from_secs(30), |j| j.is_finished()).unwrap();

    // One that asks grows to its maximum, then releases exactly what a
    // waiting job lacks, and that job starts on them.
    let (id, rigid, _) = grows_then_releases_when_asking(&c, APP);
    run(c.cmd("scancel").arg(id.to_string()).arg(rigid.to_string())).unwrap();
    c.wait_job(id, "cancelled", Duration::from_secs(30), |j| j.is_finished()).unwrap();
}
