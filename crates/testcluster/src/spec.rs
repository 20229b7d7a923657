//! What cluster to run, as a builder: slurm.conf as an ordered key/value map
//! (any key may be set or unset, defaults are those of a whole Slurm on one
//! machine), nodes with CPUs, cores and GPUs, partitions, and extra files
//! beside slurm.conf (plugstack.conf, gres.conf, malleable.conf). The
//! paths, ports and host name a running cluster needs are filled in when
//! it is written, unless a test set them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::network::Network;
use crate::ports::Lease;

/// Where the installed Slurm's own plugins are (Debian's packages and
/// SchedMD's put them in different folders), Debian's when `slurmctld -V`
/// names no release of the table.
pub fn slurm_plugin_system_dir() -> &'static str {
    static DIR: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    DIR.get_or_init(|| provision::SlurmRelease::installed().map_or(DEBIAN_PLUGIN_DIR, |r| r.lib_dir))
}

const DEBIAN_PLUGIN_DIR: &str = "/usr/lib/x86_64-linux-gnu/slurm-wlm";

/// What one node has.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NodeShape {
    /// Cores (one socket, one thread each): its CPUs.
    pub cores: u32,
    /// GPUs, as the `gpu` GRES. Slurm wants a device file per GPU; these
    /// are empty files in the cluster's directory (`dev/gpu0`, ...), shared
    /// by the nodes, as all of them are this one machine.
    pub gpus: u32,
    /// Its `RealMemory=` in MB; 0 leaves it out (Slurm's default, 1 MB).
    pub memory_mb: u32,
}

impl Default for NodeShape {
    fn default() -> Self {
        NodeShape { cores: 1, gpus: 0, memory_mb: 0 }
    }
}

/// A partition: its name, nodes (`ALL` or a host list), and more keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub nodes: String,
    pub default: bool,
    /// More `Key=Value` words for its line, e.g. `MaxTime=10 State=UP`.
    pub extra: String,
}

impl Partition {
    pub fn new(name: &str, nodes: &str) -> Partition {
        Partition { name: name.into(), nodes: nodes.into(), default: false, extra: "MaxTime=INFINITE State=UP".into() }
    }

    pub fn default_partition(mut self) -> Partition {
        self.default = true;
        self
    }

    pub fn extra(mut self, extra: &str) -> Partition {
        self.extra = extra.into();
        self
    }
}

/// A cluster to run on this machine.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterSpec {
    /// Names its directory and (without its non-alphanumerics) its ClusterName.
    pub name: String,
    /// Groups of nodes (how many, what each has), named n1, n2, ... in order.
    pub node_groups: Vec<(usize, NodeShape)>,
    /// Partitions; none means one default partition `batch` of all nodes.
    pub partitions: Vec<Partition>,
    /// slurm.conf's keys in order; a key is set once.
    conf: Vec<(String, String)>,
    /// Files beside slurm.conf: (file name, contents).
    pub files: Vec<(String, String)>,
    /// Plugin directories searched before Slurm's own.
    pub plugin_dirs: Vec<PathBuf>,
    /// Nodes in slurm.conf without a slurmd, named p1, p2, ...: a big
    /// machine's node table for scale runs, DOWN from the start. Left
    /// UNKNOWN, slurmctld kept them "not responding" (a refused connection
    /// counts as an answer) until a ping round failed them all at once, and
    /// then set them down one by one, each walking every job: at 10,000
    /// nodes and 56,000 jobs, 130 s under its write locks, 15 minutes into a
    /// run (the same under any scheduler).
    pub phantoms: usize,
    /// Ports left free right after the slurmds' (see `spare_node_ports`).
    pub spare_ports: u16,
    /// Each slurmd in its own network namespace with its own address
    /// ([`crate::network`]), instead of all on loopback.
    pub networked: bool,
    /// Each node's TmpFS a directory of its own (see `own_tmpfs`).
    pub own_tmpfs: bool,
    /// AuthInfo's cred_expire, when set (see `cred_expire`).
    pub cred_expire: Option<u32>,
    /// slurmdbd and a MariaDB server of its own ([`crate::accounting`]).
    pub accounting: bool,
}

/// The keys every cluster starts with: stock Slurm pieces that need no
/// systemd, cgroups or database, logging at info, jobs kept a day so tests
/// can read finished ones.
const DEFAULTS: &[(&str, &str)] = &[
    ("SlurmUser", "root"),
    ("SlurmdUser", "root"),
    ("AuthType", "auth/munge"),
    ("CredType", "cred/munge"),
    ("SchedulerType", "sched/backfill"),
    ("SelectType", "select/linear"),
    ("PriorityType", "priority/basic"),
    ("ProctrackType", "proctrack/linuxproc"),
    ("TaskPlugin", "task/none"),
    ("JobAcctGatherType", "jobacct_gather/none"),
    ("AccountingStorageType", "accounting_storage/none"),
    ("JobCompType", "jobcomp/filetxt"),
    ("MpiDefault", "none"),
    ("SwitchType", "switch/none"),
    ("ReturnToService", "2"),
    ("SlurmdParameters", "config_overrides"),
    ("DebugFlags", "NO_CONF_HASH"),
    ("MinJobAge", "86400"),
    ("KillWait", "2"),
    ("InactiveLimit", "0"),
    ("SlurmctldDebug", "info"),
    ("SlurmdDebug", "info"),
];

impl ClusterSpec {
    /// `nodes` one-core nodes, one default partition, stock Slurm
    /// (sched/backfill, select/linear, task/none).
    pub fn new(name: &str, nodes: usize) -> ClusterSpec {
        ClusterSpec {
            name: name.to_string(),
            node_groups: vec![(nodes, NodeShape::default())],
            partitions: Vec::new(),
            conf: DEFAULTS.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect(),
            files: Vec::new(),
            plugin_dirs: Vec::new(),
            phantoms: 0,
            spare_ports: 0,
            networked: false,
            own_tmpfs: false,
            cred_expire: None,
            accounting: false,
        }
    }

    /// Accounting as a site has it: slurmdbd with a database of the
    /// cluster's own, associations, QOS and limits enforced, and
    /// multifactor priority with weights for each factor (all zero, its
    /// default, would leave every job the same priority); jobs' usage
    /// gathered from /proc, as sacct shows it.
    pub fn with_accounting(mut self) -> ClusterSpec {
        self.accounting = true;
        self.set("AccountingStorageType", "accounting_storage/slurmdbd")
            .set("AccountingStorageEnforce", "associations,limits,qos")
            .set("JobAcctGatherType", "jobacct_gather/linux")
            .set("PriorityType", "priority/multifactor")
            .set("PriorityWeightAge", "1000")
            .set("PriorityWeightFairshare", "10000")
            .set("PriorityWeightJobSize", "1000")
            .set("PriorityWeightPartition", "1000")
            .set("PriorityWeightQOS", "1000")
            // Its default, said: a test of the fair-share factor wants it set.
            .set("FairShareDampeningFactor", "1")
    }

    /// Its ClusterName: as set, else its name without its non-alphanumerics.
    pub fn cluster_name(&self) -> String {
        self.get("ClusterName")
            .map_or_else(|| self.name.replace(|c: char| !c.is_ascii_alphanumeric(), ""), str::to_string)
    }

    /// slurmdbd's and MariaDB's ports, the last two of the lease, when the
    /// cluster has accounting.
    pub fn accounting_ports(&self, port_base: u16) -> Option<(u16, u16)> {
        let n = self.ports_needed();
        self.accounting.then(|| (port_base + n - 2, port_base + n - 1))
    }

    /// Give each slurmd its own network namespace and address (see `networked`).
    pub fn networked(mut self) -> ClusterSpec {
        self.networked = true;
        self
    }

    /// Give each node a TmpFS of its own (`DIR/tmp/NODE`), as every node of a
    /// real cluster has: Slurm's mpi/pmix keeps a job's PMIx files there,
    /// named by the job alone, and a test cluster's slurmds share one /tmp.
    pub fn own_tmpfs(mut self) -> ClusterSpec {
        self.own_tmpfs = true;
        self
    }

    /// The network a networked cluster on these ports has.
    pub fn network(&self, port_base: u16) -> Option<Network> {
        self.networked.then(|| Network::of(&Lease { base: port_base, count: self.ports_needed() }, self.node_count()))
    }

    /// Add `count` nodes without a slurmd (see `phantoms`).
    pub fn phantoms(mut self, count: usize) -> ClusterSpec {
        self.phantoms = count;
        self
    }

    /// Keep `count` ports free right after the last slurmd's, for nodes a
    /// test adds to slurm.conf: Slurm's python suite in auto-config mode
    /// gives an added node the port after the last (its n5 took slurmdbd's
    /// port and never started).
    pub fn spare_node_ports(mut self, count: u16) -> ClusterSpec {
        self.spare_ports = count;
        self
    }

    /// A job credential's lifetime, AuthInfo's `cred_expire` (Slurm's
    /// default 120 s, its least 5): stock holds a requeued batch job for
    /// as long plus a second before it may start again, which a test of a
    /// requeue otherwise waits out.
    pub fn cred_expire(mut self, secs: u32) -> ClusterSpec {
        self.cred_expire = Some(secs);
        self
    }

    /// Set a slurm.conf key (replacing its value if set).
    pub fn set(mut self, key: &str, value: &str) -> ClusterSpec {
        match self.conf.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
            Some(entry) => entry.1 = value.to_string(),
            None => self.conf.push((key.to_string(), value.to_string())),
        }
        self
    }

    /// Leave a key out of slurm.conf (Slurm's own default then holds).
    pub fn unset(mut self, key: &str) -> ClusterSpec {
        self.conf.retain(|(k, _)| !k.eq_ignore_ascii_case(key));
        self
    }

    /// A key's value, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.conf.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
    }

    /// A file beside slurm.conf (replacing one of that name).
    pub fn file(mut self, name: &str, contents: &str) -> ClusterSpec {
        self.files.retain(|(n, _)| n != name);
        self.files.push((name.to_string(), contents.to_string()));
        self
    }

    pub fn without_file(mut self, name: &str) -> ClusterSpec {
        self.files.retain(|(n, _)| n != name);
        self
    }

    pub fn file_contents(&self, name: &str) -> Option<&str> {
        self.files.iter().find(|(n, _)| n == name).map(|(_, c)| c.as_str())
    }

    /// Every node with this shape.
    pub fn shape(mut self, shape: NodeShape) -> ClusterSpec {
        let n = self.node_count();
        self.node_groups = vec![(n, shape)];
        self
    }

    /// More nodes, of another shape, after the others.
    pub fn add_nodes(mut self, count: usize, shape: NodeShape) -> ClusterSpec {
        self.node_groups.push((count, shape));
        self
    }

    pub fn partition(mut self, p: Partition) -> ClusterSpec {
        self.partitions.push(p);
        self
    }

    /// Search `dir` for plugins before Slurm's own directory.
    pub fn plugin_dir(mut self, dir: &Path) -> ClusterSpec {
        self.plugin_dirs.push(dir.to_path_buf());
        self
    }

    /// The most GPUs any node has: the fake device files to make.
    pub fn gpus_most(&self) -> u32 {
        self.node_groups.iter().map(|(_, s)| s.gpus).max().unwrap_or(0)
    }

    pub fn node_count(&self) -> usize {
        self.node_groups.iter().map(|(n, _)| n).sum()
    }

    pub fn node_names(&self) -> Vec<String> {
        (1..=self.node_count()).map(|i| format!("n{i}")).collect()
    }

    /// The ports this cluster takes: slurmctld's, one per slurmd, the spare
    /// ones for nodes a test adds, one the phantoms share (nothing listens
    /// on it), and slurmdbd's and MariaDB's last.
    pub fn ports_needed(&self) -> u16 {
        let n = self.node_count()
            + 1
            + usize::from(self.spare_ports)
            + usize::from(self.phantoms > 0)
            + 2 * usize::from(self.accounting);
        u16::try_from(n).unwrap_or(u16::MAX)
    }

    /// slurm.conf for the cluster in `dir` on `host`, slurmctld on
    /// `port_base` and slurmd nX on `port_base + X`.
    pub fn slurm_conf(&self, dir: &Path, host: &str, port_base: u16) -> String {
        let d = dir.display();
        let mut plugin_dirs: Vec<String> = self.plugin_dirs.iter().map(|p| p.display().to_string()).collect();
        plugin_dirs.push(slurm_plugin_system_dir().into());
        let needs_gres = self.node_groups.iter().any(|(_, s)| s.gpus > 0);
        // What the cluster's place on this machine decides, unless set.
        let net = self.network(port_base);
        let host_addr = net.map_or_else(|| "127.0.0.1".to_string(), |n| n.host_addr());
        let mut placed: Vec<(&str, String)> = vec![
            ("ClusterName", self.cluster_name()),
            ("SlurmctldHost", format!("{host}({host_addr})")),
            ("SlurmctldPort", port_base.to_string()),
            (
                "AuthInfo",
                match self.cred_expire {
                    Some(secs) => format!("socket={d}/munge/munge.socket,cred_expire={secs}"),
                    None => format!("socket={d}/munge/munge.socket"),
                },
            ),
            ("PluginDir", plugin_dirs.join(":")),
            ("JobCompLoc", format!("{d}/log/jobcomp.txt")),
            ("StateSaveLocation", format!("{d}/state")),
            ("SlurmdSpoolDir", format!("{d}/spool/%n")),
            ("SlurmctldPidFile", format!("{d}/run/slurmctld.pid")),
            ("SlurmdPidFile", format!("{d}/run/slurmd-%n.pid")),
            ("SlurmctldLogFile", format!("{d}/log/slurmctld.log")),
            ("SlurmdLogFile", format!("{d}/log/slurmd-%n.log")),
        ];
        if needs_gres {
            placed.push(("GresTypes", "gpu".into()));
        }
        if self.own_tmpfs {
            placed.push(("TmpFS", format!("{d}/tmp/%n")));
        }
        if let Some((dbd, _)) = self.accounting_ports(port_base) {
            placed.push(("AccountingStorageHost", "127.0.0.1".into()));
            placed.push(("AccountingStoragePort", dbd.to_string()));
            // For slurmdbd, Slurm takes munge's socket from here, not AuthInfo.
            placed.push(("AccountingStoragePass", format!("socket={d}/munge/munge.socket")));
        }
        // No comment line: Slurm's python suite, when it changes a node's
        // line (auto-config mode), reads every line's first word as
        // Key=Value and fails on one without '='.
        let mut text = String::new();
        for (k, v) in placed {
            if self.get(k).is_none() {
                let _ = writeln!(text, "{k}={v}");
            }
        }
        for (k, v) in &self.conf {
            let _ = writeln!(text, "{k}={v}");
        }
        let mut first = 1;
        for &(count, shape) in &self.node_groups {
            if count == 0 {
                continue;
            }
            let last = first + count - 1;
            // A line a node, with its own port (and address, networked):
            // Slurm's python suite reads each node's Port as a number when
            // it adds nodes like one of them (auto-config mode). No CPUs=:
            // Slurm counts them from the cores, and a node the suite adds
            // with more cores kept the template's CPUs= (slurmctld: "CPUs=1
            // doesn't match ... CoresPerSocket(2)", fatal).
            // Networked, a node's hostname is its own (its slurmd runs in a
            // UTS namespace of its own, cluster.rs): slurmctld sends an srun
            // its messages (a waiting step's wake-up, a node's failure) at
            // the address of the node whose NodeHostname is srun's hostname.
            // Sharing this machine's, every node's srun was sent n1's.
            for i in first..=last {
                let (addr, hostname) = match net {
                    Some(n) => (n.node_addr(i), format!("n{i}")),
                    None => ("127.0.0.1".to_string(), host.to_string()),
                };
                let port = usize::from(port_base) + i;
                let _ = write!(
                    text,
                    "NodeName=n{i} NodeHostname={hostname} NodeAddr={addr} Port={port} Sockets=1 \
                     CoresPerSocket={c} ThreadsPerCore=1",
                    c = shape.cores
                );
                if shape.gpus > 0 {
                    let _ = write!(text, " Gres=gpu:{}", shape.gpus);
                }
                if shape.memory_mb > 0 {
                    let _ = write!(text, " RealMemory={}", shape.memory_mb);
                }
                text += " State=UNKNOWN\n";
            }
            first = last + 1;
        }
        if self.phantoms > 0 {
            let port = usize::from(port_base) + first + usize::from(self.spare_ports);
            let _ = writeln!(
                text,
                "NodeName=p[1-{}] NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs=1 Sockets=1 \
                 CoresPerSocket=1 ThreadsPerCore=1 State=DOWN Reason=\"no slurmd: a phantom\"",
                self.phantoms
            );
        }
        if self.partitions.is_empty() {
            text += "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
        }
        for p in &self.partitions {
            let default = if p.default { " Default=YES" } else { "" };
            let _ = writeln!(text, "PartitionName={} Nodes={}{default} {}", p.name, p.nodes, p.extra);
        }
        text
    }

    /// gres.conf for the nodes with GPUs of the cluster in `dir`, when no
    /// test wrote its own.
    pub fn gres_conf(&self, dir: &Path) -> Option<String> {
        if self.file_contents("gres.conf").is_some() {
            return None;
        }
        let mut text = String::new();
        let mut first = 1;
        for &(count, shape) in &self.node_groups {
            let last = first + count.max(1) - 1;
            if count > 0 && shape.gpus > 0 {
                let _ = writeln!(
                    text,
                    "NodeName=n[{first}-{last}] Name=gpu File={}/dev/gpu[0-{}] Count={}",
                    dir.display(),
                    shape.gpus - 1,
                    shape.gpus
                );
            }
            first += count;
        }
        (!text.is_empty()).then_some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(spec: &ClusterSpec) -> Vec<String> {
        spec.slurm_conf(Path::new("/c"), "host", 20000).lines().map(str::to_string).collect()
    }

    #[test]
    fn a_plain_cluster_is_stock_slurm_on_its_own_ports_and_paths() {
        let l = lines(&ClusterSpec::new("t-a", 3));
        for want in [
            "ClusterName=ta",
            "SlurmctldHost=host(127.0.0.1)",
            "SlurmctldPort=20000",
            "AuthInfo=socket=/c/munge/munge.socket",
            "PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm",
            "SchedulerType=sched/backfill",
            "SelectType=select/linear",
            "TaskPlugin=task/none",
            "SlurmdSpoolDir=/c/spool/%n",
            "NodeName=n1 NodeHostname=host NodeAddr=127.0.0.1 Port=20001 Sockets=1 \
             CoresPerSocket=1 ThreadsPerCore=1 State=UNKNOWN",
            "NodeName=n3 NodeHostname=host NodeAddr=127.0.0.1 Port=20003 Sockets=1 \
             CoresPerSocket=1 ThreadsPerCore=1 State=UNKNOWN",
            "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ] {
            assert!(l.iter().any(|x| x == want), "missing {want}:\n{}", l.join("\n"));
        }
        assert!(!l.iter().any(|x| x.starts_with("GresTypes")));
    }

    #[test]
    fn keys_are_set_once_and_can_be_left_out() {
        let spec =
            ClusterSpec::new("t", 1).set("SchedulerType", "sched/malleable").set("selecttype", "select/cons_tres");
        let spec = spec.unset("KillWait").set("SlurmctldPort", "1234");
        let l = lines(&spec);
        assert_eq!(l.iter().filter(|x| x.starts_with("SchedulerType=")).count(), 1);
        assert!(l.contains(&"SchedulerType=sched/malleable".to_string()));
        assert!(l.contains(&"SelectType=select/cons_tres".to_string()));
        assert!(!l.iter().any(|x| x.starts_with("KillWait")));
        // A test's own port wins over the allocated one.
        assert_eq!(l.iter().filter(|x| x.starts_with("SlurmctldPort=")).collect::<Vec<_>>(), ["SlurmctldPort=1234"]);
        assert_eq!(spec.get("schedulertype"), Some("sched/malleable"));
    }

    #[test]
    fn node_shapes_gpus_partitions_and_plugin_dirs() {
        let spec = ClusterSpec::new("t", 2)
            .shape(NodeShape { cores: 4, gpus: 0, memory_mb: 0 })
            .add_nodes(1, NodeShape { cores: 8, gpus: 2, memory_mb: 4000 })
            .partition(Partition::new("cpu", "n[1-2]").default_partition())
            .partition(Partition::new("gpu", "n3").extra("MaxTime=10 State=UP"))
            .plugin_dir(Path::new("/ours"));
        let l = lines(&spec);
        assert!(l
            .iter()
            .any(|x| x.starts_with("NodeName=n1 ") && x.contains("Port=20001 Sockets=1 CoresPerSocket=4 ")));
        assert!(l
            .iter()
            .any(|x| x.starts_with("NodeName=n2 ") && x.contains("Port=20002 Sockets=1 CoresPerSocket=4 ")));
        assert!(l.iter().any(|x| x.starts_with("NodeName=n3 ")
            && x.contains("CoresPerSocket=8 ")
            && x.contains(" Gres=gpu:2 RealMemory=4000 ")));
        assert!(l.contains(&"GresTypes=gpu".to_string()));
        assert!(l.contains(&"PartitionName=cpu Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP".to_string()));
        assert!(l.contains(&"PartitionName=gpu Nodes=n3 MaxTime=10 State=UP".to_string()));
        assert!(!l.iter().any(|x| x.starts_with("PartitionName=batch")));
        assert!(l.contains(&"PluginDir=/ours:/usr/lib/x86_64-linux-gnu/slurm-wlm".to_string()));
        assert_eq!(spec.gres_conf(Path::new("/c")).unwrap(), "NodeName=n[3-3] Name=gpu File=/c/dev/gpu[0-1] Count=2\n");
        assert_eq!(spec.gpus_most(), 2);
        assert_eq!((spec.node_count(), spec.ports_needed()), (3, 4));
        // Networked: each node its own address, slurmctld on the bridge's.
        let net = ClusterSpec::new("t", 2).networked().slurm_conf(Path::new("/c"), "host", 20300);
        assert!(net.contains("SlurmctldHost=host(10.77.3.254)"), "{net}");
        assert!(net.contains("NodeName=n2 NodeHostname=n2 NodeAddr=10.77.3.2 Port=20302 "), "{net}");
        // Phantoms: one more port, theirs, after the slurmds'.
        let spec = spec.phantoms(100);
        assert_eq!((spec.node_count(), spec.ports_needed()), (3, 5));
        let conf = spec.slurm_conf(Path::new("/c"), "host", 20000);
        assert!(conf.contains("NodeName=p[1-100] NodeHostname=host NodeAddr=127.0.0.1 Port=20004 CPUs=1 "), "{conf}");
        assert!(conf.contains(" State=DOWN Reason=\"no slurmd: a phantom\"\n"), "{conf}");
    }

    #[test]
    fn spare_node_ports_lie_between_the_slurmds_and_the_rest() {
        let spec = ClusterSpec::new("t", 2).spare_node_ports(8).with_accounting().phantoms(10);
        assert_eq!(spec.ports_needed(), 2 + 1 + 8 + 1 + 2);
        assert_eq!(spec.accounting_ports(20000), Some((20012, 20013)));
        let conf = spec.slurm_conf(Path::new("/c"), "host", 20000);
        assert!(conf.contains("NodeName=n2 NodeHostname=host NodeAddr=127.0.0.1 Port=20002 "), "{conf}");
        assert!(conf.contains("NodeName=p[1-10] NodeHostname=host NodeAddr=127.0.0.1 Port=20011 "), "{conf}");
    }

    #[test]
    fn files_are_replaced_by_name() {
        let spec = ClusterSpec::new("t", 1).file("malleable.conf", "a").file("malleable.conf", "b").file("x", "y");
        assert_eq!(spec.file_contents("malleable.conf"), Some("b"));
        assert_eq!(spec.without_file("x").files.len(), 1);
    }
}
