//! cargo xtask: the developer commands of this workspace.
//!
//!   cargo xtask demo [--nodes N] [--keep] [--strategies A,B] [--mpi] [--slurm V]   easy against mtct-backfill on a local cluster
//!   cargo xtask esp [--scale F] [--fraction X] [--strategies A,B] [--seed S]   ESP on a 32-node cluster
//!   cargo xtask fidelity [--workload demo|esp] ...   the same workload real and simulated
//!   cargo xtask mpdata [--scale F] [--seed S]   Iserte et al. 2025's MPDATA, static against natural, on 31 nodes
//!   cargo xtask soak [--jobs N]   many jobs, a third elastic, resizing often
//!   cargo xtask versus-stock [--jobs N]   srun latency and a burst of short jobs, ours against stock Slurm
//!   cargo xtask bench-scale [--nodes N] [--jobs N] [--strategies A,B] [--slurm V]   pass and lock-hold times with 5,000 nodes, 10,000 jobs
//!   cargo xtask bench-resize [--nodes N] [--rounds R] [--mpi restart] [--slurm V]   one-node resize latency, 1 to N nodes
//!   cargo xtask bench-ipsched [--nodes N]   IPSCHED's pass in slurmctld, nodes of 8 CPUs and 2 GPUs
//!   cargo xtask bench-site [--rounds R] [--slurm V] [--controller-first]   locks held by resizes on the compose site (slurmdbd)
//!   cargo xtask chaos [--slurm V] [--minutes M] [--seed S] [--keep]   jobs under random faults on the compose site, invariants checked
//!   cargo xtask test                        every test, with its own set-up
//!   cargo xtask cluster up|down|status [--nodes N] [--name NAME]
//!   cargo xtask compose up|down|exec ...   a whole site in docker-compose
//!   cargo xtask build [--slurm V]           packages, Slurm source tree, plugins (V: 22.05 on the host, 24.11 in trixie)
//!   cargo xtask slurm-src [--slurm V]       prints the configured source tree
//!   cargo xtask cargo --slurm V ARGS...     cargo ARGS in release V's build image

mod beside;
mod compose;
mod demo;
mod release_tests;
mod slurm_tests;
mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use cluster_eval::replay::ElasticApp;
use cluster_eval::runs::{self, esp::EvalOpts};
use provision::HOST_RELEASE;
use testcluster::cluster::{self, Cluster};
use testcluster::plugins::{self, tool_dir};
use testcluster::ClusterSpec;

pub type Result<T> = std::result::Result<T, String>;

const USAGE: &str = "usage: cargo xtask <command>
  demo [--nodes N] [--keep] [--strategies A,B] [--mpi] [--slurm V]
                                         the demo workload once per strategy (16; easy,mtct-backfill):
                                         jobs, summaries with ratios, node-occupancy PNG; --mpi: the elastic
                                         jobs run the MPI Jacobi under mall-run --mpi restart
  esp [--scale F] [--fraction X] [--strategies A,B] [--seed S] [--nodes N]
                                         ESP (230 jobs) F times faster on a local cluster (32 nodes, F 20,
                                         X 0.5, easy,mtct-backfill), the simulator beside it; JSON in target/esp
  fidelity [--workload demo|esp] [...]   as esp, for either workload, and fails when a target is missed
  mpdata [--scale F] [--seed S] [--nodes N] [--keep]
                                         Iserte et al. 2025's 30 MPDATA jobs F times faster (10) on a local
                                         cluster (31 nodes): static flavor against Strategy=natural, the
                                         simulator beside it; JSON in target/mpdata
  soak [--jobs N] [--nodes N]            N jobs (1000), a third elastic, arrivals compressed, mtct-backfill:
                                         counts of starts, resizes, rollbacks; pass and lock-hold times
  versus-stock [--jobs N] [--nodes N]   sched/malleable (easy) against stock sched/backfill, as shipped and as
                                         SchedMD's HTC guide tunes it, on one cluster (8): srun latency when
                                         idle, then N jobs (1000) of 1-4 nodes and 0-2 s at once: total time,
                                         mean wait, node time used, end-to-start hand-off
  bench-scale [--nodes N] [--jobs N] [--strategies A,B] [--keep] [--slurm V]
                                         every strategy's (or those named) pass and lock-hold times in a
                                         slurmctld of N nodes (5000, 4 with a slurmd) and N waiting jobs
                                         (10000), squeue meanwhile, and stock's
  slurm-tests [--short] [--only TEXT,...] [--pairs P,...] [--slurm V] [--testsuite DIR]
                                         Slurm's own python and expect tests (xtask/slurm-tests/V.list; --short:
                                         CI's selection; --pairs: the tests of these pairs of clusters only,
                                         plain, dbd, preempt, wide) under stock sched/backfill and
                                         sched/malleable at once, side by side; fails if one passes under stock
                                         only. 25.11 and later:
                                         DIR is the testsuite/ of SchedMD's repository at the release's branch
                                         point (its release source has none)
  bench-resize [--nodes N] [--rounds R] [--mpi restart] [--slurm V]
                                         one-node resize latency 1 -> N -> 1, table and plot (32, 5); --mpi
                                         restart: of the MPI Jacobi restarted, with Open MPI and with MPICH
  chaos [--slurm V] [--minutes M] [--seed S] [--keep]
                                         a seeded stream of jobs on a 6-host compose site while faults of nine
                                         kinds are injected at seeded times (30 minutes, seed 1), then every
                                         invariant checked; a table, and `chaos: F faults (K kinds), J jobs,
                                         V violations`; fails on any violation; --keep leaves the site up
  bench-site [--rounds R] [--slurm V] [--controller-first]
                                         how long resizes hold slurmctld's locks on a 4-host compose site,
                                         where they wait for slurmdbd (R shrink-and-grow rounds, 5);
                                         --controller-first: the compute hosts at a low CPU weight, as if the
                                         controller had a host of its own
  bench-ipsched [--nodes N] [--keep]     IPSCHED's pass in slurmctld (and EASY's) on N nodes (16) of 8 CPUs and
                                         2 GPUs with the CPU-GPU ESP's 456 jobs scaled to them waiting
  test [--slurm V [--no-run]]           formatting, lints, unit, property, symbol and real-cluster tests
                                         (--slurm 24.11: that release's tier only; --no-run: built, not run)
  cluster up [--nodes N] [--name NAME] [--set KEY=VALUE]... [--networked]
                                         start a cluster and leave it running (KEY=VALUE in slurm.conf;
                                         --networked: each slurmd in its own network namespace)
  cluster down [--name NAME]             stop it (by pid files)
  compose up|down|exec ...               a whole site in docker-compose (target/compose/NAME): mariadb,
                                         slurmdbd, slurmctld, login, c1..cN; `cargo xtask compose` says more
  cluster status [--name NAME]           which of its daemons run
  build [--slurm V]                      install Slurm, prepare its source tree, build the plugins (target/plugins,
                                         and target/plugins/22.05); --slurm 24.11: in trixie's build image, its
                                         source tree in .cache/slurm-src-24.11, staged in target/plugins/24.11
  slurm-src [--slurm V]                  prepare the source tree (of release V: 22.05, 24.11) and print its path
  cargo --slurm V ARGS...                cargo ARGS in release V's build image (SLURM_SRC_DIR its tree,
                                         CARGO_TARGET_DIR target/slurm-V), e.g. cargo --slurm 24.11 check -p slurm";

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
    strategies: Vec<String>,
    /// Whether `--strategies` was given (bench-scale runs all otherwise).
    strategies_given: bool,
    /// How many times faster than the workload's own times.
    scale: f64,
    fraction: f64,
    seed: u64,
    workload: String,
    jobs: usize,
    /// `cluster up --networked`: each slurmd in its own network namespace.
    networked: bool,
    /// `demo --slurm V`: the Slurm release to run on (the host's if none).
    slurm: Option<String>,
    /// `bench-resize --mpi MODE`: the MPI applications' resize mode.
    mpi: Option<String>,
    /// `bench-site --controller-first`: the compute hosts at a low CPU weight.
    controller_first: bool,
    /// `chaos --minutes M`: the campaign's length.
    minutes: u32,
}

/// Whether release `v` is the host's (built and run on this machine).
fn is_host(v: &str) -> bool {
    testcluster::SlurmRelease::find(v).is_ok_and(|r| r.is_host())
}

/// A whole-number option's value from `lo` to `hi`.
pub fn whole(flag: &str, value: Option<&String>, lo: usize, hi: usize) -> Result<usize> {
    let v = value.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| format!("{flag} {v}: expected a whole number from {lo} to {hi}"))
}

fn parse_opts(args: &[String], default_name: &str) -> Result<Opts> {
    let nodes = match default_name {
        "bench" | "esp" | "fidelity" | "soak" => 32,
        "mpdata" => malleable_sim::workloads::mpdata::MPDATA_NODES,
        "demo" | "ipsched" => 16,
        "scale" => 5000,
        _ => 8,
    };
    let mut o = Opts {
        nodes,
        name: default_name.to_string(),
        keep: false,
        rounds: 5,
        set: Vec::new(),
        strategies: vec!["easy".into(), "mtct-backfill".into()],
        strategies_given: false,
        scale: if default_name == "mpdata" { runs::mpdata::DEFAULT_SCALE } else { runs::esp::DEFAULT_SCALE },
        fraction: 0.5,
        seed: 1,
        workload: "esp".into(),
        jobs: if default_name == "scale" { 10_000 } else { 1000 },
        networked: false,
        slurm: None,
        mpi: None,
        controller_first: false,
        minutes: 30,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--nodes" => {
                let most = if default_name == "scale" { 100_000 } else { 64 };
                o.nodes = whole("--nodes", it.next(), 1, most)?;
            }
            "--name" => {
                let v = it.next().ok_or("--name needs a value")?;
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                    return Err(format!("--name {v}: expected letters, digits and '-'"));
                }
                o.name = v.clone();
            }
            "--keep" => o.keep = true,
            "--slurm" if ["demo", "bench", "bench-site", "scale", "chaos"].contains(&default_name) => {
                let v = it.next().ok_or("--slurm needs a version, e.g. 26.05")?;
                testcluster::SlurmRelease::find(v).map_err(|e| format!("--slurm {v}: {e}"))?;
                o.slurm = Some(v.clone());
            }
            "--networked" => o.networked = true,
            "--controller-first" if default_name == "bench-site" => o.controller_first = true,
            "--mpi" if default_name == "demo" => o.mpi = Some("restart".into()),
            "--mpi" if default_name == "bench" => {
                let v = it.next().ok_or("--mpi needs a mode: restart")?;
                if v != "restart" {
                    return Err(format!(
                        "--mpi {v}: expected restart (spawn does not work with Debian's MPIs under srun: see \
                         docs/malleable-jobs.md)"
                    ));
                }
                o.mpi = Some(v.clone());
            }
            "--set" => {
                let v = it.next().ok_or("--set needs KEY=VALUE")?;
                let (k, val) = v.split_once('=').ok_or_else(|| format!("--set {v}: expected KEY=VALUE"))?;
                o.set.push((k.to_string(), val.to_string()));
            }
            "--minutes" if default_name == "chaos" => {
                o.minutes = whole("--minutes", it.next(), 1, 24 * 60)? as u32;
            }
            "--rounds" => {
                o.rounds = whole("--rounds", it.next(), 1, 100)?;
            }
            "--strategies" => {
                let v = it.next().ok_or("--strategies needs a value")?;
                o.strategies = v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                for s in &o.strategies {
                    malleable_core::StrategyChoice::parse(s).map_err(|e| format!("--strategies {v}: {e}"))?;
                }
                if o.strategies.is_empty() {
                    return Err(format!("--strategies {v}: give at least one strategy"));
                }
                o.strategies_given = true;
            }
            "--scale" => {
                let v = it.next().ok_or("--scale needs a value")?;
                o.scale = v
                    .parse()
                    .ok()
                    .filter(|f: &f64| f.is_finite() && *f >= 1.0)
                    .ok_or_else(|| format!("--scale {v}: expected a number from 1 (how many times faster)"))?;
            }
            "--fraction" => {
                let v = it.next().ok_or("--fraction needs a value")?;
                o.fraction = v
                    .parse()
                    .ok()
                    .filter(|f| (0.0..=1.0).contains(f))
                    .ok_or_else(|| format!("--fraction {v}: expected a number from 0 to 1"))?;
            }
            "--seed" => {
                let v = it.next().ok_or("--seed needs a value")?;
                o.seed = v.parse().map_err(|_| format!("--seed {v}: expected a whole number"))?;
            }
            "--workload" => {
                let v = it.next().ok_or("--workload needs a value")?;
                if !["demo", "esp"].contains(&v.as_str()) {
                    return Err(format!("--workload {v}: expected demo or esp"));
                }
                o.workload = v.clone();
            }
            "--jobs" => {
                o.jobs = whole("--jobs", it.next(), 1, 100_000)?;
            }
            other => return Err(format!("unknown option '{other}'\n{USAGE}")),
        }
    }
    Ok(o)
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
    // What the evaluation runs are given: where the workspace is, and its target/.
    let root = repo_root();
    let target = root.join("target");
    let result = match args.first().map(String::as_str) {
        Some("demo") => parse_opts(&args[1..], "demo").and_then(|o| match &o.slurm {
            Some(v) if !is_host(v) => release_tests::in_release(&repo_root(), v, "demo", &args[1..]),
            _ => {
                let app = if o.mpi.is_some() { ElasticApp::MpiRestart } else { ElasticApp::Example };
                demo::run(o.nodes, o.keep, &o.strategies, app)
            }
        }),
        Some("esp") => parse_opts(&args[1..], "esp").and_then(|o| esp(o, false)),
        Some("fidelity") => parse_opts(&args[1..], "fidelity").and_then(|o| esp(o, true)),
        Some("mpdata") => parse_opts(&args[1..], "mpdata").and_then(|o| {
            runs::mpdata::run(&provision::build::staged_plugins(&root)?, &target, o.nodes, o.scale, o.seed, o.keep)
        }),
        Some("soak") => parse_opts(&args[1..], "soak")
            .and_then(|o| runs::soak::run(&provision::build::build_plugins(&root)?, &tool_dir(&root), o.jobs, o.nodes)),
        Some("versus-stock") => parse_opts(&args[1..], "versus").and_then(|o| {
            runs::versus::run(&provision::build::build_plugins(&root)?, &tool_dir(&root), o.jobs, o.nodes)
        }),
        Some("test") => match args.get(1).map(String::as_str) {
            None => test::run_all(&repo_root(), evaluations()),
            // One release's tier alone (after the host's set-up).
            Some("--slurm") => match args.get(2) {
                Some(v) if !is_host(v) => match args.get(3).map(String::as_str) {
                    None => test::run_release(&repo_root(), v),
                    Some("--no-run") => release_tests::compile(&repo_root(), v),
                    Some(other) => Err(format!("test --slurm {v}: unknown option '{other}'; expected --no-run")),
                },
                Some(v) => Err(format!("test --slurm {v}: the host's release; `cargo xtask test` runs its tiers")),
                None => Err("test --slurm needs a version, e.g. 24.11".into()),
            },
            Some(other) => Err(format!("test: unknown option '{other}'\n{USAGE}")),
        },
        Some("bench-scale") => parse_opts(&args[1..], "scale").and_then(|o| match &o.slurm {
            Some(v) if !is_host(v) => release_tests::in_release(&repo_root(), v, "bench-scale", &args[1..]),
            _ => {
                let only = o.strategies_given.then_some(o.strategies.as_slice());
                runs::bench_scale::run(&provision::build::staged_plugins(&root)?, o.nodes, o.jobs, o.keep, only)
            }
        }),
        Some("bench-ipsched") => parse_opts(&args[1..], "ipsched")
            .and_then(|o| runs::bench_ipsched::run(&provision::build::build_plugins(&root)?, o.nodes, o.keep)),
        Some("bench-resize") => parse_opts(&args[1..], "bench").and_then(|o| match &o.slurm {
            Some(v) if !is_host(v) => release_tests::in_release(&repo_root(), v, "bench-resize", &args[1..]),
            _ => runs::bench_resize::run(
                &provision::build::staged_plugins(&root)?,
                &target,
                o.nodes,
                o.rounds,
                o.mpi.is_some(),
            ),
        }),
        Some("bench-site") => parse_opts(&args[1..], "bench-site").and_then(|o| {
            let v = o.slurm.as_deref().unwrap_or(HOST_RELEASE);
            runs::bench_site::run(&provision::build::build(&root, v)?, &target, v, o.rounds, o.controller_first)
        }),
        Some("chaos") => parse_opts(&args[1..], "chaos")
            .and_then(|o| chaos(&root, o.slurm.as_deref().unwrap_or(HOST_RELEASE), o.minutes, o.seed, o.keep)),
        Some("slurm-tests") => slurm_tests::cmd(&args[1..]),
        Some("cluster") => cluster_cmd(&args[1..]),
        Some("compose") => compose::run(&args[1..]),
        Some("build") => slurm_flag(&args[1..])
            .and_then(|v| match v {
                None => provision::build::build_plugins(&repo_root()),
                Some(v) => provision::build::build(&repo_root(), &v),
            })
            .map(|d| println!("plugins in {}", d.display())),
        Some("slurm-src") => slurm_src_cmd(&args[1..]).map(|t| println!("{}", t.display())),
        Some("cargo") => cargo_cmd(&args[1..]),
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

/// `esp` and `fidelity` (`strict`: a missed target fails it).
fn esp(o: Opts, strict: bool) -> Result<()> {
    let root = repo_root();
    let e = EvalOpts {
        workload: o.workload,
        nodes: o.nodes,
        scale: o.scale,
        fraction: o.fraction,
        seed: o.seed,
        strategies: o.strategies,
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

/// `--slurm VERSION` as the only option, if given.
fn slurm_flag(args: &[String]) -> Result<Option<String>> {
    match args {
        [] => Ok(None),
        [flag, v] if flag == "--slurm" => Ok(Some(v.clone())),
        _ => Err(format!("expected nothing or --slurm VERSION (22.05, 24.11, 25.11, 26.05), not '{}'", args.join(" "))),
    }
}

fn slurm_src_cmd(args: &[String]) -> Result<PathBuf> {
    let root = repo_root();
    let r = testcluster::SlurmRelease::find(slurm_flag(args)?.as_deref().unwrap_or(HOST_RELEASE))?;
    if r.is_host() {
        provision::host::ensure_packages()?;
        provision::host::ensure_source_tree(&root)
    } else {
        provision::debian_source::ensure_release_tree(&root, r)
    }
}

/// `cargo --slurm V ARGS...`: ARGS as cargo's, in V's build image.
fn cargo_cmd(args: &[String]) -> Result<()> {
    let [flag, v, rest @ ..] = args else {
        return Err("cargo: expected --slurm VERSION ARGS... (e.g. --slurm 24.11 check -p slurm)".into());
    };
    if flag != "--slurm" || rest.is_empty() {
        return Err("cargo: expected --slurm VERSION ARGS... (e.g. --slurm 24.11 check -p slurm)".into());
    }
    let r = testcluster::SlurmRelease::find(v)?;
    if r.is_host() {
        return Err(format!("cargo --slurm {v}: that is the host's release; run cargo itself"));
    }
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    provision::build::cargo_in(&repo_root(), r, &rest, &[])
}

fn cluster_cmd(args: &[String]) -> Result<()> {
    let sub = args.first().map(String::as_str).ok_or(USAGE)?;
    let o = parse_opts(&args[1..], "dev")?;
    let dir = Cluster::dir_of(&o.name);
    match sub {
        "up" => {
            let staged = provision::build::build_plugins(&repo_root())?;
            let mut spec = plugins::sched_malleable(ClusterSpec::new(&o.name, o.nodes), &staged);
            for (k, v) in &o.set {
                spec = spec.set(k, v);
            }
            if o.networked {
                spec = spec.networked();
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
