//! One scheduling pass, whole, as sched/malleable runs it in slurmctld and
//! the simulator runs it on its machine: the jobs that asked answered first,
//! the strategy's pass on the cluster they leave, preemption for the jobs it
//! left waiting, the decisions that break the model's rules taken out, and
//! why the others wait. Each caller keeps only how it reads the cluster and
//! how it carries the outcome out.

use std::borrow::Cow;
use std::collections::HashSet;

use malleable_model::{rejections, Decision, JobId, Rejection, Snapshot};

use crate::blocks::preemption;
use crate::{Measure, Note, Strategy, Waiting};

/// What a pass is asked to do.
pub struct PassInput<'a> {
    pub snapshot: &'a Snapshot,
    /// The running jobs whose applications asked whether to reconfigure,
    /// answered in this order.
    pub asking: &'a [JobId],
    /// The strategy's own pass too (slurmctld's scheduler, the simulator),
    /// or the answers only (beside another scheduler: select/natural).
    pub scheduling: Option<StrategyPass>,
    /// Waiting jobs the strategy may plan for but that are not started this
    /// pass (slurmctld's batch jobs younger than BatchStartDelay): their
    /// nodes stay free, and their Reasons stay the caller's.
    pub held_back: &'a HashSet<JobId>,
}

/// How the strategy's own pass runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StrategyPass {
    /// A job that may preempt gets nodes from preemptable elastic jobs by
    /// shrinking them, when that is enough (ShrinkBeforePreempt=).
    pub shrink_before_preempt: bool,
    /// Why each job left waiting waits (for squeue; the simulator has none
    /// to show, and a long queue's reasons cost a walk of it).
    pub reasons: bool,
}

/// What a pass decided and has to say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassOutcome {
    /// The decisions to carry out, in order: the answers first.
    pub decisions: Vec<Decision>,
    /// Answers that were about another job than the one asking, or not a
    /// resize (an answer resizes only the job that asked: Iserte et al.
    /// 2025's model); each a strategy bug, not carried out.
    pub refused_answers: Vec<(JobId, Decision)>,
    /// Decisions that broke the model's rules (a strategy bug), not carried
    /// out; their indexes are into the decisions before they were taken out.
    pub rejected: Vec<Rejection>,
    /// Why the jobs left waiting wait (with [`StrategyPass::reasons`]).
    pub waits: Vec<Waiting>,
    /// Waiting jobs to start before any other: a shrink was made for them.
    pub start_first: Vec<JobId>,
    /// What the strategy said answering, and in its own pass.
    pub answer_notes: Vec<Note>,
    pub notes: Vec<Note>,
    /// The strategy's figures of this pass, answers' included.
    pub measures: Vec<(&'static str, Measure)>,
}

/// Run one pass of `strategy` as `input` says.
pub fn pass(strategy: &mut dyn Strategy, input: &PassInput<'_>) -> PassOutcome {
    let mut out = PassOutcome::default();
    // Each answer on the cluster as the ones before leave it, and the pass
    // on the cluster they all leave, so that it hands out no node an
    // answer took. Copied only once an answer changes it: a pass over ten
    // thousand nodes and a long queue copies nothing.
    let mut view = Cow::Borrowed(input.snapshot);
    let mut answers = Vec::new();
    for &job in input.asking {
        let report = strategy.reconfigure(&view, job);
        for d in report.decisions {
            match &d {
                Decision::Expand { job: j, add_nodes } if *j == job => {
                    for &i in add_nodes {
                        if let Some(n) = view.to_mut().nodes.get_mut(i) {
                            n.free = false;
                        }
                    }
                }
                Decision::Shrink { job: j, .. } if *j == job => {}
                _ => {
                    out.refused_answers.push((job, d));
                    continue;
                }
            }
            if let Some(r) = view.to_mut().running.iter_mut().find(|r| r.id == job) {
                r.adapting = true;
            }
            answers.push(d);
        }
        out.answer_notes.extend(report.notes);
        out.measures.extend(report.measures);
        out.start_first.extend(report.start_first);
    }
    let mut decided = answers;
    if let Some(scheduling) = input.scheduling {
        let answered = decided.len();
        let report = strategy.schedule(&view);
        decided.extend(report.decisions);
        out.notes.extend(report.notes);
        out.measures.extend(report.measures);
        out.start_first.extend(report.start_first);
        // As slurmctld's scheduler, it preempts for the jobs the strategy
        // left waiting, as stock Slurm's does (shrinking first, if so set).
        let more = preemption::preempt(&view, &decided[answered..], scheduling.shrink_before_preempt);
        decided.extend(more.decisions);
        out.notes.extend(more.notes);
    }
    // The model's rules, on the cluster as read: a decision that breaks
    // one is a strategy bug, said by the caller and not carried out.
    out.rejected = rejections(input.snapshot, &decided);
    let rejected: HashSet<usize> = out.rejected.iter().map(|r| r.index).collect();
    let held_back = |d: &Decision| d.starts_a_job() && input.held_back.contains(&d.job());
    out.decisions = decided
        .into_iter()
        .enumerate()
        .filter(|(i, d)| !rejected.contains(i) && !held_back(d))
        .map(|(_, d)| d)
        .collect();
    if input.scheduling.is_some_and(|s| s.reasons) {
        out.waits = strategy.waiting(&view, &out.decisions);
        out.waits.retain(|w| !input.held_back.contains(&w.job));
    }
    out
}

#[cfg(test)]
mod tests {
    use malleable_model::{MalleableSpec, Node, NodeConstraint, PendingJob, RunningJob};

    use super::*;
    use crate::{PassReport, StrategyChoice};

    /// 4 nodes: job 1 malleable [1, 3] on node 0 and asking; nodes 1-3
    /// free; job 2 (1 node) waits.
    fn cluster() -> Snapshot {
        let spec = MalleableSpec { min: 1, max: 3, constraint: NodeConstraint::None };
        Snapshot {
            now: 100,
            nodes: Node::numbered([false, true, true, true]),
            running: vec![RunningJob::new(1, [0]).end_limit(Some(1000)).malleable(spec)],
            pending: vec![PendingJob::new(2, 1).time_limit(Some(60))],
            power: None,
        }
    }

    /// As slurmctld's scheduler, job 1 asking.
    fn scheduler<'a>(s: &'a Snapshot, held_back: &'a HashSet<JobId>) -> PassInput<'a> {
        let scheduling = Some(StrategyPass { shrink_before_preempt: true, reasons: true });
        PassInput { snapshot: s, asking: &[JobId(1)], scheduling, held_back }
    }

    #[test]
    fn a_job_that_asks_is_answered_first_and_the_pass_keeps_off_what_it_got() {
        // NATURAL's answer: job 2 needs nothing from job 1 (a node is
        // idle), so job 1 grows to 3 onto nodes 1-2, and the pass starts
        // job 2 on node 3, the one left.
        let mut natural = StrategyChoice::named("natural").unwrap().build();
        let (s, none) = (cluster(), HashSet::new());
        let out = pass(natural.as_mut(), &scheduler(&s, &none));
        assert_eq!(
            out.decisions,
            vec![
                Decision::Expand { job: JobId(1), add_nodes: vec![1, 2] },
                Decision::Start { job: JobId(2), nodes: vec![3], time_limit: None },
            ]
        );
        assert!(out.rejected.is_empty() && out.refused_answers.is_empty() && out.waits.is_empty());
        // Answers only: the waiting job is left to the other scheduler.
        let answers = PassInput { scheduling: None, ..scheduler(&s, &none) };
        assert_eq!(pass(natural.as_mut(), &answers).decisions, out.decisions[..1]);
        // A strategy that is not asked answers nothing: easy leaves the job.
        let mut easy = StrategyChoice::named("easy").unwrap().build();
        let out = pass(easy.as_mut(), &PassInput { scheduling: None, ..scheduler(&s, &none) });
        assert_eq!(out.decisions, vec![]);
    }

    #[test]
    fn a_job_held_back_is_planned_for_but_neither_started_nor_given_a_reason() {
        let mut natural = StrategyChoice::named("natural").unwrap().build();
        let (s, held) = (cluster(), HashSet::from([JobId(2)]));
        let out = pass(natural.as_mut(), &scheduler(&s, &held));
        assert_eq!(out.decisions, vec![Decision::Expand { job: JobId(1), add_nodes: vec![1, 2] }]);
        assert!(out.waits.is_empty(), "its Reason stays the caller's: {:?}", out.waits);
    }

    /// Answers whatever it is told to, asked or not.
    struct Answering(Vec<Decision>);

    impl Strategy for Answering {
        fn name(&self) -> &'static str {
            "answering"
        }
        fn schedule(&mut self, _: &Snapshot) -> PassReport {
            PassReport::default()
        }
        fn reconfigure(&mut self, _: &Snapshot, _: JobId) -> PassReport {
            self.0.clone().into()
        }
    }

    #[test]
    fn an_answer_resizes_only_the_job_that_asked_and_a_rule_broken_is_taken_out() {
        let grow_other = Decision::Expand { job: JobId(9), add_nodes: vec![1] };
        let start = Decision::Start { job: JobId(2), nodes: vec![1], time_limit: None };
        // Node 0 is job 1's own: growing onto it breaks the model's rules.
        let onto_own = Decision::Expand { job: JobId(1), add_nodes: vec![0] };
        let grow = Decision::Expand { job: JobId(1), add_nodes: vec![3] };
        let mut answering = Answering(vec![grow_other.clone(), start.clone(), onto_own.clone(), grow.clone()]);
        let (s, none) = (cluster(), HashSet::new());
        let out = pass(&mut answering, &scheduler(&s, &none));
        assert_eq!(out.refused_answers, vec![(JobId(1), grow_other), (JobId(1), start)]);
        assert_eq!(out.rejected.iter().map(|r| r.decision.clone()).collect::<Vec<_>>(), vec![onto_own]);
        assert_eq!(out.decisions, vec![grow]);
    }
}
