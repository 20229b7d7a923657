//! The scheduling agent: one thread that runs a pass whenever slurmctld's
//! job or node records change (submit, start, completion, cancel, node state),
//! when the power corridor moves (reconfigure or a scheduled change), and at
//! least every SchedulerTick, until fini stops it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use malleable_core::{Note, Strategy, WaitReason};
use malleable_model::log_lines::{CorridorCause, LogLine};
use malleable_model::{rejections, Corridor, Decision, JobId, Snapshot};
use parking_lot::{Condvar, Mutex};
use slurm::ctld::{LockGuard, Scheduling, Slurmctld, UpdateCounters, WaitCode};

use crate::adaptation::Memory;
use crate::config::Config;
use crate::job_options::OptionsCache;
use crate::kept::Kept;
use crate::snapshot::{self, Suspects, Taken};
use said::Said;
use slurmdbd::SlurmdbdWatch;

mod apply;
mod comments;
mod oversubscribe;
mod pass;
mod said;
mod settle;
mod share;
mod slurmdbd;

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
    /// What the log says once while it holds (said.rs).
    said: Said,
    /// What the runtimes measured, and when adaptations were decided.
    memory: Memory,
    /// The last adaptation id handed out.
    last_resize: u64,
    /// Whether an adaptation was under way after the last pass.
    adapting: bool,
    /// Nodes an expand failed on, and slurmdbd not answering.
    suspects: Suspects,
    /// Whether slurmdbd answers, and since when it has been away or behind.
    slurmdbd: SlurmdbdWatch,
    /// Each job's options, read once from its SPANK environment.
    known: OptionsCache,
    /// The waiting jobs as the last reads left them, and the feed that
    /// says which to read again (`kept.rs`, `feed.rs`).
    kept: Kept,
    /// For each waiting job slurmctld refused to start, the refusal and how
    /// many times it repeated: a strategy decides the same start again at
    /// every pass, and the log says it once (apply.rs).
    refused: HashMap<JobId, (String, u64)>,
    /// When the first batch job held back by `BatchStartDelay=` comes of
    /// age: a pass is due then, whatever else changed.
    next_of_age: Option<Instant>,
}

/// The highest priority a job can be given (`NO_VAL` and `INFINITE` above
/// it mean "not set" and "recompute"), for a job a shrink was made for.
const TOP_PRIORITY: u32 = 0xffff_fffd;

/// Now, by the clock slurmctld stamps its records with (not SystemTime,
/// which can be ahead of it by a tick near a second's turn: a job started
/// at a corridor change due at a whole second was then recorded as started
/// the second before it).
fn unix_now() -> i64 {
    slurm::common::clock::now()
}

impl Agent {
    fn new(ctld: &'static Slurmctld, config: Config, role: Role, shared: Arc<Shared>) -> Agent {
        // Beside another scheduler, jobs start that no decision of ours
        // named: every pass reads every job there.
        let kept = Kept::new(config.feed, role == Role::Scheduler);
        Agent {
            ctld,
            role,
            strategy: config.strategy.build(),
            config,
            shared,
            seen: UpdateCounters { job: -1, node: -1, job_events: 0, job_ends: 0 },
            last_pass_second: 0,
            last_pass: Instant::now(),
            passes: 0,
            force_next: false,
            corridor_in_force: None,
            said: Said::default(),
            memory: Memory::default(),
            last_resize: 0,
            adapting: false,
            suspects: Suspects::default(),
            slurmdbd: SlurmdbdWatch::default(),
            known: OptionsCache::default(),
            kept,
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
                    // What a waiting job's read gives may differ under the
                    // new settings (the strategy's, the power keys'): every
                    // job is read anew.
                    self.kept.settings = self.config.feed;
                    self.kept.feed.ask_whole();
                    reconfigured = true;
                    self.slurmdbd.aim_again();
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
    fn snapshot(&mut self, guard: &LockGuard<Scheduling>, now: i64) -> Taken {
        self.known.count_ends(self.ctld.update_counters().job_ends);
        let mut taken =
            snapshot::take(guard, now, &self.config, &self.memory, &self.suspects, &mut self.known, &mut self.kept);
        // slurmdbd away or behind for long: an elastic job's resize is held
        // for as long, and a job that may preempt it no longer waits for it.
        if taken.slurmdbd_behind && self.slurmdbd.behind_for_long() {
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
        self.said.notes.keep(|id| waiting.contains(id));
        self.refused.retain(|id, _| waiting.contains(id));
        self.said.notes(notes)
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
