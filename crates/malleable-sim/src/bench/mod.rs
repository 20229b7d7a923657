//! Wall-clock benches behind `malleable-sim bench` and `bench-ipsched`: the
//! simulator and single passes at scale (`pass`; issue 35's 100,000 jobs in
//! `scale`), Equation 1's LP (`lp`) and IPSCHED's program (`ipsched`).
//! Figures to read, not tests.

pub mod ipsched;
pub mod lp;
mod pass;
mod scale;

pub use pass::{default_workloads_dir, nasa_trace, pass_snapshot, time_pass, NASA_TRACE};
pub use pass::{time_pass_spread, PassTimes};
pub use scale::scale_snapshot;
