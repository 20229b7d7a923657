//! The mall-run command: its options, the job it runs in, then the driver.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mall_run::channel::Polling;
use mall_run::hub::{Launch, Rules, CONNECT_WITHIN};
use mall_run::run::{run, Settings};

/// Start a malleable application in this Slurm job and carry out its resizes.
///
/// Run from the batch script of a job submitted with --min-nodes-invasive and
/// --max-nodes-invasive: it starts APP once a node (srun), and the
/// application's runtime (malleable-rt) learns from it when to grow or shrink.
#[derive(Parser, Debug)]
#[command(name = "mall-run", version)]
struct Args {
    /// Workers a node.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    per_node: u32,
    /// How often the job's status is read from slurmctld while no resize is under way, in ms.
    #[arg(long, default_value_t = 250, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    poll_ms: u64,
    /// The fewest seconds between two reports of the application's timings to the scheduler.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=3600))]
    report_every: u64,
    /// How often mall-run tells the scheduler it is there, in seconds, when it has nothing else to say:
    /// silent for ten of these (its batch host lost, say), the job is cancelled rather than left to hold
    /// its nodes until its time limit.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    heartbeat: u64,
    /// The name or address the workers reach this host by [default: this node's NodeAddr, else its name].
    #[arg(long)]
    hub_address: Option<String>,
    /// Run an MPI application: `restart` starts all its ranks in one srun step, and at a resize they
    /// checkpoint and end and the step starts again on the new nodes, resuming from the checkpoint.
    #[arg(long, value_enum)]
    mpi: Option<MpiMode>,
    /// srun's --mpi for the application's step (pmix, pmi2, ...) [default: slurm.conf's MpiDefault].
    #[arg(long, requires = "mpi")]
    mpi_plugin: Option<String>,
    /// Restart mode: the seconds a step whose every rank called mall_finish is given to end (MPI_Finalize,
    /// exit) before mall-run ends it.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600), requires = "mpi")]
    end_grace: u64,
    /// The seconds a launched step is given for a worker of it to connect to mall-run before it is
    /// ended and started again (its slurmstepd may have died at the launch, leaving srun waiting).
    #[arg(long, default_value_t = CONNECT_WITHIN.as_secs(), value_parser = clap::value_parser!(u64).range(1..=3600))]
    connect_within: u64,
    /// The application and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    app: Vec<String>,
}

/// How an MPI application is resized.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum MpiMode {
    Restart,
}

fn main() -> ExitCode {
    let args = Args::parse();
    slurm::client::init();
    match start(args) {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("mall-run: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Where the workers reach the hub: this node's address as Slurm knows it
/// (its NodeAddr, which the other nodes reach it at; a site's hostnames may
/// resolve elsewhere, and on a test cluster each node has its own network),
/// else this host's name.
fn default_hub_host() -> String {
    let by_slurm = std::env::var("SLURMD_NODENAME").ok().and_then(|n| slurm::client::node_address(&n).ok());
    let host = by_slurm.unwrap_or_else(|| rustix::system::uname().nodename().to_string_lossy().into_owned());
    // An IPv6 address goes in brackets before the port.
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    }
}

fn start(args: Args) -> Result<i32, String> {
    let job: u32 = std::env::var("SLURM_JOB_ID")
        .ok()
        .and_then(|j| j.parse().ok())
        .ok_or("SLURM_JOB_ID is not set: mall-run runs inside a Slurm job (in its batch script, or under salloc)")?;
    let rec = slurm::client::load_job(job)?;
    let nodes = slurm::client::hostnames(&rec.nodes);
    if nodes.is_empty() {
        return Err(format!("JobId={job} holds no nodes ({})", rec.state));
    }
    let hub_host = match args.hub_address {
        Some(h) => h,
        None => default_hub_host(),
    };
    run(Settings {
        job,
        nodes,
        app: args.app,
        rules: Rules {
            per_node: args.per_node as usize,
            launch: match args.mpi {
                Some(MpiMode::Restart) => Launch::Restart,
                None => Launch::Workers,
            },
            report_every: Duration::from_secs(args.report_every),
            heartbeat: Duration::from_secs(args.heartbeat),
            end_grace: Duration::from_secs(args.end_grace),
            connect_within: Duration::from_secs(args.connect_within),
            ..Rules::default()
        },
        polling: Polling {
            steady: Duration::from_millis(args.poll_ms),
            busy: Duration::from_millis(args.poll_ms.min(50)),
            answer_within: Duration::from_secs(300),
        },
        hub_host,
        mpi_plugin: args.mpi_plugin,
    })
}
