//! slurmctld: its internals resolved at run time ([`Slurmctld`]), its locks
//! as guards whose type says what they hold ([`LockGuard`]), read-only views
//! of job and node records, starting a job, and the sched plugin's exports.

pub mod accounting;
pub mod alloc;
pub mod changes;
pub mod extern_step;
pub mod fairshare;
pub mod features;
pub mod first_record;
pub mod gres;
pub mod job;
pub mod job_submit;
pub mod locks;
pub mod merge_cores;
mod merge_licenses;
pub mod node;
pub mod preempt;
pub mod resv;
pub mod sched_plugin;
pub mod select;
mod select_ops;
pub mod slurmdbd;
pub mod slurmdbd_ping;
pub mod symbols;

pub use alloc::AllocError;
pub use changes::{Stamps, Updates};
pub use job::{JobPartition, JobState, JobView, ResizeHold, ShownWait};
pub use locks::{LockGuard, LockSet, Reading, Scheduling, Wait, WaitCode};
pub use node::NodeView;
pub use preempt::Preempting;
pub use resv::Reserved;
pub use sched_plugin::{PluginContext, SchedPlugin};
pub use symbols::{Slurmctld, UpdateCounters};
