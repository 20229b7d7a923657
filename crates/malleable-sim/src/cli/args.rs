//! The options of `run`, `compare` and `sweep`, those they share in one
//! flattened group ([`Shared`]), and the parsers that check each value as
//! clap reads it (so a bad value is refused before anything runs).

use std::path::PathBuf;

use clap::Args;
use malleable_core::blocks::mates::RuntimeModel;
use malleable_core::strategies::{names, split_list};
use malleable_core::StrategyChoice;
use malleable_sim::model::app_model::{AppModel, ResizeCost};
use malleable_sim::model::priority::Priority;
use malleable_sim::report::sweep;
use malleable_sim::SimOptions;

/// What `run`, `compare` and `sweep` all take, flattened into each: the
/// machine, the arrivals and the model a simulation runs with (one place
/// for their spelling, defaults and checks).
#[derive(Args, Clone)]
pub(super) struct Shared {
    /// Machine size (default: 32 for esp, the trace header for swf, 5000 for synthetic;
    /// lublin's spec gives it).
    #[arg(long)]
    pub(super) nodes: Option<usize>,
    /// Multiply SWF and lublin submit times by this (e.g. 0.7 to compress arrivals).
    #[arg(long, default_value_t = 1.0, value_parser = parse_positive)]
    pub(super) arrival_scale: f64,
    /// fitted|linear
    #[arg(long, default_value = "fitted", value_parser = AppModel::parse)]
    pub(super) app_model: AppModel,
    /// Seconds between scheduler ticks while jobs wait (0: none).
    #[arg(long, default_value_t = 60.0)]
    pub(super) tick: f64,
    /// Resize cost: `measured` (this project's, on a local Slurm: `cargo xtask
    /// bench-resize`), `paper` (Chadha et al. 2020's Fig. 5, to reproduce its figures),
    /// `baseline` or `merge` (Iserte et al. 2025's Table 5, for mpdata),
    /// `restart-openmpi` or `restart-mpich` (an MPI application restarted at each
    /// resize: `cargo xtask bench-resize --mpi restart`) or A+Bn/C+Dn, expand/shrink
    /// seconds as fixed plus per node.
    #[arg(long, default_value = "measured", value_parser = ResizeCost::parse)]
    pub(super) resize_cost: ResizeCost,
}

impl Shared {
    /// The simulation's options these set, the rest at their defaults (as
    /// `sweep` runs: it has no launch or pass delays).
    pub(super) fn options(&self) -> SimOptions {
        SimOptions {
            app_model: self.app_model,
            tick: self.tick,
            resize_cost: self.resize_cost,
            ..SimOptions::default()
        }
    }
}

#[derive(Args)]
pub(super) struct SweepArgs {
    /// esp | swf:PATH | synthetic:JOBS | lublin:JOBS:NODES:CORES[:maxprocs=N][:rate=F] (the
    /// Lublin-Feitelson model on NODES nodes of CORES processors, jobs asking whole nodes;
    /// sizes drawn as for N processors, jobs arriving F times as often)
    #[arg(long, default_value = "esp")]
    pub(super) workload: String,
    #[command(flatten)]
    pub(super) shared: Shared,
    /// Comma-separated NAME or NAME[Key=value,...]; `malleable-sim strategies` lists them
    #[arg(long, value_parser = parse_strategies, default_value = "easy,conservative,fpsma,mtct,mtct-backfill")]
    pub(super) strategies: Strategies,
    /// Seeds: a list 1,2,3 or an inclusive range 1..5 (seeds 1 to 5).
    // Spelled std::vec::Vec so that clap takes the parser's whole list as
    // one value rather than treating the option as repeatable.
    #[arg(long, default_value = "1..5", value_parser = sweep::parse_seeds)]
    pub(super) seeds: std::vec::Vec<u64>,
    /// Malleable fractions, comma-separated [default: 0.1,0.2,..,1.0]
    #[arg(long, value_delimiter = ',', value_parser = parse_fraction)]
    pub(super) fractions: Vec<f64>,
    /// Directory for the CSVs and PNGs.
    #[arg(long, default_value = "sweep-out")]
    pub(super) out: PathBuf,
}

/// The options of `run` and `compare`: the workload, its malleable share and
/// seed, and how the simulated site launches, passes, shares and ranks.
#[derive(Args, Clone)]
pub(super) struct Common {
    /// esp | mpdata (Iserte et al. 2025's 30 MPDATA jobs on 31 nodes) | swf:PATH |
    /// synthetic:JOBS | lublin:JOBS:NODES:CORES[:maxprocs=N][:rate=F] (the Lublin-Feitelson
    /// model on NODES nodes of CORES processors, jobs asking whole nodes; sizes drawn as for
    /// N processors, jobs arriving F times as often) | power-corridor (Chadha et al. 2020's
    /// Table II scenario) | cpu-gpu-esp (Soner and Ozturan's 458 jobs on 1,024 nodes of 8
    /// cores and 2 GPUs, asking for cores) | cpu-gpu-esp-ragged (their Table 7 sizes)
    #[arg(long)]
    pub(super) workload: String,
    #[command(flatten)]
    pub(super) shared: Shared,
    /// Fraction of jobs that are malleable, 0.0 to 1.0.
    #[arg(long, default_value_t = 0.0, value_parser = parse_fraction)]
    pub(super) malleable_fraction: f64,
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
    /// Run the workload this many times faster, with time limits rounded up
    /// to whole minutes as a real Slurm takes them: what `cargo xtask esp`
    /// submits to the local cluster (1: as it is, limits unrounded).
    #[arg(long, default_value_t = 1.0)]
    pub(super) time_scale: f64,
    /// Seconds from a job's start until its work begins (a real Slurm's launch).
    #[arg(long, default_value_t = 0.0, value_parser = parse_non_negative)]
    pub(super) start_delay: f64,
    /// The same for malleable jobs (their launcher starts a step per node).
    #[arg(long, default_value_t = 0.0, value_parser = parse_non_negative)]
    pub(super) malleable_start_delay: f64,
    /// Tick while jobs run too, as sched/malleable does (not only while jobs wait).
    #[arg(long)]
    pub(super) tick_while_running: bool,
    /// Seconds from an event (submission, end, tick) to the pass it calls for;
    /// events meanwhile join that pass (`cargo xtask esp` prints this cluster's).
    #[arg(long, default_value_t = 0.0, value_parser = parse_non_negative)]
    pub(super) pass_delay: f64,
    /// How a job sharing cores (sd-policy) progresses: `ideal`, at the pace
    /// of all the cores it has (the paper's Eq. 5), or `worst`, of its
    /// least-served node (Eq. 6).
    #[arg(long, default_value = "ideal", value_parser = parse_sharing_model)]
    pub(super) sharing_model: RuntimeModel,
    /// How waiting jobs are ranked: `fcfs` (Slurm's basic priority) or
    /// `multifactor` (Slurm's, age and job size weighed equally, +1 a minute
    /// waited, PriorityMaxAge 7 days; `multifactor:MINUTES` for another)
    #[arg(long, default_value = "fcfs", value_parser = Priority::parse)]
    pub(super) priority: Priority,
}

impl Common {
    pub(super) fn options(&self) -> SimOptions {
        SimOptions {
            start_delay: self.start_delay,
            malleable_start_delay: self.malleable_start_delay,
            tick_while_running: self.tick_while_running,
            pass_delay: self.pass_delay,
            sharing_model: self.sharing_model,
            priority: self.priority,
            ..self.shared.options()
        }
    }
}

pub(super) fn parse_sharing_model(v: &str) -> Result<RuntimeModel, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "ideal" => Ok(RuntimeModel::Ideal),
        "worst" => Ok(RuntimeModel::Worst),
        _ => Err(format!("'{v}' is not allowed: 'ideal' (Eq. 5) or 'worst' (Eq. 6)")),
    }
}

pub(super) fn parse_non_negative(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if f >= 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!("'{v}' is not allowed: a number of seconds, 0 or more")),
    }
}

/// One column of `compare`: a strategy, on the workload as it is or on its
/// static flavor.
#[derive(Clone, Debug)]
pub(super) struct ComparedRun {
    pub(super) choice: StrategyChoice,
    pub(super) static_flavor: bool,
}

impl ComparedRun {
    pub(super) fn label(&self) -> String {
        if self.static_flavor {
            "static".into()
        } else {
            self.choice.to_string()
        }
    }
}

/// `compare`'s `--strategies`, in the order given.
#[derive(Clone, Debug)]
pub(super) struct Compared(pub(super) Vec<ComparedRun>);

pub(super) fn parse_compared(v: &str) -> Result<Compared, String> {
    let mut runs = Vec::new();
    for text in split_list(v) {
        runs.push(if text.eq_ignore_ascii_case("static") {
            ComparedRun { choice: StrategyChoice::named("conservative")?, static_flavor: true }
        } else {
            let choice = StrategyChoice::parse(text).map_err(|e| format!("{e}, static"))?;
            ComparedRun { choice, static_flavor: false }
        });
    }
    if runs.is_empty() {
        return Err(format!("give at least one of {}, static", names()));
    }
    Ok(Compared(runs))
}

/// The strategies of `--strategies`, in the order given.
#[derive(Clone, Debug)]
pub(super) struct Strategies(pub(super) Vec<StrategyChoice>);

pub(super) fn parse_strategies(v: &str) -> Result<Strategies, String> {
    let list: Vec<StrategyChoice> = split_list(v).into_iter().map(StrategyChoice::parse).collect::<Result<_, _>>()?;
    if list.is_empty() {
        return Err(format!("give at least one of {}", names()));
    }
    Ok(Strategies(list))
}

pub(super) fn parse_fraction(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("'{v}' is not a fraction, allowed: a number from 0.0 to 1.0")),
    }
}

pub(super) fn parse_positive(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!("'{v}' is not allowed: a number above 0")),
    }
}
