//! The test rig as a job sees it: on a networked cluster each node has a
//! hostname of its own, which every node resolves to its address, so that
//! slurmctld reaches an srun on any node as it would on a real cluster.

use std::time::Duration;

use cluster_tests::up_with;
use testcluster::process::output;
use testcluster::ClusterSpec;

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn each_node_has_a_name_of_its_own_which_every_node_resolves() {
    let c = up_with(ClusterSpec::new("t-rig-names", 3).networked());
    let net = c.network().expect("a networked cluster has a network");

    // Each node's tasks see its name as their hostname, and every node
    // resolves the others' names to their addresses.
    let seen = output(c.cmd("srun").args([
        "-N3",
        "-t",
        "1",
        "sh",
        "-c",
        "echo $SLURMD_NODENAME $(hostname) $(getent hosts n1 n3 | cut -d' ' -f1 | tr '\\n' ' ')",
    ]))
    .unwrap();
    let mut lines: Vec<&str> = seen.lines().collect();
    lines.sort_unstable();
    let (n1, n3) = (net.node_addr(1), net.node_addr(3));
    assert_eq!(lines, [format!("n1 n1 {n1} {n3}"), format!("n2 n2 {n1} {n3}"), format!("n3 n3 {n1} {n3}")], "{seen}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_step_waiting_for_its_node_is_woken_on_any_node() {
    let c = up_with(ClusterSpec::new("t-rig-wake", 3).networked());

    // A step asked for while an earlier one holds the node's only CPU waits
    // in slurmctld, which wakes its srun when the CPU is free, at the
    // address of the node whose NodeHostname is srun's hostname. On the
    // last node: when every node had this machine's name, the wake went to
    // n1, and srun polled for SlurmctldTimeout (121 s measured) instead.
    let out = c.dir.join("rig-wake.out");
    let script = "srun -n1 sleep 3 & sleep 1; from=$(date +%s); srun -n1 true; \
                  echo \"waited $(( $(date +%s) - from )) s\"; wait";
    let id = c
        .sbatch(&["-N1", "-n1", "-w", "n3", "-t", "5", &format!("--output={}", out.display()), "--wrap", script])
        .unwrap();
    c.wait_job(id, "done", Duration::from_secs(180), |j| j.is_finished()).unwrap();
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let waited: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("waited ")?.strip_suffix(" s")?.parse().ok())
        .unwrap_or_else(|| panic!("the job did not say how long its second step waited:\n{text}"));
    assert!(waited <= 15, "the second step waited {waited} s for a node freed after about 2 s:\n{text}");
}
