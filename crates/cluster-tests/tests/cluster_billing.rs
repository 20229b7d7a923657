//! What a job is billed (the billable TRES that fair share counts and its
//! records bill) is its size in each of its runs: a run after a requeue on
//! more nodes than the last is billed for them.

use std::collections::BTreeMap;
use std::time::Duration;

use cluster_tests::malleable::malleable_spec;
use cluster_tests::up_with;
use testcluster::process::output;
use testcluster::Cluster;

/// The job's TRES as `scontrol show job` gives them, by name.
fn tres(c: &Cluster, id: u32) -> BTreeMap<String, String> {
    let shown = output(c.cmd("scontrol").args(["show", "job", &id.to_string()])).unwrap();
    let field = cluster_tests::show_field(&shown, "TRES");
    field.split(',').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_requeued_and_started_again_on_more_nodes_is_billed_for_them() {
    // A requeued job may start again cred_expire + 1 s later.
    let spec = malleable_spec("t-billing", 2, "Strategy=mtct-backfill\nSchedulerTick=5\n").cred_expire(5);
    let c = up_with(spec);
    // n2 busy: an elastic job that asks for both starts on n1 alone (a
    // moldable start).
    let busy = c.sbatch(&["-N1", "-w", "n2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    c.wait_job(busy, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let id = c
        .sbatch(&["-N2", "--min-nodes-invasive=1", "--max-nodes-invasive=2", "-t", "5", "--wrap", "sleep 300"])
        .unwrap();
    c.wait_job(id, "running on n1", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let first = tres(&c, id);
    assert_eq!((first.get("cpu"), first.get("billing")), (Some(&"1".into()), Some(&"1".into())), "{first:?}");

    // Requeued, and n2 freed while it waits out its BeginTime: its second
    // run has both nodes.
    output(c.cmd("scontrol").args(["requeue", &id.to_string()])).unwrap();
    output(c.cmd("scancel").arg(busy.to_string())).unwrap();
    c.wait_job(id, "running again on both nodes", Duration::from_secs(90), |j| {
        j.state == "RUNNING" && j.num_nodes == 2
    })
    .unwrap();
    // Stock computes the billing at a job's first start and after a resize
    // only: the second run was billed as the first, 1.
    let second = tres(&c, id);
    assert_eq!((second.get("cpu"), second.get("billing")), (Some(&"2".into()), Some(&"2".into())), "{second:?}");
    output(c.cmd("scancel").arg(id.to_string())).unwrap();
}
