//! MPI applications resized on a real cluster under mtct-backfill: the C
//! Jacobi (mall_jacobi_mpi.c) run by `mall-run --mpi restart`, built with
//! Open MPI (srun --mpi=pmix) and with MPICH (srun --mpi=pmi2), grows into
//! idle nodes, shrinks for a waiting job, each time checkpointing and
//! starting again as one MPI step on the new nodes, and ends with the grid
//! its serial run computes; so does its mpi4py twin (Open MPI), whose grid
//! is the C one's to the last bit.

use std::time::Duration;

use cluster_tests::malleable::{checksum_in, job_field, job_output, malleable_spec, submit, tool, wait_log, wait_said};
use cluster_tests::said;
use cluster_tests::up_with;
use testcluster::Cluster;

const APP: &str = "--rows 240 --cols 48 --iterations 400 --unit-us 400";
/// Python computes slowly: a smaller grid, the same emulated time.
const PY_APP: &str = "--rows 48 --cols 16 --iterations 150 --unit-us 2000";

/// A 4-node cluster for MPI jobs, each node with a TmpFS of its own (as
/// mpi/pmix needs, see `ClusterSpec::own_tmpfs`).
fn mpi_cluster(name: &str) -> Cluster {
    up_with(malleable_spec(name, 4, "Strategy=mtct-backfill\nSchedulerTick=5\n").own_tmpfs())
}

fn serial_checksum(binary: &str, app: &str) -> String {
    let out = std::process::Command::new(tool(binary)).arg("--serial").args(app.split(' ')).output().unwrap();
    checksum_in(&String::from_utf8_lossy(&out.stdout)).expect("the serial run prints its checksum")
}

/// The elastic MPI job (`command` with `app`) grows from 1 node to 4,
/// shrinks to 2 for a rigid job, grows back once it ends, and computes what
/// `serial --serial app` does.
fn grows_and_shrinks_by_restarting(name: &str, command: &str, plugin: &str, app: &str, serial: &str) {
    let c = mpi_cluster(name);
    let script = c.dir.join("mpi.sh");
    let text = format!(
        "#!/bin/sh\nexec {} --poll-ms 50 --report-every 1 --mpi restart --mpi-plugin {plugin} -- {command} {app}\n",
        tool("mall-run").display(),
    );
    std::fs::write(&script, text).unwrap();
    let id = submit(&c, &script, "mpi.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4"]);
    wait_said(&c, 0, &said::expand_committed(id, "n2,n3,n4"), Duration::from_secs(90));
    assert_eq!(job_field(&c, id, "NumNodes"), "4");

    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 3"]).unwrap();
    wait_said(&c, from, &said::shrink_committed(id, ""), Duration::from_secs(60));
    c.wait_job(rigid, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();

    let done = c.wait_job(id, "finished", Duration::from_secs(240), |j| j.is_finished()).unwrap();
    let out = job_output(&c, "mpi.out");
    assert_eq!(done.state, "COMPLETED", "{out}");
    assert!(out.contains("expand to 4 ranks, restarting"), "{out}");
    assert!(out.contains("shrink to 2 ranks, restarting"), "{out}");
    assert!(out.contains("resumed at iteration") && out.contains("on 4 ranks"), "{out}");
    // The last step held every rank: the grid, gathered, is the serial one.
    assert_eq!(checksum_in(&out), Some(serial_checksum(serial, app)), "{out}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_open_mpi_job_grows_and_shrinks_by_restarting_with_pmix() {
    let jacobi = tool("mall-jacobi-openmpi").display().to_string();
    grows_and_shrinks_by_restarting("t-mpi-ompi", &jacobi, "pmix", APP, "mall-jacobi-openmpi");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_mpich_job_grows_and_shrinks_by_restarting_with_pmi2() {
    let jacobi = tool("mall-jacobi-mpich").display().to_string();
    grows_and_shrinks_by_restarting("t-mpi-mpich", &jacobi, "pmi2", APP, "mall-jacobi-mpich");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_mpi4py_job_grows_and_shrinks_by_restarting_and_computes_the_c_grid() {
    // Debian's python, where python3-mpi4py is (a python3 earlier on PATH may lack it).
    let python = format!("/usr/bin/python3 {}", tool("mall_jacobi_mpi4py.py").display());
    grows_and_shrinks_by_restarting("t-mpi-py", &python, "pmix", PY_APP, "mall-jacobi-openmpi");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_open_mpi_job_that_loses_a_node_starts_again_on_the_nodes_left_from_its_last_checkpoint() {
    // slurmctld gives up on a silent slurmd after 5 s.
    let c = up_with(
        malleable_spec("t-mpi-lost", 3, "Strategy=mtct-backfill\nSchedulerTick=5\n")
            .own_tmpfs()
            .set("SlurmdTimeout", "5"),
    );
    let app = "--rows 240 --cols 48 --iterations 600 --unit-us 400 --checkpoint-every 20";
    let script = c.dir.join("lost.sh");
    let text = format!(
        "#!/bin/sh\nexec {} --poll-ms 50 --report-every 1 --mpi restart --mpi-plugin pmix -- {} {app}\n",
        tool("mall-run").display(),
        tool("mall-jacobi-openmpi").display(),
    );
    std::fs::write(&script, text).unwrap();
    let id = submit(&c, &script, "lost.out", &["-N3", "--no-kill", "--min-nodes-invasive=2", "--max-nodes-invasive=3"]);
    // Its runtime reports every ten iterations: after three reports it has
    // saved a checkpoint (every twenty) to start again from.
    wait_log(&c, 0, &[&format!("seq=4 REPORT job={id}")], Duration::from_secs(90));
    assert_eq!(job_field(&c, id, "NumNodes"), "3");
    c.crash_node("n3");
    wait_said(&c, 0, &said::lost(id, "n3", true), Duration::from_secs(90));
    wait_said(&c, 0, &said::lost_committed(id, "n3"), Duration::from_secs(90));

    let done = c.wait_job(id, "finished", Duration::from_secs(240), |j| j.is_finished()).unwrap();
    let out = job_output(&c, "lost.out");
    assert_eq!(done.state, "COMPLETED", "{out}");
    assert!(out.contains("starts again on n1,n2"), "{out}");
    assert!(out.contains("resumed at iteration") && out.contains("on 2 ranks"), "{out}");
    assert_eq!(checksum_in(&out), Some(serial_checksum("mall-jacobi-openmpi", app)), "{out}");
}
