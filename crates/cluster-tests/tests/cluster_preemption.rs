//! Preemption under sched/malleable, on partitions of two PriorityTiers
//! (`preempt/partition_prio`, `PreemptMode=REQUEUE`): a job of the higher
//! tier gets its nodes from an elastic job of the lower one by shrinking
//! it (ShrinkBeforePreempt), which keeps running and loses nothing; when a
//! shrink cannot give enough, or with `ShrinkBeforePreempt=no`, the job is
//! preempted (requeued) as stock Slurm preempts it. With
//! `PreemptMode=SUSPEND,GANG` a rigid job of the lower tier is suspended
//! and resumed as under stock sched/backfill, checked on both.

use std::time::Duration;

use cluster_tests::malleable::{example_script, job_field, malleable_spec, submit, wait_said};
use cluster_tests::said;
use cluster_tests::up_with;
use testcluster::{Cluster, ClusterSpec, Partition};

/// Four nodes in two partitions of the same nodes, `high` above `low`;
/// EASY, which resizes nothing itself: every resize here is preemption's.
fn two_tiers(name: &str, conf: &str) -> ClusterSpec {
    malleable_spec(name, 4, &format!("Strategy=easy\nSchedulerTick=2\n{conf}"))
        .set("PreemptType", "preempt/partition_prio")
        .set("PreemptMode", "REQUEUE")
        .partition(Partition::new("low", "ALL").default_partition().extra("MaxTime=INFINITE State=UP PriorityTier=1"))
        .partition(Partition::new("high", "ALL").extra("MaxTime=INFINITE State=UP PriorityTier=2"))
}

/// An elastic job (1 to 4 nodes) of the low tier, running on all four.
fn elastic_on_all(c: &Cluster) -> u32 {
    let script = example_script(c, "elastic", "--cells 4096 --iterations 100000 --unit-us 10");
    let id = submit(c, &script, "elastic.out", &["-N4", "--min-nodes-invasive=1", "--max-nodes-invasive=4"]);
    c.wait_job(id, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    // Its runtime has said HELLO: it can be resized.
    testcluster::wait::until("its runtime", Duration::from_secs(30), || {
        let st = job_field(c, id, "SystemComment");
        if st.contains("runtime=on") {
            Ok(Some(()))
        } else {
            Err(st)
        }
    })
    .unwrap();
    id
}

fn running_on(c: &Cluster, id: u32, what: &str) -> String {
    c.wait_job(id, what, Duration::from_secs(60), |j| j.state == "RUNNING")
        .unwrap_or_else(|e| {
            c.print_logs();
            panic!("{e}")
        })
        .node_list
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_higher_tier_job_shrinks_an_elastic_job_instead_of_preempting_it_and_preempts_when_that_is_not_enough() {
    let c = up_with(two_tiers("t-preempt", ""));
    let elastic = elastic_on_all(&c);

    // Two nodes for the high tier: the elastic job gives them up and runs on.
    let from = c.ctld_log().len();
    let high = c.sbatch(&["-p", "high", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    wait_said(&c, from, &said::shrink_instead_of_preempting(elastic, high), Duration::from_secs(30));
    wait_said(&c, from, &said::shrink_committed(elastic, ""), Duration::from_secs(60));
    running_on(&c, high, "the high job running");
    assert_eq!(job_field(&c, elastic, "JobState"), "RUNNING");
    assert_eq!(job_field(&c, elastic, "NumNodes"), "2");
    assert_eq!(job_field(&c, elastic, "Restarts"), "0", "the elastic job was not requeued");
    assert!(!said::any_preemption().in_log(&c.ctld_log()[from..]), "nothing was preempted");

    // Three more nodes: shrinking to its minimum gives one; it is requeued.
    let from = c.ctld_log().len();
    let more = c.sbatch(&["-p", "high", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let line = wait_said(&c, from, &said::preempting(more, elastic), Duration::from_secs(30));
    assert!(line.contains("starts once their nodes are back"), "{line}");
    running_on(&c, more, "the second high job running");
    testcluster::wait::until("the elastic job requeued", Duration::from_secs(30), || {
        let restarts = job_field(&c, elastic, "Restarts");
        if restarts == "1" {
            Ok(Some(()))
        } else {
            Err(format!("Restarts={restarts}"))
        }
    })
    .unwrap();
    for id in [elastic, high, more] {
        let _ = testcluster::process::output(c.cmd("scancel").arg(id.to_string()));
    }
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn with_shrink_before_preempt_off_the_elastic_job_is_preempted_as_under_stock() {
    let c = up_with(two_tiers("t-preempt-off", "ShrinkBeforePreempt=no\n"));
    let elastic = elastic_on_all(&c);
    let from = c.ctld_log().len();
    let high = c.sbatch(&["-p", "high", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    wait_said(&c, from, &said::preempting(high, elastic), Duration::from_secs(30));
    running_on(&c, high, "the high job running");
    assert!(!said::any_shrink_instead_of_preempting().in_log(&c.ctld_log()[from..]), "a shrink was made though off");
    assert_ne!(job_field(&c, elastic, "Restarts"), "0", "the elastic job was requeued");
    for id in [elastic, high] {
        let _ = testcluster::process::output(c.cmd("scancel").arg(id.to_string()));
    }
}

/// The two tiers with suspension: gang scheduling resumes a suspended job
/// once the job that preempted it is gone.
fn two_tiers_suspending(spec: ClusterSpec) -> ClusterSpec {
    spec.set("PreemptType", "preempt/partition_prio")
        .set("PreemptMode", "SUSPEND,GANG")
        .partition(Partition::new("low", "ALL").default_partition().extra("MaxTime=INFINITE State=UP PriorityTier=1"))
        .partition(Partition::new("high", "ALL").extra("MaxTime=INFINITE State=UP PriorityTier=2"))
}

fn state_becomes(c: &Cluster, id: u32, state: &str) {
    c.wait_job(id, state, Duration::from_secs(60), |j| j.state == state).unwrap_or_else(|e| {
        c.print_logs();
        panic!("{}: JobId={id}: {e}", c.spec.name)
    });
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn with_suspend_and_gang_a_lower_tier_job_is_suspended_and_resumed_as_under_stock() {
    let stock = ClusterSpec::new("t-suspend-stock", 4)
        .set("SelectType", "select/cons_tres")
        .set("SelectTypeParameters", "CR_Core")
        .set("SchedulerParameters", "bf_interval=1");
    let ours = malleable_spec("t-suspend", 4, "Strategy=easy\nSchedulerTick=2\n");
    assert_eq!(ours.get("SchedulerType"), Some("sched/malleable"));
    for spec in [stock, ours] {
        let c = up_with(two_tiers_suspending(spec));
        let low = c.sbatch(&["-N4", "-t", "10", "--wrap", "sleep 600"]).unwrap();
        state_becomes(&c, low, "RUNNING");
        let high = c.sbatch(&["-p", "high", "-N2", "-t", "5", "--wrap", "sleep 600"]).unwrap();
        state_becomes(&c, high, "RUNNING");
        state_becomes(&c, low, "SUSPENDED");
        assert_eq!(job_field(&c, low, "Restarts"), "0", "{}: suspended, not requeued", c.spec.name);
        // The high job gone, gang scheduling gives the low job its nodes back.
        testcluster::process::output(c.cmd("scancel").arg(high.to_string())).unwrap();
        state_becomes(&c, low, "RUNNING");
        assert_eq!(job_field(&c, low, "NumNodes"), "4");
        if c.spec.get("SchedulerType") == Some("sched/malleable") {
            let log = c.ctld_log();
            // Suspension frees the nodes at once: select_nodes starts the job.
            let by = format!(" by preempting JobId={low}");
            assert!(
                said::LogLine::all(&log).any(|l| matches!(&l, said::LogLine::Started { detail, .. } if *detail == by)
                    && l.job() == Some(said::JobId(high))),
                "ours decided the preemption: {}",
                c.log_tail("slurmctld.log", 30)
            );
            let errors = log.lines().any(|l| malleable_model::slurm_lines::is_error_of(l, "sched/malleable"));
            assert!(!errors, "{}", c.log_tail("slurmctld.log", 30));
        }
        let _ = testcluster::process::output(c.cmd("scancel").arg(low.to_string()));
    }
}
