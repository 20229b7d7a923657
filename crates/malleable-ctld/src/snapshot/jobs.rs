//! One job record read into what the strategy sees of it: a running job
//! into this pass's running list, a waiting one into a [`Waiter`] that the
//! kept queue holds until the job is read again (see `kept.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use malleable_model::log_lines::LogLine;
use malleable_model::runtime_msg::{Envelope, Phase, Status};
use malleable_model::submit_options::Malleability;
use malleable_model::{tier_of, CoreSharing, JobId, MalleableSpec, PendingJob, Placement, RunningJob, SharedCores};
use rustc_hash::FxHashMap;
use slurm::ctld::{JobState, JobView, LockGuard, Reserved, Scheduling};

use super::nodes::NodeTable;
use super::placing::{batch_host_first, core_request, fits_now, partition_cached, placement_of, take_spare};
use crate::adaptation::{measured_power, MalleableJob, Measured, Memory};
use crate::config::Config;
use crate::feed::{reaches_reservation, Found, Recheck};
use crate::job_options::{JobOptions, OptionsCache};
use crate::kept::Waiter;

/// What a pass reads jobs with, and what it gathers of the running ones.
pub(super) struct Reader<'a> {
    pub guard: &'a LockGuard<Scheduling>,
    pub now: i64,
    pub config: &'a Config,
    pub memory: &'a Memory,
    pub known: &'a mut OptionsCache,
    pub table: NodeTable,
    pub partitions: FxHashMap<usize, Arc<Vec<usize>>>,
    pub db_behind: bool,
    pub read_at: Instant,
    pub running: Vec<RunningJob>,
    pub malleable: Vec<MalleableJob>,
    pub unreadable: Vec<(JobId, String)>,
    pub shared_cores: HashMap<JobId, SharedCores>,
    pub capped: Vec<(JobId, u32)>,
    /// Running rigid jobs Slurm resized (a --no-kill job that lost a node):
    /// their accounting is settled as the malleable ones' (agent/settle.rs).
    pub resized_rigid: Vec<JobId>,
    /// Waiting arrays with an aftercorr dependency, split after the reads.
    pub correspond: Vec<u32>,
    /// The starts of the reservations still to come, earliest first.
    pub resv_starts: Vec<i64>,
}

/// What one read found: for the feed, and the waiting job's entry.
pub(super) struct Read {
    pub found: Found,
    /// What its submission counted in sdiag.
    pub weight: u64,
    pub waiter: Option<Waiter>,
}

/// A malleable job's status from its SystemComment, and whether the comment
/// read as one (else it is steady, still to be written).
fn status_of(job: &JobView<'_>, spec: MalleableSpec) -> (Status, bool) {
    match Status::decode(&job.system_comment()).and_then(Result::ok) {
        Some(status) => (status, true),
        None => (Status::new(spec), false),
    }
}

impl Reader<'_> {
    /// Read one record.
    pub fn read(&mut self, job: &JobView<'_>) -> Read {
        let weight = job.submitted_weight();
        if job.is_pending() {
            // Held or not, as slurmctld's own queue building does it.
            self.guard.tend_waiting(job);
            if self.guard.finish_requeue(job) {
                log::warn!("{}", LogLine::RequeueFinished { job: JobId(job.id()) });
            }
            if self.guard.forget_requeued_resize(job) {
                log::info!("{}", LogLine::RequeuedAfterResize { job: JobId(job.id()) });
            }
            // After the resize's: its fair-share window reads the last run's billing.
            if self.guard.forget_requeued_billing(job) {
                log::info!("JobId={}: waits again: its next run is billed at its own size", job.id());
            }
            let correspond = job.is_unsplit_correspond_array();
            if correspond {
                self.correspond.push(job.id());
            }
            let (waiter, recheck) = self.waiting(job, correspond);
            return Read { found: Found::Waiting(recheck), weight, waiter: Some(waiter) };
        }
        let cancelled = job.state() == JobState::Cancelled;
        if job.holds_nodes() {
            self.running_job(job);
            return Read { found: Found::Running { cancelled }, weight, waiter: None };
        }
        self.known.forget(job.id());
        Read { found: Found::Gone { cancelled }, weight, waiter: None }
    }

    /// Its options, or why they do not read (then rigid), and what its
    /// submission recorded of its size.
    fn options(
        &mut self,
        job: &JobView<'_>,
    ) -> (Option<MalleableSpec>, Option<malleable_model::JobPower>, bool, Option<u32>, Option<String>) {
        let JobOptions { options, submitted } = self.known.of(job);
        let submitted = *submitted;
        match options {
            Ok(Malleability { spec, power, share_cores }) => (*spec, *power, *share_cores, submitted, None),
            Err(why) => (None, None, false, submitted, Some(why.clone())),
        }
    }

    /// A malleable job's entry for the agent: its status, runtime's request and nodes.
    fn malleable_of(&self, job: &JobView<'_>, spec: MalleableSpec, status: Status, shown: bool) -> MalleableJob {
        let t = &self.table;
        let names =
            job.node_indices().into_iter().filter_map(|i| t.core_index.get(i).copied()).filter(|&c| c != usize::MAX);
        MalleableJob {
            id: JobId(job.id()),
            spec,
            status,
            shown,
            request: Envelope::kept_line(&job.system_comment()).unwrap_or_default().to_string(),
            running: job.holds_nodes(),
            nodes: names.map(|c| t.nodes[c].name.to_string()).collect(),
        }
    }

    /// A job holding nodes, into this pass's running list.
    fn running_job(&mut self, job: &JobView<'_>) {
        let (spec, own_power, share_cores, submitted, unreadable) = self.options(job);
        let id = JobId(job.id());
        // Before anything reads it: a grown job's batch host as slurmctld
        // took it after a restart or reconfigure (the first of its nodes)
        // would have a shrink free the node its batch script runs on.
        if let Some((said, runs_on)) = self.guard.restore_batch_host(job) {
            log::warn!("{}", LogLine::BatchHostRestored { job: id, said, runs_on });
        }
        self.guard.note_run_start(job);
        self.guard.keep_first_record(job, spec.is_some());
        if let Some(why) = unreadable {
            self.unreadable.push((id, why));
        }
        let (guard, now) = (self.guard, self.now);
        let measured = self.memory.of(id);
        let mut adapting = false;
        let mut resizable = false;
        let mut resize_held = false;
        if let Some(spec) = spec {
            let (status, shown) = status_of(job, spec);
            adapting = status.phase != Phase::Steady;
            // Only a job whose application runtime is there can carry a
            // resize out; any other would only see it time out. One whose
            // last adaptation failed waits a while (adaptation.rs); with
            // slurmdbd, one whose accounting a resize now would spoil waits
            // for the next pass, as does one whose memory slurmctld is
            // lowering (JobView::resize_held).
            let accounting = self.db_behind || job.resize_held(now);
            resizable = (status.runtime && !measured.is_some_and(Measured::held) && !accounting) || adapting;
            // Held for a moment (this second, or slurmdbd's queue not yet
            // drained: the agent stops counting that once it lasts).
            resize_held = !resizable && status.runtime && !measured.is_some_and(Measured::held) && accounting;
            let m = self.malleable_of(job, spec, status, shown);
            self.malleable.push(m);
        }
        if spec.is_none() && job.resized() {
            self.resized_rigid.push(id);
        }
        let power = self.config.power_in_use();
        let job_power = power.map(|p| measured_power(own_power, measured).unwrap_or_else(|| p.default_job()));
        let cores = self.config.strategy.info.places_cores;
        let t = &mut self.table;
        if cores {
            take_spare(&mut t.nodes, job, &t.core_index);
        }
        let completing = !matches!(job.state(), JobState::Running | JobState::Suspended);
        let mut held: Vec<usize> = job
            .node_indices()
            .into_iter()
            .filter_map(|i| t.core_index.get(i).copied().filter(|&c| c != usize::MAX))
            .collect();
        batch_host_first(&mut held, &job.batch_host(), &t.nodes);
        let holds = u32::try_from(held.len()).unwrap_or(u32::MAX);
        if let Some(Ok(rec)) = SharedCores::decode(&job.system_comment()) {
            self.shared_cores.insert(id, rec);
        }
        let placement = if resizable {
            // Where it may grow: reservations that begin while it runs count too.
            let reserved = guard.reserved_for(job, now);
            let part = match job.partition_record() {
                Some(p) => partition_cached(&mut self.partitions, p.key(), || p.nodes(), &t.core_index),
                None => Arc::new(Vec::new()),
            };
            let features = guard.feature_nodes(job);
            let holding = t.room.holding(job);
            let p = placement_of(
                job,
                &part,
                &reserved,
                features.as_deref(),
                holding.as_ref(),
                &t.core_index,
                t.nodes.len(),
            );
            // An elastic job cannot be contiguous (job_submit/malleable refuses it).
            Placement { required: Vec::new(), contiguous: false, ..p.unwrap_or_else(|| Placement::only(Vec::new())) }
        } else {
            Placement::anywhere()
        };
        let capped = &mut self.capped;
        self.running.push(RunningJob {
            id,
            nodes: held,
            start: job.start_time(),
            // A completing job's nodes come back as soon as its epilog ends.
            end_limit: if completing { Some(now) } else { job.time_limit_minutes().map(|_| job.end_time()) },
            malleable: spec.filter(|_| resizable).map(|sp| {
                // Its QOS's and association's node limits bound its growth.
                let Some(most) = guard.node_limit(job) else { return sp };
                let cap = most.max(sp.min).max(holds);
                if cap < sp.max {
                    capped.push((id, cap));
                    MalleableSpec { max: cap, ..sp }
                } else {
                    sp
                }
            }),
            adapting,
            mtct_ratio: measured.and_then(|m| m.mtct_ratio),
            power: job_power,
            asked: spec.and(submitted),
            placement,
            // With whom and how many cores, once every running job is read.
            sharing: CoreSharing {
                opted_in: share_cores,
                wait: (job.start_time() - job.submit_time()).max(0),
                ..CoreSharing::default()
            },
            resize_held,
        });
    }

    /// A waiting job: in the strategy's queue, or kept out of it (held,
    /// unmet dependencies, heterogeneous, over its partition's or QOS's
    /// limits, its partition down, past its deadline, kept out by a
    /// reservation), and when it is to be read again.
    fn waiting(&mut self, job: &JobView<'_>, correspond: bool) -> (Waiter, Recheck) {
        let (spec, own_power, share_cores, _, unreadable) = self.options(job);
        let (guard, now) = (self.guard, self.now);
        let mut waiter = Waiter { unreadable, print: job.fingerprint(), ..Waiter::default() };
        if let Some(spec) = spec {
            let (status, shown) = status_of(job, spec);
            waiter.malleable = Some(self.malleable_of(job, spec, status, shown));
        }
        // Requeued and still finishing its last run (its nodes completing):
        // out of the queue, as stock leaves it, and read at every pass until
        // that ends (which no sign the feed sees tells).
        if job.finishing_last_run() {
            return (waiter, Recheck::EveryPass);
        }
        // What it reads depends on the clock or on other jobs, not only on
        // its own record: read at every pass. Several partitions (the one it
        // could start in now), features (nodes' features change without a
        // stamp of their own), licenses, a deadline, accrue limits, an
        // aftercorr array split as its tasks go.
        let volatile = job.partitions().len() > 1
            || job.asks_features()
            || job.asks_licenses()
            || job.deadline().is_some()
            || correspond
            || guard.needs_tending(job);
        // What reservations leave it moves with the clock, once its window
        // (now to now + its limit) reaches one still to come: read from then.
        let reaches = if self.resv_starts.is_empty() {
            None
        } else {
            reaches_reservation(&self.resv_starts, now, job.reservation_duration_secs())
        };
        let recheck = |kept_out_by_reservation: bool| match job.begins_after(now).into_iter().chain(reaches).min() {
            _ if volatile || kept_out_by_reservation => Recheck::EveryPass,
            Some(t) => Recheck::From(t),
            None => Recheck::InTurn,
        };
        // Held (released through scontrol update, which job_modify notes),
        // heterogeneous or an expand's helper: in turn.
        if job.priority() == 0 || job.is_het_job() || job.expanding_job().is_some() {
            return (waiter, recheck(false));
        }
        // A dependency, its limits, its array's throttle: what another job's
        // end lifts (a --begin still to come is read from then).
        if !guard.job_is_independent(job) || !guard.may_start_now(job) {
            let r = match recheck(false) {
                Recheck::InTurn => Recheck::AfterEnds,
                r => r,
            };
            return (waiter, r);
        }
        // A job reservations keep from starting now is not in the queue.
        // One of several partitions (`-p a,b`) is placed in the first
        // it could start in now, else in its first, as Slurm tries them.
        let t = &self.table;
        let reserved = guard.reserved_for(job, now);
        let features = guard.feature_nodes(job);
        let holding = t.room.holding(job);
        let mut options = Vec::new();
        for part in job.partitions() {
            let nodes_of = partition_cached(&mut self.partitions, part.key(), || part.nodes(), &t.core_index);
            if let Some(p) = placement_of(
                job,
                &nodes_of,
                &reserved,
                features.as_deref(),
                holding.as_ref(),
                &t.core_index,
                t.nodes.len(),
            ) {
                options.push((p, part.tier));
            }
        }
        if options.is_empty() {
            return (waiter, recheck(matches!(reserved, Reserved::NotNow(..))));
        }
        let needed = job.nodes_needed(t.largest_cpus, t.room.memory_consumable.then_some(t.largest_memory));
        let size = needed as usize;
        let chosen = if options.len() > 1 {
            options.iter().position(|(p, _)| fits_now(p, &t.nodes, size)).unwrap_or(0)
        } else {
            0
        };
        let (placement, part_tier) = options.swap_remove(chosen);
        waiter.shown = Some(job.shown_wait());
        let held_back = job.is_batch() && !self.config.batch_start_delay.is_zero();
        let of_age = held_back.then(|| self.known.held_back_until(job.id(), self.config.batch_start_delay)).flatten();
        let mut young = false;
        match of_age {
            Some(at) if at > self.read_at => {
                waiter.young = Some(at);
                young = true;
            }
            _ if spec.is_none() && job.may_oversubscribe() => waiter.oversubscribes = true,
            _ => {}
        }
        let power = self.config.power_in_use();
        let measured = self.memory.of(JobId(job.id()));
        let job_power = power.map(|p| measured_power(own_power, measured).unwrap_or_else(|| p.default_job()));
        let cores = self.config.strategy.info.places_cores;
        waiter.queued = Some(PendingJob {
            id: JobId(job.id()),
            priority: job.priority(),
            tier: tier_of(job.in_reservation(), part_tier),
            submit: job.submit_time(),
            nodes: needed,
            time_limit: job.time_limit_minutes().map(|m| i64::from(m) * 60),
            time_min: job.time_min_minutes().map(|m| i64::from(m) * 60),
            malleable: spec,
            power: job_power,
            placement,
            share_cores,
            cores: if cores { core_request(job, t.nodes.len()) } else { None },
            preempts: Vec::new(),
        });
        // A job not yet of age is read until it is.
        (waiter, if young { Recheck::EveryPass } else { recheck(false) })
    }
}
