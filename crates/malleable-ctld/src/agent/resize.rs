//! The agent's hands in slurmctld: settle each malleable job's adaptation
//! (adapt.rs decides; here the nodes are freed, the job cancelled, the
//! status published) and carry out the strategy's decisions (start, expand,
//! shrink; a start on mates' cores in `share.rs`), all under the scheduling
//! locks.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use malleable_model::log_lines::LogLine;
use malleable_model::runtime_msg::{Phase, Status};
use malleable_model::{Decision, JobId, SharedCores};
use slurm::ctld::{LockGuard, Preempting, Scheduling};

use super::share::ShareOrder;
use super::Agent;
use crate::adapt::{self, Context};
use crate::snapshot::Taken;

/// How long a node an expand failed on is kept from the strategies: long
/// enough for slurmctld to notice a dead slurmd (SlurmdTimeout), or for
/// the failure to have been a passing one.
const SUSPECT_FOR: Duration = Duration::from_secs(60);

/// What settling the adaptations did.
pub(super) struct Settled {
    /// Nodes or jobs changed: the cluster is to be read again.
    pub changed: bool,
    /// Each malleable job's status after it.
    pub statuses: HashMap<JobId, Status>,
    /// The jobs whose application asked whether to reconfigure.
    pub asking: Vec<JobId>,
}

impl Agent {
    /// Handle each running malleable job's request, nodes and deadline
    /// (adapt.rs), freeing in slurmctld the nodes an ended adaptation gives
    /// back. Whether the cluster changed (a node freed, a job cancelled, a
    /// job's runtime came or went), and the jobs' new statuses.
    pub(super) fn settle_adaptations(&mut self, guard: &mut LockGuard<Scheduling>, taken: &Taken, now: i64) -> Settled {
        let mut changed = false;
        let mut statuses = HashMap::new();
        let mut asking = Vec::new();
        let usable = |name: &str| taken.usable.contains(name);
        let timeout = self.config.adapt_timeout;
        guard.settle_fairshare();
        for job in taken.malleable.iter().filter(|j| j.running) {
            // Slurm resizes a --no-kill job itself when one of its nodes
            // fails, and then refuses every update of it (its runtime's
            // requests too) until the job's accounting index is set.
            guard.settle_db_index(job.id.0);
            let mut last_resize = self.last_resize;
            let mut next_resize = || next_resize(&mut last_resize);
            let mut cx = Context { now, timeout, usable: &usable, next_resize: &mut next_resize };
            let m = self.memory.0.entry(job.id).or_default();
            let step = adapt::step(job, &mut cx, m);
            self.last_resize = last_resize;
            for line in &step.log {
                log::info!("{line}");
            }
            let mut held = job.nodes.clone();
            if let Some(release) = &step.release {
                let keep: Vec<&String> = job.nodes.iter().filter(|n| !release.nodes.contains(n)).collect();
                let table: Vec<usize> = keep.iter().filter_map(|n| taken.table_index_of(n)).collect();
                let limit = guard.find_job(job.id.0).and_then(|j| {
                    let limit = j.time_limit_minutes()?;
                    let stretched = adapt::stretched_limit(limit, j.end_time() - now, job.nodes.len(), keep.len());
                    (release.stretch && stretched > limit).then_some(stretched)
                });
                if let Some(l) = limit {
                    log::info!("{}", LogLine::Stretched { job: job.id, minutes: l });
                }
                match guard.shrink_job(job.id.0, &table, limit) {
                    Ok(list) => {
                        log::info!(
                            "{}",
                            LogLine::Released { job: job.id, ending: release.ending.clone(), holds: list }
                        );
                        held = keep.into_iter().cloned().collect();
                        changed = true;
                    }
                    Err(e) => log::error!(
                        "{}",
                        LogLine::ReleaseFailed { job: job.id, ending: release.ending.clone(), error: e.to_string() }
                    ),
                }
                // An expand undone because its node failed, or because the
                // application could not start there: keep the strategies
                // off those nodes for a while, or they would hand them out
                // again at once.
                if release.suspect {
                    for n in &release.nodes {
                        self.suspects.insert(n.clone(), Instant::now() + SUSPECT_FOR);
                    }
                    log::info!("{}", LogLine::Suspect { nodes: release.nodes.clone(), secs: SUSPECT_FOR.as_secs() });
                }
            }
            if let Some(why) = &step.cancel {
                match guard.cancel_job(job.id.0) {
                    Ok(()) => log::info!("JobId={}: cancelled: {why}", job.id),
                    Err(e) => log::error!("JobId={}: {why}, but cancelling it failed: {e}", job.id),
                }
                changed = true;
            }
            m.nodes_seen = held;
            changed |= step.status.runtime != job.status.runtime;
            // Published now, so a snapshot taken again sees it.
            guard.set_system_comment(job.id.0, &step.status.encode());
            if step.asked {
                asking.push(job.id);
            }
            statuses.insert(job.id, step.status);
        }
        Settled { changed, statuses, asking }
    }

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
        let table = |nodes: &[usize]| -> Vec<usize> { nodes.iter().map(|&i| taken.table_index[i]).collect() };
        let names =
            |nodes: &[usize]| -> Vec<String> { nodes.iter().map(|&i| taken.snapshot.nodes[i].name.clone()).collect() };
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
                        let stretched = adapt::stretched_limit(limit, i64::from(limit) * 60, asked, nodes.len());
                        (stretched > limit).then_some(stretched)
                    }),
                };
                match guard.start_job(job.0, &table(nodes), needed, limit) {
                    Ok((started, list)) => {
                        self.refused.remove(job);
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
                        self.refused.remove(job);
                        // Both in node-table order, as the strategies' indices are.
                        let mut decided = layout.clone();
                        decided.sort_unstable();
                        let decided =
                            cpus_text(decided.iter().map(|&(i, c)| (taken.snapshot.nodes[i].name.as_str(), c)));
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
                        self.refused.remove(job);
                        let victims = victims_of(if preempted.is_empty() { &ids } else { &preempted });
                        log::info!("{}", LogLine::Preempting { job: *job, victims, nodes: names(nodes) });
                    }
                    Ok(Preempting::Started(started, list)) => {
                        self.refused.remove(job);
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
                        let resize = next_resize(&mut self.last_resize);
                        let (nodes, helper) = (added.clone(), JobId(helper));
                        log::info!(
                            "{}",
                            LogLine::Expanding { job: *job, nodes, resize, helper, holds: list, strategy }
                        );
                        let m = self.memory.0.entry(*job).or_default();
                        m.decided_at = Some(Instant::now());
                        m.nodes_seen.extend(added.iter().cloned());
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
                let resize = next_resize(&mut self.last_resize);
                let strategy = self.strategy.name().to_string();
                log::info!("{}", LogLine::Shrinking { job: *job, nodes: leaving.clone(), resize, strategy });
                self.memory.0.entry(*job).or_default().decided_at = Some(Instant::now());
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
        match repeated(&mut self.refused, job, line) {
            (line, 0) => log::info!("{line}; said once while it repeats"),
            (line, times) => log::debug!("{line} (again, {times} times)"),
        }
    }
}

/// CPUs per node as the log says them: "n1:3 n2:8", in the order given.
fn cpus_text<'a>(cpus: impl Iterator<Item = (&'a str, u32)>) -> String {
    cpus.map(|(name, c)| format!("{name}:{c}")).collect::<Vec<_>>().join(" ")
}

/// Record `line` as `job`'s refusal; the line and how many times it came
/// before in a row (0: new, or not what was said last).
fn repeated(refused: &mut HashMap<JobId, (String, u64)>, job: JobId, line: String) -> (String, u64) {
    match refused.get_mut(&job) {
        Some((said, times)) if *said == line => {
            *times += 1;
            (line, *times)
        }
        _ => {
            refused.insert(job, (line.clone(), 0));
            (line, 0)
        }
    }
}

/// A new adaptation's id: unique over the plugin's restarts, as it starts
/// from the time in milliseconds.
fn next_resize(last: &mut u64) -> u64 {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    *last = (*last + 1).max(ms);
    *last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_said_once_while_it_repeats() {
        let mut refused = HashMap::new();
        let (a, b) = (JobId(1), JobId(2));
        assert_eq!(repeated(&mut refused, a, "x".into()).1, 0);
        assert_eq!(repeated(&mut refused, a, "x".into()).1, 1);
        assert_eq!(repeated(&mut refused, a, "x".into()).1, 2);
        // Another job's refusal, or another refusal of this one, is new.
        assert_eq!(repeated(&mut refused, b, "x".into()).1, 0);
        assert_eq!(repeated(&mut refused, a, "y".into()).1, 0);
        assert_eq!(repeated(&mut refused, a, "y".into()).1, 1);
    }
}
