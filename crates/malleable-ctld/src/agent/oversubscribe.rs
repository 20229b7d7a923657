//! The agent's hands for partitions that let jobs share cores
//! (`OverSubscribe=YES` with a job's `--oversubscribe`, or `FORCE`): after
//! the strategy's decisions, a waiting job it left waiting that may share is
//! offered the busy nodes of the cluster, and Slurm's node selection puts
//! it on the cores there it may share, as under stock Slurm. The strategies
//! count whole nodes; a free node stays theirs to hand out, and a job that
//! would hold a busy node past a waiting job's expected start (its
//! reservation there) is not offered any: it could delay that start.

use std::collections::HashSet;

use malleable_core::Waiting;
use malleable_model::{Decision, JobId};
use slurm::ctld::{LockGuard, Scheduling};

use super::Agent;
use crate::snapshot::Taken;

/// How many waiting jobs a pass offers busy nodes to: each offer is a
/// select_nodes call under the locks.
const OFFERS: usize = 20;

impl Agent {
    /// Start, in queue order, the waiting jobs `decisions` left waiting that
    /// may share cores, on busy nodes where Slurm finds room for them.
    pub(super) fn oversubscribe(
        &mut self,
        guard: &mut LockGuard<Scheduling>,
        taken: &Taken,
        decisions: &[Decision],
        waits: &[Waiting],
    ) {
        let busy: Vec<usize> = (0..taken.snapshot.nodes.len())
            .filter(|&i| !taken.snapshot.nodes[i].free && taken.usable.contains(&taken.snapshot.nodes[i].name))
            .map(|i| taken.table_index[i])
            .collect();
        if busy.is_empty() {
            return;
        }
        let decided: HashSet<JobId> = decisions.iter().map(Decision::job).collect();
        let now = taken.snapshot.now;
        // Ends before every other waiting job's expected start, or none has one.
        let delays_no_one = |p: &malleable_model::PendingJob| {
            let first = waits.iter().filter(|w| w.job != p.id).filter_map(|w| w.start).min();
            first.is_none_or(|start| p.time_limit.is_some_and(|l| now.saturating_add(l) <= start))
        };
        let sharing: Vec<JobId> = taken
            .snapshot
            .queue_order()
            .into_iter()
            .filter(|p| !decided.contains(&p.id) && p.malleable.is_none() && delays_no_one(p))
            .filter(|p| guard.find_job(p.id.0).is_some_and(|j| j.is_pending() && j.may_oversubscribe()))
            .map(|p| p.id)
            .take(OFFERS)
            .collect();
        for job in sharing {
            if let Ok((started, list)) = guard.start_sharing(job.0, &busy) {
                self.refused.remove(&job);
                log::info!(
                    "started JobId={started} on {list} ({}), sharing cores there as its partition's OverSubscribe \
                     allows",
                    self.strategy.name()
                );
            }
        }
    }
}
