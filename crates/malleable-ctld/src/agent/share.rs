//! The agent's hands for SD-Policy (D'Amico et al. 2019): a waiting job
//! started on cores of running jobs (its mates), their limits grown, and the
//! sharing recorded in each one's SystemComment, where task/drom on the
//! nodes reads which cores each job keeps.

use std::collections::HashMap;

use malleable_model::log_lines::LogLine;
use malleable_model::{JobId, MateShare, NodeIndex, SharedCores, Time};
use slurm::ctld::{LockGuard, Scheduling};

use super::Agent;
use crate::snapshot::Taken;

/// Whole minutes that hold `seconds` (a limit may only be rounded up).
fn minutes_holding(seconds: Time) -> u32 {
    u32::try_from((seconds.max(60) + 59) / 60).unwrap_or(u32::MAX)
}

/// One Share decision, as the agent carries it out.
pub(super) struct ShareOrder<'a> {
    pub job: JobId,
    pub nodes: &'a [NodeIndex],
    pub cores: u32,
    pub time_limit: Time,
    pub mates: &'a [MateShare],
}

impl Agent {
    /// Start `order.job` on its mates' nodes (select/cons_tres puts it on
    /// their cores: both are oversubscribable, job_submit/malleable saw to
    /// it), under its limit grown by the strategy's predicted increase; then
    /// grow each mate's limit as decided, and record the sharing for the
    /// nodes in `records` (written to the SystemComments after the pass). If
    /// slurmctld refuses the start nothing changes and the job waits.
    pub(super) fn share(
        &mut self,
        guard: &mut LockGuard<Scheduling>,
        taken: &Taken,
        order: ShareOrder<'_>,
        records: &mut HashMap<JobId, SharedCores>,
    ) {
        let ShareOrder { job, nodes, cores, time_limit, mates } = order;
        let table: Vec<usize> = nodes.iter().map(|&i| taken.table_index[i]).collect();
        let of = nodes.iter().map(|&i| taken.snapshot.nodes[i].cores).min().unwrap_or(1);
        let own = taken.snapshot.pending.iter().find(|p| p.id == job).and_then(|p| p.time_limit);
        let limit = minutes_holding(time_limit);
        let started = match guard.start_job(job.0, &table, Some(nodes.len() as u32), Some(limit)) {
            Ok((started, list)) => {
                let detail = format!(
                    " ({}), taken from JobId={}; its time limit {limit} min",
                    self.strategy.name(),
                    mates.iter().map(|m| m.job.to_string()).collect::<Vec<_>>().join(",JobId="),
                );
                let line = LogLine::Started { job: JobId(started), cores: Some((cores, of)), nodes: list, detail };
                log::info!("{line}");
                self.said.start_refused.forget(&job);
                JobId(started)
            }
            Err(e) => {
                self.refused_start(job, nodes.len(), &format!("{e} (on mates' cores)"));
                return;
            }
        };
        let ids: Vec<JobId> = mates.iter().map(|m| m.job).collect();
        let record = |increase| SharedCores { job: started, cores, of, mates: ids.clone(), increase };
        records.insert(started, record(own.map_or(0, |o| (i64::from(limit) * 60 - o).max(0))));
        for m in mates {
            let Some(r) = taken.snapshot.running.iter().find(|r| r.id == m.job) else { continue };
            let before = r.end_limit.unwrap_or(m.end_limit);
            let minutes = minutes_holding(m.end_limit - r.start);
            let grown = (r.start + i64::from(minutes) * 60 - before).max(0);
            match guard.set_time_limit(m.job.0, minutes) {
                Ok(()) => log::info!(
                    "JobId={}: lends {cores} of its {of} cores on each node to JobId={started}; its time limit \
                     grows by {grown} s to {minutes} min",
                    m.job
                ),
                Err(e) => log::error!("JobId={}: its time limit could not grow to {minutes} min: {e}", m.job),
            }
            records.insert(m.job, record(r.sharing.increase + grown));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_in_seconds_becomes_the_whole_minutes_that_hold_it() {
        assert_eq!(minutes_holding(60), 1);
        assert_eq!(minutes_holding(61), 2);
        assert_eq!(minutes_holding(0), 1, "never below a minute");
        assert_eq!(minutes_holding(3600), 60);
    }
}
