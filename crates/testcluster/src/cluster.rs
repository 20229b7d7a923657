//! A whole Slurm cluster on this machine: munged, slurmctld and N slurmd
//! daemons (Debian builds Slurm with --enable-multiple-slurmd), each in a
//! private directory with leased ports. Every daemon writes a pid file and
//! is stopped by it, also when a test panics (the cluster is stopped on
//! drop, after printing the daemons' logs if the thread is panicking); the
//! slurmstepds slurmd forks for jobs have none and are found by their
//! working directory instead.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::jobs::{parse_show_job, JobInfo};
use crate::network::Network;
use crate::ports::{self, Lease};
use crate::process::{output, pid_alive, read_pid, run, stop_by_pid_file, stop_stepds_in};
use crate::spec::ClusterSpec;
use crate::{wait, Result};

pub struct Cluster {
    pub spec: ClusterSpec,
    pub dir: PathBuf,
    /// Its ports: slurmctld's is the first, slurmd nX's the X-th after it.
    pub ports: Lease,
    /// Leave the daemons running when dropped (`cluster up`, `demo --keep`).
    pub keep: bool,
}

/// Where clusters live: short paths, because munge's socket path is limited
/// to 108 bytes and a checkout may sit deep.
pub fn clusters_root() -> PathBuf {
    std::env::var_os("MALLEABLE_CLUSTER_ROOT").map_or_else(|| PathBuf::from("/tmp/malleable-clusters"), PathBuf::from)
}

/// A networked cluster's hosts file for its nodes, in its etc/.
const NODE_HOSTS: &str = "hosts";

/// Its nodes' resolv.conf, in its etc/, and what it says: a name server on
/// the node's loopback, where none listens. A node's namespace cannot reach
/// this machine's name server, and a lookup of a name its hosts file lacks
/// (glibc asks for an IPv6 address first: `getent hosts n1`) waited 10 s
/// for it; refused at once, it fails at once, as on a site whose DNS answers.
const NODE_RESOLV: &str = "resolv.conf";
const NODE_RESOLVER: &str = "nameserver 127.0.0.1\n";

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

    /// Lease ports, write the configuration and start munged; Slurm's
    /// daemons are not started yet. Daemons left over from an earlier run
    /// of the same name are stopped first and the directory is made anew.
    pub fn create(spec: ClusterSpec) -> Result<Cluster> {
        let dir = Cluster::dir_of(&spec.name);
        stop_all_in(&dir);
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
        mkdir(&clusters_root(), 0o755)?;
        for sub in ["etc", "log", "state", "spool", "run"] {
            mkdir(&dir.join(sub), 0o755)?;
        }
        let lease = ports::lease(&clusters_root(), &dir, spec.ports_needed())?;
        let cluster = Cluster { spec, dir, ports: lease, keep: false };
        if let Some(net) = cluster.network() {
            net.create(&cluster.dir)?;
        }
        cluster.write_conf()?;
        cluster.start_munge()?;
        if let Some((dbd, db)) = cluster.spec.accounting_ports(cluster.ports.base) {
            let conf = cluster.dir.join("etc/slurmdbd.conf");
            crate::accounting::start(&cluster.dir, &conf, "127.0.0.1", dbd, db, &cluster.spec.cluster_name())?;
        }
        Ok(cluster)
    }

    /// A handle on a cluster directory whose daemons may run (to show its
    /// logs or stop it), without starting anything.
    pub fn attach(spec: ClusterSpec) -> Cluster {
        let dir = Cluster::dir_of(&spec.name);
        let lease = ports::read_lease(&dir).map_or(Lease { base: 0, count: 0 }, |(l, _)| l);
        Cluster { spec, dir, ports: lease, keep: true }
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
        self.spec.node_names()
    }

    /// slurm.conf, the spec's other files, and gres.conf for GPUs.
    pub fn write_conf(&self) -> Result<()> {
        let host = hostname()?;
        let etc = self.dir.join("etc");
        let write = |name: &str, text: &str| {
            fs::write(etc.join(name), text).map_err(|e| format!("cannot write {}: {e}", etc.join(name).display()))
        };
        write("slurm.conf", &self.spec.slurm_conf(&self.dir, &host, self.ports.base))?;
        if let Some(net) = self.network() {
            write(NODE_HOSTS, &net.hosts_file(&host))?;
            write(NODE_RESOLV, NODE_RESOLVER)?;
        }
        for (name, text) in &self.spec.files {
            write(name, text)?;
        }
        if let Some((dbd, db)) = self.spec.accounting_ports(self.ports.base) {
            write("slurmdbd.conf", &crate::accounting::slurmdbd_conf(&self.dir, "127.0.0.1", dbd, db))?;
            fs::set_permissions(etc.join("slurmdbd.conf"), fs::Permissions::from_mode(0o600))
                .map_err(|e| e.to_string())?;
        }
        if let Some(gres) = self.spec.gres_conf(&self.dir) {
            mkdir(&self.dir.join("dev"), 0o755)?;
            for i in 0..self.spec.gpus_most() {
                fs::write(self.dir.join(format!("dev/gpu{i}")), "").map_err(|e| e.to_string())?;
            }
            write("gres.conf", &gres)?;
        }
        // A file the spec no longer has (a test changed it) is not left behind.
        if let Ok(entries) = fs::read_dir(&etc) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let known = name == "slurm.conf"
                    || name == "gres.conf"
                    || (name == "slurmdbd.conf" && self.spec.accounting)
                    || ((name == NODE_HOSTS || name == NODE_RESOLV) && self.spec.networked)
                    || self.spec.file_contents(&name).is_some();
                if !known {
                    let _ = fs::remove_file(e.path());
                }
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
            if self.spec.own_tmpfs {
                mkdir(&self.dir.join("tmp").join(&n), 0o1777)?;
            }
            self.start_node(&n)?;
        }
        Ok(())
    }

    /// Its own network, when the spec asks for one.
    pub fn network(&self) -> Option<Network> {
        self.spec.network(self.ports.base)
    }

    /// Node `node`'s number (n3: 3).
    fn node_number(node: &str) -> Result<usize> {
        node.strip_prefix('n').and_then(|i| i.parse().ok()).ok_or_else(|| format!("{node}: not a node of ours"))
    }

    /// Take `node` off its network (networked clusters): its slurmd and
    /// jobs run on, and nothing reaches them.
    pub fn cut_node(&self, node: &str) -> Result<()> {
        self.network().ok_or("cut_node needs a networked cluster")?.cut(Cluster::node_number(node)?)
    }

    /// Put `node` back on its network.
    pub fn mend_node(&self, node: &str) -> Result<()> {
        self.network().ok_or("mend_node needs a networked cluster")?.mend(Cluster::node_number(node)?)
    }

    pub fn wait_nodes_idle(&self, timeout: Duration) -> Result<()> {
        let want = self.spec.node_count();
        wait::until(&format!("{want} idle nodes"), timeout, || {
            let out = output(self.cmd("sinfo").args(["-h", "-N", "-o", "%N %T"]))?;
            // A node in several partitions has a line for each.
            let idle: std::collections::HashSet<&str> = out.lines().filter_map(|l| l.strip_suffix(" idle")).collect();
            let idle = idle.len();
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

    /// Node `node` crashes (see `process::crash_node`).
    pub fn crash_node(&self, node: &str) {
        crate::process::crash_node(&self.dir, &self.conf_path(), node);
    }

    /// Start node `node`'s slurmd (again), in its namespace when networked.
    pub fn start_node(&self, node: &str) -> Result<()> {
        let mut cmd = match self.network() {
            None => self.cmd("slurmd"),
            Some(net) => {
                // nsenter, not `ip netns exec`: that also mounts a /sys of
                // the namespace's own, without /sys/fs/cgroup, and slurmd
                // then fails to start its cgroup plugin.
                let ns = format!("--net=/run/netns/{}", net.namespace(Cluster::node_number(node)?));
                let etc = self.dir.join("etc");
                let mut c = self.cmd("nsenter");
                // Then a hostname of its own (a UTS namespace: its
                // NodeHostname), and the nodes' hosts file and resolver as
                // /etc/hosts and /etc/resolv.conf (a mount namespace; slave,
                // so that what this machine mounts later still reaches it),
                // which slurmd, its slurmstepds and the jobs' processes
                // inherit.
                c.args([ns.as_str(), "unshare", "--uts", "--mount", "--propagation", "slave", "sh", "-c"])
                    // (hostname(1), not /proc/sys/kernel/hostname: a test
                    // container has /proc/sys read-only.)
                    .arg(
                        r#"hostname "$1" && mount --bind "$2" /etc/hosts &&
                           mount --bind "$3" /etc/resolv.conf && shift 3 && exec slurmd "$@""#,
                    )
                    .args(["sh", node])
                    .args([etc.join(NODE_HOSTS), etc.join(NODE_RESOLV)]);
                c
            }
        };
        run(cmd.arg("-N").arg(node).arg("-f").arg(self.conf_path()))
    }

    /// Stop Slurm's daemons (slurmds and their slurmstepds, slurmctld,
    /// slurmdbd) by their pid files, and leave munged, MariaDB, the ports
    /// and the files as they are: for a test that starts Slurm itself on
    /// this cluster's configuration (the python suite's auto-config mode).
    pub fn stop_slurm(&self) {
        stop_slurmds_and_ctld(&self.dir);
        crate::accounting::stop_slurmdbd(&self.dir);
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
    stop_slurmds_and_ctld(dir);
    // After slurmctld, which sends its last records on the way out.
    crate::accounting::stop(dir);
    stop_by_pid_file(&dir.join("munge/munged.pid"), "munged");
    Network::remove_recorded(dir);
    ports::release(dir);
}

/// The slurmds, their slurmstepds and slurmctld of the cluster in `dir`.
fn stop_slurmds_and_ctld(dir: &Path) {
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
}

/// Which of a cluster's daemons are running, by pid file.
pub fn status_of(dir: &Path) -> Vec<(String, Option<i32>)> {
    let mut files: Vec<(String, PathBuf)> =
        vec![("munged".into(), dir.join("munge/munged.pid")), ("slurmctld".into(), dir.join("run/slurmctld.pid"))];
    for daemon in ["slurmdbd", "mariadbd"] {
        let file = dir.join("run").join(format!("{daemon}.pid"));
        if file.exists() {
            files.push((daemon.into(), file));
        }
    }
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
