//! Settling the adaptations under way, at the start of each pass: each
//! running malleable job's requests, nodes and deadline read (adaptation.rs
//! decides what follows), then, in slurmctld, the nodes an ended adaptation
//! gives back freed, a job below its minimum cancelled, the status published.
//! While slurmdbd holds resizes, an adaptation's end waits whole, except a
//! loss: that is told at once, and only the nodes it frees wait.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use malleable_model::log_lines::LogLine;
use malleable_model::runtime_msg::{Phase, Status};
use malleable_model::JobId;
use slurm::ctld::{LockGuard, ResizeHold, Scheduling};

use super::Agent;
use crate::adaptation;
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
    /// (adaptation.rs), freeing in slurmctld the nodes an ended adaptation gives
    /// back. Whether the cluster changed (a node freed, a job cancelled, a
    /// job's runtime came or went), and the jobs' new statuses.
    pub(super) fn settle_adaptations(&mut self, guard: &mut LockGuard<Scheduling>, taken: &Taken, now: i64) -> Settled {
        let mut changed = false;
        let mut statuses = HashMap::new();
        let mut asking = Vec::new();
        let usable = |name: &str| taken.usable(name);
        let timeout = self.config.adapt_timeout;
        guard.settle_fairshare();
        for (id, ended) in guard.settle_first_records(!taken.slurmdbd_behind) {
            // Its first record (26.05), or one slurmdbd never named (22.05).
            if ended {
                log::info!(
                    "JobId={id}: a record of its ended again at the resize that closed it, with the size it held then"
                );
            } else {
                // 22.05: a run's first record written over at its requeue.
                log::info!(
                    "JobId={id}: its last run's first record started again with the size it held, written over by the run's start sent again as its requeue finished"
                );
            }
        }
        // Said here, for the windows taken back anywhere since (a resize's
        // own taken back in the last pass's apply among them).
        for t in slurm::ctld::fairshare::taken_back() {
            log::info!("{}", LogLine::UsageTakenBack { job: JobId(t.job_id), tres_s: t.tres_s.round() as u64 });
        }
        self.steady_again(guard);
        // A rigid --no-kill job that lost a node is resized by Slurm too:
        // its record needs the same care, or it runs away in slurmdbd.
        for &id in &taken.resized_rigid {
            settle_record(guard, id, taken.slurmdbd_behind);
        }
        for job in taken.malleable.iter().filter(|j| j.running) {
            settle_record(guard, job.id, taken.slurmdbd_behind);
            // Whether a free would be held is known before the step; only
            // then is it stepped on a copy, so a held step leaves no trace.
            let holds = self.release_waits_for(guard, taken, job.id, now);
            let newly_lost = |step: &adaptation::Step| {
                matches!(step.status.phase, Phase::Lost { .. }) && !matches!(job.status.phase, Phase::Lost { .. })
            };
            let held = |step: &adaptation::Step| {
                holds.is_some() && step.cancel.is_none() && step.release.is_some() && !newly_lost(step)
            };
            let mut step = self.memory.step(job, now, timeout, &usable, holds.is_some(), |s| !held(s));
            if held(&step) {
                // Freeing nodes is a resize in slurmctld, and with slurmdbd
                // away 22.05 would first try to reach it under slurmctld's
                // locks (as a new decision is held, snapshot/jobs.rs). A
                // loss is not held (below). The job stays as
                // it is, adapting, and its application's request is in its
                // Comment still: the next pass steps it again.
                if let Some(release) = step.release.filter(|_| self.said.release_held.first(job.id, ())) {
                    let waits_for = holds.unwrap_or_default();
                    log::warn!("{}", LogLine::ReleaseHeld { job: job.id, ending: release.ending, waits_for });
                }
                let mut status = job.status.clone();
                status.spec = job.spec;
                statuses.insert(job.id, status);
                continue;
            }
            let m = self.memory.of_mut(job.id);
            // A loss is told to the application at once, slurmdbd away or
            // not (it cannot wait: its workers there are gone); what the
            // adaptation it ended gives back waits, and is freed at the
            // first pass that may.
            if let Some(waits_for) = holds.filter(|_| step.cancel.is_none()) {
                if let Some(release) = step.release.take() {
                    log::warn!("{}", LogLine::ReleaseHeld { job: job.id, ending: release.ending.clone(), waits_for });
                    m.deferred = Some(release);
                }
            } else if step.release.is_none() {
                step.release = m.deferred.take().and_then(|r| r.of_held(&job.nodes));
            }
            self.said.release_held.forget(&job.id);
            for line in &step.log {
                log::info!("{line}");
            }
            let mut held = job.nodes.clone();
            if let Some(release) = &step.release {
                let keep: Vec<&String> = job.nodes.iter().filter(|n| !release.nodes.contains(n)).collect();
                let table: Vec<usize> = keep.iter().filter_map(|n| taken.table_index_of(n)).collect();
                let limit = guard.find_job(job.id.0).and_then(|j| {
                    let limit = j.time_limit_minutes()?;
                    let stretched = adaptation::stretched_limit(limit, j.end_time() - now, job.nodes.len(), keep.len());
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
                        self.suspects.nodes.insert(n.clone(), Instant::now() + SUSPECT_FOR);
                    }
                    log::info!("{}", LogLine::Suspect { nodes: release.nodes.clone(), secs: SUSPECT_FOR.as_secs() });
                }
            }
            if let Some(why) = &step.cancel {
                match guard.cancel_job(job.id.0) {
                    Ok(()) => log::info!("{}", LogLine::Cancelled { job: job.id, why: why.clone() }),
                    Err(e) => log::error!("JobId={}: {why}, but cancelling it failed: {e}", job.id),
                }
                changed = true;
            }
            m.nodes_seen = held;
            changed |= step.status.runtime != job.status.runtime;
            // Published now, so a snapshot taken again sees it.
            super::comments::write(guard, job.id, &step.status.encode());
            if step.asked {
                asking.push(job.id);
            }
            statuses.insert(job.id, step.status);
        }
        Settled { changed, statuses, asking }
    }

    /// A job requeued mid-adaptation, waiting now, starts again steady and
    /// without a runtime: its application went with the run, and so did
    /// what it was to do. Else the adaptation's deadline would pass in the
    /// next run and undo nodes that run never held, or held anew.
    fn steady_again(&mut self, guard: &mut LockGuard<Scheduling>) {
        let stale: Vec<(JobId, Status)> = self
            .kept
            .waiters()
            .filter_map(|(_, w)| w.malleable.as_ref())
            .filter(|m| !m.running && (m.status.phase != Phase::Steady || m.status.runtime))
            .map(|m| (m.id, m.status.clone()))
            .collect();
        for (job, old) in stale {
            if let Some(what) = old.phase.described() {
                log::info!("{}", LogLine::Dropped { job, what });
            }
            let status = Status { phase: Phase::Steady, runtime: false, ..old };
            super::comments::write(guard, job, &status.encode());
            self.kept.status_shown(job, &status);
        }
    }

    /// On what freeing a job's nodes must wait, if on anything: slurmdbd
    /// (whose probe says why, when it does not answer), or the job's own
    /// last record or memory resize (`JobView::resize_hold`). Said in the
    /// log, so that an admin knows what to look at.
    fn release_waits_for(&self, guard: &LockGuard<Scheduling>, taken: &Taken, job: JobId, now: i64) -> Option<String> {
        if taken.slurmdbd_behind {
            return Some(match &self.suspects.slurmdbd {
                Some(why) => format!("slurmdbd, which does not answer ({why})"),
                None => "slurmdbd, away or behind (sdiag: DBD Agent queue size)".to_string(),
            });
        }
        Some(match guard.find_job(job.0)?.resize_hold(now)? {
            ResizeHold::MemoryResize => "the job's memory resize under way".to_string(),
            ResizeHold::Accounting => "slurmdbd to name the job's last record".to_string(),
        })
    }
}

/// The accounting of a job Slurm resized while slurmdbd was away (22.05):
/// Slurm resizes a --no-kill job itself when one of its nodes fails, and
/// then refuses every update of it (its runtime's requests too) until its
/// accounting index is set, and its later records would end none in
/// slurmdbd; once slurmdbd has caught up, the record it made is named.
fn settle_record(guard: &mut LockGuard<Scheduling>, job: JobId, slurmdbd_behind: bool) {
    // Slurm's own resize counts the job's fair-share usage twice, as ours.
    guard.fairshare_after_slurms_resize(job.0);
    if guard.settle_db_index(job.0) {
        log::warn!(
            "JobId={job}: resized while slurmdbd is away: its new record waits in slurmctld's queue for slurmdbd, and the job takes updates again"
        );
    }
    if !slurmdbd_behind {
        if let Some(index) = guard.name_record(job.0) {
            log::info!("JobId={job}: its record made while slurmdbd was away named by slurmdbd ({index})");
        }
    }
}
