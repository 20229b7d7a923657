//! What a strategy may ask the resource manager to do.

use crate::ids::{JobId, NodeIndex, Time};
use crate::sharing::MateShare;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start this pending job on exactly these nodes; with `time_limit`
    /// (seconds), under that limit instead of its own: shorter, down to its
    /// `--time-min`, to fit a backfill hole, as Slurm's backfill does.
    Start { job: JobId, nodes: Vec<NodeIndex>, time_limit: Option<Time> },
    /// Grow a running malleable job onto these free nodes.
    Expand { job: JobId, add_nodes: Vec<NodeIndex> },
    /// Take these of its nodes from a running malleable job; they come back
    /// free once the adaptation completes.
    Shrink { job: JobId, remove_nodes: Vec<NodeIndex> },
    /// SD-Policy's malleable start: start this waiting job on every node of
    /// its `mates`, with `cores` cores of each taken from the mate there,
    /// under `time_limit` (its own grown by its predicted increase); each
    /// mate keeps the rest and its limit grows as it says. The cores go back
    /// when the job ends; a mate that ends first leaves its cores to it.
    Share { job: JobId, nodes: Vec<NodeIndex>, cores: u32, time_limit: Time, mates: Vec<MateShare> },
    /// Start a waiting job that asks for cores (`PendingJob::cores`) on
    /// part of nodes: `layout` gives each node it uses and its cores there
    /// (IPSCHED's x_ij); it gets its GPUs per node on each.
    Place { job: JobId, layout: Vec<(NodeIndex, u32)> },
    /// Start this waiting job on `nodes` by preempting `victims` (running
    /// jobs slurmctld lets it preempt, `PendingJob::preempts`): the nodes
    /// are free or theirs. Slurm preempts them as its PreemptMode says
    /// (requeue, cancel, suspend) and the job starts once their nodes are
    /// back.
    Preempt { job: JobId, nodes: Vec<NodeIndex>, victims: Vec<JobId> },
}

impl Decision {
    pub fn job(&self) -> JobId {
        match self {
            Decision::Start { job, .. }
            | Decision::Expand { job, .. }
            | Decision::Shrink { job, .. }
            | Decision::Share { job, .. }
            | Decision::Place { job, .. }
            | Decision::Preempt { job, .. } => *job,
        }
    }

    /// Whether it starts a waiting job (rather than resizing a running one).
    pub fn starts_a_job(&self) -> bool {
        match self {
            Decision::Start { .. } | Decision::Share { .. } | Decision::Place { .. } | Decision::Preempt { .. } => true,
            Decision::Expand { .. } | Decision::Shrink { .. } => false,
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Start { nodes, .. } => write!(f, "start on {} nodes", nodes.len()),
            Decision::Expand { add_nodes, .. } => write!(f, "expand by {} nodes", add_nodes.len()),
            Decision::Shrink { remove_nodes, .. } => write!(f, "shrink by {} nodes", remove_nodes.len()),
            Decision::Share { nodes, cores, mates, .. } => {
                write!(f, "start on {cores} cores of each of {} nodes of {} mates", nodes.len(), mates.len())
            }
            Decision::Place { layout, .. } => {
                let cores: u32 = layout.iter().map(|&(_, c)| c).sum();
                write!(f, "start on {cores} cores of {} nodes", layout.len())
            }
            Decision::Preempt { nodes, victims, .. } => {
                write!(f, "start on {} nodes by preempting {} jobs", nodes.len(), victims.len())
            }
        }
    }
}
