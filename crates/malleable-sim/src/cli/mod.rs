//! The `malleable-sim` command line: its commands and options (`args`), and
//! one file per driver (`run` and `compare`, `sweep`, `bench`) with the tables
//! they print (`tables`); `main.rs` only calls [`main`].

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use malleable_core::StrategyChoice;

/// `print!` to stdout that ends the program quietly when the reader has
/// gone (`malleable-sim ... | head`) instead of panicking, and says why on
/// any other write error.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            $crate::cli::stdout_failed(e);
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

pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("malleable-sim: writing to stdout: {e}");
    std::process::exit(2);
}

mod args;
mod bench;
mod load;
mod progress;
mod run;
mod sweep;
mod tables;

use args::{parse_compared, parse_positive, Common, Compared, SweepArgs};

#[derive(Parser)]
#[command(name = "malleable-sim", about = "Simulate sched/malleable's strategies")]
struct Cli {
    /// No progress bars (they are drawn on stderr only when it is a terminal).
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

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
        #[arg(long, value_parser = malleable_sim::report::sweep::parse_seeds)]
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
    /// scheduling pass of each strategy at 5,000 nodes and 10,000 waiting jobs,
    /// and at 10,000 nodes and 100,000 waiting jobs (`--nodes`, `--jobs`).
    Bench {
        /// Folder with NASA-iPSC-1993-3.1-cln.swf.gz [default: <repo>/../shared/workloads]
        #[arg(long)]
        workloads_dir: Option<PathBuf>,
        /// Timed passes per strategy (the median and p99 are reported).
        #[arg(long, default_value_t = 11, value_parser = clap::value_parser!(u32).range(1..))]
        reps: u32,
        /// Nodes of the large pass snapshot (issue 35's scale).
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
        nodes: u32,
        /// Waiting jobs of the large pass snapshot.
        #[arg(long, default_value_t = 100_000)]
        jobs: u32,
        /// Only the pass tables: not the simulator's runs nor the LP.
        #[arg(long)]
        passes_only: bool,
        /// Time only these strategies' passes (comma-separated; all if none).
        #[arg(long, value_delimiter = ',')]
        strategies: Vec<String>,
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

/// Parse the command line and run its command; an error is said by `main.rs`.
pub fn main() -> Result<(), String> {
    let cli = Cli::parse();
    let quiet = cli.quiet;
    match cli.command {
        Command::Run { common, strategy, out } => run::run(&common, &strategy, out, quiet)?,
        Command::Compare { common, strategies, seeds, json, out, plot } => {
            run::run_compare(&common, &strategies, seeds, json, out, plot, quiet)?
        }
        Command::Sweep(args) => sweep::run_sweep(args, quiet)?,
        Command::Strategies => tables::print_strategies(),
        Command::Bench { workloads_dir, reps, nodes, jobs, passes_only, strategies } => {
            let dir = workloads_dir.unwrap_or_else(malleable_sim::bench::default_workloads_dir);
            let scale = bench::Scale { nodes: nodes as usize, jobs: jobs as usize, passes_only, strategies };
            bench::run_bench(&dir, reps as usize, scale, quiet)?
        }
        Command::BenchIpsched { windows, exact_windows, exact_seconds } => {
            bench::run_bench_ipsched(windows as usize, exact_windows as usize, exact_seconds)
        }
    }
    Ok(())
}
