//! `cargo xtask chaos`: a stream of jobs on a compose site while faults are
//! injected at random times from a seeded schedule, then every invariant
//! checked (issue 57; docs/faults.md): the schedule, the stream, the
//! faults, the invariants read from Slurm, the report, and the campaign
//! that plays them.

pub mod campaign;
pub mod faults;
pub mod invariants;
pub mod report;
pub mod schedule;
pub mod stream;

use std::time::Duration;

use rand::Rng;

/// The time to the next event of a Poisson stream of `mean` spacing (an
/// exponential draw), at least a second: faults and submissions both
/// arrive so.
fn poisson_gap(rng: &mut impl Rng, mean: Duration) -> Duration {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    Duration::from_secs_f64((-u.ln() * mean.as_secs_f64()).max(1.0))
}
