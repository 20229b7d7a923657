//! Processes by pid: whether one is alive, reading pid files, stopping a
//! daemon by its pid file, finding and stopping the slurmstepd processes
//! and job processes of a cluster, and running a command for its output.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::wait;

pub use provision::cmd::{output, output_within, run, run_within};

/// Alive and not a zombie (a daemon whose parent is gone may linger as one
/// where PID 1 does not reap).
pub fn pid_alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

pub fn read_pid(file: &Path) -> Option<i32> {
    fs::read_to_string(file).ok()?.trim().parse().ok().filter(|&p| p > 0)
}

/// Stop the process named in a pid file: SIGTERM, wait, SIGKILL if it will
/// not go. Only a process whose name matches `comm` is signalled, so a pid
/// reused by something else is left alone.
pub fn stop_by_pid_file(file: &Path, comm: &str) {
    let Some(pid) = read_pid(file) else { return };
    let name = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if name.trim() != comm || !pid_alive(pid) {
        let _ = fs::remove_file(file);
        return;
    }
    send_signal(pid, "TERM");
    if wait::until(&format!("{comm} ({pid}) to exit"), Duration::from_secs(15), || Ok((!pid_alive(pid)).then_some(())))
        .is_err()
    {
        eprintln!("xtask: {comm} ({pid}) ignored SIGTERM, killing it");
        send_signal(pid, "KILL");
        let _ = wait::until("SIGKILL to take effect", Duration::from_secs(5), || Ok((!pid_alive(pid)).then_some(())));
    }
    let _ = fs::remove_file(file);
}

/// kill(1) rather than libc::kill, so that xtask needs no `unsafe`.
fn send_signal(pid: i32, sig: &str) {
    let _ = Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status();
}

/// Every process as (pid, parent pid, name), from /proc.
fn process_table() -> Vec<(i32, i32, String)> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The name may hold spaces and parentheses; it ends at the last ") ".
            let (head, rest) = stat.rsplit_once(") ")?;
            let name = head.split_once(" (")?.1.to_string();
            let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid, name))
        })
        .collect()
}

/// The disk space left where `path` is, as `df -h` says it ("45G"), or
/// "?": images, builds and sites fill it, and a full disk stalls MariaDB
/// (it waits for space) and every site's slurmdbd with it.
pub fn free_disk(path: &Path) -> String {
    let df = output_within(Command::new("df").args(["-h", "--output=avail"]).arg(path), Duration::from_secs(10));
    df.ok().and_then(|o| o.lines().nth(1).map(|l| l.trim().to_string())).unwrap_or_else(|| "?".into())
}

/// The live children of process `pid`, as (pid, command line).
pub fn children_of(pid: i32) -> Vec<(i32, String)> {
    process_table()
        .into_iter()
        .filter(|(child, ppid, _)| *ppid == pid && pid_alive(*child))
        .map(|(child, _, name)| {
            let cmd = provision::cmd::command_line(&child.to_string());
            (child, if cmd.is_empty() { name } else { cmd })
        })
        .collect()
}

/// The live slurmstepd processes of the cluster in `dir`.
///
/// They have no pid file, and slurmd double-forks them (their parent is
/// PID 1), so slurmd's process tree does not lead to them. Their command
/// line is a title like `slurmstepd: [1.batch]` that every cluster's first
/// job shares, and setting that title overwrote the environment area, so
/// /proc/PID/environ no longer shows their SLURM_CONF. What does tell them
/// apart is the working directory: slurmd changes into the directory of its
/// log file (else its spool directory), both inside the cluster's directory,
/// and slurmstepd inherits it and stays there (only the tasks it forks move
/// to the job's directory).
fn stepd_pids_in(dir: &Path) -> Vec<i32> {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    process_table()
        .into_iter()
        .filter(|(pid, _, name)| {
            name == "slurmstepd"
                && pid_alive(*pid)
                && fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .map(|(pid, _, _)| pid)
        .collect()
}

/// Stop the cluster's slurmstepd processes and the job processes under them
/// (a batch script's `sleep`, say): SIGTERM, wait, SIGKILL what is left.
/// The job processes are found as the slurmstepds' descendants, so they are
/// collected before anything is signalled: once their slurmstepd is gone
/// they belong to PID 1 and nothing ties them to the cluster any more.
pub fn stop_stepds_in(dir: &Path) {
    let table = process_table();
    let mut doomed = stepd_pids_in(dir);
    let mut i = 0;
    while i < doomed.len() {
        let parent = doomed[i];
        doomed.extend(table.iter().filter(|(_, ppid, _)| *ppid == parent).map(|(pid, _, _)| *pid));
        i += 1;
    }
    stop_processes(&doomed, "slurmstepd or job processes", Duration::from_secs(10));
}

/// Stop the processes `pids` (`what` names them in the log): SIGTERM, wait
/// up to `grace`, SIGKILL those left.
pub fn stop_processes(pids: &[i32], what: &str, grace: Duration) {
    if pids.is_empty() {
        return;
    }
    for &pid in pids {
        send_signal(pid, "TERM");
    }
    let all_gone = || Ok(pids.iter().all(|&p| !pid_alive(p)).then_some(()));
    if wait::until(&format!("{what} to exit"), grace, all_gone).is_err() {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| pid_alive(p)).collect();
        eprintln!("xtask: {what} {left:?} ignored SIGTERM, killing them");
        for &pid in &left {
            send_signal(pid, "KILL");
        }
        let _ = wait::until("SIGKILL to take effect", Duration::from_secs(5), all_gone);
    }
}

/// The job processes a node of the cluster runs (their environment names
/// the node and the cluster's slurm.conf), and the slurmstepds above them.
fn node_job_pids(conf: &Path, node: &str) -> Vec<i32> {
    let table = process_table();
    let conf = format!("SLURM_CONF={}", conf.display());
    let here = format!("SLURMD_NODENAME={node}");
    let mut pids = Vec::new();
    for (pid, ppid, _) in &table {
        let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else { continue };
        let vars: Vec<&[u8]> = env.split(|&b| b == 0).collect();
        if vars.contains(&here.as_bytes()) && vars.contains(&conf.as_bytes()) {
            pids.push(*pid);
            if table.iter().any(|(p, _, name)| p == ppid && name == "slurmstepd") {
                pids.push(*ppid);
            }
        }
    }
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// A node of the cluster crashes: its slurmd, its slurmstepds and its job
/// processes are killed at once (SIGKILL), and nothing tells slurmctld.
pub fn crash_node(dir: &Path, conf: &Path, node: &str) {
    let mut doomed = node_job_pids(conf, node);
    doomed.extend(read_pid(&dir.join(format!("run/slurmd-{node}.pid"))));
    for &pid in &doomed {
        send_signal(pid, "KILL");
    }
    let _ = wait::until(&format!("{node}'s processes to die"), Duration::from_secs(5), || {
        Ok(doomed.iter().all(|&p| !pid_alive(p)).then_some(()))
    });
}
