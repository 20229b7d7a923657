//! How long an adaptation of this job can take, from what the hub measured
//! of its own steps; reported to the scheduler (`REPORT adapt_s=`), which
//! gives the job's adaptations that long when its AdaptTimeout is shorter
//! (malleable-ctld's `adaptation::deadline`).
//!
//! An adaptation runs from the scheduler's decision to the commit: the
//! application reaches its next safe point (a probe: up to the longest gap
//! between two, a checkpoint's save included when one falls there); in
//! restart mode its old step ends (MPI_Finalize, `Rules::adapt_end_grace`
//! at most); a step starts, tried up to `Rules::start_tries` times, each
//! as long as the longest start seen (launch, MPI_Init, and in an
//! adaptation the checkpoint's load, up to the commit).

use std::time::{Duration, Instant};

use super::io::{Launch, Output, Rules};

#[derive(Debug, Default)]
pub(super) struct Bound {
    /// A step launched and not yet ready: since when, and for which
    /// adaptation (0: the run's start, ready at its workers' first probe;
    /// else at the adaptation's commit).
    starting: Option<(Instant, u64)>,
    /// The longest a step took from its launch to being ready.
    start: Option<Duration>,
    /// The last probe completed, and the longest time between two (an
    /// adaptation's own time is not a gap: a launch and a commit forget
    /// the last).
    last_probe: Option<Instant>,
    gap: Duration,
    /// The bound last reported, in whole seconds.
    reported: Option<u32>,
}

impl Bound {
    /// What the hub did at `now`: steps launched, probes answered, commits
    /// told.
    pub(super) fn saw(&mut self, out: &[Output], now: Instant) {
        let launched = out.iter().find_map(|o| match o {
            Output::Launch { joining, .. } | Output::LaunchStep { joining, .. } => Some(*joining),
            _ => None,
        });
        let probed = out
            .iter()
            .any(|o| matches!(o, Output::Reply(_, f) if ["NONE", "EXPAND", "SHRINK"].contains(&f.verb.as_str())));
        let committed =
            out.iter().any(|o| matches!(o, Output::Tell(malleable_model::runtime_msg::Request::Commit { .. })));
        let ready = match self.starting {
            Some((_, 0)) => probed || committed,
            Some(_) => committed,
            None => false,
        };
        if let Some((since, _)) = self.starting.filter(|_| ready) {
            let took = now.duration_since(since);
            self.start = Some(self.start.map_or(took, |s| s.max(took)));
            self.starting = None;
        }
        if committed {
            self.last_probe = None;
        }
        if probed {
            if let Some(last) = self.last_probe {
                self.gap = self.gap.max(now.duration_since(last));
            }
            self.last_probe = Some(now);
        }
        if let Some(joining) = launched {
            // A step started again after a failed start keeps its first
            // launch's time: its start took the tries.
            self.starting.get_or_insert((now, joining));
            self.last_probe = None;
        }
    }

    /// The bound in whole seconds, once a step's start was measured.
    pub(super) fn seconds(&self, rules: &Rules) -> Option<u32> {
        let start = self.start?;
        let finalize =
            if rules.launch == Launch::Restart { rules.end_grace.min(rules.adapt_end_grace) } else { Duration::ZERO };
        let tries = rules.start_tries.max(1);
        let total = self.gap + finalize + start * tries + rules.start_again_after * (tries - 1);
        Some(total.as_secs_f64().ceil() as u32)
    }

    /// The bound to report now: when it changed since the last report.
    pub(super) fn report_now(&mut self, rules: &Rules) -> Option<u32> {
        let s = self.seconds(rules).filter(|s| Some(*s) != self.reported)?;
        self.reported = Some(s);
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_rt::wire::Frame;

    fn rules(launch: Launch) -> Rules {
        Rules { launch, start_tries: 3, start_again_after: Duration::from_secs(2), ..Rules::default() }
    }

    #[test]
    fn the_bound_adds_a_safe_point_the_old_steps_end_and_every_try_of_the_longest_start() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let launch = |joining| [Output::LaunchStep { first: 1, nodes: vec!["n1".into()], joining }];
        let probe = [Output::Reply(1, Frame::new("NONE"))];
        let mut b = Bound::default();
        assert_eq!(b.seconds(&rules(Launch::Restart)), None, "nothing measured yet");
        b.saw(&launch(0), at(0.0));
        b.saw(&probe, at(1.5));
        b.saw(&probe, at(2.0));
        b.saw(&probe, at(4.0));
        // Restart mode: a 2 s gap, 5 s of grace, 3 tries of 1.5 s, 2 waits of 2 s.
        assert_eq!(b.seconds(&rules(Launch::Restart)), Some(2 + 5 + 5 + 4));
        assert_eq!(b.seconds(&rules(Launch::Workers)), Some(2 + 5 + 4));
        // An adaptation: its step took 10 s to the commit (a checkpoint's
        // load), and the time it took is no gap.
        b.saw(&[Output::Reply(1, Frame::new("EXPAND"))], at(5.0));
        b.saw(&launch(1), at(20.0));
        // The old workers' probe meanwhile (the other mode) ends nothing.
        b.saw(&probe, at(20.5));
        let commit = malleable_model::runtime_msg::Request::Commit { job: malleable_model::JobId(1), resize: 1 };
        b.saw(&[Output::Tell(commit)], at(30.0));
        b.saw(&probe, at(31.0));
        assert_eq!(b.seconds(&rules(Launch::Restart)), Some(2 + 5 + 30 + 4));
        // Reported once, and again when it changes.
        let r = rules(Launch::Restart);
        assert_eq!((b.report_now(&r), b.report_now(&r)), (Some(41), None));
        b.saw(&probe, at(40.0));
        assert_eq!(b.report_now(&r), Some(9 + 5 + 30 + 4));
    }
}
