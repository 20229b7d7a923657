//! srun and salloc under sched/malleable as under Slurm's own schedulers:
//! on an idle cluster they get their nodes at submit, without "queued and
//! waiting"; `srun --immediate` runs when the job can start now and fails
//! at once, with Slurm's reason, when it cannot; and an interactive job
//! never starts ahead of a batch job that waits before it.

use std::process::{Command, Output};
use std::time::Duration;

use cluster_tests::up;
use testcluster::Cluster;

const QUEUED: &str = "queued and waiting for resources";

/// Run a client command of the cluster with a deadline on its own side
/// (`timeout`), so a hang fails the test instead of holding it.
fn client(c: &Cluster, program: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("60").arg(program).args(args);
    cmd.envs(c.cmd(program).get_envs().filter_map(|(k, v)| Some((k, v?))));
    cmd.output().unwrap_or_else(|e| panic!("{program}: {e}"))
}

fn text(o: &Output) -> String {
    format!("status {:?}, stdout {:?}, stderr {:?}", o.status.code(), stdout(o), String::from_utf8_lossy(&o.stderr))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn interactive_jobs_start_at_submit_and_immediate_works() {
    let c = up("t-interactive", 4);
    let nodes = c.node_names();

    // Idle cluster: srun, salloc and srun --immediate start at once. Each
    // waits for the cluster to be idle again: a job's nodes are completing
    // (its epilogs) for a moment after its srun returns, and a job that
    // needs them then is queued under any scheduler (seen in CI: salloc -N3
    // right after an srun -N2, "queued and waiting", then granted).
    let idle = || c.wait_nodes_idle(Duration::from_secs(30)).unwrap();
    for _ in 0..3 {
        idle();
        let o = client(&c, "srun", &["-N2", "printenv", "SLURMD_NODENAME"]);
        assert!(o.status.success() && !text(&o).contains(QUEUED), "{}", text(&o));
        assert_eq!(stdout(&o).lines().count(), 2, "{}", text(&o));
    }
    idle();
    let o = client(&c, "salloc", &["-N3", "true"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Granted job allocation"), "{}", text(&o));
    assert!(!text(&o).contains(QUEUED), "{}", text(&o));
    idle();
    let o = client(&c, "srun", &["--immediate", "-N4", "printenv", "SLURMD_NODENAME"]);
    assert!(o.status.success(), "{}", text(&o));
    let mut seen: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    seen.sort();
    assert_eq!(seen, nodes, "{}", text(&o));

    // A batch job on three nodes, and one needing all four waiting for it:
    // one node is free, but an interactive job must not take it ahead of
    // the waiting one (its limit runs past the other's start), and with
    // --immediate it fails at once with Slurm's reason.
    let a = c.sbatch(&["-N3", "-t", "2", "--wrap", "sleep 300"]).unwrap();
    c.wait_job(a, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let head = c.sbatch(&["-N4", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    c.wait_job(head, "to wait for Resources", Duration::from_secs(30), |j| j.is_pending()).unwrap();
    let o = client(&c, "srun", &["--immediate", "-t", "5", "-N1", "true"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("Unable to allocate resources: Immediate execution impossible, insufficient priority"),
        "{}",
        text(&o)
    );
    // A short interactive job fits the hole before the head's start: not
    // first in the queue, it waits at submit, and the strategy backfills it.
    let o = client(&c, "srun", &["-t", "1", "-N1", "true"]);
    assert!(o.status.success() && text(&o).contains(QUEUED), "{}", text(&o));
    assert!(c.job(head).unwrap().is_pending(), "the head must still wait for A");
}
