//! `scontrol reconfigure` on a live cluster: a new malleable.conf takes
//! effect at once; a bad one is rejected, the running configuration stays,
//! and slurmctld keeps scheduling.

use std::time::Duration;

use cluster_tests::said;
use cluster_tests::{start_lines, up};
use slurm::common::refusal::Refusal;
use testcluster::process::output;
use testcluster::wait;

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn reconfigure_applies_a_new_strategy_and_rejects_a_bad_file() {
    let c = up("t-reconfig", 2);
    let conf = c.dir.join("etc/malleable.conf");

    std::fs::write(&conf, "Strategy=fcfs\nSchedulerTick=7\n").unwrap();
    output(c.cmd("scontrol").arg("reconfigure")).unwrap();
    wait::until("the new configuration in the log", Duration::from_secs(30), || {
        Ok(said::reconfigured("Strategy=fcfs SchedulerTick=7").in_log(&c.ctld_log()).then_some(()))
    })
    .unwrap();
    let job = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    c.wait_job(job, "completed", Duration::from_secs(60), |j| j.state == "COMPLETED").unwrap();
    let lines = start_lines(&c, job);
    assert!(lines.len() == 1 && lines[0].ends_with("(fcfs)"), "started by the new strategy: {lines:?}");

    std::fs::write(&conf, "Strategy=fastest\n").unwrap();
    output(c.cmd("scontrol").arg("reconfigure")).unwrap();
    let rejected = wait::until("the rejection in the log", Duration::from_secs(30), || {
        let log = c.ctld_log();
        Ok(log.lines().filter_map(Refusal::parse).find(|r| matches!(r, Refusal::Reconfigure(_))))
    })
    .unwrap();
    assert!(rejected.why().contains("line 1: Strategy=fastest: unknown strategy 'fastest', allowed: "), "{rejected}");
    assert!(c.controller_running(), "a bad file on reconfigure must not stop slurmctld");

    let job = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    c.wait_job(job, "completed", Duration::from_secs(60), |j| j.state == "COMPLETED").unwrap();
    let lines = start_lines(&c, job);
    assert!(lines.len() == 1 && lines[0].ends_with("(fcfs)"), "still the previous strategy: {lines:?}");
}
