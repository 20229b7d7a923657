//! What the simulator assumes of the machine and its jobs, apart from the
//! engine's bookkeeping: applications' run times and resize costs, the power
//! meter, and how waiting jobs are ranked.

pub mod app_model;
pub mod power_meter;
pub mod priority;
