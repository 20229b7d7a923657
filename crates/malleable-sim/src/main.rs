//! `malleable-sim`: run one strategy on a workload, or compare several side by
//! side (table with ratios to the first, and the JSON shape).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use malleable_core::StrategyKind;
use malleable_sim::app_model::AppModel;
use malleable_sim::engine::simulate;
use malleable_sim::metrics::{jobs_csv, summarize, Summary};
use malleable_sim::workload::{esp, swf, Workload};
use malleable_sim::SimOptions;

#[derive(Parser)]
#[command(
    name = "malleable-sim",
    about = "Simulate sched/malleable's strategies"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one strategy.
    Run {
        #[command(flatten)]
        common: Common,
        /// fcfs|easy|mtct|fpsma|mtct-backfill
        #[arg(long, value_parser = parse_strategy)]
        strategy: StrategyKind,
        /// Directory for summary.json and jobs.csv.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run several strategies on the same workload.
    Compare {
        #[command(flatten)]
        common: Common,
        /// Comma-separated: fcfs,easy,mtct,fpsma,mtct-backfill
        #[arg(long, value_delimiter = ',', value_parser = parse_strategy)]
        strategies: Vec<StrategyKind>,
        #[arg(long)]
        json: Option<PathBuf>,
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Args, Clone)]
struct Common {
    /// esp | swf:PATH
    #[arg(long)]
    workload: String,
    /// Machine size (default: 32 for esp, the trace header for swf).
    #[arg(long)]
    nodes: Option<usize>,
    /// Fraction of jobs that are malleable, 0.0 to 1.0.
    #[arg(long, default_value_t = 0.0, value_parser = parse_fraction)]
    malleable_fraction: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Multiply SWF submit times by this (e.g. 0.7 to compress arrivals).
    #[arg(long, default_value_t = 1.0, value_parser = parse_positive)]
    arrival_scale: f64,
    /// fitted|linear
    #[arg(long, default_value = "fitted", value_parser = AppModel::parse)]
    app_model: AppModel,
    /// Seconds between scheduler ticks while jobs wait (0: none).
    #[arg(long, default_value_t = 60.0)]
    tick: f64,
}

fn parse_strategy(v: &str) -> Result<StrategyKind, String> {
    StrategyKind::parse(v)
}

fn parse_fraction(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "'{v}' is not a fraction, allowed: a number from 0.0 to 1.0"
        )),
    }
}

fn parse_positive(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!("'{v}' is not allowed: a number above 0")),
    }
}

fn load(c: &Common) -> Result<Workload, String> {
    if c.workload == "esp" {
        Ok(esp(c.nodes.unwrap_or(32), c.malleable_fraction, c.seed))
    } else if let Some(path) = c.workload.strip_prefix("swf:") {
        let (w, skipped) = swf(path, c.nodes, c.arrival_scale, c.malleable_fraction, c.seed)?;
        if skipped.no_size_or_runtime + skipped.larger_than_machine > 0 {
            eprintln!("{}: skipped {:?}", w.name, skipped);
        }
        Ok(w)
    } else {
        Err(format!(
            "--workload '{}' not allowed: esp | swf:PATH",
            c.workload
        ))
    }
}

fn run_one(w: &Workload, kind: StrategyKind, c: &Common) -> (Summary, malleable_sim::SimResult) {
    let opts = SimOptions {
        app_model: c.app_model,
        tick: c.tick,
    };
    let r = simulate(w, kind.build().as_mut(), opts);
    (summarize(kind.name(), &r), r)
}

fn write_out(
    dir: &PathBuf,
    name: &str,
    s: &Summary,
    r: &malleable_sim::SimResult,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(s).unwrap();
    std::fs::write(dir.join(format!("{name}.summary.json")), json).map_err(|e| e.to_string())?;
    std::fs::write(dir.join(format!("{name}.jobs.csv")), jobs_csv(r)).map_err(|e| e.to_string())
}

fn workload_json(w: &Workload, c: &Common) -> serde_json::Value {
    serde_json::json!({
        "name": w.name, "nodes": w.nodes, "jobs": w.jobs.len(),
        "malleable_fraction": c.malleable_fraction, "seed": c.seed,
        "arrival_scale": c.arrival_scale, "app_model": c.app_model.name(),
    })
}

/// A column of the comparison table: its name and how to read it.
type Metric = (&'static str, fn(&Summary) -> f64);

fn print_table(rows: &[Summary]) {
    let metrics: [Metric; 8] = [
        ("makespan_s", |s| s.makespan_s),
        ("mean_wait_s", |s| s.mean_wait_s),
        ("mean_response_s", |s| s.mean_response_s),
        ("mean_slowdown", |s| s.mean_slowdown),
        ("mean_bounded_slowdown", |s| s.mean_bounded_slowdown),
        ("utilization", |s| s.utilization),
        ("expands", |s| s.expands as f64),
        ("shrinks", |s| s.shrinks as f64),
    ];
    print!("{:<24}", "metric");
    for r in rows {
        print!("{:>26}", r.strategy);
    }
    println!();
    for (name, f) in metrics {
        print!("{name:<24}");
        let base = f(&rows[0]);
        for r in rows {
            let v = f(r);
            let ratio = if base != 0.0 {
                format!("({:.3})", v / base)
            } else {
                String::new()
            };
            print!("{:>17.2} {:>8}", v, ratio);
        }
        println!();
    }
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("malleable-sim: {e}");
        std::process::exit(2);
    }
}

fn real_main() -> Result<(), String> {
    match Cli::parse().command {
        Command::Run {
            common,
            strategy,
            out,
        } => {
            let w = load(&common)?;
            let (s, r) = run_one(&w, strategy, &common);
            print_table(std::slice::from_ref(&s));
            if let Some(dir) = out {
                write_out(&dir, strategy.name(), &s, &r)?;
            }
        }
        Command::Compare {
            common,
            strategies,
            json,
            out,
        } => {
            if strategies.is_empty() {
                return Err(
                    "--strategies: give at least one of fcfs,easy,mtct,fpsma,mtct-backfill".into(),
                );
            }
            let w = load(&common)?;
            let mut rows = Vec::new();
            for &k in &strategies {
                let (s, r) = run_one(&w, k, &common);
                if let Some(dir) = &out {
                    write_out(dir, k.name(), &s, &r)?;
                }
                rows.push(s);
            }
            print_table(&rows);
            if let Some(path) = json {
                let v =
                    serde_json::json!({ "workload": workload_json(&w, &common), "results": rows });
                std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap())
                    .map_err(|e| format!("--json {}: {e}", path.display()))?;
            }
        }
    }
    Ok(())
}
