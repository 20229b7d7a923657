//! How a run is simulated, apart from the workload and the strategy: the
//! application model, ticks, resize costs, launch and pass delays, sharing
//! and priority (the CLI's options, and the xtasks' measured set-ups).

use malleable_core::blocks::mates::RuntimeModel;

use crate::model::app_model::{AppModel, ResizeCost};
use crate::model::priority::Priority;

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SimOptions {
    pub app_model: AppModel,
    /// Seconds between scheduler ticks while jobs wait (slurm's SchedulerTick);
    /// 0 turns ticks off.
    pub tick: f64,
    /// What an expand and a shrink cost: by default this project's, measured
    /// on a real Slurm (`ResizeCost::MEASURED`); `ResizeCost::PAPER` for
    /// Chadha et al. 2020's set-up.
    pub resize_cost: ResizeCost,
    /// Seconds from a job's start until its work begins (a real Slurm's
    /// launch of the batch script and of the application's steps); the job
    /// holds its nodes meanwhile.
    pub start_delay: f64,
    /// The same for a malleable job, whose launcher starts a step per node
    /// and waits for the workers to meet before they compute.
    pub malleable_start_delay: f64,
    /// Tick while any job runs, not only while jobs wait: sched/malleable's
    /// agent passes at least every SchedulerTick whatever the queue, so a
    /// malleable job can grow into nodes freed with nothing waiting. Off
    /// by default, as the paper's simulations (and our golden figures) run.
    pub tick_while_running: bool,
    /// Seconds from an event (a submission, a job's end, a tick) to the pass
    /// it calls for: slurmctld wakes the plugin's agent, which waits for the
    /// job lock. Events meanwhile join that pass. 0, the paper's model, passes
    /// at the event's instant.
    pub pass_delay: f64,
    /// How a job sharing cores progresses (SD-Policy's Eq. 5 or 6): `Ideal`,
    /// at the pace of all the cores it has; `Worst`, of its least-served node.
    pub sharing_model: RuntimeModel,
    /// How waiting jobs are ranked, set before each pass: FCFS (Slurm's
    /// basic priority) or Slurm's multifactor with age and size.
    pub priority: Priority,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            app_model: AppModel::fitted(),
            tick: 60.0,
            resize_cost: ResizeCost::MEASURED,
            start_delay: 0.0,
            malleable_start_delay: 0.0,
            tick_while_running: false,
            pass_delay: 0.0,
            sharing_model: RuntimeModel::Ideal,
            priority: Priority::Fcfs,
        }
    }
}
