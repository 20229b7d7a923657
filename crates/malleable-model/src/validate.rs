//! Whether a pass's decisions can be carried out on the snapshot they were
//! made for: the one set of rules the simulator's engine (which stops on a
//! broken one: a strategy bug), the plugin (which applies the rest and logs
//! the broken ones) and the property tests hold every strategy to.
//!
//! The rules, in the order of the decisions (a later decision that conflicts
//! with an accepted earlier one is the one rejected, and a rejected decision
//! claims nothing):
//! - a job is decided at most once a pass;
//! - `Start`: the job is waiting; it gets at least one node; a rigid job gets
//!   exactly what it asks for (at least one), a malleable one that or any
//!   count its spec allows (a moldable start); a limit it is given lies
//!   between its `--time-min` and its own limit;
//! - `Expand`: the job runs, is malleable and is not adapting; it gets at
//!   least one node, and its new count is one its spec allows;
//! - `Shrink`: the same, and the nodes taken are distinct nodes of the job's,
//!   never its first one (the batch host, where its launcher runs);
//! - every node a `Start` or `Expand` hands out exists, is free and is handed
//!   out once, and the job may use it (its [`Placement`](crate::Placement));
//!   a `Start` gives the job every node it requires;
//! - `Share`: the job is waiting and its owner opted in to core sharing; it
//!   names at least one mate, each running, opted in, not adapting, alone on
//!   its nodes with all their cores and decided nowhere else in the pass;
//!   the job gets exactly every node of its mates, as many as it asks for,
//!   each one it may use (those it requires included); on each, the cores
//!   taken and kept are both at least one and add up to the node's; no
//!   limit shrinks (the job's is at least its own, a mate's at least its
//!   current one);
//! - `Place`: the job is waiting and asks for cores; the layout names
//!   distinct nodes it may use (those it requires included), gives it all
//!   its cores, at least one on each, on a count of nodes it allows; on each
//!   node the cores and the job's GPUs per node are within what the node
//!   has available ([`Node::cores_available`](crate::Node::cores_available))
//!   less what earlier places of the pass took, and no `Start` or `Expand`
//!   hands out a node that a `Place` took part of, nor the other way round;
//! - `Preempt`: the job is waiting; it names at least one victim, each
//!   distinct, one the job may preempt (`PendingJob::preempts`), running and
//!   decided nowhere else in the pass; it gets as many nodes as it asks
//!   for, each one it may use (those it requires included), each either free
//!   and handed out once or held by one of its victims; every victim holds
//!   at least one of them.

use std::collections::{HashMap, HashSet};

use crate::decision::Decision;
use crate::ids::{JobId, NodeIndex, Time};
use crate::job::{PendingJob, RunningJob};
use crate::placement::Placement;
use crate::sharing::MateShare;
use crate::snapshot::Snapshot;

/// A decision that cannot be carried out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// Its position in the pass's decisions.
    pub index: usize,
    pub decision: Decision,
    pub why: String,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JobId={}: {} rejected: {}", self.decision.job(), self.decision, self.why)
    }
}

/// `Ok` when every decision follows the rules (module docs), else every
/// rejection.
pub fn validate(s: &Snapshot, decisions: &[Decision]) -> Result<(), Vec<Rejection>> {
    let rejected = rejections(s, decisions);
    if rejected.is_empty() {
        Ok(())
    } else {
        Err(rejected)
    }
}

/// The decisions that break a rule, in order; the others can be applied.
pub fn rejections(s: &Snapshot, decisions: &[Decision]) -> Vec<Rejection> {
    if decisions.is_empty() {
        return Vec::new();
    }
    // Only the jobs decided on are looked up: one walk over each list, so a
    // pass over a long queue costs no more than reading it.
    let decided: HashSet<JobId> = decisions.iter().flat_map(|d| std::iter::once(d.job()).chain(mates_of(d))).collect();
    let pending: HashMap<JobId, &PendingJob> =
        s.pending.iter().filter(|p| decided.contains(&p.id)).map(|p| (p.id, p)).collect();
    let running: HashMap<JobId, &RunningJob> =
        s.running.iter().filter(|r| decided.contains(&r.id)).map(|r| (r.id, r)).collect();

    let mut seen_jobs = HashSet::new();
    let mut handed_out = HashSet::new();
    let mut parted: HashMap<NodeIndex, (u32, u32)> = HashMap::new();
    let mut rejected = Vec::new();
    for (index, d) in decisions.iter().enumerate() {
        let verdict = if seen_jobs.contains(&d.job()) {
            Err("the job is decided twice in one pass".to_string())
        } else if let Some(m) = mates_of(d).find(|m| seen_jobs.contains(m) || *m == d.job()) {
            Err(format!("{m}, which it names, is decided elsewhere in this pass"))
        } else {
            check(s, d, &pending, &running, &handed_out, &parted)
        };
        match verdict {
            Ok(claimed) => {
                seen_jobs.insert(d.job());
                seen_jobs.extend(mates_of(d));
                handed_out.extend(claimed.whole);
                for (i, cores, gpus) in claimed.part {
                    let taken = parted.entry(i).or_default();
                    taken.0 += cores;
                    taken.1 += gpus;
                }
            }
            Err(why) => rejected.push(Rejection { index, decision: d.clone(), why }),
        }
    }
    rejected
}

/// What a valid decision takes: whole nodes, and cores and GPUs of others.
#[derive(Default)]
struct Claim {
    whole: Vec<NodeIndex>,
    part: Vec<(NodeIndex, u32, u32)>,
}

impl From<Vec<NodeIndex>> for Claim {
    fn from(whole: Vec<NodeIndex>) -> Claim {
        Claim { whole, part: Vec::new() }
    }
}

/// One decision against the snapshot and what earlier decisions took
/// (`handed_out` whole, `parted` in cores and GPUs); what it takes when it
/// is valid.
fn check(
    s: &Snapshot,
    d: &Decision,
    pending: &HashMap<JobId, &PendingJob>,
    running: &HashMap<JobId, &RunningJob>,
    handed_out: &HashSet<NodeIndex>,
    parted: &HashMap<NodeIndex, (u32, u32)>,
) -> Result<Claim, String> {
    let taken = Taken { whole: handed_out, parted };
    match d {
        Decision::Start { job, nodes, time_limit } => {
            let p = pending.get(job).ok_or("the job is not waiting")?;
            if let Some(limit) = time_limit {
                let floor = p.time_min.unwrap_or(Time::MAX);
                if *limit < floor || p.time_limit.is_some_and(|own| *limit > own) {
                    return Err(format!(
                        "it would start with a {limit} s limit: only its --time-min ({}) up to its own limit ({}) may be given",
                        seconds(p.time_min),
                        seconds(p.time_limit)
                    ));
                }
            }
            let n = nodes.len();
            if n == 0 {
                return Err("it would start on no node".into());
            }
            let asked = p.size();
            match p.malleable {
                _ if n == asked => {}
                Some(spec) if spec.allows(n as u32) => {}
                Some(spec) => {
                    return Err(format!(
                        "it would start on {n} nodes: it asks for {asked}, and {n} is outside {}",
                        spec_text(&spec)
                    ))
                }
                None => return Err(format!("it would start on {n} nodes: it is rigid and asks for {asked}")),
            }
            free_and_unclaimed(s, nodes, &taken)?;
            starts_placed(s, p, nodes)?;
            Ok(nodes.clone().into())
        }
        Decision::Expand { job, add_nodes } => {
            let (r, spec) = resizable(running, *job)?;
            if add_nodes.is_empty() {
                return Err("it would add no node".into());
            }
            let after = r.nodes.len() + add_nodes.len();
            if !spec.allows(after as u32) {
                return Err(format!("it would run on {after} nodes, outside {}", spec_text(&spec)));
            }
            free_and_unclaimed(s, add_nodes, &taken)?;
            placed(s, &r.placement, add_nodes)?;
            Ok(add_nodes.clone().into())
        }
        Decision::Shrink { job, remove_nodes } => {
            let (r, spec) = resizable(running, *job)?;
            if remove_nodes.is_empty() {
                return Err("it would remove no node".into());
            }
            let mut distinct = HashSet::new();
            for &i in remove_nodes {
                if !r.nodes.contains(&i) {
                    return Err(format!("node {} is not the job's", node_name(s, i)));
                }
                if !distinct.insert(i) {
                    return Err(format!("node {} is removed twice", node_name(s, i)));
                }
            }
            if let Some(&first) = r.nodes.first() {
                if distinct.contains(&first) {
                    return Err(format!("node {} is its first node, where its batch script runs", node_name(s, first)));
                }
            }
            let after = r.nodes.len().saturating_sub(remove_nodes.len());
            if !spec.allows(after as u32) {
                return Err(format!("it would run on {after} nodes, outside {}", spec_text(&spec)));
            }
            Ok(Claim::default())
        }
        Decision::Share { job, nodes, cores, time_limit, mates } => {
            let p = pending.get(job).ok_or("the job is not waiting")?;
            check_share(s, p, nodes, *cores, *time_limit, mates, running).map(Claim::from)
        }
        Decision::Place { job, layout } => {
            let p = pending.get(job).ok_or("the job is not waiting")?;
            check_place(s, p, layout, &taken)
        }
        Decision::Preempt { job, nodes, victims } => {
            let p = pending.get(job).ok_or("the job is not waiting")?;
            check_preempt(s, p, nodes, victims, running, &taken).map(Claim::from)
        }
    }
}

/// What the pass's earlier decisions took.
struct Taken<'a> {
    whole: &'a HashSet<NodeIndex>,
    parted: &'a HashMap<NodeIndex, (u32, u32)>,
}

/// A `Place`'s rules (module docs), with its pending job.
fn check_place(s: &Snapshot, p: &PendingJob, layout: &[(NodeIndex, u32)], taken: &Taken) -> Result<Claim, String> {
    let req = p.cores.ok_or("it asks for whole nodes: only a job that asks for cores is placed on part of nodes")?;
    if layout.is_empty() {
        return Err("it would start on no node".into());
    }
    req.fits(layout)?;
    let mut mine = HashSet::new();
    let mut part = Vec::with_capacity(layout.len());
    for &(i, cores) in layout {
        let Some(node) = s.nodes.get(i) else {
            return Err(format!("node index {i} does not exist (the cluster has {} nodes)", s.nodes.len()));
        };
        if taken.whole.contains(&i) || !mine.insert(i) {
            return Err(format!("node {} is handed out twice", node.name));
        }
        let (cores_before, gpus_before) = taken.parted.get(&i).copied().unwrap_or_default();
        let cores_left = node.cores_available().saturating_sub(cores_before);
        let gpus_left = node.gpus_available().saturating_sub(gpus_before);
        if cores > cores_left || req.gpus_per_node > gpus_left {
            return Err(format!(
                "node {} has {cores_left} cores and {gpus_left} GPUs left: it would take {cores} and {}",
                node.name, req.gpus_per_node
            ));
        }
        part.push((i, cores, req.gpus_per_node));
    }
    let nodes: Vec<NodeIndex> = layout.iter().map(|&(i, _)| i).collect();
    starts_placed(s, p, &nodes)?;
    Ok(Claim { whole: Vec::new(), part })
}

/// The running jobs a decision names besides its own: a `Share`'s mates, a
/// `Preempt`'s victims.
fn mates_of(d: &Decision) -> Box<dyn Iterator<Item = JobId> + '_> {
    match d {
        Decision::Share { mates, .. } => Box::new(mates.iter().map(|m: &MateShare| m.job)),
        Decision::Preempt { victims, .. } => Box::new(victims.iter().copied()),
        _ => Box::new(std::iter::empty()),
    }
}

/// A `Preempt`'s rules (module docs), with its pending job; the free nodes
/// it takes.
fn check_preempt(
    s: &Snapshot,
    p: &PendingJob,
    nodes: &[NodeIndex],
    victims: &[JobId],
    running: &HashMap<JobId, &RunningJob>,
    taken: &Taken,
) -> Result<Vec<NodeIndex>, String> {
    if victims.is_empty() {
        return Err("it names no job to preempt".into());
    }
    let mut held = HashMap::new();
    for (k, v) in victims.iter().enumerate() {
        if victims[..k].contains(v) {
            return Err(format!("it names {v} twice"));
        }
        if !p.preempts.contains(v) {
            return Err(format!("{v} is not a job it may preempt"));
        }
        let r = running.get(v).ok_or_else(|| format!("{v}, to be preempted, is not running"))?;
        held.extend(r.nodes.iter().map(|&i| (i, *v)));
    }
    if nodes.len() != p.size() {
        return Err(format!("it would start on {} nodes: it asks for {}", nodes.len(), p.size()));
    }
    let (theirs, free): (Vec<NodeIndex>, Vec<NodeIndex>) = nodes.iter().partition(|i| held.contains_key(i));
    let mut distinct = HashSet::new();
    if let Some(i) = theirs.iter().find(|&&i| !distinct.insert(i)) {
        return Err(format!("node {} is handed out twice", node_name(s, *i)));
    }
    free_and_unclaimed(s, &free, taken)?;
    if let Some(v) = victims.iter().find(|v| !theirs.iter().any(|i| held[i] == **v)) {
        return Err(format!("it would preempt {v} and use none of its nodes"));
    }
    starts_placed(s, p, nodes)?;
    Ok(free)
}

/// A `Share`'s rules (module docs), with its pending job.
fn check_share(
    s: &Snapshot,
    p: &PendingJob,
    nodes: &[NodeIndex],
    cores: u32,
    time_limit: Time,
    mates: &[MateShare],
    running: &HashMap<JobId, &RunningJob>,
) -> Result<Vec<NodeIndex>, String> {
    if !p.share_cores {
        return Err("its owner did not let it share nodes (--malleable-cores)".into());
    }
    if mates.is_empty() {
        return Err("it names no mate".into());
    }
    if p.time_limit.is_some_and(|own| time_limit < own) {
        return Err(format!("its limit would shrink to {time_limit} s from {}", seconds(p.time_limit)));
    }
    let mut covered = HashSet::new();
    for m in mates {
        let r = running.get(&m.job).ok_or_else(|| format!("its mate {} is not running", m.job))?;
        if !r.sharing.opted_in {
            return Err(format!("its mate {} was not let share its nodes (--malleable-cores)", m.job));
        }
        if r.adapting || !r.sharing.alone() {
            return Err(format!("its mate {} is adapting or shares its nodes already", m.job));
        }
        if r.end_limit.is_some_and(|e| m.end_limit < e) {
            return Err(format!("its mate {}'s limit would shrink to {}", m.job, m.end_limit));
        }
        for &i in &r.nodes {
            let node_cores = s.nodes.get(i).map_or(0, |n| n.cores);
            if cores == 0 || m.kept == 0 || u64::from(cores) + u64::from(m.kept) != u64::from(node_cores) {
                return Err(format!(
                    "on node {} it would take {cores} cores and mate {} keep {}: both at least 1, adding up to its {node_cores}",
                    node_name(s, i),
                    m.job,
                    m.kept
                ));
            }
            if !covered.insert(i) {
                return Err(format!("node {} is counted twice among its mates' nodes", node_name(s, i)));
            }
        }
    }
    let given: HashSet<NodeIndex> = nodes.iter().copied().collect();
    if given != covered || given.len() != nodes.len() {
        return Err("its nodes are not exactly its mates' nodes".into());
    }
    if nodes.len() != p.size() {
        return Err(format!("it would start on {} nodes: it asks for {}", nodes.len(), p.size()));
    }
    starts_placed(s, p, nodes)?;
    Ok(nodes.to_vec())
}

/// The running, malleable, not adapting job a resize names.
fn resizable<'a>(
    running: &HashMap<JobId, &'a RunningJob>,
    job: JobId,
) -> Result<(&'a RunningJob, crate::MalleableSpec), String> {
    let r = running.get(&job).ok_or("the job is not running")?;
    let spec = r.malleable.ok_or("the job is rigid")?;
    if r.adapting {
        return Err("the job is adapting already".into());
    }
    if !r.sharing.alone() {
        return Err("the job shares its nodes' cores".into());
    }
    Ok((r, spec))
}

/// A limit in seconds for a message, or "none".
fn seconds(t: Option<Time>) -> String {
    t.map_or("none".into(), |t| format!("{t} s"))
}

/// Every one of `nodes` is one the job may use.
fn placed(s: &Snapshot, p: &Placement, nodes: &[NodeIndex]) -> Result<(), String> {
    match nodes.iter().find(|&&i| !p.allows(i)) {
        Some(&i) => {
            Err(format!("node {} is not one the job may use (its partition, less what it excludes)", node_name(s, i)))
        }
        None => Ok(()),
    }
}

/// A waiting job started on `nodes`: each one it may use, and every one it
/// requires among them.
fn starts_placed(s: &Snapshot, p: &PendingJob, nodes: &[NodeIndex]) -> Result<(), String> {
    placed(s, &p.placement, nodes)?;
    match p.placement.required.iter().find(|r| !nodes.contains(r)) {
        Some(&r) => Err(format!("it would start without node {}, which it requires", node_name(s, r))),
        None => Ok(()),
    }
}

fn free_and_unclaimed(s: &Snapshot, nodes: &[NodeIndex], taken: &Taken) -> Result<(), String> {
    let mut mine = HashSet::new();
    for &i in nodes {
        let Some(node) = s.nodes.get(i) else {
            return Err(format!("node index {i} does not exist (the cluster has {} nodes)", s.nodes.len()));
        };
        if !node.free {
            return Err(format!("node {} is not free", node.name));
        }
        if taken.whole.contains(&i) || taken.parted.contains_key(&i) || !mine.insert(i) {
            return Err(format!("node {} is handed out twice", node.name));
        }
    }
    Ok(())
}

fn node_name(s: &Snapshot, i: NodeIndex) -> String {
    s.nodes.get(i).map_or_else(|| format!("index {i}"), |n| n.name.to_string())
}

fn spec_text(spec: &crate::MalleableSpec) -> String {
    format!("its range {}..{} ({})", spec.min, spec.max, spec.constraint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreRequest, MalleableSpec, Node, NodeConstraint};

    fn even(min: u32, max: u32) -> MalleableSpec {
        MalleableSpec { min, max, constraint: NodeConstraint::Even }
    }

    /// 6 nodes: 0-1 held by rigid job 10, 2-3 by malleable job 11 (even,
    /// 2..4), 4-5 free. Waiting: rigid 1 (1 node), malleable 2 (asks 2, even).
    fn cluster() -> Snapshot {
        Snapshot {
            now: 100,
            nodes: Node::numbered([false, false, false, false, true, true]),
            running: vec![RunningJob::new(10, [0, 1]), RunningJob::new(11, [2, 3]).malleable(even(2, 4))],
            pending: vec![PendingJob::new(1, 1), PendingJob::new(2, 2).malleable(even(2, 4))],
            power: None,
        }
    }

    fn start(job: u32, nodes: &[usize]) -> Decision {
        Decision::Start { job: JobId(job), nodes: nodes.to_vec(), time_limit: None }
    }
    fn expand(job: u32, nodes: &[usize]) -> Decision {
        Decision::Expand { job: JobId(job), add_nodes: nodes.to_vec() }
    }
    fn shrink(job: u32, nodes: &[usize]) -> Decision {
        Decision::Shrink { job: JobId(job), remove_nodes: nodes.to_vec() }
    }

    fn why(s: &Snapshot, ds: &[Decision]) -> Vec<(usize, String)> {
        rejections(s, ds).into_iter().map(|r| (r.index, r.why)).collect()
    }

    #[test]
    fn valid_decisions_pass() {
        let s = cluster();
        assert!(validate(&s, &[start(1, &[4])]).is_ok());
        assert!(validate(&s, &[start(2, &[4, 5])]).is_ok());
        assert!(validate(&s, &[expand(11, &[4, 5])]).is_ok());
        assert!(validate(&s, &[]).is_ok());
    }

    #[test]
    fn starts_need_a_waiting_job_free_nodes_and_the_right_count() {
        let s = cluster();
        assert_eq!(why(&s, &[start(10, &[4])]), vec![(0, "the job is not waiting".into())]);
        assert_eq!(why(&s, &[start(1, &[])]), vec![(0, "it would start on no node".into())]);
        assert_eq!(
            why(&s, &[start(1, &[4, 5])]),
            vec![(0, "it would start on 2 nodes: it is rigid and asks for 1".into())]
        );
        assert_eq!(why(&s, &[start(1, &[3])]), vec![(0, "node n3 is not free".into())]);
        assert_eq!(
            why(&s, &[start(1, &[9])]),
            vec![(0, "node index 9 does not exist (the cluster has 6 nodes)".into())]
        );
        // A malleable job may start on another count its spec allows, not on one it does not.
        let mut s = cluster();
        s.pending[1].nodes = 3;
        assert!(validate(&s, &[start(2, &[4, 5])]).is_ok(), "a moldable start on an allowed count");
        s.nodes[3].free = true;
        s.running[1].nodes = vec![2];
        assert!(validate(&s, &[start(2, &[3, 4, 5])]).is_ok(), "its own --nodes, whatever its constraint");
        assert_eq!(
            why(&s, &[start(2, &[3])]),
            vec![(0, "it would start on 1 nodes: it asks for 3, and 1 is outside its range 2..4 (even)".into())]
        );
    }

    #[test]
    fn a_job_gets_only_nodes_it_may_use_and_every_one_it_requires() {
        let mut s = cluster();
        s.pending[0].placement = Placement::only([0, 1, 5]);
        assert!(validate(&s, &[start(1, &[5])]).is_ok());
        assert_eq!(
            why(&s, &[start(1, &[4])]),
            vec![(0, "node n4 is not one the job may use (its partition, less what it excludes)".into())]
        );
        s.pending[0].placement = Placement::anywhere().requiring([5]);
        assert_eq!(why(&s, &[start(1, &[4])]), vec![(0, "it would start without node n5, which it requires".into())]);
        // A shorter limit only down to its --time-min.
        s.pending[0] = PendingJob::new(1, 1).time_limit(Some(600)).time_min(Some(120));
        let short = |t| Decision::Start { job: JobId(1), nodes: vec![4], time_limit: Some(t) };
        assert!(validate(&s, &[short(120)]).is_ok());
        assert_eq!(
            why(&s, &[short(60)]),
            vec![(0, "it would start with a 60 s limit: only its --time-min (120 s) up to its own limit (600 s) may be given".into())]
        );
        s.running[1].placement = Placement::only([2, 3, 4]);
        assert_eq!(
            why(&s, &[expand(11, &[4, 5])]),
            vec![(0, "node n5 is not one the job may use (its partition, less what it excludes)".into())]
        );
    }

    #[test]
    fn a_node_is_handed_out_once_and_a_job_decided_once() {
        let s = cluster();
        assert_eq!(why(&s, &[start(1, &[4]), expand(11, &[4, 5])]), vec![(1, "node n4 is handed out twice".into())]);
        assert_eq!(why(&s, &[start(2, &[5, 5])]), vec![(0, "node n5 is handed out twice".into())]);
        assert_eq!(
            why(&s, &[start(1, &[4]), start(1, &[5])]),
            vec![(1, "the job is decided twice in one pass".into())]
        );
        // A rejected decision claims nothing: the later start gets node 4.
        assert_eq!(why(&s, &[start(1, &[4, 5]), start(2, &[4, 5])]).len(), 1);
    }

    #[test]
    fn resizes_need_a_running_malleable_steady_job_and_an_allowed_count() {
        let mut s = cluster();
        assert_eq!(why(&s, &[expand(10, &[4])]), vec![(0, "the job is rigid".into())]);
        assert_eq!(why(&s, &[expand(1, &[4])]), vec![(0, "the job is not running".into())]);
        assert_eq!(
            why(&s, &[expand(11, &[4])]),
            vec![(0, "it would run on 3 nodes, outside its range 2..4 (even)".into())]
        );
        assert_eq!(why(&s, &[expand(11, &[])]), vec![(0, "it would add no node".into())]);
        assert_eq!(
            why(&s, &[shrink(11, &[3])]),
            vec![(0, "it would run on 1 nodes, outside its range 2..4 (even)".into())]
        );
        s.running[1].adapting = true;
        assert_eq!(why(&s, &[expand(11, &[4, 5])]), vec![(0, "the job is adapting already".into())]);
    }

    #[test]
    fn a_shrink_takes_distinct_nodes_of_the_job_but_never_its_first() {
        let mut s = cluster();
        s.running[1] =
            RunningJob::new(11, [2, 3]).malleable(MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::None });
        assert!(validate(&s, &[shrink(11, &[3])]).is_ok());
        assert_eq!(
            why(&s, &[shrink(11, &[2])]),
            vec![(0, "node n2 is its first node, where its batch script runs".into())]
        );
        assert_eq!(why(&s, &[shrink(11, &[4])]), vec![(0, "node n4 is not the job's".into())]);
        assert_eq!(why(&s, &[shrink(11, &[3, 3])]), vec![(0, "node n3 is removed twice".into())]);
        assert_eq!(why(&s, &[shrink(11, &[])]), vec![(0, "it would remove no node".into())]);
    }

    #[test]
    fn rejections_say_the_job_and_the_decision() {
        let s = cluster();
        let r = &rejections(&s, &[start(1, &[3])])[0];
        assert_eq!(r.to_string(), "JobId=1: start on 1 nodes rejected: node n3 is not free");
    }

    fn preempt(job: u32, nodes: &[usize], victims: &[u32]) -> Decision {
        Decision::Preempt {
            job: JobId(job),
            nodes: nodes.to_vec(),
            victims: victims.iter().map(|&v| JobId(v)).collect(),
        }
    }

    #[test]
    fn a_preempt_takes_free_nodes_and_its_victims_nodes_only() {
        let mut s = cluster();
        // Waiting 3 (3 nodes) may preempt 10 and 11.
        s.pending.push(PendingJob::new(3, 3).preempting([10, 11]));
        assert!(why(&s, &[preempt(3, &[4, 0, 1], &[10])]).is_empty());
        assert!(why(&s, &[preempt(3, &[0, 2, 3], &[10, 11])]).is_empty());
        let cases: [(Decision, &str); 8] = [
            (preempt(3, &[4, 5, 0], &[]), "it names no job to preempt"),
            (preempt(3, &[4, 5, 0], &[10, 10]), "it names 10 twice"),
            (preempt(1, &[0], &[10]), "10 is not a job it may preempt"),
            (preempt(3, &[4, 0], &[10]), "it would start on 2 nodes: it asks for 3"),
            (preempt(3, &[4, 0, 2], &[10]), "node n2 is not free"),
            (preempt(3, &[4, 0, 0], &[10]), "node n0 is handed out twice"),
            (preempt(3, &[4, 5, 0], &[10, 11]), "it would preempt 11 and use none of its nodes"),
            (preempt(9, &[4, 5, 0], &[10]), "the job is not waiting"),
        ];
        for (d, expected) in cases {
            assert_eq!(why(&s, std::slice::from_ref(&d)), vec![(0, expected.to_string())], "{d:?}");
        }
        // A victim is decided once, and a free node handed out once.
        assert_eq!(
            why(&s, &[expand(11, &[4, 5]), preempt(3, &[0, 1, 2], &[10, 11])]),
            vec![(1, "11, which it names, is decided elsewhere in this pass".to_string())]
        );
        assert_eq!(
            why(&s, &[start(1, &[4]), preempt(3, &[4, 0, 1], &[10])]),
            vec![(1, "node n4 is handed out twice".to_string())]
        );
    }

    /// 4 nodes of 4 cores: opted-in 10 on 0-1 (limit 1000), opted-in 11 on
    /// 2, 12 on 3 (not opted in). Waiting: 1 (3 nodes, opted in, 100 s), 2
    /// (1 node, not opted in).
    fn sharing_cluster() -> Snapshot {
        use crate::CoreSharing;
        Snapshot {
            now: 100,
            nodes: Node::numbered_with_cores([false; 4], 4),
            running: vec![
                RunningJob::new(10, [0, 1]).end_limit(Some(1000)).sharing(CoreSharing::opted_in(5)),
                RunningJob::new(11, [2]).end_limit(Some(1000)).sharing(CoreSharing::opted_in(5)),
                RunningJob::new(12, [3]),
            ],
            pending: vec![PendingJob::new(1, 3).time_limit(Some(100)).share_cores(true), PendingJob::new(2, 1)],
            power: None,
        }
    }

    fn share(job: u32, nodes: &[usize], cores: u32, mates: &[(u32, u32)]) -> Decision {
        Decision::Share {
            job: JobId(job),
            nodes: nodes.to_vec(),
            cores,
            time_limit: 200,
            mates: mates.iter().map(|&(m, kept)| MateShare { job: JobId(m), kept, end_limit: 1100 }).collect(),
        }
    }

    #[test]
    fn a_share_takes_exactly_its_mates_nodes_with_cores_that_add_up() {
        let s = sharing_cluster();
        assert_eq!(validate(&s, &[share(1, &[2, 0, 1], 2, &[(10, 2), (11, 2)])]), Ok(()));
        assert_eq!(validate(&s, &[share(1, &[0, 1, 2], 1, &[(10, 3), (11, 3)])]), Ok(()));
        let bad = [
            (
                share(1, &[0, 1, 2], 2, &[(10, 2), (11, 1)]),
                "on node n2 it would take 2 cores and mate 11 keep 1: both at least 1, adding up to its 4",
            ),
            (
                share(1, &[0, 1, 2], 4, &[(10, 0), (11, 0)]),
                "on node n0 it would take 4 cores and mate 10 keep 0: both at least 1, adding up to its 4",
            ),
            (share(1, &[0, 1, 3], 2, &[(10, 2), (11, 2)]), "its nodes are not exactly its mates' nodes"),
            (share(1, &[0, 1], 2, &[(10, 2)]), "it would start on 2 nodes: it asks for 3"),
            (
                share(1, &[0, 1, 2, 3], 2, &[(10, 2), (11, 2), (12, 2)]),
                "its mate 12 was not let share its nodes (--malleable-cores)",
            ),
            (share(1, &[0, 1, 2], 2, &[(10, 2), (11, 2), (9, 2)]), "its mate 9 is not running"),
            (share(1, &[2], 2, &[]), "it names no mate"),
            (share(2, &[2], 2, &[(11, 2)]), "its owner did not let it share nodes (--malleable-cores)"),
            (share(10, &[2], 2, &[(11, 2)]), "the job is not waiting"),
        ];
        for (d, want) in bad {
            assert_eq!(why(&s, std::slice::from_ref(&d)), vec![(0, want.to_string())], "{d:?}");
        }
    }

    #[test]
    fn a_share_shrinks_no_limit_and_its_mates_are_decided_once() {
        let s = sharing_cluster();
        let mut short = share(1, &[0, 1, 2], 2, &[(10, 2), (11, 2)]);
        if let Decision::Share { time_limit, .. } = &mut short {
            *time_limit = 99;
        }
        assert_eq!(why(&s, &[short]), vec![(0, "its limit would shrink to 99 s from 100 s".to_string())]);
        let mut mate_short = share(1, &[0, 1, 2], 2, &[(10, 2), (11, 2)]);
        if let Decision::Share { mates, .. } = &mut mate_short {
            mates[1].end_limit = 999;
        }
        assert_eq!(why(&s, &[mate_short]), vec![(0, "its mate 11's limit would shrink to 999".to_string())]);
        // The same mate twice: the second share is rejected; so is a start
        // of the waiting job already started by a share.
        let mut s2 = s.clone();
        s2.pending.push(PendingJob::new(3, 1).share_cores(true));
        let ds = [share(1, &[0, 1, 2], 2, &[(10, 2), (11, 2)]), share(3, &[2], 2, &[(11, 2)]), start(1, &[3])];
        assert_eq!(
            why(&s2, &ds),
            vec![
                (1, "11, which it names, is decided elsewhere in this pass".to_string()),
                (2, "the job is decided twice in one pass".to_string())
            ]
        );
    }

    #[test]
    fn a_mate_already_sharing_or_a_sharing_job_resized_is_rejected() {
        let mut s = sharing_cluster();
        s.running[1].sharing.with = vec![JobId(7)];
        assert_eq!(
            why(&s, &[share(1, &[0, 1, 2], 2, &[(10, 2), (11, 2)])]),
            vec![(0, "its mate 11 is adapting or shares its nodes already".to_string())]
        );
        s.running[1].malleable = Some(even(1, 4));
        assert_eq!(why(&s, &[shrink(11, &[2])]), vec![(0, "the job shares its nodes' cores".to_string())]);
        assert_eq!(s.running[1].resizable(), None);
    }

    /// 3 nodes of 8 cores and 2 GPUs: n0 free, n1 with 3 cores and 1 GPU
    /// spare (jobs placed on the rest), n2 held whole. Waiting: 1 asks 10
    /// cores and a GPU a node on 1 to 3 nodes, 2 a whole node, 3 four cores
    /// (no GPU) on 1 or 2 nodes.
    fn cores_cluster() -> Snapshot {
        let mut nodes = Node::numbered_with([true, false, false], 8, 2);
        nodes[1].spare_cores = 3;
        nodes[1].spare_gpus = 1;
        let ask = |cores, gpus_per_node, max_nodes| CoreRequest { cores, gpus_per_node, min_nodes: 1, max_nodes };
        Snapshot {
            now: 0,
            nodes,
            running: Vec::new(),
            pending: vec![
                PendingJob::new(1, 2).asking_cores(ask(10, 1, 3)),
                PendingJob::new(2, 1),
                PendingJob::new(3, 1).asking_cores(ask(4, 0, 2)),
            ],
            power: None,
        }
    }

    fn place(job: u32, layout: &[(usize, u32)]) -> Decision {
        Decision::Place { job: JobId(job), layout: layout.to_vec() }
    }

    #[test]
    fn a_place_takes_cores_and_gpus_within_what_each_node_has_left() {
        let s = cores_cluster();
        assert!(validate(&s, &[place(1, &[(0, 8), (1, 2)])]).is_ok());
        assert!(validate(&s, &[place(1, &[(0, 7), (1, 3)]), place(3, &[(0, 1)])]).is_err(), "job 3 asks 4 cores");
        assert!(validate(&s, &[place(1, &[(0, 6), (1, 3), (0, 1)])]).is_err());
        assert_eq!(
            why(&s, &[place(1, &[(0, 8), (1, 2)]), start(2, &[0]), place(3, &[(1, 1), (0, 3)])]),
            vec![
                (1, "node n0 is handed out twice".to_string()),
                (2, "node n0 has 0 cores and 1 GPUs left: it would take 3 and 0".to_string())
            ]
        );
        // What a place leaves of a node is what the next one may take.
        assert!(validate(&s, &[place(1, &[(0, 8), (1, 2)]), place(3, &[(1, 1), (0, 0)])]).is_err());
        assert_eq!(
            why(&s, &[place(3, &[(1, 3), (0, 1)]), place(1, &[(0, 7), (1, 3)])]),
            vec![(1, "node n1 has 0 cores and 1 GPUs left: it would take 3 and 1".to_string())]
        );
        assert_eq!(
            why(&s, &[place(1, &[(2, 8), (0, 2)])]),
            vec![(0, "node n2 has 0 cores and 0 GPUs left: it would take 8 and 1".to_string())]
        );
        assert_eq!(
            why(&s, &[place(2, &[(0, 8)])]),
            vec![(0, "it asks for whole nodes: only a job that asks for cores is placed on part of nodes".to_string())]
        );
        assert_eq!(
            why(&s, &[place(1, &[(0, 9), (1, 1)])]),
            vec![(0, "node n0 has 8 cores and 2 GPUs left: it would take 9 and 1".to_string())]
        );
        assert_eq!(why(&s, &[place(1, &[(0, 8)])]), vec![(0, "it would get 8 cores: it asks for 10".to_string())]);
        assert_eq!(why(&s, &[place(9, &[(0, 8)])]), vec![(0, "the job is not waiting".to_string())]);
        // A start first: the place may not take part of its node.
        assert_eq!(
            why(&s, &[start(2, &[0]), place(3, &[(0, 4)])]),
            vec![(1, "node n0 is handed out twice".to_string())]
        );
    }
}
