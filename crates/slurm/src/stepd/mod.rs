//! Plugins that run in slurmstepd (a task plugin such as task/drom; Slurm
//! loads task plugins in slurmd too, for its few `task_p_slurmd_*` hooks):
//! the step record as a read-only view, the stepd API that reaches the
//! node's other steps, CPU affinity, and the `task_plugin!` export macro.
//!
//! - [`step`]: [`StepId`] and [`StepView`], what a hook sees of its step;
//! - [`api`]: the node's steps ([`steps_here`]), where each is in its life
//!   ([`state_of`]) and its processes ([`pids_of`]), through slurmstepd's
//!   own configuration and Slurm's stepd API;
//! - [`affinity`]: [`CpuSet`], the calling thread's affinity, and setting
//!   one on every thread of a process;
//! - [`task_plugin`]: the [`TaskPlugin`] trait and
//!   [`task_plugin!`](crate::task_plugin).

pub mod affinity;
pub mod api;
pub mod step;
pub mod task_plugin;

pub use affinity::{is_kernel_thread, is_slurmstepd, set_process_affinity, CpuSet};
pub use api::{pids_of, state_of, steps_here, StepState};
pub use step::{StepId, StepView, TaskInfo};
pub use task_plugin::TaskPlugin;
