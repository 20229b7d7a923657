//! Malleable jobs end to end on a real cluster under Strategy=mtct: an
//! elastic job running the example application under mall-run grows into
//! idle nodes, shrinks for a waiting job (keeping its node constraint),
//! which starts on exactly the freed nodes, is seen adapting meanwhile,
//! runs its workers where it holds nodes, and finishes with the same
//! result as the application alone; the Comment its owner gave it stays
//! theirs all along, while its runtime talks to the scheduler.

use std::collections::BTreeSet;
use std::time::Duration;

use cluster_tests::malleable::{
    example_script, hostnames, job_field, job_output, malleable_spec, serial_checksum, status, step_nodes, submit,
    wait_said,
};
use cluster_tests::said::{self, JobId, LogLine, Said};
use cluster_tests::up_with;
use testcluster::Cluster;

const MTCT: &str = "Strategy=mtct\nSchedulerTick=5\n";

/// What a site's user keeps in a job's Comment (a project, a ticket).
const GRANT: &str = "grant ABC-123";

fn set(items: Vec<String>) -> BTreeSet<String> {
    items.into_iter().collect()
}

/// Wait until the job's status says `state`; the status.
fn wait_status(c: &Cluster, id: u32, state: &str) -> String {
    testcluster::wait::until(&format!("JobId={id} {state}"), Duration::from_secs(20), || {
        let s = status(c, id);
        if s.contains(&format!("state={state}")) {
            Ok(Some(s))
        } else {
            Err(s)
        }
    })
    .unwrap()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_elastic_job_grows_shrinks_for_a_waiting_job_and_finishes_its_work() {
    let c = up_with(malleable_spec("t-elastic", 4, MTCT));
    let app = "--cells 8192 --iterations 300 --unit-us 25 --adapt-delay-ms 800";
    let script = example_script(&c, "elastic", app);
    let id = submit(
        &c,
        &script,
        "elastic.out",
        &[
            "-N2",
            "--min-nodes-invasive=2",
            "--max-nodes-invasive=4",
            "--node-constraints=even",
            &format!("--comment={GRANT}"),
        ],
    );

    // It grows into the two idle nodes; while its application adapts, the
    // job shows it, and the new workers run there.
    let line = wait_said(&c, 0, &said::expanding(id, ""), Duration::from_secs(60));
    let added = said::nodes(&line);
    assert_eq!(set(added.clone()), set(vec!["n3".into(), "n4".into()]), "{line}");
    let st = wait_status(&c, id, "expanding");
    assert!(st.contains("nodes=n3,n4"), "{st}");
    testcluster::wait::until("workers on n3 and n4", Duration::from_secs(20), || {
        let steps = step_nodes(&c, id);
        let on: BTreeSet<String> = steps.iter().map(|(_, n)| n.clone()).collect();
        if on.contains("n3") && on.contains("n4") {
            Ok(Some(()))
        } else {
            Err(format!("{steps:?}"))
        }
    })
    .unwrap();
    wait_said(&c, 0, &said::expand_committed(id, "n3,n4"), Duration::from_secs(30));
    wait_status(&c, id, "steady");
    // Its runtime said hello and committed through job_submit/malleable;
    // the Comment is still its owner's.
    let log = c.ctld_log();
    assert!(said::request_taken(id, "mall1 seq=1 HELLO").in_log(&log), "no HELLO taken");
    assert!(said::request_taken(id, "").count(&log) >= 3, "its requests were not taken");
    assert_eq!(job_field(&c, id, "Comment"), GRANT);
    assert_eq!(job_field(&c, id, "NumNodes"), "4");
    assert_eq!(job_field(&c, id, "NodeList"), "n[1-4]");

    // A rigid job for two nodes makes it shrink to two (even), never off
    // its batch host, and starts on exactly the nodes it gave up.
    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 4"]).unwrap();
    let line = wait_said(&c, from, &said::shrinking(id, ""), Duration::from_secs(30));
    let freed = said::nodes(&line);
    assert_eq!(freed.len(), 2, "{line}");
    assert!(!freed.contains(&job_field(&c, id, "BatchHost")), "{line}");
    wait_status(&c, id, "shrinking");
    assert_eq!(job_field(&c, id, "TimeLimit"), "00:05:00");
    wait_said(&c, from, &said::shrink_committed(id, &freed.join(",")), Duration::from_secs(30));
    // The rest of its work takes twice as long on half the nodes: its time
    // limit grows by what was left of it (nearly 5 minutes), so Slurm does
    // not end it for running longer.
    let limit = job_field(&c, id, "TimeLimit");
    assert!(["00:09:00", "00:10:00"].contains(&limit.as_str()), "TimeLimit after the shrink: {limit}");
    wait_said(&c, from, &said::stretched(id), Duration::from_secs(5));
    let r = c.wait_job(rigid, "running", Duration::from_secs(20), |j| j.has_started()).unwrap();
    assert_eq!(set(hostnames(&c, &r.node_list)), set(freed.clone()), "the waiting job starts on the freed nodes");
    let steps = step_nodes(&c, id);
    assert!(
        steps.iter().all(|(_, n)| hostnames(&c, n).iter().all(|h| !freed.contains(h))),
        "no worker is left on the freed nodes: {steps:?}"
    );

    // It finishes, with the work done right, and its Comment as given.
    let done = c.wait_job(id, "finished", Duration::from_secs(180), |j| j.is_finished()).unwrap();
    assert_eq!(done.state, "COMPLETED");
    assert_eq!(job_field(&c, id, "Comment"), GRANT);
    let out = job_output(&c, "elastic.out");
    assert!(out.contains("expand to 4 workers") && out.contains("shrink to 2 workers"), "{out}");
    assert_eq!(cluster_tests::malleable::checksum_in(&out), Some(serial_checksum(app)), "{out}");
    // jobcomp has each resize, and the job's last allocation at its end.
    let jobcomp = std::fs::read_to_string(c.dir.join("log/jobcomp.txt")).unwrap();
    let mine: Vec<&str> = jobcomp.lines().filter(|l| l.starts_with(&format!("JobId={id} "))).collect();
    assert!(mine.iter().filter(|l| l.contains("JobState=RESIZING")).count() >= 2, "{mine:?}");
    let last = mine.last().unwrap();
    assert!(last.contains("JobState=COMPLETED") && last.contains(&format!("NodeList={} ", done.node_list)), "{last}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_power_of_two_job_shrinks_to_a_power_of_two() {
    let c = up_with(malleable_spec("t-pof2", 4, MTCT));
    let app = "--cells 8192 --iterations 250 --unit-us 25";
    let script = example_script(&c, "pof2", app);
    let id = submit(
        &c,
        &script,
        "pof2.out",
        &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4", "--node-constraints=pof2"],
    );
    wait_said(&c, 0, &said::expand_committed(id, "n2,n3,n4"), Duration::from_secs(60));

    // One node wanted: 3 would do, but 3 is no power of two.
    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 3"]).unwrap();
    let line = wait_said(&c, from, &said::shrink_committed(id, ""), Duration::from_secs(30));
    let freed = said::nodes(&line);
    assert_eq!(freed.len(), 2, "{line}");
    let r = c.wait_job(rigid, "running", Duration::from_secs(20), |j| j.has_started()).unwrap();
    assert!(freed.contains(&r.node_list), "{} started on {}, not on the freed {freed:?}", rigid, r.node_list);
    let done = c.wait_job(id, "finished", Duration::from_secs(180), |j| j.is_finished()).unwrap();
    assert_eq!(done.state, "COMPLETED");
    let out = job_output(&c, "pof2.out");
    assert_eq!(cluster_tests::malleable::checksum_in(&out), Some(serial_checksum(app)), "{out}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn the_c_example_grows_and_shrinks_through_the_c_abi() {
    use cluster_tests::malleable::{checksum_in, tool};
    let c = up_with(malleable_spec("t-capi", 4, MTCT));
    let app = "--cells 4096 --iterations 200 --unit-us 25";
    let script = c.dir.join("capi.sh");
    let text = format!(
        "#!/bin/sh\nexec {} --poll-ms 50 -- {} {app}\n",
        tool("mall-run").display(),
        tool("mall-stencil-c").display()
    );
    std::fs::write(&script, text).unwrap();
    let id = submit(&c, &script, "capi.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4"]);
    wait_said(&c, 0, &said::expand_committed(id, "n2,n3,n4"), Duration::from_secs(60));
    let from = c.ctld_log().len();
    c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 2"]).unwrap();
    wait_said(&c, from, &said::shrink_committed(id, ""), Duration::from_secs(30));
    let done = c.wait_job(id, "finished", Duration::from_secs(120), |j| j.is_finished()).unwrap();
    assert_eq!(done.state, "COMPLETED");
    let out = job_output(&c, "capi.out");
    let serial =
        std::process::Command::new(tool("mall-stencil-c")).arg("--serial").args(app.split(' ')).output().unwrap();
    let alone = checksum_in(&String::from_utf8_lossy(&serial.stdout));
    assert!(alone.is_some());
    assert_eq!(checksum_in(&out), alone, "{out}");
}

/// A job submitted with `-w n1` that grew onto n2 shrinks back to n1: on
/// 24.11, update_job takes a NodeList equal to the submitted text as no
/// change at all (and says success), so without the safe layer setting
/// that text aside the shrink was "committed" with n2 still the job's and
/// the waiting job never started.
#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_submitted_with_a_node_list_shrinks_back_to_it() {
    let c = up_with(malleable_spec("t-nodelist", 2, MTCT));
    let app = "--cells 4096 --iterations 100000 --unit-us 10";
    let script = example_script(&c, "listed", app);
    let id = submit(&c, &script, "listed.out", &["-w", "n1", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    wait_said(&c, 0, &said::expand_committed(id, "n2"), Duration::from_secs(60));
    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 2"]).unwrap();
    wait_said(&c, from, &said::shrink_committed(id, "n2"), Duration::from_secs(30));
    assert_eq!(job_field(&c, id, "NodeList"), "n1");
    let r = c.wait_job(rigid, "running", Duration::from_secs(30), |j| j.has_started()).unwrap();
    assert_eq!(r.node_list, "n2");
    let _ = c.cmd("scancel").arg(id.to_string()).status();
    c.wait_job(id, "ended", Duration::from_secs(60), |j| j.is_finished()).unwrap();
}

/// A job that started on the last node and grew onto lower ones still
/// keeps its batch host when it shrinks: slurmctld lists its nodes in table
/// order, where the batch host is not first (found by the resize bench,
/// which then looped on a shrink slurmctld refused).
#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_that_started_on_a_high_node_keeps_its_batch_host_when_it_shrinks() {
    let c = up_with(malleable_spec("t-batchhost", 3, MTCT));
    let fillers: Vec<u32> = (0..2).map(|_| c.sbatch(&["-N1", "-t", "5", "--wrap", "sleep 300"]).unwrap()).collect();
    for &f in &fillers {
        c.wait_job(f, "running", Duration::from_secs(30), |j| j.has_started()).unwrap();
    }
    let script = example_script(&c, "high", "--cells 4096 --iterations 100000 --unit-us 10");
    let id = submit(&c, &script, "high.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=3"]);
    c.wait_job(id, "running", Duration::from_secs(30), |j| j.has_started()).unwrap();
    assert_eq!(job_field(&c, id, "BatchHost"), "n3");
    for &f in &fillers {
        let _ = c.cmd("scancel").arg(f.to_string()).status();
    }
    // The fillers end a moment apart, so the job may grow in one step or two.
    let to_three = Said::new(format!("JobId={id}: expand onto ...; it now holds n[1-3]"), move |l| {
        matches!(l, LogLine::Expanding { holds, .. } if holds == "n[1-3]") && l.job() == Some(JobId(id))
    });
    wait_said(&c, 0, &to_three, Duration::from_secs(60));
    let at = to_three.find(&c.ctld_log()).unwrap();
    wait_said(&c, at, &said::expand_committed(id, ""), Duration::from_secs(30));

    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 2"]).unwrap();
    let line = wait_said(&c, from, &said::shrinking(id, ""), Duration::from_secs(30));
    assert!(!said::nodes(&line).contains(&"n3".to_string()), "the batch host n3 is never given up: {line}");
    wait_said(&c, from, &said::shrink_committed(id, ""), Duration::from_secs(30));
    c.wait_job(rigid, "running", Duration::from_secs(30), |j| j.has_started()).unwrap();
    let log = c.ctld_log()[from..].to_string();
    assert!(!LogLine::all(&log).any(|l| matches!(l, LogLine::ReleaseFailed { .. })), "{log}");
    let _ = c.cmd("scancel").arg(id.to_string()).status();
    c.wait_job(id, "ended", Duration::from_secs(60), |j| j.is_finished()).unwrap();
}

/// After a job grows, slurmctld holds its cores on every node it has, the
/// added ones too. Slurm 22.05's merge ORs the helper's core bitmap into
/// the job's by position, so without our repair the added nodes had no
/// core (`scontrol show job -d` lists no CPU_IDs there) and a step there
/// got an empty cpuset under task/cgroup (found on the compose site).
#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_grown_job_holds_cores_on_every_node_it_grew_onto() {
    use testcluster::NodeShape;
    let c = up_with(malleable_spec("t-cores", 3, MTCT).shape(NodeShape { cores: 2, gpus: 0, memory_mb: 0 }));
    let app = "--cells 4096 --iterations 100000 --unit-us 10";
    let script = example_script(&c, "cores", app);
    let id = submit(&c, &script, "cores.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=3"]);
    wait_said(&c, 0, &said::expand_committed(id, "n2,n3"), Duration::from_secs(60));
    let detail = testcluster::process::output(c.cmd("scontrol").args(["show", "job", "-d", &id.to_string()])).unwrap();
    let mut with_cores = BTreeSet::new();
    for line in detail.lines().map(str::trim).filter(|l| l.starts_with("Nodes=") && l.contains(" CPU_IDs=")) {
        let list = line["Nodes=".len()..].split(' ').next().unwrap();
        let cpus = line.split(" CPU_IDs=").nth(1).unwrap().split(' ').next().unwrap();
        assert!(!cpus.is_empty(), "{line}");
        with_cores.extend(hostnames(&c, list));
    }
    assert_eq!(with_cores, set(vec!["n1".into(), "n2".into(), "n3".into()]), "{detail}");
    c.cmd("scancel").arg(id.to_string()).status().unwrap();
}
