//! A running job's clock: its run time at its size and pace, its work
//! brought up to now, the node-seconds it held, and the Finish and check
//! events that follow from them.

use super::{Engine, Event};

impl Engine<'_> {
    pub(super) fn run_time(&self, i: usize, n: usize) -> f64 {
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
    pub(super) fn paced_run_time(&self, i: usize) -> f64 {
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
    pub(super) fn progress(&mut self, i: usize) {
        let rt = self.paced_run_time(i);
        let j = &mut self.jobs[i];
        // `since` is in the future while the job is still being launched.
        if j.adapting.is_none() && rt > 0.0 {
            j.left = (j.left - (self.now - j.since).max(0.0) / rt).max(0.0);
        }
        j.since = j.since.max(self.now);
    }

    /// Count node-seconds held up to now.
    pub(super) fn account(&mut self, i: usize) {
        let j = &mut self.jobs[i];
        self.node_seconds += j.held_share(self.cores_per_node) * (self.now - j.held_since);
        j.held_since = self.now;
    }

    pub(super) fn schedule_finish(&mut self, i: usize) {
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
    pub(super) fn schedule_check(&mut self, i: usize) {
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

    /// Bring a running job's progress and node-seconds up to now and void
    /// its pending Finish: its size (a resize; `validate` has checked that it
    /// runs and is not adapting already) or its cores are about to change.
    pub(super) fn settle(&mut self, i: usize) {
        self.progress(i);
        self.account(i);
        self.jobs[i].version += 1;
    }
}
