//! Conservative backfill's pass (Mu'alem & Feitelson 2001, Slurm's
//! sched/backfill): every waiting job in queue order books its earliest
//! start on the node plan, and those booked for now start. Conservative
//! runs it as it is; NATURAL runs it for its starts and keeps its expands
//! off the bookings.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use malleable_model::{Decision, JobId, Snapshot, Time};

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

/// One pass: each of the first `max_job_test` runnable jobs in queue order
/// starts now if the plan has room for it, on nodes it may use, from now to
/// its time limit, and otherwise books its earliest such start, on the
/// nodes the plan names. A job that can never get its nodes (held by
/// unlimited jobs, or down) books nothing. With `wide`, a malleable job
/// that starts now also takes the nodes no job ahead has booked before its
/// limit, up to its maximum, as Slurm starts a `--nodes=min-max` job.
pub fn book_queue(s: &Snapshot, max_job_test: usize, wide: bool) -> Booking {
    let mut plan = NodePlan::new(s, s.free_nodes());
    let mut decisions = Vec::new();
    let mut booked = Vec::new();
    for (job, size) in runnable_queue(s).into_iter().take(max_job_test) {
        // At least a second: a booking of no length would hold nothing.
        let length = end_if_started(s.now, job).map(|end| (end - s.now).max(1));
        let Some((start, mut nodes)) = plan.earliest(s.now, size, length, &job.placement) else {
            continue;
        };
        plan.book(start, length, &nodes);
        if let (true, true, Some(spec)) = (wide, start == s.now, job.malleable) {
            let spare = plan.free_throughout(s.now, length, &job.placement);
            let cur = nodes.len() as u32;
            if let Some(target) = spec.expand_target(cur, u32::try_from(spare.len()).unwrap_or(u32::MAX)) {
                let more = &spare[..(target - cur) as usize];
                plan.book(s.now, length, more);
                nodes.extend_from_slice(more);
            }
        }
        booked.push((job.id, start));
        // The plan's nodes, not the lowest free: those may be booked for a
        // job ahead before this one would end.
        if start == s.now {
            decisions.push(Decision::Start { job: job.id, nodes, time_limit: None });
        }
    }
    Booking { decisions, booked, plan }
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
