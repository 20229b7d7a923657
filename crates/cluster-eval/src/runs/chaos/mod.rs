//! `cargo xtask chaos`: a stream of jobs on a compose site while faults are
//! injected at random times from a seeded schedule, then every invariant
//! checked (issue 57). Only the schedule is here yet.

pub mod schedule;
