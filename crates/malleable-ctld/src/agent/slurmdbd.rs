//! What the agent knows of slurmdbd: the probe that asks beside the passes
//! whether it answers, since when it has been away or behind (its records
//! waiting in slurmctld's queue), and whether the log said resizes are held.

use std::time::{Duration, Instant};

use malleable_model::log_lines::LogLine;
use slurm::ctld::accounting::SlurmdbdAddress;

use crate::slurmdbd_probe::SlurmdbdProbe;

/// How long slurmdbd must have been away or behind before the log says that
/// resizes are held (they are held at once), and before a job that may
/// preempt an elastic one no longer waits for its resize.
pub(super) const SLURMDBD_BEHIND_SAID_AFTER: Duration = Duration::from_secs(5);

#[derive(Default)]
pub(super) struct SlurmdbdWatch {
    probe: SlurmdbdProbe,
    /// The probe is aimed at slurm.conf's slurmdbd (at the first read, and
    /// again after a reconfigure, which may move it).
    aimed: bool,
    behind_since: Option<Instant>,
    said_held: bool,
}

impl SlurmdbdWatch {
    /// Aim the probe again at the next read.
    pub(super) fn aim_again(&mut self) {
        self.aimed = false;
    }

    /// Before a read: the probe aimed if it is due (`address`, slurm.conf's
    /// slurmdbd), and why slurmdbd last did not answer, if it did not.
    pub(super) fn unanswered(&mut self, address: impl FnOnce() -> Option<SlurmdbdAddress>) -> Option<String> {
        if !std::mem::replace(&mut self.aimed, true) {
            self.probe.aim(address());
        }
        self.probe.unanswered()
    }

    /// Whether slurmdbd has been away or behind for long.
    pub(super) fn behind_for_long(&self) -> bool {
        self.behind_since.is_some_and(|since| since.elapsed() >= SLURMDBD_BEHIND_SAID_AFTER)
    }

    /// After a pass that found slurmdbd `behind` or not: the line to say,
    /// once when resizes are held for some seconds and once when they go on
    /// (messages wait in slurmctld's queue for a moment all the time).
    pub(super) fn after_pass(&mut self, behind: bool, unanswered: Option<String>) -> Option<LogLine> {
        match (behind, self.behind_since) {
            (true, None) => {
                self.behind_since = Some(Instant::now());
                None
            }
            (true, Some(_)) if self.behind_for_long() && !std::mem::replace(&mut self.said_held, true) => {
                Some(LogLine::ResizesHeld { unanswered })
            }
            (false, Some(_)) => {
                self.behind_since = None;
                std::mem::take(&mut self.said_held).then_some(LogLine::ResizesResumed)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resizes_held_are_said_once_after_some_seconds_and_their_end_once() {
        let mut w = SlurmdbdWatch::default();
        assert_eq!(w.after_pass(false, None), None);
        assert_eq!(w.after_pass(true, None), None, "behind just now");
        assert_eq!(w.after_pass(true, None), None, "not yet for long");
        w.behind_since = Some(Instant::now() - SLURMDBD_BEHIND_SAID_AFTER);
        assert!(w.behind_for_long());
        let why = Some("slurmdbd:6819: Connection refused".to_string());
        assert_eq!(w.after_pass(true, why.clone()), Some(LogLine::ResizesHeld { unanswered: why.clone() }));
        assert_eq!(w.after_pass(true, why), None, "said once");
        assert_eq!(w.after_pass(false, None), Some(LogLine::ResizesResumed));
        assert_eq!(w.after_pass(false, None), None);
        // Behind for a moment only: neither is said.
        assert_eq!(w.after_pass(true, None), None);
        assert_eq!(w.after_pass(false, None), None);
    }
}
