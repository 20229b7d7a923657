//! What the malleable-job tests share: a cluster under a resizing strategy,
//! batch scripts running the example application under mall-run, and
//! reading a job's malleable status, steps and output.

use std::path::PathBuf;
use std::time::Duration;

use testcluster::process::output;
use testcluster::{wait, Cluster, ClusterSpec};

use crate::said::{self, Said};
use crate::spec;

/// A staged command (mall-run, mall-example, mall-stencil-c).
pub fn tool(name: &str) -> PathBuf {
    // tool_dir is plugin_dir's bin/, for every release's staging.
    let path = crate::plugin_dir().join("bin").join(name);
    assert!(path.is_file(), "{} missing: run these tests through `cargo xtask test`", path.display());
    path
}

/// A cluster of `nodes` nodes whose malleable.conf is `conf`.
pub fn malleable_spec(name: &str, nodes: usize, conf: &str) -> ClusterSpec {
    spec(name, nodes).file("malleable.conf", conf)
}

/// A batch script in the cluster's directory that runs `app_args` (the
/// example application's options) under mall-run; its path.
pub fn example_script(c: &Cluster, name: &str, app_args: &str) -> PathBuf {
    let path = c.dir.join(format!("{name}.sh"));
    let text = format!(
        "#!/bin/sh\nexec {} --poll-ms 50 --report-every 1 -- {} {app_args}\n",
        tool("mall-run").display(),
        tool("mall-example").display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Submit `script` with these options; output to `out` in the cluster's
/// directory. The job's id.
pub fn submit(c: &Cluster, script: &std::path::Path, out: &str, options: &[&str]) -> u32 {
    let out = c.dir.join(out);
    let text = output(
        c.cmd("sbatch")
            .arg("--parsable")
            .arg(format!("--output={}", out.display()))
            .args(["-t", "5"])
            .args(options)
            .arg(script),
    )
    .unwrap();
    text.trim().parse().unwrap_or_else(|_| panic!("sbatch printed {text:?}"))
}

/// One field of `scontrol show job` ([`crate::show_field`]).
pub fn job_field(c: &Cluster, id: u32, key: &str) -> String {
    crate::show_field(&output(c.cmd("scontrol").args(["show", "job", &id.to_string()])).unwrap_or_default(), key)
}

/// The job's status, as the plugin publishes it.
pub fn status(c: &Cluster, id: u32) -> String {
    job_field(c, id, "SystemComment")
}

/// Wait until slurmctld's log has a line of the agent's that says `said`,
/// after `from` bytes; the line.
pub fn wait_said(c: &Cluster, from: usize, said: &Said, timeout: Duration) -> String {
    wait::until(&format!("a slurmctld log line saying {}", said.what), timeout, || {
        Ok(said.first(c.ctld_log().get(from..).unwrap_or("")).map(str::to_string))
    })
    .unwrap()
}

/// The nodes each step of the job runs on, from `squeue -s`.
pub fn step_nodes(c: &Cluster, id: u32) -> Vec<(String, String)> {
    let text = output(c.cmd("squeue").args(["-h", "-s", "-j", &id.to_string(), "-o", "%i %N"])).unwrap_or_default();
    text.lines().filter_map(|l| l.split_once(' ')).map(|(s, n)| (s.to_string(), n.trim().to_string())).collect()
}

/// The node names a hostlist expression stands for.
pub fn hostnames(c: &Cluster, list: &str) -> Vec<String> {
    output(c.cmd("scontrol").args(["show", "hostnames", list])).unwrap().lines().map(str::to_string).collect()
}

/// The checksum the example computes alone for these options.
pub fn serial_checksum(app_args: &str) -> String {
    let out = std::process::Command::new(tool("mall-example"))
        .arg("--serial")
        .args(app_args.split_whitespace())
        .output()
        .unwrap();
    checksum_in(&String::from_utf8_lossy(&out.stdout)).expect("the serial run prints its checksum")
}

/// The checksum a job's output reports.
pub use testcluster::jobs::checksum_in;

/// A job's output file, as written so far.
pub fn job_output(c: &Cluster, out: &str) -> String {
    std::fs::read_to_string(c.dir.join(out)).unwrap_or_default()
}

/// Iserte et al. 2025's pull model on cluster `c` (4 idle nodes, Strategy
/// natural): an elastic job on 1 to 4 nodes that asks every 5 iterations
/// grows to 4 (nothing waits); a 2-node job then arrives, and at the next
/// question the elastic job releases exactly two nodes and the waiting job
/// starts on them. The two jobs' ids and where the log stood before the
/// second one came.
pub fn grows_then_releases_when_asking(c: &Cluster, app: &str) -> (u32, u32, usize) {
    let elastic = ["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4"];
    let id = submit(c, &example_script(c, "asking", &format!("{app} --ask-every 5")), "asking.out", &elastic);
    wait_said(c, 0, &said::expand_committed(id, ""), Duration::from_secs(60));
    assert_eq!(job_field(c, id, "NumNodes"), "4");
    let from = c.ctld_log().len();
    let rigid = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 30"]).unwrap();
    wait_said(c, from, &said::released_at_sync_point(rigid, id, 2), Duration::from_secs(60));
    wait_said(c, from, &said::shrink_committed(id, ""), Duration::from_secs(60));
    c.wait_job(rigid, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
    assert_eq!(job_field(c, id, "NumNodes"), "2");
    (id, rigid, from)
}
