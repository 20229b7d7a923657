//! The pieces several strategies are built from and none owns: the queue in
//! the order it is served, the free nodes handed out in a pass, when nodes
//! come back and the head job's reservation, the plan of free nodes over
//! time that conservative books on, EASY's backfilling, the
//! order and arithmetic of resizing running malleable jobs, and why waiting
//! jobs wait. Blocks import the model and each other, never a strategy.

pub mod adapt;
pub mod backfill;
pub mod booking;
pub mod mates;
pub mod node_plan;
pub mod pool;
pub mod preemption;
pub mod queue;
pub mod reservation;
pub mod returns;
pub mod waiting;
