//! What compose site to run: its name, its compute hosts and what each has,
//! the Slurm it runs (a release of `provision::release`), with our
//! plugins or stock, slurm.conf's keys (a production site's by default,
//! any of them may be set) and malleable.conf's.

use provision::release::{SlurmRelease, HOST_RELEASE, RELEASES};

/// The test users on every host (made in the base image): name, uid (also
/// their group's gid), account.
pub use provision::image::USERS;

/// Slurm releases a site can run: every release of the table.
pub fn slurm_versions() -> Vec<&'static str> {
    RELEASES.iter().map(|r| r.version).collect()
}

/// A compose site.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteSpec {
    /// The compose project's name; also the cluster's (without its non-alphanumerics).
    pub name: String,
    /// Compute hosts `c1`..`cN`.
    pub nodes: usize,
    /// Cores of each compute host: all the machine has, so that cpusets and
    /// CPU affinity name CPUs that exist.
    pub cores: u32,
    /// RealMemory of each compute host, in MB.
    pub memory_mb: u32,
    /// GPUs on each of the last two compute hosts (the `gpu` GRES).
    pub gpus: u32,
    /// The Slurm release, as `--slurm` takes it ("22.05", "24.11").
    pub slurm: String,
    /// Our plugins installed and configured; false: a stock site (see [`SiteSpec::stock`]).
    pub ours: bool,
    /// slurm.conf's keys in order; a key is set once.
    conf: Vec<(String, String)>,
    /// malleable.conf's keys in order.
    malleable: Vec<(String, String)>,
    /// The compute hosts' CPU weight (docker's `cpu_shares`; 1024, every
    /// container's, when `None`): see [`SiteSpec::controller_first`].
    pub compute_cpu_shares: Option<u32>,
}

/// slurm.conf as a production site runs it, less the host and node lines:
/// accounting in slurmdbd with associations enforced, multifactor priority
/// with fair-share, QOS preemption, cores and memory as consumable
/// resources, cgroups for tracking, confinement and usage.
const SITE_CONF: &[(&str, &str)] = &[
    ("SlurmctldHost", "slurmctld"),
    ("SlurmUser", "slurm"),
    ("SlurmdUser", "root"),
    ("AuthType", "auth/munge"),
    ("CredType", "cred/munge"),
    ("StateSaveLocation", "/var/lib/slurm/slurmctld"),
    ("SlurmdSpoolDir", "/var/lib/slurm/slurmd"),
    ("SlurmctldPidFile", "/run/slurmctld.pid"),
    ("SlurmdPidFile", "/run/slurmd.pid"),
    ("SlurmctldLogFile", "/var/log/slurm/slurmctld.log"),
    ("SlurmdLogFile", "/var/log/slurm/slurmd.log"),
    ("SlurmctldDebug", "info"),
    ("SlurmdDebug", "info"),
    ("SchedulerType", "sched/malleable"),
    ("SchedulerParameters", "sched_interval=-1,permit_job_expansion"),
    ("JobSubmitPlugins", "malleable"),
    ("SelectType", "select/cons_tres"),
    ("SelectTypeParameters", "CR_Core_Memory"),
    ("DefMemPerCPU", "500"),
    ("ProctrackType", "proctrack/cgroup"),
    ("TaskPlugin", "task/cgroup,task/affinity"),
    // Each job's extern step on every node it holds, the one it grew onto
    // too: where pam_slurm_adopt puts a user's ssh session.
    ("PrologFlags", "Contain"),
    ("JobAcctGatherType", "jobacct_gather/cgroup"),
    ("JobAcctGatherFrequency", "10"),
    ("AccountingStorageType", "accounting_storage/slurmdbd"),
    ("AccountingStorageHost", "slurmdbd"),
    ("AccountingStorageEnforce", "associations,limits,qos"),
    ("AccountingStorageTRES", "gres/gpu"),
    // Jobs' Comments kept in the database, as sites that bill by project do.
    ("AccountingStoreFlags", "job_comment"),
    ("JobCompType", "jobcomp/none"),
    ("PriorityType", "priority/multifactor"),
    ("PriorityWeightAge", "1000"),
    ("PriorityWeightFairshare", "10000"),
    ("PriorityWeightJobSize", "1000"),
    ("PriorityWeightQOS", "10000"),
    ("PriorityMaxAge", "1-0"),
    ("PriorityDecayHalfLife", "7-0"),
    // Minutes: fair-share usage is brought up to date every minute.
    ("PriorityCalcPeriod", "1"),
    ("PreemptType", "preempt/qos"),
    ("PreemptMode", "REQUEUE"),
    ("GresTypes", "gpu"),
    ("MpiDefault", "none"),
    ("SwitchType", "switch/none"),
    ("ReturnToService", "2"),
    ("SlurmdTimeout", "60"),
    ("MinJobAge", "600"),
    ("KillWait", "5"),
    ("InactiveLimit", "0"),
    // No mail server on the site: mail requests go nowhere, silently.
    ("MailProg", "/bin/true"),
];

impl SiteSpec {
    /// A site named `name` with `nodes` compute hosts of `cores` cores,
    /// 2,000 MB and, the last two, 2 GPUs; Strategy=mtct-backfill.
    pub fn new(name: &str, nodes: usize, cores: u32) -> SiteSpec {
        SiteSpec {
            name: name.to_string(),
            nodes,
            cores,
            memory_mb: 2000,
            gpus: 2,
            slurm: HOST_RELEASE.to_string(),
            ours: true,
            conf: SITE_CONF.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect(),
            malleable: vec![("Strategy".into(), "mtct-backfill".into()), ("SchedulerTick".into(), "5".into())],
            compute_cpu_shares: None,
        }
    }

    /// The compute hosts at an eighth of the other hosts' CPU weight: the
    /// controller's daemons (slurmctld, slurmdbd, MariaDB) get a CPU as
    /// soon as they want one, as on a site whose controller has a host of
    /// its own. Every host shares this machine's cores otherwise, and
    /// slurmctld waits for a CPU the jobs' processes hold.
    pub fn controller_first(mut self) -> SiteSpec {
        self.compute_cpu_shares = Some(128);
        self
    }

    /// Set a slurm.conf key (replacing its value if set).
    pub fn set(mut self, key: &str, value: &str) -> SiteSpec {
        set_key(&mut self.conf, key, value);
        self
    }

    /// A slurm.conf key's value, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.conf.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
    }

    /// Set a malleable.conf key (`Strategy`, `SchedulerTick`, a strategy's own).
    pub fn malleable(mut self, key: &str, value: &str) -> SiteSpec {
        set_key(&mut self.malleable, key, value);
        self
    }

    /// Run Slurm `version` ("24.11"): a release of the table; an error
    /// naming it and the known ones otherwise.
    pub fn slurm(mut self, version: &str) -> Result<SiteSpec, String> {
        SlurmRelease::find(version).map_err(|e| format!("--slurm {version}: {e}"))?;
        self.slurm = version.to_string();
        Ok(self)
    }

    /// The site's release (checked by [`SiteSpec::slurm`]).
    pub fn release(&self) -> &'static SlurmRelease {
        SlurmRelease::find(&self.slurm).expect("SiteSpec::slurm takes only releases of the table")
    }

    /// Stock Slurm only: none of our plugins in the image or in the
    /// configs, sched/backfill as the scheduler with its default
    /// parameters, no job_submit plugin. A release whose plugins are not
    /// built yet can still be brought up and checked this way.
    pub fn stock(mut self) -> SiteSpec {
        self.ours = false;
        self.conf.retain(|(k, _)| {
            !k.eq_ignore_ascii_case("JobSubmitPlugins") && !k.eq_ignore_ascii_case("SchedulerParameters")
        });
        self.set("SchedulerType", "sched/backfill")
    }

    /// Whether the site runs slurmrestd (host `rest`, JWT auth): on the
    /// releases built from SchedMD's source, whose packaging ships it.
    pub fn rest(&self) -> bool {
        self.release().from_source()
    }

    /// Whether the site's Slurm lowers a running job's memory (26.05's
    /// Dynamic Memory Resizing, `scontrol update MinMemoryNode=`).
    pub fn memory_resizing(&self) -> bool {
        let (major, minor) = self.slurm.split_once('.').unwrap_or(("0", "0"));
        (major.parse::<u32>().unwrap_or(0), minor.parse::<u32>().unwrap_or(0)) >= (26, 5)
    }

    /// The cluster's name: the site's name without its non-alphanumerics,
    /// lower case (slurmdbd keeps cluster names in lower case).
    pub fn cluster_name(&self) -> String {
        let n: String = self.name.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
        if n.is_empty() {
            "site".into()
        } else {
            n
        }
    }

    /// The compute hosts' names, c1..cN.
    pub fn node_names(&self) -> Vec<String> {
        (1..=self.nodes).map(|i| format!("c{i}")).collect()
    }

    /// The GPUs host `i` (1-based) has: the last two hosts have `gpus`.
    pub fn gpus_of(&self, i: usize) -> u32 {
        if i + 2 > self.nodes {
            self.gpus
        } else {
            0
        }
    }

    /// Host `i`'s feature: the first half `fast`, the rest `slow`.
    pub fn feature_of(&self, i: usize) -> &'static str {
        if i <= self.nodes.div_ceil(2) {
            "fast"
        } else {
            "slow"
        }
    }

    pub(crate) fn conf_keys(&self) -> &[(String, String)] {
        &self.conf
    }

    pub(crate) fn malleable_keys(&self) -> &[(String, String)] {
        &self.malleable
    }
}

fn set_key(keys: &mut Vec<(String, String)>, key: &str, value: &str) {
    match keys.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
        Some(entry) => entry.1 = value.to_string(),
        None => keys.push((key.to_string(), value.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_two_hosts_have_gpus_and_the_first_half_is_fast() {
        let s = SiteSpec::new("malleable", 8, 2);
        let gpus: Vec<u32> = (1..=8).map(|i| s.gpus_of(i)).collect();
        assert_eq!(gpus, [0, 0, 0, 0, 0, 0, 2, 2]);
        let fast: Vec<&str> = (1..=8).map(|i| s.feature_of(i)).collect();
        assert_eq!(fast, ["fast", "fast", "fast", "fast", "slow", "slow", "slow", "slow"]);
        // Three hosts: two fast, the last two with GPUs.
        let s = SiteSpec::new("x", 3, 2);
        assert_eq!((1..=3).map(|i| s.gpus_of(i)).collect::<Vec<_>>(), [0, 2, 2]);
        assert_eq!((1..=3).map(|i| s.feature_of(i)).collect::<Vec<_>>(), ["fast", "fast", "slow"]);
    }

    #[test]
    fn keys_are_set_once_and_unknown_slurms_are_refused() {
        let s = SiteSpec::new("my-site", 2, 2).set("schedulertype", "sched/backfill").malleable("Strategy", "easy");
        assert_eq!(s.get("SchedulerType"), Some("sched/backfill"));
        assert_eq!(s.conf_keys().iter().filter(|(k, _)| k.eq_ignore_ascii_case("SchedulerType")).count(), 1);
        assert_eq!(s.malleable_keys()[0], ("Strategy".to_string(), "easy".to_string()));
        assert_eq!(s.cluster_name(), "mysite");
        assert_eq!(SiteSpec::new("x", 2, 2).slurm("24.11").unwrap().slurm, "24.11");
        assert_eq!(
            SiteSpec::new("x", 2, 2).slurm("26.05").unwrap().release().lib_dir,
            "/usr/lib/x86_64-linux-gnu/slurm"
        );
        let e = SiteSpec::new("x", 2, 2).slurm("23.02").unwrap_err();
        assert!(e.contains("unknown release; expected one of 22.05, 24.11, 25.11, 26.05"), "{e}");
        assert_eq!(slurm_versions(), ["22.05", "24.11", "25.11", "26.05"]);
        let stock = SiteSpec::new("x", 2, 2).stock();
        assert_eq!((stock.ours, stock.get("SchedulerType")), (false, Some("sched/backfill")));
        assert_eq!((stock.get("JobSubmitPlugins"), stock.get("SchedulerParameters")), (None, None));
    }
}
