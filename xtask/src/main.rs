//! cargo xtask: the developer commands of this workspace.
//!
//!   cargo xtask demo [--nodes N] [--keep]   a local cluster running a demo workload
//!   cargo xtask bench-resize [--nodes N] [--rounds R]   resize latency at 2, 8 and N nodes
//!   cargo xtask test                        every test, with its own set-up
//!   cargo xtask cluster up|down|status [--nodes N] [--name NAME]
//!   cargo xtask build                       packages, Slurm source tree, plugins
//!   cargo xtask slurm-src                   prints the configured source tree

mod architecture;
mod bench_resize;
mod c_example;
mod demo;
mod setup;
mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use testcluster::cluster::{self, Cluster};
use testcluster::{plugins, ClusterSpec};

pub type Result<T> = std::result::Result<T, String>;

const USAGE: &str = "usage: cargo xtask <command>
  demo [--nodes N] [--keep]              bring up a cluster, run the demo workload, print the schedule
  bench-resize [--nodes N] [--rounds R]  resize latency, decision to commit, at 2, 8 and N nodes (32, 3)
  test                                   formatting, lints, unit, property, symbol and real-cluster tests
  cluster up [--nodes N] [--name NAME] [--set KEY=VALUE]...
                                         start a cluster and leave it running (KEY=VALUE in slurm.conf)
  cluster down [--name NAME]             stop it (by pid files)
  cluster status [--name NAME]           which of its daemons run
  build                                  install Slurm, prepare its source tree, build the plugins
  slurm-src                              prepare the source tree and print its path";

/// The workspace root (xtask sits one level below it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask has a parent").to_path_buf()
}

/// Options shared by the commands.
struct Opts {
    nodes: usize,
    name: String,
    keep: bool,
    rounds: usize,
    /// slurm.conf keys to set.
    set: Vec<(String, String)>,
}

fn parse_opts(args: &[String], default_name: &str) -> Result<Opts> {
    let nodes = if default_name == "bench" { 32 } else { 8 };
    let mut o = Opts { nodes, name: default_name.to_string(), keep: false, rounds: 3, set: Vec::new() };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--nodes" => {
                let v = it.next().ok_or("--nodes needs a value")?;
                o.nodes = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=64).contains(n))
                    .ok_or_else(|| format!("--nodes {v}: expected a whole number from 1 to 64"))?;
            }
            "--name" => {
                let v = it.next().ok_or("--name needs a value")?;
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                    return Err(format!("--name {v}: expected letters, digits and '-'"));
                }
                o.name = v.clone();
            }
            "--keep" => o.keep = true,
            "--set" => {
                let v = it.next().ok_or("--set needs KEY=VALUE")?;
                let (k, val) = v.split_once('=').ok_or_else(|| format!("--set {v}: expected KEY=VALUE"))?;
                o.set.push((k.to_string(), val.to_string()));
            }
            "--rounds" => {
                let v = it.next().ok_or("--rounds needs a value")?;
                o.rounds = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=100).contains(n))
                    .ok_or_else(|| format!("--rounds {v}: expected a whole number from 1 to 100"))?;
            }
            other => return Err(format!("unknown option '{other}'\n{USAGE}")),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let started = Instant::now();
    let result = match args.first().map(String::as_str) {
        Some("demo") => parse_opts(&args[1..], "demo").and_then(|o| demo::run(o.nodes, o.keep)),
        Some("test") => test::run_all(&repo_root()),
        Some("bench-resize") => {
            parse_opts(&args[1..], "bench").and_then(|o| bench_resize::run(o.nodes, &[2, 8, o.nodes], o.rounds))
        }
        Some("cluster") => cluster_cmd(&args[1..]),
        Some("build") => setup::build_plugins(&repo_root()).map(|d| println!("plugins in {}", d.display())),
        Some("slurm-src") => setup::ensure_packages()
            .and_then(|()| setup::ensure_source_tree(&repo_root()))
            .map(|t| println!("{}", t.display())),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command '{other}'\n{USAGE}")),
        None => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => {
            eprintln!("xtask: done in {:.1?}", started.elapsed());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cluster_cmd(args: &[String]) -> Result<()> {
    let sub = args.first().map(String::as_str).ok_or(USAGE)?;
    let o = parse_opts(&args[1..], "dev")?;
    let dir = Cluster::dir_of(&o.name);
    match sub {
        "up" => {
            let staged = setup::build_plugins(&repo_root())?;
            let mut spec = plugins::sched_malleable(ClusterSpec::new(&o.name, o.nodes), &staged);
            for (k, v) in &o.set {
                spec = spec.set(k, v);
            }
            let mut c = Cluster::up(spec)?;
            c.keep = true;
            println!(
                "cluster '{}' is up with {} nodes (slurmctld on port {}); use it with:",
                o.name, o.nodes, c.ports.base
            );
            println!("  export SLURM_CONF={}", c.conf_path().display());
            println!("logs in {}", c.log_dir().display());
            Ok(())
        }
        "down" => {
            cluster::stop_all_in(&dir);
            println!("cluster '{}' stopped", o.name);
            Ok(())
        }
        "status" => {
            if !dir.exists() {
                return Err(format!("no cluster '{}' (no {})", o.name, dir.display()));
            }
            for (daemon, pid) in cluster::status_of(&dir) {
                match pid {
                    Some(p) => println!("{daemon:<12} running, pid {p}"),
                    None => println!("{daemon:<12} stopped"),
                }
            }
            Ok(())
        }
        other => Err(format!("unknown cluster command '{other}': expected up, down or status")),
    }
}
