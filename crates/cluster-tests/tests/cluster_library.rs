//! The test-cluster library itself on real daemons: two clusters run side by
//! side on leased ports (a fixed port per cluster name once made the second
//! one die with "Address already in use"), and a spec's node shapes, GPUs
//! and partitions are what slurmctld reports.

use std::time::Duration;

use cluster_tests::up_with;
use testcluster::process::output;
use testcluster::{ClusterSpec, NodeShape, Partition};

#[test]
#[ignore = "needs real clusters: cargo xtask test"]
fn two_clusters_run_side_by_side_on_their_own_ports() {
    let a = up_with(ClusterSpec::new("t-side-a", 1));
    let b = up_with(ClusterSpec::new("t-side-b", 1));
    assert_ne!(a.ports.base, b.ports.base);
    assert!(
        a.ports.base + a.ports.count <= b.ports.base || b.ports.base + b.ports.count <= a.ports.base,
        "{:?} and {:?} overlap",
        a.ports,
        b.ports
    );
    for c in [&a, &b] {
        let id = c.sbatch(&["-N1", "-t", "1", "--wrap", "true"]).unwrap();
        let j = c.wait_all_finished(&[id], Duration::from_secs(30)).unwrap();
        assert_eq!(j[0].state, "COMPLETED", "{}", c.spec.name);
    }
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn node_shapes_gpus_and_partitions_are_what_slurm_reports() {
    let spec = ClusterSpec::new("t-shapes", 2)
        .shape(NodeShape { cores: 2, gpus: 0, memory_mb: 0 })
        .add_nodes(1, NodeShape { cores: 4, gpus: 2, memory_mb: 0 })
        .partition(Partition::new("cpu", "n[1-2]").default_partition())
        .partition(Partition::new("gpu", "n3"));
    let c = up_with(spec);
    let show = |node: &str| output(c.cmd("scontrol").args(["show", "node", node])).unwrap();
    assert!(show("n1").contains("CPUTot=2 "), "{}", show("n1"));
    let n3 = show("n3");
    assert!(n3.contains("CPUTot=4 ") && n3.contains("Gres=gpu:2"), "{n3}");
    let parts = output(c.cmd("sinfo").args(["-h", "-o", "%P %N"])).unwrap();
    assert!(parts.contains("cpu* n[1-2]") && parts.contains("gpu n3"), "{parts}");
    // A job asking for the GPUs runs on the node that has them.
    let id = c.sbatch(&["-p", "gpu", "--gres=gpu:2", "-N1", "-t", "1", "--wrap", "true"]).unwrap();
    let j = c.wait_all_finished(&[id], Duration::from_secs(30)).unwrap();
    assert_eq!((j[0].state.as_str(), j[0].node_list.as_str()), ("COMPLETED", "n3"));
}
