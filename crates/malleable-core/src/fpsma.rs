//! FPSMA, "Favour Previously Started Malleable applications" (seed 002's
//! baseline, its ref. [30]): Algorithm 1 with jobs shrunk latest-started first
//! and expanded earliest-started first instead of by MTCT ratio.

use crate::model::{Decision, Snapshot};
use crate::mtct::{perf_aware_schedule, AdaptOrder};
use crate::strategy::Strategy;

pub struct Fpsma;

impl Strategy for Fpsma {
    fn name(&self) -> &'static str {
        "fpsma"
    }
    fn schedule(&mut self, s: &Snapshot) -> Vec<Decision> {
        perf_aware_schedule(s, AdaptOrder::StartTime)
    }
}
