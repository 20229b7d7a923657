//! The discrete-event engine's loop: submissions, completions, adaptation ends and
//! ticks, then a pass of a malleable-core strategy as sched/malleable runs one in
//! slurmctld; `view` builds what the strategy sees and `apply` carries out its decisions.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::collections::HashSet;
use std::sync::LazyLock;

use malleable_core::{PassInput, Strategy, StrategyPass};
use malleable_model::{JobId, Node, Snapshot};

use crate::model::power_meter::PowerMeter;
use crate::workloads::{JobSpec, PowerSetup, Workload};

mod apply;
mod options;
mod pace;
mod record;
mod result;
#[cfg(test)]
mod tests;
mod view;

pub use options::SimOptions;
pub use record::RecordedPass;
pub use result::{JobRecord, SimResult, Tally, Total};

/// No job is held back from its start here (slurmctld holds a batch job
/// younger than BatchStartDelay).
static NONE: LazyLock<HashSet<JobId>> = LazyLock::new(HashSet::new);

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Ordered so that at one instant nodes come back before jobs arrive.
    Finish {
        job: usize,
        version: u32,
    },
    AdaptDone {
        job: usize,
    },
    /// An iterative job reaches a reconfiguration check and asks the strategy.
    Sync {
        job: usize,
        version: u32,
    },
    /// The power corridor moves (its schedule's next change).
    CorridorChange,
    Submit {
        job: usize,
    },
    Tick,
    /// A pass called for `pass_delay` earlier.
    Pass,
}

#[derive(Clone, Debug, Default)]
struct Job {
    nodes: Vec<usize>,
    /// Fraction of the job's work still to do.
    left: f64,
    /// When `left` was last brought up to date (progress stops while adapting).
    since: f64,
    /// Bumped on every resize so that a stale Finish event is ignored.
    version: u32,
    /// When the current Finish event fires (meaningless while adapting).
    finish_at: f64,
    /// Nodes being added (expand) or taken (shrink) by the adaptation under way.
    adapting: Option<(bool, Vec<usize>)>,
    held_since: f64,
    record: Option<JobRecord>,
    running: bool,
    /// Cores it has on each of its nodes, in their order, while it shares
    /// (empty: all of each).
    cores: Vec<u32>,
    /// The jobs it shares nodes with now.
    with: Vec<usize>,
    /// Its end limit as sharing set it (its start plus estimate otherwise).
    shared_limit: Option<f64>,
    /// Placed on part of nodes: its cores on each of its nodes, in their
    /// order, and its GPUs on each (empty: whole nodes).
    placed: Vec<u32>,
    gpus: u32,
}

impl Job {
    /// Nodes it holds: its own and, while it expands, those it is being given.
    fn held(&self) -> usize {
        self.nodes.len() + self.adapting.as_ref().map_or(0, |(grow, add)| if *grow { add.len() } else { 0 })
    }

    /// The nodes it holds, each counted by the share of its cores it has:
    /// what its node-seconds add to utilisation.
    fn held_share(&self, cores_per_node: u32) -> f64 {
        let cores = if self.placed.is_empty() { &self.cores } else { &self.placed };
        if cores.is_empty() {
            return self.held() as f64;
        }
        cores.iter().map(|&c| f64::from(c)).sum::<f64>() / f64::from(cores_per_node.max(1))
    }
}

struct Engine<'a> {
    specs: &'a [JobSpec],
    opts: SimOptions,
    now: f64,
    events: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    jobs: Vec<Job>,
    /// The strategy's view, kept up to date between passes.
    snapshot: Snapshot,
    running: Vec<usize>,
    node_seconds: f64,
    tick_pending: bool,
    /// A delayed pass is already on its way.
    pass_pending: bool,
    passes: u64,
    power: Option<PowerSetup>,
    meter: PowerMeter,
    tally: Tally,
    resize_seconds: f64,
    cores_per_node: u32,
    /// Each pass as asked and decided, when the run is recorded.
    recorded: Option<Vec<RecordedPass>>,
}

/// Run `workload` under `strategy` to the end.
pub fn simulate(workload: &Workload, strategy: &mut dyn Strategy, opts: SimOptions) -> SimResult {
    simulate_with_progress(workload, strategy, opts, &mut |_| {})
}

/// As [`simulate`], calling `progress(jobs_done)` now and then.
pub fn simulate_with_progress(
    workload: &Workload,
    strategy: &mut dyn Strategy,
    opts: SimOptions,
    progress: &mut dyn FnMut(usize),
) -> SimResult {
    run(workload, strategy, opts, progress, false).0
}

/// As [`simulate`], with each call of the core's pass as it was made.
pub fn simulate_recorded(
    workload: &Workload,
    strategy: &mut dyn Strategy,
    opts: SimOptions,
) -> (SimResult, Vec<RecordedPass>) {
    let (result, recorded) = run(workload, strategy, opts, &mut |_| {}, true);
    (result, recorded.unwrap_or_default())
}

fn run(
    workload: &Workload,
    strategy: &mut dyn Strategy,
    opts: SimOptions,
    progress: &mut dyn FnMut(usize),
    record: bool,
) -> (SimResult, Option<Vec<RecordedPass>>) {
    let mut e = Engine {
        specs: &workload.jobs,
        opts,
        now: 0.0,
        events: BinaryHeap::new(),
        seq: 0,
        jobs: vec![Job::default(); workload.jobs.len()],
        snapshot: Snapshot {
            now: 0,
            nodes: Node::numbered_with(vec![true; workload.nodes], workload.cores.max(1), workload.gpus),
            running: Vec::new(),
            pending: Vec::new(),
            power: None,
        },
        running: Vec::new(),
        node_seconds: 0.0,
        tick_pending: false,
        pass_pending: false,
        passes: 0,
        power: workload.power.clone(),
        meter: PowerMeter::default(),
        tally: Tally::default(),
        resize_seconds: 0.0,
        cores_per_node: workload.cores.max(1),
        recorded: record.then(Vec::new),
    };
    if let Some(p) = &workload.power {
        for &(t, _) in &p.corridor.changes {
            e.push(t as f64, Event::CorridorChange);
        }
    }
    for (i, j) in workload.jobs.iter().enumerate() {
        e.push(j.submit.max(0.0), Event::Submit { job: i });
    }
    let mut done = 0usize;
    while let Some(Reverse((t, _, _))) = e.events.peek().copied() {
        e.now = f64::from_bits(t);
        let (mut wanted, mut due) = (false, false);
        let mut asking = Vec::new();
        while let Some(Reverse((t2, _, ev))) = e.events.peek().copied() {
            if t2 != t {
                break;
            }
            e.events.pop();
            match ev {
                Event::Pass => {
                    e.pass_pending = false;
                    due = true;
                }
                Event::Sync { job, version } => {
                    let j = &e.jobs[job];
                    if j.version == version && j.running && j.adapting.is_none() {
                        asking.push(job);
                    }
                }
                ev => wanted |= e.handle(ev, &mut done),
            }
        }
        // Jobs at a check ask once this instant's ends and arrivals are in.
        for job in asking {
            wanted |= e.ask(strategy, job);
        }
        // A pass due now takes every event so far; with a delay, an event
        // calls for one later, or joins the one already on its way.
        let pass = due || (wanted && e.opts.pass_delay <= 0.0);
        if wanted && !pass && !e.pass_pending {
            e.pass_pending = true;
            e.push(e.now + e.opts.pass_delay, Event::Pass);
        }
        if pass {
            e.pass(strategy);
        }
        e.measure_power(pass);
        if done.is_multiple_of(1024) {
            progress(done);
        }
        if done == workload.jobs.len() {
            // Only ticks and corridor changes can be left: nothing to run.
            break;
        }
    }
    progress(done);
    let end = e.now;
    let power = e.power.is_some().then(|| std::mem::take(&mut e.meter).finish(end));
    let jobs = e.jobs.into_iter().filter_map(|j| j.record).collect();
    let result = SimResult {
        nodes: workload.nodes,
        jobs,
        node_seconds: e.node_seconds,
        passes: e.passes,
        power,
        tally: e.tally,
        resize_seconds: e.resize_seconds,
    };
    (result, e.recorded)
}

impl Engine<'_> {
    fn push(&mut self, t: f64, ev: Event) {
        // Non-negative f64s order like their bit patterns.
        self.seq += 1;
        self.events.push(Reverse((t.max(0.0).to_bits(), self.seq, ev)));
    }

    /// Job `i` is at a check and asks the strategy whether to reconfigure
    /// (the core's pass, answers only, as select/natural asks it); whether
    /// it was told to (which calls for a pass).
    fn ask(&mut self, strategy: &mut dyn Strategy, i: usize) -> bool {
        self.refresh_view();
        let input =
            PassInput { snapshot: &self.snapshot, asking: &[JobId(i as u32)], scheduling: None, held_back: &NONE };
        let outcome = malleable_core::pass(strategy, &input);
        RecordedPass::push_to(&mut self.recorded, &input, &outcome);
        let decided = !outcome.decisions.is_empty();
        self.apply(strategy.name(), outcome);
        if !decided {
            self.schedule_check(i);
        }
        decided
    }

    /// Apply one event; whether it calls for a scheduling pass.
    fn handle(&mut self, ev: Event, done: &mut usize) -> bool {
        match ev {
            Event::Submit { job } => {
                let pending = self.pending_view(job);
                self.snapshot.pending.push(pending);
                true
            }
            Event::Finish { job, version } => {
                if version != self.jobs[job].version || !self.jobs[job].running {
                    return false;
                }
                self.account(job);
                self.jobs[job].running = false;
                let shared_with = std::mem::take(&mut self.jobs[job].with);
                let j = &self.jobs[job];
                for (k, &n) in j.nodes.iter().enumerate() {
                    let node = &mut self.snapshot.nodes[n];
                    if let Some(&cores) = j.placed.get(k) {
                        // Its part of the node back; free once no part is held.
                        node.spare_cores += cores;
                        node.spare_gpus += j.gpus;
                        if node.spare_cores >= node.cores && node.spare_gpus >= node.gpus {
                            (node.free, node.spare_cores, node.spare_gpus) = (true, 0, 0);
                        }
                    } else if !shared_with.iter().any(|&o| self.jobs[o].nodes.contains(&n)) {
                        node.free = true;
                    }
                }
                for other in shared_with {
                    self.take_back_cores(other, job);
                }
                let j = &mut self.jobs[job];
                let rec = j.record.as_mut().unwrap();
                rec.end = self.now;
                rec.final_nodes = j.nodes.len() as u32;
                self.running.retain(|&r| r != job);
                *done += 1;
                true
            }
            Event::AdaptDone { job } => {
                self.account(job);
                let (grow, nodes) = self.jobs[job].adapting.take().unwrap();
                self.jobs[job].since = self.now;
                if grow {
                    self.jobs[job].nodes.extend(nodes);
                } else {
                    self.jobs[job].nodes.retain(|n| !nodes.contains(n));
                    for n in nodes {
                        self.snapshot.nodes[n].free = true;
                    }
                }
                self.schedule_finish(job);
                true
            }
            Event::CorridorChange => true,
            Event::Tick => {
                self.tick_pending = false;
                true
            }
            // Taken by the run loop before it hands events here.
            Event::Pass | Event::Sync { .. } => true,
        }
    }

    /// The core's pass, as sched/malleable runs it: no Reasons to show,
    /// and no simulated job may preempt.
    fn pass(&mut self, strategy: &mut dyn Strategy) {
        self.passes += 1;
        self.refresh_view();
        let scheduling = Some(StrategyPass { shrink_before_preempt: true, reasons: false });
        let input = PassInput { snapshot: &self.snapshot, asking: &[], scheduling, held_back: &NONE };
        let outcome = malleable_core::pass(strategy, &input);
        RecordedPass::push_to(&mut self.recorded, &input, &outcome);
        self.apply(strategy.name(), outcome);
        // Ticks while jobs wait; with a power corridor also while jobs run,
        // since a draw outside it needs a pass even when no event comes (the
        // plugin passes at least every SchedulerTick).
        let watch = !self.snapshot.pending.is_empty()
            || ((self.power.is_some() || self.opts.tick_while_running) && !self.running.is_empty());
        if self.opts.tick > 0.0 && !self.tick_pending && watch {
            self.tick_pending = true;
            self.push(self.now + self.opts.tick, Event::Tick);
        }
    }
}
