//! Everything that makes or reads a workload: the job and workload types with
//! the ESP mix, SWF traces and the synthetic load (`workload`), and the
//! papers' own workloads, each in its file.

pub mod cpu_gpu_esp;
pub mod lublin;
pub mod mpdata;
pub mod power_scenario;
pub mod workload;

pub use workload::{JobSpec, PowerSetup, Workload};
