//! Conservative backfill's pass (Mu'alem & Feitelson 2001, Slurm's
//! sched/backfill): every waiting job in queue order books its earliest
//! start on the node plan, and those booked for now start. Conservative
//! runs it as it is; NATURAL runs it for its starts and keeps its expands
//! off the bookings.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use malleable_model::{Decision, JobId, NodeIndex, PendingJob, Snapshot, Time};

use crate::blocks::node_plan::NodePlan;
use crate::blocks::queue::{end_if_started, runnable_queue};
use crate::blocks::waiting::{WaitReason, Waiting};

/// What one pass booked.
pub struct Booking {
    /// A `Start` for each job booked for now.
    pub decisions: Vec<Decision>,
    /// Each booked job's start.
    pub booked: Vec<(JobId, Time)>,
    /// The plan with every booking in it (the jobs started now included):
    /// what is left free, by node and over time.
    pub plan: NodePlan,
}

/// Whether a malleable job that starts now takes more nodes than it asks for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wide {
    /// It starts on the count it asks for.
    No,
    /// It also takes the nodes no job ahead of it has booked before its
    /// limit, up to its maximum, as Slurm starts a `--nodes=min-max` job
    /// (the jobs behind it are booked after it, on what it left).
    PastJobsAhead,
    /// It also takes, up to its maximum, the nodes no waiting job is booked
    /// on before its limit, once the whole queue is booked: a start never
    /// widens onto nodes a job behind it would have started on sooner.
    Unbooked,
}

/// One pass: each of the first `max_job_test` runnable jobs in queue order
/// starts now if the plan has room for it, on nodes it may use, from now to
/// its time limit, and otherwise books its earliest such start, on the
/// nodes the plan names. A job that can never get its nodes (held by
/// unlimited jobs, or down) books nothing. A malleable job that starts now
/// takes more nodes as `wide` says.
pub fn book_queue(s: &Snapshot, max_job_test: usize, wide: Wide) -> Booking {
    let mut plan = NodePlan::new(s, s.free_nodes());
    let mut decisions = Vec::new();
    let mut booked = Vec::new();
    // Starts widened once every job is booked: the decision's index, the
    // job and the length it is booked for.
    let mut widen_last = Vec::new();
    for (job, size) in runnable_queue(s).into_iter().take(max_job_test) {
        // At least a second: a booking of no length would hold nothing.
        let length = end_if_started(s.now, job).map(|end| (end - s.now).max(1));
        let Some((start, mut nodes)) = plan.earliest(s.now, size, length, &job.placement) else {
            continue;
        };
        plan.book(start, length, &nodes);
        booked.push((job.id, start));
        if start != s.now {
            continue;
        }
        match wide {
            Wide::No => {}
            Wide::PastJobsAhead => widen(&mut plan, s.now, length, job, &mut nodes),
            Wide::Unbooked => widen_last.push((decisions.len(), job, length)),
        }
        // The plan's nodes, not the lowest free: those may be booked for a
        // job ahead before this one would end.
        decisions.push(Decision::Start { job: job.id, nodes, time_limit: None });
    }
    for (k, job, length) in widen_last {
        if let Decision::Start { nodes, .. } = &mut decisions[k] {
            widen(&mut plan, s.now, length, job, nodes);
        }
    }
    Booking { decisions, booked, plan }
}

/// Add to `nodes`, where malleable `job` starts now, the nodes the plan has
/// free from now for `length` seconds, up to its maximum, and book them.
fn widen(plan: &mut NodePlan, now: Time, length: Option<Time>, job: &PendingJob, nodes: &mut Vec<NodeIndex>) {
    let Some(spec) = job.malleable else {
        return;
    };
    let spare = plan.free_throughout(now, length, &job.placement);
    let cur = nodes.len() as u32;
    if let Some(target) = spec.expand_target(cur, u32::try_from(spare.len()).unwrap_or(u32::MAX)) {
        let more = &spare[..(target - cur) as usize];
        plan.book(now, length, more);
        nodes.extend_from_slice(more);
    }
}

/// Why the jobs a booking pass did not start wait: the first for resources,
/// the others for priority (a job ahead holds a booking), each expected at
/// its booking (`squeue --start` for every booked job, as under sched/backfill).
pub fn booked_waiting(s: &Snapshot, decisions: &[Decision], booked: &[(JobId, Time)]) -> Vec<Waiting> {
    let booked: HashMap<JobId, Time> = booked.iter().copied().collect();
    let started: HashSet<JobId> = decisions.iter().map(Decision::job).collect();
    let mut out: Vec<Waiting> = Vec::new();
    for (job, _) in runnable_queue(s).into_iter().filter(|(j, _)| !started.contains(&j.id)) {
        let reason = if out.is_empty() { WaitReason::Resources } else { WaitReason::Priority };
        let start = booked.get(&job.id).map(|&t| t.max(s.now));
        out.push(Waiting { job: job.id, reason, start });
    }
    out
}

/// What tells one pass's snapshot from another's, cheaply: its time and
/// its jobs.
pub fn fingerprint(s: &Snapshot) -> u64 {
    let mut h = DefaultHasher::new();
    s.now.hash(&mut h);
    for p in &s.pending {
        p.id.0.hash(&mut h);
    }
    for r in &s.running {
        (r.id.0, r.nodes.len()).hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, job, start};
    use malleable_model::{MalleableSpec, NodeConstraint};

    /// 6 free nodes; job 1 (malleable [2, 6], asking 2) first in the queue,
    /// then rigid job 2 asking `second`; both 60 s.
    fn two_jobs(second: u32) -> Snapshot {
        let mut s = cluster(&[true; 6]);
        let spec = MalleableSpec { min: 2, max: 6, constraint: NodeConstraint::None };
        s.pending = vec![job(1, 9, 0, 2).malleable(spec), job(2, 0, 0, second)];
        s
    }

    #[test]
    fn a_wide_start_takes_what_jobs_ahead_left_or_only_what_no_job_is_booked_on() {
        // Job 2 asks 4: 2 + 4 fill the 6 nodes. Past the jobs ahead (none),
        // job 1 takes all 6 and job 2 is booked at 160, when job 1 ends;
        // onto unbooked nodes only, both start now, as without widening.
        let s = two_jobs(4);
        let past_ahead = book_queue(&s, 10, Wide::PastJobsAhead);
        assert_eq!(past_ahead.decisions, vec![start(1, &[0, 1, 2, 3, 4, 5])]);
        assert_eq!(past_ahead.booked, vec![(JobId(1), 100), (JobId(2), 160)]);
        let both = vec![start(1, &[0, 1]), start(2, &[2, 3, 4, 5])];
        assert_eq!(book_queue(&s, 10, Wide::Unbooked).decisions, both);
        assert_eq!(book_queue(&s, 10, Wide::No).decisions, both);
        // Job 2 asks 3: the node left after both are booked goes to job 1.
        let s = two_jobs(3);
        assert_eq!(book_queue(&s, 10, Wide::Unbooked).decisions, vec![start(1, &[0, 1, 5]), start(2, &[2, 3, 4])]);
    }
}
