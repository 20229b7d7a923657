//! The scheduling policy of sched/malleable, as a plain library.
//!
//! slurmctld's plugin and the simulator both feed a [`Snapshot`] of the cluster
//! to a [`Strategy`] and apply the [`Decision`]s it returns, so the choices a
//! site sees in production are the ones the simulator reports. Nothing here
//! knows about Slurm, and nothing here may be `unsafe`.
#![forbid(unsafe_code)]

mod common;
pub mod conservative;
pub mod constraint;
pub mod easy;
pub mod fcfs;
pub mod fpsma;
pub mod model;
pub mod mtct;
pub mod mtct_backfill;
pub mod power;
pub mod power_lp;
pub mod power_model;
pub mod strategy;

pub use constraint::{MalleableSpec, NodeConstraint};
pub use easy::{easy, Reservation};
pub use fcfs::fcfs;
pub use model::{Decision, JobId, NodeIndex, PendingJob, RunningJob, Snapshot, Time};
pub use power_model::{Corridor, CorridorSchedule, JobPower, PowerState, Watts};
pub use strategy::{Strategy, StrategyKind};
