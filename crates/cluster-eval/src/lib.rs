//! The paper's evaluation on a real Slurm: a workload from the simulator is
//! replayed through a local cluster running sched/malleable, its jobs' life is
//! read back from slurmctld's log, and the result is summarized, charted and
//! held against the simulator's run of the same workload.

pub mod fidelity;
pub mod gantt;
pub mod records;
pub mod replay;
pub mod resize_latency;
pub mod runs;
pub mod throughput;
pub mod workloads;
