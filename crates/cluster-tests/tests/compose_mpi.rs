//! MPI applications on the compose site, each host a container of its own
//! (its own network and /tmp, as real nodes have), under slurmdbd and
//! cgroups: alice's Open MPI Jacobi under `mall-run --mpi restart` grows
//! from one host to four, shrinks to two for bob's job and completes with
//! its serial run's grid; her MPICH one and her mpi4py one grow and
//! complete with theirs.

use std::time::Duration;

use cluster_tests::malleable::checksum_in;
use cluster_tests::said;
use cluster_tests::site::{as_user, put_file, sbatch_as, up_site, wait_ctld_said, wait_finished};
use testcluster::compose::Site;

/// A batch script of alice's: `command args` restarted with srun's `--mpi=plugin`.
fn mpi_job(site: &Site, name: &str, plugin: &str, command: &str, args: &str) -> u32 {
    let text = format!(
        "#!/bin/sh\n#SBATCH -N1 --min-nodes-invasive=1 --max-nodes-invasive=4 --time=5 --output={name}-%j.out\n\
         mall-run --mpi restart --mpi-plugin {plugin} --end-grace 10 -- {command} {args}\n"
    );
    let script = put_file(site, "alice", &format!("{name}.sh"), &text);
    sbatch_as(site, "alice", &[&script])
}

/// The job's output, once it completed, and its checksum against `serial --serial args`.
fn completed_with_serial_grid(site: &Site, id: u32, name: &str, serial: &str, args: &str) -> String {
    assert_eq!(wait_finished(site, id, Duration::from_secs(240)), "COMPLETED");
    let out = std::fs::read_to_string(site.dir.join(format!("home/alice/{name}-{id}.out"))).unwrap();
    let mut cmd = vec![serial, "--serial"];
    cmd.extend(args.split(' '));
    let alone = checksum_in(&as_user(site, "alice", &cmd));
    assert!(alone.is_some());
    assert_eq!(checksum_in(&out), alone, "{out}");
    out
}

#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn mpi_jobs_restart_onto_the_hosts_they_grow_onto_and_compute_their_serial_grid_on_the_site() {
    let site = up_site("t-site-mpi", 4, |s| s);
    let args = "--rows 240 --cols 48 --iterations 300 --unit-us 400";

    let id = mpi_job(&site, "ompi", "pmix", "mall-jacobi-openmpi", args);
    wait_ctld_said(&site, &said::expand_committed(id, "c2,c3,c4"), Duration::from_secs(90));
    // Bob's job outlasts it: growing back onto hosts it was shrunk off is
    // not tested here (it failed once on this site, an Open MPI rank killed
    // 2 s into the restarted step on such a host; not understood yet).
    let rigid = sbatch_as(&site, "bob", &["-N2", "-t", "5", "--wrap", "sleep 300"]);
    wait_ctld_said(&site, &said::shrink_committed(id, ""), Duration::from_secs(60));
    let out = completed_with_serial_grid(&site, id, "ompi", "mall-jacobi-openmpi", args);
    assert!(out.contains("expand to 4 ranks, restarting") && out.contains("shrink to 2 ranks, restarting"), "{out}");
    as_user(&site, "bob", &["scancel", &rigid.to_string()]);
    assert_eq!(wait_finished(&site, rigid, Duration::from_secs(60)), "CANCELLED");

    let id = mpi_job(&site, "mpich", "pmi2", "mall-jacobi-mpich", args);
    wait_ctld_said(&site, &said::expand_committed(id, "c2,c3,c4"), Duration::from_secs(90));
    let out = completed_with_serial_grid(&site, id, "mpich", "mall-jacobi-mpich", args);
    assert!(out.contains("resumed at iteration") && out.contains("on 4 ranks"), "{out}");

    let py = "--rows 48 --cols 16 --iterations 100 --unit-us 2000";
    let id = mpi_job(&site, "py", "pmix", "/usr/bin/python3 /usr/local/bin/mall_jacobi_mpi4py.py", py);
    wait_ctld_said(&site, &said::expand_committed(id, "c2,c3,c4"), Duration::from_secs(90));
    let out = completed_with_serial_grid(&site, id, "py", "mall-jacobi-openmpi", py);
    assert!(out.contains("mall-jacobi-mpi4py: resumed at iteration"), "{out}");
}

/// Debian 12's MPICH 4.0.2 (ch4:ucx over TCP) can deadlock in
/// MPI_Finalize across hosts (docs/malleable-jobs.md): most four-host runs
/// on the 22.05 site did. A step whose every rank said BYE is ended after
/// `--end-grace`, so each job completes, with its grid, within the grace
/// instead of holding its hosts until its time limit.
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn mpi_steps_stuck_in_mpi_finalize_are_ended_and_their_jobs_complete() {
    let site = up_site("t-site-mpi-end", 4, |s| s);
    let args = "--rows 240 --cols 48 --iterations 100 --unit-us 100";
    let text = format!(
        "#!/bin/sh\n#SBATCH -N4 --min-nodes-invasive=4 --max-nodes-invasive=4 --time=5 --output=end-%j.out\n\
         mall-run --mpi restart --mpi-plugin pmi2 --end-grace 5 -- mall-jacobi-mpich {args}\n"
    );
    let script = put_file(&site, "alice", "end.sh", &text);
    let ids: Vec<u32> = (0..3).map(|_| sbatch_as(&site, "alice", &[&script])).collect();
    let mut ended = 0;
    for id in ids {
        let out = completed_with_serial_grid(&site, id, "end", "mall-jacobi-mpich", args);
        ended += usize::from(out.contains("ending it"));
    }
    eprintln!("{ended} of 3 steps were ended by mall-run after their ranks said BYE");
}

/// A step slurmstepd cannot launch is said so by srun, which exits 0 all
/// the same (22.05): here its pmix socket's path is taken, as a host that
/// crashed leaves the socket of a step of the same id in slurmd's spool
/// for the job's next run there (chaos run 16's JobId=99). mall-run starts
/// the step again, and the job computes its serial grid. (Before, it took
/// the step for an application that never used the runtime, and the job
/// COMPLETED without a result.)
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn an_mpi_step_that_cannot_be_launched_is_started_again() {
    let site = up_site("t-mpi-launch", 1, |s| s);
    let args = "--rows 240 --cols 48 --iterations 100 --unit-us 100";
    let text = format!(
        "#!/bin/sh\n#SBATCH -N1 --min-nodes-invasive=1 --max-nodes-invasive=1 --time=5 --output=launch-%j.out\n\
         mall-run --mpi restart --mpi-plugin pmix -- mall-jacobi-openmpi {args}\n"
    );
    let script = put_file(&site, "alice", "launch.sh", &text);
    let id = sbatch_as(&site, "alice", &["-H", &script]);
    let socket = format!("/var/lib/slurm/slurmd/stepd.slurm.pmix.{id}.0");
    site.output(None, "c1", &["touch", &socket]).unwrap();
    site.output(None, "slurmctld", &["scontrol", "release", &id.to_string()]).unwrap();
    let out = completed_with_serial_grid(&site, id, "launch", "mall-jacobi-openmpi", args);
    assert!(out.contains("launch failed"), "the first step launched after all: {out}");
}
