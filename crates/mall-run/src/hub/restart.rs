//! Restart mode's side of an adaptation: every worker of the running step
//! checkpoints and ends, then one step on the job's new node set takes
//! over from the checkpoint (its workers are the adaptation's joiners).
//! An MPI application's ranks cannot take in processes of another step,
//! so this is how any MPI resizes under srun.

use malleable_model::runtime_msg::Request;

use super::{Adapt, Hub, Kind, Launch, Output, Stage, WorkerId};

impl Hub {
    /// An adaptation the scheduler decided, in restart mode: the workers
    /// after it are a new step's, on the job's nodes after it; every
    /// worker of the running step leaves (with those in `a.leavers`
    /// already: a step a loss ended). `forced`: nodes of a shrink the loss
    /// forced, which the job may hold a while yet; nothing starts there.
    pub(super) fn restart_for(&mut self, mut a: Adapt, forced: &[String], out: &mut Vec<Output>) {
        let after: Vec<String> = match a.kind {
            // The job holds the new nodes already; its list is in Slurm's
            // order, which is how srun places the ranks.
            Kind::Expand => {
                let mut all = self.job_nodes.clone();
                all.extend(a.nodes.iter().filter(|n| !self.job_nodes.contains(n)).cloned());
                all
            }
            Kind::Shrink => self.job_nodes.iter().filter(|n| !a.nodes.contains(n)).cloned().collect(),
            // The step ends with the lost nodes (Slurm ends a step that
            // loses one), every rank with it: it starts again on the nodes
            // left, from the application's last checkpoint.
            Kind::Lost if self.checkpoint.is_some() => {
                self.job_nodes.iter().filter(|n| !a.nodes.contains(n) && !forced.contains(n)).cloned().collect()
            }
            Kind::Lost => {
                let why = format!(
                    "the job lost {}: in restart mode (--mpi restart) the application's step ends with them, and \
                     the application took no checkpoint to start again from (checkpoint every few iterations, \
                     e.g. the examples' --checkpoint-every)",
                    a.nodes.join(",")
                );
                return self.fatal(why, out);
            }
        };
        if after.is_empty() {
            return self.fatal(format!("adaptation {} leaves the job no node to start again on", a.resize), out);
        }
        for node in &after {
            let ids = self.add_workers(node);
            a.joiners.extend(ids);
        }
        a.leavers.extend(self.comm.iter().copied());
        if a.kind == Kind::Lost {
            // Nobody is told: the old step's ranks are gone, or going (it
            // is ended, should a rank be left waiting on the lost ones).
            self.lose(&a.leavers, out);
            let mut steps = Vec::new();
            for wk in a.leavers.iter().map(|w| &self.workers[w]) {
                if wk.exited.is_none() && !steps.contains(&wk.step) {
                    steps.push(wk.step);
                }
            }
            self.waiting.clear();
            self.receiving.clear();
            self.mailbox.clear();
            out.extend(steps.into_iter().map(|worker| Output::EndStep { worker }));
            // No probe announces it: it begins here.
            a.stage = Stage::Announced;
            a.checkpointed = true;
            out.push(Output::Tell(Request::Begin { job: self.job, resize: a.resize }));
            let iteration = self.checkpoint.as_ref().map_or(0, |c| c.iteration);
            out.push(Output::Log(format!(
                "lost {}: the application starts again on {} ({} workers) from its checkpoint at iteration {iteration}",
                a.nodes.join(","),
                after.join(","),
                a.joiners.len()
            )));
            self.adapt = Some(a);
            return self.relaunch_when_ended(out);
        }
        let verb = if a.kind == Kind::Expand { "expand" } else { "shrink" };
        out.push(Output::Log(format!(
            "{verb} {}: the application is to checkpoint and end; it starts again on {} ({} workers)",
            a.resize,
            after.join(","),
            a.joiners.len()
        )));
        self.adapt = Some(a);
        // The workers may all be waiting in a probe already.
        self.try_collectives(out);
    }

    /// Once every worker of the old step saved its data, said BYE and
    /// ended (or was lost with its node, and ended), the new step starts.
    pub(super) fn relaunch_when_ended(&mut self, out: &mut Vec<Output>) {
        if self.rules.launch != Launch::Restart {
            return;
        }
        let workers = &self.workers;
        let Some(a) = self.adapt.as_mut().filter(|a| a.stage == Stage::Announced && !a.launched && a.checkpointed)
        else {
            return;
        };
        let ended =
            |w: &WorkerId| workers.get(w).is_some_and(|wk| (wk.said_bye.is_some() || wk.lost) && wk.exited.is_some());
        if !a.leavers.iter().all(ended) {
            return;
        }
        a.launched = true;
        let (joiners, resize) = (a.joiners.clone(), a.resize);
        let iteration = self.checkpoint.as_ref().map_or(0, |c| c.iteration);
        out.push(Output::Log(format!(
            "adaptation {resize}: the old step ended; starting the application on {} from its checkpoint at \
             iteration {iteration} ({})",
            nodes_of(workers, &joiners).join(","),
            super::unix_time()
        )));
        self.launch_step(&joiners, resize, out);
    }

    /// Restart mode: the step whose workers' time to start again has come
    /// (a step that failed before they connected), as one step again.
    pub(super) fn start_step_again(&mut self, due: &[WorkerId], out: &mut Vec<Output>) {
        let group = match &self.adapt {
            Some(a) if a.joiners.iter().any(|j| due.contains(j)) => (a.joiners.clone(), a.resize),
            _ => (self.comm.clone(), 0),
        };
        let (ws, joining) = group;
        self.launch_step(&ws, joining, out);
    }

    /// Start workers `ws` (consecutive, `per_node` a node) as one step.
    pub(super) fn launch_step(&mut self, ws: &[WorkerId], joining: u64, out: &mut Vec<Output>) {
        let Some(&first) = ws.first() else { return };
        for w in ws {
            if let Some(wk) = self.workers.get_mut(w) {
                wk.step = first;
            }
        }
        let nodes = nodes_of(&self.workers, ws);
        out.push(Output::LaunchStep { first, nodes, joining });
    }
}

/// The nodes of these workers (a step's: consecutive, `per_node` a node),
/// each once, in their order.
fn nodes_of(workers: &std::collections::BTreeMap<WorkerId, super::Worker>, ws: &[WorkerId]) -> Vec<String> {
    let mut nodes: Vec<String> = Vec::new();
    for w in ws {
        let n = &workers[w].node;
        if nodes.last() != Some(n) {
            nodes.push(n.clone());
        }
    }
    nodes
}
