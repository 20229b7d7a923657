//! What the strategy is shown, as malleable-ctld's `snapshot` builds it from
//! slurmctld: waiting and running jobs with their limits, sharing and
//! MTCT ratios, the corridor and the machine's draw (which the meter records too).

use malleable_model::{CoreSharing, JobId, JobPower, PendingJob, Placement, PowerState, RunningJob};

use super::Engine;
use crate::model::priority::Priority;

impl Engine<'_> {
    /// What the strategy sees of job `i` once submitted: its request and
    /// limit, and its power estimates only (its real draw shows once it runs).
    pub(super) fn pending_view(&self, job: usize) -> PendingJob {
        let s = &self.specs[job];
        PendingJob {
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
        }
    }

    /// Bring the strategy's view up to now: running jobs and the corridor.
    pub(super) fn refresh_view(&mut self) {
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

    /// What the machine draws now: nodes a job holds (those it is being
    /// given included) at the job's real per-node draw, the rest idle.
    pub(super) fn draw(&self) -> f64 {
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
    pub(super) fn measure_power(&mut self, pass_ran: bool) {
        let Some(p) = &self.power else {
            return;
        };
        let corridor = p.corridor.at(self.now.floor() as i64);
        let adapting = self.running.iter().any(|&i| self.jobs[i].adapting.is_some());
        let draw = self.draw();
        self.meter.record(self.now, draw, corridor, pass_ran, adapting);
    }

    /// What the strategy sees of running job `i`. The MTCT ratio is the
    /// model's at the current size: the measurement restarts after each
    /// adaptation (Chadha et al. 2020, section V-A) and the model has no noise.
    pub(super) fn running_view(&mut self, i: usize) -> RunningJob {
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
