//! Cores below the node: how a running job stands towards SD-Policy's core
//! sharing (D'Amico et al. 2019), where a waiting job starts on cores taken
//! from running jobs (its mates) on their nodes.

use crate::ids::{JobId, Time};

/// A running job's part in core sharing. The default is a job that never
/// shared: alone on its nodes, with every core of each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreSharing {
    /// Its owner let it share nodes (`--malleable-cores`): only then may it
    /// be a mate, or have started on mates' nodes. Never by force.
    pub opted_in: bool,
    /// Seconds it waited in the queue (Eq. 4's wait).
    pub wait: Time,
    /// The cores it has on each of its nodes now, in the order of its
    /// nodes; empty when it has all of each.
    pub cores: Vec<u32>,
    /// The jobs it shares its nodes with now (its mates, or the job started
    /// on its cores); empty when alone.
    pub with: Vec<JobId>,
    /// Seconds of run time sharing has added to its limit so far (Eq. 4's
    /// increase): its limit is its requested time plus this.
    pub increase: Time,
}

impl CoreSharing {
    /// A job whose owner opted in, alone on its nodes, after `wait` seconds queued.
    pub fn opted_in(wait: Time) -> CoreSharing {
        CoreSharing { opted_in: true, wait, ..CoreSharing::default() }
    }

    /// Alone on its nodes with all their cores: free to be a mate.
    pub fn alone(&self) -> bool {
        self.with.is_empty() && self.cores.is_empty()
    }
}

/// What a mate keeps when a job starts on its cores, and its new limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MateShare {
    pub job: JobId,
    /// Cores it keeps on each of its nodes (the rest go to the new job).
    pub kept: u32,
    /// Its end limit grown by its predicted increase (Listing 1's update_stats).
    pub end_limit: Time,
}
