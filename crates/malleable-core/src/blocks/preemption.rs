//! Preemption, after any strategy's pass: a waiting job that slurmctld lets
//! preempt running jobs (`PendingJob::preempts`, from its PreemptType) and
//! that the pass left waiting for want of free nodes gets them as stock
//! Slurm's scheduler gets them, by preempting its victims in Slurm's order;
//! or, with ShrinkBeforePreempt, from elastic victims that shrink (never
//! below their minimum) by what it lacks, so that nothing they ran is lost.

use std::collections::{HashMap, HashSet};

use malleable_model::log_lines::LogLine;
use malleable_model::{Decision, JobId, NodeIndex, PendingJob, RunningJob, Snapshot};

use crate::strategy::{Note, PassReport};

/// What preempting adds to a pass that decided `decided` on `s`: shrinks
/// (with `shrink_first`) or preemptions, and a note for each shrink made
/// instead of a preemption.
pub fn preempt(s: &Snapshot, decided: &[Decision], shrink_first: bool) -> PassReport {
    let mut report = PassReport::default();
    if s.pending.iter().all(|p| p.preempts.is_empty()) {
        return report;
    }
    let mut claimed: HashSet<NodeIndex> = HashSet::new();
    let mut touched: HashSet<JobId> = HashSet::new();
    for d in decided {
        touched.insert(d.job());
        match d {
            Decision::Start { nodes, .. } | Decision::Share { nodes, .. } | Decision::Preempt { nodes, .. } => {
                claimed.extend(nodes)
            }
            Decision::Expand { add_nodes, .. } => claimed.extend(add_nodes),
            Decision::Place { layout, .. } => claimed.extend(layout.iter().map(|&(i, _)| i)),
            Decision::Shrink { .. } => {}
        }
        if let Decision::Share { mates, .. } = d {
            touched.extend(mates.iter().map(|m| m.job));
        }
        if let Decision::Preempt { victims, .. } = d {
            touched.extend(victims);
        }
    }
    let running: HashMap<JobId, &RunningJob> = s.running.iter().map(|r| (r.id, r)).collect();
    for p in s.queue_order() {
        if p.preempts.is_empty() || touched.contains(&p.id) {
            continue;
        }
        // A shrink made for it (or any resize of a job it may preempt) is
        // under way, or an elastic job it may preempt can be resized from
        // the next pass on: wait for it rather than preempt.
        if p.preempts.iter().any(|v| running.get(v).is_some_and(|r| r.adapting || (shrink_first && r.resize_held))) {
            continue;
        }
        let need = p.size();
        let free: Vec<NodeIndex> =
            (0..s.nodes.len()).filter(|&i| s.nodes[i].free && !claimed.contains(&i) && p.placement.allows(i)).collect();
        if free.len() >= need {
            // It could start without preempting: the strategy kept it
            // waiting for another reason (a reservation, power).
            continue;
        }
        let victims: Vec<&RunningJob> = p
            .preempts
            .iter()
            .filter(|v| !touched.contains(v))
            .filter_map(|v| running.get(v).copied())
            .filter(|r| r.sharing.alone())
            .collect();
        let lacking = need - free.len();
        if shrink_first {
            if let Some(shrinks) = shrinks_for(s, p, &victims, lacking) {
                for (r, remove) in shrinks {
                    let ran = (s.now - r.start).max(0);
                    let line = LogLine::ShrinkInsteadOfPreempt {
                        job: r.id,
                        nodes: remove.iter().map(|&i| s.nodes[i].name.to_string()).collect(),
                        preemptor: p.id,
                        node_s: ran * r.nodes.len() as i64,
                        ran_s: ran,
                        on_nodes: r.nodes.len(),
                    };
                    report.notes.push(Note::about(
                        p.id,
                        format!("shrinks {} instead of preempting it", r.id),
                        line.to_string(),
                    ));
                    touched.insert(r.id);
                    report.decisions.push(Decision::Shrink { job: r.id, remove_nodes: remove });
                }
                touched.insert(p.id);
                continue;
            }
        }
        if let Some((nodes, chosen)) = preemption_for(p, &free, &victims, &claimed, need) {
            claimed.extend(&nodes);
            touched.extend(&chosen);
            touched.insert(p.id);
            report.decisions.push(Decision::Preempt { job: p.id, nodes, victims: chosen });
        }
    }
    report
}

/// Shrinks of elastic `victims` (in Slurm's order, each down to what its
/// spec allows and never off its first node) that free at least `lacking`
/// nodes `p` may use; `None` when they cannot.
fn shrinks_for<'a>(
    s: &Snapshot,
    p: &PendingJob,
    victims: &[&'a RunningJob],
    lacking: usize,
) -> Option<Vec<(&'a RunningJob, Vec<NodeIndex>)>> {
    // A job it must be given that is not free: only preempting gets it.
    if p.placement.required.iter().any(|&i| !s.nodes.get(i).is_some_and(|n| n.free)) {
        return None;
    }
    let mut shrinks = Vec::new();
    let mut freed = 0;
    for r in victims {
        if freed >= lacking {
            break;
        }
        let Some(spec) = r.resizable() else { continue };
        // Its nodes the waiting job may use come off first, from the last.
        let (useful, other): (Vec<NodeIndex>, Vec<NodeIndex>) =
            r.nodes.iter().skip(1).rev().partition(|&&i| p.placement.allows(i));
        if useful.is_empty() {
            continue;
        }
        let current = r.nodes.len() as u32;
        let want = (lacking - freed).min(useful.len()) as u32;
        let Some(target) = spec.shrink_target(current, want).filter(|&t| t < current && spec.allows(t)) else {
            continue;
        };
        let remove: Vec<NodeIndex> = useful.iter().chain(&other).copied().take((current - target) as usize).collect();
        freed += remove.iter().filter(|&&i| p.placement.allows(i)).count();
        shrinks.push((*r, remove));
    }
    (freed >= lacking).then_some(shrinks)
}

/// The nodes `p` starts on by preempting and whom it preempts: its free
/// nodes, then those of `victims` in Slurm's order until it has `need`
/// (every node it requires among them); `None` when all of them are too few.
fn preemption_for(
    p: &PendingJob,
    free: &[NodeIndex],
    victims: &[&RunningJob],
    claimed: &HashSet<NodeIndex>,
    need: usize,
) -> Option<(Vec<NodeIndex>, Vec<JobId>)> {
    let mut open: Vec<NodeIndex> = free.to_vec();
    let mut chosen = Vec::new();
    let covers = |open: &[NodeIndex]| open.len() >= need && p.placement.required.iter().all(|r| open.contains(r));
    for r in victims {
        if covers(&open) {
            break;
        }
        let theirs: Vec<NodeIndex> =
            r.nodes.iter().copied().filter(|&i| p.placement.allows(i) && !claimed.contains(&i)).collect();
        if theirs.is_empty() {
            continue;
        }
        open.extend(theirs);
        chosen.push(r.id);
    }
    if chosen.is_empty() || !covers(&open) {
        return None;
    }
    // What it requires first, then free nodes, then the victims' in order.
    let mut nodes: Vec<NodeIndex> = p.placement.required.clone();
    nodes.extend(open.iter().copied().filter(|i| !p.placement.requires(*i)));
    nodes.truncate(need);
    // A victim none of whose nodes it got is not preempted.
    let used: HashSet<NodeIndex> = nodes.iter().copied().collect();
    let held_by =
        |v: &JobId| victims.iter().find(|r| r.id == *v).is_some_and(|r| r.nodes.iter().any(|i| used.contains(i)));
    chosen.retain(held_by);
    Some((nodes, chosen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_model::{validate, MalleableSpec, Node, NodeConstraint, Placement};

    fn spec(min: u32, max: u32) -> MalleableSpec {
        MalleableSpec { min, max, constraint: NodeConstraint::None }
    }

    /// 6 nodes: elastic 10 on 0-3 (1..4), rigid 11 on 4, node 5 free.
    fn cluster(waiting: PendingJob) -> Snapshot {
        Snapshot {
            now: 1000,
            nodes: Node::numbered([false, false, false, false, false, true]),
            running: vec![RunningJob::new(10, [0, 1, 2, 3]).start(400).malleable(spec(1, 4)), RunningJob::new(11, [4])],
            pending: vec![waiting],
            power: None,
        }
    }

    fn shrink(job: u32, nodes: &[usize]) -> Decision {
        Decision::Shrink { job: JobId(job), remove_nodes: nodes.to_vec() }
    }

    #[test]
    fn an_elastic_victim_shrinks_by_what_the_preemptor_lacks_instead_of_being_preempted() {
        let s = cluster(PendingJob::new(1, 3).preempting([10, 11]));
        let r = preempt(&s, &[], true);
        // Node 5 is free; two more come off job 10's last nodes.
        assert_eq!(r.decisions, vec![shrink(10, &[3, 2])]);
        assert!(validate(&s, &r.decisions).is_ok());
        assert_eq!(r.notes.len(), 1);
        let said = LogLine::ShrinkInsteadOfPreempt {
            job: JobId(10),
            nodes: vec!["n3".into(), "n2".into()],
            preemptor: JobId(1),
            node_s: 2400,
            ran_s: 600,
            on_nodes: 4,
        };
        assert_eq!(r.notes[0].text, said.to_string());
    }

    #[test]
    fn without_shrink_before_preempt_or_room_to_shrink_victims_are_preempted_in_slurms_order() {
        // Off: job 10 is preempted (it comes first), as stock does.
        let s = cluster(PendingJob::new(1, 3).preempting([10, 11]));
        let r = preempt(&s, &[], false);
        assert_eq!(
            r.decisions,
            vec![Decision::Preempt { job: JobId(1), nodes: vec![5, 0, 1], victims: vec![JobId(10)] }]
        );
        assert!(validate(&s, &r.decisions).is_ok());
        // On, but 10 may not go below 3 nodes: 6 nodes need 10 and 11 both.
        let mut s = cluster(PendingJob::new(1, 6).preempting([10, 11]));
        s.running[0].malleable = Some(spec(3, 4));
        let r = preempt(&s, &[], true);
        assert_eq!(
            r.decisions,
            vec![Decision::Preempt {
                job: JobId(1),
                nodes: vec![5, 0, 1, 2, 3, 4],
                victims: vec![JobId(10), JobId(11)]
            }]
        );
        assert!(r.notes.is_empty());
        assert!(validate(&s, &r.decisions).is_ok());
    }

    #[test]
    fn a_job_that_fits_is_left_to_the_strategy_and_one_that_cannot_preempt_waits() {
        // Fits on the free node: not this block's to start.
        assert!(preempt(&cluster(PendingJob::new(1, 1).preempting([10])), &[], true).decisions.is_empty());
        // Too few nodes even with its victims'.
        assert!(preempt(&cluster(PendingJob::new(1, 3).preempting([11])), &[], false).decisions.is_empty());
        // May preempt no one.
        assert!(preempt(&cluster(PendingJob::new(1, 3)), &[], true).decisions.is_empty());
        // A resize of its victim under way (a shrink made for it): it waits.
        let mut s = cluster(PendingJob::new(1, 3).preempting([10, 11]));
        s.running[0].adapting = true;
        assert!(preempt(&s, &[], true).decisions.is_empty());
        // Its elastic victim may be resized from the next pass on: it waits
        // for that, unless it would not shrink it anyway.
        let mut s = cluster(PendingJob::new(1, 3).preempting([10, 11]));
        s.running[0].malleable = None;
        s.running[0].resize_held = true;
        assert!(preempt(&s, &[], true).decisions.is_empty());
        assert_eq!(preempt(&s, &[], false).decisions.len(), 1);
    }

    #[test]
    fn what_the_pass_decided_is_neither_taken_nor_preempted() {
        let s = cluster(PendingJob::new(1, 3).preempting([10, 11]));
        // The pass gave the free node away and grew nothing: two shrinks' worth is not enough.
        let started = Decision::Start { job: JobId(2), nodes: vec![5], time_limit: None };
        let r = preempt(&s, std::slice::from_ref(&started), true);
        assert_eq!(r.decisions, vec![shrink(10, &[3, 2, 1])]);
        // Job 10 was resized by the pass: only 11 is left, too small.
        let r = preempt(&s, &[shrink(10, &[3])], true);
        assert!(r.decisions.is_empty());
    }

    #[test]
    fn only_nodes_it_may_use_count_and_a_later_preemptor_takes_what_is_left() {
        // Job 1 may use nodes 2-5 only; job 2 (lower priority) any.
        let one = PendingJob::new(1, 3).priority(9).preempting([10, 11]).placement(Placement::only(vec![2, 3, 4, 5]));
        let mut s = cluster(one);
        s.pending.push(PendingJob::new(2, 2).priority(1).preempting([10, 11]));
        let r = preempt(&s, &[], false);
        // Job 2 is left node 4 of job 11 only: too few.
        assert_eq!(
            r.decisions,
            vec![Decision::Preempt { job: JobId(1), nodes: vec![5, 2, 3], victims: vec![JobId(10)] }]
        );
        assert!(validate(&s, &r.decisions).is_ok());
    }
}
