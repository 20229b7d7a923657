//! Whole Slurm clusters on this machine, as a library: the specification
//! ([`ClusterSpec`]: slurm.conf as keys, nodes with cores and GPUs,
//! partitions, extra files, accounting), leased ports so clusters never collide, the
//! running [`Cluster`] (its daemons stopped by pid on drop, their logs
//! printed when a test fails), job records as scontrol shows them, and
//! waiting on a condition with a deadline; and whole sites in docker-compose
//! ([`compose`]), for each Slurm release `provision` knows. `cargo xtask`
//! and the real-cluster tests both build on it.

pub mod accounting;
pub mod cluster;
pub mod compose;
pub mod hostlist;
pub mod jobs;
pub mod network;
pub mod plugins;
pub mod ports;
pub mod process;
pub mod spec;
pub mod usage;
pub mod wait;

pub use cluster::Cluster;
pub use provision::SlurmRelease;
pub use spec::{ClusterSpec, NodeShape, Partition};

pub type Result<T> = std::result::Result<T, String>;
