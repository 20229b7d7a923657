//! mall-run: a malleable application's launcher and hub, run from the
//! job's batch script as `mall-run -- APP ARGS`. It starts one worker a
//! node with srun, serves the workers' runtime (malleable-rt), and carries
//! out the resizes the scheduler decides: workers start on the nodes an
//! expand adds and leave the nodes a shrink takes, the data moves, and the
//! adaptation is committed to the scheduler.

pub mod channel;
pub mod hub;
pub mod run;
pub mod steps;
