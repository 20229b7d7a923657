//! Wall-clock benches behind `malleable-sim bench` and `bench-ipsched`: the
//! simulator and single passes at scale (`pass`), Equation 1's LP (`lp`) and
//! IPSCHED's program (`ipsched`). Figures to read, not tests.

pub mod ipsched;
pub mod lp;
mod pass;

pub use pass::{default_workloads_dir, nasa_trace, pass_snapshot, time_pass, NASA_TRACE};
