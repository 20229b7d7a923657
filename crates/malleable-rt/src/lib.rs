//! malleable-rt: what a malleable application links to learn of and carry
//! out its job's resizes, from Rust ([`Runtime`]) or from C (`c_abi`, header
//! `include/malleable_rt.h`), with or without MPI.
//!
//! mall-run starts the application's workers, one a node, with srun in the
//! job's batch step, and runs the hub they connect to: the hub answers
//! their probes with what the scheduler decided (it reads the job's status
//! in slurmctld), starts workers on the nodes an expand adds, moves the
//! data at each adaptation, passes messages and reductions between
//! workers, and commits the adaptation to the scheduler once the workers
//! have (see `worker.rs` for the calls, `wire.rs` for the frames).
//!
//! The frames, worker to hub (each answered by one frame, or ERROR with the
//! reason as payload):
//!
//! | request | answer | collective over |
//! |---|---|---|
//! | `HELLO token= worker=` | `WELCOME rank= size= joining=` | - |
//! | `PROBE` | `NONE`, `EXPAND resize= nodes= size=`, `SHRINK ...` | the workers |
//! | `BEGIN resize=` | `BEGUN rank= size= leaving=` | the workers and the joining ones |
//! | `REDIST item=` + items | `DATA` + this worker's items | the workers and the joining ones |
//! | `COMMIT` | `COMMITTED rank= size=` | - |
//! | `REPORT iterations= compute_s= comm_s= [watts=]` | `OK` | - |
//! | `SHOULD` | `ANSWER yes=0/1` | - |
//! | `ALLREDUCE n=` + f64s | `RESULT` + their sums | the workers |
//! | `BARRIER` | `OK` | the workers |
//! | `SEND to=` + bytes | `OK` | - |
//! | `RECV from=` | `MSG` + bytes | - |
//! | `BYE` | `OK` | - |

#![deny(unsafe_code)]

// The one home of `unsafe` in this crate (xtask's architecture check
// allows it in this file only); see docs/SAFETY.md.
#[allow(unsafe_code)]
pub mod c_abi;
pub mod cores;
pub mod power;
pub mod wire;
pub mod worker;

pub use cores::{cores, CoreWatch};
pub use worker::{Adaptation, Begun, Error, Result, Runtime};
