//! `--workload`: the spelled workloads (esp, mpdata, swf:PATH, synthetic:JOBS,
//! lublin:..., power-corridor, cpu-gpu-esp[-ragged]) built from the options,
//! with the machine size each allows.

use malleable_sim::workloads::lublin::{self, lublin};
use malleable_sim::workloads::mpdata::{mpdata, MPDATA_JOBS, MPDATA_NODES};
use malleable_sim::workloads::power_scenario::{self, power_corridor};
use malleable_sim::workloads::workload::{esp, for_slurm, swf, synthetic};
use malleable_sim::workloads::{cpu_gpu_esp, Workload};

use super::args::Common;

pub(super) fn load(c: &Common) -> Result<Workload, String> {
    let w = load_workload(&c.workload, c.shared.nodes, c.malleable_fraction, c.seed, c.shared.arrival_scale, true)?;
    if c.time_scale == 1.0 {
        return Ok(w);
    }
    for_slurm(&w, c.time_scale).map_err(|e| format!("--time-scale: {e}"))
}

/// Offered load of `synthetic:JOBS` workloads (and of bench's).
pub(super) const SYNTHETIC_LOAD: f64 = 0.85;

pub(super) fn load_workload(
    workload: &str,
    nodes: Option<usize>,
    fraction: f64,
    seed: u64,
    arrival_scale: f64,
    report_skipped: bool,
) -> Result<Workload, String> {
    if workload == "esp" {
        Ok(esp(nodes.unwrap_or(32), fraction, seed))
    } else if workload == "cpu-gpu-esp" || workload == "cpu-gpu-esp-ragged" {
        match nodes {
            Some(n) if n != cpu_gpu_esp::NODES => Err(format!(
                "--nodes {n} not allowed with --workload {workload}: the paper's machine has {} nodes",
                cpu_gpu_esp::NODES
            )),
            _ => Ok(cpu_gpu_esp::cpu_gpu_esp(seed, workload.ends_with("ragged"))),
        }
    } else if workload == "mpdata" {
        // Every job is malleable in the dynamic flavor; the fraction does not apply.
        Ok(mpdata(MPDATA_JOBS, nodes.unwrap_or(MPDATA_NODES), seed))
    } else if workload == "power-corridor" {
        // Every job is malleable in this scenario; the fraction does not apply.
        match nodes {
            Some(n) if n != power_scenario::NODES => Err(format!(
                "--nodes {n} not allowed with power-corridor: the scenario has {} nodes",
                power_scenario::NODES
            )),
            _ => Ok(power_corridor(seed)),
        }
    } else if let Some(path) = workload.strip_prefix("swf:") {
        let (w, skipped) = swf(path, nodes, arrival_scale, fraction, seed)?;
        if report_skipped && skipped.no_size_or_runtime + skipped.larger_than_machine > 0 {
            eprintln!("{}: skipped {:?}", w.name, skipped);
        }
        Ok(w)
    } else if let Some(jobs) = workload.strip_prefix("synthetic:") {
        let jobs: usize =
            jobs.parse().ok().filter(|&j| j > 0).ok_or_else(|| {
                format!("--workload '{workload}' not allowed: synthetic:JOBS takes a job count above 0")
            })?;
        Ok(synthetic(jobs, nodes.unwrap_or(5_000), SYNTHETIC_LOAD, fraction, seed))
    } else if workload.starts_with("lublin:") {
        let lublin_workload = lublin::parse(workload)?;
        let spec = lublin_workload.spec;
        match nodes {
            Some(n) if n != spec.nodes as usize => Err(format!(
                "--nodes {n} not allowed with --workload '{workload}': its NODES, {}, is the machine",
                spec.nodes
            )),
            _ => Ok(lublin(lublin_workload, fraction, seed, arrival_scale)),
        }
    } else {
        Err(format!(
            "--workload '{workload}' not allowed: esp | mpdata | swf:PATH | synthetic:JOBS | \
             lublin:JOBS:NODES:CORES[:maxprocs=N][:rate=F] | power-corridor | cpu-gpu-esp | cpu-gpu-esp-ragged"
        ))
    }
}
