//! Ids and times: how the model names a job, a node and an instant.

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

/// Position of a node in [`Snapshot::nodes`](crate::Snapshot::nodes) (for
/// the plugin, mapped to slurmctld's node table, so a decision names nodes
/// without a name lookup).
pub type NodeIndex = usize;
