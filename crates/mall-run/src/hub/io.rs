//! What the hub is given and what it does, and the rules mall-run's options
//! set: the inputs it takes, the outputs the driver carries out, how the
//! application is launched and resized. The hub's rules (mod.rs and its
//! rooms) and the driver (run.rs) share them.

use std::time::Duration;

use malleable_model::runtime_msg::{Request, Status};
use malleable_rt::wire::Frame;

pub type ConnId = u64;
pub type WorkerId = u32;

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    Frame(ConnId, Frame),
    /// A worker's connection ended (or broke).
    Closed(ConnId),
    /// The job as slurmctld has it now: its status (`None` until the
    /// plugin publishes one) and its nodes.
    Job {
        status: Option<Status>,
        nodes: Vec<String>,
    },
    /// The scheduler took (or refused) a request the hub told it.
    Answered {
        request: Request,
        result: Result<(), String>,
    },
    /// A worker's srun step ended.
    StepExited {
        worker: WorkerId,
        success: bool,
        how: String,
    },
    /// Time passes (reports are sent on it).
    Tick,
}

/// What to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    Reply(ConnId, Frame),
    Close(ConnId),
    /// Start worker `worker` on `node` with srun; `joining` is the
    /// adaptation it joins, 0 for a worker of the start.
    Launch {
        worker: WorkerId,
        node: String,
        joining: u64,
    },
    /// Restart mode: start one step (an MPI application's srun) of
    /// `per_node` workers on each of `nodes`, in that order, numbered from
    /// `first` (the worker of rank r is `first + r`); `joining` as above.
    LaunchStep {
        first: WorkerId,
        nodes: Vec<String>,
        joining: u64,
    },
    /// End the step of `worker` (every worker of it said BYE long ago, and
    /// it runs still): SIGTERM to its srun, which cancels the step.
    EndStep {
        worker: WorkerId,
    },
    /// Write a request to the scheduler (the channel sends them in order).
    Tell(Request),
    Log(String),
    /// Stop: end the steps still running and exit with this code.
    Exit(i32),
}

/// How the application's processes are started and resized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Launch {
    /// One srun step a worker, on one node: an expand starts workers on the
    /// new nodes, a shrink ends those on the leaving ones, and the others
    /// go on (the runtime's messages carry the data).
    #[default]
    Workers,
    /// One step for every worker (an MPI application's srun, whose ranks
    /// cannot take in processes of another step): at a resize the workers
    /// checkpoint and end, and the step starts again on the new node set,
    /// resuming from the checkpoint.
    Restart,
}

/// What the hub is told to do, from mall-run's options.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// Workers a node.
    pub per_node: usize,
    pub launch: Launch,
    /// The fewest seconds between two reports to the scheduler.
    pub report_every: Duration,
    /// The most between two requests to the scheduler: with nothing else
    /// to say, a probe (told in HELLO; the plugin ends a job whose runtime
    /// is silent for ten of these).
    pub heartbeat: Duration,
    /// How long a vanished worker's end is given to turn out a node
    /// failure once its step has ended (slurmctld takes the node out of
    /// the job, and the plugin says so, within a pass or two).
    pub confirm_loss: Duration,
    /// How long a worker whose connection ended, and whose step still
    /// runs, is waited for: its node may be failing, which slurmctld
    /// notices only after SlurmdTimeout (300 s unless set).
    pub wait_for_step: Duration,
    /// How often a worker's step is started before giving up, and the
    /// time between tries: srun fails while slurmctld restarts.
    pub start_tries: u32,
    pub start_again_after: Duration,
    /// Restart mode: how long a step whose every rank said BYE is given to
    /// end (MPI_Finalize, exit) before mall-run ends it.
    pub end_grace: Duration,
    /// As `end_grace`, for the old step of an adaptation whose ranks saved
    /// their data: ending it loses nothing, and the new step's launch and
    /// checkpoint load must still fit in the scheduler's AdaptTimeout.
    pub adapt_end_grace: Duration,
    /// How long a launched step is given for a worker of it to connect
    /// before mall-run ends it and starts it again: a slurmstepd that died
    /// at the launch leaves srun waiting with no word.
    pub connect_within: Duration,
}

/// The old step's grace in an adaptation ([`Rules::adapt_end_grace`]):
/// an MPI_Finalize that works takes well under a second, and one that hangs
/// (MPICH 4.0's) never ends; of the 60 s AdaptTimeout, this leaves the new
/// step's launch and checkpoint load nearly all.
pub const ADAPT_END_GRACE: Duration = Duration::from_secs(5);

/// [`Rules::connect_within`] unless `--connect-within` says otherwise: a
/// step's launch and its application's start to the runtime's init take
/// seconds (MPI_Init included); two minutes leaves a slow start room.
pub const CONNECT_WITHIN: Duration = Duration::from_secs(120);

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            per_node: 1,
            launch: Launch::Workers,
            report_every: Duration::from_secs(5),
            heartbeat: Duration::from_secs(30),
            confirm_loss: Duration::from_secs(15),
            wait_for_step: Duration::from_secs(600),
            start_tries: 3,
            start_again_after: Duration::from_secs(2),
            end_grace: Duration::from_secs(30),
            adapt_end_grace: ADAPT_END_GRACE,
            connect_within: CONNECT_WITHIN,
        }
    }
}
