//! When the agent passes: at a change slurmctld counts, at the tick, and
//! sooner while something waits on time (a commit, a batch job coming of
//! age, a change in the very second of the last pass). The clock and the
//! counters are handed in, so that these rules are tested without slurmctld.

use std::time::{Duration, Instant};

use slurm::ctld::UpdateCounters;

/// While an adaptation waits for its application's commit, a pass (under
/// slurmctld's locks) this often: the commit, a job update, moves only the
/// whole-second stamp.
const ADAPTING_POLL: Duration = Duration::from_millis(50);

/// slurmctld's last-update stamps are whole seconds: a change in the very
/// second of our last pass leaves them as they were. Job submissions,
/// starts and ends also move slurmctld's diagnostic counts, which catch
/// them at once; for the rest (a node's state, a job's update), while that
/// second lasts, pass again this often rather than wait for the next second.
/// Before the counts, a job submitted or freed in such a second waited up
/// to this long, and on ESP one start in seven came 60 to 210 ms late, which
/// is what made real and simulated start orders part at near-ties.
const SAME_SECOND_RECHECK: Duration = Duration::from_millis(200);

/// The agent's passes: when the last was, what it had seen, and what is
/// owed.
pub(super) struct Pacing {
    /// slurmctld's counters as they stood after the last pass.
    pub(super) seen: UpdateCounters,
    /// The last pass's second, by slurmctld's clock, and its instant.
    last_pass_second: i64,
    last_pass: Instant,
    pub(super) passes: u64,
    /// A pass is owed even without a change (reconfigure, corridor moved,
    /// decisions that no longer fit).
    pub(super) force_next: bool,
    /// When the first batch job held back by `BatchStartDelay=` comes of
    /// age: a pass is due then, whatever else changed.
    pub(super) next_of_age: Option<Instant>,
    /// Whether an adaptation was under way after the last pass.
    pub(super) adapting: bool,
}

impl Pacing {
    /// Before the first pass, which is due at once (nothing seen yet).
    pub(super) fn new(now: Instant) -> Pacing {
        Pacing {
            seen: UpdateCounters { job: -1, node: -1, job_events: 0, job_ends: 0 },
            last_pass_second: 0,
            last_pass: now,
            passes: 0,
            force_next: false,
            next_of_age: None,
            adapting: false,
        }
    }

    /// A pass has ended, in `second` (slurmctld's clock) at `now`.
    pub(super) fn passed(&mut self, second: i64, now: Instant) {
        self.last_pass_second = second;
        self.last_pass = now;
        self.passes += 1;
    }

    /// Whether a pass is due, slurmctld's counters being `counters`, its
    /// clock at `second`, at `now`, the tick `tick` (SchedulerTick): a
    /// change since the last pass, or the tick has run out.
    pub(super) fn due(&self, counters: UpdateCounters, second: i64, now: Instant, tick: Duration) -> bool {
        if counters != self.seen {
            return true;
        }
        let since = now.saturating_duration_since(self.last_pass);
        // The stamps have one-second resolution, and the job counts miss
        // node changes and job updates: such a change in the very second our
        // last pass ended leaves everything equal. Look again every
        // SAME_SECOND_RECHECK while that second lasts, and once in the next,
        // so such a change is never missed nor left waiting long.
        let last_change = self.seen.job.max(self.seen.node);
        if last_change >= self.last_pass_second && (second > self.last_pass_second || since >= SAME_SECOND_RECHECK) {
            return true;
        }
        // A batch job held back by BatchStartDelay comes of age.
        if self.next_of_age.is_some_and(|at| now >= at) {
            return true;
        }
        // While an adaptation waits for its application's commit, pass every
        // ADAPTING_POLL: a commit in the second of the last pass would
        // otherwise wait for the recheck, and a resize's latency with it.
        if self.adapting && since >= ADAPTING_POLL {
            return true;
        }
        since >= tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_secs(5);

    fn counters(job: i64, node: i64, job_events: u64) -> UpdateCounters {
        UpdateCounters { job, node, job_events, job_ends: 0 }
    }

    /// A pacing whose last pass ended in second 100 at `at`, having seen
    /// stamps of second 90.
    fn after_a_pass(at: Instant) -> Pacing {
        let mut p = Pacing::new(at);
        p.seen = counters(90, 90, 7);
        p.passed(100, at);
        p
    }

    #[test]
    fn the_first_pass_is_due_at_once_and_a_counted_change_makes_one_due() {
        let t = Instant::now();
        assert!(Pacing::new(t).due(counters(0, 0, 0), 100, t, TICK));
        let p = after_a_pass(t);
        assert!(!p.due(counters(90, 90, 7), 100, t, TICK), "nothing changed");
        // A submission in the same second: the stamp stays, the count moves.
        assert!(p.due(counters(90, 90, 8), 100, t, TICK));
        assert!(p.due(counters(101, 90, 7), 101, t, TICK));
    }

    #[test]
    fn a_change_in_the_second_of_the_last_pass_is_looked_for_again_soon() {
        let t = Instant::now();
        let mut p = after_a_pass(t);
        // The last pass saw a stamp of its own second: a later change in
        // that second would leave it equal.
        p.seen = counters(100, 90, 7);
        let same = counters(100, 90, 7);
        assert!(!p.due(same, 100, t + Duration::from_millis(100), TICK));
        assert!(p.due(same, 100, t + SAME_SECOND_RECHECK, TICK));
        assert!(p.due(same, 101, t + Duration::from_millis(100), TICK), "the next second");
    }

    #[test]
    fn a_job_coming_of_age_an_adaptation_under_way_and_the_tick_each_make_a_pass_due() {
        let t = Instant::now();
        let same = counters(90, 90, 7);
        let mut p = after_a_pass(t);
        assert!(!p.due(same, 103, t + Duration::from_secs(3), TICK));
        assert!(p.due(same, 105, t + TICK, TICK), "the tick");
        p.next_of_age = Some(t + Duration::from_secs(2));
        assert!(!p.due(same, 101, t + Duration::from_secs(1), TICK));
        assert!(p.due(same, 102, t + Duration::from_secs(2), TICK));
        let mut p = after_a_pass(t);
        p.adapting = true;
        assert!(!p.due(same, 100, t + Duration::from_millis(10), TICK));
        assert!(p.due(same, 100, t + ADAPTING_POLL, TICK));
    }
}
