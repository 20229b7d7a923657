//! The scheduling agent: one thread that runs a pass whenever slurmctld's
//! job or node records change (submit, start, completion, cancel, node state),
//! when the power corridor moves (reconfigure or a scheduled change), and at
//! least every SchedulerTick, until fini stops it.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use malleable_core::model::Snapshot;
use malleable_core::power::{budget_starts, LpStats};
use malleable_core::{Corridor, Decision, JobId, Strategy, Watts};
use parking_lot::{Condvar, Mutex};
use slurm::{LockGuard, Locks, Slurmctld, UpdateCounters};

use crate::config::Config;
use crate::snapshot;

/// How often the change counters are looked at. They are plain words in
/// slurmctld's memory, so a look is cheap; this bounds how late a pass runs
/// after a submit.
const POLL: Duration = Duration::from_millis(200);

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

pub struct AgentHandle {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl AgentHandle {
    pub fn start(ctld: &'static Slurmctld, config: Config) -> Result<AgentHandle, String> {
        let shared =
            Arc::new(Shared { state: Mutex::new(SharedState { stop: false, new_config: None }), wake: Condvar::new() });
        let agent = Agent::new(ctld, config, shared.clone());
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
    /// Jobs already said to be held back by the power budget (under the
    /// corridor in force), so each is said once.
    held_logged: HashSet<JobId>,
    /// The strategy's LP counters after our last pass: repair attempts and
    /// solves.
    lp_seen: (u64, u64),
}

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

impl Agent {
    fn new(ctld: &'static Slurmctld, config: Config, shared: Arc<Shared>) -> Agent {
        Agent {
            ctld,
            strategy: config.strategy.build(),
            config,
            shared,
            seen: UpdateCounters { job: -1, node: -1 },
            last_pass_second: 0,
            last_pass: Instant::now(),
            passes: 0,
            force_next: false,
            corridor_in_force: None,
            held_logged: HashSet::new(),
            lp_seen: (0, 0),
        }
    }

    fn run(mut self) {
        log::info!("agent started: {}", self.config);
        self.corridor_in_force = self.corridor_now();
        if let Some(c) = self.corridor_in_force {
            log::info!("power corridor now {c}");
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
                    // The same strategy keeps its instance, and so its
                    // state: a power plan is dropped by the strategy itself
                    // when the corridor moves.
                    if c.strategy != self.config.strategy {
                        self.strategy = c.strategy.build();
                        self.lp_seen = (0, 0);
                    }
                    self.config = c;
                    reconfigured = true;
                    self.force_next = true;
                    log::info!("reconfigured: {}", self.config);
                }
            }
            let corridor = self.corridor_now();
            if corridor != self.corridor_in_force {
                if let Some(c) = corridor {
                    log::info!(
                        "power corridor now {c} ({})",
                        if reconfigured { "reconfigured" } else { "scheduled change" }
                    );
                }
                self.corridor_in_force = corridor;
                self.held_logged.clear();
                self.force_next = true;
            }
            if self.ctld.scheduling_disabled() {
                continue;
            }
            if self.force_next || self.pass_due() {
                self.force_next = false;
                // A panic in one pass must not end scheduling for good: log
                // it and try again at the next change or tick.
                slurm::ffi_guard::guard("scheduling pass", (), || self.pass());
            }
        }
        log::info!("agent stopped after {} passes", self.passes);
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
        // Counters have one-second resolution: a change in the very second
        // our last pass ended leaves them equal. Look once more in the next
        // second so such a change is never missed.
        let last_change = self.seen.job.max(self.seen.node);
        if last_change >= self.last_pass_second && unix_now() > self.last_pass_second {
            return true;
        }
        self.last_pass.elapsed() >= self.config.scheduler_tick
    }

    fn pass(&mut self) {
        let mut guard = LockGuard::acquire(self.ctld, Locks::SCHEDULE);
        let now = unix_now();
        let taken = snapshot::take(&guard, now, self.config.power_in_use());
        let decisions = self.strategy.schedule(&taken.snapshot);
        log::debug!(
            "pass {}: {} nodes ({} free), {} running, {} ready to start, {} decisions",
            self.passes,
            taken.snapshot.nodes.len(),
            taken.snapshot.nodes.iter().filter(|n| n.free).count(),
            taken.snapshot.running.len(),
            taken.snapshot.pending.len(),
            decisions.len()
        );
        for d in &decisions {
            match d {
                Decision::Start { job, nodes } => {
                    let table: Vec<usize> = nodes.iter().map(|&i| taken.table_index[i]).collect();
                    match guard.start_job(job.0, &table) {
                        Ok(list) => log::info!("started JobId={} on {} ({})", job, list, self.strategy.name()),
                        Err(e) => log::info!("could not start JobId={job} on {} nodes: {e}", table.len()),
                    }
                }
                Decision::Expand { job, .. } | Decision::Shrink { job, .. } => {
                    log::info!(
                        "JobId={job}: {d} not applied: resizing running jobs is not supported by the plugin yet"
                    );
                }
            }
        }
        self.seen = self.ctld.update_counters();
        drop(guard);
        self.log_power(&taken.snapshot, &decisions);
        self.last_pass_second = unix_now();
        self.last_pass = Instant::now();
        self.passes += 1;
    }
}

impl Agent {
    /// After a pass of a power-aware strategy: say once per job why the
    /// power budget holds it back, and what the LP did if it was asked.
    fn log_power(&mut self, s: &Snapshot, decisions: &[Decision]) {
        if s.power.is_some() {
            self.held_logged.retain(|id| s.pending.iter().any(|p| p.id == *id));
            for (job, why) in held_back_by_power(s, decisions) {
                if self.held_logged.insert(job) {
                    log::info!("{why}");
                }
            }
        }
        if let Some(st) = self.strategy.lp_stats() {
            if let Some(line) = lp_news(st, self.lp_seen) {
                log::info!("{line}");
            }
            self.lp_seen = (st.repairs_attempted, st.solves);
        }
    }
}

/// What the LP did since `seen` (repair attempts, solves), when it tried a
/// repair: its last finding and the solves' time.
fn lp_news(st: &LpStats, (repairs, solves): (u64, u64)) -> Option<String> {
    (st.repairs_attempted > repairs).then(|| {
        // The stats keep the latest solve times: the new ones are the last.
        let fresh = usize::try_from(st.solves.saturating_sub(solves)).unwrap_or(usize::MAX);
        let new = &st.solve_ms[st.solve_ms.len().saturating_sub(fresh)..];
        format!("power: {} (LP: {} solve(s) in {:.1} ms)", st.last, new.len(), new.iter().sum::<f64>())
    })
}

/// Watts for the log: at most one decimal, none when whole.
fn watts(w: Watts) -> String {
    let t = format!("{w:.1}");
    t.strip_suffix(".0").map_or(t.clone(), str::to_string)
}

/// The jobs EASY would start now that the power-aware strategy held back,
/// because their start would take the estimated draw above the corridor's
/// top, each with a log line that says so. The figures are the core's own
/// budget check (seed 002, Algorithm 2, lines 15-17). A pass that carried
/// out a resize plan instead holds nothing back by budget.
pub fn held_back_by_power(s: &Snapshot, decisions: &[Decision]) -> Vec<(JobId, String)> {
    let Some(power) = s.power else {
        return Vec::new();
    };
    if decisions.iter().any(|d| !matches!(d, Decision::Start { .. })) {
        return Vec::new();
    }
    let started: HashSet<JobId> = decisions.iter().map(Decision::job).collect();
    budget_starts(s)
        .1
        .into_iter()
        .filter(|h| !started.contains(&h.job))
        .map(|h| {
            (
                h.job,
                format!(
                    "JobId={} held back by the power budget: starting it on {} node(s) would raise the estimated \
                     draw from {} W to {} W, above the top of the power corridor {} W",
                    h.job,
                    h.nodes,
                    watts(h.draw_before),
                    watts(h.draw_after),
                    power.corridor
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_core::model::{Node, PendingJob, RunningJob};
    use malleable_core::{JobPower, PowerState};

    fn cluster(nodes: usize, corridor: (f64, f64)) -> Snapshot {
        Snapshot {
            now: 1000,
            nodes: (0..nodes).map(|i| Node { name: format!("n{}", i + 1), free: true }).collect(),
            running: Vec::new(),
            pending: Vec::new(),
            power: Some(PowerState {
                corridor: Corridor::new(corridor.0, corridor.1).unwrap(),
                idle_node: 71.0,
                measured_draw: None,
            }),
        }
    }

    fn pending(id: u32, nodes: u32, watts: f64) -> PendingJob {
        PendingJob {
            id: JobId(id),
            priority: 100 - id,
            submit: 0,
            nodes,
            time_limit: Some(60),
            malleable: None,
            power: Some(JobPower::fixed(watts)),
        }
    }

    #[test]
    fn lp_repairs_are_logged_with_their_solve_time_once() {
        let mut st = LpStats::default();
        assert_eq!(lp_news(&st, (0, 0)), None);
        st.repairs_attempted = 1;
        st.solve_ms = vec![1.25, 2.5, 0.25];
        st.solves = 3;
        st.last = "corridor 1000-1700 broken: resizing running jobs only (2 resized)".into();
        assert_eq!(
            lp_news(&st, (0, 1)).unwrap(),
            "power: corridor 1000-1700 broken: resizing running jobs only (2 resized) (LP: 2 solve(s) in 2.8 ms)"
        );
        // Nothing new since the last pass: nothing said.
        assert_eq!(lp_news(&st, (1, 3)), None);
    }

    #[test]
    fn a_start_above_the_corridor_is_said_held_back_with_the_draws() {
        // The example: 4 idle nodes at 71 W draw 284 W; one node of
        // a 250 W job makes it 463 W, above 300 W.
        let mut s = cluster(4, (0.0, 300.0));
        s.pending.push(pending(7, 1, 250.0));
        let held = held_back_by_power(&s, &[]);
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].0, JobId(7));
        assert_eq!(
            held[0].1,
            "JobId=7 held back by the power budget: starting it on 1 node(s) would raise the estimated draw \
             from 284 W to 463 W, above the top of the power corridor 0-300 W"
        );
        // With room in the corridor it is not held back.
        s.power.as_mut().unwrap().corridor = Corridor::new(0.0, 1000.0).unwrap();
        assert!(held_back_by_power(&s, &[]).is_empty());
        // Without power-aware scheduling there is nothing to say.
        s.power = None;
        assert!(held_back_by_power(&s, &[]).is_empty());
    }

    #[test]
    fn the_strategys_own_starts_use_up_the_budget_first() {
        // 463 W after job 1 starts; job 2 would add 179 W more: 642 > 600.
        let mut s = cluster(4, (0.0, 600.0));
        s.pending.push(pending(1, 1, 250.0));
        s.pending.push(pending(2, 1, 250.0));
        let started = [Decision::Start { job: JobId(1), nodes: vec![0] }];
        let held = held_back_by_power(&s, &started);
        assert_eq!(held.iter().map(|h| h.0).collect::<Vec<_>>(), vec![JobId(2)]);
        assert!(held[0].1.contains("from 463 W to 642 W"), "{}", held[0].1);
        // A running job counts at its upper estimate, a measurement first.
        let mut s = cluster(4, (0.0, 600.0));
        s.nodes[0].free = false;
        s.running.push(RunningJob {
            id: JobId(9),
            nodes: vec![0],
            start: 0,
            end_limit: Some(5000),
            malleable: None,
            adapting: false,
            mtct_ratio: None,
            power: Some(JobPower { min_per_node: 100.0, max_per_node: 300.0, measured_per_node: Some(200.5) }),
        });
        s.pending.push(pending(3, 2, 250.0));
        let held = held_back_by_power(&s, &[]);
        assert!(held[0].1.contains("on 2 node(s)") && held[0].1.contains("from 413.5 W to 771.5 W"), "{:?}", held);
    }
}
