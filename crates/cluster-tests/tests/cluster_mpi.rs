//! MPI applications resized on a real cluster under mtct-backfill: the C
//! Jacobi (mall_jacobi_mpi.c) run by `mall-run --mpi restart`, built with
//! Open MPI (srun --mpi=pmix) and with MPICH (srun --mpi=pmi2), grows into
//! idle nodes, shrinks for a waiting job, each time checkpointing and
//! starting again as one MPI step on the new nodes, and ends with the grid
//! its serial run computes; so does its mpi4py twin (Open MPI), whose grid
//! is the C one's to the last bit.

use std::path::PathBuf;
use std::time::Duration;

use cluster_tests::malleable::{checksum_in, job_field, job_output, malleable_spec, submit, tool, wait_said};
use cluster_tests::said;
use cluster_tests::up_with;
use testcluster::{wait, Cluster, ClusterSpec};

const APP: &str = "--rows 240 --cols 48 --iterations 400 --unit-us 400";
/// Python computes slowly: a smaller grid, the same emulated time.
const PY_APP: &str = "--rows 48 --cols 16 --iterations 150 --unit-us 2000";

/// A cluster of `nodes` nodes for MPI jobs, each node with a TmpFS of its
/// own (as mpi/pmix needs, see `ClusterSpec::own_tmpfs`).
fn mpi_spec(name: &str, nodes: usize) -> ClusterSpec {
    malleable_spec(name, nodes, "Strategy=mtct-backfill\nSchedulerTick=5\n").own_tmpfs()
}

/// A batch script in `c`'s directory that runs `command app` under
/// `mall-run --mpi restart` with MPI plugin `plugin`.
fn restart_script(c: &Cluster, file: &str, plugin: &str, command: &str, app: &str) -> PathBuf {
    let script = c.dir.join(file);
    let text = format!(
        "#!/bin/sh\nexec {} --poll-ms 50 --report-every 1 --mpi restart --mpi-plugin {plugin} -- {command} {app}\n",
        tool("mall-run").display(),
    );
    std::fs::write(&script, text).unwrap();
    script
}

fn serial_checksum(binary: &str, app: &str) -> String {
    let out = std::process::Command::new(tool(binary)).arg("--serial").args(app.split(' ')).output().unwrap();
    checksum_in(&String::from_utf8_lossy(&out.stdout)).expect("the serial run prints its checksum")
}

/// The elastic MPI job (`command` with `app`) grows from 1 node to 4,
/// shrinks to 2 for a rigid job, grows back once it ends, and computes what
/// `serial --serial app` does.
fn grows_and_shrinks_by_restarting(name: &str, command: &str, plugin: &str, app: &str, serial: &str) {
    let c = up_with(mpi_spec(name, 4));
    let script = restart_script(&c, "mpi.sh", plugin, command, app);
    let id = submit(&c, &script, "mpi.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4"]);
    wait_said(&c, 0, &said::expand_committed(id, "n2,n3,n4"), Duration::from_secs(90));
    assert_eq!(job_field(&c, id, "NumNodes"), "4");
    let out = shrinks_for_a_rigid_job_and_completes(&c, id, "mpi.out");
    assert!(out.contains("expand to 4 ranks, restarting"), "{out}");
    assert!(out.contains("shrink to 2 ranks, restarting"), "{out}");
    assert!(out.contains("resumed at iteration") && out.contains("on 4 ranks"), "{out}");
    // The last step held every rank: the grid, gathered, is the serial one.
    assert_eq!(checksum_in(&out), Some(serial_checksum(serial, app)), "{out}");
}

/// Job `id`, grown to 4 nodes, shrinks to 2 for a rigid job, which starts,
/// and completes: its output (in `file`).
fn shrinks_for_a_rigid_job_and_completes(c: &Cluster, id: u32, file: &str) -> String {
    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 3"]).unwrap();
    wait_said(c, from, &said::shrink_committed(id, ""), Duration::from_secs(60));
    c.wait_job(rigid, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
    let done = c.wait_job(id, "finished", Duration::from_secs(240), |j| j.is_finished()).unwrap();
    let out = job_output(c, file);
    assert_eq!(done.state, "COMPLETED", "{out}");
    out
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
    let c = up_with(mpi_spec("t-mpi-lost", 3).set("SlurmdTimeout", "5"));
    let app = "--rows 240 --cols 48 --iterations 600 --unit-us 400 --checkpoint-every 20";
    let jacobi = tool("mall-jacobi-openmpi").display().to_string();
    let script = restart_script(&c, "lost.sh", "pmix", &jacobi, app);
    let id = submit(&c, &script, "lost.out", &["-N3", "--no-kill", "--min-nodes-invasive=2", "--max-nodes-invasive=3"]);
    // Its runtime reports every ten iterations: after three reports it has
    // saved a checkpoint (every twenty) to start again from.
    wait_said(&c, 0, &said::request_taken(id, "mall1 seq=4 REPORT"), Duration::from_secs(90));
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

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_mpi_job_whose_restart_outlasts_the_adapt_timeout_is_given_the_time_its_steps_take() {
    // A second is less than an MPI restart takes (the old step's end, the
    // new one's launch, MPI_Init, the checkpoint's load): without the
    // runtime's bound every adaptation would be ended in its middle.
    let c = up_with(
        malleable_spec("t-mpi-bound", 4, "Strategy=mtct-backfill\nSchedulerTick=5\nAdaptTimeout=1\n").own_tmpfs(),
    );
    // The other nodes are busy until the runtime has measured its steps.
    let busy = c.sbatch(&["-N3", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    c.wait_job(busy, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
    let jacobi = tool("mall-jacobi-openmpi").display().to_string();
    let script = restart_script(&c, "bound.sh", "pmix", &jacobi, APP);
    let id = submit(&c, &script, "bound.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4"]);
    let line = wait_said(&c, 0, &said::adapt_bound(id), Duration::from_secs(90));
    let Some(said::LogLine::AdaptBound { bound_s, .. }) = said::LogLine::parse(&line) else { panic!("{line}") };
    assert!(bound_s > 1, "{line}");
    assert!(job_field(&c, id, "SystemComment").contains(&format!("adapt_s={bound_s}")), "the bound is in its status");

    assert!(c.cmd("scancel").arg(busy.to_string()).status().unwrap().success());
    // It grows onto the freed nodes, in one expand or more as they come free.
    wait::until("the job to hold the 4 nodes", Duration::from_secs(120), || {
        Ok((job_field(&c, id, "NumNodes") == "4").then_some(()))
    })
    .unwrap();
    let out = shrinks_for_a_rigid_job_and_completes(&c, id, "bound.out");
    assert!(!said::any_timed_out().in_log(&c.ctld_log()), "no adaptation ran out of time");
    assert_eq!(checksum_in(&out), Some(serial_checksum("mall-jacobi-openmpi", APP)), "{out}");
}
