//! Why each waiting job did not start in a pass, and when the plan expects
//! it to: what the plugin shows as the job's Reason and in `squeue --start`,
//! as Slurm's own schedulers do. The head job (the first in queue order that
//! did not start) waits for resources, expected at EASY's shadow time with
//! the jobs started in this pass counted; while running malleable jobs
//! shrink (decided now or under way), it waits for them. Every job behind it
//! waits for priority.

use std::collections::HashSet;

use malleable_model::{Decision, JobId, NodeIndex, Snapshot, Time};

use crate::blocks::pool::FreePool;
use crate::blocks::queue::{decided_end, runnable_queue};
use crate::blocks::reservation::reservation;

/// Why a job waits, in Slurm's words where it has them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// A job ahead of it in the queue waits (Slurm's `Priority`).
    Priority,
    /// It is first, and too few of the nodes it may use are free (`Resources`).
    Resources,
    /// It is first, and running malleable jobs are shrinking to make room.
    Shrinking,
    /// It would start now but for the power budget (Slurm's `PowerNotAvail`).
    Power,
}

/// One waiting job: why, and when it is expected to start (`None`: no
/// estimate, as Slurm's `N/A`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub job: JobId,
    pub reason: WaitReason,
    pub start: Option<Time>,
}

/// The waiting jobs of `s` after `decisions`, in queue order. Jobs that can
/// never run (more nodes than they may use) are left out, as the queue
/// leaves them out.
pub fn waiting(s: &Snapshot, decisions: &[Decision]) -> Vec<Waiting> {
    let mut pool = FreePool::new(s);
    let mut started: Vec<(Option<Time>, Vec<NodeIndex>)> = Vec::new();
    let mut decided = HashSet::new();
    let mut shrinking = s.running.iter().any(|j| j.adapting);
    for d in decisions {
        decided.insert(d.job());
        match d {
            Decision::Start { job, nodes, time_limit } => {
                pool.commit(nodes);
                started.push((decided_end(s, *job, nodes.len(), *time_limit), nodes.clone()));
            }
            Decision::Expand { add_nodes, .. } => pool.commit(add_nodes),
            Decision::Shrink { .. } => shrinking = true,
            // On busy nodes only: nothing free is taken. (The mates' longer
            // limits may put the head's start later; the next pass sees them.)
            Decision::Share { .. } => {}
            // Part of nodes: a free node it takes part of is free no more.
            Decision::Place { job, layout } => {
                let nodes: Vec<NodeIndex> = layout.iter().map(|&(i, _)| i).collect();
                let was_free: Vec<NodeIndex> =
                    nodes.iter().copied().filter(|&i| s.nodes.get(i).is_some_and(|n| n.free)).collect();
                pool.commit(&was_free);
                started.push((decided_end(s, *job, nodes.len(), None), nodes));
            }
            // Its free nodes are taken; the rest come back when its victims leave.
            Decision::Preempt { nodes, .. } => {
                let was_free: Vec<NodeIndex> =
                    nodes.iter().copied().filter(|&i| s.nodes.get(i).is_some_and(|n| n.free)).collect();
                pool.commit(&was_free);
            }
        }
    }
    let mut out = Vec::new();
    for (job, size) in runnable_queue(s).into_iter().filter(|(j, _)| !decided.contains(&j.id)) {
        let w = if !out.is_empty() {
            Waiting { job: job.id, reason: WaitReason::Priority, start: None }
        } else if shrinking {
            Waiting { job: job.id, reason: WaitReason::Shrinking, start: None }
        } else {
            let r = reservation(s, pool.allowed_free(&job.placement), &started, &job.placement, size);
            Waiting { job: job.id, reason: WaitReason::Resources, start: r.map(|r| r.shadow_time.max(s.now)) }
        };
        out.push(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, job, running, start};
    use malleable_model::Placement;

    #[test]
    fn the_head_waits_for_resources_until_its_shadow_time_and_the_rest_for_priority() {
        // Nodes 0-1 busy until 200; 2-3 free. Job 1 starts on 2 and 3 (it
        // ends at 160); job 2 wants 3 nodes: back at 200; job 3 behind it.
        let mut s = cluster(&[false, false, true, true]);
        s.running = vec![running(9, &[0, 1], Some(200))];
        s.pending = vec![job(1, 0, 1, 2), job(2, 0, 2, 3), job(3, 0, 3, 1)];
        let w = waiting(&s, &[start(1, &[2, 3])]);
        assert_eq!(
            w,
            vec![
                Waiting { job: JobId(2), reason: WaitReason::Resources, start: Some(200) },
                Waiting { job: JobId(3), reason: WaitReason::Priority, start: None },
            ]
        );
        // One of the nodes it may use never comes back (an unlimited job
        // holds it too): no estimate.
        s.running.push(running(8, &[0], None));
        s.pending[1].placement = Placement::only([0, 1, 2]);
        let w = waiting(&s, &[start(1, &[2, 3])]);
        assert_eq!((w[0].job, w[0].start), (JobId(2), None));
        // A shrink decided in the pass: it waits for that.
        let shrink = Decision::Shrink { job: JobId(9), remove_nodes: vec![1] };
        assert_eq!(waiting(&s, &[shrink])[0].reason, WaitReason::Shrinking);
    }
}
