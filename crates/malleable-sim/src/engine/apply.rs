//! Carrying out a strategy's decisions on the simulated machine (starts,
//! shares, placements, expands and shrinks), as malleable-ctld's agent
//! applies them in slurmctld; the view they were made on is `view`'s.

use malleable_model::{Decision, NodeIndex};

use super::{Engine, Event, Job, JobRecord};

impl Engine<'_> {
    /// Carry out a pass's decisions (made on the current view) and add up
    /// its figures.
    pub(super) fn apply(&mut self, strategy: &str, report: malleable_core::PassOutcome) {
        // A decision that breaks the model's rules, or an answer about
        // another job than the one asking, is the strategy's bug: stop the
        // run and say which (the plugin, in production, skips and logs it).
        if let Some((job, d)) = report.refused_answers.first() {
            panic!("{strategy} at t={}: asked by job {job}, it decided {d:?}", self.now);
        }
        if !report.rejected.is_empty() {
            let why: Vec<String> = report.rejected.iter().map(ToString::to_string).collect();
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
    pub(super) fn start(&mut self, i: usize, nodes: Vec<NodeIndex>, cores: Vec<u32>) {
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
    pub(super) fn take_back_cores(&mut self, other: usize, ended: usize) {
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
}
