//! One scheduling pass in three steps: read the cluster under slurmctld's
//! locks (settling the adaptations under way), decide without them, and
//! write the decisions, the Reasons and the statuses under them again.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use malleable_core::{Note, PassInput, StrategyPass, Waiting};
use malleable_model::log_lines::LogLine;
use malleable_model::runtime_msg::{Phase, Status};
use malleable_model::{Decision, JobId};
use slurm::common::logger;
use slurm::ctld::{LockGuard, Scheduling, UpdateCounters, Wait};

use super::comments;
use super::settle::Settled;
use super::{slurm_reason, stale, unix_now, Agent, Role, TOP_PRIORITY};
use crate::snapshot::{self, Taken};

/// How the controller asks the core's pass, in its role and settings: the
/// simulator asks it the same things (the replay test below).
#[derive(Copy, Clone, Debug)]
struct Asked {
    role: Role,
    shrink_before_preempt: bool,
}

impl Asked {
    /// The core's pass on `snapshot` for the jobs `asking`, the `young`
    /// batch jobs (not of age) planned for but not started.
    fn pass(
        self,
        strategy: &mut dyn malleable_core::Strategy,
        snapshot: &malleable_model::Snapshot,
        asking: &[JobId],
        young: impl Iterator<Item = JobId>,
    ) -> malleable_core::PassOutcome {
        let held_back: HashSet<JobId> = young.collect();
        let scheduling = match self.role {
            Role::Scheduler => Some(StrategyPass { shrink_before_preempt: self.shrink_before_preempt, reasons: true }),
            Role::Answerer => None,
        };
        let input = PassInput { snapshot, asking, scheduling, held_back: &held_back };
        malleable_core::pass(strategy, &input)
    }
}

/// What the read under the locks gave.
struct Read {
    taken: Taken,
    /// The statuses settling the adaptations left.
    settled: HashMap<JobId, Status>,
    /// The jobs whose application asked whether to reconfigure.
    asking: Vec<JobId>,
    /// slurmctld's change counters when the locks were let go.
    read_at: UpdateCounters,
    read_ms: f64,
    /// Of which the agent thread was on the CPU, and waiting for one.
    read_times: ThreadTimes,
    now: i64,
}

/// What the strategy decided, away from the locks.
struct Decided {
    /// Valid decisions, in the order they are carried out.
    decisions: Vec<Decision>,
    /// Why the jobs left waiting wait.
    waits: Vec<Waiting>,
    /// Waiting jobs to start first (shrinks were made for them).
    start_first: Vec<JobId>,
    notes: Vec<Note>,
    decide_ms: f64,
}

impl Agent {
    pub(super) fn pass(&mut self) {
        let read = self.read();
        let decided = self.decide(&read);
        self.write(read, decided);
        self.pacing.passed(unix_now(), Instant::now());
    }

    /// Under the locks: the cluster as a snapshot, with the adaptations
    /// under way settled first (one that ends frees nodes the strategy may
    /// hand out in this very pass, so the cluster is read again then).
    fn read(&mut self) -> Read {
        // What the read says is written once the locks are let go.
        let lines = logger::hold();
        sweep_heap();
        let mut guard = LockGuard::<Scheduling>::acquire(self.ctld);
        let held = Instant::now();
        let at = ThreadTimes::now();
        let now = unix_now();
        self.suspects.nodes.retain(|_, until| *until > Instant::now());
        // What the probe last found, before anything is read: a resize
        // this pass (a forced shrink's end among them) would be slurmctld's
        // first word to a slurmdbd gone, and wait for it under the locks.
        // It is aimed at slurm.conf's slurmdbd once, and again after a
        // reconfigure.
        self.suspects.slurmdbd = self.slurmdbd.unanswered(|| guard.slurmdbd_address());
        let mut taken = self.snapshot(&guard, now);
        let Settled { changed, statuses: settled, asking } = self.settle_adaptations(&mut guard, &taken, now);
        if changed {
            taken = self.snapshot(&guard, now);
        }
        // The waiting jobs as kept: copied after the locks are let go,
        // unless slurmctld is to say whom the first of them may preempt.
        let preempting = guard.preemption_enabled();
        if preempting {
            snapshot::add_waiting(&mut taken, &self.kept);
            snapshot::who_may_preempt(&guard, &mut taken.snapshot.pending);
        }
        let read_at = self.ctld.update_counters();
        drop(guard);
        let read_ms = held.elapsed().as_secs_f64() * 1e3;
        let read_times = ThreadTimes::now().since(&at);
        drop(lines);
        self.kept.nodes.tidy();
        if !preempting {
            snapshot::add_waiting(&mut taken, &self.kept);
        }
        Read { taken, settled, asking, read_at, read_ms, read_times, now }
    }

    /// Without the locks: the core's pass (malleable_core::pass, which the
    /// simulator runs too): the answers to the jobs that asked, the
    /// strategy's pass on the cluster they leave, preemption for the jobs
    /// it left waiting (as slurmctld's scheduler), decisions that break the
    /// model's rules said and dropped; a batch job not yet of age is
    /// planned for but not started.
    fn decide(&mut self, read: &Read) -> Decided {
        let deciding = Instant::now();
        let young = &read.taken.young;
        let asked = Asked { role: self.role, shrink_before_preempt: self.config.shrink_before_preempt };
        let out = asked.pass(self.strategy.as_mut(), &read.taken.snapshot, &read.asking, young.keys().copied());
        let decide_ms = deciding.elapsed().as_secs_f64() * 1e3;
        let name = self.strategy.name();
        for (job, answer) in &out.refused_answers {
            log::error!("JobId={job} asked whether to reconfigure, and {name} answered {answer:?}");
        }
        for note in &out.answer_notes {
            log::info!("{}", note.text);
        }
        for r in &out.rejected {
            log::error!("{r} ({name} strategy)");
        }
        self.pacing.next_of_age = young.values().min().copied();
        Decided {
            decisions: out.decisions,
            waits: out.waits,
            start_first: out.start_first,
            notes: out.notes,
            decide_ms,
        }
    }

    /// Under the locks again: what still fits the cluster is carried out,
    /// the jobs left waiting get their Reasons, each malleable job its
    /// status; then, without the locks, what the pass has to say.
    fn write(&mut self, read: Read, decided: Decided) {
        let Read { mut taken, settled, read_at, read_ms, read_times, now, .. } = read;
        let Decided { mut decisions, waits, start_first, notes, decide_ms } = decided;
        // Why the others wait, for squeue: only the waits that differ from
        // what the jobs show (as kept: read, or given since), found before
        // the locks are taken, for ten thousand waiting jobs.
        let to_show: Vec<Wait> = waits
            .iter()
            .map(|w| {
                let (code, text) = slurm_reason(w.reason);
                Wait { job: w.job.0, code, text, start: w.start.unwrap_or(0) }
            })
            .filter(|w| self.kept.shown_of(w.job).is_none_or(|shown| !w.is_shown(shown)))
            .collect();
        // Nothing to start, resize or say: the locks are not taken again.
        // With ten thousand waiting jobs and nothing free, most passes are
        // such, and each second hold of the locks was one more a client
        // waited behind.
        let info = self.config.strategy.info;
        let oversubscribing = self.role == Role::Scheduler
            && !info.shares_cores
            && !info.places_cores
            && !taken.oversubscribers.is_empty();
        if decisions.is_empty() && to_show.is_empty() && start_first.is_empty() && !oversubscribing {
            let statuses = comments::statuses(&taken.malleable, &settled);
            if comments::to_write(&taken.malleable, &taken.shared_cores, &statuses, &taken.shared_cores).is_empty() {
                self.pacing.adapting = statuses.values().any(|st| st.phase != Phase::Steady);
                // What changed since the read (while deciding) is decided at the next pass.
                self.pacing.seen = read_at;
                let (on_cpu_ms, queued_ms) = (read_times.cpu_ms, read_times.queued_ms);
                log::debug!(
                    "{}",
                    LogLine::LocksHeld {
                        pass: self.pacing.passes,
                        read_ms,
                        apply_ms: None,
                        on_cpu_ms,
                        queued_ms,
                        decide_ms
                    }
                );
                self.say(&taken, notes);
                return;
            }
        }
        let lines = logger::hold();
        sweep_heap();
        let mut guard = LockGuard::<Scheduling>::acquire(self.ctld);
        // Told to stop while the strategy decided: nothing is started or
        // resized now (seen: a job started 30 ms after SIGTERM was never
        // launched, and timed out after the restart).
        if self.ctld.shutting_down() {
            log::info!("pass {}: slurmctld is stopping, {} decisions not applied", self.pacing.passes, decisions.len());
            return;
        }
        let held = Instant::now();
        let at = ThreadTimes::now();
        // What changed while the strategy decided (a job ended, another was
        // submitted, a node went down) may undo a decision: those are
        // dropped, and the next pass decides again. When slurmctld's change
        // counters say nothing changed, the cluster is read once a pass, not
        // twice (half the lock time with a long queue). A change in the very
        // second of the read that moves only a whole-second stamp (a node
        // drained) is then seen at the next pass; a start it undid is
        // refused by select_nodes meanwhile, and decided again. With nothing
        // to start, resize or share, a change undoes nothing: the Reasons and
        // statuses are written as decided, and the pass that follows at once
        // reads the change (with a queue of 55,000 and an sbatch every half
        // second, the read again was half of such a pass's second hold).
        let unchanged = self.ctld.update_counters() == read_at;
        let read_again = !unchanged && (!decisions.is_empty() || oversubscribing);
        let (fresh, stale) = if !read_again {
            (taken, HashSet::new())
        } else {
            let mut fresh = self.snapshot(&guard, unix_now());
            snapshot::carry_waiting(&mut taken, &mut fresh);
            let stale = stale(&taken, &fresh, &decisions);
            (fresh, stale)
        };
        if !stale.is_empty() {
            log::debug!(
                "pass {}: {} decisions no longer fit the cluster, deciding again",
                self.pacing.passes,
                stale.len()
            );
            decisions = decisions.into_iter().enumerate().filter(|(i, _)| !stale.contains(i)).map(|(_, d)| d).collect();
            self.pacing.force_next = true;
        }
        let mut statuses = comments::statuses(&fresh.malleable, &settled);
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
                    self.pacing.passes,
                    decisions.len() - i,
                    decisions.len()
                );
                break;
            }
            // Whatever comes of it, the job is read again at the next pass.
            self.kept.feed.touched(d.job().0);
            self.apply(&mut guard, &fresh, d, &mut statuses, &mut records, now);
        }
        // Jobs that may share cores, on busy nodes, where the strategy does
        // not place cores itself (sd-policy and ipsched do).
        if self.role == Role::Scheduler && !info.shares_cores && !info.places_cores {
            self.oversubscribe(&mut guard, &fresh, &decisions, &waits);
        }
        // Why the others wait (a job started meanwhile is left).
        match self.role {
            Role::Scheduler => {
                guard.set_waiting(&to_show);
                // What they show now, kept: the next pass compares with it.
                for w in &to_show {
                    self.kept.shown(JobId(w.job), w.as_shown());
                }
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
        // Only those that differ from what the job showed when read.
        for (id, text) in comments::to_write(&fresh.malleable, &fresh.shared_cores, &statuses, &records) {
            comments::write(&mut guard, id, &text);
        }
        self.pacing.adapting = statuses.values().any(|st| st.phase != Phase::Steady);
        // What changed since the read and was not read again is decided at
        // the next pass.
        self.pacing.seen = if unchanged || read_again { self.ctld.update_counters() } else { read_at };
        drop(guard);
        let apply_ms = held.elapsed().as_secs_f64() * 1e3;
        let applied = ThreadTimes::now().since(&at);
        drop(lines);
        // A kept waiting job keeps what it was written as shown.
        for m in fresh.malleable.iter().filter(|m| !m.running) {
            if let Some(st) = statuses.get(&m.id).filter(|st| !m.shown || *st != &m.status) {
                self.kept.status_shown(m.id, st);
            }
        }
        log::debug!(
            "pass {}: {} nodes ({} free), {} running, {} ready to start, {} decisions",
            self.pacing.passes,
            fresh.snapshot.nodes.len(),
            fresh.snapshot.nodes.iter().filter(|n| n.free).count(),
            fresh.snapshot.running.len(),
            fresh.snapshot.pending.len(),
            decisions.len()
        );
        let on_cpu_ms = read_times.cpu_ms + applied.cpu_ms;
        let queued_ms = read_times.queued_ms.zip(applied.queued_ms).map(|(r, a)| r + a);
        // The fresh read may have taken the spare node table.
        self.kept.nodes.tidy();
        let apply_ms = Some(apply_ms);
        log::debug!(
            "{}",
            LogLine::LocksHeld { pass: self.pacing.passes, read_ms, apply_ms, on_cpu_ms, queued_ms, decide_ms }
        );
        self.say(&fresh, notes);
    }

    /// What a pass says once the locks are let go: the jobs held below
    /// their maximum by their limits, options that do not read, the
    /// strategy's notes, and slurmdbd away or back; each said once.
    fn say(&mut self, fresh: &Taken, notes: Vec<Note>) {
        let live: HashSet<JobId> = fresh.malleable.iter().map(|j| j.id).collect();
        self.memory.keep_only(|id| live.contains(&id));
        for job in fresh.malleable.iter().filter(|j| !j.running) {
            self.memory.forget_allocation(job.id);
        }
        // Not the unreadable: such a job is scheduled as rigid, and is not
        // among the malleable ones.
        for said in [&mut self.said.capped, &mut self.said.release_held] {
            said.keep(|id| live.contains(id));
        }
        for (id, most) in &fresh.capped {
            if self.said.capped.first(*id, ()) {
                log::info!("{}", LogLine::Capped { job: *id, most: *most });
            }
        }
        for (id, why) in &fresh.unreadable {
            if self.said.unreadable.first(*id, ()) {
                log::warn!("JobId={id}: its malleable options do not read, so it is scheduled as rigid: {why}");
            }
        }
        for line in self.notes_to_say(&fresh.snapshot, notes) {
            log::info!("{line}");
        }
        match self.slurmdbd.after_pass(fresh.slurmdbd_behind, self.suspects.slurmdbd.clone()) {
            Some(line @ LogLine::ResizesHeld { .. }) => log::warn!("{line}"),
            Some(line) => log::info!("{line}"),
            None => {}
        }
    }
}

/// The agent thread's time so far, in milliseconds, on the CPU and runnable
/// but waiting for one: beside the wall time the locks are held, they tell
/// work from the kernel having put the thread off the CPU for another (on
/// two busy cores, tens of milliseconds at a time), and what is left of the
/// hold from the thread blocked (a mutex, a write to the log).
struct ThreadTimes {
    cpu_ms: f64,
    /// The kernel's run delay (`/proc/thread-self/schedstat`, kept where
    /// CONFIG_SCHED_INFO is built in, as Debian's kernels have it).
    queued_ms: Option<f64>,
}

impl ThreadTimes {
    fn now() -> ThreadTimes {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        ThreadTimes { cpu_ms: t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6, queued_ms: run_delay_ms() }
    }

    fn since(&self, earlier: &ThreadTimes) -> ThreadTimes {
        ThreadTimes {
            cpu_ms: self.cpu_ms - earlier.cpu_ms,
            queued_ms: self.queued_ms.zip(earlier.queued_ms).map(|(now, then)| now - then),
        }
    }
}

thread_local! {
    /// This thread's schedstat, opened once (thread-self names the thread
    /// that opens it), read again from its start: one pread under the locks.
    static SCHEDSTAT: Option<std::fs::File> = std::fs::File::open("/proc/thread-self/schedstat").ok();
}

/// The second of schedstat's three figures: nanoseconds spent runnable on a
/// run queue, waiting for a CPU.
fn run_delay_ms() -> Option<f64> {
    use std::os::unix::fs::FileExt;
    SCHEDSTAT.with(|f| {
        let mut buf = [0u8; 96];
        let n = f.as_ref()?.read_at(&mut buf, 0).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        let ns: f64 = text.split_whitespace().nth(1)?.parse().ok()?;
        Some(ns / 1e6)
    })
}

/// Bytes asked of malloc by [`sweep_heap`]: in glibc's large-bin range
/// (1 KiB and up), which sweeps, and under its mmap threshold (128 KiB),
/// which would skip the heap, and under the size whose free trims it (64 KiB).
const SWEEP_BYTES: usize = 32 << 10;

/// Have glibc's malloc sort what was freed before the locks are taken. A
/// pass frees a snapshot of every waiting job (tens of thousands of small
/// blocks); glibc leaves them in its unsorted and fast bins, and the first
/// allocation that no thread cache serves sorts them all. Under the locks
/// that was a read's first Vec and the calloc in slurmctld's
/// get_next_job_id: with 55,000 jobs waiting, about 0.4 ms of a 0.7 ms
/// read (perf, bench-scale at 10,000 nodes). A large-bin request sorts
/// them here instead.
fn sweep_heap() {
    // black_box: an allocation whose memory is never used may be removed.
    drop(std::hint::black_box(Vec::<u8>::with_capacity(SWEEP_BYTES)));
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod replay_tests;
