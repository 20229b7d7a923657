//! A step none of whose workers ever connects to the hub: its slurmstepd
//! may have died at the launch without a word (chaos run 23: the node's
//! /tmp full as PMIx set up, and srun waited for the launch until the job's
//! time limit). After `Rules::connect_within` mall-run ends the step, and
//! it is started again as any step that failed before connecting is.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{Hub, Output, WorkerId};

impl Hub {
    /// Note when each worker's step was launched (and that a step started
    /// again is not being ended).
    pub(super) fn note_launches(&mut self, out: &[Output], now: Instant) {
        // Most events launch nothing: their outputs pass without a look at the workers.
        for o in out.iter().filter(|o| matches!(o, Output::Launch { .. } | Output::LaunchStep { .. })) {
            let launched = |wk: &super::Worker, w: WorkerId| match o {
                Output::Launch { worker, .. } => *worker == w,
                Output::LaunchStep { first, .. } => wk.step == *first,
                _ => false,
            };
            for (w, wk) in self.workers.iter_mut() {
                if launched(wk, *w) {
                    wk.launched = Some(now);
                    wk.ending = false;
                }
            }
        }
    }

    /// End each step launched `connect_within` ago or more that still runs
    /// and none of whose workers has connected (once a launch).
    pub(super) fn end_unconnected_steps(&mut self, out: &mut Vec<Output>) {
        let now = Instant::now();
        // Each step: whether none of its workers connected and it runs
        // still, and when it was launched.
        let mut steps: BTreeMap<WorkerId, (bool, Option<Instant>)> = BTreeMap::new();
        for wk in self.workers.values() {
            let (silent, launched) = steps.entry(wk.step).or_insert((true, None));
            *silent &= !wk.connected_once && wk.exited.is_none() && !wk.abandoned && !wk.lost && !wk.ending;
            *launched = (*launched).max(wk.launched);
        }
        let within = self.rules.connect_within;
        for (step, (silent, launched)) in steps {
            if !(silent && launched.is_some_and(|t| now.duration_since(t) >= within)) {
                continue;
            }
            let nodes = self.mark_ending(step);
            out.push(Output::Log(format!(
                "the step on {} was launched {} s ago and none of its workers has connected (its slurmstepd \
                 may have died at the launch): ending it to start it again",
                nodes.join(","),
                within.as_secs()
            )));
            out.push(Output::EndStep { worker: step });
        }
    }
}
