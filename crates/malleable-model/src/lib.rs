//! The words every part of sched/malleable shares: the cluster a scheduling
//! pass sees ([`Snapshot`]), what a strategy may decide ([`Decision`]) and
//! whether a decision can be carried out ([`validate`]), malleable jobs'
//! node constraints and power, and the two contracts whose ends live in
//! different programs: the sbatch options as they travel in a job's
//! environment ([`submit_options`]) and the messages between an
//! application's runtime and the plugin ([`runtime_msg`]); and the lines the
//! plugin writes into slurmctld's log that programs read back ([`log_lines`]),
//! Slurm's own such lines ([`slurm_lines`]) and their times ([`stamped`]).
//!
//! No solver, no Slurm, no `unsafe`: a SPANK plugin loaded by sbatch and an
//! application linking the runtime depend on this crate alone.
#![forbid(unsafe_code)]

mod constraint;
mod decision;
mod ids;
mod job;
pub mod layout;
pub mod log_lines;
mod node;
mod placement;
mod power;
pub mod runtime_msg;
mod sharing;
pub mod slurm_lines;
mod snapshot;
pub mod stamped;
pub mod submit_options;
mod validate;

pub use constraint::{MalleableSpec, NodeConstraint};
pub use decision::Decision;
pub use ids::{JobId, NodeIndex, Time};
pub use job::{tier_of, CoreRequest, PendingJob, RunningJob};
pub use node::Node;
pub use placement::Placement;
pub use power::{Corridor, CorridorSchedule, JobPower, PowerState, Watts};
pub use runtime_msg::SharedCores;
pub use sharing::{CoreSharing, MateShare};
pub use snapshot::Snapshot;
pub use validate::{rejections, validate, Rejection};
