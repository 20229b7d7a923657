//! The scheduling policy of sched/malleable, as a plain library.
//!
//! slurmctld's plugin and the simulator both feed a [`Snapshot`] of the cluster
//! to a [`Strategy`] and apply the decisions of the [`PassReport`] it returns,
//! so the choices a site sees in production are the ones the simulator
//! reports. The rooms: [`strategies`] (one file per strategy, and the
//! registry), [`blocks`] (the pieces several strategies share), [`lp`] (the
//! integer-programming scaffolding), [`params`] (typed parameter declarations and tables), and
//! [`strategy`] (the trait and the pass report). Nothing here knows about
//! Slurm, and nothing here may be `unsafe`.
//!
//! [`Snapshot`]: malleable_model::Snapshot
#![forbid(unsafe_code)]

pub mod blocks;
pub mod lp;
pub mod params;
pub mod pass;
pub mod strategies;
pub mod strategy;
#[cfg(test)]
mod test_support;

pub use blocks::waiting::{WaitReason, Waiting};
pub use params::{AnyParam, Flag, Param, Params, Setting, Span, Value, Whole, Within, Words};
pub use pass::{pass, PassInput, PassOutcome, StrategyPass};
pub use strategies::{StrategyChoice, REGISTRY};
pub use strategy::{Measure, MeasureKind, MeasureSpec, Note, PassReport, Stateless, Strategy, StrategyInfo};
