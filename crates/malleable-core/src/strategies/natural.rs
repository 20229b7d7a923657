//! NATURAL (Iserte et al. 2025, section 4.1): select/natural's answer to a
//! running malleable job that asks, at its own synchronisation point,
//! whether to reconfigure. With nothing waiting it grows as far as the idle
//! nodes and its maximum allow; otherwise it shrinks by exactly what the
//! first waiting job (by priority) lacks, never below its minimum, and that
//! job gets the highest priority so that it starts on the nodes released;
//! when no waiting job can be helped so, it grows into what is idle. Any
//! count in [min, max] is allowed ("natural"; its predecessor power2 allowed
//! powers of two), and the job's node constraint when it gives one. Jobs
//! start by conservative backfill, Slurm's sched/backfill (the paper's
//! set-up), with the beneficiaries first.
//!
//! `natural-plan` is this project's variant, for the paper's own complaints
//! (section 6: small and medium jobs wait longer, since large ones start
//! small and fill the holes; select/natural ignores the backfill plan): a
//! job grows only onto nodes no waiting job is booked on before its time
//! limit, shrinks for the waiting job whose start gains most per node it
//! takes rather than for the first one, and no further than the count it
//! was submitted with rather than its minimum. Where the paper gives idle
//! nodes to whichever job asks first, the variant keeps them for the
//! running jobs that should grow first, by their time limits: while jobs
//! wait, the one that ends soonest (its nodes pass to the queue soonest);
//! when none waits, the one that ends last, so that the last jobs finish
//! together instead of one running alone at its maximum while the machine
//! empties (MPDATA's large jobs stop at 11 of 31 nodes). A malleable job
//! starting now also takes idle nodes up to its maximum: by default those no
//! job ahead of it is booked on, as Slurm starts `--nodes=min-max`; with
//! `WideUnbooked=1` only those no waiting job is booked on, so that it never
//! widens onto nodes a job behind it would have started on.
//!
//! Which nodes a shrink releases the paper does not say: here the most
//! recently added first, those the beneficiary may use first, never the
//! job's first node (its batch host, where its launcher runs).

use std::borrow::Cow;
use std::collections::HashSet;

use malleable_model::log_lines::LogLine;
use malleable_model::{Decision, JobId, MalleableSpec, NodeIndex, PendingJob, RunningJob, Snapshot, Time};

use crate::blocks::booking::{book_queue, booked_waiting, fingerprint, Wide};
use crate::blocks::queue::runnable_queue;
use crate::blocks::waiting::Waiting;
use crate::params::{AnyParam, Flag, Param, Whole};
use crate::strategy::{MeasureKind, MeasureSpec, Note, PassReport, Strategy, StrategyInfo};

/// Waiting jobs booked per pass by default, as slurmctld's `bf_max_job_test` (22.05).
const MAX_JOB_TEST: usize = 500;

pub const MAX_JOB_TEST_PARAM: Param<usize> = Param {
    key: "MaxJobTest",
    default: MAX_JOB_TEST,
    allowed: Whole::new(1, 1_000_000),
    help: "waiting jobs tested and booked per pass, as sched/backfill's bf_max_job_test",
};

pub const SHORTEST_FIRST: Param<bool> = Param {
    key: "ShortestFirst",
    default: false,
    allowed: Flag::ONE_ZERO,
    help: "1: waiting jobs start in the order of the node-seconds they ask for (time limit x nodes), \
           shortest first, within a tier (priority breaks ties); small jobs wait less, the makespan grows",
};

pub const WIDE_UNBOOKED: Param<bool> = Param {
    key: "WideUnbooked",
    default: false,
    allowed: Flag::ONE_ZERO,
    help: "1: a malleable job starting now takes, beyond what it asks, only nodes no waiting job is booked on \
           before its limit; 0: nodes no job ahead of it is booked on, as Slurm starts --nodes=min-max",
};

const PARAMS: &[&dyn AnyParam] = &[&MAX_JOB_TEST_PARAM];

const PLAN_PARAMS: &[&dyn AnyParam] = &[&MAX_JOB_TEST_PARAM, &SHORTEST_FIRST, &WIDE_UNBOOKED];

const MEASURES: &[MeasureSpec] = &[
    MeasureSpec {
        name: "natural_asked",
        kind: MeasureKind::Count,
        help: "times a running job asked whether to reconfigure",
    },
    MeasureSpec { name: "natural_expands", kind: MeasureKind::Count, help: "answers that grew the job asking" },
    MeasureSpec {
        name: "natural_shrinks",
        kind: MeasureKind::Count,
        help: "answers that shrank the job asking for a waiting job",
    },
];

pub const NATURAL: StrategyInfo = StrategyInfo {
    name: "natural",
    about: "select/natural (Iserte et al. 2025): a job asking at its sync point shrinks for the first waiting job or grows into idle nodes",
    params: PARAMS,
    measures: MEASURES,
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: false,
    build: |p| Box::new(Natural::new("natural", Rules::PAPER, p.get(&MAX_JOB_TEST_PARAM))),
};

pub const NATURAL_PLAN: StrategyInfo = StrategyInfo {
    name: "natural-plan",
    about: "natural that grows only onto nodes no waiting job is booked on, and shrinks for the job that gains most, no further than the size it was submitted with",
    params: PLAN_PARAMS,
    measures: MEASURES,
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: false,
    build: |p| {
        let mut rules = Rules::PLANNED;
        if p.get(&WIDE_UNBOOKED) {
            rules.start_wide = Wide::Unbooked;
        }
        let mut n = Natural::new("natural-plan", rules, p.get(&MAX_JOB_TEST_PARAM));
        n.shortest_first = p.get(&SHORTEST_FIRST);
        Box::new(n)
    },
};

/// Which of NATURAL's rules apply.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Grow only onto nodes no waiting job is booked on before the job's
    /// time limit (the paper grows onto any idle node).
    pub keep_off_bookings: bool,
    /// Shrink for the waiting job whose start gains most per node taken
    /// (the paper: the first, by priority).
    pub pick_by_gain: bool,
    /// Start a malleable job on more nodes than it asks, up to its maximum,
    /// onto idle nodes as [`Wide`] says (the paper: on what it asks).
    pub start_wide: Wide,
    /// Shrink a job for a waiting one no further than the count it was
    /// submitted with (the paper: down to its minimum). Its owner planned
    /// it at that size; below it an application may run far less
    /// efficiently (MPDATA's large jobs take twice the node-seconds on 4
    /// nodes as on 5, Table 2), and giving a job its own asked size is what
    /// the waiting job is started with too.
    pub keep_asked: bool,
    /// Idle nodes go first to the running jobs that should grow first
    /// ([`grows_before`]): while jobs wait, those that end sooner (their
    /// nodes pass to the queue sooner); when none waits, those that end
    /// later (the last jobs finish together). The paper: to whichever job
    /// asks first.
    pub grow_by_end: bool,
}

impl Rules {
    /// As the paper describes it.
    pub const PAPER: Rules = Rules {
        keep_off_bookings: false,
        pick_by_gain: false,
        start_wide: Wide::No,
        keep_asked: false,
        grow_by_end: false,
    };
    /// This project's variant.
    pub const PLANNED: Rules = Rules {
        keep_off_bookings: true,
        pick_by_gain: true,
        start_wide: Wide::PastJobsAhead,
        keep_asked: true,
        grow_by_end: true,
    };
}

/// NATURAL's answer to a job that asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Go on as it is.
    Stay,
    Expand {
        add_nodes: Vec<NodeIndex>,
    },
    /// Release these nodes so that `beneficiary` can start.
    Shrink {
        remove_nodes: Vec<NodeIndex>,
        beneficiary: JobId,
    },
}

/// NATURAL's answer to running job `job` asking on snapshot `s`. Waiting
/// jobs in `promised` were already helped by an earlier shrink and are not
/// helped twice; `max_job_test` bounds the booking pass the variant's rules
/// look at.
pub fn natural(s: &Snapshot, job: JobId, rules: Rules, max_job_test: usize, promised: &HashSet<JobId>) -> Answer {
    let Some(j) = s.running.iter().find(|r| r.id == job) else {
        return Answer::Stay;
    };
    let Some(spec) = j.resizable() else {
        return Answer::Stay;
    };
    let free = s.free_nodes();
    let mut waiting: Vec<(&PendingJob, usize)> =
        runnable_queue(s).into_iter().filter(|(p, _)| !promised.contains(&p.id)).collect();
    let mut booking = (rules.keep_off_bookings || rules.pick_by_gain).then(|| book_queue(s, max_job_test, Wide::No));
    if let (true, Some(b)) = (rules.pick_by_gain, &booking) {
        // Seconds of waiting saved per node taken from the job: a job that
        // would wait long for few nodes first; one never booked gains most.
        // The sort is stable, so equal gains keep the queue's order.
        let gain = |p: &PendingJob, size: usize| {
            let need = size.saturating_sub(idle_for(p, &free)).max(1) as f64;
            let start = b.booked.iter().find(|(id, _)| *id == p.id).map_or(f64::INFINITY, |&(_, t)| t as f64);
            (start - s.now as f64) / need
        };
        waiting.sort_by(|a, b| gain(b.0, b.1).total_cmp(&gain(a.0, a.1)));
    }
    let floor = match (rules.keep_asked, j.asked) {
        (true, Some(asked)) => spec.min.max(asked),
        _ => spec.min,
    };
    for &(p, size) in &waiting {
        if let Some(remove_nodes) = release_for(j, spec, floor, p, size, &free) {
            return Answer::Shrink { remove_nodes, beneficiary: p.id };
        }
    }
    let mut idle: Vec<NodeIndex> = match &mut booking {
        Some(b) if rules.keep_off_bookings => {
            let length = j.end_limit.map(|end| (end - s.now).max(1));
            b.plan.free_throughout(s.now, length, &j.placement)
        }
        _ => free.iter().copied().filter(|&i| j.placement.allows(i)).collect(),
    };
    if rules.grow_by_end {
        // Left idle for the jobs that grow first, until they ask.
        let claimed = claimed_before(s, j, !waiting.is_empty());
        idle.truncate(idle.len().saturating_sub(claimed));
    }
    // Idle nodes a shrink was made for are the promised jobs' until they
    // start (beside another scheduler that can take a moment).
    let promised_need: usize = s.pending.iter().filter(|p| promised.contains(&p.id)).map(PendingJob::size).sum();
    let room = idle.len().saturating_sub(promised_need);
    let cur = j.nodes.len() as u32;
    match spec.expand_target(cur, u32::try_from(room).unwrap_or(u32::MAX)) {
        Some(target) => Answer::Expand { add_nodes: idle[..(target - cur) as usize].to_vec() },
        None => Answer::Stay,
    }
}

/// Whether running job `r` grows before job `j` under the variant's order:
/// while jobs wait (`queue_waits`), the one that ends sooner grows first, so
/// that its nodes pass sooner to the job waiting for them; when none waits,
/// the one that ends later, so that it and the others finish together
/// rather than the last one running alone at its maximum while the machine
/// empties. Ends go by time limits; an unlimited job ends last.
fn grows_before(r: &RunningJob, j: &RunningJob, queue_waits: bool) -> bool {
    let end = |x: &RunningJob| x.end_limit.unwrap_or(Time::MAX);
    if queue_waits {
        end(r) < end(j)
    } else {
        end(r) > end(j)
    }
}

/// Idle nodes the running jobs that grow before `j` ([`grows_before`])
/// could still take: each its way up to its maximum.
fn claimed_before(s: &Snapshot, j: &RunningJob, queue_waits: bool) -> usize {
    s.running
        .iter()
        .filter(|r| r.id != j.id && grows_before(r, j, queue_waits))
        .filter_map(|r| r.resizable().map(|spec| (spec.max as usize).saturating_sub(r.nodes.len())))
        .sum()
}

/// Waiting jobs' priorities replaced by the order of the node-seconds they
/// ask for (time limit x nodes; unlimited last), shortest first, the old
/// priority breaking ties; tiers stay above it.
fn shortest_first(pending: &mut [PendingJob]) {
    let area = |p: &PendingJob| p.time_limit.map_or(u128::MAX, |t| t.max(0) as u128 * u128::from(p.nodes.max(1)));
    let mut order: Vec<usize> = (0..pending.len()).collect();
    order.sort_by_key(|&i| (area(&pending[i]), std::cmp::Reverse(pending[i].priority)));
    let n = pending.len() as u32;
    for (rank, i) in order.into_iter().enumerate() {
        pending[i].priority = n - rank as u32;
    }
}

/// Free nodes waiting job `p` may use.
fn idle_for(p: &PendingJob, free: &[NodeIndex]) -> usize {
    free.iter().filter(|&&i| p.placement.allows(i)).count()
}

/// The nodes running job `j` releases so that waiting job `p` (asking
/// `size`) can start: exactly what it lacks beyond the idle nodes, if `j`
/// stays at a count its spec allows and no lower than `floor`; `None` when
/// `p` needs nothing from it or `j` cannot give it.
fn release_for(
    j: &RunningJob,
    spec: &MalleableSpec,
    floor: u32,
    p: &PendingJob,
    size: usize,
    free: &[NodeIndex],
) -> Option<Vec<NodeIndex>> {
    // Nodes in a row cannot be promised by counting what is released.
    if p.placement.contiguous {
        return None;
    }
    let need = size.checked_sub(idle_for(p, free)).filter(|&n| n > 0)?;
    let cur = j.nodes.len();
    let lowest = floor.max(1) as usize;
    let target = (lowest..=cur.checked_sub(need)?).rev().find(|&n| spec.allows(n as u32))?;
    // The most recently added first (the job's list grows at its end),
    // those `p` requires and may use before the others, never the first.
    let mut order: Vec<NodeIndex> = j.nodes[1..].iter().rev().copied().collect();
    order.sort_by_key(|&i| (!p.placement.required.contains(&i), !p.placement.allows(i)));
    let remove = order[..cur - target].to_vec();
    let usable = remove.iter().filter(|&&i| p.placement.allows(i)).count();
    let required_met = p.placement.required.iter().all(|r| free.contains(r) || remove.contains(r));
    (usable >= need && required_met).then_some(remove)
}

/// The strategy: conservative backfill's starts with the beneficiaries of
/// shrinks first, and NATURAL's answers.
struct Natural {
    name: &'static str,
    rules: Rules,
    max_job_test: usize,
    /// Waiting jobs a shrink was made for: the highest priority until they start.
    promised: HashSet<JobId>,
    /// The last pass's bookings and the snapshot they were made on (its
    /// [`fingerprint`]), for `waiting`, as conservative keeps them.
    booked: (u64, Vec<(JobId, Time)>),
    /// Serve the queue shortest first (`ShortestFirst=1`).
    shortest_first: bool,
}

impl Natural {
    fn new(name: &'static str, rules: Rules, max_job_test: usize) -> Natural {
        Natural { name, rules, max_job_test, promised: HashSet::new(), booked: (0, Vec::new()), shortest_first: false }
    }

    /// `s` with the promised jobs first in the queue ("given the highest
    /// priority to be initiated"), above every tier; `s` itself when no job
    /// is promised and the queue keeps its order (a copy of 100,000
    /// waiting jobs is most of a pass otherwise).
    fn boosted<'s>(&self, s: &'s Snapshot) -> Cow<'s, Snapshot> {
        let promised = !self.promised.is_empty() && s.pending.iter().any(|p| self.promised.contains(&p.id));
        if !self.shortest_first && !promised {
            return Cow::Borrowed(s);
        }
        let mut view = s.clone();
        if self.shortest_first {
            shortest_first(&mut view.pending);
        }
        for p in view.pending.iter_mut().filter(|p| self.promised.contains(&p.id)) {
            p.tier = u32::MAX;
        }
        Cow::Owned(view)
    }
}

impl Strategy for Natural {
    fn name(&self) -> &'static str {
        self.name
    }

    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        self.promised.retain(|id| s.pending.iter().any(|p| p.id == *id));
        let b = book_queue(&self.boosted(s), self.max_job_test, self.rules.start_wide);
        self.booked = (fingerprint(s), b.booked);
        b.decisions.into()
    }

    fn reconfigure(&mut self, s: &Snapshot, job: JobId) -> PassReport {
        let mut report = PassReport::default();
        report.count("natural_asked", 1);
        match natural(&self.boosted(s), job, self.rules, self.max_job_test, &self.promised) {
            Answer::Stay => {}
            Answer::Expand { add_nodes } => {
                report.count("natural_expands", 1);
                report.decisions.push(Decision::Expand { job, add_nodes });
            }
            Answer::Shrink { remove_nodes, beneficiary } => {
                report.count("natural_shrinks", 1);
                self.promised.insert(beneficiary);
                report.start_first.push(beneficiary);
                report.notes.push(Note::about(
                    beneficiary,
                    format!("shrink of job {job}"),
                    LogLine::ReleasedAtSyncPoint { job: beneficiary, releaser: job, nodes: remove_nodes.len() }
                        .to_string(),
                ));
                report.decisions.push(Decision::Shrink { job, remove_nodes });
            }
        }
        report
    }

    /// As conservative's: every booked job expected at its booking (the
    /// pass's own, when `waiting` follows `schedule` on the same snapshot).
    fn waiting(&self, s: &Snapshot, decisions: &[Decision]) -> Vec<Waiting> {
        let view = self.boosted(s);
        if self.booked.0 == fingerprint(s) {
            return booked_waiting(&view, decisions, &self.booked.1);
        }
        let b = book_queue(&view, self.max_job_test, self.rules.start_wide);
        booked_waiting(&view, decisions, &b.booked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, job, limited, running};
    use malleable_model::{NodeConstraint, Placement};

    fn spec(min: u32, max: u32) -> MalleableSpec {
        MalleableSpec { min, max, constraint: NodeConstraint::None }
    }

    /// 8 nodes at 100; job 1 malleable [2, 6] on nodes 0-3 until 1000.
    fn one_malleable(free: &[bool]) -> Snapshot {
        let mut s = cluster(free);
        s.running = vec![running(1, &[0, 1, 2, 3], Some(1000)).malleable(spec(2, 6))];
        s
    }

    fn ask(s: &Snapshot, rules: Rules) -> Answer {
        natural(s, JobId(1), rules, MAX_JOB_TEST, &HashSet::new())
    }

    #[test]
    fn with_nothing_waiting_a_job_grows_to_its_maximum() {
        let s = one_malleable(&[false, false, false, false, true, true, true, true]);
        assert_eq!(ask(&s, Rules::PAPER), Answer::Expand { add_nodes: vec![4, 5] });
        // Only one idle node: any count, here 5 (power2 would say 4: stay).
        let mut s = s;
        for i in 5..8 {
            s.nodes[i].free = false;
        }
        assert_eq!(ask(&s, Rules::PAPER), Answer::Expand { add_nodes: vec![4] });
        // At its maximum: stay.
        s.running[0].nodes = (0..6).collect();
        assert_eq!(ask(&s, Rules::PAPER), Answer::Stay);
    }

    #[test]
    fn it_shrinks_by_exactly_what_the_first_waiting_job_lacks() {
        // One node idle (7); job 2 (3 nodes) lacks 2: job 1 gives its two
        // most recent nodes, keeping 2 (its minimum).
        let mut s = one_malleable(&[false, false, false, false, false, false, false, true]);
        s.running.push(running(9, &[4, 5, 6], Some(5000)));
        s.pending = vec![job(2, 0, 0, 3)];
        assert_eq!(ask(&s, Rules::PAPER), Answer::Shrink { remove_nodes: vec![3, 2], beneficiary: JobId(2) });
        // Lacking 3 would take it below its minimum: it grows instead.
        s.pending = vec![job(2, 0, 0, 4)];
        assert_eq!(ask(&s, Rules::PAPER), Answer::Expand { add_nodes: vec![7] });
        // A job already promised a shrink is not helped twice, and the idle
        // node is its: job 1 stays. Once it needs fewer than are idle, the rest may go.
        s.pending = vec![job(2, 0, 0, 3)];
        let promised: HashSet<JobId> = [JobId(2)].into();
        assert_eq!(natural(&s, JobId(1), Rules::PAPER, MAX_JOB_TEST, &promised), Answer::Stay);
        s.nodes[6].free = true;
        s.running[1].nodes = vec![4, 5];
        s.pending = vec![job(2, 0, 0, 1)];
        assert_eq!(natural(&s, JobId(1), Rules::PAPER, MAX_JOB_TEST, &promised), Answer::Expand { add_nodes: vec![6] });
    }

    #[test]
    fn the_variant_shrinks_a_job_no_further_than_it_was_submitted_with() {
        // As above: job 2 lacks 2, job 1 (on 4, min 2) could give them.
        let mut s = one_malleable(&[false, false, false, false, false, false, false, true]);
        s.running.push(running(9, &[4, 5, 6], Some(5000)));
        s.pending = vec![job(2, 0, 0, 3)];
        let keep = Rules { keep_asked: true, ..Rules::PAPER };
        // Submitted on 3: it gives one node only, not enough; it grows instead.
        s.running[0].asked = Some(3);
        assert_eq!(ask(&s, keep), Answer::Expand { add_nodes: vec![7] });
        // Submitted on 2 (or not known): down to its minimum, as the paper.
        s.running[0].asked = Some(2);
        assert_eq!(ask(&s, keep), Answer::Shrink { remove_nodes: vec![3, 2], beneficiary: JobId(2) });
        s.running[0].asked = None;
        assert_eq!(ask(&s, keep), Answer::Shrink { remove_nodes: vec![3, 2], beneficiary: JobId(2) });
        // The paper's rule ignores it.
        s.running[0].asked = Some(3);
        assert_eq!(ask(&s, Rules::PAPER), Answer::Shrink { remove_nodes: vec![3, 2], beneficiary: JobId(2) });
    }

    #[test]
    fn shortest_first_orders_by_asked_node_seconds_within_a_tier() {
        // Job 1: 100 s x 4, priority 9; job 2: 50 s x 2, priority 1; job 3:
        // 100 s x 2 (as job 4, which has the higher priority); job 5 unlimited.
        let mut pending = vec![
            limited(job(1, 9, 0, 4), Some(100)),
            limited(job(2, 1, 0, 2), Some(50)),
            limited(job(3, 1, 0, 2), Some(100)),
            limited(job(4, 5, 0, 2), Some(100)),
            limited(job(5, 99, 0, 1), None),
        ];
        shortest_first(&mut pending);
        let mut s = cluster(&[true; 8]);
        s.pending = pending;
        let order: Vec<u32> = s.queue_order().iter().map(|p| p.id.0).collect();
        assert_eq!(order, [2, 4, 3, 1, 5]);
        // A higher tier still goes first.
        s.pending[4].tier = 1;
        assert_eq!(s.queue_order()[0].id.0, 5);
    }

    #[test]
    fn the_first_job_it_can_help_by_priority_and_never_the_batch_host() {
        // Nothing idle. Job 2 (first) needs 8: beyond what job 1 can give;
        // job 3 needs 1. Job 1 was grown 0-3 in the order 0, 3, 1, 2: it
        // gives 2, the most recent; never node 0.
        let mut s = one_malleable(&[false; 8]);
        s.running[0].nodes = vec![0, 3, 1, 2];
        s.running.push(running(9, &[4, 5, 6, 7], Some(5000)));
        s.pending = vec![job(2, 9, 0, 8), job(3, 0, 0, 1)];
        assert_eq!(ask(&s, Rules::PAPER), Answer::Shrink { remove_nodes: vec![2], beneficiary: JobId(3) });
        // A waiting job that may use only node 0 cannot be helped.
        s.pending = vec![job(3, 0, 0, 1).placement(Placement::only([0]))];
        assert_eq!(ask(&s, Rules::PAPER), Answer::Stay);
    }

    #[test]
    fn a_node_constraint_still_holds() {
        // Job 1 even in [2, 8] on 4 nodes, 1 idle: no even count at 5, stay;
        // a job lacking 1 makes it give 2 (the next even count down).
        let mut s = one_malleable(&[false, false, false, false, true, false, false, false]);
        s.running[0].malleable = Some(MalleableSpec { min: 2, max: 8, constraint: NodeConstraint::Even });
        s.running.push(running(9, &[5, 6, 7], Some(5000)));
        assert_eq!(ask(&s, Rules::PAPER), Answer::Stay);
        s.pending = vec![job(2, 0, 0, 2)];
        assert_eq!(ask(&s, Rules::PAPER), Answer::Shrink { remove_nodes: vec![3, 2], beneficiary: JobId(2) });
    }

    #[test]
    fn the_variant_keeps_off_booked_nodes_and_helps_the_job_that_gains_most() {
        // Nodes 4-5 idle; 6-7 busy until 200. Job 2 (4 nodes, first) is
        // booked at 200 on 4-7. The paper's rule: job 2 lacks 2, so job 1
        // gives 2 nodes for it. The variant: job 3 (3 nodes, booked after
        // job 2, at 300) lacks 1 and gains 200 s for it, job 2 100 s for
        // its two (50 s a node): job 3 is helped.
        let mut s = one_malleable(&[false, false, false, false, true, true, false, false]);
        s.running.push(running(9, &[6, 7], Some(200)));
        s.pending = vec![limited(job(2, 9, 0, 4), Some(100)), limited(job(3, 0, 0, 3), Some(100))];
        assert_eq!(ask(&s, Rules::PAPER), Answer::Shrink { remove_nodes: vec![3, 2], beneficiary: JobId(2) });
        let got = ask(&s, Rules::PLANNED);
        assert_eq!(got, Answer::Shrink { remove_nodes: vec![3], beneficiary: JobId(3) });
        // With nothing to help, the paper's rule grows onto 4-5, booked
        // for job 2 at 200, before job 1's limit (1000); the variant stays.
        s.pending = vec![limited(job(2, 9, 0, 4), Some(100))];
        s.running[0].nodes = vec![0, 1];
        assert_eq!(ask(&s, Rules::PAPER), Answer::Expand { add_nodes: vec![4, 5] });
        assert_eq!(ask(&s, Rules::PLANNED), Answer::Stay);
    }

    #[test]
    fn the_variant_grows_first_the_job_that_ends_first_while_jobs_wait_and_last_when_none_do() {
        // Nodes 6-7 idle. Job 1 [2, 6] on 0-3 until 1000; job 5 [2, 6] on
        // 4-5 until 500. Without the order, job 1, asking, takes both.
        let mut s = one_malleable(&[false, false, false, false, false, false, true, true]);
        s.running.push(running(5, &[4, 5], Some(500)).malleable(spec(2, 6)));
        let by_end = Rules::PLANNED;
        let first_asking = Rules { grow_by_end: false, ..Rules::PLANNED };
        let job5 = |s: &Snapshot, rules| natural(s, JobId(5), rules, MAX_JOB_TEST, &HashSet::new());
        let both = Answer::Expand { add_nodes: vec![6, 7] };
        assert_eq!(ask(&s, first_asking), both);
        // Nothing waits: job 1 ends last, so it grows first; job 5, asking,
        // leaves the two idle nodes to it (job 1 could take 6 - 4 = 2).
        assert_eq!(ask(&s, by_end), both);
        assert_eq!(job5(&s, by_end), Answer::Stay);
        // Job 2 waits for all 8 nodes (booked at 1000, when job 1 ends: no
        // shrink helps it and 6-7 stay free for either job until then). Job
        // 5 ends first, so it grows first: it may take 4 (to 6), so job 1
        // stays; job 5 takes both.
        s.pending = vec![job(2, 0, 0, 8)];
        assert_eq!(ask(&s, first_asking), both);
        assert_eq!(ask(&s, by_end), Answer::Stay);
        assert_eq!(job5(&s, by_end), both);
        // A job at its maximum claims nothing: on 12 nodes, job 5 holds 6
        // (4-5, 8-11) and job 2 waits for all 12; job 1 takes 6-7.
        let mut s = one_malleable(&[[false; 6].as_slice(), &[true; 2], &[false; 4]].concat());
        s.running.push(running(5, &[4, 5, 8, 9, 10, 11], Some(500)).malleable(spec(2, 6)));
        s.pending = vec![job(2, 0, 0, 12)];
        assert_eq!(ask(&s, by_end), both);
    }

    #[test]
    fn a_promised_job_starts_first_and_is_forgotten_once_it_runs() {
        // 4 nodes; job 1 [1, 4] on all. Jobs 2 (2 nodes) and 3 (1 node,
        // higher priority) wait. Job 1 asks: it gives one node for job 3
        // (the first it can help)...
        let mut s = cluster(&[false; 4]);
        s.running = vec![running(1, &[0, 1, 2, 3], Some(1000)).malleable(spec(1, 4))];
        s.pending = vec![job(2, 0, 0, 2), job(3, 5, 0, 1)];
        let mut n = Natural::new("natural", Rules::PAPER, MAX_JOB_TEST);
        let r = n.reconfigure(&s, JobId(1));
        assert_eq!(r.decisions, vec![Decision::Shrink { job: JobId(1), remove_nodes: vec![3] }]);
        assert_eq!(r.counted("natural_shrinks"), 1);
        // Node 3 is back. Say job 2 now asks all 4 and comes first by
        // priority: it books 0-3 at 1000, so job 3 (till 5100) could not
        // have node 3; with the promise job 3 goes first and starts there.
        s.running[0].nodes = vec![0, 1, 2];
        s.nodes[3].free = true;
        s.pending = vec![job(2, 9, 0, 4), limited(job(3, 5, 0, 1), Some(5000))];
        let r = n.schedule(&s);
        assert_eq!(r.decisions, vec![Decision::Start { job: JobId(3), nodes: vec![3], time_limit: None }]);
        assert_eq!(Natural::new("natural", Rules::PAPER, MAX_JOB_TEST).schedule(&s).decisions, vec![]);
        s.pending.retain(|p| p.id != JobId(3));
        n.schedule(&s);
        assert!(n.promised.is_empty());
    }
}
