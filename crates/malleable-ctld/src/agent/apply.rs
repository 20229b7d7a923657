//! Carrying out the strategy's decisions in slurmctld, under the scheduling
//! locks: a start (`select_nodes` on exactly the chosen nodes), an expand
//! (a helper job merged into the job), a shrink (the job marked shrinking,
//! its nodes freed at its commit); a start on mates' cores is `share.rs`.

use std::collections::HashMap;

use malleable_model::log_lines::LogLine;
use malleable_model::runtime_msg::{Phase, Status};
use malleable_model::{Decision, JobId, SharedCores};
use slurm::ctld::{LockGuard, Preempting, Scheduling};

use super::share::ShareOrder;
use super::Agent;
use crate::adaptation;
use crate::snapshot::Taken;

impl Agent {
    /// Carry out one valid decision; `taken` is the cluster as read for it.
    pub(super) fn apply(
        &mut self,
        guard: &mut LockGuard<Scheduling>,
        taken: &Taken,
        d: &Decision,
        statuses: &mut HashMap<JobId, Status>,
        records: &mut HashMap<JobId, SharedCores>,
        now: i64,
    ) {
        // A start is checked against the live record first: the queue the
        // strategy decided on may hold a job as it was some passes ago (the
        // feed reads only what changed), and select_nodes refuses a held job
        // but not one whose dependency came back or whose limits now stop it.
        if d.starts_a_job() && !still_startable(guard, d.job()) {
            log::debug!("JobId={}: no longer startable as it was read, decided again at the next pass", d.job());
            self.pacing.force_next = true;
            return;
        }
        let table = |nodes: &[usize]| -> Vec<usize> { nodes.iter().map(|&i| taken.table_index[i]).collect() };
        let names = |nodes: &[usize]| -> Vec<String> {
            nodes.iter().map(|&i| taken.snapshot.nodes[i].name.to_string()).collect()
        };
        match d {
            Decision::Start { job, nodes, time_limit } => {
                // A moldable start (fewer nodes than asked for): its whole
                // limit's work takes asked / n times as long, as for a shrink
                // at its start, or Slurm would end it for running slower. A
                // limit the strategy gives (cut to its --time-min) is whole
                // minutes.
                // What the snapshot counted it needs (JobView::nodes_needed).
                let needed = taken.snapshot.pending.iter().find(|p| p.id == *job).map(|p| p.nodes);
                let asked = needed.map_or(0, |n| n as usize);
                let limit = match time_limit {
                    Some(seconds) => Some(u32::try_from(seconds / 60).unwrap_or(u32::MAX).max(1)),
                    None => guard.find_job(job.0).and_then(|j| {
                        let limit = j.time_limit_minutes()?;
                        let stretched = adaptation::stretched_limit(limit, i64::from(limit) * 60, asked, nodes.len());
                        (stretched > limit).then_some(stretched)
                    }),
                };
                match guard.start_job(job.0, &table(nodes), needed, limit) {
                    Ok((started, list)) => {
                        self.said.start_refused.forget(job);
                        // An array's next task starts under its own id.
                        let task = if started == job.0 { String::new() } else { format!(" (a task of JobId={job})") };
                        let how = format!(" ({}){task}", self.strategy.name());
                        let detail = match limit {
                            Some(l) if time_limit.is_some() => format!(
                                "{how}, its time limit cut to {l} min (its --time-min allows it) to end before the \
                                 head job's start"
                            ),
                            Some(l) => format!(
                                "{how}, {} of the {asked} nodes it asked for, its time limit stretched to {l} min",
                                nodes.len()
                            ),
                            None => how,
                        };
                        log::info!("{}", LogLine::Started { job: JobId(started), cores: None, nodes: list, detail });
                    }
                    Err(e) => self.refused_start(*job, nodes.len(), &e.to_string()),
                }
            }
            Decision::Share { job, nodes, cores, time_limit, mates } => {
                let order = ShareOrder { job: *job, nodes, cores: *cores, time_limit: *time_limit, mates };
                self.share(guard, taken, order, records);
            }
            Decision::Place { job, layout } => {
                let nodes: Vec<usize> = layout.iter().map(|&(i, _)| i).collect();
                match guard.place_job(job.0, &table(&nodes)) {
                    Ok(slurm::ctld::alloc::Placed { started, list, cpus: got }) => {
                        self.said.start_refused.forget(job);
                        // Both in node-table order, as the strategies' indices are.
                        let mut decided = layout.clone();
                        decided.sort_unstable();
                        let decided = cpus_text(decided.iter().map(|&(i, c)| (&*taken.snapshot.nodes[i].name, c)));
                        let got = cpus_text(got.iter().filter_map(|&(t, c)| Some((taken.name_at_table(t)?, c))));
                        let name = self.strategy.name();
                        let (job, nodes) = (JobId(started), list);
                        if got == decided {
                            let detail = format!(" ({name}), CPUs as decided: {got}");
                            log::info!("{}", LogLine::Started { job, cores: None, nodes, detail });
                        } else {
                            let detail = format!(
                                " ({name}) with CPUs {got}, where it decided {decided}: select/cons_tres laid them \
                                 out otherwise"
                            );
                            log::warn!("{}", LogLine::Started { job, cores: None, nodes, detail });
                        }
                    }
                    Err(e) => self.refused_start(*job, nodes.len(), &e.to_string()),
                }
            }
            Decision::Preempt { job, nodes, victims } => {
                let ids: Vec<u32> = victims.iter().map(|v| v.0).collect();
                let named = |ids: &[u32]| ids.iter().map(|v| format!("JobId={v}")).collect::<Vec<_>>().join(",");
                let victims_of = |ids: &[u32]| ids.iter().map(|&v| JobId(v)).collect::<Vec<_>>();
                match guard.preempt_for(job.0, &table(nodes), &ids) {
                    Ok(Preempting::Victims(preempted)) => {
                        self.said.start_refused.forget(job);
                        let victims = victims_of(if preempted.is_empty() { &ids } else { &preempted });
                        log::info!("{}", LogLine::Preempting { job: *job, victims, nodes: names(nodes) });
                    }
                    Ok(Preempting::Started(started, list)) => {
                        self.said.start_refused.forget(job);
                        let detail = format!(" by preempting {}", named(&ids));
                        log::info!("{}", LogLine::Started { job: JobId(started), cores: None, nodes: list, detail });
                    }
                    Err(e) => self.refused_start(*job, nodes.len(), &format!("preempting {}: {e}", named(&ids))),
                }
            }
            Decision::Expand { job, add_nodes } => {
                let added = names(add_nodes);
                // The decision's moment: the line after it says when slurmctld had merged the nodes in.
                let strategy = self.strategy.name().to_string();
                log::info!("{}", LogLine::Growing { job: *job, nodes: added.clone(), strategy: strategy.clone() });
                match guard.expand_job(job.0, &table(add_nodes)) {
                    Ok((list, helper)) => {
                        let resize = self.memory.decided(*job, &added);
                        let (nodes, helper) = (added.clone(), JobId(helper));
                        log::info!(
                            "{}",
                            LogLine::Expanding { job: *job, nodes, resize, helper, holds: list, strategy }
                        );
                        if let Some(st) = statuses.get_mut(job) {
                            st.phase = Phase::Expanding { resize, nodes: added, since: now };
                        }
                    }
                    Err(e) => {
                        log::info!("{}", LogLine::ExpandNotDone { job: *job, nodes: added, error: e.to_string() })
                    }
                }
            }
            Decision::Shrink { job, remove_nodes } => {
                let leaving = names(remove_nodes);
                let resize = self.memory.decided(*job, &[]);
                let strategy = self.strategy.name().to_string();
                log::info!("{}", LogLine::Shrinking { job: *job, nodes: leaving.clone(), resize, strategy });
                if let Some(st) = statuses.get_mut(job) {
                    st.phase = Phase::Shrinking { resize, nodes: leaving, since: now };
                }
            }
        }
    }
}

impl Agent {
    /// Say that slurmctld refused to start `job` on `n` nodes: once while
    /// the refusal repeats (at debug level after, with its count), and again
    /// when it changes or after the job started.
    pub(super) fn refused_start(&mut self, job: JobId, n: usize, why: &str) {
        let line = LogLine::CouldNotStart { job, nodes: n, why: why.to_string() }.to_string();
        match self.said.start_refused.again(job, line.clone()) {
            0 => log::info!("{line}; said once while it repeats"),
            times => log::debug!("{line} (again, {times} times)"),
        }
    }
}

/// Whether waiting job `job` may still start, by the checks a read makes
/// of it (snapshot.rs): waiting, not finishing a run it was requeued from,
/// not held, not heterogeneous nor a helper of an expand, its dependencies
/// met, and Slurm's own checks passed.
fn still_startable(guard: &LockGuard<Scheduling>, job: JobId) -> bool {
    guard.find_job(job.0).is_some_and(|j| {
        j.is_pending()
            && !j.finishing_last_run()
            && j.priority() > 0
            && !j.is_het_job()
            && j.expanding_job().is_none()
            && guard.job_is_independent(&j)
            && guard.may_start_now(&j)
    })
}

/// CPUs per node as the log says them: "n1:3 n2:8", in the order given.
fn cpus_text<'a>(cpus: impl Iterator<Item = (&'a str, u32)>) -> String {
    cpus.map(|(name, c)| format!("{name}:{c}")).collect::<Vec<_>>().join(" ")
}
