//! The safe layer over `slurm-sys`: the only crate besides the bindings that
//! may use `unsafe`. Its rooms follow the daemons:
//! - [`common`]: what every plugin kind needs in any daemon: C strings,
//!   Slurm's log as a `log` backend, the panic guard every entry point runs
//!   in, the plugin header every export macro builds on, dlopen for the
//!   symbol check, and (in the daemons) bitstrings;
//! - [`ctld`] (feature `ctld`): slurmctld's internals, resolved at run time,
//!   behind lock guards whose type says which locks they hold, read-only job
//!   and node views, starting a job, and `sched_plugin!`;
//! - [`spank`] (feature `spank`): SPANK plugins, `spank_plugin!`;
//! - [`client`] (feature `client`): Slurm's client API for commands and
//!   applications (read a job, set its comment, submit);
//! - [`stepd`] (feature `stepd`): slurmstepd (and slurmd) for a task
//!   plugin: a view of the step record, the node's other steps and their
//!   processes through the stepd API, CPU affinity, and `task_plugin!`.
//!
//! `docs/SAFETY.md` says which thread runs what, which locks are held, and
//! who frees what, in each daemon.

// The workspace denies unsafe code; this crate is where it lives.
#![allow(unsafe_code)]

#[cfg(feature = "client")]
pub mod client;
pub mod common;
#[cfg(feature = "ctld")]
pub mod ctld;
#[cfg(feature = "spank")]
pub mod spank;
#[cfg(feature = "stepd")]
pub mod stepd;

pub use common::cstr::strerror;

/// `SLURM_SUCCESS` / `SLURM_ERROR` as the C entry points return them.
pub const SLURM_SUCCESS: i32 = slurm_sys::SLURM_SUCCESS as i32;
pub const SLURM_ERROR: i32 = slurm_sys::SLURM_ERROR;

/// The Slurm version the bindings were generated from; `plugin_version` of
/// every plugin must equal it (src/common/plugin.c compares all 24 bits).
pub const SLURM_VERSION_NUMBER: u32 = slurm_sys::SLURM_VERSION_NUMBER;

/// That version as a site names its release: "22.05", "24.11", "25.11", "26.05".
#[cfg(not(slurm_since_24_11))]
pub const SLURM_RELEASE: &str = "22.05";
#[cfg(all(slurm_since_24_11, not(slurm_since_25_11)))]
pub const SLURM_RELEASE: &str = "24.11";
#[cfg(all(slurm_since_25_11, not(slurm_since_26_05)))]
pub const SLURM_RELEASE: &str = "25.11";
#[cfg(slurm_since_26_05)]
pub const SLURM_RELEASE: &str = "26.05";
