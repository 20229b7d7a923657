//! SD-Policy (D'Amico, Jokanovic, Corbalan 2019, Listing 1): EASY backfill,
//! then each waiting job whose owner opted in to core sharing, and that would
//! end sooner started now on cores taken from running jobs (its mates) than
//! at its predicted static start, starts on its mates' nodes with a
//! SharingFactor share of their cores; the mates' limits grow by what they lose.

use std::collections::{HashMap, HashSet};

use malleable_model::{Decision, JobId, MateShare, NodeIndex, PendingJob, RunningJob, Snapshot, Time};

use crate::blocks::backfill::easy;
use crate::blocks::mates::{penalty, pick_mates, Mate, MateLimits, MaxSlowdown, RuntimeModel, Sharing};
use crate::blocks::node_plan::NodePlan;
use crate::blocks::pool::FreePool;
use crate::blocks::queue::{decided_end, end_if_started, runnable_queue};
use crate::blocks::reservation::reservation;
use crate::params::{Param, Params, Setting, Span, Value, Whole, Words};
use crate::strategy::{MeasureKind, MeasureSpec, PassReport, Strategy, StrategyInfo};

/// MAX_SLOWDOWN (Eq. 2).
pub const MAX_SLOWDOWN: Param<MaxSlowdown> = Param {
    key: "MaxSlowdown",
    // The paper's 2: on RICC's shape (no job above 72 nodes) it cuts mean
    // slowdown by 26% or more on each of 20 seeds, where 5 pairs nearly every
    // node and does worse than EASY on 12 (docs/evaluation.md, SD-Policy).
    default: MaxSlowdown::Static(2.0),
    allowed: Span { min: 1.0, max: 1e9 },
    help: "MAX_SLOWDOWN: a running job may be a mate only while its predicted slowdown if shared stays \
           below it; dynavgsd is the mean over the running jobs",
};

pub const SHARING_FACTOR: Param<f64> = Param {
    key: "SharingFactor",
    default: 0.5,
    allowed: Span { min: 0.01, max: 0.99 },
    help: "the largest share of a mate's cores on a node the new job may take",
};

pub const MAX_MATES: Param<usize> = Param {
    key: "MaxMates",
    default: 2,
    allowed: Whole::new(1, 4),
    help: "the most mates one job shares with (the paper found no gain above 2)",
};

pub const PROTECT_HEAD: Param<ProtectHead> = Param {
    key: "ProtectHead",
    default: ProtectHead::ByLimits,
    allowed: (),
    help: "1: a mate whose nodes the first waiting job's reservation counts on may not be slowed past its \
           start, so sharing never delays it (EASY's promise); 0: the paper's Listing 1, which may; 2: such \
           a job is no mate at all, so sharing slows nothing the head waits for, even when jobs end before \
           their limits",
};

pub const MAX_JOB_TEST: Param<usize> = Param {
    key: "MaxJobTest",
    default: 500,
    allowed: Whole::new(1, 1_000_000),
    help: "waiting jobs given a predicted start and tried for sharing per pass, as bf_max_job_test",
};

/// MaxSlowdown's words, beside a number within its bounds.
const SLOWDOWN_WORDS: [(MaxSlowdown, &str); 2] =
    [(MaxSlowdown::Unlimited, "unlimited"), (MaxSlowdown::DynAvgSd, "dynavgsd")];

/// MaxSlowdown is a number or a word: its own type, read and said here.
impl Setting for MaxSlowdown {
    type Allowed = Span;
    fn parse(text: &str, allowed: &Span) -> Option<MaxSlowdown> {
        match SLOWDOWN_WORDS.iter().find(|(_, w)| w.eq_ignore_ascii_case(text)) {
            Some((v, _)) => Some(*v),
            None => allowed.read(text).map(MaxSlowdown::Static),
        }
    }
    fn show(self, _: &Span) -> String {
        match self {
            MaxSlowdown::Static(v) => format!("{v}"),
            _ => SLOWDOWN_WORDS.iter().find(|(v, _)| *v == self).map_or("", |(_, w)| w).to_string(),
        }
    }
    fn describe(allowed: &Span) -> String {
        let words: Vec<String> = SLOWDOWN_WORDS.iter().map(|(_, w)| format!("'{w}'")).collect();
        format!("{}, or {}", allowed.describe(), words.join(" or "))
    }
    fn to_value(self) -> Value {
        match self {
            MaxSlowdown::Static(v) => Value::Number(v),
            _ => Value::Word(SLOWDOWN_WORDS.iter().position(|(v, _)| *v == self).unwrap_or(0)),
        }
    }
    fn from_value(v: Value) -> Option<MaxSlowdown> {
        match v {
            Value::Number(n) => Some(MaxSlowdown::Static(n)),
            Value::Word(i) => SLOWDOWN_WORDS.get(i).map(|(v, _)| *v),
            _ => None,
        }
    }
}

pub const SD_POLICY: StrategyInfo = StrategyInfo {
    name: "sd-policy",
    about: "SD-Policy: EASY backfill, and a waiting job that would end sooner on cores shared by running jobs \
            (its mates, by predicted slowdown) starts there",
    params: &[&MAX_SLOWDOWN, &SHARING_FACTOR, &MAX_MATES, &PROTECT_HEAD, &MAX_JOB_TEST],
    measures: &[MeasureSpec {
        name: "shared_starts",
        kind: MeasureKind::Count,
        help: "jobs started on cores shared by mates",
    }],
    uses_power_corridor: false,
    shares_cores: true,
    places_cores: false,
    build: |p| Box::new(SdPolicy::new(p)),
};

struct SdPolicy {
    max_slowdown: MaxSlowdown,
    sharing_factor: f64,
    max_mates: usize,
    max_job_test: usize,
    protect_head: ProtectHead,
}

/// What the first waiting job's reservation asks of the mates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ProtectHead {
    /// Nothing (the paper's Listing 1).
    No,
    /// A job due back by the head's start is a mate only if it still is once slowed.
    ByLimits,
    /// A job due back by the head's start is no mate.
    Fully,
}

/// Written as the numbers the help text and docs have always used.
impl Words for ProtectHead {
    const WORDS: &'static [(ProtectHead, &'static str)] =
        &[(ProtectHead::No, "0"), (ProtectHead::ByLimits, "1"), (ProtectHead::Fully, "2")];
}

impl SdPolicy {
    fn new(p: &Params) -> SdPolicy {
        SdPolicy {
            max_slowdown: p.get(&MAX_SLOWDOWN),
            sharing_factor: p.get(&SHARING_FACTOR),
            max_mates: p.get(&MAX_MATES),
            max_job_test: p.get(&MAX_JOB_TEST),
            protect_head: p.get(&PROTECT_HEAD),
        }
    }
}

impl Strategy for SdPolicy {
    fn name(&self) -> &'static str {
        "sd-policy"
    }

    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        let started = easy(s);
        let shares = self.shares(s, &started);
        let mut report = PassReport::from(started);
        report.count("shared_starts", shares.len() as u64);
        report.decisions.extend(shares);
        report
    }
}

/// The requested time a running job was given: its limit less the increase
/// sharing added (Eq. 4's req_time); None for an unlimited job.
fn requested(r: &RunningJob) -> Option<Time> {
    let limit = r.end_limit?;
    Some((limit - r.start - r.sharing.increase).max(1))
}

impl SdPolicy {
    /// Listing 1's malleable half, after EASY's `started`: the `Share`s of
    /// the waiting jobs that gain by sharing, in queue order.
    fn shares(&self, s: &Snapshot, started: &[Decision]) -> Vec<Decision> {
        let started_ids: HashSet<JobId> = started.iter().map(Decision::job).collect();
        let queue: Vec<(&PendingJob, usize)> = runnable_queue(s)
            .into_iter()
            .filter(|(j, _)| !started_ids.contains(&j.id))
            .take(self.max_job_test)
            .collect();
        if !queue.iter().any(|(j, _)| j.share_cores) {
            return Vec::new();
        }
        // When EASY's starts end, and each of their nodes.
        let ends: Vec<(Option<Time>, Vec<NodeIndex>)> = started
            .iter()
            .filter_map(|d| match d {
                Decision::Start { job, nodes, time_limit } => {
                    Some((decided_end(s, *job, nodes.len(), *time_limit), nodes.clone()))
                }
                _ => None,
            })
            .collect();
        let predicted = predicted_starts(s, &ends, &queue);
        // P for this pass: DynAVGSD is the mean predicted slowdown of the
        // running jobs, from requested times as Eq. 4 (all the scheduler knows).
        let slowdowns: Vec<f64> =
            s.running.iter().filter_map(|r| penalty(r.sharing.wait, r.sharing.increase, requested(r)?).ok()).collect();
        let limits =
            MateLimits { cutoff: self.max_slowdown.cutoff(&slowdowns), max_mates: self.max_mates, first: None };
        // A mate shares once at a time: alone, opted in, limited, and not
        // adapting; on nodes of one core count, which it comes with.
        let mut free_mates: HashMap<JobId, (&RunningJob, u32)> = s
            .running
            .iter()
            .filter(|r| r.sharing.opted_in && r.sharing.alone() && !r.adapting && r.end_limit.is_some())
            .filter_map(|r| {
                let c = s.nodes.get(*r.nodes.first()?)?.cores;
                r.nodes.iter().all(|&i| s.nodes.get(i).is_some_and(|n| n.cores == c)).then_some((r.id, (r, c)))
            })
            .collect();
        // The first waiting job's reservation (EASY's head): its shadow time.
        let mut head = if self.protect_head == ProtectHead::No { None } else { head_shadow(s, &ends, &queue) };
        let mut out = Vec::new();
        for (job, size) in queue {
            if !job.share_cores || free_mates.is_empty() {
                continue;
            }
            let Some(req) = job.time_limit else {
                // An unlimited job could not be said to end inside its mates.
                continue;
            };
            let static_end = predicted.get(&job.id).map_or(Time::MAX, |&t| t.saturating_add(req));
            let shadow = head.filter(|(h, _)| *h != job.id).map(|(_, t)| t);
            if let Some(d) = self.share(s, job, size, req, static_end, shadow, &free_mates, &limits) {
                if head.is_some_and(|(h, _)| h == job.id) {
                    // The head starts now: its reservation is gone.
                    head = None;
                }
                if let Decision::Share { mates, .. } = &d {
                    for m in mates {
                        free_mates.remove(&m.job);
                    }
                }
                out.push(d);
            }
        }
        out
    }

    /// One waiting job's try: the mates whose nodes (all with the same core
    /// count) sum to its size and let it end before `static_end`, with the
    /// least summed penalty. With `shadow` (the head job's start), a running
    /// job due back by then may be a mate only if it still is once slowed.
    #[allow(clippy::too_many_arguments)]
    fn share(
        &self,
        s: &Snapshot,
        job: &PendingJob,
        size: usize,
        req: Time,
        static_end: Time,
        shadow: Option<Time>,
        free_mates: &HashMap<JobId, (&RunningJob, u32)>,
        limits: &MateLimits,
    ) -> Option<Decision> {
        let mut core_counts: Vec<u32> = free_mates.values().map(|&(_, c)| c).collect();
        core_counts.sort_unstable();
        core_counts.dedup();
        let mut best: Option<(f64, Decision)> = None;
        for cores in core_counts {
            // One core per rank is a mate's floor; ranks per node are not
            // known here, so one.
            let Ok(sharing) = Sharing::new(cores, self.sharing_factor, 1) else {
                continue;
            };
            // Listing 1's test, with Eq. 6 (SD-Policy predicts the worst case).
            let Ok(own_increase) = sharing.new_job_increase(req) else {
                continue;
            };
            let run = req.saturating_add(own_increase);
            let mall_end = s.now.saturating_add(run);
            if static_end <= mall_end {
                continue;
            }
            let mut candidates = Vec::new();
            for &(r, _) in free_mates.values().filter(|&&(_, c)| c == cores) {
                if !r.nodes.iter().all(|&i| job.placement.allows(i)) {
                    continue;
                }
                let (Some(limit), Some(req_i)) = (r.end_limit, requested(r)) else {
                    continue;
                };
                let n = r.nodes.len() as u32;
                let Ok(inc) = sharing.mate_increase(RuntimeModel::Worst, n, n, run) else {
                    continue;
                };
                let Ok(p) = penalty(r.sharing.wait, r.sharing.increase.saturating_add(inc), req_i) else {
                    continue;
                };
                let end = limit.saturating_add(inc);
                let fully = self.protect_head == ProtectHead::Fully;
                if shadow.is_some_and(|t| limit <= t && (fully || end > t)) {
                    continue;
                }
                candidates.push(Mate { id: r.id, nodes: n, penalty: p, end });
            }
            let Some(choice) = pick_mates(size as u32, mall_end, &candidates, limits) else {
                continue;
            };
            if best.as_ref().is_some_and(|(impact, _)| *impact <= choice.impact) {
                continue;
            }
            let nodes: Vec<_> = choice.mates.iter().flat_map(|m| free_mates[m].0.nodes.iter().copied()).collect();
            if job.placement.required.iter().any(|r| !nodes.contains(r)) {
                continue;
            }
            let end_of = |m: &JobId| candidates.iter().find(|c| c.id == *m).map_or(Time::MAX, |c| c.end);
            let mates = choice
                .mates
                .iter()
                .map(|m| MateShare { job: *m, kept: sharing.kept(), end_limit: end_of(m) })
                .collect();
            let d = Decision::Share { job: job.id, nodes, cores: sharing.taken(), time_limit: run, mates };
            best = Some((choice.impact, d));
        }
        best.map(|(_, d)| d)
    }
}

/// The first of `queue` (the head job EASY could not start) and its
/// shadow time, after the jobs EASY starts now (`ends`: when each ends, and
/// its nodes); None when it never starts.
fn head_shadow(
    s: &Snapshot,
    ends: &[(Option<Time>, Vec<NodeIndex>)],
    queue: &[(&PendingJob, usize)],
) -> Option<(JobId, Time)> {
    let &(head, size) = queue.first()?;
    let mut pool = FreePool::new(s);
    for (_, nodes) in ends {
        pool.commit(nodes);
    }
    let r = reservation(s, pool.allowed_free(&head.placement), ends, &head.placement, size)?;
    Some((head.id, r.shadow_time))
}

/// Each waiting job's predicted static start (Listing 1's get_wait_time):
/// booked in queue order on the node plan, after the jobs EASY starts now,
/// as sched/backfill's reservation map; absent when it can never start.
fn predicted_starts(
    s: &Snapshot,
    ends: &[(Option<Time>, Vec<NodeIndex>)],
    queue: &[(&PendingJob, usize)],
) -> HashMap<JobId, Time> {
    let mut plan = NodePlan::new(s, s.free_nodes());
    for (end, nodes) in ends {
        plan.book(s.now, end.map(|e| (e - s.now).max(1)), nodes);
    }
    let mut out = HashMap::new();
    for (job, size) in queue {
        let length = end_if_started(s.now, job).map(|end| (end - s.now).max(1));
        if let Some((start, nodes)) = plan.earliest(s.now, *size, length, &job.placement) {
            plan.book(start, length, &nodes);
            out.insert(job.id, start);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{job, limited, running};
    use malleable_model::{validate, CoreSharing, Node};

    #[test]
    fn max_slowdown_takes_a_number_or_a_word_and_says_both() {
        let mut p = Params::defaults(SD_POLICY.params);
        assert_eq!(p.get(&MAX_SLOWDOWN), MaxSlowdown::Static(2.0));
        p.set("MaxSlowdown", "DynAvgSD").unwrap();
        assert_eq!(p.get(&MAX_SLOWDOWN), MaxSlowdown::DynAvgSd);
        assert_eq!(p.explicit(), vec!["MaxSlowdown=dynavgsd"]);
        p.set("MaxSlowdown", "unlimited").unwrap();
        assert_eq!(p.get(&MAX_SLOWDOWN), MaxSlowdown::Unlimited);
        p.set("MaxSlowdown", "50").unwrap();
        assert_eq!(p.get(&MAX_SLOWDOWN), MaxSlowdown::Static(50.0));
        assert_eq!(p.explicit(), vec!["MaxSlowdown=50"]);
        for bad in ["0.5", "-1", "-2", "infinite", "NaN"] {
            let e = p.set("MaxSlowdown", bad).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "MaxSlowdown={bad} is not valid: expected a number from 1 to 1000000000, or 'unlimited' or \
                     'dynavgsd' (MAX_SLOWDOWN:"
                )),
                "{e}"
            );
        }
        assert_eq!(p.get(&MAX_SLOWDOWN), MaxSlowdown::Static(50.0), "a refused value changes nothing");
    }

    #[test]
    fn protect_head_is_one_of_its_three_numbers() {
        let mut p = Params::defaults(SD_POLICY.params);
        assert_eq!(p.get(&PROTECT_HEAD), ProtectHead::ByLimits);
        for (text, want) in [("0", ProtectHead::No), ("2", ProtectHead::Fully), ("1", ProtectHead::ByLimits)] {
            p.set("protect_head", text).unwrap();
            assert_eq!(p.get(&PROTECT_HEAD), want);
            assert_eq!(p.explicit(), vec![format!("ProtectHead={text}")]);
        }
        let e = p.set("ProtectHead", "3").unwrap_err();
        assert!(e.starts_with("ProtectHead=3 is not valid: expected one of 0, 1, 2 ("), "{e}");
    }

    /// Now 100; 6 nodes of 4 cores, all busy. Opted-in 10 on 0-1 (started
    /// at 0, limit 1100: requested 1100 s, waited 0), opted-in 11 on 2,
    /// rigid 12 on 3-5 (limit 1100). Waiting: opted-in 1, 3 nodes, 100 s.
    fn busy() -> Snapshot {
        let mut s = Snapshot { now: 100, nodes: Node::numbered_with_cores([false; 6], 4), ..Snapshot::default() };
        s.running = vec![
            running(10, &[0, 1], Some(1100)).sharing(CoreSharing::opted_in(0)),
            running(11, &[2], Some(1100)).sharing(CoreSharing::opted_in(0)),
            running(12, &[3, 4, 5], Some(1100)),
        ];
        s.pending = vec![limited(job(1, 0, 0, 3), Some(100)).share_cores(true)];
        s
    }

    /// An sd-policy pass with these parameters set (the rest at defaults).
    fn pass(s: &Snapshot, set: &[(&str, &str)]) -> Vec<Decision> {
        let mut p = Params::defaults(SD_POLICY.params);
        for (k, v) in set {
            p.set(k, v).unwrap();
        }
        let d = (SD_POLICY.build)(&p).schedule(s).decisions;
        assert_eq!(validate(s, &d), Ok(()), "{d:?}");
        d
    }

    #[test]
    fn a_job_that_ends_sooner_on_shared_cores_starts_on_its_mates() {
        // Static: it starts at 1100 and ends at 1200. Shared: 2 of 4 cores
        // per node, so 100 s more (Eq. 6), ending at 300. The mates lose 2
        // of 4 cores for those 200 s: 100 s more each (limits 1200).
        let s = busy();
        let want = Decision::Share {
            job: JobId(1),
            nodes: vec![0, 1, 2],
            cores: 2,
            time_limit: 200,
            mates: vec![
                MateShare { job: JobId(10), kept: 2, end_limit: 1200 },
                MateShare { job: JobId(11), kept: 2, end_limit: 1200 },
            ],
        };
        assert_eq!(pass(&s, &[]), vec![want]);
        // EASY alone starts nothing.
        assert_eq!(easy(&s), vec![]);
    }

    #[test]
    fn only_jobs_whose_owners_opted_in_share() {
        let mut s = busy();
        s.pending[0].share_cores = false;
        assert_eq!(pass(&s, &[]), vec![]);
        let mut s = busy();
        s.running[1].sharing.opted_in = false;
        assert_eq!(pass(&s, &[]), vec![], "without 11, no mates sum to 3 nodes");
    }

    #[test]
    fn a_job_due_to_start_soon_waits_for_whole_nodes() {
        // 12 ends at 150: static end 250, before the shared end at 300.
        let mut s = busy();
        s.running[2].end_limit = Some(150);
        assert_eq!(pass(&s, &[]), vec![]);
        // At 250 it would end at 350, later than 300: it shares.
        s.running[2].end_limit = Some(250);
        assert!(matches!(pass(&s, &[])[..], [Decision::Share { .. }]));
    }

    #[test]
    fn max_slowdown_spares_the_jobs_already_slowed() {
        // 10 waited 11,000 s on its 1,100: shared, its slowdown would be
        // (11000 + 100 + 1100) / 1100 = 11.09, above 10.
        let mut s = busy();
        s.running[0].sharing.wait = 11_000;
        assert_eq!(pass(&s, &[]), vec![]);
        assert!(matches!(pass(&s, &[("MaxSlowdown", "unlimited")])[..], [Decision::Share { .. }]));
        assert!(matches!(pass(&s, &[("MaxSlowdown", "12")])[..], [Decision::Share { .. }]));
        // DynAVGSD: the mean of 11 (10), 1 (11) and 1 (12) is 4.33; 10's
        // 11.09 is above it.
        assert_eq!(pass(&s, &[("MaxSlowdown", "dynavgsd")]), vec![]);
    }

    #[test]
    fn a_job_must_end_inside_its_mates() {
        // 11 ends at 150 (200 once shared), before the new job's 300.
        let mut s = busy();
        s.running[1].end_limit = Some(150);
        s.running[2].end_limit = Some(5000);
        assert_eq!(pass(&s, &[]), vec![]);
    }

    #[test]
    fn a_mate_shares_with_one_job_at_a_time() {
        // Two waiting jobs of 2 nodes: only 10 has 2 nodes; once it shares
        // with the first, the second finds no mate.
        let mut s = busy();
        s.pending = vec![
            limited(job(1, 0, 0, 2), Some(100)).share_cores(true),
            limited(job(2, 0, 0, 2), Some(100)).share_cores(true),
        ];
        let d = pass(&s, &[]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].job(), JobId(1));
        s.running[0].sharing.with = vec![JobId(7)];
        assert_eq!(pass(&s, &[]), vec![], "a mate already sharing is not one");
    }

    #[test]
    fn whole_free_nodes_come_first() {
        // Nodes 3-5 free: the job starts there statically, sharing nothing.
        let mut s = busy();
        s.running.pop();
        for n in &mut s.nodes[3..] {
            n.free = true;
        }
        let d = pass(&s, &[]);
        assert_eq!(d, vec![Decision::Start { job: JobId(1), nodes: vec![3, 4, 5], time_limit: None }]);
    }

    #[test]
    fn sharing_never_delays_the_head_jobs_reservation() {
        // Head 5 (all 6 nodes, not opted in) starts when all are back, at
        // 1100. Slowed to 1200, mates 10 and 11 would put it back 100 s.
        let mut s = busy();
        s.pending.insert(0, limited(job(5, 10, 0, 6), Some(1000)));
        assert_eq!(pass(&s, &[]), vec![]);
        assert!(matches!(pass(&s, &[("ProtectHead", "0")])[..], [Decision::Share { .. }]), "the paper's Listing 1");
        // With 12 due back at 5000, the head starts then: 1200 delays nothing.
        s.running[2].end_limit = Some(5000);
        assert!(matches!(pass(&s, &[])[..], [Decision::Share { .. }]));
    }

    #[test]
    fn protecting_the_head_fully_slows_nothing_it_waits_for() {
        // Head 5 asks for 3 nodes; 12 (nodes 3-5) is due back at 1100, the
        // mates 10 and 11 at 5000. The head counts on 12 alone: 10 and 11 may
        // share under both rules.
        let mut s = busy();
        s.running[0].end_limit = Some(5000);
        s.running[1].end_limit = Some(5000);
        s.pending.insert(0, limited(job(5, 10, 0, 3), Some(1000)));
        assert!(matches!(pass(&s, &[])[..], [Decision::Share { .. }]));
        assert!(matches!(pass(&s, &[("ProtectHead", "2")])[..], [Decision::Share { .. }]));
        // Head 5 asks for all 6 and 12 is due back at 6000: the head counts
        // on 10 and 11 too. Slowed to 5100, they still end by its start, so
        // ProtectHead=1 lets them share (in a run, where jobs end before
        // their limits, they may still delay it); ProtectHead=2 does not.
        s.running[2].end_limit = Some(6000);
        s.pending[0] = limited(job(5, 10, 0, 6), Some(1000));
        assert!(matches!(pass(&s, &[])[..], [Decision::Share { .. }]));
        assert_eq!(pass(&s, &[("ProtectHead", "2")]), vec![]);
    }
}
