//! `malleable-sim`: run one strategy on a workload, compare several side by
//! side (table with ratios to the first, and the JSON shape), sweep
//! the malleable fraction as in Chadha et al. 2020's Fig. 3, or time the simulator.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use malleable_core::blocks::mates::RuntimeModel;
use malleable_core::strategies::{names, split_list};
use malleable_core::{ParamKind, StrategyChoice, REGISTRY};
use malleable_sim::app_model::{AppModel, ResizeCost};
use malleable_sim::cpu_gpu_esp;
use malleable_sim::lublin::{self, lublin};
use malleable_sim::metrics::{jobs_csv, summarize, Summary};
use malleable_sim::mpdata::{mpdata, static_flavor, MPDATA_JOBS, MPDATA_NODES};
use malleable_sim::power_meter::PowerReport;
use malleable_sim::power_scenario::{self, power_corridor};
use malleable_sim::priority::Priority;
use malleable_sim::workload::{esp, swf, synthetic, Workload};
use malleable_sim::{bench, plot, plot_compare, plot_power, simulate_with_progress, sweep, SimOptions};

/// `print!` to stdout that ends the program quietly when the reader has
/// gone (`malleable-sim ... | head`) instead of panicking, and says why on
/// any other write error.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            stdout_failed(e);
        }
    }};
}

/// `println!` as [`out!`].
macro_rules! outln {
    () => { out!("\n") };
    ($($arg:tt)*) => {{
        out!($($arg)*);
        out!("\n");
    }};
}

fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("malleable-sim: writing to stdout: {e}");
    std::process::exit(2);
}

#[derive(Parser)]
#[command(name = "malleable-sim", about = "Simulate sched/malleable's strategies")]
struct Cli {
    /// No progress bars (they are drawn on stderr only when it is a terminal).
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

/// Workloads with at least this many jobs get a progress bar in run/compare.
const PROGRESS_MIN_JOBS: usize = 5_000;

#[derive(Subcommand)]
enum Command {
    /// Run one strategy.
    Run {
        #[command(flatten)]
        common: Common,
        /// NAME or NAME[Key=value,...]; `malleable-sim strategies` lists them
        #[arg(long, value_parser = StrategyChoice::parse)]
        strategy: StrategyChoice,
        /// Directory for summary.json and jobs.csv.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run several strategies on the same workload.
    Compare {
        #[command(flatten)]
        common: Common,
        /// Comma-separated NAME or NAME[Key=value,...]; `malleable-sim strategies` lists them.
        /// `static` is the workload's static flavor (malleable jobs rigid at their
        /// largest size, Iserte et al. 2025) under conservative backfill, Slurm's sched/backfill
        #[arg(long, value_parser = parse_compared)]
        strategies: Compared,
        /// Run each of these seeds (a list 1,2,3 or a range 1..5) instead of
        /// --seed, and print each figure's median over them
        #[arg(long, value_parser = sweep::parse_seeds)]
        seeds: Option<std::vec::Vec<u64>>,
        #[arg(long)]
        json: Option<PathBuf>,
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write a PNG of grouped bars (makespan, mean response, mean slowdown,
        /// mean wait), each column's figure over the first column's
        #[arg(long, value_name = "FILE.png")]
        plot: Option<PathBuf>,
    },
    /// Chadha et al. 2020's Fig. 3: every strategy at each fraction of malleable jobs
    /// and seed; writes sweep.csv, sweep-means.csv and PNG plots.
    Sweep(SweepArgs),
    /// List the strategies, their parameters and their figures.
    Strategies,
    /// Time the simulator (NASA trace, 200,000 synthetic jobs) and one
    /// scheduling pass of each strategy at 5,000 nodes and 10,000 waiting jobs.
    Bench {
        /// Folder with NASA-iPSC-1993-3.1-cln.swf.gz [default: <repo>/../shared/workloads]
        #[arg(long)]
        workloads_dir: Option<PathBuf>,
        /// Timed passes per strategy (the median is reported).
        #[arg(long, default_value_t = 11, value_parser = clap::value_parser!(u32).range(1..))]
        reps: u32,
    },
    /// Time IPSCHED's program at windows of 50, 100 and 200 jobs of the CPU-GPU
    /// ESP on its 1,024 nodes, by node classes and per node (the paper's form).
    BenchIpsched {
        /// Windows of each size solved by node classes.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
        windows: u32,
        /// Windows of each size solved per node (slow: 2M(1+N) variables).
        #[arg(long, default_value_t = 3)]
        exact_windows: u32,
        /// Wall-clock seconds the per-node form's search may take per window
        /// (its model's building is not bounded).
        #[arg(long, default_value_t = 60.0, value_parser = parse_positive)]
        exact_seconds: f64,
    },
}

#[derive(Args)]
struct SweepArgs {
    /// esp | swf:PATH | synthetic:JOBS | lublin:JOBS:NODES:CORES (the Lublin-Feitelson
    /// model on NODES nodes of CORES processors, jobs asking whole nodes)
    #[arg(long, default_value = "esp")]
    workload: String,
    /// Machine size (default: 32 for esp, the trace header for swf, 5000 for synthetic;
    /// lublin's spec gives it).
    #[arg(long)]
    nodes: Option<usize>,
    /// Comma-separated NAME or NAME[Key=value,...]; `malleable-sim strategies` lists them
    #[arg(long, value_parser = parse_strategies, default_value = "easy,conservative,fpsma,mtct,mtct-backfill")]
    strategies: Strategies,
    /// Seeds: a list 1,2,3 or an inclusive range 1..5 (seeds 1 to 5).
    // Spelled std::vec::Vec so that clap takes the parser's whole list as
    // one value rather than treating the option as repeatable.
    #[arg(long, default_value = "1..5", value_parser = sweep::parse_seeds)]
    seeds: std::vec::Vec<u64>,
    /// Malleable fractions, comma-separated [default: 0.1,0.2,..,1.0]
    #[arg(long, value_delimiter = ',', value_parser = parse_fraction)]
    fractions: Vec<f64>,
    /// Multiply SWF and lublin submit times by this (e.g. 0.7 to compress arrivals).
    #[arg(long, default_value_t = 1.0, value_parser = parse_positive)]
    arrival_scale: f64,
    /// fitted|linear
    #[arg(long, default_value = "fitted", value_parser = AppModel::parse)]
    app_model: AppModel,
    /// Seconds between scheduler ticks while jobs wait (0: none).
    #[arg(long, default_value_t = 60.0)]
    tick: f64,
    /// Resize cost: measured, paper (for the paper's own Fig. 3), restart-openmpi or
    /// restart-mpich (an MPI application restarted at each resize), or A+Bn/C+Dn.
    #[arg(long, default_value = "measured", value_parser = ResizeCost::parse)]
    resize_cost: ResizeCost,
    /// Directory for the CSVs and PNGs.
    #[arg(long, default_value = "sweep-out")]
    out: PathBuf,
}

#[derive(Args, Clone)]
struct Common {
    /// esp | mpdata (Iserte et al. 2025's 30 MPDATA jobs on 31 nodes) | swf:PATH |
    /// synthetic:JOBS | lublin:JOBS:NODES:CORES (the Lublin-Feitelson model on NODES nodes
    /// of CORES processors, jobs asking whole nodes) | power-corridor (Chadha et al. 2020's
    /// Table II scenario) | cpu-gpu-esp (Soner and Ozturan's 458 jobs on 1,024 nodes of 8
    /// cores and 2 GPUs, asking for cores) | cpu-gpu-esp-ragged (their Table 7 sizes)
    #[arg(long)]
    workload: String,
    /// Machine size (default: 32 for esp, the trace header for swf, 5000 for synthetic;
    /// lublin's spec gives it).
    #[arg(long)]
    nodes: Option<usize>,
    /// Fraction of jobs that are malleable, 0.0 to 1.0.
    #[arg(long, default_value_t = 0.0, value_parser = parse_fraction)]
    malleable_fraction: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Multiply SWF and lublin submit times by this (e.g. 0.7 to compress arrivals).
    #[arg(long, default_value_t = 1.0, value_parser = parse_positive)]
    arrival_scale: f64,
    /// fitted|linear
    #[arg(long, default_value = "fitted", value_parser = AppModel::parse)]
    app_model: AppModel,
    /// Seconds between scheduler ticks while jobs wait (0: none).
    #[arg(long, default_value_t = 60.0)]
    tick: f64,
    /// Run the workload this many times faster, with time limits rounded up
    /// to whole minutes as a real Slurm takes them: what `cargo xtask esp`
    /// submits to the local cluster (1: as it is, limits unrounded).
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
    /// Resize cost: `measured` (this project's, on a local Slurm: `cargo xtask
    /// bench-resize`), `paper` (Chadha et al. 2020's Fig. 5, to reproduce its figures),
    /// `baseline` or `merge` (Iserte et al. 2025's Table 5, for mpdata),
    /// `restart-openmpi` or `restart-mpich` (an MPI application restarted at each
    /// resize: `cargo xtask bench-resize --mpi restart`) or A+Bn/C+Dn, expand/shrink
    /// seconds as fixed plus per node.
    #[arg(long, default_value = "measured", value_parser = ResizeCost::parse)]
    resize_cost: ResizeCost,
    /// Seconds from a job's start until its work begins (a real Slurm's launch).
    #[arg(long, default_value_t = 0.0, value_parser = parse_non_negative)]
    start_delay: f64,
    /// The same for malleable jobs (their launcher starts a step per node).
    #[arg(long, default_value_t = 0.0, value_parser = parse_non_negative)]
    malleable_start_delay: f64,
    /// Tick while jobs run too, as sched/malleable does (not only while jobs wait).
    #[arg(long)]
    tick_while_running: bool,
    /// Seconds from an event (submission, end, tick) to the pass it calls for;
    /// events meanwhile join that pass (`cargo xtask esp` prints this cluster's).
    #[arg(long, default_value_t = 0.0, value_parser = parse_non_negative)]
    pass_delay: f64,
    /// How a job sharing cores (sd-policy) progresses: `ideal`, at the pace
    /// of all the cores it has (the paper's Eq. 5), or `worst`, of its
    /// least-served node (Eq. 6).
    #[arg(long, default_value = "ideal", value_parser = parse_sharing_model)]
    sharing_model: RuntimeModel,
    /// How waiting jobs are ranked: `fcfs` (Slurm's basic priority) or
    /// `multifactor` (Slurm's, age and job size weighed equally, +1 a minute
    /// waited, PriorityMaxAge 7 days; `multifactor:MINUTES` for another)
    #[arg(long, default_value = "fcfs", value_parser = Priority::parse)]
    priority: Priority,
}

impl Common {
    fn options(&self) -> SimOptions {
        SimOptions {
            app_model: self.app_model,
            tick: self.tick,
            resize_cost: self.resize_cost,
            start_delay: self.start_delay,
            malleable_start_delay: self.malleable_start_delay,
            tick_while_running: self.tick_while_running,
            pass_delay: self.pass_delay,
            sharing_model: self.sharing_model,
            priority: self.priority,
        }
    }
}

fn parse_sharing_model(v: &str) -> Result<RuntimeModel, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "ideal" => Ok(RuntimeModel::Ideal),
        "worst" => Ok(RuntimeModel::Worst),
        _ => Err(format!("'{v}' is not allowed: 'ideal' (Eq. 5) or 'worst' (Eq. 6)")),
    }
}

fn parse_non_negative(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if f >= 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!("'{v}' is not allowed: a number of seconds, 0 or more")),
    }
}

/// One column of `compare`: a strategy, on the workload as it is or on its
/// static flavor.
#[derive(Clone, Debug)]
struct ComparedRun {
    choice: StrategyChoice,
    static_flavor: bool,
}

impl ComparedRun {
    fn label(&self) -> String {
        if self.static_flavor {
            "static".into()
        } else {
            self.choice.to_string()
        }
    }
}

/// `compare`'s `--strategies`, in the order given.
#[derive(Clone, Debug)]
struct Compared(Vec<ComparedRun>);

fn parse_compared(v: &str) -> Result<Compared, String> {
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
struct Strategies(Vec<StrategyChoice>);

fn parse_strategies(v: &str) -> Result<Strategies, String> {
    let list: Vec<StrategyChoice> = split_list(v).into_iter().map(StrategyChoice::parse).collect::<Result<_, _>>()?;
    if list.is_empty() {
        return Err(format!("give at least one of {}", names()));
    }
    Ok(Strategies(list))
}

fn parse_fraction(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("'{v}' is not a fraction, allowed: a number from 0.0 to 1.0")),
    }
}

fn parse_positive(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!("'{v}' is not allowed: a number above 0")),
    }
}

fn load(c: &Common) -> Result<Workload, String> {
    let w = load_workload(&c.workload, c.nodes, c.malleable_fraction, c.seed, c.arrival_scale, true)?;
    if c.time_scale == 1.0 {
        return Ok(w);
    }
    malleable_sim::workload::for_slurm(&w, c.time_scale).map_err(|e| format!("--time-scale: {e}"))
}

/// Offered load of `synthetic:JOBS` workloads (and of bench's).
const SYNTHETIC_LOAD: f64 = 0.85;

fn load_workload(
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
        let spec = lublin::parse_spec(workload)?;
        match nodes {
            Some(n) if n != spec.nodes as usize => Err(format!(
                "--nodes {n} not allowed with --workload '{workload}': its NODES, {}, is the machine",
                spec.nodes
            )),
            _ => Ok(lublin(spec, fraction, seed, arrival_scale)),
        }
    } else {
        Err(format!(
            "--workload '{workload}' not allowed: esp | mpdata | swf:PATH | synthetic:JOBS | \
             lublin:JOBS:NODES:CORES | power-corridor | cpu-gpu-esp | cpu-gpu-esp-ragged"
        ))
    }
}

/// A bar on stderr, or a hidden one with `--quiet` or when stderr is not a
/// terminal (so logs and CI output stay clean).
fn progress_bar(len: u64, quiet: bool, template: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    pb.set_style(ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> "));
    pb
}

const JOBS_TEMPLATE: &str = "{msg} [{wide_bar}] {pos}/{len} jobs done ({elapsed}, eta {eta})";

/// Simulate with a job-completion bar when the workload is big.
fn simulate_shown(w: &Workload, kind: &StrategyChoice, opts: SimOptions, quiet: bool) -> malleable_sim::SimResult {
    let quiet = quiet || w.jobs.len() < PROGRESS_MIN_JOBS;
    let pb = progress_bar(w.jobs.len() as u64, quiet, JOBS_TEMPLATE);
    pb.set_message(kind.to_string());
    let r = simulate_with_progress(w, kind.build().as_mut(), opts, &mut |done| pb.set_position(done as u64));
    pb.finish_and_clear();
    r
}

fn run_one(w: &Workload, kind: &StrategyChoice, c: &Common, quiet: bool) -> (Summary, malleable_sim::SimResult) {
    let opts = c.options();
    let r = simulate_shown(w, kind, opts, quiet);
    (summarize(kind, &r), r)
}

fn write_out(dir: &PathBuf, name: &str, s: &Summary, r: &malleable_sim::SimResult) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(s).unwrap();
    std::fs::write(dir.join(format!("{name}.summary.json")), json).map_err(|e| e.to_string())?;
    std::fs::write(dir.join(format!("{name}.jobs.csv")), jobs_csv(r)).map_err(|e| e.to_string())
}

/// For workloads with a corridor: `power.png` (Chadha et al. 2020's Fig. 4) and each
/// strategy's draw over time as `<strategy>.power.csv`.
fn write_power(dir: &Path, w: &Workload, runs: &[(String, PowerReport)]) -> Result<(), String> {
    if runs.is_empty() {
        return Ok(());
    }
    for (name, r) in runs {
        let mut csv = String::from("t_s,draw_w,corridor_low_w,corridor_high_w\n");
        for p in &r.timeline {
            csv += &format!("{:.3},{:.1},{:.1},{:.1}\n", p.t, p.draw, p.low, p.high);
        }
        let path = dir.join(format!("{name}.power.csv"));
        std::fs::write(&path, csv).map_err(|e| format!("--out {}: {e}", path.display()))?;
    }
    let refs: Vec<(&str, &PowerReport)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    let path = plot_power::plot_power(&dir.join("power.png"), &refs, &format!("{}, {} nodes", w.name, w.nodes))?;
    outln!("wrote {}", path.display());
    Ok(())
}

fn workload_json(w: &Workload, c: &Common) -> serde_json::Value {
    serde_json::json!({
        "name": w.name, "nodes": w.nodes, "jobs": w.jobs.len(),
        "malleable_fraction": c.malleable_fraction, "seed": c.seed,
        "arrival_scale": c.arrival_scale, "app_model": c.app_model.name(),
        "priority": c.priority.name(),
    })
}

/// A row of the comparison table: its name and how to read it (`None`:
/// not measured for this run, printed as "-").
type Metric = (String, Box<dyn Fn(&Summary) -> Option<f64>>);
/// A row every summary of its kind has.
type FixedMetric = (&'static str, fn(&Summary) -> Option<f64>);

fn print_table(rows: &[Summary]) {
    let columns: Vec<Vec<Summary>> = rows.iter().map(|r| vec![r.clone()]).collect();
    print_columns(&columns);
}

/// The comparison table, one column per strategy: each figure's median over
/// the column's runs (one run per seed), and its ratio to the first column's.
fn print_columns(columns: &[Vec<Summary>]) {
    let metrics = metrics_of(columns);
    out!("{:<26}", "metric");
    for c in columns {
        out!("{:>26}", c[0].strategy);
    }
    outln!();
    // The median over a column's runs that have the figure.
    let cell = |f: &dyn Fn(&Summary) -> Option<f64>, c: &[Summary]| {
        let values: Vec<f64> = c.iter().filter_map(f).collect();
        (!values.is_empty()).then(|| malleable_sim::metrics::median(&values))
    };
    for (name, f) in &metrics {
        out!("{name:<26}");
        let base = cell(f.as_ref(), &columns[0]);
        for c in columns {
            let Some(v) = cell(f.as_ref(), c) else {
                out!("{:>17} {:>8}", "-", "");
                continue;
            };
            let ratio = match base {
                Some(b) if b != 0.0 => format!("({:.3})", v / b),
                _ => String::new(),
            };
            // A packing factor differs from 1 in the third decimal.
            let digits = if name.starts_with("packing") { 4 } else { 2 };
            out!("{:>17.digits$} {:>8}", v, ratio);
        }
        outln!();
    }
}

/// With several seeds, each figure's ratio to the first column's on the
/// same seed (the same workload), median over the seeds: the comparison a
/// paper's one run against its baseline stands for, where the table's
/// ratio of medians sets one seed's figure against another's.
fn print_paired(columns: &[Vec<Summary>]) {
    let metrics = metrics_of(columns);
    outln!("paired: each seed's ratio to {} on that seed, median over the seeds", columns[0][0].strategy);
    out!("{:<26}", "metric");
    for c in columns {
        out!("{:>26}", c[0].strategy);
    }
    outln!();
    for (name, f) in &metrics {
        out!("{name:<26}");
        for c in columns {
            match paired_ratio(c, &columns[0], f.as_ref()) {
                Some(r) => out!("{r:>26.3}"),
                None => out!("{:>26}", "-"),
            }
        }
        outln!();
    }
}

/// The median over the seeds of each run's figure over the base column's on
/// the same seed (runs in seed order in both); `None` when no seed has both
/// figures and a base that is not 0.
fn paired_ratio(runs: &[Summary], base: &[Summary], f: &dyn Fn(&Summary) -> Option<f64>) -> Option<f64> {
    let ratios: Vec<f64> = runs
        .iter()
        .zip(base)
        .filter_map(|(run, b)| Some((f(run)?, f(b)?)))
        .filter(|&(_, b)| b != 0.0)
        .map(|(v, b)| v / b)
        .collect();
    (!ratios.is_empty()).then(|| malleable_sim::metrics::median(&ratios))
}

/// The rows of the comparison: the figures every summary has, power's when
/// a run has them, the strategies' own, and per class.
fn metrics_of(columns: &[Vec<Summary>]) -> Vec<Metric> {
    let rows: Vec<&Summary> = columns.iter().flatten().collect();
    let fixed: [FixedMetric; 9] = [
        ("makespan_s", |s| Some(s.makespan_s)),
        ("mean_wait_s", |s| Some(s.mean_wait_s)),
        ("mean_response_s", |s| Some(s.mean_response_s)),
        ("mean_slowdown", |s| Some(s.mean_slowdown)),
        ("mean_bounded_slowdown", |s| Some(s.mean_bounded_slowdown)),
        ("utilization", |s| Some(s.utilization)),
        ("expands", |s| Some(s.expands as f64)),
        ("shrinks", |s| Some(s.shrinks as f64)),
        ("resize_s", |s| Some(s.resize_s)),
    ];
    let mut metrics: Vec<Metric> = fixed.into_iter().map(|(n, f)| (n.to_string(), Box::new(f) as _)).collect();
    if rows.iter().any(|r| r.power_violations.is_some()) {
        let power: [FixedMetric; 4] = [
            ("power_violations", |s| s.power_violations.map(|v| v as f64)),
            ("corridor_breaks", |s| s.corridor_breaks.map(|v| v as f64)),
            ("seconds_outside_corridor", |s| s.seconds_outside_corridor),
            ("energy_j", |s| s.energy_j),
        ];
        metrics.extend(power.into_iter().map(|(n, f)| (n.to_string(), Box::new(f) as _)));
    }
    if rows.iter().any(|r| r.packing_factor.is_some()) {
        let packing: [FixedMetric; 2] =
            [("packing_factor", |s| s.packing_factor), ("packing_factor_sd", |s| s.packing_factor_sd)];
        metrics.extend(packing.into_iter().map(|(n, f)| (n.to_string(), Box::new(f) as _)));
    }
    // The strategies' own figures, each in the order it first appears.
    let mut figures: Vec<String> = Vec::new();
    for r in &rows {
        for (name, _) in &r.figures.0 {
            if !figures.contains(name) {
                figures.push(name.clone());
            }
        }
    }
    for name in figures {
        let key = name.clone();
        metrics.push((name, Box::new(move |s: &Summary| s.figure(&key))));
    }
    // Per class (Iserte et al. 2025's Fig. 5), for workloads with classes.
    let mut classes: Vec<String> = Vec::new();
    for r in &rows {
        for c in &r.classes {
            if !classes.contains(&c.class) {
                classes.push(c.class.clone());
            }
        }
    }
    type ClassMetric = (&'static str, fn(&malleable_sim::metrics::ClassFigures) -> f64);
    let per_class: [ClassMetric; 3] = [
        ("median_wait_s", |c| c.median_wait_s),
        ("median_run_s", |c| c.median_run_s),
        ("median_turnaround_s", |c| c.median_turnaround_s),
    ];
    for class in classes {
        for (what, f) in per_class {
            let key = class.clone();
            let read = move |s: &Summary| s.classes.iter().find(|c| c.class == key).map(f);
            metrics.push((format!("{class} {what}"), Box::new(read)));
        }
    }
    metrics
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("malleable-sim: {e}");
        std::process::exit(2);
    }
}

fn real_main() -> Result<(), String> {
    let cli = Cli::parse();
    let quiet = cli.quiet;
    match cli.command {
        Command::Run { common, strategy, out } => {
            let w = load(&common)?;
            let (s, r) = run_one(&w, &strategy, &common, quiet);
            print_table(std::slice::from_ref(&s));
            if let Some(dir) = out {
                write_out(&dir, &s.strategy, &s, &r)?;
                let power: Vec<_> = r.power.map(|p| (s.strategy.clone(), p)).into_iter().collect();
                write_power(&dir, &w, &power)?;
            }
        }
        Command::Compare { common, strategies, seeds, json, out, plot } => {
            run_compare(&common, &strategies, seeds, json, out, plot, quiet)?
        }
        Command::Sweep(args) => run_sweep(args, quiet)?,
        Command::Strategies => print_strategies(),
        Command::Bench { workloads_dir, reps } => {
            run_bench(&workloads_dir.unwrap_or_else(bench::default_workloads_dir), reps as usize, quiet)?
        }
        Command::BenchIpsched { windows, exact_windows, exact_seconds } => {
            run_bench_ipsched(windows as usize, exact_windows as usize, exact_seconds)
        }
    }
    Ok(())
}

/// The registry as a user reads it: what each strategy does, what it takes
/// (`--strategy NAME[Key=value,...]`, or Key=value lines in malleable.conf),
/// and what figures its runs report.
fn print_strategies() {
    for info in REGISTRY {
        outln!("{:<20} {}", info.name, info.about);
        for p in info.params {
            let default = match p.kind {
                ParamKind::Whole { .. } => format!("{}", p.default as u64),
                ParamKind::Number { .. } | ParamKind::NumberOrWord { .. } => p.show(p.default),
            };
            outln!("{:<22}{}={default}: {}; {}", "", p.key, p.help, p.allowed());
        }
        if !info.measures.is_empty() {
            let names: Vec<&str> = info.measures.iter().map(|m| m.name).collect();
            outln!("{:<22}reports: {}", "", names.join(", "));
        }
    }
}

/// `compare`: every strategy on the workload of each seed (the static
/// flavor for `static`), one table of medians over the seeds.
fn run_compare(
    common: &Common,
    runs: &Compared,
    seeds: Option<Vec<u64>>,
    json: Option<PathBuf>,
    out: Option<PathBuf>,
    plot: Option<PathBuf>,
    quiet: bool,
) -> Result<(), String> {
    let seeds = seeds.unwrap_or_else(|| vec![common.seed]);
    let mut columns: Vec<Vec<Summary>> = vec![Vec::new(); runs.0.len()];
    let mut results = Vec::new();
    let mut first = None;
    for &seed in &seeds {
        let c = Common { seed, ..common.clone() };
        let w = load(&c)?;
        let mut power = Vec::new();
        for (k, run) in runs.0.iter().enumerate() {
            let flavored;
            let used = if run.static_flavor {
                flavored = static_flavor(&w);
                &flavored
            } else {
                &w
            };
            let (mut s, r) = run_one(used, &run.choice, &c, quiet);
            s.strategy = run.label();
            let name = if seeds.len() == 1 { s.strategy.clone() } else { format!("{}.seed{seed}", s.strategy) };
            if let Some(dir) = &out {
                write_out(dir, &name, &s, &r)?;
            }
            power.extend(r.power.map(|p| (name, p)));
            let mut v = serde_json::to_value(&s).map_err(|e| e.to_string())?;
            v["seed"] = serde_json::json!(seed);
            results.push(v);
            columns[k].push(s);
        }
        if let Some(dir) = &out {
            write_power(dir, &w, &power)?;
        }
        first.get_or_insert_with(|| workload_json(&w, &c));
    }
    if seeds.len() > 1 {
        outln!("median over seeds {seeds:?}");
    }
    print_columns(&columns);
    if seeds.len() > 1 {
        outln!();
        print_paired(&columns);
    }
    if let Some(path) = json {
        let v = serde_json::json!({ "workload": first, "seeds": seeds, "results": results });
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap())
            .map_err(|e| format!("--json {}: {e}", path.display()))?;
    }
    if let Some(path) = plot {
        let name = first.as_ref().and_then(|v| v["name"].as_str()).unwrap_or(&common.workload);
        plot_compare::plot_compare(&path, &columns, name, &seeds).map_err(|e| format!("--plot: {e}"))?;
        outln!("wrote {}", path.display());
    }
    Ok(())
}

fn run_sweep(a: SweepArgs, quiet: bool) -> Result<(), String> {
    let fractions = if a.fractions.is_empty() { sweep::paper_fractions() } else { a.fractions.clone() };
    // A bad --workload is said before anything is made or run (and leaves
    // no empty --out folder behind).
    load_workload(&a.workload, a.nodes, fractions[0], a.seeds[0], a.arrival_scale, false)?;
    std::fs::create_dir_all(&a.out).map_err(|e| format!("--out {}: {e}", a.out.display()))?;
    let total = (fractions.len() * a.seeds.len() * a.strategies.0.len()) as u64;
    let pb = progress_bar(total, quiet, "{msg} [{wide_bar}] {pos}/{len} simulations ({elapsed}, eta {eta})");
    let opts = SimOptions { app_model: a.app_model, tick: a.tick, resize_cost: a.resize_cost, ..SimOptions::default() };
    let mut machine = 0;
    let rows = sweep::run_sweep(
        &fractions,
        &a.seeds,
        &a.strategies.0,
        opts,
        &mut |fraction, seed| {
            pb.set_message(format!("fraction {fraction:.1} seed {seed}"));
            let w = load_workload(&a.workload, a.nodes, fraction, seed, a.arrival_scale, false)?;
            machine = w.nodes;
            Ok(w)
        },
        &mut |_| pb.inc(1),
    )?;
    pb.finish_and_clear();
    let means = sweep::means(&rows);
    let write = |name: &str, text: String| {
        let path = a.out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("--out {}: {e}", path.display()))?;
        Ok::<_, String>(path)
    };
    let mut written =
        vec![write("sweep.csv", sweep::rows_csv(&rows))?, write("sweep-means.csv", sweep::means_csv(&means))?];
    let caption = format!(
        "{}, {machine} nodes, mean of {} seed{}",
        a.workload,
        a.seeds.len(),
        if a.seeds.len() == 1 { "" } else { "s" }
    );
    written.extend(plot::plot_fig3(&a.out, &means, &caption)?);
    print_means(&means);
    for p in written {
        outln!("wrote {}", p.display());
    }
    Ok(())
}

/// A table of the sweep's means: its name and how to read it.
type MeanColumn = (&'static str, fn(&sweep::MeanRow) -> f64);

/// The sweep's means as a fraction x strategy table per metric.
fn print_means(means: &[sweep::MeanRow]) {
    let mut strategies: Vec<&str> = Vec::new();
    let mut fractions: Vec<f64> = Vec::new();
    for m in means {
        if !strategies.contains(&m.strategy.as_str()) {
            strategies.push(&m.strategy);
        }
        if !fractions.contains(&m.fraction) {
            fractions.push(m.fraction);
        }
    }
    let metrics: [MeanColumn; 4] = [
        ("makespan_s", |m| m.makespan_s),
        ("mean_wait_s", |m| m.mean_wait_s),
        ("mean_response_s", |m| m.mean_response_s),
        ("utilization", |m| m.utilization),
    ];
    for (name, f) in metrics {
        out!("{name:<16}");
        for s in &strategies {
            out!("{s:>15}");
        }
        outln!();
        for &fr in &fractions {
            out!("{fr:<16.1}");
            for s in &strategies {
                match means.iter().find(|m| m.fraction == fr && m.strategy == *s) {
                    Some(m) if name == "utilization" => out!("{:>15.3}", f(m)),
                    Some(m) => out!("{:>15.1}", f(m)),
                    None => out!("{:>15}", "-"),
                }
            }
            outln!();
        }
        outln!();
    }
}

/// One line of bench's report.
fn bench_line(what: &str, took: Duration, target: Duration) {
    let fmt = |d: Duration| {
        if d < Duration::from_millis(100) {
            format!("{:.3} ms", d.as_secs_f64() * 1e3)
        } else {
            format!("{:.3} s", d.as_secs_f64())
        }
    };
    outln!(
        "{what:<62} {:>12}  target < {:<8} {}",
        fmt(took),
        fmt(target).replace(".000", ""),
        if took < target { "PASS" } else { "MISS" }
    );
}

/// Time a whole EASY run: making the workload (`step` names that phase) plus
/// simulating it, against `target`, then the two phases and the pass count.
fn bench_whole_run(
    step: &str,
    prepare: impl FnOnce() -> Result<Workload, String>,
    label: impl FnOnce(usize, usize) -> String,
    target: Duration,
    quiet: bool,
) -> Result<(), String> {
    let t = Instant::now();
    let w = prepare()?;
    let prepared = t.elapsed();
    let t = Instant::now();
    let easy = StrategyChoice::named("easy")?;
    let r = simulate_shown(&w, &easy, SimOptions::default(), quiet);
    let sim = t.elapsed();
    bench_line(&label(r.jobs.len(), w.nodes), prepared + sim, target);
    outln!("  ({step} {:.3} s, simulate {:.3} s, {} passes)", prepared.as_secs_f64(), sim.as_secs_f64(), r.passes);
    Ok(())
}

fn run_bench(dir: &Path, reps: usize, quiet: bool) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!("malleable-sim bench: a debug build; time a --release build");
    }
    let trace = bench::nasa_trace(dir)?;

    bench_whole_run(
        "read",
        || load_workload(&format!("swf:{}", trace.display()), None, 0.0, 1, 1.0, false),
        |jobs, nodes| format!("NASA trace under easy: read + simulate ({jobs} jobs, {nodes} nodes)"),
        Duration::from_secs(2),
        quiet,
    )?;
    bench_whole_run(
        "generate",
        || Ok(synthetic(200_000, 5_000, SYNTHETIC_LOAD, 0.0, 1)),
        |jobs, nodes| format!("synthetic under easy ({jobs} jobs, {nodes} nodes, load {SYNTHETIC_LOAD})"),
        Duration::from_secs(60),
        quiet,
    )?;

    let snapshot = bench::pass_snapshot(5_000, 10_000, 1);
    outln!(
        "one pass at {} nodes ({} free), {} running, {} waiting; median of {reps}:",
        snapshot.nodes.len(),
        snapshot.free_nodes().len(),
        snapshot.running.len(),
        snapshot.pending.len()
    );
    for info in REGISTRY {
        let k = StrategyChoice::named(info.name)?;
        let (took, decisions) = bench::time_pass(&k, &snapshot, reps);
        bench_line(&format!("  {} pass ({decisions} decisions)", k.name()), took, Duration::from_millis(10));
    }

    // Chadha et al. 2020 report 20 ms per LP; the issue asks for 10 times faster.
    outln!("Equation 1 ({} backend), median and max of {LP_BENCH_SOLVES} solves:", malleable_core::lp::backend());
    for (what, median_ms, max_ms) in malleable_sim::bench_lp::lp_bench(LP_BENCH_SOLVES) {
        // The 2 ms is for the scenario's size; the 200-node case has
        // no target of its own and is held to the paper's 20 ms average.
        let target = if what.contains("200 nodes") { 20 } else { 2 };
        bench_line(
            &format!("  {what} (max {max_ms:.3} ms)"),
            Duration::from_secs_f64(median_ms / 1e3),
            Duration::from_millis(target),
        );
    }
    // The whole scenario: the LP as the strategy calls it, in the simulator.
    let w = power_corridor(1);
    let power = StrategyChoice::named("power")?;
    let r = malleable_sim::simulate(&w, power.build().as_mut(), SimOptions::default());
    let s = summarize(&power, &r);
    bench_line(
        &format!("  power-corridor under power: median of its {} solves", s.figure("lp_solves").unwrap_or(0.0)),
        Duration::from_secs_f64(s.figure("lp_median_ms").unwrap_or(f64::NAN).max(0.0) / 1e3),
        Duration::from_millis(2),
    );
    Ok(())
}

/// `bench-ipsched`: per window size, each form's median and largest solve
/// (model building included), how many a limit stopped, and whether the
/// forms found the same optimum on the windows both solved.
fn run_bench_ipsched(windows: usize, exact_windows: usize, exact_seconds: f64) {
    use malleable_core::strategies::ipsched::model::Limits;
    use malleable_sim::bench_ipsched::{time_form, WINDOWS};
    if cfg!(debug_assertions) {
        eprintln!("malleable-sim bench-ipsched: a debug build; time a --release build");
    }
    outln!(
        "IPSCHED's program ({} backend), windows of the ragged CPU-GPU ESP on 1,024 nodes x 8 cores x 2 GPUs:",
        malleable_core::lp::backend()
    );
    // The strategy's own default bound, so the figures are a pass's.
    let params = malleable_core::Params::defaults(malleable_core::strategies::ipsched::IPSCHED.params);
    let nodes = u32::try_from(params.whole("SolverNodes")).ok();
    outln!(
        "  (search bounded at SolverNodes={}, the strategy's default: beyond, the best found is kept)",
        params.whole("SolverNodes")
    );
    let classes = Limits { nodes, seconds: None };
    let exact = Limits { nodes, seconds: Some(exact_seconds) };
    for m in WINDOWS {
        let c = time_form(m, windows, false, classes);
        bench_line(
            &format!("  M = {m:>3}, classes: median of {windows} (max {:.1} ms, {} stopped)", c.max(), c.stopped),
            Duration::from_secs_f64(c.median() / 1e3),
            Duration::from_millis(300),
        );
        if exact_windows == 0 {
            continue;
        }
        let e = time_form(m, exact_windows, true, exact);
        let both = c.values.iter().zip(&e.values).filter_map(|(a, b)| a.zip(*b));
        let (agree, of) = both.fold((0, 0), |(k, n), (a, b)| (k + usize::from((a - b).abs() < 1e-6), n + 1));
        outln!(
            "  M = {m:>3}, exact:   median of {exact_windows} {:>10.1} ms, max {:.1} ms, {} stopped at {exact_seconds} s; \
             same optimum as classes on {agree} of {of} both proved",
            e.median(),
            e.max(),
            e.stopped
        );
    }
}

/// Solves per LP benchmark case.
const LP_BENCH_SOLVES: usize = 200;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_ratio_sets_each_seed_against_the_same_seed() {
        let run = |makespan_s: f64| Summary { makespan_s, ..Summary::default() };
        // Seed by seed: 50/100, 90/100, 60/200: 0.5, 0.9, 0.3, median 0.5;
        // the ratio of the medians would be 60/100 = 0.6.
        let base = vec![run(100.0), run(100.0), run(200.0)];
        let other = vec![run(50.0), run(90.0), run(60.0)];
        let f = |s: &Summary| Some(s.makespan_s);
        assert_eq!(paired_ratio(&other, &base, &f), Some(0.5));
        // A seed whose base is 0 or that lacks the figure is left out.
        let zero = vec![run(0.0), run(100.0), run(200.0)];
        assert_eq!(paired_ratio(&other, &zero, &f), Some((0.9 + 0.3) / 2.0));
        assert_eq!(paired_ratio(&other, &base, &|_| None), None);
    }
}
