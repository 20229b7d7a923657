//! task/drom: the node side of SD-Policy's core sharing (D'Amico et al.
//! 2019). sched/malleable may start a job on cores of running jobs (its
//! mates) and records it in their SystemComments; Slurm lets the two
//! allocations overlap, and this plugin gives each job's tasks their own
//! CPUs on the node, and all of them back to the one left when the other
//! ends (the paper's Listing 3). The decisions are in [`sharing`]; this
//! file reads the node and acts.

pub mod cgroup;
pub mod sharing;

use std::time::{Duration, Instant};

use malleable_model::{JobId, SharedCores};
use parking_lot::Mutex;
use slurm::stepd::{
    is_kernel_thread, is_slurmstepd, pids_of, set_process_affinity, state_of, steps_here, CpuSet, StepId, StepState,
    StepView, TaskPlugin,
};

use crate::sharing::{another_job_here, at_launch, at_step_end, in_record, live, to_set, Launch};

/// What this stepd learned at its step's launch (one stepd runs one step).
struct Sharing {
    step: StepId,
    record: SharedCores,
    /// The node's CPUs, as the stepd's own affinity gave them.
    node: CpuSet,
    /// The CPUs of the step's tasks; `None` when nobody was confined.
    own: Option<CpuSet>,
}

pub struct Drom {
    sharing: Mutex<Option<Sharing>>,
}

slurm::task_plugin!(Drom, name: "task DROM: SD-Policy core sharing", type: "task/drom");

impl TaskPlugin for Drom {
    fn init() -> Result<Self, String> {
        Ok(Drom { sharing: Mutex::new(None) })
    }

    /// The step's launch, before its tasks are forked: read the job's
    /// record, and when it shares cores with a job that runs here, take
    /// its part for the step's tasks and confine that job's processes to
    /// theirs. Nothing here fails the launch: a job that cannot be
    /// confined runs unconfined, as Slurm would run it without us.
    fn pre_setuid(&self, step: &StepView<'_>) -> Result<(), String> {
        let id = step.id();
        if !shared_node(id) {
            return Ok(());
        }
        let Some(record) = read_record(id, "the step runs unconfined") else {
            return Ok(());
        };
        let node = match cgroup::node_cpus() {
            Ok(c) => c,
            Err(e) => {
                log::error!("{id}: cannot read the node's CPUs: {e}; the step runs unconfined");
                return Ok(());
            }
        };
        let states = match states_here(id, &record) {
            Ok(s) => s,
            Err(e) => {
                log::error!("{id}: cannot list this node's steps: {e}; the step runs unconfined");
                return Ok(());
            }
        };
        // The started job's cores as Slurm gave them here, under task/cgroup.
        let given = cgroup::slurm_cores(record.job.0);
        let own = match at_launch(&record, JobId(id.job), &node, &live(&states), given.as_ref()) {
            Launch::OneCpu => {
                log::info!("{id}: shares cores ({}), but this node has one CPU: nobody is confined", record.encode());
                return Ok(());
            }
            Launch::NotInRecord => {
                log::error!(
                    "{id}: its core-sharing record does not name it ({}): nothing is confined",
                    record.encode()
                );
                return Ok(());
            }
            Launch::Alone => {
                log::info!("{id}: no job it shares cores with runs on this node: it keeps all its CPUs ({node})");
                None
            }
            Launch::Confine { own, peers, peers_cpus } => {
                let states = settle(id, states, &peers);
                // Under task/cgroup, each job's steps get their part as
                // their cpuset first: a CPU mask must lie inside it.
                cpusets(id, &[JobId(id.job)], &own);
                cpusets(id, &peers, &peers_cpus);
                let confined = confine(id, &to_set(&peers, &states), &peers_cpus);
                log::info!(
                    "{id}: shares this node's CPUs {node}: its tasks get {own}, {} gets {peers_cpus} ({confined} processes)",
                    jobs(&peers)
                );
                Some(own)
            }
        };
        *self.sharing.lock() = Some(Sharing { step: id, record, node, own });
        Ok(())
    }

    /// Each task, forked and not yet exec'd: its part of the node (after
    /// task/affinity, when it runs first, whose binding this replaces).
    fn set_affinity(&self, step: &StepView<'_>, node_tid: u32) -> Result<(), String> {
        let id = step.id();
        let own = match &*self.sharing.lock() {
            Some(s) if s.step == id => s.own.clone(),
            _ => None,
        };
        let Some(own) = own else {
            return Ok(());
        };
        match step.task_pid(node_tid) {
            None => log::error!("{id}: task {node_tid} has no pid; it runs unconfined"),
            Some(pid) => {
                if let Err(e) = set_process_affinity(pid, &own) {
                    log::error!(
                        "{id}: cannot confine task {node_tid} (pid {pid}) to CPUs {own}: {e}; it runs unconfined"
                    );
                }
            }
        }
        Ok(())
    }

    /// The step's tasks have ended: when it was the job's last step here,
    /// the jobs it shares cores with get all the node's CPUs (the started
    /// job's cores go back to its mate, or a mate that ended first leaves
    /// its cores to the job started on them). The record is read again: a
    /// mate's steps started before the job that took its cores, so their
    /// launch found none (or an older sharing's); the one read at launch
    /// stands in when slurmctld cannot be asked.
    fn post_step(&self, step: &StepView<'_>) -> Result<(), String> {
        let id = step.id();
        let remembered = {
            let mut slot = self.sharing.lock();
            match slot.take() {
                Some(s) if s.step == id => Some(s),
                other => {
                    *slot = other;
                    None
                }
            }
        };
        if !shared_node(id) {
            return Ok(());
        }
        let (record, node) = match (read_record(id, "the record read at launch stands in"), remembered) {
            (Some(now), Some(then)) => (now, then.node),
            (None, Some(then)) => (then.record, then.node),
            (Some(now), None) => match cgroup::node_cpus() {
                Ok(node) => (now, node),
                Err(e) => {
                    log::error!("{id}: cannot read the node's CPUs: {e}; nobody's CPUs are given back");
                    return Ok(());
                }
            },
            (None, None) => return Ok(()),
        };
        let states = match states_here(id, &record) {
            Ok(s) => s,
            Err(e) => {
                log::error!("{id}: cannot list this node's steps: {e}; the jobs it shared cores with keep their part");
                return Ok(());
            }
        };
        let peers = at_step_end(&record, id, &live(&states));
        if peers.is_empty() {
            log::debug!("{id}: JobId={} still runs here, or nobody it shared cores with does", id.job);
            return Ok(());
        }
        let states = settle(id, states, &peers);
        cpusets(id, &peers, &node);
        let released = confine(id, &to_set(&peers, &states), &node);
        log::info!(
            "{id}: JobId={} has no other step here: {} gets all the node's CPUs {node} back ({released} processes)",
            id.job,
            jobs(&peers),
        );
        Ok(())
    }
}

/// Whether another job has a step on this node ([`another_job_here`]);
/// when the node's steps cannot be listed, it is said and taken as no.
fn shared_node(id: StepId) -> bool {
    match steps_here() {
        Ok(steps) => another_job_here(id.job, &steps),
        Err(e) => {
            log::error!("{id}: cannot list this node's steps: {e}; the step runs as Slurm placed it");
            false
        }
    }
}

/// The job's core-sharing record from slurmctld, `None` when it has none,
/// or (logged, saying what follows: `if_not`) when it cannot be read.
fn read_record(id: StepId, if_not: &str) -> Option<SharedCores> {
    let job = match slurm::client::load_job(id.job) {
        Ok(j) => j,
        Err(e) => {
            log::error!("{id}: cannot read the job's record from slurmctld: {e}; {if_not}");
            return None;
        }
    };
    match SharedCores::decode(&job.system_comment) {
        None => {
            log::debug!("{id}: the job shares no cores");
            None
        }
        Some(Err(e)) => {
            log::error!("{id}: the job's core-sharing record is unreadable: {e}; {if_not}");
            None
        }
        Some(Ok(r)) => Some(r),
    }
}

/// The other steps here of the jobs in `record`, each with its state (a
/// stepd that does not answer counts as not running).
fn states_here(this: StepId, record: &SharedCores) -> Result<Vec<(StepId, StepState)>, String> {
    let steps = steps_here()?;
    Ok(steps
        .into_iter()
        .filter(|s| *s != this && in_record(record, s.job))
        .map(|s| {
            let state = state_of(s).unwrap_or_else(|e| {
                log::debug!("{this}: {e}");
                StepState::NotRunning
            });
            (s, state)
        })
        .collect())
}

/// How long a step's launch or end waits for a peer's step that is still
/// starting to run its tasks.
const SETTLE: Duration = Duration::from_secs(3);

/// `states`, with the steps of `peers` that were starting asked again
/// until they run (or end), for [`SETTLE`] at most. Without it a peer's
/// step starting while this one launches or ends could keep the wrong
/// CPUs: one whose launch came before this stepd was there to be seen
/// would run on this job's part, and one whose launch saw this job just
/// before its end would keep its own part with nobody left to share.
fn settle(this: StepId, mut states: Vec<(StepId, StepState)>, peers: &[JobId]) -> Vec<(StepId, StepState)> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let mut starting = Vec::new();
        for (step, state) in states.iter_mut() {
            if *state == StepState::Starting && peers.iter().any(|j| j.0 == step.job) {
                *state = state_of(*step).unwrap_or(StepState::NotRunning);
                if *state == StepState::Starting {
                    starting.push(*step);
                }
            }
        }
        if starting.is_empty() {
            return states;
        }
        if Instant::now() >= deadline {
            for step in starting {
                log::info!("{this}: {step} is still starting after {SETTLE:?}; its tasks keep what its own launch set");
            }
            return states;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Set `cpus` on every process of `targets` (every thread of each), the
/// stepds and any kernel thread (which a proctrack plugin should never
/// list, but no job owns) left alone; each failure logged for `who`.
/// Returns how many processes were set.
fn confine(who: StepId, targets: &[StepId], cpus: &CpuSet) -> usize {
    let mut done = 0;
    for &target in targets {
        let pids = match pids_of(target) {
            Ok(p) => p,
            Err(e) => {
                log::error!("{who}: cannot list the processes of {target}: {e}; they keep their CPUs");
                continue;
            }
        };
        for pid in pids.into_iter().filter(|&p| p > 1 && !is_kernel_thread(p) && !is_slurmstepd(p)) {
            match set_process_affinity(pid, cpus) {
                Ok(0) => {} // ended meanwhile
                Ok(_) => done += 1,
                Err(e) => log::error!("{who}: cannot set CPUs {cpus} on pid {pid} of {target}: {e}"),
            }
        }
    }
    done
}

/// Give each of `jobs` exactly `cpus` in its steps' cpuset cgroups on
/// this node ([`cgroup::confine_job`]); a failure is logged for `who` and
/// leaves that job as it was.
fn cpusets(who: StepId, jobs: &[JobId], cpus: &CpuSet) {
    for job in jobs {
        match cgroup::confine_job(job.0, cpus) {
            Ok(0) => {}
            Ok(n) => log::info!("{who}: JobId={job}'s cpusets here are {cpus} ({n} cgroups)"),
            Err(e) => log::error!("{who}: cannot set JobId={job}'s cpuset to {cpus}: {e}"),
        }
    }
}

/// `JobId=15` or `JobId=15 and JobId=16`, for the log.
fn jobs(list: &[JobId]) -> String {
    list.iter().map(|j| format!("JobId={j}")).collect::<Vec<_>>().join(" and ")
}
