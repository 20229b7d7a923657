//! Adaptations that go wrong, on a real cluster: an application too slow to
//! commit (the expand is rolled back, the shrink forced), another user
//! trying to commit for someone else's job, and a node whose slurmd died
//! before the expand onto it could be used.

use std::time::Duration;

use cluster_tests::malleable::{
    example_script, job_field, job_output, malleable_spec, serial_checksum, status, submit, wait_said,
};
use cluster_tests::said::{self, Ending, JobId, LogLine};
use cluster_tests::up_with;
use testcluster::process::output;

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_adaptation_not_committed_in_time_is_rolled_back_or_forced() {
    let c = up_with(malleable_spec("t-timeout", 2, "Strategy=mtct\nSchedulerTick=5\nAdaptTimeout=2\n"));
    // Its application takes 5 s to commit, the plugin waits 2.
    let script = example_script(&c, "slow", "--cells 4096 --iterations 2000 --unit-us 20 --adapt-delay-ms 5000");

    let grow = submit(&c, &script, "grow.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    let line = wait_said(&c, 0, &said::rolled_back(grow, "n2"), Duration::from_secs(60));
    let why = "not committed within 2 s".to_string();
    let ending = Ending::RolledBack { nodes: vec!["n2".into()], why, hold_s: 2 };
    assert_eq!(LogLine::parse(&line), Some(LogLine::Released { job: JobId(grow), ending, holds: "n1".into() }));
    assert_eq!(job_field(&c, grow, "NodeList"), "n1");
    // Its application cannot go on: the workers it moved data to are gone.
    let j = c.wait_job(grow, "finished", Duration::from_secs(60), |j| j.is_finished()).unwrap();
    assert_eq!(j.state, "FAILED");
    assert!(job_output(&c, "grow.out").contains("the scheduler ended adaptation"), "{}", job_output(&c, "grow.out"));

    let shrink = submit(&c, &script, "shrink.out", &["-N2", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    c.wait_job(shrink, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    // Resizable once its runtime has said hello.
    wait_said(&c, 0, &said::request_taken(shrink, "mall1 seq=1 HELLO"), Duration::from_secs(30));
    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    let line = wait_said(&c, from, &said::shrink_forced(shrink, "n2"), Duration::from_secs(60));
    let why = "not committed within 2 s".to_string();
    let ending = Ending::ShrinkForced { nodes: vec!["n2".into()], why, hold_s: 2 };
    assert_eq!(LogLine::parse(&line), Some(LogLine::Released { job: JobId(shrink), ending, holds: "n1".into() }));
    let r = c.wait_job(rigid, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
    assert_eq!(r.node_list, "n2");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn another_user_cannot_report_or_commit_for_someone_elses_job() {
    let c = up_with(malleable_spec("t-owner", 2, "Strategy=mtct\nSchedulerTick=5\n"));
    let app = "--cells 4096 --iterations 300 --unit-us 20 --adapt-delay-ms 3000";
    let script = example_script(&c, "owned", app);
    let id = submit(&c, &script, "owned.out", &["-N2", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    c.wait_job(id, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    wait_said(&c, 0, &said::request_taken(id, "mall1 seq=1 HELLO"), Duration::from_secs(30));
    let rigid = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    let line = wait_said(&c, 0, &said::shrinking(id, "n2"), Duration::from_secs(30));
    let Some(LogLine::Shrinking { resize, .. }) = LogLine::parse(&line) else { panic!("{line}") };

    // While its application adapts, user nobody writes a commit and a report.
    for request in
        [format!("COMMIT job={id} resize={resize}"), format!("REPORT job={id} iterations=1 compute_s=1 comm_s=9")]
    {
        let out = c
            .cmd("runuser")
            .args(["-u", "nobody", "--", "scontrol", "update", &format!("JobId={id}")])
            .arg(format!("Comment=mall1 seq=99 {request}"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        // Refused by slurmctld's own check (24.11 on: before job_modify),
        // or by job_submit/malleable (22.05 asks it first).
        assert!(!out.status.success(), "nobody's update went through: {said}");
    }
    // (Its own runtime keeps sending its reports meanwhile.)
    for field in ["Comment", "SystemComment"] {
        let text = job_field(&c, id, field);
        assert!(!text.contains("seq=99"), "the job's {field} holds nobody's request: {text}");
    }
    let st = status(&c, id);
    assert!(st.contains("state=shrinking") && !st.contains("ack=99"), "{st}");
    assert!(!c.ctld_log().contains("seq=99"), "slurmctld never took nobody's request");

    // Its own application commits it.
    wait_said(&c, 0, &said::shrink_committed(id, "n2"), Duration::from_secs(30));
    c.wait_job(rigid, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
    let done = c.wait_job(id, "finished", Duration::from_secs(120), |j| j.is_finished()).unwrap();
    assert_eq!(done.state, "COMPLETED");
    let out = job_output(&c, "owned.out");
    assert_eq!(cluster_tests::malleable::checksum_in(&out), Some(serial_checksum(app)), "{out}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_expand_onto_a_node_whose_slurmd_died_is_rolled_back_and_the_job_keeps_its_nodes() {
    let c = up_with(malleable_spec("t-deadadd", 2, "Strategy=mtct\nSchedulerTick=5\n"));
    // n2's slurmd dies; slurmctld will not notice for SlurmdTimeout (300 s)
    // and still offers n2 as idle.
    c.crash_node("n2");
    let state = output(c.cmd("sinfo").args(["-h", "-n", "n2", "-o", "%T"])).unwrap();
    assert_eq!(state.trim(), "idle");
    let app = "--cells 4096 --iterations 200 --unit-us 20";
    let script = example_script(&c, "deadadd", app);
    let id = submit(&c, &script, "deadadd.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    // From the log, not squeue: by the time squeue answers the job may
    // already be growing onto n2 (seen in a fresh-clone run).
    let started = wait_said(&c, 0, &said::started(id), Duration::from_secs(30));
    assert_eq!(said::holds(&started).as_deref(), Some("n1"), "the job must start on the live node for this test");

    let line = wait_said(&c, 0, &said::rolled_back(id, "n2"), Duration::from_secs(60));
    assert_eq!(said::holds(&line).as_deref(), Some("n1"), "{line}");
    wait_said(&c, 0, &said::suspect("n2", 60), Duration::from_secs(5));
    let done = c.wait_job(id, "finished", Duration::from_secs(120), |j| j.is_finished()).unwrap();
    assert_eq!((done.state.as_str(), done.node_list.as_str()), ("COMPLETED", "n1"));
    let out = job_output(&c, "deadadd.out");
    assert_eq!(cluster_tests::malleable::checksum_in(&out), Some(serial_checksum(app)), "{out}");
    let expands = said::expanding(id, "n2").count(&c.ctld_log());
    assert_eq!(expands, 1, "n2 is not handed out again at once");
}
