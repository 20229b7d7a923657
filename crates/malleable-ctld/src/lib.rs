//! The malleable controller inside slurmctld, shared by the plugins that run
//! it: malleable.conf (`config`), the agent thread that reads the cluster
//! into a snapshot (`snapshot`), runs the policy core's strategy and carries
//! its decisions out (`agent`), and the adaptations of running jobs
//! (`adaptation`), with
//! a probe of whether slurmdbd answers (`slurmdbd_probe`). sched/malleable runs it as slurmctld's scheduler;
//! select/natural runs it beside sched/backfill, answering only the jobs
//! that ask whether to reconfigure.

pub mod adaptation;
pub mod agent;
pub mod config;
pub mod feed;
pub mod job_options;
pub mod kept;
pub mod slurmdbd_probe;
pub mod snapshot;

/// The plugins' configuration file, beside slurm.conf.
pub const CONF_FILE: &str = "malleable.conf";
