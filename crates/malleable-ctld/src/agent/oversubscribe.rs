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
use malleable_model::log_lines::LogLine;
use malleable_model::{Decision, JobId, PendingJob};
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
        if taken.oversubscribers.is_empty() {
            return;
        }
        let busy: Vec<usize> = (0..taken.snapshot.nodes.len())
            .filter(|&i| !taken.snapshot.nodes[i].free && taken.usable_at[i])
            .map(|i| taken.table_index[i])
            .collect();
        if busy.is_empty() {
            return;
        }
        let decided: HashSet<JobId> = decisions.iter().map(Decision::job).collect();
        let now = taken.snapshot.now;
        // Ends before every other waiting job's expected start, or none has one.
        let mut starts: Vec<(i64, JobId)> = waits.iter().filter_map(|w| Some((w.start?, w.job))).collect();
        starts.sort_unstable();
        let delays_no_one = |p: &PendingJob| {
            let first = starts.iter().find(|(_, j)| *j != p.id).map(|&(t, _)| t);
            first.is_none_or(|start| p.time_limit.is_some_and(|l| now.saturating_add(l) <= start))
        };
        let may: HashSet<JobId> = taken.oversubscribers.iter().copied().collect();
        let mut sharing: Vec<&PendingJob> = taken
            .snapshot
            .pending
            .iter()
            .filter(|p| may.contains(&p.id) && !decided.contains(&p.id) && delays_no_one(p))
            .collect();
        sharing.sort_by(|a, b| PendingJob::queue_cmp(a, b));
        let sharing: Vec<JobId> = sharing.into_iter().map(|p| p.id).take(OFFERS).collect();
        for job in sharing {
            // Read again at the next pass, started or not (the kept queue).
            self.kept.feed.touched(job.0);
            if let Ok((started, list)) = guard.start_sharing(job.0, &busy) {
                self.said.start_refused.forget(&job);
                let detail =
                    format!(" ({}), sharing cores there as its partition's OverSubscribe allows", self.strategy.name());
                log::info!("{}", LogLine::Started { job: JobId(started), cores: None, nodes: list, detail });
            }
        }
    }
}
