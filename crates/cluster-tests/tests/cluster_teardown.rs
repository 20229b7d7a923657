//! Dropping a cluster stops more than the daemons with pid files: the
//! slurmstepd that slurmd forked for a running job, and the job's processes,
//! must not outlive it.

use std::fs;
use std::process::Command;
use std::time::Duration;

use cluster_tests::up;
use testcluster::process::pid_alive;
use testcluster::wait;

/// Name and parent pid, from /proc/PID/stat.
fn name_and_parent(pid: i32) -> Option<(String, i32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = stat.rsplit_once(") ")?;
    Some((head.split_once(" (")?.1.to_string(), rest.split_whitespace().nth(1)?.parse().ok()?))
}

/// Start time (field 22 of /proc/PID/stat): a pid that a new process took
/// after ours ended must not count as ours still running.
fn start_time(pid: i32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split_whitespace().nth(19)?.parse().ok()
}

/// Processes of job `job` of the cluster named `cluster`, by the environment
/// slurmstepd gives every task. This does not use the teardown's own way of
/// finding a cluster's processes (a slurmstepd's working directory), so the
/// test checks that way rather than repeats it.
fn job_processes(cluster: &str, job: u32) -> Vec<i32> {
    let want = [format!("SLURM_CLUSTER_NAME={cluster}"), format!("SLURM_JOB_ID={job}")];
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            let env = fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let vars: Vec<&[u8]> = env.split(|&b| b == 0).collect();
            want.iter().all(|w| vars.contains(&w.as_bytes()))
        })
        .collect()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn dropping_the_cluster_stops_its_slurmstepd_and_job_processes() {
    let c = up("t-teardown", 1);
    // ClusterName is the cluster's name without its non-alphanumerics.
    let cluster_name = "tteardown";
    let id = c.sbatch(&["-N1", "-t", "10", "--wrap", "sleep 300"]).unwrap();
    c.wait_job(id, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let (sleep, stepd) = wait::until("the job's sleep and its slurmstepd", Duration::from_secs(30), || {
        let procs = job_processes(cluster_name, id);
        let Some(&sleep) = procs.iter().find(|&&p| name_and_parent(p).is_some_and(|(n, _)| n == "sleep")) else {
            return Err(format!("job processes {procs:?}, none is sleep"));
        };
        let mut next = name_and_parent(sleep).map(|(_, ppid)| ppid);
        while let Some(pid) = next.filter(|&p| p > 1) {
            match name_and_parent(pid) {
                Some((name, _)) if name == "slurmstepd" => return Ok(Some((sleep, pid))),
                other => next = other.map(|(_, ppid)| ppid),
            }
        }
        Err(format!("sleep {sleep} has no slurmstepd above it"))
    })
    .unwrap();
    let ours: Vec<(i32, Option<u64>)> = [sleep, stepd].into_iter().map(|p| (p, start_time(p))).collect();

    drop(c);

    // pid_alive leaves out zombies: where PID 1 does not reap, a killed
    // process may stay one, but it runs nothing.
    let left: Vec<i32> = ours.iter().filter(|&&(p, t)| pid_alive(p) && start_time(p) == t).map(|&(p, _)| p).collect();
    let others: Vec<i32> = job_processes(cluster_name, id).into_iter().filter(|&p| pid_alive(p)).collect();
    // Clean up before failing, so that a failed run leaves nothing behind.
    for p in left.iter().chain(&others) {
        let _ = Command::new("kill").args(["-KILL", &p.to_string()]).status();
    }
    assert!(
        left.is_empty(),
        "still running after the cluster was dropped (sleep {sleep}, slurmstepd {stepd}): {left:?}"
    );
    assert!(others.is_empty(), "processes of JobId={id} still running after the cluster was dropped: {others:?}");
}
