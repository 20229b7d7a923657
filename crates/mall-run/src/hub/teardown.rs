//! Restart mode: a step whose every rank said BYE but that does not end.
//! Its ranks are past the runtime, in MPI_Finalize or exiting; Debian 12's
//! MPICH 4.0.2 (ch4:ucx over TCP) can deadlock there, one rank waiting in
//! the process manager's barrier while another still flushes its endpoint
//! to it. After `Rules::end_grace` mall-run ends the step, so that neither
//! a restart nor the run's end waits for it until the job's time limit.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{Hub, Launch, Output, WorkerId};

impl Hub {
    /// End each step whose workers all said BYE `end_grace` ago or more
    /// and that still runs (once a step).
    pub(super) fn end_lingering_steps(&mut self, out: &mut Vec<Output>) {
        if self.rules.launch != Launch::Restart {
            return;
        }
        // Each step: whether it lingers so far, and its last BYE.
        let mut steps: BTreeMap<WorkerId, (bool, Option<Instant>)> = BTreeMap::new();
        for wk in self.workers.values() {
            let (lingers, last_bye) = steps.entry(wk.step).or_insert((true, None));
            let past_runtime = wk.bye_at.is_some() && !wk.abandoned && !wk.lost && !wk.ending;
            *lingers &= past_runtime;
            *last_bye = (*last_bye).max(wk.bye_at);
        }
        let now = Instant::now();
        for (step, (lingers, last_bye)) in steps {
            let running = self.workers.values().any(|wk| wk.step == step && wk.exited.is_none());
            let due = last_bye.is_some_and(|t| now.duration_since(t) >= self.rules.end_grace);
            if !(lingers && running && due) {
                continue;
            }
            let mut nodes: Vec<String> = Vec::new();
            for wk in self.workers.values_mut().filter(|wk| wk.step == step) {
                wk.ending = true;
                if !nodes.contains(&wk.node) {
                    nodes.push(wk.node.clone());
                }
            }
            out.push(Output::Log(format!(
                "the step on {} has not ended {} s after its last rank said BYE (an MPI library stuck in \
                 MPI_Finalize?): ending it",
                nodes.join(","),
                self.rules.end_grace.as_secs()
            )));
            out.push(Output::EndStep { worker: step });
        }
    }
}
