//! slurmctld restarted with jobs running and pending: none is lost, the
//! running one keeps running, and the plugin starts the pending ones.

use std::time::Duration;

use cluster_tests::said;
use cluster_tests::{start_lines, up};

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn restart_loses_no_job_and_starts_the_pending_ones() {
    let c = up("t-restart", 2);
    let running = c.sbatch(&["-J", "R", "-N2", "-t", "2", "--wrap", "sleep 12"]).unwrap();
    c.wait_job(running, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let p1 = c.sbatch(&["-J", "P1", "-N1", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    let p2 = c.sbatch(&["-J", "P2", "-N2", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    assert!(c.job(p1).unwrap().is_pending() && c.job(p2).unwrap().is_pending());

    let old_pid = c.controller_pid().expect("slurmctld pid");
    c.stop_controller();
    assert!(!testcluster::process::pid_alive(old_pid), "slurmctld did not stop");
    c.start_controller().unwrap();
    assert_ne!(c.controller_pid(), Some(old_pid));

    let after = c.jobs().unwrap();
    for id in [running, p1, p2] {
        assert!(after.iter().any(|j| j.id == id), "JobId={id} lost in the restart");
    }
    let r = after.iter().find(|j| j.id == running).unwrap();
    assert!(r.state == "RUNNING" || r.state == "COMPLETED", "R is {} after the restart", r.state);

    let jobs = c.wait_all_finished(&[running, p1, p2], Duration::from_secs(90)).unwrap();
    for j in &jobs {
        assert_eq!(j.state, "COMPLETED", "{} ended {}", j.name, j.state);
    }
    let log = c.ctld_log();
    assert_eq!(said::agent_started().count(&log), 2, "the plugin should have run before and after");
    let restart_at = said::agent_started().rfind(&log).unwrap();
    // fini stopped and joined the agent thread when slurmctld shut down.
    let stopped_at = said::agent_stopped().find(&log).expect("fini should stop the agent");
    assert!(stopped_at < restart_at, "the agent stopped before the new slurmctld started it again");
    for id in [p1, p2] {
        let lines = start_lines(&c, id);
        assert_eq!(lines.len(), 1, "JobId={id}: {lines:?}");
        assert!(log.find(&lines[0]).unwrap() > restart_at, "JobId={id} should start after the restart");
    }
}
