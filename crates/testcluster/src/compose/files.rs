//! A site's files under its directory: the compose file, Slurm's configs
//! (`etc/`, seen by every host), the database's (`dbd/`, seen by mariadb
//! and slurmdbd only), the munge key and, where slurmrestd runs, the JWT
//! key (`jwt/`, seen by slurmctld and slurmdbd only), each made once per
//! site, and a log folder per host mounted at `/var/log/slurm`.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

use super::spec::{SiteSpec, USERS};
use super::subnet::Subnet;
use crate::Result;

/// Where the site's Slurm packages install its plugins (Debian's and
/// SchedMD's differ); ours are put there in the image.
pub fn plugin_dir(spec: &SiteSpec) -> &'static str {
    spec.release().lib_dir
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `n` random bytes from the kernel.
fn random_bytes(n: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(buf)
}

/// Write every file of the site into `dir` with `image` as every host's
/// image. The munge key and the database password are made on the first
/// call and kept after, so the site's hosts and records stay valid across
/// `up`s. The hosts have fixed addresses in `subnet`.
pub fn write_all(spec: &SiteSpec, dir: &Path, image: &str, subnet: Subnet) -> Result<()> {
    let key = dir.join("munge.key");
    if !key.exists() {
        write(&key, random_bytes(1024)?)?;
    }
    let pass_file = dir.join("dbd/password");
    let password = match std::fs::read_to_string(&pass_file) {
        Ok(p) if !p.trim().is_empty() => p.trim().to_string(),
        _ => {
            let p: String = random_bytes(16)?.iter().map(|b| format!("{b:02x}")).collect();
            write(&pass_file, &p)?;
            p
        }
    };
    if spec.rest() && !dir.join("jwt/jwt_hs256.key").exists() {
        write(&dir.join("jwt/jwt_hs256.key"), random_bytes(32)?)?;
    }
    write(&dir.join("etc/slurm.conf"), slurm_conf(spec))?;
    write(&dir.join("etc/cgroup.conf"), CGROUP_CONF)?;
    write(&dir.join("etc/gres.conf"), gres_conf(spec))?;
    write(&dir.join("etc/plugstack.conf"), plugstack_conf(spec))?;
    write(&dir.join("etc/malleable.conf"), malleable_conf(spec))?;
    write(&dir.join("etc/accounts.sh"), accounts_sh(spec))?;
    write(&dir.join("dbd/slurmdbd.conf"), slurmdbd_conf(&password, spec.rest()))?;
    write(&dir.join("dbd/mariadb-init.sql"), mariadb_init(&password))?;
    for host in hosts(spec) {
        let log = dir.join("log").join(&host);
        std::fs::create_dir_all(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    }
    std::fs::create_dir_all(dir.join("home")).map_err(|e| format!("cannot create home: {e}"))?;
    write(&dir.join("docker-compose.yml"), compose_yml(spec, dir, image, subnet))
}

/// Our SPANK plugin, required (srun and sbatch fail without it); none on a stock site.
fn plugstack_conf(spec: &SiteSpec) -> String {
    if spec.ours {
        format!("required {}/spank_malleable.so\n", plugin_dir(spec))
    } else {
        String::new()
    }
}

/// Every host of the site, in the order they come up.
pub fn hosts(spec: &SiteSpec) -> Vec<String> {
    let mut h: Vec<String> = ["mariadb", "slurmdbd", "slurmctld", "login"].iter().map(|s| s.to_string()).collect();
    if spec.rest() {
        h.push(REST_HOST.into());
    }
    h.extend(spec.node_names());
    h
}

/// The host slurmrestd runs on, and its port there.
pub const REST_HOST: &str = "rest";
pub const REST_PORT: u16 = 6820;

/// Where slurmctld and slurmdbd read the JWT key (site-init installs it).
const JWT_KEY: &str = "/etc/slurm/jwt_hs256.key";

/// What slurm.conf and slurmdbd.conf say where slurmrestd runs: JWT as
/// the other authentication, with the site's key.
fn jwt_keys() -> [(&'static str, String); 2] {
    [("AuthAltTypes", "auth/jwt".into()), ("AuthAltParameters", format!("jwt_key={JWT_KEY}"))]
}

pub fn slurm_conf(spec: &SiteSpec) -> String {
    let mut s =
        format!("# Written by cargo xtask compose for site '{}'.\nClusterName={}\n", spec.name, spec.cluster_name());
    // A partition line set as a key (`--set "PartitionName=batch ..."`)
    // replaces the default one, after the node lines.
    let mut partition = "batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP".to_string();
    for (k, v) in spec.conf_keys() {
        if k.eq_ignore_ascii_case("PartitionName") {
            partition = v.clone();
        } else {
            let _ = writeln!(s, "{k}={v}");
        }
    }
    if spec.rest() {
        for (k, v) in jwt_keys() {
            let _ = writeln!(s, "{k}={v}");
        }
    }
    for (i, node) in spec.node_names().iter().enumerate() {
        let i = i + 1;
        let gres = match spec.gpus_of(i) {
            0 => String::new(),
            g => format!(" Gres=gpu:{g}"),
        };
        let _ = writeln!(
            s,
            "NodeName={node} CPUs={c} Boards=1 SocketsPerBoard=1 CoresPerSocket={c} ThreadsPerCore=1 \
             RealMemory={m} Feature={f}{gres} State=UNKNOWN",
            c = spec.cores,
            m = spec.memory_mb,
            f = spec.feature_of(i),
        );
    }
    let _ = writeln!(s, "PartitionName={partition}");
    s
}

/// cgroup v1: the machines of this kind mount v1 hierarchies (their
/// unified hierarchy has no controller), so v2 cannot be had in a container.
const CGROUP_CONF: &str = "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainCores=yes\n\
                           ConstrainRAMSpace=yes\nConstrainDevices=yes\n";

fn gres_conf(spec: &SiteSpec) -> String {
    let mut s = String::new();
    for (i, node) in spec.node_names().iter().enumerate() {
        let g = spec.gpus_of(i + 1);
        if g > 0 {
            let _ = writeln!(s, "NodeName={node} Name=gpu File=/dev/nvidia[0-{}]", g - 1);
        }
    }
    s
}

fn malleable_conf(spec: &SiteSpec) -> String {
    spec.malleable_keys().iter().map(|(k, v)| format!("{k}={v}\n")).collect()
}

/// The cluster, its QOS (`high` may preempt `normal`), the accounts and
/// the test users, added before slurmctld first starts; the last line
/// fails the host's start if alice's association is not there.
fn accounts_sh(spec: &SiteSpec) -> String {
    let c = spec.cluster_name();
    let mut s = format!(
        "# Written by cargo xtask compose: run once by site-init on slurmctld.\n\
         # sacctmgr says 'Nothing new added' (exit 1) on a later start: the\n\
         # check at the end is what counts.\n\
         sacctmgr -i add cluster {c}\n\
         sacctmgr -i add qos high Priority=100\n\
         sacctmgr -i modify qos high set Preempt=normal PreemptMode=requeue\n"
    );
    let accounts: Vec<&str> = USERS.iter().map(|u| u.2).collect();
    let _ = writeln!(s, "sacctmgr -i add account {} Cluster={c}", accounts.join(","));
    for (user, _, account) in USERS {
        let _ = writeln!(s, "sacctmgr -i add user {user} Account={account} QOS=normal,high DefaultQOS=normal");
    }
    let (user, _, account) = USERS[0];
    let _ = writeln!(
        s,
        "set -e\nsacctmgr -n -P show assoc where user={user} cluster={c} format=account | grep -qx {account}"
    );
    s
}

fn slurmdbd_conf(password: &str, rest: bool) -> String {
    let mut s = format!(
        "AuthType=auth/munge\nDbdHost=slurmdbd\nSlurmUser=slurm\nLogFile=/var/log/slurm/slurmdbd.log\n\
         PidFile=/run/slurmdbd.pid\nDebugLevel=info\nStorageType=accounting_storage/mysql\nStorageHost=mariadb\n\
         StorageUser=slurm\nStoragePass={password}\nStorageLoc=slurm_acct_db\n"
    );
    if rest {
        for (k, v) in jwt_keys() {
            let _ = writeln!(s, "{k}={v}");
        }
    }
    s
}

/// Slurm's user, and its database made here: slurmdbd makes a missing one
/// itself and connects again on the same handle, which trixie's MariaDB
/// client library (11.8) leaves broken; its first query then fails with
/// "Number of columns in result (=1) set execeeds maxmimum allowed number
/// of columns (=0)" and slurmdbd exits (24.11's mysql_common.c:901-911).
fn mariadb_init(password: &str) -> String {
    format!(
        "CREATE USER IF NOT EXISTS 'slurm'@'%' IDENTIFIED BY '{password}';\n\
         CREATE DATABASE IF NOT EXISTS slurm_acct_db;\n\
         GRANT ALL ON slurm_acct_db.* TO 'slurm'@'%';\nFLUSH PRIVILEGES;\n"
    )
}

/// The compose file. Container names are `NAME-HOST`, so `docker kill
/// NAME-c3` does what it says; the hosts reach each other by name on the
/// site's own network, each at its own fixed address in `subnet`.
pub fn compose_yml(spec: &SiteSpec, dir: &Path, image: &str, subnet: Subnet) -> String {
    let d = dir.display();
    let mut s = format!(
        "# Written by cargo xtask compose for site '{}'; use it with\n\
         #   docker-compose -p {} -f {d}/docker-compose.yml ...\nversion: \"2.4\"\nservices:\n",
        spec.name, spec.name
    );
    let nodes = spec.node_names();
    let all = hosts(spec);
    for (i, host) in all.iter().cloned().enumerate() {
        let compute = nodes.contains(&host);
        let role = if compute {
            "slurmd"
        } else if host == REST_HOST {
            "slurmrestd"
        } else {
            host.as_str()
        };
        let _ = write!(
            s,
            "  {host}:\n    image: {image}\n    container_name: {name}-{host}\n    hostname: {host}\n    init: true\n",
            name = spec.name
        );
        if compute {
            // SYS_ADMIN to give slurmd cgroup hierarchies of its own
            // (site-init); SYS_NICE for task/affinity, which sets a task's
            // CPUs and memory policy (docker's seccomp profile refuses
            // set_mempolicy without it).
            s.push_str("    cap_add: [SYS_ADMIN, SYS_NICE]\n    entrypoint: [\"unshare\", \"--cgroup\", \"/usr/local/sbin/site-init\"]\n");
            if let Some(shares) = spec.compute_cpu_shares {
                let _ = writeln!(s, "    cpu_shares: {shares}");
            }
            // /tmp a tmpfs of its own: what a compute node's /tmp holds
            // stays off the machine's disk, and a full /tmp (the chaos
            // campaign's fault) fills 256 MiB, not the machine.
            s.push_str("    tmpfs: [\"/tmp:size=256m\"]\n");
            let i: usize = host[1..].parse().unwrap_or(0);
            let _ = writeln!(s, "    environment:\n      SITE_GPUS: \"{}\"", spec.gpus_of(i));
            if spec.gpus_of(i) > 0 {
                // The GPUs' character devices (major 195, as NVIDIA's):
                // the container's devices cgroup must allow them, or
                // task/cgroup (ConstrainDevices) cannot give a job access.
                s.push_str("    device_cgroup_rules: [\"c 195:* rwm\"]\n");
            }
        } else {
            s.push_str("    entrypoint: [\"/usr/local/sbin/site-init\"]\n");
        }
        // Every other host's name in /etc/hosts, as a site's hosts file or
        // DNS keeps it: docker's DNS forgets a stopped container's name, and
        // its lookup then waited 10 s on resolvers this machine cannot
        // reach, under slurmctld's locks (a killed host, in chaos run 14).
        s.push_str("    extra_hosts:\n");
        for (j, other) in all.iter().enumerate().filter(|(j, _)| *j != i) {
            let _ = writeln!(s, "      - \"{other}:{}\"", subnet.host(j));
        }
        let _ = writeln!(s, "    command: [\"{role}\"]");
        let _ = writeln!(s, "    networks:\n      site:\n        ipv4_address: {}\n    volumes:", subnet.host(i));
        let _ = writeln!(s, "      - {d}/etc:/site/etc:ro\n      - {d}/munge.key:/site/munge.key:ro");
        let _ = writeln!(s, "      - {d}/log/{host}:/var/log/slurm");
        if host == "mariadb" || host == "slurmdbd" {
            let _ = writeln!(s, "      - {d}/dbd:/site/dbd:ro");
        }
        if spec.rest() && (host == "slurmctld" || host == "slurmdbd") {
            let _ = writeln!(s, "      - {d}/jwt:/site/jwt:ro");
        }
        if compute || host == "login" {
            let _ = writeln!(s, "      - {d}/home:/home");
        }
    }
    // Named after its /24 too: docker at times keeps a removed site's
    // network, with an endpoint no container holds ("has active
    // endpoints"), and compose would reuse one of the same name, whose
    // addresses the hosts' no longer fit. A new /24 is never a kept one's.
    let _ = writeln!(
        s,
        "networks:\n  site:\n    name: {}-net{}\n    ipam:\n      config:\n        - subnet: {}",
        spec.name,
        subnet.0[2],
        subnet.cidr()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_conf_has_the_site_keys_and_a_line_per_node() {
        let s = slurm_conf(&SiteSpec::new("malleable", 4, 2));
        assert!(s.contains("ClusterName=malleable\n"));
        assert!(s.contains("SchedulerType=sched/malleable\n"));
        assert!(s.contains("AccountingStorageType=accounting_storage/slurmdbd\n"));
        assert!(s.contains("NodeName=c1 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2"));
        assert!(s.contains(
            "NodeName=c4 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 \
                            RealMemory=2000 Feature=slow Gres=gpu:2 State=UNKNOWN\n"
        ));
        assert!(!s.contains(
            "NodeName=c2 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 \
                             RealMemory=2000 Feature=fast Gres"
        ));
        assert!(s.ends_with("PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"), "{s}");
        let over = slurm_conf(&SiteSpec::new("m", 2, 2).set("PartitionName", "batch Nodes=ALL OverSubscribe=YES:2"));
        assert!(
            over.ends_with(
                "NodeName=c2 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 \
                                RealMemory=2000 Feature=slow Gres=gpu:2 State=UNKNOWN\n\
                                PartitionName=batch Nodes=ALL OverSubscribe=YES:2\n"
            ),
            "{over}"
        );
        assert_eq!(
            plugstack_conf(&SiteSpec::new("m", 2, 2)),
            "required /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_malleable.so\n"
        );
        assert_eq!(plugstack_conf(&SiteSpec::new("m", 2, 2).stock()), "");
        assert!(mariadb_init("p").contains("CREATE DATABASE IF NOT EXISTS slurm_acct_db;"));
        // A site built from SchedMD's source runs slurmrestd, with JWT.
        let rest = SiteSpec::new("r", 2, 2).slurm("26.05").unwrap();
        assert!(
            slurm_conf(&rest).contains("AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=/etc/slurm/jwt_hs256.key\n")
        );
        assert!(slurmdbd_conf("p", true).contains("AuthAltTypes=auth/jwt\n"));
        assert!(!slurm_conf(&SiteSpec::new("m", 2, 2)).contains("AuthAltTypes"));
        assert_eq!(hosts(&rest), ["mariadb", "slurmdbd", "slurmctld", "login", "rest", "c1", "c2"]);
        let g = gres_conf(&SiteSpec::new("malleable", 4, 2));
        assert_eq!(g, "NodeName=c3 Name=gpu File=/dev/nvidia[0-1]\nNodeName=c4 Name=gpu File=/dev/nvidia[0-1]\n");
    }

    #[test]
    fn controller_first_lowers_the_compute_hosts_cpu_weight_only() {
        let weights = |spec: &SiteSpec| -> Vec<(String, bool)> {
            let y = compose_yml(spec, Path::new("/t"), "img:1", Subnet([10, 213, 7]));
            hosts(spec)
                .into_iter()
                .map(|h| {
                    let head = format!("  {h}:");
                    let mut lines = y.lines().skip_while(|l| *l != head).skip(1);
                    let low = lines.by_ref().take_while(|l| l.starts_with("    ")).any(|l| l == "    cpu_shares: 128");
                    (h, low)
                })
                .collect()
        };
        let first = weights(&SiteSpec::new("s", 2, 2).controller_first());
        assert!(first.iter().all(|(h, low)| *low == h.starts_with('c')), "{first:?}");
        assert!(weights(&SiteSpec::new("s", 2, 2)).iter().all(|(_, low)| !low));
    }

    #[test]
    fn only_the_database_hosts_see_the_password_and_only_compute_hosts_get_sys_admin() {
        let y = compose_yml(&SiteSpec::new("s", 2, 2), Path::new("/t"), "img:1", Subnet([10, 213, 7]));
        // A service's lines: from `  NAME:` to the next line indented by two.
        let service = |h: &str| -> String {
            let head = format!("  {h}:");
            let mut lines = y.lines().skip_while(|l| *l != head);
            assert!(lines.next().is_some(), "no service {h} in\n{y}");
            lines.take_while(|l| l.starts_with("    ")).collect::<Vec<_>>().join("\n")
        };
        for h in ["mariadb", "slurmdbd"] {
            assert!(service(h).contains("/t/dbd:/site/dbd:ro"), "{h}");
        }
        for h in ["slurmctld", "login", "c1", "c2"] {
            assert!(!service(h).contains("/site/dbd"), "{h} sees the database password");
        }
        assert!(service("c1").contains("cap_add: [SYS_ADMIN, SYS_NICE]"));
        assert!(!service("slurmctld").contains("cap_add"));
        assert!(service("c2").contains("container_name: s-c2"));
        assert!(service("c2").contains("SITE_GPUS: \"2\""));
        assert!(service("c2").contains("device_cgroup_rules: [\"c 195:* rwm\"]"));
        assert!(!service("mariadb").contains("device_cgroup_rules"));
        assert!(service("c1").contains("tmpfs: [\"/tmp:size=256m\"]"));
        assert!(!service("login").contains("tmpfs"));
        // Each host at its own address, which it keeps when started again.
        let addrs: Vec<&str> = y.lines().filter_map(|l| l.trim().strip_prefix("ipv4_address: ")).collect();
        let unique: std::collections::BTreeSet<&&str> = addrs.iter().collect();
        assert_eq!(unique.len(), addrs.len(), "{addrs:?}");
        assert!(addrs.iter().all(|a| a.starts_with("10.213.7.")), "{addrs:?}");
        assert!(y.contains("- subnet: 10.213.7.0/24"), "{y}");
        assert!(y.contains("    name: s-net7\n"), "{y}");
        // Each knows every other's address, not its own (docker adds that).
        let c1 = addrs[hosts(&SiteSpec::new("s", 2, 2)).iter().position(|h| h == "c1").unwrap()];
        assert!(service("slurmctld").contains(&format!("- \"c1:{c1}\"")), "{}", service("slurmctld"));
        assert!(!service("c1").contains("- \"c1:"), "{}", service("c1"));
        assert!(service("c1").contains("- \"slurmdbd:10.213.7."), "{}", service("c1"));
        let y = compose_yml(
            &SiteSpec::new("s", 2, 2).slurm("26.05").unwrap(),
            Path::new("/t"),
            "img:1",
            Subnet([10, 213, 7]),
        );
        let service = |h: &str| -> String {
            let head = format!("  {h}:");
            y.lines()
                .skip_while(|l| *l != head)
                .skip(1)
                .take_while(|l| l.starts_with("    "))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(service("rest").contains("command: [\"slurmrestd\"]"), "{y}");
        for h in ["slurmctld", "slurmdbd"] {
            assert!(service(h).contains("/t/jwt:/site/jwt:ro"), "{h}");
        }
        for h in ["rest", "login", "c1"] {
            assert!(!service(h).contains("/site/jwt"), "{h} sees the JWT key");
        }
    }
}
