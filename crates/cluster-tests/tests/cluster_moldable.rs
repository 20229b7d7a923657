//! A moldable start on a real cluster: under Strategy=mtct-backfill an elastic
//! job that asked for more nodes than are idle starts at once on fewer (as
//! the simulator starts it), with its time limit stretched for the slower
//! run, grows when nodes come free, and finishes its work right.

use std::time::Duration;

use cluster_tests::malleable::{
    example_script, job_field, job_output, malleable_spec, serial_checksum, submit, wait_said,
};
use cluster_tests::said;
use cluster_tests::up_with;
use testcluster::process::run;

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_elastic_job_starts_on_fewer_nodes_than_it_asked_for() {
    let c = up_with(malleable_spec("t-moldable", 3, "Strategy=mtct-backfill\nSchedulerTick=5\n"));
    let rigid = c.sbatch(&["-N1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    c.wait_job(rigid, "running", Duration::from_secs(30), |j| j.has_started()).unwrap();

    // Three nodes asked for, two idle: it starts on the two.
    let app = "--cells 8192 --iterations 200 --unit-us 25";
    let script = example_script(&c, "moldable", app);
    let id = submit(&c, &script, "moldable.out", &["-N3", "--min-nodes-invasive=1", "--max-nodes-invasive=3"]);
    let started = wait_said(&c, 0, &said::started_or_refused(id), Duration::from_secs(30));
    assert!(said::started(id).matches(&started), "{started}\n{}", c.ctld_log());
    assert_eq!(job_field(&c, id, "NumNodes"), "2");
    // Its work takes 3/2 as long on two nodes: 5 minutes become 8 (7.5
    // rounded up), or Slurm would end it for running slower.
    assert_eq!(job_field(&c, id, "TimeLimit"), "00:08:00");

    // The rigid job ends; the elastic one grows onto its node.
    let from = c.ctld_log().len();
    run(c.cmd("scancel").arg(rigid.to_string())).unwrap();
    wait_said(&c, from, &said::expand_committed(id, ""), Duration::from_secs(60));
    assert_eq!(job_field(&c, id, "NumNodes"), "3");

    let done = c.wait_job(id, "finished", Duration::from_secs(180), |j| j.is_finished()).unwrap();
    assert_eq!(done.state, "COMPLETED");
    let out = job_output(&c, "moldable.out");
    assert_eq!(cluster_tests::malleable::checksum_in(&out), Some(serial_checksum(app)), "{out}");
    // One start, never a refused one.
    assert!(!said::could_not_start(id).in_log(&c.ctld_log()), "{}", c.ctld_log());
}
