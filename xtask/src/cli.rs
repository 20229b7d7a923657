//! xtask's command line, as clap derives it: each command with its options,
//! their defaults and what they allow, so that a bad value is refused as it
//! is read, naming the option, the value and what is allowed.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use cluster_tests::slurm_suites::Setup;

use cluster_eval::runs;
use provision::HOST_RELEASE;

#[derive(Parser, Debug)]
#[command(name = "cargo xtask", about = "The developer commands of this workspace.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The demo workload once per strategy on a local cluster: jobs, summaries
    /// with ratios, a node-occupancy PNG.
    Demo {
        #[arg(long, default_value_t = 16, value_parser = nodes_up_to::<64>)]
        nodes: usize,
        /// Leave the cluster running afterwards.
        #[arg(long)]
        keep: bool,
        #[command(flatten)]
        strategies: Strategies,
        /// The elastic jobs run the MPI Jacobi under `mall-run --mpi restart`.
        #[arg(long)]
        mpi: bool,
        #[command(flatten)]
        slurm: Release,
    },
    /// ESP (230 jobs) F times faster on a local cluster, the simulator beside
    /// it; JSON in target/esp.
    Esp(Eval),
    /// As esp, for either workload, failing when a target is missed.
    Fidelity(Eval),
    /// Iserte et al. 2025's 30 MPDATA jobs F times faster on a local cluster:
    /// the static flavor against Strategy=natural, the simulator beside it.
    Mpdata {
        #[arg(long, default_value_t = runs::mpdata::DEFAULT_SCALE, value_parser = scale)]
        scale: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = malleable_sim::workloads::mpdata::MPDATA_NODES, value_parser = nodes_up_to::<64>)]
        nodes: usize,
        #[arg(long)]
        keep: bool,
    },
    /// N jobs, a third elastic, arrivals compressed, mtct-backfill: counts of
    /// starts, resizes, rollbacks; pass and lock-hold times.
    Soak {
        #[arg(long, default_value_t = 1000, value_parser = jobs)]
        jobs: usize,
        #[arg(long, default_value_t = 32, value_parser = nodes_up_to::<64>)]
        nodes: usize,
    },
    /// sched/malleable (easy) against stock sched/backfill, as shipped and as
    /// SchedMD's HTC guide tunes it: srun latency when idle, then N jobs at once.
    VersusStock {
        #[arg(long, default_value_t = 1000, value_parser = jobs)]
        jobs: usize,
        #[arg(long, default_value_t = 8, value_parser = nodes_up_to::<64>)]
        nodes: usize,
    },
    /// Every strategy's (or those named) pass and lock-hold times in a
    /// slurmctld of N nodes (4 with a slurmd) and N waiting jobs, and stock's.
    BenchScale {
        #[arg(long, default_value_t = 5000, value_parser = nodes_up_to::<100_000>)]
        nodes: usize,
        #[arg(long, default_value_t = 10_000, value_parser = jobs)]
        jobs: usize,
        /// The strategies to time (all if none).
        #[arg(long, value_parser = strategy_list)]
        strategies: Option<StrategyList>,
        #[arg(long)]
        keep: bool,
        #[command(flatten)]
        slurm: Release,
    },
    /// Slurm's own python and expect tests (xtask/slurm-tests/V.list) under
    /// stock sched/backfill and sched/malleable at once, side by side; fails
    /// if one passes under stock only.
    SlurmTests {
        /// CI's selection.
        #[arg(long)]
        short: bool,
        /// Only the tests whose names hold one of these.
        #[arg(long, value_name = "TEXT,...", value_delimiter = ',')]
        only: Vec<String>,
        /// Only the tests of these pairs of clusters.
        #[arg(long, value_name = "P,...", value_delimiter = ',', value_parser = pair)]
        pairs: Vec<Setup>,
        #[command(flatten)]
        slurm: Release,
        /// 25.11 and later: the testsuite/ of SchedMD's repository at the
        /// release's branch point (its release source has none).
        #[arg(long, value_name = "DIR")]
        testsuite: Option<PathBuf>,
    },
    /// One-node resize latency 1 -> N -> 1, table and plot; `--mpi restart`:
    /// of the MPI Jacobi restarted, with Open MPI and with MPICH.
    BenchResize {
        #[arg(long, default_value_t = 32, value_parser = nodes_up_to::<64>)]
        nodes: usize,
        #[arg(long, default_value_t = 5, value_parser = rounds)]
        rounds: usize,
        #[arg(long, value_parser = mpi_mode)]
        mpi: Option<String>,
        #[command(flatten)]
        slurm: Release,
    },
    /// A seeded stream of jobs on a 6-host compose site while faults of nine
    /// kinds are injected at seeded times, then every invariant checked;
    /// fails on any violation.
    Chaos {
        #[command(flatten)]
        slurm: Release,
        #[arg(long, default_value_t = 30, value_parser = minutes)]
        minutes: u32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Leave the site up afterwards.
        #[arg(long)]
        keep: bool,
    },
    /// How long resizes hold slurmctld's locks on a 4-host compose site,
    /// where they wait for slurmdbd.
    BenchSite {
        #[arg(long, default_value_t = 5, value_parser = rounds)]
        rounds: usize,
        #[command(flatten)]
        slurm: Release,
        /// The compute hosts at a low CPU weight, as if the controller had a
        /// host of its own.
        #[arg(long)]
        controller_first: bool,
    },
    /// IPSCHED's pass in slurmctld (and EASY's) on N nodes of 8 CPUs and 2
    /// GPUs with the CPU-GPU ESP's 456 jobs scaled to them waiting.
    BenchIpsched {
        #[arg(long, default_value_t = 16, value_parser = nodes_up_to::<64>)]
        nodes: usize,
        #[arg(long)]
        keep: bool,
    },
    /// Formatting, lints, unit, property, symbol and real-cluster tests;
    /// `--slurm V`: that release's tier alone.
    Test {
        #[command(flatten)]
        slurm: Release,
        /// With --slurm: built, not run.
        #[arg(long, requires = "version")]
        no_run: bool,
    },
    /// A local cluster left running: up, down or status.
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// A whole Slurm site in docker-compose (target/compose/NAME): mariadb,
    /// slurmdbd, slurmctld, login, c1..cN, left running.
    #[command(subcommand)]
    Compose(ComposeCommand),
    /// Install Slurm, prepare its source tree, build the plugins (target/plugins;
    /// another release's in its build image, staged in target/plugins/V).
    Build {
        #[command(flatten)]
        slurm: Release,
    },
    /// Prepare the source tree of a release and print its path.
    SlurmSrc {
        #[command(flatten)]
        slurm: Release,
    },
    /// cargo ARGS in release V's build image (SLURM_SRC_DIR its tree,
    /// CARGO_TARGET_DIR target/slurm-V), e.g. `cargo --slurm 24.11 check -p slurm`.
    Cargo {
        #[arg(long, value_parser = release)]
        slurm: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Start a cluster and leave it running.
    Up {
        #[command(flatten)]
        which: ClusterName,
        #[arg(long, default_value_t = 8, value_parser = nodes_up_to::<64>)]
        nodes: usize,
        /// A slurm.conf key to set (again for more).
        #[arg(long, value_name = "KEY=VALUE", value_parser = key_value)]
        set: Vec<(String, String)>,
        /// Each slurmd in its own network namespace.
        #[arg(long)]
        networked: bool,
    },
    /// Stop it (by pid files).
    Down {
        #[command(flatten)]
        which: ClusterName,
    },
    /// Which of its daemons run.
    Status {
        #[command(flatten)]
        which: ClusterName,
    },
}

#[derive(Subcommand, Debug)]
pub enum ComposeCommand {
    /// Build the images (cached) and start the site.
    Up {
        #[command(flatten)]
        which: SiteName,
        /// Compute hosts.
        #[arg(long, default_value_t = 8, value_parser = nodes_up_to::<32>)]
        nodes: usize,
        #[command(flatten)]
        slurm: Release,
        /// None of our plugins (sched/backfill, no job_submit, nothing built).
        #[arg(long)]
        stock: bool,
        /// malleable.conf's Strategy (mtct-backfill if none).
        #[arg(long, value_parser = strategy)]
        strategy: Option<String>,
        /// A slurm.conf key (PartitionName= replaces the partition line).
        #[arg(long, value_name = "KEY=VALUE", value_parser = key_value)]
        set: Vec<(String, String)>,
        /// A malleable.conf key (e.g. PowerCorridor=300-600).
        #[arg(long, value_name = "KEY=VALUE", value_parser = key_value)]
        malleable: Vec<(String, String)>,
    },
    /// Stop it and remove its containers and network.
    Down {
        #[command(flatten)]
        which: SiteName,
    },
    /// Run CMD on HOST (login, slurmctld, c1, ...), passing its output and
    /// exit code.
    Exec {
        #[command(flatten)]
        which: SiteName,
        /// As this user (root if none).
        #[arg(long, value_parser = name)]
        user: Option<String>,
        host: String,
        #[arg(last = true, required = true)]
        cmd: Vec<String>,
    },
}

#[derive(Args, Debug)]
pub struct SiteName {
    #[arg(long, default_value = "malleable", value_parser = name)]
    pub name: String,
}

#[derive(Args, Debug)]
pub struct ClusterName {
    #[arg(long, default_value = "dev", value_parser = name)]
    pub name: String,
}

/// `--slurm V`: the Slurm release to run on (the host's if none).
#[derive(Args, Debug)]
pub struct Release {
    /// The Slurm release: 22.05 (the host's, if none), 24.11, 25.11, 26.05.
    #[arg(long = "slurm", value_name = "V", value_parser = release)]
    pub version: Option<String>,
}

impl Release {
    /// The release named, or the host's.
    pub fn or_host(&self) -> &str {
        self.version.as_deref().unwrap_or(HOST_RELEASE)
    }

    /// The release named when it is not the host's (run in its image).
    pub fn other(&self) -> Option<&str> {
        self.version.as_deref().filter(|v| !crate::is_host(v))
    }
}

/// `--strategies A,B`, easy and mtct-backfill if none.
#[derive(Args, Debug)]
pub struct Strategies {
    #[arg(long = "strategies", value_name = "A,B", value_parser = strategy_list,
          default_value = "easy,mtct-backfill")]
    pub list: StrategyList,
}

/// The options of esp and fidelity.
#[derive(Args, Debug)]
pub struct Eval {
    #[arg(long, value_parser = ["demo", "esp"], default_value = "esp")]
    pub workload: String,
    /// How many times faster than the workload's own times.
    #[arg(long, default_value_t = runs::esp::DEFAULT_SCALE, value_parser = scale)]
    pub scale: f64,
    /// The share of jobs that are elastic.
    #[arg(long, default_value_t = 0.5, value_parser = fraction)]
    pub fraction: f64,
    #[command(flatten)]
    pub strategies: Strategies,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 32, value_parser = nodes_up_to::<64>)]
    pub nodes: usize,
    #[arg(long)]
    pub keep: bool,
}

/// Strategies by name, each checked as the simulator and the plugin read it.
#[derive(Clone, Debug)]
pub struct StrategyList(pub Vec<String>);

/// A whole number from `lo` to `hi`, or what is allowed.
fn whole_in(v: &str, lo: usize, hi: usize) -> Result<usize, String> {
    v.parse().ok().filter(|n| (lo..=hi).contains(n)).ok_or_else(|| format!("expected a whole number from {lo} to {hi}"))
}

fn nodes_up_to<const MOST: usize>(v: &str) -> Result<usize, String> {
    whole_in(v, 1, MOST)
}

fn jobs(v: &str) -> Result<usize, String> {
    whole_in(v, 1, 100_000)
}

fn rounds(v: &str) -> Result<usize, String> {
    whole_in(v, 1, 100)
}

fn minutes(v: &str) -> Result<u32, String> {
    whole_in(v, 1, 24 * 60).map(|m| m as u32)
}

fn scale(v: &str) -> Result<f64, String> {
    v.parse()
        .ok()
        .filter(|f: &f64| f.is_finite() && *f >= 1.0)
        .ok_or("expected a number from 1 (how many times faster)".into())
}

fn fraction(v: &str) -> Result<f64, String> {
    v.parse().ok().filter(|f| (0.0..=1.0).contains(f)).ok_or("expected a number from 0 to 1".into())
}

fn release(v: &str) -> Result<String, String> {
    testcluster::SlurmRelease::find(v).map(|_| v.to_string())
}

fn strategy_list(v: &str) -> Result<StrategyList, String> {
    let list: Vec<String> = v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    for s in &list {
        malleable_core::StrategyChoice::parse(s)?;
    }
    if list.is_empty() {
        return Err("give at least one strategy".into());
    }
    Ok(StrategyList(list))
}

fn strategy(v: &str) -> Result<String, String> {
    malleable_core::StrategyChoice::parse(v).map(|_| v.to_string())
}

fn pair(v: &str) -> Result<Setup, String> {
    Setup::named(v).ok_or_else(|| "not a pair of clusters: expected plain, dbd, preempt or wide".into())
}

fn mpi_mode(v: &str) -> Result<String, String> {
    match v {
        "restart" => Ok(v.into()),
        _ => {
            Err("expected restart (spawn does not work with Debian's MPIs under srun: see docs/malleable-jobs.md)"
                .into())
        }
    }
}

fn key_value(v: &str) -> Result<(String, String), String> {
    let (k, val) = v.split_once('=').ok_or("expected KEY=VALUE")?;
    Ok((k.to_string(), val.to_string()))
}

fn name(v: &str) -> Result<String, String> {
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') || v.starts_with('-') {
        return Err("expected letters, digits and '-', not first".into());
    }
    Ok(v.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declarations_hold_together() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    fn parse(line: &str) -> Result<Cli, String> {
        Cli::try_parse_from(std::iter::once("cargo xtask").chain(line.split_whitespace())).map_err(|e| e.to_string())
    }

    #[test]
    fn each_command_takes_its_defaults_and_its_options() {
        let Command::Demo { nodes, keep, strategies, mpi, slurm } = parse("demo").unwrap().command else { panic!() };
        assert_eq!((nodes, keep, mpi, slurm.version), (16, false, false, None));
        assert_eq!(strategies.list.0, ["easy", "mtct-backfill"]);
        let Command::Chaos { slurm, minutes, seed, keep } =
            parse("chaos --minutes 4 --seed 3 --slurm 26.05 --keep").unwrap().command
        else {
            panic!()
        };
        assert_eq!((slurm.or_host(), minutes, seed, keep), ("26.05", 4, 3, true));
        let Command::Cargo { slurm, args } =
            parse("cargo --slurm 24.11 clippy -p slurm -- -D warnings").unwrap().command
        else {
            panic!()
        };
        assert_eq!((slurm.as_str(), args.join(" ").as_str()), ("24.11", "clippy -p slurm -- -D warnings"));
        let Command::Cluster(ClusterCommand::Up { which, nodes, set, .. }) =
            parse("cluster up --nodes 4 --set A=1 --set B=x=y").unwrap().command
        else {
            panic!()
        };
        assert_eq!((which.name.as_str(), nodes), ("dev", 4));
        assert_eq!(set, [("A".into(), "1".into()), ("B".into(), "x=y".into())]);
        let Command::Compose(ComposeCommand::Up { which, slurm, stock, .. }) =
            parse("compose up --slurm 26.05 --stock").unwrap().command
        else {
            panic!()
        };
        assert_eq!((which.name.as_str(), slurm.or_host(), stock), ("malleable", "26.05", true));
        let Command::Compose(ComposeCommand::Exec { user, host, cmd, .. }) =
            parse("compose exec --user alice login -- sinfo -N").unwrap().command
        else {
            panic!()
        };
        assert_eq!((user.as_deref(), host.as_str(), cmd.join(" ").as_str()), (Some("alice"), "login", "sinfo -N"));
        let Command::SlurmTests { short, only, pairs, .. } =
            parse("slurm-tests --short --only test_1,test_2 --pairs dbd").unwrap().command
        else {
            panic!()
        };
        assert!(short);
        assert_eq!((only, pairs), (vec!["test_1".to_string(), "test_2".into()], vec![Setup::Dbd]));
    }

    #[test]
    fn a_bad_value_is_refused_naming_the_option_the_value_and_what_is_allowed() {
        for (line, says) in [
            ("demo --nodes 70", "expected a whole number from 1 to 64"),
            ("bench-scale --nodes 0", "expected a whole number from 1 to 100000"),
            ("esp --fraction 2", "expected a number from 0 to 1"),
            ("esp --workload big", "[possible values: demo, esp]"),
            ("bench-resize --mpi spawn", "expected restart"),
            ("demo --strategies easy,nonesuch", "nonesuch"),
            ("cluster up --name a_b", "expected letters, digits and '-'"),
            ("slurm-tests --pairs wider", "expected plain, dbd, preempt or wide"),
            ("compose up --nodes 33", "expected a whole number from 1 to 32"),
            ("chaos --slurm 21.08", "21.08"),
        ] {
            let e = parse(line).unwrap_err();
            let option = line.split_whitespace().find(|w| w.starts_with("--")).unwrap();
            let value = line.split_whitespace().last().unwrap();
            assert!(e.contains(option) && e.contains(value) && e.contains(says), "{line}: {e}");
        }
        assert!(parse("demo --seed 3").unwrap_err().contains("--seed"), "an option of another command");
        assert!(parse("test --no-run").is_err(), "--no-run needs --slurm");
    }
}
