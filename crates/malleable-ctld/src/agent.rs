//! The scheduling agent: one thread that runs a pass whenever slurmctld's
//! job or node records change (submit, start, completion, cancel, node state),
//! when the power corridor moves (reconfigure or a scheduled change), and at
//! least every SchedulerTick, until fini stops it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use malleable_core::blocks::preemption;
use malleable_core::{Note, PassReport, Strategy, WaitReason};
use malleable_model::log_lines::{CorridorCause, LogLine};
use malleable_model::runtime_msg::{Phase, Status};
use malleable_model::{rejections, Corridor, Decision, JobId, Snapshot};
use parking_lot::{Condvar, Mutex};
use slurm::ctld::{LockGuard, Scheduling, Slurmctld, UpdateCounters, Wait, WaitCode};

use crate::adapt::Memory;
use crate::config::Config;
use crate::job_options::OptionsCache;
use crate::snapshot::{self, Taken};

mod oversubscribe;
mod resize;
mod share;

use resize::Settled;

/// How often the change counters are looked at. They are plain words in
/// slurmctld's memory, so a look is cheap; this bounds how late a pass runs
/// after a submission or a job's end (measured on ESP at 50 ms: the start
/// a job's end allowed came 32 ms after it, median, which the simulator
/// then has to model as a pass delay).
const POLL: Duration = Duration::from_millis(20);

/// While an adaptation waits for its application's commit, a pass (under
/// slurmctld's locks) this often: the commit, a job update, moves only the
/// whole-second stamp.
const ADAPTING_POLL: Duration = Duration::from_millis(50);

/// slurmctld's last-update stamps are whole seconds: a change in the very
/// second of our last pass leaves them as they were. Job submissions,
/// starts and ends also move slurmctld's diagnostic counts, which catch
/// them at once; for the rest (a node's state, a job's update), while that
/// second lasts, pass again this often rather than wait for the next second.
/// Before the counts, a job submitted or freed in such a second waited up
/// to this long, and on ESP one start in seven came 60 to 210 ms late, which
/// is what made real and simulated start orders part at near-ties.
const SAME_SECOND_RECHECK: Duration = Duration::from_millis(200);

/// How long slurmdbd must have been away or behind before the log says that
/// resizes are held (they are held at once).
const SLURMDBD_BEHIND_SAID_AFTER: Duration = Duration::from_secs(5);

/// What the plugin and its agent thread share.
struct Shared {
    state: Mutex<SharedState>,
    wake: Condvar,
}

struct SharedState {
    stop: bool,
    /// A new configuration for the agent to take at its next wake-up.
    new_config: Option<Config>,
}

/// What the agent is in slurmctld.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// slurmctld's scheduler (sched/malleable): it starts the waiting jobs,
    /// says why the others wait, resizes running ones, answers questions.
    Scheduler,
    /// Beside another scheduler (select/natural under sched/backfill): it
    /// only answers the jobs that ask whether to reconfigure and carries
    /// the adaptations out; a waiting job a shrink was made for gets the
    /// highest priority, so the scheduler starts it on the nodes released.
    Answerer,
}

pub struct AgentHandle {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl AgentHandle {
    pub fn start(ctld: &'static Slurmctld, config: Config, role: Role) -> Result<AgentHandle, String> {
        let shared =
            Arc::new(Shared { state: Mutex::new(SharedState { stop: false, new_config: None }), wake: Condvar::new() });
        let agent = Agent::new(ctld, config, role, shared.clone());
        let thread = std::thread::Builder::new()
            .name("malleable".into())
            .spawn(move || agent.run())
            .map_err(|e| format!("cannot start the agent thread: {e}"))?;
        Ok(AgentHandle { shared, thread: Some(thread) })
    }

    /// Hand a new configuration to the agent; it applies it and runs a pass.
    pub fn reconfigure(&self, config: Config) {
        self.shared.state.lock().new_config = Some(config);
        self.shared.wake.notify_all();
    }

    /// Stop the thread and wait for it.
    pub fn stop(mut self) {
        self.shared.state.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                log::error!("agent thread ended by a panic");
            }
        }
    }
}

struct Agent {
    ctld: &'static Slurmctld,
    config: Config,
    role: Role,
    strategy: Box<dyn Strategy>,
    shared: Arc<Shared>,
    /// Counters as they stood after our last pass, and that pass's second.
    seen: UpdateCounters,
    last_pass_second: i64,
    last_pass: Instant,
    passes: u64,
    /// A pass is owed even without a change (reconfigure, corridor moved).
    force_next: bool,
    /// The power corridor the last look found in force; `None` when the
    /// strategy does not use one.
    corridor_in_force: Option<Corridor>,
    /// For each waiting job a note was said about, the note's reason, so a
    /// note is said once while its job waits for the same reason.
    said: HashMap<JobId, String>,
    /// Jobs whose malleable options were said not to read.
    unreadable_said: HashSet<JobId>,
    /// Elastic jobs said to be held below their maximum by their limits.
    capped_said: HashSet<JobId>,
    /// Since when slurmdbd has been away or behind, and whether the log said so.
    slurmdbd_behind_since: Option<Instant>,
    slurmdbd_held_said: bool,
    /// What the runtimes measured, and when adaptations were decided.
    memory: Memory,
    /// The last adaptation id handed out.
    last_resize: u64,
    /// Whether an adaptation was under way after the last pass.
    adapting: bool,
    /// Nodes an expand failed on, kept from the strategies until then.
    suspects: HashMap<String, Instant>,
    /// Each job's options, read once from its SPANK environment.
    known: OptionsCache,
    /// For each waiting job slurmctld refused to start, the refusal and how
    /// many times it repeated: a strategy decides the same start again at
    /// every pass, and the log says it once (resize.rs).
    refused: HashMap<JobId, (String, u64)>,
    /// When the first batch job held back by `BatchStartDelay=` comes of
    /// age: a pass is due then, whatever else changed.
    next_of_age: Option<Instant>,
}

/// The highest priority a job can be given (`NO_VAL` and `INFINITE` above
/// it mean "not set" and "recompute"), for a job a shrink was made for.
const TOP_PRIORITY: u32 = 0xffff_fffd;

/// What the answers to this pass's questions are.
struct Answers {
    /// Resizes of the jobs that asked.
    decisions: Vec<Decision>,
    /// The cluster as they leave it.
    view: Snapshot,
    /// Waiting jobs to start first (shrinks were made for them).
    start_first: Vec<JobId>,
}

/// Put the question of each job in `asking` to the strategy, each on the
/// cluster as the answers before it leave it: the answers (resizes of the
/// job asking only; anything else is a strategy bug, logged and dropped),
/// and that cluster.
fn answer_asking(strategy: &mut dyn Strategy, s: &Snapshot, asking: &[JobId]) -> Answers {
    let mut view = s.clone();
    let mut answers = Vec::new();
    let mut start_first = Vec::new();
    for &job in asking {
        let report = strategy.reconfigure(&view, job);
        for d in report.decisions {
            match &d {
                Decision::Expand { job: j, add_nodes } if *j == job => {
                    for &i in add_nodes {
                        if let Some(n) = view.nodes.get_mut(i) {
                            n.free = false;
                        }
                    }
                }
                Decision::Shrink { job: j, .. } if *j == job => {}
                other => {
                    log::error!("JobId={job} asked whether to reconfigure, and {} answered {other:?}", strategy.name());
                    continue;
                }
            }
            if let Some(r) = view.running.iter_mut().find(|r| r.id == job) {
                r.adapting = true;
            }
            answers.push(d);
        }
        for note in report.notes {
            log::info!("{}", note.text);
        }
        start_first.extend(report.start_first);
    }
    Answers { decisions: answers, view, start_first }
}

/// Now, by the clock slurmctld stamps its records with (not SystemTime,
/// which can be ahead of it by a tick near a second's turn: a job started
/// at a corridor change due at a whole second was then recorded as started
/// the second before it).
fn unix_now() -> i64 {
    slurm::common::clock::now()
}

impl Agent {
    fn new(ctld: &'static Slurmctld, config: Config, role: Role, shared: Arc<Shared>) -> Agent {
        Agent {
            ctld,
            role,
            strategy: config.strategy.build(),
            config,
            shared,
            seen: UpdateCounters { job: -1, node: -1, job_events: 0 },
            last_pass_second: 0,
            last_pass: Instant::now(),
            passes: 0,
            force_next: false,
            corridor_in_force: None,
            said: HashMap::new(),
            unreadable_said: HashSet::new(),
            capped_said: HashSet::new(),
            slurmdbd_behind_since: None,
            slurmdbd_held_said: false,
            memory: Memory::default(),
            last_resize: 0,
            adapting: false,
            suspects: HashMap::new(),
            known: OptionsCache::default(),
            refused: HashMap::new(),
            next_of_age: None,
        }
    }

    fn run(mut self) {
        log::info!("{}", LogLine::AgentStarted { config: self.config.to_string() });
        self.corridor_in_force = self.corridor_now();
        if let Some(corridor) = self.corridor_in_force {
            log::info!("{}", LogLine::CorridorNow { corridor, cause: CorridorCause::Start });
        }
        loop {
            let mut reconfigured = false;
            {
                let mut st = self.shared.state.lock();
                if !st.stop && st.new_config.is_none() {
                    self.shared.wake.wait_for(&mut st, POLL);
                }
                if st.stop {
                    break;
                }
                if let Some(c) = st.new_config.take() {
                    // The same strategy with the same parameters keeps its
                    // instance, and so its state: a power plan is dropped by
                    // the strategy itself when the corridor moves.
                    if c.strategy != self.config.strategy {
                        self.strategy = c.strategy.build();
                    }
                    self.config = c;
                    reconfigured = true;
                    self.force_next = true;
                    log::info!("{}", LogLine::Reconfigured { config: self.config.to_string() });
                }
            }
            let corridor = self.corridor_now();
            if corridor != self.corridor_in_force {
                if let Some(corridor) = corridor {
                    let cause = if reconfigured { CorridorCause::Reconfigured } else { CorridorCause::Scheduled };
                    log::info!("{}", LogLine::CorridorNow { corridor, cause });
                }
                self.corridor_in_force = corridor;
                self.force_next = true;
            }
            if self.ctld.scheduling_disabled() || self.ctld.shutting_down() {
                continue;
            }
            if self.force_next || self.pass_due() {
                self.force_next = false;
                // A panic in one pass must not end scheduling for good: log
                // it and try again at the next change or tick.
                slurm::common::ffi_guard::guard("scheduling pass", (), || self.pass());
            }
        }
        log::info!("{}", LogLine::AgentStopped { passes: self.passes });
    }

    /// The corridor in force this second, if the strategy uses one.
    fn corridor_now(&self) -> Option<Corridor> {
        Some(self.config.power_in_use()?.state_at(unix_now())?.corridor)
    }

    /// A change since our last pass, or the tick has run out.
    fn pass_due(&self) -> bool {
        let now = self.ctld.update_counters();
        if now != self.seen {
            return true;
        }
        // The stamps have one-second resolution, and the job counts miss
        // node changes and job updates: such a change in the very second our
        // last pass ended leaves everything equal. Look again every
        // SAME_SECOND_RECHECK while that second lasts, and once in the next,
        // so such a change is never missed nor left waiting long.
        let last_change = self.seen.job.max(self.seen.node);
        if last_change >= self.last_pass_second
            && (unix_now() > self.last_pass_second || self.last_pass.elapsed() >= SAME_SECOND_RECHECK)
        {
            return true;
        }
        // A batch job held back by BatchStartDelay comes of age.
        if self.next_of_age.is_some_and(|at| Instant::now() >= at) {
            return true;
        }
        // While an adaptation waits for its application's commit, pass every
        // ADAPTING_POLL: a commit in the second of the last pass would
        // otherwise wait for the recheck, and a resize's latency with it.
        if self.adapting && self.last_pass.elapsed() >= ADAPTING_POLL {
            return true;
        }
        self.last_pass.elapsed() >= self.config.scheduler_tick
    }

    /// One pass, in three steps, so that a slow strategy (an LP) never holds
    /// slurmctld's locks: under the locks, read the cluster and settle the
    /// adaptations under way; outside them, decide; under them again, read
    /// the cluster anew and apply the decisions that still fit it.
    fn pass(&mut self) {
        let mut guard = LockGuard::<Scheduling>::acquire(self.ctld);
        let held = Instant::now();
        let now = unix_now();
        self.suspects.retain(|_, until| *until > Instant::now());
        let mut taken = self.snapshot(&guard, now);
        // Requests and deadlines first: an adaptation that ends frees nodes
        // the strategy may hand out in this very pass.
        let Settled { changed, statuses: settled, asking } = self.settle_adaptations(&mut guard, &taken, now);
        if changed {
            taken = self.snapshot(&guard, now);
        }
        let read_at = self.ctld.update_counters();
        drop(guard);
        let read_ms = held.elapsed().as_secs_f64() * 1e3;

        let deciding = Instant::now();
        // The jobs that asked first (Iserte et al. 2025's model: an answer
        // is a resize of the job asking), then the pass on the cluster as
        // they leave it, so that it hands out no node an answer took.
        let Answers { decisions: answers, view, start_first } =
            answer_asking(self.strategy.as_mut(), &taken.snapshot, &asking);
        let mut report = match self.role {
            Role::Scheduler => self.strategy.schedule(&view),
            Role::Answerer => PassReport::default(),
        };
        // As slurmctld's scheduler, it preempts for the jobs the strategy
        // left waiting, as stock Slurm's does (shrinking first, if so set).
        if self.role == Role::Scheduler {
            let more = preemption::preempt(&view, &report.decisions, self.config.shrink_before_preempt);
            report.decisions.extend(more.decisions);
            report.notes.extend(more.notes);
        }
        let decide_ms = deciding.elapsed().as_secs_f64() * 1e3;
        report.decisions.splice(0..0, answers);
        // The model's rules first: a decision that breaks one is a strategy
        // bug, said in the log and not applied.
        let rejected = rejections(&taken.snapshot, &report.decisions);
        for r in &rejected {
            log::error!("{r} ({} strategy)", self.strategy.name());
        }
        let mut decisions: Vec<Decision> = report
            .decisions
            .iter()
            .enumerate()
            .filter(|(i, _)| !rejected.iter().any(|r| r.index == *i))
            .map(|(_, d)| d.clone())
            .collect();
        // A batch job not yet BatchStartDelay old is planned for but not
        // started: the nodes the strategy chose for it stay free until the
        // pass when it comes of age, and its Reason stays slurmctld's.
        let young = &taken.young;
        decisions.retain(|d| !(d.starts_a_job() && young.contains_key(&d.job())));
        self.next_of_age = young.values().min().copied();
        let mut waits = match self.role {
            Role::Scheduler => self.strategy.waiting(&view, &decisions),
            Role::Answerer => Vec::new(),
        };
        waits.retain(|w| !young.contains_key(&w.job));

        let mut guard = LockGuard::<Scheduling>::acquire(self.ctld);
        // Told to stop while the strategy decided: nothing is started or
        // resized now (seen: a job started 30 ms after SIGTERM was never
        // launched, and timed out after the restart).
        if self.ctld.shutting_down() {
            log::info!("pass {}: slurmctld is stopping, {} decisions not applied", self.passes, decisions.len());
            return;
        }
        let held = Instant::now();
        // What changed while the strategy decided (a job ended, another was
        // submitted, a node went down) may undo a decision: those are
        // dropped, and the next pass decides again. When slurmctld's change
        // counters say nothing changed, the cluster is read once a pass, not
        // twice (half the lock time with a long queue). A change in the very
        // second of the read that moves only a whole-second stamp (a node
        // drained) is then seen at the next pass; a start it undid is
        // refused by select_nodes meanwhile, and decided again.
        let unchanged = self.ctld.update_counters() == read_at;
        let (fresh, stale) = if unchanged {
            (taken, HashSet::new())
        } else {
            let fresh = self.snapshot(&guard, unix_now());
            let stale = stale(&taken, &fresh, &decisions);
            (fresh, stale)
        };
        if !stale.is_empty() {
            log::debug!("pass {}: {} decisions no longer fit the cluster, deciding again", self.passes, stale.len());
            decisions = decisions.into_iter().enumerate().filter(|(i, _)| !stale.contains(i)).map(|(_, d)| d).collect();
            self.force_next = true;
        }
        log::debug!(
            "pass {}: {} nodes ({} free), {} running, {} ready to start, {} decisions",
            self.passes,
            fresh.snapshot.nodes.len(),
            fresh.snapshot.nodes.iter().filter(|n| n.free).count(),
            fresh.snapshot.running.len(),
            fresh.snapshot.pending.len(),
            decisions.len()
        );
        let mut statuses: HashMap<JobId, Status> = fresh.malleable.iter().map(|j| (j.id, j.status.clone())).collect();
        statuses.extend(settled);
        let mut records = fresh.shared_cores.clone();
        for (i, d) in decisions.iter().enumerate() {
            // Checked again before each decision: a SIGTERM that comes while
            // the decisions are applied (slurmctld's signal thread sets the
            // stamp without a lock) must stop the starts that follow it, whose
            // batch launches slurmctld's agent would drop. Stock's schedule()
            // checks once a cycle; each start is then one select_nodes long.
            if self.ctld.shutting_down() {
                log::info!(
                    "pass {}: slurmctld is stopping, {} of {} decisions not applied",
                    self.passes,
                    decisions.len() - i,
                    decisions.len()
                );
                break;
            }
            self.apply(&mut guard, &fresh, d, &mut statuses, &mut records, now);
        }
        // Jobs that may share cores, on busy nodes, where the strategy does
        // not place cores itself (sd-policy and ipsched do).
        let info = self.config.strategy.info;
        if self.role == Role::Scheduler && !info.shares_cores && !info.places_cores {
            self.oversubscribe(&mut guard, &fresh, &decisions, &waits);
        }
        // Why the others wait, for squeue (a job started meanwhile is left):
        // only the waits that differ from what the jobs show.
        let waits: Vec<Wait> = waits
            .iter()
            .map(|w| {
                let (code, text) = slurm_reason(w.reason);
                Wait { job: w.job.0, code, text, start: w.start.unwrap_or(0) }
            })
            .filter(|w| fresh.shown.get(&w.job).is_none_or(|shown| !w.is_shown(shown)))
            .collect();
        match self.role {
            Role::Scheduler => {
                guard.set_waiting(&waits);
            }
            // The scheduler beside us starts the job a shrink was made for,
            // as the first of its queue.
            Role::Answerer => {
                for id in &start_first {
                    match guard.set_priority(id.0, TOP_PRIORITY) {
                        Ok(()) => {
                            log::info!("{}", LogLine::PriorityRaised { job: *id, priority: TOP_PRIORITY })
                        }
                        Err(e) => log::error!("JobId={id}: raising its priority failed: {e}"),
                    }
                }
            }
        }
        // Each malleable job's status, for `scontrol show job` and for its
        // application's runtime, which reads it there.
        // A job that shares cores keeps its record there too, for task/drom
        // on its nodes and for the next pass.
        for (id, st) in &statuses {
            let status = st.encode();
            match records.get(id) {
                Some(rec) => guard.set_system_comment(id.0, &rec.beside(Some(&status))),
                None => guard.set_system_comment(id.0, &status),
            };
        }
        for (id, rec) in records.iter().filter(|(id, _)| !statuses.contains_key(id)) {
            guard.set_system_comment(id.0, &rec.encode());
        }
        self.adapting = statuses.values().any(|st| st.phase != Phase::Steady);
        self.seen = self.ctld.update_counters();
        drop(guard);
        let apply_ms = held.elapsed().as_secs_f64() * 1e3;
        log::debug!("{}", LogLine::LocksHeld { pass: self.passes, read_ms, apply_ms, decide_ms });
        let live: HashSet<JobId> = fresh.malleable.iter().map(|j| j.id).collect();
        self.memory.keep_only(|id| live.contains(&id));
        self.capped_said.retain(|id| live.contains(id));
        for (id, most) in &fresh.capped {
            if self.capped_said.insert(*id) {
                log::info!("{}", LogLine::Capped { job: *id, most: *most });
            }
        }
        for (id, why) in &fresh.unreadable {
            if self.unreadable_said.insert(*id) {
                log::warn!("JobId={id}: its malleable options do not read, so it is scheduled as rigid: {why}");
            }
        }
        for line in self.notes_to_say(&fresh.snapshot, report.notes) {
            log::info!("{line}");
        }
        // Messages wait in the agent's queue for a moment all the time:
        // only a wait of some seconds is said.
        match (fresh.slurmdbd_behind, self.slurmdbd_behind_since) {
            (true, None) => self.slurmdbd_behind_since = Some(Instant::now()),
            (true, Some(since)) if !self.slurmdbd_held_said && since.elapsed() >= SLURMDBD_BEHIND_SAID_AFTER => {
                self.slurmdbd_held_said = true;
                log::warn!("resizes held: slurmdbd is away or behind (sdiag: DBD Agent queue size)");
            }
            (false, Some(_)) => {
                self.slurmdbd_behind_since = None;
                if std::mem::take(&mut self.slurmdbd_held_said) {
                    log::info!("{}", LogLine::ResizesResumed);
                }
            }
            _ => {}
        }
        self.last_pass_second = unix_now();
        self.last_pass = Instant::now();
        self.passes += 1;
    }

    fn snapshot(&mut self, guard: &LockGuard<Scheduling>, now: i64) -> Taken {
        let mut taken = snapshot::take(guard, now, &self.config, &self.memory, &self.suspects, &mut self.known);
        // slurmdbd away or behind for long: an elastic job's resize is held
        // for as long, and a job that may preempt it no longer waits for it.
        if taken.slurmdbd_behind
            && self.slurmdbd_behind_since.is_some_and(|since| since.elapsed() >= SLURMDBD_BEHIND_SAID_AFTER)
        {
            for r in &mut taken.snapshot.running {
                r.resize_held = false;
            }
        }
        taken
    }

    /// The lines of this pass's notes to say: every note about no job; a note
    /// about a waiting job once while it waits for the same reason.
    fn notes_to_say(&mut self, s: &Snapshot, notes: Vec<Note>) -> Vec<String> {
        let waiting: HashSet<JobId> = s.pending.iter().map(|p| p.id).collect();
        self.said.retain(|id, _| waiting.contains(id));
        self.refused.retain(|id, _| waiting.contains(id));
        notes_once(&mut self.said, notes)
    }
}

/// A waiting job's Reason for slurmctld: its code, and the text squeue shows
/// instead of the code's name where Slurm has no word for it.
fn slurm_reason(reason: WaitReason) -> (WaitCode, Option<&'static str>) {
    match reason {
        WaitReason::Priority => (WaitCode::Priority, None),
        WaitReason::Resources => (WaitCode::Resources, None),
        WaitReason::Shrinking => (WaitCode::Resources, Some("Resources (running malleable jobs shrink for it)")),
        WaitReason::Power => (WaitCode::Power, None),
    }
}

/// The decisions (by index) that the cluster as read again no longer
/// allows. All of them when the node table itself changed (a reconfigure),
/// since decisions name nodes by their place in it.
fn stale(before: &Taken, now: &Taken, decisions: &[Decision]) -> HashSet<usize> {
    let same_nodes = before.table_index == now.table_index
        && before.snapshot.nodes.iter().zip(&now.snapshot.nodes).all(|(a, b)| a.name == b.name);
    if !same_nodes {
        return (0..decisions.len()).collect();
    }
    rejections(&now.snapshot, decisions).into_iter().map(|r| r.index).collect()
}

/// Which notes to say, given what was said about each waiting job (updated).
fn notes_once(said: &mut HashMap<JobId, String>, notes: Vec<Note>) -> Vec<String> {
    let mut lines = Vec::new();
    for note in notes {
        match note.job {
            None => lines.push(note.text),
            Some(job) => {
                if said.get(&job) != Some(&note.reason) {
                    said.insert(job, note.reason);
                    lines.push(note.text);
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_that_asks_is_answered_first_and_the_pass_keeps_off_what_it_got() {
        use malleable_model::{MalleableSpec, Node, NodeConstraint, PendingJob, RunningJob};
        // 4 nodes: job 1 malleable [1, 3] on node 0 and asking; nodes 1-3
        // free; job 2 (1 node) waits. NATURAL's answer: job 2 needs nothing
        // from job 1 (a node is idle), so job 1 grows to 3 onto nodes 1-2,
        // and the pass starts job 2 on node 3, the one left.
        let spec = MalleableSpec { min: 1, max: 3, constraint: NodeConstraint::None };
        let s = Snapshot {
            now: 100,
            nodes: Node::numbered([false, true, true, true]),
            running: vec![RunningJob::new(1, [0]).end_limit(Some(1000)).malleable(spec)],
            pending: vec![PendingJob::new(2, 1).time_limit(Some(60))],
            power: None,
        };
        let mut natural = malleable_core::StrategyChoice::named("natural").unwrap().build();
        let Answers { decisions: answers, view, .. } = answer_asking(natural.as_mut(), &s, &[JobId(1)]);
        assert_eq!(answers, vec![Decision::Expand { job: JobId(1), add_nodes: vec![1, 2] }]);
        assert!(view.running[0].adapting && !view.nodes[1].free && view.nodes[3].free);
        let pass = natural.schedule(&view).decisions;
        assert_eq!(pass, vec![Decision::Start { job: JobId(2), nodes: vec![3], time_limit: None }]);
        let mut all = answers;
        all.extend(pass);
        assert!(rejections(&s, &all).is_empty());
        // A strategy that is not asked answers nothing: easy leaves the job.
        let mut easy = malleable_core::StrategyChoice::named("easy").unwrap().build();
        assert_eq!(answer_asking(easy.as_mut(), &s, &[JobId(1)]).decisions, vec![]);
    }

    #[test]
    fn a_note_about_a_job_is_said_once_per_reason() {
        let mut said = HashMap::new();
        let held = |corridor: &str| {
            Note::about(JobId(7), format!("power budget under {corridor}"), format!("JobId=7 held ({corridor})"))
        };
        let pass = |said: &mut HashMap<JobId, String>, notes: Vec<Note>| notes_once(said, notes);
        assert_eq!(
            pass(&mut said, vec![held("0-300"), Note::pass("power: repaired")]),
            vec!["JobId=7 held (0-300)".to_string(), "power: repaired".to_string()]
        );
        // The next pass says the same: only the note about no job is said.
        assert_eq!(
            pass(&mut said, vec![held("0-300"), Note::pass("power: repaired")]),
            vec!["power: repaired".to_string()]
        );
        // A pass without the note keeps it said (the job still waits) ...
        assert!(pass(&mut said, vec![]).is_empty());
        assert!(pass(&mut said, vec![held("0-300")]).is_empty());
        // ... and a new reason is said again.
        assert_eq!(pass(&mut said, vec![held("0-1000")]), vec!["JobId=7 held (0-1000)".to_string()]);
    }
}
