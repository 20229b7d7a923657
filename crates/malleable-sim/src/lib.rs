//! A deterministic discrete-event simulator for sched/malleable's policy: it
//! runs malleable-core's strategies, the very code slurmctld's plugin runs, on
//! Chadha et al. 2020's ESP mix, on SWF traces or on the Lublin-Feitelson model
//! ([`workloads::lublin`]), and reports the paper's metrics.
//!
//! # Application model (`--app-model fitted`, the default)
//! A malleable job that takes `t_s` seconds on its start size `s` takes
//!
//! ```text
//! T(n) = t1 * (sigma + (1 - sigma)/n + kappa * log2 n),   t1 = t_s / (that bracket at n = s)
//! MTCT(n) = kappa * log2 n / (sigma + (1 - sigma)/n)
//! ```
//!
//! on `n` nodes: computation shrinks with `n`, MPI time grows as with tree
//! collectives, so the MTCT ratio rises with `n` as in Chadha et al. 2020's Fig. 2.
//! `sigma` and `kappa` are a least-squares fit (relative error) to the MPDATA
//! iteration times of Iserte et al. 2025's Table 2, shared by the three problem sizes,
//! each size with its own `t1`: sigma = 0.0, kappa = 0.017. Fit quality
//! (asserted in `app_model`'s tests): R^2 0.87 / 0.94 / 0.62 and largest
//! relative error 30% / 17% / 36% for Small / Medium / Large; Large's
//! super-linear step from 4 to 5 nodes is what no smooth model follows.
//! `--app-model linear` is ideal scaling, T(n) = t_s * s / n, MTCT 0.
//!
//! Progress is work-conserving: a job's remaining work fraction carries over
//! a resize and advances at rate 1/T(n). An adaptation stops progress for its
//! cost, linear in node count: 3.1 s expanding to 32 nodes, 1.8 s shrinking
//! from 32 (Chadha et al. 2020, Fig. 5). Rigid jobs take their static (or traced) time.
//!
//! # Validation against a real Slurm
//! `cargo xtask fidelity` and `cargo xtask esp` run a workload on a local
//! Slurm cluster with sched/malleable and here, with this cluster's measured
//! costs (`ResizeCost::MEASURED`, start delays measured per run,
//! `tick_while_running`), and print both side by side; docs/evaluation.md
//! states the figures and how to rerun them.
//!
//! # Scheduling passes
//! After every instant with a submission, a completion, the end of an
//! adaptation (which the plugin sees as a job state change) or a tick (every
//! 60 s while jobs wait), as sched/malleable's agent does.
//!
//! # Commands
//! `malleable-sim run | compare | sweep | bench | bench-ipsched`: [`report::sweep`]
//! repeats seed 002's Fig. 3 (fractions x seeds x strategies, CSVs, [`report::plot`]'s
//! PNGs); [`bench`](mod@bench) times the simulator and single scheduling passes at scale;
//! [`bench::ipsched`] times IPSCHED's program per window. `--priority` ranks
//! waiting jobs FCFS or by Slurm's multifactor priority ([`model::priority`]).
//!
//! # Layout
//! [`workloads`] makes and reads workloads, [`model`] holds what is assumed of
//! applications, power and priority, [`engine`] runs the events and passes,
//! [`report`] turns runs into metrics, CSVs and plots, [`bench`](mod@bench) times things;
//! the command line is the binary's own `cli` module.

pub mod bench;
pub mod engine;
pub mod model;
pub mod report;
pub mod workloads;

pub use engine::{simulate, simulate_recorded, simulate_with_progress, RecordedPass, SimOptions, SimResult};
pub use report::metrics::{summarize, Summary};
