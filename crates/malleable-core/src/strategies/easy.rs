//! EASY backfill (Lifka 1995; Mu'alem and Feitelson 2001) for rigid jobs:
//! FCFS until the head job does not fit, one reservation for that head job,
//! and later jobs start early only where they cannot delay the reservation.
//! The algorithm is a block ([`crate::blocks::backfill::easy`]) because other
//! strategies build on it; this is the strategy that runs it as it is.

use crate::blocks::backfill::easy;
use crate::strategy::{Stateless, StrategyInfo};

pub const EASY: StrategyInfo = StrategyInfo {
    name: "easy",
    about: "EASY backfill: a reservation for the first waiting job, later jobs start where they cannot delay it",
    params: &[],
    measures: &[],
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: false,
    build: |_| Stateless::new("easy", easy),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::reservation::{reservation, Reservation};
    use crate::test_support::{cluster, job, limited, running, start};
    use malleable_model::{Decision, JobId, Placement, Snapshot};

    /// Nodes 0-1 busy until 200 (now is 100), 2-3 free; head job 1 wants all 4,
    /// so its shadow time is 200 with no extra nodes.
    fn head_waits_for_200() -> Snapshot {
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(9, &[0, 1], Some(200))];
        s.pending = vec![job(1, 0, 1, 4)];
        s
    }

    #[test]
    fn a_head_waiting_for_its_required_node_blocks_only_that_node() {
        // Node 4 busy until 1000; the head requires it. A long job for the
        // seven free nodes starts behind it: it cannot delay the head.
        let mut s = cluster(&[true, true, true, true, false, true, true, true]);
        s.running = vec![running(9, &[4], Some(1000))];
        s.pending =
            vec![job(1, 0, 1, 1).placement(Placement::anywhere().requiring([4])), limited(job(2, 0, 2, 7), Some(5000))];
        assert_eq!(easy(&s), vec![start(2, &[0, 1, 2, 3, 5, 6, 7])]);
    }

    #[test]
    fn jobs_of_other_partitions_pass_a_blocked_head() {
        // Partitions 0-3 and 4-7; the head wants all of the first, busy until 1000.
        let mut s = cluster(&[false, true, true, true, true, true, true, true]);
        s.running = vec![running(9, &[0], Some(1000))];
        let (a, b) = (Placement::only(0..4), Placement::only(4..8));
        s.pending = vec![
            job(1, 0, 1, 4).placement(a.clone()),
            limited(job(2, 0, 2, 3), Some(5000)).placement(b),
            limited(job(3, 0, 3, 1), Some(5000)).placement(a),
        ];
        // Job 2 uses none of the head's nodes; job 3 would hold one past 1000.
        assert_eq!(easy(&s), vec![start(2, &[4, 5, 6])]);
    }

    #[test]
    fn backfills_short_job_that_ends_by_shadow_time() {
        let mut s = head_waits_for_200();
        s.pending.push(limited(job(2, 0, 2, 2), Some(100))); // ends at 200
        assert_eq!(easy(&s), vec![start(2, &[2, 3])]);
    }

    #[test]
    fn a_job_with_a_time_min_starts_in_the_hole_under_a_cut_limit() {
        // The hole before the head's start at 200 is 100 s: a whole minute.
        let mut s = head_waits_for_200();
        s.pending.push(limited(job(2, 0, 2, 2), Some(1000)).time_min(Some(60)));
        assert_eq!(easy(&s), vec![Decision::Start { job: JobId(2), nodes: vec![2, 3], time_limit: Some(60) }]);
        // A time-min longer than the hole: it waits.
        s.pending[1].time_min = Some(120);
        assert_eq!(easy(&s), vec![]);
    }

    #[test]
    fn refuses_long_job_that_would_delay_head() {
        let mut s = head_waits_for_200();
        s.pending.push(limited(job(2, 0, 2, 1), Some(101))); // ends at 201
        s.pending.push(limited(job(3, 0, 3, 1), None));
        assert_eq!(easy(&s), vec![]);
    }

    #[test]
    fn allows_long_job_on_extra_nodes_and_shrinks_them() {
        // 5 nodes, 0-1 back at 200: at 200 all 5 are free, head needs 4, 1 extra.
        let mut s = cluster(&[false, false, true, true, true]);
        s.running = vec![running(9, &[0, 1], Some(200))];
        s.pending = vec![
            job(1, 0, 1, 4),
            limited(job(2, 0, 2, 1), None),       // takes the extra node
            limited(job(3, 0, 3, 1), Some(1000)), // no extra left: refused
            limited(job(4, 0, 4, 1), Some(50)),   // ends at 150: fine
        ];
        assert_eq!(
            reservation(&s, 3, &[], &Placement::anywhere(), 4),
            Some(Reservation { shadow_time: 200, extra_nodes: 1 })
        );
        assert_eq!(easy(&s), vec![start(2, &[2]), start(4, &[3])]);
    }

    #[test]
    fn unlimited_running_job_never_gives_nodes_back() {
        // Node 0-1 held forever, node 2 back at 200, node 3 free.
        let mut s = cluster(&[false, false, false, true]);
        s.running = vec![running(8, &[0, 1], None), running(9, &[2], Some(200))];
        // Head wants 2: shadow 200 (free node 3 + node 2), nothing extra.
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), None), limited(job(3, 0, 3, 1), Some(100))];
        assert_eq!(easy(&s), vec![start(3, &[3])]);
        // Head wants 3: it never gets them, so it blocks nothing.
        s.pending[0].nodes = 3;
        assert_eq!(reservation(&s, 1, &[], &Placement::anywhere(), 3), None);
        assert_eq!(easy(&s), vec![start(2, &[3])]);
    }

    #[test]
    fn jobs_started_this_pass_bring_shadow_time_forward() {
        let mut s = cluster(&[true, true, true]);
        s.pending = vec![
            limited(job(1, 0, 1, 2), Some(50)), // starts, back at 150
            job(2, 0, 2, 3),                    // head: shadow 150, no extra
            limited(job(3, 0, 3, 1), Some(51)), // ends at 151: refused
            limited(job(4, 0, 4, 1), Some(50)), // ends at 150: fine
        ];
        assert_eq!(easy(&s), vec![start(1, &[0, 1]), start(4, &[2])]);
    }

    #[test]
    fn nodes_back_at_the_shadow_time_itself_count_as_extra() {
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(8, &[0], Some(200)), running(9, &[1], Some(200))];
        s.pending = vec![job(1, 0, 1, 3), limited(job(2, 0, 2, 1), None)];
        assert_eq!(
            reservation(&s, 2, &[], &Placement::anywhere(), 3),
            Some(Reservation { shadow_time: 200, extra_nodes: 1 })
        );
        assert_eq!(easy(&s), vec![start(2, &[2])]);
    }

    #[test]
    fn inconsistent_running_jobs_do_not_panic() {
        // Node 0 is free though job 8 lists it (free wins); node 1 is held by 8
        // and 9, so back at 300; node 2 is busy with no job (drained); 7 does
        // not exist.
        let mut s = cluster(&[true, false, false]);
        s.running = vec![running(8, &[0, 1, 7, 1], Some(150)), running(9, &[1], Some(300))];
        s.pending = vec![job(1, 0, 1, 2), limited(job(2, 0, 2, 1), Some(200))];
        assert_eq!(
            reservation(&s, 1, &[], &Placement::anywhere(), 2),
            Some(Reservation { shadow_time: 300, extra_nodes: 0 })
        );
        assert_eq!(easy(&s), vec![start(2, &[0])]);
    }

    #[test]
    fn skips_jobs_larger_than_the_cluster_and_sizes_zero_as_one() {
        let mut s = cluster(&[true, false]);
        s.running = vec![running(9, &[1], Some(200))];
        s.pending = vec![job(1, 0, 1, 3), job(2, 0, 2, 0)];
        assert_eq!(easy(&s), vec![start(2, &[0])]);
        assert_eq!(easy(&Snapshot::default()), vec![]);
    }
}
