//! Malleability beyond the paper: a malleable job submitted with --no-kill
//! whose node fails goes on at the smaller size (still at least its
//! minimum), its application told as a shrink it recovers from with its
//! last checkpoint, instead of dying: whether the node's slurmd dies or the
//! node drops off the network (its slurmd and worker run on, unreachable).

use std::time::Duration;

use cluster_tests::malleable::{
    checksum_in, example_script, job_field, job_output, malleable_spec, serial_checksum, submit, wait_said,
};
use cluster_tests::said;
use cluster_tests::up_with;

/// How the node is lost.
#[derive(Copy, Clone)]
enum Loss {
    /// Its slurmd and the job's processes on it are killed.
    Crash,
    /// Its network link goes down; everything on it runs on.
    Cut,
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_no_kill_malleable_job_whose_node_dies_goes_on_shrunk() {
    goes_on_shrunk("t-nodefail", Loss::Crash);
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_no_kill_malleable_job_whose_node_drops_off_the_network_goes_on_shrunk() {
    goes_on_shrunk("t-nodecut", Loss::Cut);
}

fn goes_on_shrunk(name: &str, loss: Loss) {
    // slurmctld gives up on a silent slurmd after 5 s.
    let spec = malleable_spec(name, 3, "Strategy=mtct\nSchedulerTick=5\n").set("SlurmdTimeout", "5");
    let c = up_with(spec);
    let app = "--cells 6144 --iterations 200 --unit-us 30 --checkpoint-every 10";
    let script = example_script(&c, "nodefail", app);
    let id =
        submit(&c, &script, "nodefail.out", &["-N3", "--no-kill", "--min-nodes-invasive=2", "--max-nodes-invasive=3"]);
    c.wait_job(id, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    testcluster::wait::until("the application to run on its three nodes", Duration::from_secs(30), || {
        let out = job_output(&c, "nodefail.out");
        if out.contains("worker 2 of 3") {
            Ok(Some(()))
        } else {
            Err(out)
        }
    })
    .unwrap();
    assert_eq!(job_field(&c, id, "BatchHost"), "n1");
    // Its runtime reports every ten iterations: after two reports, it has
    // saved a checkpoint (every ten) to go on from.
    wait_said(&c, 0, &said::request_taken(id, "mall1 seq=3 REPORT"), Duration::from_secs(60));

    match loss {
        Loss::Crash => c.crash_node("n3"),
        Loss::Cut => c.cut_node("n3").unwrap(),
    }
    let line = wait_said(&c, 0, &said::lost(id, "n3", true), Duration::from_secs(90));
    assert!(matches!(said::LogLine::parse(&line), Some(said::LogLine::Lost { holds: 2, .. })), "{line}");
    wait_said(&c, 0, &said::lost_committed(id, "n3"), Duration::from_secs(60));
    assert_eq!((job_field(&c, id, "NumNodes"), job_field(&c, id, "NodeList")), ("2".into(), "n[1-2]".into()));

    let done = c.wait_job(id, "finished", Duration::from_secs(180), |j| j.is_finished()).unwrap();
    assert_eq!(done.state, "COMPLETED");
    let out = job_output(&c, "nodefail.out");
    assert!(out.contains("recover to 2 workers") && out.contains("going on from the checkpoint of iteration"), "{out}");
    assert_eq!(checksum_in(&out), Some(serial_checksum(app)), "the work is done right despite the loss: {out}");
}

/// A malleable job requeued while an expand onto two more nodes waits for
/// its application (as stock requeues a batch job whose launch or batch
/// host failed) starts again steady, at its own size: the expand goes with
/// the run it belonged to, and is not undone in the next one once its
/// deadline passes, and the job is not told it lost the nodes of its first
/// run. Found by chaos campaigns: the plugin rolled back, in the job's
/// second run, the expand of its first ("freeing the nodes failed: Invalid
/// node name"); before that, it told a requeued job that had grown that it
/// lost those nodes, and its application ended.
#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_malleable_job_requeued_mid_expand_starts_again_steady() {
    // A requeued job may start again cred_expire + 1 s later (stock; 121 s
    // by default). The first run's expand's deadline passes in the second
    // run, after its own expand (20 s to commit) has begun.
    let conf = "Strategy=mtct\nSchedulerTick=5\nAdaptTimeout=30\n";
    let c = up_with(malleable_spec("t-requeued-mid", 3, conf).cred_expire(10));
    // Each adaptation waits 20 s before it commits: the requeue comes first.
    let app = "--cells 6144 --iterations 300 --unit-us 30 --checkpoint-every 10 --adapt-delay-ms 20000";
    let script = example_script(&c, "requeued-mid", app);
    let id = submit(&c, &script, "requeued-mid.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=3"]);
    let expanding = said::expanding(id, "");
    wait_said(&c, 0, &expanding, Duration::from_secs(60));
    let requeued = c.ctld_log().len();
    testcluster::process::output(c.cmd("scontrol").args(["requeue", &id.to_string()])).unwrap();
    wait_said(&c, requeued, &said::dropped(id), Duration::from_secs(60));
    wait_said(&c, requeued, &said::started(id), Duration::from_secs(200));
    let done = c.wait_job(id, "finished", Duration::from_secs(300), |j| j.is_finished()).unwrap();
    let log = c.ctld_log();
    let undone = said::Said::new(format!("JobId={id}: expand ... rolled back"), move |l| match l {
        said::LogLine::Released { ending, .. } | said::LogLine::ReleaseFailed { ending, .. } => {
            l.job() == Some(said::JobId(id)) && ending.is_rollback()
        }
        _ => false,
    });
    assert!(!undone.in_log(&log[requeued..]), "an expand rolled back after the requeue:\n{}", &log[requeued..]);
    let told = [true, false].iter().any(|&r| said::lost(id, "", r).in_log(&log[requeued..]));
    assert!(!told, "told a loss after its requeue");
    assert_eq!(done.state, "COMPLETED");
    let out = job_output(&c, "requeued-mid.out");
    assert_eq!(checksum_in(&out), Some(serial_checksum(app)), "{out}");
}
