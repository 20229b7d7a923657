//! cargo xtask: the developer commands of this workspace (`cargo xtask
//! help` lists them, cli.rs declares them): the demo, the tests, the
//! evaluations and benches, the clusters and sites, the builds per release.

mod cli;
mod compose;
mod demo;
mod slurm_tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use cli::{Cli, ClusterCommand, Command, Eval};
use cluster_eval::replay::ElasticApp;
use cluster_eval::runs::{self, esp::EvalOpts};
use test_tiers::{release_tests, whole_run as test};
use testcluster::cluster::{self, Cluster};
use testcluster::plugins::{self, tool_dir};
use testcluster::ClusterSpec;

pub type Result<T> = std::result::Result<T, String>;

/// The workspace root (xtask sits one level below it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask has a parent").to_path_buf()
}

/// Whether release `v` is the host's (built and run on this machine).
fn is_host(v: &str) -> bool {
    testcluster::SlurmRelease::find(v).is_ok_and(|r| r.is_host())
}

/// `--slurm-source PATH` taken out of `args`, wherever it is: with the
/// `--slurm V` it needs, the source is checked and kept as V's for this
/// command and those that follow (provision::schedmd::choose_source).
fn take_slurm_source(mut args: Vec<String>) -> Result<Vec<String>> {
    let Some(i) = args.iter().position(|a| a == "--slurm-source") else {
        return Ok(args);
    };
    let path = args.get(i + 1).cloned().ok_or("--slurm-source needs a path: a Slurm release tarball or tree")?;
    args.drain(i..i + 2);
    let version = args
        .iter()
        .position(|a| a == "--slurm")
        .and_then(|j| args.get(j + 1))
        .ok_or("--slurm-source needs --slurm VERSION (25.11 or 26.05): the release it is a source of")?;
    let r = testcluster::SlurmRelease::find(version).map_err(|e| format!("--slurm {version}: {e}"))?;
    let source = provision::schedmd::choose_source(&repo_root(), r, Path::new(&path))?;
    eprintln!(
        "xtask: Slurm {} from {} (kept for --slurm {version} from now on)",
        source.upstream,
        source.path.display()
    );
    Ok(args)
}

fn main() -> ExitCode {
    let started = Instant::now();
    let args = match take_slurm_source(std::env::args().skip(1).collect()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("xtask: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cli = match Cli::try_parse_from(std::iter::once("cargo xtask").chain(args.iter().map(String::as_str))) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli.command, &args[1..]) {
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

/// Run `command`; `raw` is its arguments as given, for a command that
/// runs again in another release's image.
fn run(command: Command, raw: &[String]) -> Result<()> {
    // What the evaluation runs are given: where the workspace is, and its target/.
    let root = repo_root();
    let target = root.join("target");
    match command {
        Command::Demo { nodes, keep, strategies, mpi, slurm } => match slurm.other() {
            Some(v) => release_tests::in_release(&root, v, "demo", raw),
            None => demo::run(
                nodes,
                keep,
                &strategies.list.0,
                if mpi { ElasticApp::MpiRestart } else { ElasticApp::Example },
            ),
        },
        Command::Esp(e) => esp(e, false),
        Command::Fidelity(e) => esp(e, true),
        Command::Mpdata { scale, seed, nodes, keep } => {
            runs::mpdata::run(&provision::build::staged_plugins(&root)?, &target, nodes, scale, seed, keep)
        }
        Command::Soak { jobs, nodes } => {
            runs::soak::run(&provision::build::build_plugins(&root)?, &tool_dir(&root), jobs, nodes)
        }
        Command::VersusStock { jobs, nodes } => {
            runs::versus::run(&provision::build::build_plugins(&root)?, &tool_dir(&root), jobs, nodes)
        }
        Command::Test { slurm, no_run } => match (slurm.version.as_deref(), no_run) {
            (None, _) => test::run_all(&root, evaluations()),
            // One release's tier alone (after the host's set-up).
            (Some(v), _) if is_host(v) => {
                Err(format!("test --slurm {v}: the host's release; `cargo xtask test` runs its tiers"))
            }
            (Some(v), false) => test::run_release(&root, v),
            (Some(v), true) => release_tests::compile(&root, v),
        },
        Command::BenchScale { nodes, jobs, strategies, keep, slurm } => match slurm.other() {
            Some(v) => release_tests::in_release(&root, v, "bench-scale", raw),
            None => {
                let only = strategies.as_ref().map(|s| s.0.as_slice());
                runs::bench_scale::run(&provision::build::staged_plugins(&root)?, nodes, jobs, keep, only)
            }
        },
        Command::BenchIpsched { nodes, keep } => {
            runs::bench_ipsched::run(&provision::build::build_plugins(&root)?, nodes, keep)
        }
        Command::BenchResize { nodes, rounds, mpi, slurm } => match slurm.other() {
            Some(v) => release_tests::in_release(&root, v, "bench-resize", raw),
            None => runs::bench_resize::run(
                &provision::build::staged_plugins(&root)?,
                &target,
                nodes,
                rounds,
                mpi.is_some(),
            ),
        },
        Command::BenchSite { rounds, slurm, controller_first } => {
            let v = slurm.or_host();
            runs::bench_site::run(&provision::build::build(&root, v)?, &target, v, rounds, controller_first)
        }
        Command::Chaos { slurm, minutes, seed, keep } => chaos(&root, slurm.or_host(), minutes, seed, keep),
        Command::SlurmTests { short, only, pairs, slurm, testsuite } => {
            slurm_tests::cmd(short, &only, &pairs, slurm.other(), testsuite.as_deref(), raw)
        }
        Command::Cluster(c) => cluster_cmd(c),
        Command::Compose(c) => compose::run(c),
        Command::Build { slurm } => match &slurm.version {
            None => provision::build::build_plugins(&root),
            Some(v) => provision::build::build(&root, v),
        }
        .map(|d| println!("plugins in {}", d.display())),
        Command::SlurmSrc { slurm } => slurm_src_cmd(slurm.or_host()).map(|t| println!("{}", t.display())),
        Command::Cargo { slurm, args } => cargo_cmd(&slurm, &args),
    }
}

/// `esp` and `fidelity` (`strict`: a missed target fails it).
fn esp(o: Eval, strict: bool) -> Result<()> {
    let root = repo_root();
    let e = EvalOpts {
        workload: o.workload,
        nodes: o.nodes,
        scale: o.scale,
        fraction: o.fraction,
        seed: o.seed,
        strategies: o.strategies.list.0,
        keep: o.keep,
    };
    runs::esp::run(&provision::build::staged_plugins(&root)?, &root.join("target"), &e, strict)
}

/// `cargo xtask chaos`: a campaign on a site of Slurm `v`, its report
/// printed; an error when it found a violation.
fn chaos(root: &Path, v: &str, minutes: u32, seed: u64, keep: bool) -> Result<()> {
    let staged = provision::build::build(root, v)?;
    let report = runs::chaos::campaign::run(&staged, &root.join("target"), v, minutes, seed, keep)?;
    println!("{report}");
    match report.violations.len() {
        0 => Ok(()),
        n => Err(format!("chaos: {n} violations")),
    }
}

/// The evaluation commands' short forms `cargo xtask test` runs, each a
/// test: the MPI demo, a soak of 100 jobs, CI's
/// selection of Slurm's own tests under both schedulers. Each checks that
/// every job completed through sched/malleable (and the demo the elastic
/// jobs' results); ESP's short form left CI for the releases' tiers (`cargo
/// xtask esp` runs it), and the fidelity targets are for `cargo xtask
/// fidelity`. Listed here, where the commands are dispatched, so that
/// test.rs imports no other command.
fn evaluations() -> Vec<(&'static str, test::Run)> {
    let both = vec!["easy".to_string(), "mtct-backfill".to_string()];
    let root = repo_root();
    vec![
        // The MPI demo: its elastic jobs the Jacobi restarted, with Open MPI
        // and with bookworm's MPICH, every result checked (the README's
        // `cargo xtask demo` runs in 25.11's tier, release_tests::TIERS).
        ("cargo xtask demo --mpi", Box::new(move || demo::run(16, false, &both, ElasticApp::MpiRestart))),
        (
            "cargo xtask soak --jobs 100",
            Box::new(move || runs::soak::run(&provision::build::build_plugins(&root)?, &tool_dir(&root), 100, 32)),
        ),
        ("cargo xtask slurm-tests --short", Box::new(|| slurm_tests::run(true, &[], &[], None))),
    ]
}

fn slurm_src_cmd(v: &str) -> Result<PathBuf> {
    let root = repo_root();
    let r = testcluster::SlurmRelease::find(v)?;
    if r.is_host() {
        provision::host::ensure_packages()?;
        provision::host::ensure_source_tree(&root)
    } else {
        provision::debian_source::ensure_release_tree(&root, r)
    }
}

/// `cargo --slurm V ARGS...`: ARGS as cargo's, in V's build image.
fn cargo_cmd(v: &str, args: &[String]) -> Result<()> {
    let r = testcluster::SlurmRelease::find(v)?;
    if r.is_host() {
        return Err(format!("cargo --slurm {v}: that is the host's release; run cargo itself"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    provision::build::cargo_in(&repo_root(), r, &args, &[])
}

fn cluster_cmd(c: ClusterCommand) -> Result<()> {
    match c {
        ClusterCommand::Up { which, nodes, set, networked } => {
            let staged = provision::build::build_plugins(&repo_root())?;
            let mut spec = plugins::sched_malleable(ClusterSpec::new(&which.name, nodes), &staged);
            for (k, v) in &set {
                spec = spec.set(k, v);
            }
            if networked {
                spec = spec.networked();
            }
            let mut c = Cluster::up(spec)?;
            c.keep = true;
            println!(
                "cluster '{}' is up with {nodes} nodes (slurmctld on port {}); use it with:",
                which.name, c.ports.base
            );
            println!("  export SLURM_CONF={}", c.conf_path().display());
            println!("logs in {}", c.log_dir().display());
            Ok(())
        }
        ClusterCommand::Down { which } => {
            cluster::stop_all_in(&Cluster::dir_of(&which.name));
            println!("cluster '{}' stopped", which.name);
            Ok(())
        }
        ClusterCommand::Status { which } => {
            let dir = Cluster::dir_of(&which.name);
            if !dir.exists() {
                return Err(format!("no cluster '{}' (no {})", which.name, dir.display()));
            }
            for (daemon, pid) in cluster::status_of(&dir) {
                match pid {
                    Some(p) => println!("{daemon:<12} running, pid {p}"),
                    None => println!("{daemon:<12} stopped"),
                }
            }
            Ok(())
        }
    }
}
