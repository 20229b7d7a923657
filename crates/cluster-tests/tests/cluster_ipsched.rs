//! IPSCHED on a real cluster (Soner and Ozturan): sched/malleable with
//! `Strategy=ipsched` under select/cons_tres, on nodes of 8 CPUs and 2 GPUs
//! declared as GRES (gres.conf over empty device files). The program's
//! decisions, as the plugin logs them, are checked against what slurmctld
//! allocated (`scontrol -d show job`: each node's CPU ids and GPUs), and
//! against what the program must decide on these queues.

use std::collections::BTreeMap;
use std::time::Duration;

use cluster_tests::malleable::malleable_spec;
use cluster_tests::said;
use cluster_tests::up_with;
use testcluster::hostlist;
use testcluster::process::output;
use testcluster::spec::{NodeShape, Partition};
use testcluster::Cluster;

/// CPUs and GPUs a job holds on one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    cpus: u32,
    gpus: u32,
}

/// How many ids a CPU id list names ("0-4", "0,2-3").
fn count_ids(list: &str) -> u32 {
    list.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => b.parse::<u32>().unwrap() - a.parse::<u32>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

/// What job `id` holds on each node, as `scontrol -d show job` lists it
/// ("Nodes=n[2-3] CPU_IDs=0-5 Mem=0 GRES=gpu:1(IDX:0)").
fn allocation(c: &Cluster, id: u32) -> BTreeMap<String, Held> {
    let text = output(c.cmd("scontrol").args(["-d", "show", "job", &id.to_string()])).unwrap();
    let mut held = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| l.starts_with("Nodes=")) {
        let field = |key: &str| line.split(' ').find_map(|w| w.strip_prefix(key)).unwrap_or("");
        let cpus = count_ids(field("CPU_IDs="));
        let gres = field("GRES=");
        let gpus = gres.strip_prefix("gpu:").map_or(0, |g| g.split('(').next().unwrap().parse().unwrap());
        for node in hostlist::expand(field("Nodes=")).unwrap() {
            held.insert(node, Held { cpus, gpus });
        }
    }
    held
}

/// The CPUs per node the plugin decided for `id`, from its start line
/// ("started JobId=3 on n1 (ipsched), CPUs as decided: n1:3"), or why not.
fn decided(c: &Cluster, id: u32) -> Result<BTreeMap<String, u32>, String> {
    let log = c.ctld_log();
    let line = said::started(id).first(&log).ok_or_else(|| format!("no start line for JobId={id}"))?;
    let (_, cpus) = line.split_once("CPUs as decided: ").ok_or_else(|| format!("not as decided: {line}"))?;
    Ok(cpus
        .split(' ')
        .map(|w| {
            let (node, n) = w.split_once(':').unwrap();
            (node.to_string(), n.parse().unwrap())
        })
        .collect())
}

/// Job `id`'s allocation, once it runs, checked against the plugin's decision.
fn placed_as_decided(c: &Cluster, id: u32) -> BTreeMap<String, Held> {
    c.wait_job(id, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let held = allocation(c, id);
    let cpus: BTreeMap<String, u32> = held.iter().map(|(n, h)| (n.clone(), h.cpus)).collect();
    assert_eq!(cpus, decided(c, id).unwrap(), "JobId={id}: what slurmctld allocated, against the decision");
    held
}

fn set_partition(c: &Cluster, state: &str) {
    let ok = c.cmd("scontrol").args(["update", "PartitionName=batch", &format!("State={state}")]).status().unwrap();
    assert!(ok.success(), "partition batch to {state}");
}

/// Submit each of `jobs` (sbatch options) while the partition is down, then
/// bring it up: the program sees them all in one window.
fn submit_at_once(c: &Cluster, jobs: &[&[&str]]) -> Vec<u32> {
    set_partition(c, "DOWN");
    let ids = jobs
        .iter()
        .map(|opts| {
            let mut args = opts.to_vec();
            args.extend(["-t", "5", "--wrap", "sleep 300"]);
            c.sbatch(&args).unwrap()
        })
        .collect();
    set_partition(c, "UP");
    ids
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn jobs_start_on_the_cores_and_gpus_the_program_chose() {
    let spec = malleable_spec("t-ipsched", 3, "Strategy=ipsched\nSchedulerTick=2\n")
        .shape(NodeShape { cores: 8, gpus: 2, memory_mb: 0 })
        .set("SelectType", "select/cons_tres")
        .set("SelectTypeParameters", "CR_Core")
        .partition(Partition::new("batch", "ALL").default_partition().extra("MaxTime=INFINITE State=UP"))
        .partition(Partition::new("pair", "n[2-3]").extra("MaxTime=INFINITE State=UP"));
    let c = up_with(spec);

    // B holds 5 CPUs and a GPU of one node, which keeps 3 and 1.
    let b = c.sbatch(&["-n5", "--gres=gpu:1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let held = placed_as_decided(&c, b);
    assert_eq!(held.values().copied().collect::<Vec<_>>(), vec![Held { cpus: 5, gpus: 1 }]);
    let part_held = held.keys().next().unwrap().clone();

    // The program starts the most jobs it can: three of these four, one
    // a node, and not the first, which would take both free nodes (and is
    // what EASY starts). J4 fits only beside B; J2 takes a node's GPUs.
    let ids = submit_at_once(&c, &[&["-n16"], &["-n8", "--gres=gpu:2"], &["-n8"], &["-n3", "--gres=gpu:1"]]);
    let (j1, j2, j3, j4) = (ids[0], ids[1], ids[2], ids[3]);
    let h4 = placed_as_decided(&c, j4);
    assert_eq!(h4, BTreeMap::from([(part_held.clone(), Held { cpus: 3, gpus: 1 })]));
    let h2 = placed_as_decided(&c, j2);
    let h3 = placed_as_decided(&c, j3);
    assert_eq!(h2.values().copied().collect::<Vec<_>>(), vec![Held { cpus: 8, gpus: 2 }]);
    assert_eq!(h3.values().copied().collect::<Vec<_>>(), vec![Held { cpus: 8, gpus: 0 }]);
    let mut nodes: Vec<&String> = h2.keys().chain(h3.keys()).chain(h4.keys()).collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 3, "one job a node: {h2:?} {h3:?} {h4:?}");
    assert!(c.job(j1).unwrap().is_pending(), "JobId={j1} needs two whole nodes: it waits");

    // All free again. J5's 10 CPUs with a GPU on each node take two
    // neighbouring nodes, 8 and 2 (cons_tres keeps a CPU for the node to
    // come; a round robin would give 5 and 5); J6 the third node.
    assert!(c.cmd("scancel").args([b, j1, j2, j3, j4].map(|j| j.to_string())).status().unwrap().success());
    c.wait_all_finished(&[b, j1, j2, j3, j4], Duration::from_secs(60)).unwrap();
    c.wait_nodes_idle(Duration::from_secs(60)).unwrap();
    let ids = submit_at_once(&c, &[&["-n10", "--gres=gpu:1"], &["-n4"]]);
    let h5 = placed_as_decided(&c, ids[0]);
    let mut h5_cpus: Vec<Held> = h5.values().copied().collect();
    h5_cpus.sort_by_key(|h| h.cpus);
    assert_eq!(h5_cpus, vec![Held { cpus: 2, gpus: 1 }, Held { cpus: 8, gpus: 1 }]);
    let h6 = placed_as_decided(&c, ids[1]);
    assert_eq!(h6.values().copied().collect::<Vec<_>>(), vec![Held { cpus: 4, gpus: 0 }]);
    assert!(h6.keys().all(|n| !h5.contains_key(n)));
    assert!(c.cmd("scancel").args(ids.iter().map(|j| j.to_string())).status().unwrap().success());
    c.wait_all_finished(&ids, Duration::from_secs(60)).unwrap();
    c.wait_nodes_idle(Duration::from_secs(60)).unwrap();

    // Jobs that name their nodes go there: n1 keeps 3 CPUs, n2 none.
    let one = c.sbatch(&["-n5", "-w", "n1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(placed_as_decided(&c, one), BTreeMap::from([("n1".into(), Held { cpus: 5, gpus: 0 })]));
    let two = c.sbatch(&["-n8", "-w", "n2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(placed_as_decided(&c, two), BTreeMap::from([("n2".into(), Held { cpus: 8, gpus: 0 })]));
    // 10 CPUs on n1 and n3, which are not neighbours: cons_tres takes the
    // bigger run (n3) first, 8, then 2 of n1 (in table order it would be 3 and 7).
    let j7 = c.sbatch(&["-n10", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let h7 = placed_as_decided(&c, j7);
    assert_eq!(
        h7,
        BTreeMap::from([("n1".into(), Held { cpus: 2, gpus: 0 }), ("n3".into(), Held { cpus: 8, gpus: 0 })])
    );
    // J8 may use only the partition's n2 and n3, both full: it waits,
    // while J9, behind it in the queue, takes n1's last CPU, which J8
    // could have had without its partition.
    let j8 = c.sbatch(&["-p", "pair", "-n1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let j9 = c.sbatch(&["-n1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(placed_as_decided(&c, j9), BTreeMap::from([("n1".into(), Held { cpus: 1, gpus: 0 })]));
    assert!(c.job(j8).unwrap().is_pending(), "JobId={j8} may not use n1");
    // n2 frees: J8 starts there.
    assert!(c.cmd("scancel").arg(two.to_string()).status().unwrap().success());
    assert_eq!(placed_as_decided(&c, j8), BTreeMap::from([("n2".into(), Held { cpus: 1, gpus: 0 })]));
}
