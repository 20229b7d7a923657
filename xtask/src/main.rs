//! cargo xtask: the developer commands of this workspace.
//!
//!   cargo xtask demo [--nodes N] [--keep]   a local cluster running a demo workload
//!   cargo xtask test                        every test, with its own set-up
//!   cargo xtask cluster up|down|status [--nodes N] [--name NAME]
//!   cargo xtask build                       packages, Slurm source tree, plugins
//!   cargo xtask slurm-src                   prints the configured source tree

mod demo;

use std::process::{Command, ExitCode};
use std::time::Instant;

use xtask::cluster::{self, Cluster, ClusterSpec};
use xtask::{repo_root, setup, Result};

const USAGE: &str = "usage: cargo xtask <command>
  demo [--nodes N] [--keep]              bring up a cluster, run the demo workload, print the schedule
  test                                   unit, property, symbol and real-cluster tests
  cluster up [--nodes N] [--name NAME]   start a cluster and leave it running
  cluster down [--name NAME]             stop it (by pid files)
  cluster status [--name NAME]           which of its daemons run
  build                                  install Slurm, prepare its source tree, build the plugins
  slurm-src                              prepare the source tree and print its path";

/// Ports of `cluster up` clusters: apart from the demo's (17000) and the
/// tests' (17100 and up), so a development cluster can run beside them.
const DEV_PORT_BASE: u16 = 16000;

/// Options shared by the commands.
struct Opts {
    nodes: usize,
    name: String,
    keep: bool,
}

fn parse_opts(args: &[String], default_name: &str) -> Result<Opts> {
    let mut o = Opts { nodes: 8, name: default_name.to_string(), keep: false };
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
        Some("test") => test(),
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
            let plugins = setup::build_plugins(&repo_root())?;
            let mut c = Cluster::up(ClusterSpec::new(&o.name, o.nodes, DEV_PORT_BASE, &plugins))?;
            c.keep = true;
            println!("cluster '{}' is up with {} nodes; use it with:", o.name, o.nodes);
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

/// Everything, in order of cost: set-up, unit and property tests, then the
/// symbol check and the real-cluster tests (marked #[ignore] so that a plain
/// `cargo test` never needs root or a cluster).
fn test() -> Result<()> {
    let root = repo_root();
    let t = Instant::now();
    setup::build_plugins(&root)?;
    eprintln!("xtask: set-up and plugin build took {:.1?}", t.elapsed());
    let tree = setup::source_cache(&root).join(setup::SLURM_SRC_NAME);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let t = Instant::now();
    setup::run(Command::new(&cargo).current_dir(&root).args(["fmt", "--all", "--check"]))
        .map_err(|e| format!("{e}: the tree is not formatted as rustfmt.toml says; run `cargo fmt --all`"))?;
    setup::run(Command::new(&cargo).current_dir(&root).env("SLURM_SRC_DIR", &tree).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))
    .map_err(|e| format!("{e}: clippy has warnings (the workspace denies them)"))?;
    eprintln!("xtask: cargo fmt --check and clippy took {:.1?}", t.elapsed());
    let mut total = TestCounts::default();
    let t = Instant::now();
    let unit =
        run_tests(Command::new(&cargo).current_dir(&root).env("SLURM_SRC_DIR", &tree).args(["test", "--workspace"]));
    eprintln!("xtask: unit and property tests took {:.1?}", t.elapsed());
    total.add(unit?);
    let t = Instant::now();
    let cluster = run_tests(Command::new(&cargo).current_dir(&root).env("SLURM_SRC_DIR", &tree).args([
        "test",
        "-p",
        "xtask",
        "--",
        "--ignored",
        "--test-threads=1",
    ]));
    eprintln!("xtask: symbol check and cluster tests took {:.1?}", t.elapsed());
    total.add(cluster?);
    // One closing line for the whole run (cargo's last line is often a
    // doc-test block with nothing in it).
    println!("tests: {} passed, {} failed", total.passed, total.failed);
    Ok(())
}

#[derive(Default)]
struct TestCounts {
    passed: u64,
    failed: u64,
}

impl TestCounts {
    fn add(&mut self, other: TestCounts) {
        self.passed += other.passed;
        self.failed += other.failed;
    }
}

/// Run `cargo test`, echoing its output, and add up its "test result:" lines.
fn run_tests(cmd: &mut Command) -> Result<TestCounts> {
    use std::io::{BufRead, BufReader};
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let mut counts = TestCounts::default();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test result: ") {
            for part in rest.split([';', '.']) {
                let mut words = part.split_whitespace();
                if let (Some(n), Some(what)) = (words.next().and_then(|n| n.parse::<u64>().ok()), words.next()) {
                    match what {
                        "passed" => counts.passed += n,
                        "failed" => counts.failed += n,
                        _ => {}
                    }
                }
            }
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(counts)
    } else {
        println!("tests: {} passed, {} failed", counts.passed, counts.failed.max(1));
        Err(format!("{cmd:?} failed: {status}"))
    }
}
