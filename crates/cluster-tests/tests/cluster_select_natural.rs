//! select/natural loaded by a stock slurmctld beside sched/backfill (Iserte
//! et al. 2025's set-up): backfill starts the jobs on the nodes
//! select/linear allocates; a malleable job that asks at its sync points is
//! resized by NATURAL: it grows into idle nodes and releases exactly what a
//! waiting job lacks, whose priority is raised so that the scheduler starts
//! it there. Commands load every select plugin, this one too, and run as ever;
//! heterogeneous jobs, which slurmctld takes only under sched/backfill, too.

use std::time::Duration;

use cluster_tests::malleable::{grows_then_releases_when_asking, wait_said};
use cluster_tests::said;
use cluster_tests::{plugin_dir, refused, up_with};
use slurm::common::refusal::Refusal;
use testcluster::process::{output, run};
use testcluster::{plugins, Cluster, ClusterSpec};

const APP: &str = "--cells 4096 --iterations 100000 --unit-us 20 --report-every 10";

fn spec(name: &str) -> ClusterSpec {
    plugins::select_natural(ClusterSpec::new(name, 4), &plugin_dir()).networked()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn beside_sched_backfill_a_job_that_asks_is_resized() {
    let c = up_with(spec("t-selnat"));
    let config = output(c.cmd("scontrol").args(["show", "config"])).unwrap();
    assert!(config.lines().any(|l| l.starts_with("SelectType") && l.ends_with("select/natural")), "{config}");
    assert!(config.lines().any(|l| l.starts_with("SchedulerType") && l.ends_with("sched/backfill")), "{config}");
    // A rigid step runs as ever: srun loads select/natural too.
    let hosts = output(c.cmd("srun").args(["-N2", "-t", "1", "hostname"])).unwrap();
    assert_eq!(hosts.lines().count(), 2, "{hosts}");

    // An elastic job that asks grows to 4, then releases exactly two nodes
    // for a waiting 2-node job, whose priority is raised so that backfill
    // starts it on them.
    let (id, rigid, from) = grows_then_releases_when_asking(&c, APP);
    wait_said(&c, from, &said::priority_raised(rigid), Duration::from_secs(10));
    run(c.cmd("scancel").arg(id.to_string()).arg(rigid.to_string())).unwrap();
    c.wait_job(id, "cancelled", Duration::from_secs(30), |j| j.is_finished()).unwrap();

    // Beside sched/backfill slurmctld takes heterogeneous jobs, and the
    // SPANK plugin lets them through; an elastic one it refuses, saying why.
    let het = c.sbatch(&["-N1", "-t", "1", ":", "-N1", "-t", "1", "--wrap", "true"]).unwrap();
    c.wait_job(het, "done", Duration::from_secs(30), |j| j.is_finished()).unwrap();
    let elastic = c
        .cmd("sbatch")
        .args(["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=2", ":", "-N1", "--wrap", "true"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&elastic.stderr);
    assert!(!elastic.status.success(), "an elastic heterogeneous job was accepted: {said}");
    assert!(said.contains("the malleable options cannot be given to a heterogeneous job"), "{said}");
}

#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn a_strategy_that_does_not_answer_stops_slurmctld_saying_why() {
    let c = Cluster::create(spec("t-selnat-bad").file("malleable.conf", "Strategy=easy\n")).unwrap();
    let (refusal, _) = refused(&c);
    assert!(matches!(refusal, Refusal::Start(_)), "{refusal}");
    let why = "Strategy=easy: select/natural answers the jobs that ask with one of natural, natural-plan";
    assert!(refusal.why().contains(why), "{refusal}");
}
