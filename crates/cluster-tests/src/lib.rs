//! The plugins' tests on real Slurm clusters (tests/), run by `cargo xtask
//! test` after it has built and staged the plugins, and the symbol check of
//! every built plugin. They are `#[ignore]`d so that a plain `cargo test`
//! needs neither root nor a cluster. This library is what they share: our
//! staged plugins, a cluster spec running sched/malleable, and the ways to
//! wait on the daemons.

pub mod malleable;
pub mod said;
pub mod site;
pub mod slurm_suites;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use testcluster::plugins::{self, PLUGINS};
use testcluster::{wait, Cluster, ClusterSpec};

/// The workspace root (this crate sits two levels below it).
/// One field of what `scontrol show job` prints: `Key=value`, the value
/// up to the next space, but a comment's (`SystemComment`, `Comment`),
/// which holds spaces, to the end of its line.
pub fn show_field(text: &str, key: &str) -> String {
    let prefix = format!("{key}=");
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix(&prefix) {
            if key.ends_with("Comment") {
                return v.trim().to_string();
            }
        }
        for word in line.split(' ') {
            if let Some(v) = word.strip_prefix(&prefix) {
                return v.to_string();
            }
        }
    }
    String::new()
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The staged plugins; `cargo xtask test` builds them before running us:
/// the host's, or another release's when `plugins::PLUGIN_DIR_VAR` names
/// them (the tests run in that release's build container). Their commands
/// are in its `bin/`.
pub fn plugin_dir() -> PathBuf {
    let dir = plugins::plugin_dir_override().unwrap_or_else(|| plugins::plugin_dir(&repo_root()));
    for (_, _, name) in PLUGINS {
        assert!(
            dir.join(name).is_file(),
            "{} missing: run these tests through `cargo xtask test`",
            dir.join(name).display()
        );
    }
    dir
}

/// A cluster of `nodes` nodes running sched/malleable (Strategy=easy).
/// With several nodes, each slurmd has its own network namespace and
/// address, so that job steps, the runtime's channel and lost nodes cross
/// a network as on a real cluster.
pub fn spec(name: &str, nodes: usize) -> ClusterSpec {
    let spec = plugins::sched_malleable(ClusterSpec::new(name, nodes), &plugin_dir());
    if nodes > 1 {
        spec.networked()
    } else {
        spec
    }
}

/// `spec` for a power strategy: slurm.conf's SchedulerParameters with
/// `defer`, which the plugin needs once malleable.conf sets a corridor.
pub fn power_spec(name: &str, nodes: usize) -> ClusterSpec {
    spec(name, nodes).set("SchedulerParameters", plugins::POWER_SCHEDULER_PARAMETERS)
}

pub fn up(name: &str, nodes: usize) -> Cluster {
    up_with(spec(name, nodes))
}

/// `up` for a spec the test has changed (its malleable.conf, say).
pub fn up_with(spec: ClusterSpec) -> Cluster {
    let name = spec.name.clone();
    match Cluster::up(spec.clone()) {
        Ok(c) => c,
        Err(e) => {
            // The cluster was dropped inside up(); show what its daemons said.
            let c = Cluster::attach(spec);
            c.print_logs();
            testcluster::cluster::stop_all_in(&c.dir);
            panic!("cluster {name} did not come up: {e}");
        }
    }
}

/// Start slurmctld on a cluster whose configuration it should refuse; once
/// it has exited, the refusal the safe layer said (the first refused load
/// or start) and slurmctld's log. Depending on how far it got, it exits
/// before or after it daemonizes; either way it must end and say why.
#[cfg(feature = "client")]
pub fn refused(cluster: &Cluster) -> (slurm::common::refusal::Refusal, String) {
    use slurm::common::refusal::Refusal;
    let first =
        |log: &str| log.lines().filter_map(Refusal::parse).find(|r| matches!(r, Refusal::Load(_) | Refusal::Start(_)));
    let _ = cluster.spawn_controller();
    let said = wait::until("slurmctld to refuse and exit", Duration::from_secs(30), || {
        Ok(first(&cluster.ctld_log()).filter(|_| !cluster.controller_running()))
    });
    let said = said.unwrap_or_else(|e| {
        cluster.print_logs();
        panic!("{e}")
    });
    (said, cluster.ctld_log())
}

/// Lines of slurmctld.log in which our plugin says it started `job`.
pub fn start_lines(cluster: &Cluster, job: u32) -> Vec<String> {
    let said = said::started(job);
    cluster.ctld_log().lines().filter(|l| said.matches(l)).map(str::to_string).collect()
}

/// Wait for a child process with a deadline; kill it if it overruns.
pub fn wait_child(mut child: Child, what: &str, timeout: Duration) -> std::process::Output {
    let done = wait::until(what, timeout, || Ok(child.try_wait().map_err(|e| e.to_string())?.map(|_| ())));
    if let Err(e) = done {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{e}");
    }
    child.wait_with_output().expect("collect output")
}

pub fn srun(cluster: &Cluster, args: &[&str]) -> Child {
    let mut c: Command = cluster.cmd("srun");
    c.args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    c.spawn().expect("spawn srun")
}
