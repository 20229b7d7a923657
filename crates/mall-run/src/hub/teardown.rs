//! Restart mode: a step whose every rank said BYE but that does not end.
//! Its ranks are past the runtime, in MPI_Finalize or exiting; Debian 12's
//! MPICH 4.0.2 (ch4:ucx over TCP) can deadlock there, one rank waiting in
//! the process manager's barrier while another still flushes its endpoint
//! to it. After `Rules::end_grace` mall-run ends the step, so that neither
//! a restart nor the run's end waits for it until the job's time limit;
//! in an adaptation, once the ranks saved their data, after
//! `Rules::adapt_end_grace`, so the restart fits in the AdaptTimeout.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{Hub, Launch, Output, WorkerId};

impl Hub {
    /// Mark the workers of `step` as being ended by the hub; the nodes of
    /// the step, each once.
    pub(super) fn mark_ending(&mut self, step: WorkerId) -> Vec<String> {
        let mut nodes: Vec<String> = Vec::new();
        for wk in self.workers.values_mut().filter(|wk| wk.step == step) {
            wk.ending = true;
            if !nodes.contains(&wk.node) {
                nodes.push(wk.node.clone());
            }
        }
        nodes
    }

    /// End each step whose workers all said BYE `end_grace` ago or more
    /// and that still runs (once a step).
    pub(super) fn end_lingering_steps(&mut self, out: &mut Vec<Output>) {
        if self.rules.launch != Launch::Restart {
            return;
        }
        // Each step: whether every worker of it is past the runtime, its
        // last BYE, and whether it still runs.
        let mut steps: BTreeMap<WorkerId, (bool, Option<Instant>, bool)> = BTreeMap::new();
        for wk in self.workers.values() {
            let (lingers, last_bye, running) = steps.entry(wk.step).or_insert((true, None, false));
            *lingers &= wk.said_bye.is_some() && !wk.abandoned && !wk.lost && !wk.ending;
            *last_bye = (*last_bye).max(wk.said_bye);
            *running |= wk.exited.is_none();
        }
        let now = Instant::now();
        // An adaptation's old step, its data saved: ended sooner.
        let leaving: Vec<WorkerId> = match &self.adapt {
            Some(a) if a.checkpointed => a.leavers.clone(),
            _ => Vec::new(),
        };
        for (step, (lingers, last_bye, running)) in steps {
            let grace = if leaving.contains(&step) {
                self.rules.end_grace.min(self.rules.adapt_end_grace)
            } else {
                self.rules.end_grace
            };
            let due = last_bye.is_some_and(|t| now.duration_since(t) >= grace);
            if !(lingers && running && due) {
                continue;
            }
            let nodes = self.mark_ending(step);
            out.push(Output::Log(format!(
                "the step on {} has not ended {} s after its last rank said BYE (an MPI library stuck in \
                 MPI_Finalize?): ending it",
                nodes.join(","),
                grace.as_secs()
            )));
            out.push(Output::EndStep { worker: step });
        }
    }
}
