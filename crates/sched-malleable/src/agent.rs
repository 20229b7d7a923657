//! The scheduling agent: one thread that runs a pass whenever slurmctld's
//! job or node records change (submit, start, completion, cancel, node state)
//! and at least every SchedulerTick, until fini stops it.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use malleable_core::{Decision, Strategy};
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
        let shared = Arc::new(Shared {
            state: Mutex::new(SharedState { stop: false, new_config: None }),
            wake: Condvar::new(),
        });
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
        }
    }

    fn run(mut self) {
        log::info!("agent started: {}", self.config);
        loop {
            let mut force = false;
            {
                let mut st = self.shared.state.lock();
                if !st.stop && st.new_config.is_none() {
                    self.shared.wake.wait_for(&mut st, POLL);
                }
                if st.stop {
                    break;
                }
                if let Some(c) = st.new_config.take() {
                    self.strategy = c.strategy.build();
                    self.config = c;
                    force = true;
                    log::info!("reconfigured: {}", self.config);
                }
            }
            if self.ctld.scheduling_disabled() {
                continue;
            }
            if force || self.pass_due() {
                // A panic in one pass must not end scheduling for good: log
                // it and try again at the next change or tick.
                slurm::ffi_guard::guard("scheduling pass", (), || self.pass());
            }
        }
        log::info!("agent stopped after {} passes", self.passes);
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
        let taken = snapshot::take(&guard, now);
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
        for d in decisions {
            match d {
                Decision::Start { job, nodes } => {
                    let table: Vec<usize> = nodes.iter().map(|&i| taken.table_index[i]).collect();
                    match guard.start_job(job.0, &table) {
                        Ok(list) => log::info!("started JobId={} on {} ({})", job, list, self.strategy.name()),
                        Err(e) => log::info!("could not start JobId={job} on {} nodes: {e}", table.len()),
                    }
                }
                Decision::Expand { job, .. } | Decision::Shrink { job, .. } => {
                    log::info!("JobId={job}: {d} not applied: resizing running jobs is not supported by the plugin yet");
                }
            }
        }
        self.seen = self.ctld.update_counters();
        drop(guard);
        self.last_pass_second = unix_now();
        self.last_pass = Instant::now();
        self.passes += 1;
    }
}
