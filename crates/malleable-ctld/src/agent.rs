//! The scheduling agent: one thread that runs a pass whenever slurmctld's
//! job or node records change (submit, start, completion, cancel, node state),
//! when the power corridor moves (reconfigure or a scheduled change), and at
//! least every SchedulerTick, until fini stops it.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use malleable_core::{Note, Strategy, WaitReason};
use malleable_model::log_lines::{CorridorCause, LogLine};
use malleable_model::{rejections, Corridor, Decision, JobId, Snapshot};
use parking_lot::{Condvar, Mutex};
use slurm::ctld::{LockGuard, Scheduling, Slurmctld, WaitCode};

use crate::adaptation::Memory;
use crate::config::Config;
use crate::job_options::OptionsCache;
use crate::kept::Kept;
use crate::snapshot::{self, Suspects, Taken};
use pacing::Pacing;
use said::Said;
use slurmdbd::SlurmdbdWatch;

mod apply;
mod comments;
mod oversubscribe;
mod pacing;
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
    /// When a pass is due, and how many there were (pacing.rs).
    pacing: Pacing,
    /// The power corridor the last look found in force; `None` when the
    /// strategy does not use one.
    corridor_in_force: Option<Corridor>,
    /// What the log says once while it holds (said.rs).
    said: Said,
    /// What the runtimes measured, when adaptations were decided, and the
    /// last adaptation id handed out.
    memory: Memory,
    /// Nodes an expand failed on, and slurmdbd not answering.
    suspects: Suspects,
    /// Whether slurmdbd answers, and since when it has been away or behind.
    slurmdbd: SlurmdbdWatch,
    /// Each job's options, read once from its SPANK environment.
    known: OptionsCache,
    /// The waiting jobs as the last reads left them, and the feed that
    /// says which to read again (`kept.rs`, `feed.rs`).
    kept: Kept,
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
            pacing: Pacing::new(Instant::now()),
            corridor_in_force: None,
            said: Said::default(),
            memory: Memory::default(),
            suspects: Suspects::default(),
            slurmdbd: SlurmdbdWatch::default(),
            known: OptionsCache::default(),
            kept,
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
                    self.pacing.force_next = true;
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
                self.pacing.force_next = true;
            }
            if self.ctld.scheduling_disabled() || self.ctld.shutting_down() {
                continue;
            }
            let tick = self.config.scheduler_tick;
            let due = || self.pacing.due(self.ctld.update_counters(), unix_now(), Instant::now(), tick);
            if self.pacing.force_next || due() {
                self.pacing.force_next = false;
                // A panic in one pass must not end scheduling for good: log
                // it and try again at the next change or tick.
                slurm::common::ffi_guard::guard("scheduling pass", (), || self.pass());
            }
        }
        log::info!("{}", LogLine::AgentStopped { passes: self.pacing.passes });
    }

    /// The corridor in force this second, if the strategy uses one.
    fn corridor_now(&self) -> Option<Corridor> {
        Some(self.config.power_in_use()?.state_at(unix_now())?.corridor)
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
        self.said.start_refused.keep(|id| waiting.contains(id));
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
