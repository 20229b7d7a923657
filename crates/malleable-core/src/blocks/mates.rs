//! SD-Policy's mate search (D'Amico, Jokanovic, Corbalan 2019): the running
//! jobs a malleable waiting job shares nodes with, chosen by their predicted
//! slowdown (the penalty, Eq. 4) under MAX_SLOWDOWN (Eq. 1-3, Listing 2), and
//! the run-time models that predict what sharing costs (Eq. 5 and 6).
//! Pure functions over plain numbers: the strategy supplies the cores.

use std::str::FromStr;

use malleable_model::{JobId, Time};

/// Eq. 4: a mate's predicted slowdown if it shares, `(wait + increase +
/// req_time) / req_time`: `wait` is what it waited in the queue, `increase`
/// all the run time sharing adds to it (earlier sharing included),
/// `req_time` its requested time. Requested, not real, times: they are all
/// the scheduler knows of a running job.
pub fn penalty(wait: Time, increase: Time, req_time: Time) -> Result<f64, String> {
    if req_time <= 0 {
        return Err(format!("req_time={req_time} is not valid: expected a number of seconds above 0"));
    }
    if wait < 0 || increase < 0 {
        return Err(format!("wait={wait}, increase={increase} are not valid: expected seconds, 0 or more"));
    }
    Ok((wait as f64 + increase as f64 + req_time as f64) / req_time as f64)
}

/// Which of the paper's two run-time models predicts an increase.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RuntimeModel {
    /// Eq. 5: the job rebalances its work over all the cores it has.
    Ideal,
    /// Eq. 6: a statically balanced job goes at the pace of its least-served
    /// node. SD-Policy's own predictions use this one, to grant completion.
    Worst,
}

impl RuntimeModel {
    /// The pace of a job holding `cpus_per_node` cores on its nodes, having
    /// asked `req_cpus_per_node` on each: the share of its unshared speed
    /// (Eq. 5: all the cores it has over all it asked; Eq. 6: its
    /// least-served node's over what it asked there). 0 with no node.
    pub fn pace(self, req_cpus_per_node: u32, cpus_per_node: &[u32]) -> f64 {
        let asked = f64::from(req_cpus_per_node);
        match self {
            RuntimeModel::Ideal => {
                cpus_per_node.iter().map(|&c| f64::from(c)).sum::<f64>() / (asked * cpus_per_node.len() as f64)
            }
            RuntimeModel::Worst => f64::from(cpus_per_node.iter().copied().min().unwrap_or(0)) / asked,
        }
    }
}

/// One of the paper's slots t: `time` seconds of the job's unshared run
/// (time_t, what it would do in that long with all its requested cores),
/// done with `cpus_per_node` cores on each of its nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    pub time: Time,
    pub cpus_per_node: Vec<u32>,
}

/// Eq. 5 or 6 as an increase in seconds. The paper's sum,
/// Σ_t (req_cpus / cpus_t) · time_t, is how long the slots take on the cores
/// the job has (cpus_t: all its cores for Eq. 5, with req_cpus its request
/// over all its nodes; the fewest on a node for Eq. 6, with req_cpus per
/// node); the increase is that sum minus Σ_t time_t, what they take
/// unshared. So a slot with every requested core adds nothing, and one with
/// more (a mate expanded into cores freed on its nodes) takes some away.
pub fn increase(model: RuntimeModel, req_cpus_per_node: u32, slots: &[Slot]) -> Result<f64, String> {
    if req_cpus_per_node == 0 {
        return Err("req_cpus_per_node=0 is not valid: a job asks for at least 1 core per node".into());
    }
    let mut total = 0.0;
    for (t, slot) in slots.iter().enumerate() {
        let fewest = slot.cpus_per_node.iter().copied().min().unwrap_or(0);
        if slot.time < 0 || fewest == 0 {
            return Err(format!(
                "slot {t} ({} s on cores {:?}) is not valid: expected 0 s or more, on at least one node, \
                 each with at least 1 core (one per rank)",
                slot.time, slot.cpus_per_node
            ));
        }
        total += (1.0 / model.pace(req_cpus_per_node, &slot.cpus_per_node) - 1.0) * slot.time as f64;
    }
    Ok(total)
}

/// How one mate's nodes are shared: on each, the new job takes
/// ⌊SharingFactor · cores_per_node⌋ of the mate's cores (SharingFactor is a
/// limit, so it rounds down), and the mate keeps the rest, never fewer than
/// `min_cores_per_node` (one per rank on the node: the paper's floor).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Sharing {
    cores_per_node: u32,
    taken: u32,
}

impl Sharing {
    pub fn new(cores_per_node: u32, sharing_factor: f64, min_cores_per_node: u32) -> Result<Sharing, String> {
        // Written so that NaN fails too.
        if !(sharing_factor > 0.0 && sharing_factor < 1.0) {
            return Err(format!("SharingFactor={sharing_factor} is not valid: expected a number above 0 and below 1"));
        }
        if min_cores_per_node == 0 || min_cores_per_node >= cores_per_node {
            return Err(format!(
                "a mate keeping at least {min_cores_per_node} of {cores_per_node} cores per node cannot share: \
                 it keeps at least 1 (one per rank) and must have more than it keeps"
            ));
        }
        // At most cores_per_node - 1, as the factor is below 1.
        let taken =
            ((sharing_factor * f64::from(cores_per_node)).floor() as u32).min(cores_per_node - min_cores_per_node);
        if taken == 0 {
            return Err(format!(
                "SharingFactor={sharing_factor} takes no core of {cores_per_node} per node (keeping at least \
                 {min_cores_per_node}): expected a factor that frees at least 1"
            ));
        }
        Ok(Sharing { cores_per_node, taken })
    }

    /// The cores per node the new job gets.
    pub fn taken(&self) -> u32 {
        self.taken
    }

    /// The cores per node the mate keeps.
    pub fn kept(&self) -> u32 {
        self.cores_per_node - self.taken
    }

    /// The mate's increase, rounded up to the second, for `overlap` seconds
    /// of sharing `shared_nodes` of its `nodes` (all of them under Eq. 3):
    /// in that time it does only the work of overlap · pace seconds unshared
    /// (pace: Eq. 5's cores held / cores requested, Eq. 6's kept / cores on a
    /// shared node), and the rest is left for later, at full pace. That is
    /// Eq. 5 or 6 over one slot of overlap · pace seconds.
    pub fn mate_increase(
        &self,
        model: RuntimeModel,
        nodes: u32,
        shared_nodes: u32,
        overlap: Time,
    ) -> Result<Time, String> {
        if nodes == 0 || shared_nodes > nodes || overlap < 0 {
            return Err(format!(
                "sharing {shared_nodes} of {nodes} nodes for {overlap} s is not valid: expected at least 1 node, \
                 no more shared than held, and 0 s or more"
            ));
        }
        if shared_nodes == 0 {
            return Ok(0);
        }
        // The increase is overlap · (1 - pace), an exact fraction: numerator
        // and denominator in i128, so nothing overflows and nothing rounds
        // but the final ceiling.
        let (num, den) = match model {
            RuntimeModel::Ideal => {
                (i128::from(self.taken) * i128::from(shared_nodes), i128::from(self.cores_per_node) * i128::from(nodes))
            }
            RuntimeModel::Worst => (i128::from(self.taken), i128::from(self.cores_per_node)),
        };
        Ok(ceil_fraction(i128::from(overlap).saturating_mul(num), den))
    }

    /// The new job's increase, rounded up: it asked for the whole node's
    /// cores and runs all its `req_time` on the taken ones (it ends inside
    /// its mates, so they never come back to it early); the same under both
    /// models, as every node gives it the same. Where mates leave it
    /// different shares, the least-served node bounds it (Eq. 6): take the
    /// largest of theirs.
    pub fn new_job_increase(&self, req_time: Time) -> Result<Time, String> {
        if req_time < 0 {
            return Err(format!("req_time={req_time} is not valid: expected seconds, 0 or more"));
        }
        Ok(ceil_fraction(i128::from(req_time) * i128::from(self.kept()), i128::from(self.taken)))
    }
}

/// ⌈num / den⌉ for num >= 0 and den > 0, saturated into a Time.
fn ceil_fraction(num: i128, den: i128) -> Time {
    Time::try_from(num.saturating_add(den - 1) / den).unwrap_or(Time::MAX)
}

/// MAX_SLOWDOWN, the cut-off P on a mate's penalty (Eq. 2).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum MaxSlowdown {
    /// Chosen by the administrator (the paper tries 5, 10 and 50).
    Static(f64),
    /// No cut-off (the paper's ∞).
    Unlimited,
    /// DynAVGSD: the mean slowdown of the running jobs, so that those
    /// already above it are spared.
    DynAvgSd,
}

impl MaxSlowdown {
    /// P for this pass, given the running jobs' slowdowns (predicted from
    /// requested times, as Eq. 4 does, the only ones known); None for no
    /// cut-off (Unlimited, or DynAvgSd with no job running, when there are
    /// no mates to spare either).
    pub fn cutoff(&self, running_slowdowns: &[f64]) -> Option<f64> {
        match *self {
            MaxSlowdown::Static(p) => Some(p),
            MaxSlowdown::Unlimited => None,
            MaxSlowdown::DynAvgSd if running_slowdowns.is_empty() => None,
            MaxSlowdown::DynAvgSd => Some(running_slowdowns.iter().sum::<f64>() / running_slowdowns.len() as f64),
        }
    }
}

impl FromStr for MaxSlowdown {
    type Err = String;

    /// "5", "10", "50" (any number above 1: a penalty is never below 1 and
    /// Eq. 2 is strict), "unlimited" or "dynavgsd", in any case.
    fn from_str(text: &str) -> Result<MaxSlowdown, String> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "unlimited" => Ok(MaxSlowdown::Unlimited),
            "dynavgsd" => Ok(MaxSlowdown::DynAvgSd),
            _ => match t.parse::<f64>() {
                Ok(p) if p.is_finite() && p > 1.0 => Ok(MaxSlowdown::Static(p)),
                _ => Err(format!(
                    "MAX_SLOWDOWN={text} is not valid: expected a number above 1, 'unlimited' or 'dynavgsd'"
                )),
            },
        }
    }
}

/// A running job that could share its nodes: `nodes` is its weight w_i,
/// `penalty` its p_i and `end` its predicted end if it shares (start +
/// requested time + all its increase, this sharing's included, as in p_i).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Mate {
    pub id: JobId,
    pub nodes: u32,
    pub penalty: f64,
    pub end: Time,
}

/// The search's settings: P (from [`MaxSlowdown::cutoff`]; None for none),
/// m, the most mates in a choice (2 in the paper), and n_m, how many of the
/// lowest-penalty mates are tried (None for all).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct MateLimits {
    pub cutoff: Option<f64>,
    pub max_mates: usize,
    pub first: Option<usize>,
}

/// The mates chosen, lowest penalty first (ties by id), and their summed
/// penalties, the Performance Impact PI of Eq. 1.
#[derive(Clone, Debug, PartialEq)]
pub struct MateChoice {
    pub mates: Vec<JobId>,
    pub impact: f64,
}

/// Listing 2's pick_mates: the waiting job asks for `nodes` (W) and, started
/// now, is predicted to end at `end`. A mate may be chosen if p_i < P
/// (Eq. 2; a penalty that is not a number never is), it outlasts the new job
/// (`end <= mate.end`: the paper's rule that the new job ends inside its
/// mates, so none leaves it unbalanced or delays later bookings), and it
/// has 1 to W nodes. Those are sorted by p (ties by id) and the first n_m
/// kept. Of the choices of 1 to m of them whose nodes sum to exactly W
/// (Eq. 3), the one with the least Σ p_i (Eq. 1, unweighted: the public
/// code weighted p by nodes, the paper does not); on a tie the one with
/// fewer mates, then the one whose ids, sorted, come first. Sums are taken
/// in the sorted order, so equal choices sum equally. None if none fits.
pub fn pick_mates(nodes: u32, end: Time, candidates: &[Mate], limits: &MateLimits) -> Option<MateChoice> {
    let mut eligible: Vec<Mate> = candidates
        .iter()
        .filter(|m| {
            m.penalty.is_finite()
                && limits.cutoff.is_none_or(|p| m.penalty < p)
                && end <= m.end
                && (1..=nodes).contains(&m.nodes)
        })
        .copied()
        .collect();
    eligible.sort_by(|a, b| a.penalty.total_cmp(&b.penalty).then(a.id.cmp(&b.id)));
    eligible.truncate(limits.first.unwrap_or(usize::MAX));
    let mut best = None;
    choose(&eligible, 0, nodes, limits.max_mates, &mut Vec::new(), &mut best);
    best.map(|(impact, picks)| MateChoice { mates: picks.iter().map(|&i| eligible[i].id).collect(), impact })
}

/// The paper's recursion, m levels deep: extends `picks` (indices into
/// `eligible`, rising) with mates from `from` on that fit in `left` nodes.
fn choose(
    eligible: &[Mate],
    from: usize,
    left: u32,
    depth: usize,
    picks: &mut Vec<usize>,
    best: &mut Option<(f64, Vec<usize>)>,
) {
    if left == 0 {
        let impact = picks.iter().map(|&i| eligible[i].penalty).sum::<f64>();
        let ids = |p: &[usize]| {
            let mut ids: Vec<JobId> = p.iter().map(|&i| eligible[i].id).collect();
            ids.sort();
            ids
        };
        let better = best.as_ref().is_none_or(|(b, bp)| {
            impact.total_cmp(b).then(picks.len().cmp(&bp.len())).then_with(|| ids(picks).cmp(&ids(bp))).is_lt()
        });
        if !picks.is_empty() && better {
            *best = Some((impact, picks.clone()));
        }
        // Every mate has a node, so none more can join.
        return;
    }
    if depth == 0 {
        return;
    }
    for i in from..eligible.len() {
        if eligible[i].nodes <= left {
            picks.push(i);
            choose(eligible, i + 1, left - eligible[i].nodes, depth - 1, picks, best);
            picks.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mate(id: u32, nodes: u32, penalty: f64, end: Time) -> Mate {
        Mate { id: JobId(id), nodes, penalty, end }
    }

    fn limits(cutoff: Option<f64>, max_mates: usize) -> MateLimits {
        MateLimits { cutoff, max_mates, first: None }
    }

    #[test]
    fn penalty_is_the_predicted_slowdown() {
        // Waited 600 s, asked for 3600 s, shares for 1200 s more: 5400 / 3600.
        assert_eq!(penalty(600, 1200, 3600), Ok(1.5));
        assert_eq!(penalty(0, 0, 100), Ok(1.0));
        assert!(penalty(10, 0, 0).unwrap_err().contains("req_time=0"));
        assert!(penalty(-1, 0, 10).unwrap_err().contains("wait=-1"));
    }

    #[test]
    fn a_slot_with_every_requested_core_adds_nothing() {
        let full = Slot { time: 500, cpus_per_node: vec![4, 4] };
        assert_eq!(increase(RuntimeModel::Ideal, 4, std::slice::from_ref(&full)), Ok(0.0));
        assert_eq!(increase(RuntimeModel::Worst, 4, &[full]), Ok(0.0));
        assert_eq!(increase(RuntimeModel::Worst, 4, &[]), Ok(0.0));
    }

    #[test]
    fn ideal_rebalances_and_worst_follows_the_least_served_node() {
        // 4 cores asked per node; 300 s on 2+4 cores, then 100 s on 1+4.
        let slots = [Slot { time: 300, cpus_per_node: vec![2, 4] }, Slot { time: 100, cpus_per_node: vec![1, 4] }];
        // Ideal: 8/6·300 + 8/5·100 - 400 = 400 + 160 - 400.
        assert!((increase(RuntimeModel::Ideal, 4, &slots).unwrap() - 160.0).abs() < 1e-9);
        // Worst: 4/2·300 + 4/1·100 - 400 = 600 + 400 - 400.
        assert!((increase(RuntimeModel::Worst, 4, &slots).unwrap() - 600.0).abs() < 1e-9);
        let bad = [Slot { time: 10, cpus_per_node: vec![4, 0] }];
        assert!(increase(RuntimeModel::Ideal, 4, &bad).unwrap_err().contains("slot 0"));
        assert!(increase(RuntimeModel::Worst, 4, &[Slot { time: 10, cpus_per_node: vec![] }]).is_err());
        assert!(increase(RuntimeModel::Ideal, 0, &slots).unwrap_err().contains("req_cpus_per_node=0"));
    }

    #[test]
    fn sharing_takes_the_factor_rounded_down_and_leaves_a_core_per_rank() {
        let s = Sharing::new(48, 0.5, 1).unwrap();
        assert_eq!((s.taken(), s.kept()), (24, 24));
        let s = Sharing::new(5, 0.5, 1).unwrap();
        assert_eq!((s.taken(), s.kept()), (2, 3));
        // Four ranks per node: the mate keeps 4 of 6, whatever the factor.
        assert_eq!(Sharing::new(6, 0.9, 4).unwrap().taken(), 2);
        for sf in [0.0, 1.0, -0.5, f64::NAN] {
            assert!(Sharing::new(4, sf, 1).unwrap_err().contains("SharingFactor="), "{sf}");
        }
        assert!(Sharing::new(1, 0.5, 1).unwrap_err().contains("at least 1 of 1 cores"));
        assert!(Sharing::new(4, 0.5, 0).is_err());
        assert!(Sharing::new(3, 0.2, 1).unwrap_err().contains("takes no core"));
    }

    #[test]
    fn mate_and_new_job_increases() {
        let half = Sharing::new(4, 0.5, 1).unwrap();
        // Every node shared for 400 s at half pace: 200 s left for later.
        assert_eq!(half.mate_increase(RuntimeModel::Ideal, 4, 4, 400), Ok(200));
        assert_eq!(half.mate_increase(RuntimeModel::Worst, 4, 4, 400), Ok(200));
        // Two of four nodes shared: ideal goes at 12/16, worst at 2/4.
        assert_eq!(half.mate_increase(RuntimeModel::Ideal, 4, 2, 400), Ok(100));
        assert_eq!(half.mate_increase(RuntimeModel::Worst, 4, 2, 400), Ok(200));
        assert_eq!(half.mate_increase(RuntimeModel::Worst, 4, 0, 400), Ok(0));
        assert!(half.mate_increase(RuntimeModel::Ideal, 2, 3, 400).is_err());
        // The same as Eq. 5 and 6 over the slot of work done meanwhile.
        let slot = |time, cpus: Vec<u32>| [Slot { time, cpus_per_node: cpus }];
        assert!((increase(RuntimeModel::Ideal, 4, &slot(300, vec![2, 2, 4, 4])).unwrap() - 100.0).abs() < 1e-9);
        assert!((increase(RuntimeModel::Worst, 4, &slot(200, vec![2, 2, 4, 4])).unwrap() - 200.0).abs() < 1e-9);
        // 5 cores, 2 taken: the mate's 3 s over 7 s rounds up to 3 s.
        let odd = Sharing::new(5, 0.5, 1).unwrap();
        assert_eq!(odd.mate_increase(RuntimeModel::Worst, 1, 1, 7), Ok(3));
        // The new job runs 100 s of work on 2 of 4 cores (200 s), and on 2
        // of 5 cores (250 s).
        assert_eq!(half.new_job_increase(100), Ok(100));
        assert_eq!(odd.new_job_increase(100), Ok(150));
        assert!(half.new_job_increase(-1).is_err());
    }

    #[test]
    fn max_slowdown_parses_and_resolves() {
        assert_eq!("10".parse(), Ok(MaxSlowdown::Static(10.0)));
        assert_eq!(" Unlimited ".parse(), Ok(MaxSlowdown::Unlimited));
        assert_eq!("DynAVGSD".parse(), Ok(MaxSlowdown::DynAvgSd));
        for bad in ["", "1", "0", "-5", "inf", "NaN", "dyn", "10s"] {
            let e = bad.parse::<MaxSlowdown>().unwrap_err();
            assert!(e.starts_with(&format!("MAX_SLOWDOWN={bad} is not valid")), "{e}");
        }
        assert_eq!(MaxSlowdown::Static(5.0).cutoff(&[100.0]), Some(5.0));
        assert_eq!(MaxSlowdown::Unlimited.cutoff(&[2.0]), None);
        assert_eq!(MaxSlowdown::DynAvgSd.cutoff(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(MaxSlowdown::DynAvgSd.cutoff(&[]), None);
    }

    #[test]
    fn pick_mates_minimises_unweighted_impact() {
        // W = 4: mate 1 alone (Σp = 2) or mates 2 and 3 (Σp = 1.5 + 1.25).
        // Eq. 1 takes 1; weighted by nodes, as the public code does, 2 and 3
        // would win, 4.5 + 1.25 < 8.
        let ms = [mate(1, 4, 2.0, 800), mate(2, 3, 1.5, 900), mate(3, 1, 1.25, 900)];
        let pair = Some(MateChoice { mates: vec![JobId(3), JobId(2)], impact: 2.75 });
        assert_eq!(pick_mates(4, 500, &ms, &limits(None, 2)), Some(MateChoice { mates: vec![JobId(1)], impact: 2.0 }));
        // P = 2 is strict: 1 drops out, and the pair is chosen, lowest p first.
        assert_eq!(pick_mates(4, 500, &ms, &limits(Some(2.0), 2)), pair);
        // P = 1.5: 2 drops out too, and 3 alone has one node.
        assert_eq!(pick_mates(4, 500, &ms, &limits(Some(1.5), 2)), None);
        // The new job must end inside its mates: 1 ends at 800, 2 and 3 at 900.
        assert_eq!(pick_mates(4, 850, &ms, &limits(None, 2)), pair);
        assert_eq!(pick_mates(4, 900, &ms, &limits(None, 2)), pair);
        assert_eq!(pick_mates(4, 901, &ms, &limits(None, 2)), None);
        assert_eq!(pick_mates(4, 850, &ms, &limits(None, 1)), None);
        // Only the n_m lowest penalties tried: 3 and 2, then 3 alone.
        let first = |n| MateLimits { cutoff: None, max_mates: 2, first: Some(n) };
        assert_eq!(pick_mates(4, 500, &ms, &first(2)), pair);
        assert_eq!(pick_mates(4, 500, &ms, &first(1)), None);
    }

    #[test]
    fn ties_go_to_fewer_mates_then_lower_ids() {
        let ms = [mate(8, 2, 2.0, 900), mate(5, 1, 1.0, 900), mate(6, 1, 1.0, 900), mate(7, 2, 2.0, 900)];
        // {5, 6}, {7} and {8} all sum to 2: a single mate, the lower id,
        // though [5, 6] would come first by ids alone.
        assert_eq!(pick_mates(2, 0, &ms, &limits(None, 2)).unwrap().mates, vec![JobId(7)]);
        let ms = [mate(9, 1, 1.0, 900), mate(3, 1, 2.0, 900), mate(8, 1, 1.0, 900), mate(2, 1, 2.0, 900)];
        // {8, 9} sums to 2, below every pair with a 2 in it.
        assert_eq!(pick_mates(2, 0, &ms, &limits(None, 2)).unwrap().mates, vec![JobId(8), JobId(9)]);
        let ms = [mate(9, 1, 1.0, 900), mate(3, 1, 2.0, 900), mate(2, 1, 2.0, 900)];
        // {2, 9} and {3, 9} tie at 3: sorted ids [2, 9] come first.
        assert_eq!(pick_mates(2, 0, &ms, &limits(None, 2)).unwrap().mates, vec![JobId(9), JobId(2)]);
    }

    /// Every subset of at most m candidates, checked against the rules as
    /// written, the best by the documented order.
    fn brute_force(nodes: u32, end: Time, ms: &[Mate], l: &MateLimits) -> Option<(Vec<JobId>, f64)> {
        let ok = |m: &Mate| l.cutoff.is_none_or(|p| m.penalty < p) && end <= m.end && m.nodes <= nodes;
        let mut ranked: Vec<&Mate> = ms.iter().filter(|m| ok(m)).collect();
        ranked.sort_by(|a, b| a.penalty.total_cmp(&b.penalty).then(a.id.cmp(&b.id)));
        let tried: Vec<JobId> = ranked.iter().take(l.first.unwrap_or(usize::MAX)).map(|m| m.id).collect();
        let mut best: Option<(f64, usize, Vec<JobId>, Vec<JobId>)> = None;
        for set in 1u32..1 << ms.len() {
            let mut chosen: Vec<&Mate> = (0..ms.len()).filter(|i| set & (1 << i) != 0).map(|i| &ms[i]).collect();
            if chosen.len() > l.max_mates
                || chosen.iter().any(|m| !tried.contains(&m.id))
                || chosen.iter().map(|m| m.nodes).sum::<u32>() != nodes
            {
                continue;
            }
            chosen.sort_by(|a, b| a.penalty.total_cmp(&b.penalty).then(a.id.cmp(&b.id)));
            let impact = chosen.iter().map(|m| m.penalty).sum::<f64>();
            let order: Vec<JobId> = chosen.iter().map(|m| m.id).collect();
            let mut ids = order.clone();
            ids.sort();
            let key = (impact, chosen.len(), ids, order);
            if best.as_ref().is_none_or(|b| (key.0, key.1, &key.2) < (b.0, b.1, &b.2)) {
                best = Some(key);
            }
        }
        best.map(|(impact, _, _, order)| (order, impact))
    }

    fn case() -> impl Strategy<Value = (u32, Time, Vec<Mate>, MateLimits)> {
        // Penalties in quarters from 1 to 4, so that sums tie often, and exactly.
        let one = (1u32..=8, 4u32..=16, 0i64..1000);
        let ms = prop::collection::vec(one, 0..=12).prop_map(|v| {
            v.into_iter()
                .enumerate()
                // Ids unique and out of index order.
                .map(|(i, (n, q, end))| mate((i as u32 * 7) % 13 + 1, n, f64::from(q) / 4.0, end))
                .collect::<Vec<_>>()
        });
        let cutoff = prop_oneof![Just(None), (4u32..=25).prop_map(|q| Some(f64::from(q) / 4.0))];
        let first = prop_oneof![Just(None), (1usize..12).prop_map(Some)];
        (1u32..=16, 0i64..1000, ms, cutoff, 0usize..=3, first)
            .prop_map(|(w, end, ms, cutoff, max_mates, first)| (w, end, ms, MateLimits { cutoff, max_mates, first }))
    }

    proptest! {
        #[test]
        fn pick_mates_matches_brute_force((w, end, ms, l) in case()) {
            let got = pick_mates(w, end, &ms, &l);
            if let Some(c) = &got {
                let chosen: Vec<&Mate> = c.mates.iter().map(|id| ms.iter().find(|m| m.id == *id).unwrap()).collect();
                prop_assert!(!chosen.is_empty() && chosen.len() <= l.max_mates);
                prop_assert_eq!(chosen.iter().map(|m| m.nodes).sum::<u32>(), w);
                prop_assert!(chosen.iter().all(|m| l.cutoff.is_none_or(|p| m.penalty < p)));
                prop_assert!(chosen.iter().all(|m| end <= m.end));
            }
            prop_assert_eq!(got.map(|c| (c.mates, c.impact)), brute_force(w, end, &ms, &l));
        }
    }
}
