//! A whole Slurm cluster on this machine: munged, slurmctld and N slurmd
//! daemons (Debian builds Slurm with --enable-multiple-slurmd), each in a
//! private directory with its own ports, loading our plugins before the
//! system ones. Every daemon writes a pid file and is stopped by it, also
//! when a test panics (the cluster is stopped on drop, after printing the
//! daemons' logs if the thread is panicking); the slurmstepds slurmd forks
//! for jobs have none and are found by their working directory instead.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::jobs::{parse_show_job, JobInfo};
use crate::setup::{output, run, SLURM_PLUGIN_SYSTEM_DIR};
use crate::{wait, Result};

/// What cluster to run.
#[derive(Clone, Debug)]
pub struct ClusterSpec {
    /// Names its directory and its ClusterName.
    pub name: String,
    pub nodes: usize,
    /// SlurmctldPort; slurmd n1..nN listen on the ports after it.
    pub port_base: u16,
    pub scheduler_type: String,
    pub scheduler_parameters: String,
    /// Contents of malleable.conf; None writes no file.
    pub malleable_conf: Option<String>,
    /// Where our staged plugins are (searched before the system dir).
    pub plugin_dir: PathBuf,
    /// More slurm.conf lines.
    pub extra_conf: String,
}

impl ClusterSpec {
    pub fn new(name: &str, nodes: usize, port_base: u16, plugin_dir: &Path) -> ClusterSpec {
        ClusterSpec {
            name: name.to_string(),
            nodes,
            port_base,
            scheduler_type: "sched/malleable".into(),
            scheduler_parameters: "sched_interval=-1,defer".into(),
            malleable_conf: Some("Strategy=easy\nSchedulerTick=5\n".into()),
            plugin_dir: plugin_dir.to_path_buf(),
            extra_conf: String::new(),
        }
    }
}

pub struct Cluster {
    pub spec: ClusterSpec,
    pub dir: PathBuf,
    /// Leave the daemons running when dropped (`cluster up`, `demo --keep`).
    pub keep: bool,
}

/// Where clusters live: short paths, because munge's socket path is limited
/// to 108 bytes and a checkout may sit deep.
pub fn clusters_root() -> PathBuf {
    std::env::var_os("MALLEABLE_CLUSTER_ROOT").map_or_else(|| PathBuf::from("/tmp/malleable-clusters"), PathBuf::from)
}

fn hostname() -> Result<String> {
    Ok(output(Command::new("hostname").arg("-s"))?.trim().to_string())
}

fn chown_munge(path: &Path) -> Result<()> {
    run(Command::new("chown").args(["munge:munge"]).arg(path))
}

fn mkdir(path: &Path, mode: u32) -> Result<()> {
    fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())
}

/// Alive and not a zombie (a daemon whose parent is gone may linger as one
/// where PID 1 does not reap).
pub fn pid_alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

fn read_pid(file: &Path) -> Option<i32> {
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
fn stop_stepds_in(dir: &Path) {
    let table = process_table();
    let mut doomed = stepd_pids_in(dir);
    let mut i = 0;
    while i < doomed.len() {
        let parent = doomed[i];
        doomed.extend(table.iter().filter(|(_, ppid, _)| *ppid == parent).map(|(pid, _, _)| *pid));
        i += 1;
    }
    if doomed.is_empty() {
        return;
    }
    for &pid in &doomed {
        send_signal(pid, "TERM");
    }
    let all_gone = || Ok(doomed.iter().all(|&p| !pid_alive(p)).then_some(()));
    if wait::until("slurmstepd and its job processes to exit", Duration::from_secs(10), all_gone).is_err() {
        let left: Vec<i32> = doomed.iter().copied().filter(|&p| pid_alive(p)).collect();
        eprintln!("xtask: slurmstepd or job processes {left:?} ignored SIGTERM, killing them");
        for &pid in &left {
            send_signal(pid, "KILL");
        }
        let _ = wait::until("SIGKILL to take effect", Duration::from_secs(5), all_gone);
    }
}

impl Cluster {
    pub fn dir_of(name: &str) -> PathBuf {
        clusters_root().join(name)
    }

    pub fn conf_path(&self) -> PathBuf {
        self.dir.join("etc/slurm.conf")
    }

    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("log")
    }

    /// Write the configuration and start munged; Slurm's daemons are not
    /// started yet. Daemons left over from an earlier run of the same name
    /// are stopped first and the directory is made anew.
    pub fn create(spec: ClusterSpec) -> Result<Cluster> {
        let dir = Cluster::dir_of(&spec.name);
        stop_all_in(&dir);
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
        let cluster = Cluster { spec, dir, keep: false };
        for sub in ["etc", "log", "state", "spool", "run"] {
            mkdir(&cluster.dir.join(sub), 0o755)?;
        }
        mkdir(&clusters_root(), 0o755)?;
        cluster.write_conf()?;
        cluster.start_munge()?;
        Ok(cluster)
    }

    /// create, slurmctld, every slurmd, and wait until all nodes are idle.
    pub fn up(spec: ClusterSpec) -> Result<Cluster> {
        let cluster = Cluster::create(spec)?;
        cluster.start_controller()?;
        cluster.start_nodes()?;
        cluster.wait_nodes_idle(Duration::from_secs(60))?;
        Ok(cluster)
    }

    pub fn node_names(&self) -> Vec<String> {
        (1..=self.spec.nodes).map(|i| format!("n{i}")).collect()
    }

    pub fn write_conf(&self) -> Result<()> {
        let s = &self.spec;
        let d = self.dir.display();
        let host = hostname()?;
        let conf = format!(
            "# Written by cargo xtask: a {nodes}-node cluster on this machine.\n\
             ClusterName={name}\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={d}/munge/munge.socket\n\
             PluginDir={ours}:{system}\n\
             SchedulerType={sched}\n\
             SchedulerParameters={params}\n\
             SelectType=select/linear\n\
             PriorityType=priority/basic\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             JobCompType=jobcomp/filetxt\n\
             JobCompLoc={d}/log/jobcomp.txt\n\
             MpiDefault=none\n\
             SwitchType=switch/none\n\
             ReturnToService=2\n\
             SlurmdParameters=config_overrides\n\
             DebugFlags=NO_CONF_HASH\n\
             MinJobAge=86400\n\
             KillWait=2\n\
             InactiveLimit=0\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool/%n\n\
             SlurmctldPidFile={d}/run/slurmctld.pid\n\
             SlurmdPidFile={d}/run/slurmd-%n.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\n\
             SlurmdLogFile={d}/log/slurmd-%n.log\n\
             SlurmctldDebug=info\n\
             SlurmdDebug=info\n\
             NodeName=n[1-{nodes}] NodeHostname={host} NodeAddr=127.0.0.1 Port=[{first}-{last}] CPUs=1 State=UNKNOWN\n\
             PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n\
             {extra}",
            nodes = s.nodes,
            name = s.name.replace(|c: char| !c.is_ascii_alphanumeric(), ""),
            ctld_port = s.port_base,
            ours = s.plugin_dir.display(),
            system = SLURM_PLUGIN_SYSTEM_DIR,
            sched = s.scheduler_type,
            params = s.scheduler_parameters,
            first = s.port_base + 1,
            last = s.port_base + s.nodes as u16,
            extra = s.extra_conf,
        );
        fs::write(self.conf_path(), conf).map_err(|e| e.to_string())?;
        let mconf = self.dir.join("etc/malleable.conf");
        match &s.malleable_conf {
            Some(text) => fs::write(&mconf, text).map_err(|e| e.to_string())?,
            None => {
                let _ = fs::remove_file(&mconf);
            }
        }
        Ok(())
    }

    fn start_munge(&self) -> Result<()> {
        let m = self.dir.join("munge");
        mkdir(&m, 0o755)?;
        chown_munge(&m)?;
        let key = m.join("munge.key");
        fs::copy("/etc/munge/munge.key", &key).map_err(|e| format!("cannot copy /etc/munge/munge.key: {e}"))?;
        fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).map_err(|e| e.to_string())?;
        chown_munge(&key)?;
        run(Command::new("runuser").args(["-u", "munge", "--", "munged"]).args([
            format!("--socket={}", m.join("munge.socket").display()),
            format!("--key-file={}", key.display()),
            format!("--pid-file={}", m.join("munged.pid").display()),
            format!("--log-file={}", m.join("munged.log").display()),
            format!("--seed-file={}", m.join("munged.seed").display()),
        ]))?;
        wait::until("munged's socket", Duration::from_secs(10), || Ok(m.join("munge.socket").exists().then_some(())))
    }

    /// A Slurm client command pointed at this cluster.
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf_path());
        c
    }

    /// Start slurmctld (it daemonizes) and wait until it answers.
    pub fn start_controller(&self) -> Result<()> {
        self.spawn_controller()?;
        wait::until("slurmctld to answer scontrol ping", Duration::from_secs(30), || {
            if !self.controller_running() && self.dir.join("run/slurmctld.pid").exists() {
                return Err("slurmctld exited".into());
            }
            let out = self.cmd("scontrol").arg("ping").output().map_err(|e| e.to_string())?;
            Ok((out.status.success() && String::from_utf8_lossy(&out.stdout).contains("is UP")).then_some(()))
        })
        .map_err(|e| format!("{e}\n{}", self.log_tail("slurmctld.log", 30)))
    }

    /// Only launch slurmctld; for tests that expect it to refuse to start.
    pub fn spawn_controller(&self) -> Result<()> {
        run(self.cmd("slurmctld").arg("-f").arg(self.conf_path()))
    }

    pub fn controller_pid(&self) -> Option<i32> {
        read_pid(&self.dir.join("run/slurmctld.pid"))
    }

    pub fn controller_running(&self) -> bool {
        self.controller_pid().is_some_and(pid_alive)
    }

    pub fn stop_controller(&self) {
        stop_by_pid_file(&self.dir.join("run/slurmctld.pid"), "slurmctld");
    }

    pub fn start_nodes(&self) -> Result<()> {
        for n in self.node_names() {
            mkdir(&self.dir.join("spool").join(&n), 0o755)?;
            run(self.cmd("slurmd").arg("-N").arg(&n).arg("-f").arg(self.conf_path()))?;
        }
        Ok(())
    }

    pub fn wait_nodes_idle(&self, timeout: Duration) -> Result<()> {
        let want = self.spec.nodes;
        wait::until(&format!("{want} idle nodes"), timeout, || {
            let out = output(self.cmd("sinfo").args(["-h", "-N", "-o", "%N %T"]))?;
            let idle = out.lines().filter(|l| l.ends_with(" idle")).count();
            if idle == want {
                Ok(Some(()))
            } else {
                Err(out.replace('\n', ", "))
            }
        })
        .map_err(|e| format!("{e}\n{}", self.log_tail("slurmctld.log", 30)))
    }

    /// Submit a batch job; returns its id.
    pub fn sbatch(&self, args: &[&str]) -> Result<u32> {
        let out = output(self.cmd("sbatch").arg("--parsable").arg("--output=/dev/null").args(args))?;
        out.trim().split(';').next().unwrap_or("").parse().map_err(|_| format!("sbatch printed {out:?}"))
    }

    /// Every job slurmctld knows (completed ones too: MinJobAge is a day).
    pub fn jobs(&self) -> Result<Vec<JobInfo>> {
        Ok(parse_show_job(&output(self.cmd("scontrol").args(["show", "job", "-o"]))?))
    }

    pub fn job(&self, id: u32) -> Result<JobInfo> {
        parse_show_job(&output(self.cmd("scontrol").args(["show", "job", "-o", &id.to_string()]))?)
            .into_iter()
            .next()
            .ok_or_else(|| format!("no record of JobId={id}"))
    }

    /// Wait until `pred` holds for the job.
    pub fn wait_job(&self, id: u32, what: &str, timeout: Duration, pred: impl Fn(&JobInfo) -> bool) -> Result<JobInfo> {
        wait::until(&format!("JobId={id} {what}"), timeout, || {
            let j = self.job(id)?;
            if pred(&j) {
                Ok(Some(j))
            } else {
                Err(format!("state {}", j.state))
            }
        })
    }

    pub fn wait_all_finished(&self, ids: &[u32], timeout: Duration) -> Result<Vec<JobInfo>> {
        wait::until(&format!("{} jobs to finish", ids.len()), timeout, || {
            let jobs: Vec<JobInfo> = self.jobs()?.into_iter().filter(|j| ids.contains(&j.id)).collect();
            let open: Vec<String> =
                jobs.iter().filter(|j| !j.is_finished()).map(|j| format!("{}:{}", j.id, j.state)).collect();
            if jobs.len() == ids.len() && open.is_empty() {
                Ok(Some(jobs))
            } else {
                Err(format!("unfinished {}", open.join(" ")))
            }
        })
    }

    pub fn ctld_log(&self) -> String {
        fs::read_to_string(self.log_dir().join("slurmctld.log")).unwrap_or_default()
    }

    pub fn log_tail(&self, file: &str, lines: usize) -> String {
        let path = if file == "munged.log" { self.dir.join("munge").join(file) } else { self.log_dir().join(file) };
        let text = fs::read_to_string(&path).unwrap_or_else(|e| format!("(cannot read: {e})"));
        let all: Vec<&str> = text.lines().collect();
        let from = all.len().saturating_sub(lines);
        format!("---- {} (last {} lines) ----\n{}\n", path.display(), all.len() - from, all[from..].join("\n"))
    }

    /// The daemons' logs, for a failing test.
    pub fn print_logs(&self) {
        eprintln!("{}", self.log_tail("slurmctld.log", 200));
        for n in self.node_names() {
            eprintln!("{}", self.log_tail(&format!("slurmd-{n}.log"), 30));
        }
        eprintln!("{}", self.log_tail("munged.log", 10));
    }

    /// Stop every daemon of this cluster by its pid file.
    pub fn down(mut self) {
        self.keep = false;
        // Drop does it.
    }
}

/// Stop whatever daemons a cluster directory's pid files name, and the
/// slurmstepd processes its slurmds started.
pub fn stop_all_in(dir: &Path) {
    let run_dir = dir.join("run");
    if let Ok(entries) = fs::read_dir(&run_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("slurmd-") && name.ends_with(".pid") {
                stop_by_pid_file(&e.path(), "slurmd");
            }
        }
    }
    // After the slurmds, so that none forks a new slurmstepd behind our back;
    // before slurmctld and munged, which a slurmstepd told to stop may still
    // want to report to.
    stop_stepds_in(dir);
    stop_by_pid_file(&run_dir.join("slurmctld.pid"), "slurmctld");
    stop_by_pid_file(&dir.join("munge/munged.pid"), "munged");
}

/// Which of a cluster's daemons are running, by pid file.
pub fn status_of(dir: &Path) -> Vec<(String, Option<i32>)> {
    let mut files: Vec<(String, PathBuf)> =
        vec![("munged".into(), dir.join("munge/munged.pid")), ("slurmctld".into(), dir.join("run/slurmctld.pid"))];
    if let Ok(entries) = fs::read_dir(dir.join("run")) {
        let mut nodes: Vec<_> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("slurmd-"))
            .collect();
        nodes.sort();
        files.extend(nodes.into_iter().map(|n| (n.trim_end_matches(".pid").to_string(), dir.join("run").join(&n))));
    }
    files.into_iter().map(|(name, f)| (name, read_pid(&f).filter(|&p| pid_alive(p)))).collect()
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if std::thread::panicking() {
            eprintln!("==== daemon logs of cluster {} ====", self.spec.name);
            self.print_logs();
        }
        stop_all_in(&self.dir);
    }
}
