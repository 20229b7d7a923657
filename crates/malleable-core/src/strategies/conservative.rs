//! Conservative backfill (Mu'alem & Feitelson 2001), the rule of Slurm's own
//! sched/backfill: every waiting job, in priority order, gets the earliest
//! start that delays no job before it, and starts now if that start is now.
//! EASY (easy.rs) protects only the head job; here every job tested holds a
//! reservation, so a long job behind the head can no longer slip past a
//! short one further up.
//!
//! This is the "static backfilling" Chadha et al. 2020 compare against
//! (section VI-B: "the default backfill scheduling plugin in SLURM with
//! default scheduling parameters"). Like sched/backfill, it tests at most
//! `MaxJobTest` jobs a pass (`bf_max_job_test`, 500 by default). Unlike it, it
//! runs at every pass rather than every `bf_interval` (30 s), and plans in
//! seconds rather than `bf_resolution` (60 s) steps: the idealised form,
//! never worse for the jobs than what slurmctld would do. The plan is by
//! node ([`NodePlan`]), as sched/backfill's node space: a job that may use
//! only some nodes is booked where and when its own nodes are free.

use malleable_model::{Decision, JobId, Snapshot, Time};

use crate::blocks::booking::{book_queue, booked_waiting, fingerprint, Wide};
use crate::blocks::waiting::Waiting;
use crate::params::{Param, Whole};
use crate::strategy::{PassReport, Strategy, StrategyInfo};

/// Jobs tested per pass by default, as slurmctld's `bf_max_job_test` (22.05).
pub const MAX_JOB_TEST: usize = 500;

pub const MAX_JOB_TEST_PARAM: Param<usize> = Param {
    key: "MaxJobTest",
    default: MAX_JOB_TEST,
    allowed: Whole::new(1, 1_000_000),
    help: "waiting jobs tested and booked per pass, as sched/backfill's bf_max_job_test",
};

pub const CONSERVATIVE: StrategyInfo = StrategyInfo {
    name: "conservative",
    about: "conservative backfill, Slurm's sched/backfill rule: every waiting job books its earliest start",
    params: &[&MAX_JOB_TEST_PARAM],
    measures: &[],
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: false,
    build: |p| {
        let max_job_test = p.get(&MAX_JOB_TEST_PARAM);
        Box::new(Conservative { max_job_test, booked: (0, Vec::new()) })
    },
};

/// The strategy: its passes, and its bookings as the waiting jobs'
/// expected starts (`squeue --start` for every booked job, as under
/// sched/backfill).
struct Conservative {
    max_job_test: usize,
    /// The last pass's bookings, and the snapshot they were made on (its
    /// [`fingerprint`]): `waiting` follows `schedule` on the same snapshot,
    /// and planning again would double a pass's work on a long queue.
    booked: (u64, Vec<(JobId, Time)>),
}

impl Strategy for Conservative {
    fn name(&self) -> &'static str {
        "conservative"
    }

    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        let (decisions, booked) = plan(s, self.max_job_test);
        self.booked = (fingerprint(s), booked);
        decisions.into()
    }

    /// The first waiting job waits for resources, the others for priority
    /// (a job ahead holds a booking), each expected at its booking.
    fn waiting(&self, s: &Snapshot, decisions: &[Decision]) -> Vec<Waiting> {
        let planned;
        let booked = if self.booked.0 == fingerprint(s) {
            &self.booked.1
        } else {
            planned = plan(s, self.max_job_test).1;
            &planned
        };
        booked_waiting(s, decisions, booked)
    }
}

/// One pass of conservative backfill ([`book_queue`]): its starts.
pub fn conservative(s: &Snapshot, max_job_test: usize) -> Vec<Decision> {
    plan(s, max_job_test).0
}

/// [`conservative`]'s decisions, and each job's booked start.
fn plan(s: &Snapshot, max_job_test: usize) -> (Vec<Decision>, Vec<(JobId, Time)>) {
    let b = book_queue(s, max_job_test, Wide::No);
    (b.decisions, b.booked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::backfill::easy;
    use crate::blocks::waiting::WaitReason;
    use crate::test_support::{cluster, job, limited, running, start};
    use malleable_model::Placement;

    fn conservative(s: &Snapshot) -> Vec<Decision> {
        super::conservative(s, MAX_JOB_TEST)
    }

    /// 6 nodes, now 100; nodes 0-1 busy until 200. Job 1 (5 nodes, 100 s)
    /// books 200-300, job 2 (all 6, 100 s) books 300-400.
    fn two_bookings() -> Snapshot {
        let mut s = cluster(&[false, false, true, true, true, true]);
        s.running = vec![running(9, &[0, 1], Some(200))];
        s.pending = vec![limited(job(1, 0, 1, 5), Some(100)), limited(job(2, 0, 2, 6), Some(100))];
        s
    }

    #[test]
    fn a_job_whose_own_nodes_are_busy_is_booked_when_they_come_back() {
        // Partitions {0, 1} and {2, 3}; node 0 busy until 1000. Job 1 may
        // use only the first: booked from 1000. Job 2 starts in the second.
        let mut s = cluster(&[false, true, true, true]);
        s.running = vec![running(9, &[0], Some(1000))];
        s.pending = vec![
            limited(job(1, 0, 1, 2), Some(100)).placement(Placement::only([0, 1])),
            limited(job(2, 0, 2, 2), Some(5000)).placement(Placement::only([2, 3])),
        ];
        assert_eq!(conservative(&s), vec![start(2, &[2, 3])]);
    }

    #[test]
    fn a_job_behind_keeps_off_the_nodes_booked_for_a_job_ahead() {
        // Node 2 busy until 200. Job 1 may use nodes 0 and 2 only: booked
        // on them from 200. Job 2 (one node, 500 s) starts now, but not on
        // node 0, the lowest free: it would hold it past 200. Counting
        // nodes alone, it took node 0 and pushed job 1 back to 600.
        let mut s = cluster(&[true, true, false]);
        s.running = vec![running(9, &[2], Some(200))];
        s.pending = vec![
            limited(job(1, 0, 1, 2), Some(100)).placement(Placement::only([0, 2])),
            limited(job(2, 0, 2, 1), Some(500)),
        ];
        assert_eq!(conservative(&s), vec![start(2, &[1])]);
        let w = Conservative { max_job_test: MAX_JOB_TEST, booked: (0, Vec::new()) }.waiting(&s, &conservative(&s));
        assert_eq!(w.iter().map(|w| (w.job.0, w.start)).collect::<Vec<_>>(), vec![(1, Some(200))]);
    }

    #[test]
    fn every_booked_job_has_its_booking_as_expected_start() {
        let s = two_bookings();
        let c = Conservative { max_job_test: MAX_JOB_TEST, booked: (0, Vec::new()) };
        let w = c.waiting(&s, &conservative(&s));
        let got: Vec<(u32, WaitReason, Option<Time>)> = w.iter().map(|w| (w.job.0, w.reason, w.start)).collect();
        assert_eq!(got, vec![(1, WaitReason::Resources, Some(200)), (2, WaitReason::Priority, Some(300))]);
        // After a pass the bookings it made are used, and the same.
        let mut c = c;
        let r = c.schedule(&s);
        assert_eq!(c.waiting(&s, &r.decisions), w);
        // Another snapshot is planned afresh: without job 1, job 2 books 200.
        let mut other = s.clone();
        other.pending.retain(|p| p.id.0 != 1);
        let got: Vec<(u32, Option<Time>)> =
            c.waiting(&other, &conservative(&other)).iter().map(|w| (w.job.0, w.start)).collect();
        assert_eq!(got, vec![(2, Some(200))]);
    }

    #[test]
    fn a_job_that_would_delay_the_second_waiting_job_waits() {
        let mut s = two_bookings();
        // Job 3 would hold a node till 1100: EASY lets it take the head's
        // one extra node, which pushes job 2 back; conservative does not.
        s.pending.push(limited(job(3, 0, 3, 1), Some(1000)));
        // Job 4 ends by 200, before either booking: both start it.
        s.pending.push(limited(job(4, 0, 4, 2), Some(100)));
        assert_eq!(easy(&s), vec![start(3, &[2]), start(4, &[3, 4])]);
        assert_eq!(conservative(&s), vec![start(4, &[2, 3])]);
    }

    #[test]
    fn a_job_fits_into_a_gap_between_bookings() {
        // 4 nodes, 2 busy until 200. Job 1 (4 nodes, 100 s) books 200-300;
        // job 2 (2 nodes, 100 s) fits now, ending at 200.
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(9, &[0, 1], Some(200))];
        s.pending = vec![
            limited(job(1, 0, 1, 4), Some(100)),
            limited(job(2, 0, 2, 2), Some(101)),
            limited(job(3, 0, 3, 2), Some(100)),
        ];
        // Job 2 would end at 201, inside job 1's booking: it books 300.
        // Job 3 ends at 200 exactly and starts.
        assert_eq!(conservative(&s), vec![start(3, &[2, 3])]);
    }

    #[test]
    fn nodes_an_unlimited_job_holds_never_come_back() {
        // Node 0 is held for ever: job 1 (2 nodes) can never run and books
        // nothing, so job 2 (1 node, unlimited) starts.
        let mut s = cluster(&[false, true]);
        s.running = vec![running(9, &[0], None)];
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), None)];
        assert_eq!(conservative(&s), vec![start(2, &[1])]);
    }

    #[test]
    fn nodes_past_their_time_limit_are_the_earlier_jobs_part() {
        // Node 0's job is past its limit (100 = now) but still holds it.
        // Job 1 (2 nodes) is due now and keeps its booking; job 2 (1 node,
        // 1000 s) would take node 1 from it and waits.
        let mut s = cluster(&[false, true]);
        s.running = vec![running(9, &[0], Some(100))];
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), Some(1000))];
        assert_eq!(conservative(&s), vec![]);
    }

    #[test]
    fn tests_at_most_max_job_test_jobs() {
        let mut s = cluster(&vec![true; MAX_JOB_TEST + 2]);
        s.pending = (0..MAX_JOB_TEST as u32 + 2).map(|i| job(i + 1, 0, i64::from(i), 1)).collect();
        assert_eq!(conservative(&s).len(), MAX_JOB_TEST);
        assert_eq!(super::conservative(&s, 7).len(), 7);
    }
}
