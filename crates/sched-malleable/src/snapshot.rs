//! Translate slurmctld's records into the core's Snapshot, and remember how
//! the core's node indices map back to slurmctld's node table.

use malleable_model::{JobId, Node, NodeIndex, PendingJob, RunningJob, Snapshot};
use slurm::ctld::{JobState, LockGuard, Scheduling};

use crate::config::PowerSettings;

/// A snapshot plus the node-table index of each of its nodes.
pub struct Taken {
    pub snapshot: Snapshot,
    pub table_index: Vec<usize>,
}

/// Read the cluster under the scheduling locks. Pending jobs that cannot run
/// yet (held, unmet dependencies, heterogeneous) are left out of the queue.
/// With `power` (a power-aware strategy), the corridor in force now and
/// every job's draw: `DefaultJobWatts=` until jobs carry their own estimates.
pub fn take(guard: &LockGuard<Scheduling>, now: i64, power: Option<&PowerSettings>) -> Taken {
    let job_power = power.map(PowerSettings::default_job);
    let mut nodes = Vec::new();
    let mut table_index = Vec::new();
    let mut core_index = vec![usize::MAX; guard.node_table_len()];
    for n in guard.nodes() {
        core_index[n.index()] = nodes.len();
        table_index.push(n.index());
        nodes.push(Node { name: n.name(), free: n.is_free() });
    }

    let mut running = Vec::new();
    let mut pending = Vec::new();
    for job in guard.jobs() {
        if job.holds_nodes() {
            let completing = !matches!(job.state(), JobState::Running | JobState::Suspended);
            running.push(RunningJob {
                id: JobId(job.id()),
                nodes: job
                    .node_indices()
                    .into_iter()
                    .filter_map(|i| core_index.get(i).copied().filter(|&c| c != usize::MAX))
                    .collect::<Vec<NodeIndex>>(),
                start: job.start_time(),
                // A completing job's nodes come back as soon as its epilog ends.
                end_limit: if completing { Some(now) } else { job.time_limit_minutes().map(|_| job.end_time()) },
                // The plugin cannot resize jobs yet: every job is rigid to the core.
                malleable: None,
                adapting: false,
                mtct_ratio: None,
                power: job_power,
            });
        } else if job.is_pending() && job.priority() > 0 && !job.is_het_job() && guard.job_is_independent(&job) {
            pending.push(PendingJob {
                id: JobId(job.id()),
                priority: job.priority(),
                submit: job.submit_time(),
                nodes: job.min_nodes(),
                time_limit: job.time_limit_minutes().map(|m| i64::from(m) * 60),
                malleable: None,
                power: job_power,
            });
        }
    }
    let power = power.and_then(|p| p.state_at(now));
    Taken { snapshot: Snapshot { now, nodes, running, pending, power }, table_index }
}
