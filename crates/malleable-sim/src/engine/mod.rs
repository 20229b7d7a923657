//! The discrete-event engine: submissions, completions, adaptation ends and
//! scheduler ticks, with a scheduling pass of a malleable-core strategy after
//! each instant's events, as sched/malleable runs one in slurmctld.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use malleable_core::blocks::mates::RuntimeModel;
use malleable_core::{Measure, Strategy};
use malleable_model::{
    validate, CoreSharing, Decision, JobId, JobPower, Node, NodeIndex, PendingJob, Placement, PowerState, RunningJob,
    Snapshot,
};

use crate::model::app_model::{AppModel, ResizeCost};
use crate::model::power_meter::{PowerMeter, PowerReport};
use crate::model::priority::Priority;
use crate::workloads::{JobSpec, PowerSetup, Workload};

/// What happened to one job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    pub id: u32,
    pub submit: f64,
    pub start: f64,
    pub end: f64,
    pub start_nodes: u32,
    pub final_nodes: u32,
    pub malleable: bool,
    pub expands: u32,
    pub shrinks: u32,
    /// Its class, for an iterative job that has one (MPDATA's small, medium, large).
    pub class: Option<&'static str>,
    /// For a job that shared cores (as a mate or on mates' cores): its run
    /// time alone on its nodes, what its slowdown is counted against, as
    /// SD-Policy's paper counts it (its own run was stretched by sharing).
    pub alone_run: Option<f64>,
    /// For a job that asks for cores: the nodes it was spread over, over
    /// the fewest that hold its cores (IPSCHED's packing factor, 1 at best).
    pub packing: Option<f64>,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SimOptions {
    pub app_model: AppModel,
    /// Seconds between scheduler ticks while jobs wait (slurm's SchedulerTick);
    /// 0 turns ticks off.
    pub tick: f64,
    /// What an expand and a shrink cost: by default this project's, measured
    /// on a real Slurm (`ResizeCost::MEASURED`); `ResizeCost::PAPER` for
    /// Chadha et al. 2020's set-up.
    pub resize_cost: ResizeCost,
    /// Seconds from a job's start until its work begins (a real Slurm's
    /// launch of the batch script and of the application's steps); the job
    /// holds its nodes meanwhile.
    pub start_delay: f64,
    /// The same for a malleable job, whose launcher starts a step per node
    /// and waits for the workers to meet before they compute.
    pub malleable_start_delay: f64,
    /// Tick while any job runs, not only while jobs wait: sched/malleable's
    /// agent passes at least every SchedulerTick whatever the queue, so a
    /// malleable job can grow into nodes freed with nothing waiting. Off
    /// by default, as the paper's simulations (and our golden figures) run.
    pub tick_while_running: bool,
    /// Seconds from an event (a submission, a job's end, a tick) to the pass
    /// it calls for: slurmctld wakes the plugin's agent, which waits for the
    /// job lock. Events meanwhile join that pass. 0, the paper's model, passes
    /// at the event's instant.
    pub pass_delay: f64,
    /// How a job sharing cores progresses (SD-Policy's Eq. 5 or 6): `Ideal`,
    /// at the pace of all the cores it has; `Worst`, of its least-served node.
    pub sharing_model: RuntimeModel,
    /// How waiting jobs are ranked, set before each pass: FCFS (Slurm's
    /// basic priority) or Slurm's multifactor with age and size.
    pub priority: Priority,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            app_model: AppModel::fitted(),
            tick: 60.0,
            resize_cost: ResizeCost::MEASURED,
            start_delay: 0.0,
            malleable_start_delay: 0.0,
            tick_while_running: false,
            pass_delay: 0.0,
            sharing_model: RuntimeModel::Ideal,
            priority: Priority::Fcfs,
        }
    }
}

/// A finished run: every job's record and the node-seconds jobs held.
#[derive(Clone, Debug)]
pub struct SimResult {
    pub nodes: usize,
    pub jobs: Vec<JobRecord>,
    pub node_seconds: f64,
    pub passes: u64,
    /// Draw against the corridor, for workloads with one.
    pub power: Option<PowerReport>,
    /// The strategy's figures, added up over the run's passes.
    pub tally: Tally,
    /// Seconds jobs spent resizing, summed over every expand and shrink
    /// (Iserte et al. 2025's accumulated resize time, Table 5).
    pub resize_seconds: f64,
}

/// A figure added up over a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Total {
    Count(u64),
    Highest(u64),
    /// Every time reported, in milliseconds.
    Millis(Vec<f64>),
}

/// The strategy's figures over a run, by name, in the order first reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally(pub Vec<(&'static str, Total)>);

impl Tally {
    pub fn add(&mut self, name: &'static str, m: Measure) {
        let i = match self.0.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                let empty = match m {
                    Measure::Count(_) => Total::Count(0),
                    Measure::Highest(_) => Total::Highest(0),
                    Measure::Millis(_) => Total::Millis(Vec::new()),
                };
                self.0.push((name, empty));
                self.0.len() - 1
            }
        };
        match (&mut self.0[i].1, m) {
            (Total::Count(c), Measure::Count(n)) => *c += n,
            (Total::Highest(h), Measure::Highest(v)) => *h = (*h).max(v),
            (Total::Millis(all), Measure::Millis(ms)) => all.push(ms),
            (total, m) => panic!("figure {name} reported as {m:?} and before as {total:?}"),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Total> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, t)| t)
    }
}

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
    SimResult {
        nodes: workload.nodes,
        jobs,
        node_seconds: e.node_seconds,
        passes: e.passes,
        power,
        tally: e.tally,
        resize_seconds: e.resize_seconds,
    }
}

impl Engine<'_> {
    fn push(&mut self, t: f64, ev: Event) {
        // Non-negative f64s order like their bit patterns.
        self.seq += 1;
        self.events.push(Reverse((t.max(0.0).to_bits(), self.seq, ev)));
    }

    fn run_time(&self, i: usize, n: usize) -> f64 {
        let s = &self.specs[i];
        if let Some(it) = s.iterative {
            return it.run_time(n as u32);
        }
        if s.malleable.is_none() {
            return s.run_time;
        }
        self.opts.app_model.run_time(s.run_time, s.nodes.max(1), n as u32)
    }

    /// Its run time at its current size and pace: stretched while it
    /// shares cores, by the simulator's run-time model.
    fn paced_run_time(&self, i: usize) -> f64 {
        let j = &self.jobs[i];
        let rt = self.run_time(i, j.nodes.len());
        if j.cores.is_empty() {
            return rt;
        }
        let pace = self.opts.sharing_model.pace(self.cores_per_node, &j.cores);
        if pace > 0.0 {
            rt / pace
        } else {
            f64::INFINITY
        }
    }

    /// Bring a job's progress up to now (no progress while adapting).
    fn progress(&mut self, i: usize) {
        let rt = self.paced_run_time(i);
        let j = &mut self.jobs[i];
        // `since` is in the future while the job is still being launched.
        if j.adapting.is_none() && rt > 0.0 {
            j.left = (j.left - (self.now - j.since).max(0.0) / rt).max(0.0);
        }
        j.since = j.since.max(self.now);
    }

    /// Count node-seconds held up to now.
    fn account(&mut self, i: usize) {
        let j = &mut self.jobs[i];
        self.node_seconds += j.held_share(self.cores_per_node) * (self.now - j.held_since);
        j.held_since = self.now;
    }

    fn schedule_finish(&mut self, i: usize) {
        let rt = self.paced_run_time(i);
        let t = self.jobs[i].since.max(self.now) + self.jobs[i].left * rt;
        self.jobs[i].finish_at = t;
        let version = self.jobs[i].version;
        self.push(t, Event::Finish { job: i, version });
        self.schedule_check(i);
    }

    /// An iterative malleable job's next reconfiguration check: after the
    /// next iteration that is a multiple of its `check_every`, unless that
    /// is its last (its progress is up to date).
    fn schedule_check(&mut self, i: usize) {
        let s = &self.specs[i];
        let (Some(it), Some(_)) = (s.iterative, s.malleable) else {
            return;
        };
        let j = &self.jobs[i];
        let done = (1.0 - j.left) * f64::from(it.iterations);
        let every = f64::from(it.check_every.max(1));
        // A hair of slack: at a check, `done` may come out a rounding below it.
        let next = ((done + 1e-6) / every).floor() * every + every;
        if next < f64::from(it.iterations) {
            let t = j.since.max(self.now) + (next - done) * it.iteration_time(j.nodes.len() as u32);
            let version = j.version;
            self.push(t, Event::Sync { job: i, version });
        }
    }

    /// Job `i` is at a check and asks the strategy whether to reconfigure;
    /// whether it was told to (which calls for a pass).
    fn ask(&mut self, strategy: &mut dyn Strategy, i: usize) -> bool {
        self.refresh_view();
        let report = strategy.reconfigure(&self.snapshot, JobId(i as u32));
        if let Some(d) =
            report.decisions.iter().find(|d| d.job() != JobId(i as u32) || matches!(d, Decision::Start { .. }))
        {
            panic!("{} at t={}: asked by job {i}, it decided {d:?}", strategy.name(), self.now);
        }
        let decided = !report.decisions.is_empty();
        self.apply(strategy.name(), report);
        if !decided {
            self.schedule_check(i);
        }
        decided
    }

    /// Apply one event; whether it calls for a scheduling pass.
    fn handle(&mut self, ev: Event, done: &mut usize) -> bool {
        match ev {
            Event::Submit { job } => {
                let s = &self.specs[job];
                self.snapshot.pending.push(PendingJob {
                    id: JobId(job as u32),
                    priority: 0,
                    tier: 0,
                    submit: s.submit.floor() as i64,
                    nodes: s.nodes,
                    time_limit: Some(s.estimate.ceil() as i64),
                    time_min: None,
                    malleable: s.malleable,
                    share_cores: s.share_cores,
                    // Estimates only: the real draw is measured once it runs.
                    power: s.power.map(|p| JobPower { measured_per_node: None, ..p }),
                    placement: Placement::anywhere(),
                    cores: s.cores,
                    // The simulated site has no QOS nor partition tiers to preempt by.
                    preempts: Vec::new(),
                });
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

    fn pass(&mut self, strategy: &mut dyn Strategy) {
        self.passes += 1;
        self.refresh_view();
        let report = strategy.schedule(&self.snapshot);
        self.apply(strategy.name(), report);
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

    /// Bring the strategy's view up to now: running jobs and the corridor.
    fn refresh_view(&mut self) {
        // Rounded up: a job started now then ends, by the strategy's
        // reckoning (now + its limit), no earlier than it really does, so a
        // backfilled job never delays a reservation by a fraction of a
        // second (slurmctld's clock is whole seconds and has no such gap).
        self.snapshot.now = self.now.ceil() as i64;
        let ids = std::mem::take(&mut self.running);
        let running: Vec<RunningJob> = ids.iter().map(|&i| self.running_view(i)).collect();
        self.running = ids;
        self.snapshot.running = running;
        self.snapshot.power = self.power.as_ref().map(|p| PowerState {
            corridor: p.corridor.at(self.now.floor() as i64),
            idle_node: p.idle_node,
            measured_draw: Some(self.draw()),
        });
        if self.opts.priority != Priority::Fcfs {
            // Recomputed at every pass (Slurm's PriorityCalcPeriod is 5
            // minutes; a pass here is at most a tick, 60 s, apart).
            let machine = self.snapshot.nodes.len() as f64 * f64::from(self.cores_per_node);
            for job in &mut self.snapshot.pending {
                let cores = job.cores.map_or(job.nodes * self.cores_per_node, |r| r.cores);
                let age = self.now - self.specs[job.id.0 as usize].submit;
                job.priority = self.opts.priority.of(age, f64::from(cores) / machine.max(1.0));
            }
        }
    }

    /// Carry out a report's decisions (made on the current view) and add
    /// up its figures.
    fn apply(&mut self, strategy: &str, report: malleable_core::PassReport) {
        // A decision that breaks the model's rules is the strategy's bug: stop
        // the run and say which (the plugin, in production, skips and logs it).
        if let Err(rejected) = validate(&self.snapshot, &report.decisions) {
            let why: Vec<String> = rejected.iter().map(ToString::to_string).collect();
            panic!("{strategy} at t={}: {}", self.now, why.join("; "));
        }
        for (name, m) in report.measures {
            self.tally.add(name, m);
        }
        let mut started = Vec::new();
        for d in report.decisions {
            match d {
                // A limit cut to a --time-min is never given here: the
                // simulator's jobs have none.
                Decision::Start { job, nodes, .. } => {
                    for &n in &nodes {
                        self.snapshot.nodes[n].free = false;
                    }
                    self.start(job.0 as usize, nodes, Vec::new());
                    started.push(job);
                }
                Decision::Share { job, nodes, cores, time_limit, mates } => {
                    let i = job.0 as usize;
                    for m in &mates {
                        let k = m.job.0 as usize;
                        // Its work so far at full pace, then the kept cores.
                        self.settle(k);
                        self.jobs[k].cores = vec![m.kept; self.jobs[k].nodes.len()];
                        self.jobs[k].with.push(i);
                        self.jobs[k].shared_limit = Some(m.end_limit as f64);
                        self.jobs[k].record.as_mut().unwrap().alone_run = Some(self.specs[k].run_time);
                        self.schedule_finish(k);
                    }
                    self.start(i, nodes.clone(), vec![cores; nodes.len()]);
                    self.jobs[i].with = mates.iter().map(|m| m.job.0 as usize).collect();
                    self.jobs[i].shared_limit = Some(self.now + time_limit as f64);
                    self.jobs[i].record.as_mut().unwrap().alone_run = Some(self.specs[i].run_time);
                    started.push(job);
                }
                // No simulated job may preempt (their `preempts` are empty),
                // so validate() has refused this already.
                Decision::Preempt { job, .. } => unreachable!("{strategy} preempted for {job}: no simulated job may"),
                Decision::Place { job, layout } => {
                    let i = job.0 as usize;
                    let gpus = self.specs[i].cores.map_or(0, |r| r.gpus_per_node);
                    for &(n, cores) in &layout {
                        let node = &mut self.snapshot.nodes[n];
                        let (c, g) = (node.cores_available(), node.gpus_available());
                        (node.free, node.spare_cores, node.spare_gpus) = (false, c - cores, g - gpus);
                    }
                    let (nodes, placed): (Vec<NodeIndex>, Vec<u32>) = layout.into_iter().unzip();
                    self.start(i, nodes, Vec::new());
                    self.jobs[i].placed = placed;
                    self.jobs[i].gpus = gpus;
                    started.push(job);
                }
                Decision::Expand { job, add_nodes } => {
                    let i = job.0 as usize;
                    self.settle(i);
                    for &n in &add_nodes {
                        self.snapshot.nodes[n].free = false;
                    }
                    let cost = self.opts.resize_cost.expand(self.jobs[i].nodes.len() + add_nodes.len());
                    self.resize_seconds += cost;
                    self.jobs[i].adapting = Some((true, add_nodes));
                    self.jobs[i].record.as_mut().unwrap().expands += 1;
                    self.push(self.now + cost, Event::AdaptDone { job: i });
                }
                Decision::Shrink { job, remove_nodes } => {
                    let i = job.0 as usize;
                    self.settle(i);
                    let cost = self.opts.resize_cost.shrink(self.jobs[i].nodes.len());
                    self.resize_seconds += cost;
                    self.jobs[i].adapting = Some((false, remove_nodes));
                    self.jobs[i].record.as_mut().unwrap().shrinks += 1;
                    self.push(self.now + cost, Event::AdaptDone { job: i });
                }
            }
        }
        if !started.is_empty() {
            started.sort_unstable();
            self.snapshot.pending.retain(|p| started.binary_search(&p.id).is_err());
        }
    }

    /// Start job `i` on `nodes` (already taken from the free ones), with
    /// `cores` on each while it shares them (empty: all of each).
    fn start(&mut self, i: usize, nodes: Vec<NodeIndex>, cores: Vec<u32>) {
        let s = &self.specs[i];
        let delay = if s.malleable.is_some() { self.opts.malleable_start_delay } else { self.opts.start_delay };
        self.jobs[i] = Job {
            left: 1.0,
            since: self.now + delay,
            held_since: self.now,
            running: true,
            record: Some(JobRecord {
                id: s.id,
                submit: s.submit,
                start: self.now,
                end: f64::NAN,
                start_nodes: nodes.len() as u32,
                final_nodes: 0,
                malleable: s.malleable.is_some(),
                expands: 0,
                shrinks: 0,
                class: s.iterative.map(|it| it.class),
                alone_run: None,
                packing: s.cores.map(|r| {
                    let fewest = r.cores.div_ceil(self.cores_per_node).max(1);
                    nodes.len() as f64 / f64::from(fewest)
                }),
            }),
            nodes,
            cores,
            ..Job::default()
        };
        self.running.push(i);
        self.schedule_finish(i);
    }

    /// Job `ended` shared nodes with `other` and has ended: `other` gets
    /// its cores on the nodes both held (Listing 3: a new job's cores go back
    /// to their owner, a mate's to the job that stays), and its pace again.
    fn take_back_cores(&mut self, other: usize, ended: usize) {
        if !self.jobs[other].running {
            return;
        }
        self.settle(other);
        let full = self.cores_per_node;
        let ended_nodes = self.jobs[ended].nodes.clone();
        let o = &mut self.jobs[other];
        o.with.retain(|&w| w != ended);
        for (k, n) in o.nodes.iter().enumerate() {
            if ended_nodes.contains(n) {
                if let Some(c) = o.cores.get_mut(k) {
                    *c = full;
                }
            }
        }
        if o.cores.iter().all(|&c| c == full) {
            o.cores.clear();
        }
        self.schedule_finish(other);
    }

    /// What the machine draws now: nodes a job holds (those it is being
    /// given included) at the job's real per-node draw, the rest idle.
    fn draw(&self) -> f64 {
        let Some(p) = &self.power else {
            return 0.0;
        };
        let mut held = 0usize;
        let mut draw = 0.0;
        for &i in &self.running {
            let n = self.jobs[i].held();
            held += n;
            // What it really draws: its measurement, else the users' maximum.
            let w = self.specs[i].power.map_or(p.idle_node, |w| w.high());
            draw += n as f64 * w;
        }
        draw + self.snapshot.nodes.len().saturating_sub(held) as f64 * p.idle_node
    }

    /// Record the draw at the end of this instant.
    fn measure_power(&mut self, pass_ran: bool) {
        let Some(p) = &self.power else {
            return;
        };
        let corridor = p.corridor.at(self.now.floor() as i64);
        let adapting = self.running.iter().any(|&i| self.jobs[i].adapting.is_some());
        let draw = self.draw();
        self.meter.record(self.now, draw, corridor, pass_ran, adapting);
    }

    /// Bring a running job's progress and node-seconds up to now and void
    /// its pending Finish: its size (a resize; `validate` has checked that it
    /// runs and is not adapting already) or its cores are about to change.
    fn settle(&mut self, i: usize) {
        self.progress(i);
        self.account(i);
        self.jobs[i].version += 1;
    }

    /// What the strategy sees of running job `i`. The MTCT ratio is the
    /// model's at the current size: the measurement restarts after each
    /// adaptation (Chadha et al. 2020, section V-A) and the model has no noise.
    fn running_view(&mut self, i: usize) -> RunningJob {
        self.progress(i);
        let s = &self.specs[i];
        let j = &self.jobs[i];
        let rec = j.record.as_ref().unwrap();
        let n = j.nodes.len();
        let as_submitted = s.malleable.is_none()
            || (rec.start_nodes == s.nodes && rec.expands + rec.shrinks == 0 && j.adapting.is_none());
        let end_limit = if !as_submitted {
            // The time limit scales with the predicted remaining run time.
            let slack = if s.run_time > 0.0 { (s.estimate / s.run_time).max(1.0) } else { 1.0 };
            match &j.adapting {
                Some((grow, change)) => {
                    let after = if *grow { n + change.len() } else { n - change.len() };
                    self.now + j.left * self.run_time(i, after) * slack
                }
                // The Finish event's own time rather than now + left * run
                // time recomputed, which can land a hair past a whole second
                // and so, rounded up below, 1 s late.
                None => self.now + (j.finish_at - self.now) * slack,
            }
        } else if let Some(limit) = j.shared_limit {
            // Sharing set it: its estimate plus the increase predicted.
            limit
        } else {
            // Running as submitted: its limit is what it was given, as for a
            // rigid job, so EASY's runs do not change with the malleable share.
            rec.start + s.estimate
        };
        let limit = (end_limit.ceil() as i64).max(0);
        let sharing = CoreSharing {
            opted_in: s.share_cores,
            wait: (rec.start - s.submit).max(0.0).floor() as i64,
            // A job placed on part of nodes is never alone with all their
            // cores, so never a mate.
            cores: if j.placed.is_empty() { j.cores.clone() } else { j.placed.clone() },
            with: j.with.iter().map(|&w| JobId(w as u32)).collect(),
            increase: (limit - (rec.start + s.estimate).ceil() as i64).max(0),
        };
        RunningJob {
            id: JobId(i as u32),
            nodes: j.nodes.clone(),
            start: rec.start.floor() as i64,
            end_limit: Some(limit),
            malleable: s.malleable,
            adapting: j.adapting.is_some(),
            mtct_ratio: s.malleable.map(|_| self.opts.app_model.mtct_ratio(n as u32)),
            power: s.power,
            placement: Placement::anywhere(),
            asked: Some(s.nodes),
            sharing,
            // The simulator resizes any job at any pass.
            resize_held: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::app_model::Iterative;
    use malleable_core::StrategyChoice;
    use malleable_model::{CoreRequest, MalleableSpec, NodeConstraint};

    fn job(id: u32, nodes: u32, malleable: Option<MalleableSpec>) -> JobSpec {
        JobSpec {
            id,
            submit: 0.0,
            nodes,
            run_time: 10.0,
            estimate: 60.0,
            malleable,
            power: None,
            iterative: None,
            share_cores: false,
            cores: None,
        }
    }

    fn run(w: &Workload, strategy: &str, opts: SimOptions) -> SimResult {
        simulate(w, StrategyChoice::parse(strategy).unwrap().build().as_mut(), opts)
    }

    #[test]
    fn a_start_delay_holds_the_nodes_before_the_work_begins() {
        let spec = MalleableSpec { min: 1, max: 2, constraint: NodeConstraint::None };
        let w = Workload {
            name: "t".into(),
            nodes: 2,
            jobs: vec![job(1, 1, None), job(2, 1, Some(spec))],
            power: None,
            cores: 1,
            gpus: 0,
        };
        let opts = SimOptions { start_delay: 0.5, malleable_start_delay: 2.0, tick: 0.0, ..SimOptions::default() };
        let r = run(&w, "easy", opts);
        let end = |id: u32| r.jobs.iter().find(|j| j.id == id).unwrap().end;
        assert!((end(1) - 10.5).abs() < 1e-9 && (end(2) - 12.0).abs() < 1e-9, "{:?}", r.jobs);
        assert!((r.node_seconds - 22.5).abs() < 1e-9);
    }

    #[test]
    fn a_pass_delay_starts_jobs_late_and_events_meanwhile_join_the_pass() {
        // One node. Job 1 and 2 arrive at 0, job 3 at 10.3, inside the delay
        // after job 1's end at 10.25: it joins the pass at 10.5 instead of
        // calling for one of its own.
        let mut third = job(3, 1, None);
        third.submit = 10.3;
        let w = Workload {
            name: "t".into(),
            nodes: 1,
            jobs: vec![job(1, 1, None), job(2, 1, None), third],
            power: None,
            cores: 1,
            gpus: 0,
        };
        let opts = SimOptions { pass_delay: 0.25, tick: 0.0, ..SimOptions::default() };
        let r = run(&w, "fcfs", opts);
        let start = |id: u32| r.jobs.iter().find(|j| j.id == id).unwrap().start;
        assert!((start(1) - 0.25).abs() < 1e-9, "{:?}", r.jobs);
        assert!((start(2) - 10.5).abs() < 1e-9, "{:?}", r.jobs);
        assert!((start(3) - 20.75).abs() < 1e-9, "{:?}", r.jobs);
        // Passes at 0.25, 10.5 and 20.75 (the run ends with job 3, before
        // the pass its end calls for).
        assert_eq!(r.passes, 3);
        let r0 = run(&w, "fcfs", SimOptions { tick: 0.0, ..SimOptions::default() });
        // Without a delay: 0, 10, 10.3 (job 3's submission alone), 20 and 30.
        assert_eq!((r0.jobs[1].start, r0.passes), (10.0, 5));
    }

    #[test]
    fn multifactor_priority_puts_the_larger_job_first() {
        // Two nodes. Job 1 holds both from 0 to 10; job 2 (1 node) comes at
        // 1, job 3 (2 nodes) at 2. FCFS starts job 2 at 10 and job 3 once it
        // ends, at 20. Multifactor at 10: job 2 has 9/60 + 10,080 / 2 ->
        // 5,040, job 3 8/60 + 10,080 -> 10,080: job 3 first, at 10, then 2.
        let at = |id, nodes, submit| JobSpec { submit, ..job(id, nodes, None) };
        let w = Workload {
            name: "t".into(),
            nodes: 2,
            jobs: vec![at(1, 2, 0.0), at(2, 1, 1.0), at(3, 2, 2.0)],
            power: None,
            cores: 1,
            gpus: 0,
        };
        let start = |r: &SimResult, id: u32| r.jobs.iter().find(|j| j.id == id).unwrap().start;
        let fcfs = run(&w, "fcfs", SimOptions { tick: 0.0, ..SimOptions::default() });
        assert_eq!((start(&fcfs, 2), start(&fcfs, 3)), (10.0, 20.0));
        let mf = Priority::parse("multifactor").unwrap();
        let multi = run(&w, "fcfs", SimOptions { tick: 0.0, priority: mf, ..SimOptions::default() });
        assert_eq!((start(&multi, 3), start(&multi, 2)), (10.0, 20.0));
    }

    #[test]
    fn ticking_while_jobs_run_adds_the_plugins_passes() {
        // Nothing waits: without the option no tick comes, and the only
        // passes are at the submissions and job 1's end; with it, one every
        // 5 s while job 2 runs, as sched/malleable's agent passes.
        let spec = MalleableSpec { min: 1, max: 2, constraint: NodeConstraint::None };
        let long = JobSpec { run_time: 100.0, estimate: 200.0, ..job(2, 1, Some(spec)) };
        let w =
            Workload { name: "t".into(), nodes: 2, jobs: vec![job(1, 1, None), long], power: None, cores: 1, gpus: 0 };
        let base = SimOptions { app_model: AppModel::Linear, tick: 5.0, ..SimOptions::default() };
        let (off, on) = (run(&w, "mtct", base), run(&w, "mtct", SimOptions { tick_while_running: true, ..base }));
        assert!(off.passes <= 4, "{}", off.passes);
        assert!(on.passes >= 10, "{}", on.passes);
        // The schedule itself is the same here: job 2 grows when job 1 ends
        // (ends equal but for the rounding of progress brought up to date at each pass).
        for (a, b) in off.jobs.iter().zip(&on.jobs) {
            assert_eq!((a.start, a.expands, a.final_nodes), (b.start, b.expands, b.final_nodes));
            assert!((a.end - b.end).abs() < 1e-9);
        }
    }

    /// 1 s an iteration on one node, 0.5 s on two.
    const SERIES: &[(u32, f64)] = &[(1, 1.0), (2, 0.5)];

    /// An iterative job of 10 iterations, malleable in [1, 2], asking every 4.
    fn iterative(id: u32, nodes: u32, submit: f64) -> JobSpec {
        let it = Iterative { class: "t", iterations: 10, seconds: SERIES, check_every: 4, time_scale: 1.0 };
        let spec = MalleableSpec { min: 1, max: 2, constraint: NodeConstraint::None };
        JobSpec {
            run_time: it.run_time(nodes),
            estimate: 100.0,
            iterative: Some(it),
            share_cores: false,
            cores: None,
            submit,
            ..job(id, nodes, Some(spec))
        }
    }

    #[test]
    fn an_iterative_job_asks_at_its_checks_and_only_then_resizes() {
        // Two nodes, the job on one. After 4 iterations (4 s) it asks:
        // nothing waits, so it grows to 2; at iteration 8 (2 s later) it
        // asks again and stays; it ends after 6 iterations at 0.5 s: 7 s.
        let w =
            Workload { name: "t".into(), nodes: 2, jobs: vec![iterative(1, 1, 0.0)], power: None, cores: 1, gpus: 0 };
        let opts =
            SimOptions { resize_cost: ResizeCost::parse("0+0n/0+0n").unwrap(), tick: 0.0, ..SimOptions::default() };
        let r = run(&w, "natural", opts);
        assert_eq!((r.jobs[0].expands, r.jobs[0].final_nodes), (1, 2));
        assert!((r.jobs[0].end - 7.0).abs() < 1e-9, "{:?}", r.jobs[0]);
        assert_eq!(r.tally.get("natural_asked"), Some(&Total::Count(2)));
        // A strategy that resizes on its own passes is asked nothing and,
        // with no pass after the start, never grows it: 10 s on one node.
        let r = run(&w, "conservative", opts);
        assert_eq!((r.jobs[0].expands, r.jobs[0].end), (0, 10.0));
        // A resize cost stops the work: 1 s to grow, ending at 8 s, and it
        // is summed in the run's resize time.
        let cost = ResizeCost::parse("1+0n/0+0n").unwrap();
        let r = run(&w, "natural", SimOptions { resize_cost: cost, ..opts });
        assert!((r.jobs[0].end - 8.0).abs() < 1e-9 && r.resize_seconds == 1.0, "{:?}", r.jobs[0]);
    }

    #[test]
    fn a_shrink_at_a_check_starts_the_waiting_job_on_the_nodes_released() {
        // The job holds both nodes; a 1-node rigid job arrives at 1 s and
        // waits. At iteration 4 (2 s) the job asks and gives a node for
        // it: it starts at 2 s; the job's other 6 iterations take 6 s.
        let rigid = JobSpec { submit: 1.0, ..job(2, 1, None) };
        let w = Workload {
            name: "t".into(),
            nodes: 2,
            jobs: vec![iterative(1, 2, 0.0), rigid],
            power: None,
            cores: 1,
            gpus: 0,
        };
        let opts =
            SimOptions { resize_cost: ResizeCost::parse("0+0n/0+0n").unwrap(), tick: 0.0, ..SimOptions::default() };
        let r = run(&w, "natural", opts);
        let by = |id: u32| r.jobs.iter().find(|j| j.id == id).unwrap();
        assert_eq!((by(1).shrinks, by(1).final_nodes), (1, 1));
        assert!((by(2).start - 2.0).abs() < 1e-9 && (by(1).end - 8.0).abs() < 1e-9, "{:?}", r.jobs);
    }

    #[test]
    fn the_resize_cost_is_the_one_given() {
        // A malleable job started on 1 of 4 nodes; at 1 s a 1-node job
        // arrives, and that pass grows the first onto the 2 nodes left.
        let spec = MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::None };
        let later = JobSpec { submit: 1.0, ..job(2, 1, None) };
        let w = Workload {
            name: "t".into(),
            nodes: 4,
            jobs: vec![job(1, 1, Some(spec)), later],
            power: None,
            cores: 1,
            gpus: 0,
        };
        let cost = ResizeCost { expand_fixed: 1.0, expand_per_node: 0.5, shrink_fixed: 0.0, shrink_per_node: 0.0 };
        let opts = SimOptions { app_model: AppModel::Linear, resize_cost: cost, tick: 0.0, ..SimOptions::default() };
        let r = run(&w, "mtct", opts);
        assert_eq!((r.jobs[0].expands, r.jobs[0].final_nodes), (1, 3));
        // 1 s of work on 1 node (a tenth), 2.5 s expanding (1 + 0.5 * 3),
        // then the other nine tenths on 3 nodes: 3 s.
        assert!((r.jobs[0].end - 6.5).abs() < 1e-9, "{:?}", r.jobs[0]);
    }

    /// Nodes of 4 cores; each job opted in to core sharing unless said.
    fn sharing(id: u32, submit: f64, nodes: u32, run_time: f64, estimate: f64) -> JobSpec {
        JobSpec { submit, run_time, estimate, share_cores: true, ..job(id, nodes, None) }
    }

    fn shared_run(jobs: Vec<JobSpec>, model: RuntimeModel) -> SimResult {
        let w = Workload { name: "t".into(), nodes: 2, jobs, power: None, cores: 4, gpus: 0 };
        run(&w, "sd-policy", SimOptions { tick: 0.0, sharing_model: model, ..SimOptions::default() })
    }

    fn ends(r: &SimResult) -> Vec<(u32, f64, f64)> {
        let mut v: Vec<(u32, f64, f64)> = r.jobs.iter().map(|j| (j.id, j.start, j.end)).collect();
        v.sort_by_key(|t| t.0);
        v
    }

    #[test]
    fn a_shared_start_runs_both_jobs_at_the_pace_of_their_cores() {
        // 1 holds both nodes (1000 s). 2 would wait to 1000: it starts at 1 on
        // 2 of each node's 4 cores, so its 100 s take 200; 1 does 100 s of
        // work in those 200 and ends at 1100. 3 (rigid) waits for both.
        let jobs = vec![
            sharing(1, 0.0, 2, 1000.0, 1000.0),
            sharing(2, 1.0, 2, 100.0, 100.0),
            JobSpec { submit: 2.0, ..job(3, 2, None) },
        ];
        let r = shared_run(jobs, RuntimeModel::Ideal);
        assert_eq!(ends(&r), vec![(1, 0.0, 1100.0), (2, 1.0, 201.0), (3, 1100.0, 1110.0)]);
        assert_eq!(r.jobs[1].alone_run, Some(100.0), "its slowdown counts against its run alone");
        assert_eq!(r.jobs[2].alone_run, None);
        // Shared nodes count once: every node busy from 0 to the end.
        let util = r.node_seconds / (2.0 * 1110.0);
        assert!((util - 1.0).abs() < 1e-9, "{util}");
    }

    #[test]
    fn a_mate_ending_first_leaves_its_cores_and_nodes_to_the_job_on_them() {
        // 1 really runs 50 s: 1 s alone, 49 s of work at half pace end it at
        // 99. 2 did 49 s of its 100 by then, the other 51 at full pace: 150.
        // The nodes are free only then, for 3.
        let jobs = vec![
            sharing(1, 0.0, 2, 50.0, 1000.0),
            sharing(2, 1.0, 2, 100.0, 100.0),
            JobSpec { submit: 2.0, ..job(3, 2, None) },
        ];
        let r = shared_run(jobs, RuntimeModel::Ideal);
        assert_eq!(ends(&r), vec![(1, 0.0, 99.0), (2, 1.0, 150.0), (3, 150.0, 160.0)]);
    }

    #[test]
    fn the_worst_case_model_goes_at_the_least_served_nodes_pace() {
        // Mates 1 (node 0, ends at 99 as above) and 2 (node 1, 1000 s); 3
        // starts on both at 1. From 99 it has 4 cores on node 0 and 2 on node
        // 1: 51 s of work left take 68 s at Eq. 5's 3/4 pace, 102 s at Eq.
        // 6's 1/2.
        let jobs = || {
            vec![sharing(1, 0.0, 1, 50.0, 1000.0), sharing(2, 0.0, 1, 1000.0, 1000.0), sharing(3, 1.0, 2, 100.0, 100.0)]
        };
        let ideal = shared_run(jobs(), RuntimeModel::Ideal);
        let worst = shared_run(jobs(), RuntimeModel::Worst);
        let end3 = |r: &SimResult| r.jobs.iter().find(|j| j.id == 3).unwrap().end;
        assert!((end3(&ideal) - 167.0).abs() < 1e-6, "{}", end3(&ideal));
        assert!((end3(&worst) - 201.0).abs() < 1e-6, "{}", end3(&worst));
    }

    /// A job asking `cores` cores (and `gpus` a node) on one node.
    fn asking(id: u32, submit: f64, cores: u32, gpus: u32, run_time: f64) -> JobSpec {
        let ask = CoreRequest { cores, gpus_per_node: gpus, min_nodes: 1, max_nodes: 1 };
        JobSpec { submit, run_time, estimate: run_time, cores: Some(ask), ..job(id, 1, None) }
    }

    #[test]
    fn jobs_placed_on_part_of_a_node_share_it_and_give_it_back() {
        // One node of 8 cores and 2 GPUs: 5 cores for 100 s at 0, 3 cores
        // and a GPU for 50 s at 1 (what the first left), all 8 at 2 (waits
        // until both have ended, at 100).
        let jobs = vec![asking(1, 0.0, 5, 0, 100.0), asking(2, 1.0, 3, 1, 50.0), asking(3, 2.0, 8, 0, 10.0)];
        let w = Workload { name: "t".into(), nodes: 1, jobs, power: None, cores: 8, gpus: 2 };
        let r = run(&w, "ipsched", SimOptions { tick: 0.0, ..SimOptions::default() });
        let at = |id: u32| r.jobs.iter().find(|j| j.id == id).map(|j| (j.start, j.end)).unwrap();
        assert_eq!((at(1), at(2), at(3)), ((0.0, 100.0), (1.0, 51.0), (100.0, 110.0)));
        // Node-seconds by the cores held: 5/8 of 100 s, 3/8 of 50 s, then all of 10 s.
        assert!((r.node_seconds - (62.5 + 18.75 + 10.0)).abs() < 1e-9, "{}", r.node_seconds);
        assert!(r.jobs.iter().all(|j| j.packing == Some(1.0)));
    }
}
