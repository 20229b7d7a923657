//! Adaptations that go wrong, on a real cluster: an application too slow to
//! commit (the expand is rolled back, the shrink forced), another user
//! trying to commit for someone else's job, a node whose slurmd died
//! before the expand onto it could be used, and a runtime gone silent.

use std::time::Duration;

use cluster_tests::malleable::{
    example_script, job_field, job_output, malleable_spec, serial_checksum, status, submit, tool, wait_said,
};
use cluster_tests::said::{self, Ending, JobId, LogLine};
use cluster_tests::up_with;
use testcluster::process::output;
use testcluster::Cluster;

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_adaptation_not_committed_in_time_is_rolled_back_or_forced() {
    let c = up_with(malleable_spec("t-timeout", 2, "Strategy=mtct\nSchedulerTick=5\nAdaptTimeout=2\n"));
    // Its application takes 30 s to commit; the plugin waits 2, or the
    // few seconds its runtime bounds its own steps at once it has said so.
    let script = example_script(&c, "slow", "--cells 4096 --iterations 2000 --unit-us 20 --adapt-delay-ms 30000");

    let grow = submit(&c, &script, "grow.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    let line = wait_said(&c, 0, &said::rolled_back(grow, "n2"), Duration::from_secs(60));
    let why = format!("not committed within {} s", deadline_before(&c, grow, &line));
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
    let why = format!("not committed within {} s", deadline_before(&c, shrink, &line));
    let ending = Ending::ShrinkForced { nodes: vec!["n2".into()], why, hold_s: 2 };
    assert_eq!(LogLine::parse(&line), Some(LogLine::Released { job: JobId(shrink), ending, holds: "n1".into() }));
    let r = c.wait_job(rigid, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
    assert_eq!(r.node_list, "n2");
}

/// Job `id`'s adaptations' deadline when slurmctld logged `line`: the 2 s
/// of AdaptTimeout, or the bound its runtime reported before, if it did.
fn deadline_before(c: &Cluster, id: u32, line: &str) -> u32 {
    let log = c.ctld_log();
    let upto = &log[..log.find(line).unwrap_or(log.len())];
    let bound = upto.lines().filter_map(LogLine::parse).rev().find_map(|l| match l {
        LogLine::AdaptBound { job, bound_s, .. } if job == JobId(id) => Some(bound_s),
        _ => None,
    });
    bound.map_or(2, |b| b.max(2))
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
    let nobodys = |l: &str| matches!(LogLine::parse(l), Some(LogLine::RequestTaken { job, request }) if job == JobId(id) && request.contains("seq=99"));
    assert!(!c.ctld_log().lines().any(nobodys), "slurmctld never took nobody's request");

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

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_whose_runtime_falls_silent_is_cancelled_saying_why() {
    let c = up_with(malleable_spec("t-silent", 2, "Strategy=mtct\nSchedulerTick=5\n"));
    let mall_run = tool("mall-run").display().to_string();
    let head = format!("{mall_run} --poll-ms 50 --heartbeat 1");
    let script = c.dir.join("silent.sh");
    let app = format!("{} --cells 4096 --iterations 10000000 --unit-us 20", tool("mall-example").display());
    std::fs::write(&script, format!("#!/bin/sh\nexec {head} -- {app}\n")).unwrap();
    let id = submit(&c, &script, "silent.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=1"]);
    wait_said(&c, 0, &said::request_taken(id, "mall1 seq=1 HELLO"), Duration::from_secs(30));
    // Its mall-run stops, as one whose batch host lost it while slurmctld
    // counts the job running on: no request, no heartbeat.
    let pkill = |signal: &str| std::process::Command::new("pkill").args([signal, "-f", &format!("^{head}")]).status();
    assert!(pkill("-STOP").unwrap().success(), "no process of {head}");
    let j = c.wait_job(id, "ended", Duration::from_secs(60), |j| j.is_finished());
    let _ = pkill("-CONT");
    assert_eq!(j.unwrap().state, "CANCELLED");
    let line = said::cancelled(id).first(&c.ctld_log()).map(str::to_string).unwrap_or_default();
    assert!(line.contains("said it would speak every 1 s and has said nothing for 10 s"), "{line}");
}
