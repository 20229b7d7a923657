//! The core's view of a cluster at one instant: nodes, running jobs and the
//! queue, in the core's own types, and the decisions a strategy may take.

pub use crate::constraint::{MalleableSpec, NodeConstraint};
pub use crate::power_model::{JobPower, PowerState};

/// Seconds since the Unix epoch (slurmctld's `time_t`); the simulator uses its
/// own epoch. Signed so that differences are plain subtraction.
pub type Time = i64;

/// A job's id as the resource manager knows it (Slurm's job_id).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u32);

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Position of a node in [`Snapshot::nodes`] (for the plugin, in slurmctld's
/// node table, so a decision names nodes without a name lookup).
pub type NodeIndex = usize;

/// What a strategy needs to know about one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// Up, not drained, and allocated to no job: a job may start on it now.
    pub free: bool,
}

impl Node {
    /// Nodes named `n0`, `n1`, ... in order, free as given: the machines of
    /// the simulator, the benchmarks and the tests, which have no names.
    pub fn numbered(free: impl IntoIterator<Item = bool>) -> Vec<Node> {
        free.into_iter().enumerate().map(|(i, free)| Node { name: format!("n{i}"), free }).collect()
    }
}

/// A job that holds nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningJob {
    pub id: JobId,
    pub nodes: Vec<NodeIndex>,
    pub start: Time,
    /// When its time limit runs out: the latest moment its nodes come back.
    /// `None` for an unlimited job, whose nodes never come back as far as
    /// planning can tell.
    pub end_limit: Option<Time>,
    /// `None` for a rigid job (it keeps its nodes until it ends).
    pub malleable: Option<MalleableSpec>,
    /// Seed 002's ADAPTING state: an expand or shrink of this job is under
    /// way, so its node count is about to change (section IV-C).
    pub adapting: bool,
    /// The job's measured MPI-to-compute time ratio (seed 002, section IV-D),
    /// reset after each adaptation; `None` until measured. Higher means less
    /// efficient, so shrunk first and expanded last.
    pub mtct_ratio: Option<f64>,
    /// Its draw per node, for the power-aware strategy; `None` when unknown
    /// (the plugin fills in `DefaultJobWatts=`).
    pub power: Option<JobPower>,
}

impl RunningJob {
    /// A running malleable job that may be resized now: not mid-adaptation.
    pub fn resizable(&self) -> Option<&MalleableSpec> {
        self.malleable.as_ref().filter(|_| !self.adapting)
    }
}

/// A job waiting in the queue that may be started now (its dependencies are
/// met and it is not held: the plugin filters the others out).
#[derive(Clone, Debug, PartialEq)]
pub struct PendingJob {
    pub id: JobId,
    /// Higher runs first.
    pub priority: u32,
    pub submit: Time,
    /// Nodes it asks for (a rigid job gets exactly this many).
    pub nodes: u32,
    /// Its time limit in seconds; `None` if unlimited.
    pub time_limit: Option<Time>,
    /// `None` for a rigid job. A malleable job starts on `nodes` (its
    /// `--nodes`) and may later be resized within the spec.
    pub malleable: Option<MalleableSpec>,
    /// Its users' per-node power estimates (`--min-power` / `--max-power`).
    pub power: Option<JobPower>,
}

/// Everything a scheduling pass sees.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub now: Time,
    pub nodes: Vec<Node>,
    pub running: Vec<RunningJob>,
    pub pending: Vec<PendingJob>,
    /// The corridor and idle draw, when the site runs the power-aware
    /// strategy; the other strategies ignore it.
    pub power: Option<PowerState>,
}

impl Snapshot {
    /// Indices of the nodes a job could start on now, in table order.
    pub fn free_nodes(&self) -> Vec<NodeIndex> {
        (0..self.nodes.len()).filter(|&i| self.nodes[i].free).collect()
    }

    /// Pending jobs in the order the queue serves them: priority first, then
    /// the earlier submission, then the lower id (so the order is total).
    pub fn queue_order(&self) -> Vec<&PendingJob> {
        let mut q: Vec<&PendingJob> = self.pending.iter().collect();
        q.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.submit.cmp(&b.submit)).then(a.id.cmp(&b.id)));
        q
    }
}

/// What a strategy asks the resource manager to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start this pending job on exactly these nodes.
    Start { job: JobId, nodes: Vec<NodeIndex> },
    /// Grow a running malleable job onto these free nodes.
    Expand { job: JobId, add_nodes: Vec<NodeIndex> },
    /// Take these of its nodes from a running malleable job; they come back
    /// free once the adaptation completes.
    Shrink { job: JobId, remove_nodes: Vec<NodeIndex> },
}

impl Decision {
    pub fn job(&self) -> JobId {
        match self {
            Decision::Start { job, .. } | Decision::Expand { job, .. } | Decision::Shrink { job, .. } => *job,
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Start { nodes, .. } => write!(f, "start on {} nodes", nodes.len()),
            Decision::Expand { add_nodes, .. } => write!(f, "expand by {} nodes", add_nodes.len()),
            Decision::Shrink { remove_nodes, .. } => {
                write!(f, "shrink by {} nodes", remove_nodes.len())
            }
        }
    }
}
