//! Property tests of the constraint arithmetic and of the malleable strategies
//! on random consistent snapshots: never oversubscribed, resizes always within
//! [min, max] and on-constraint, and no resize while any job is ADAPTING.

use malleable_core::{StrategyChoice, REGISTRY};
use malleable_model::{
    validate, Decision, JobId, MalleableSpec, Node, NodeConstraint, PendingJob, Placement, RunningJob, Snapshot,
};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

fn constraint() -> impl Strategy<Value = NodeConstraint> {
    prop::sample::select(NodeConstraint::ALL.to_vec())
}

fn spec() -> impl Strategy<Value = MalleableSpec> {
    (1u32..6, 0u32..12, constraint()).prop_map(|(min, extra, constraint)| MalleableSpec {
        min,
        max: min + extra,
        constraint,
    })
}

/// A cluster of up to 12 nodes, each free or held by one of up to 4 running
/// jobs (some malleable, each holding a count its spec allows where possible),
/// and up to 6 pending jobs.
fn snapshot() -> impl Strategy<Value = Snapshot> {
    let running = prop::collection::vec(
        (1usize..6, prop::option::of(spec()), any::<bool>(), prop::option::of(0.0f64..3.0), 0i64..100),
        0..4,
    );
    let pending = prop::collection::vec((1u32..10, prop::option::of(spec()), prop::option::of(1i64..500)), 0..6);
    (0usize..5, running, pending, any::<bool>()).prop_map(|(spare, running, pending, adapting_ok)| {
        let mut nodes = Vec::new();
        let mut run = Vec::new();
        for (k, (size, spec, adapting, mtct, start)) in running.into_iter().enumerate() {
            // A malleable job holds a count its spec allows, if any exists near `size`.
            let size = match spec {
                Some(sp) => (sp.min..=sp.max)
                    .find(|&n| sp.allows(n) && n as usize >= size)
                    .or_else(|| sp.highest_valid())
                    .unwrap_or(sp.min) as usize,
                None => size,
            };
            let first = nodes.len();
            nodes.extend((0..size).map(|_| false));
            let job = RunningJob::new(100 + k as u32, first..first + size).start(start);
            let job = job.end_limit(Some(1000 + 50 * k as i64)).malleable(spec).mtct_ratio(mtct);
            run.push(job.adapting(adapting && adapting_ok && spec.is_some()));
        }
        nodes.extend((0..spare).map(|_| true));
        let pending = pending
            .into_iter()
            .enumerate()
            .map(|(i, (n, malleable, time_limit))| {
                PendingJob::new(i as u32 + 1, n).submit(i as i64).time_limit(time_limit).malleable(malleable)
            })
            .collect();
        Snapshot { now: 500, nodes: Node::numbered(nodes), running: run, pending, power: None }
    })
}

/// [`snapshot`] with each job confined to some nodes or free to use any
/// (the plugin's partitions, `--exclude`), waiting ones with some required
/// nodes among those (`--nodelist`), as few as their size allows.
fn placed_snapshot() -> impl Strategy<Value = Snapshot> {
    snapshot().prop_flat_map(|s| {
        let n = s.nodes.len();
        let one = (any::<bool>(), prop::collection::vec(any::<bool>(), n), prop::collection::vec(0u8..6, n));
        let jobs = s.pending.len() + s.running.len();
        (Just(s), prop::collection::vec(one, jobs)).prop_map(|(mut s, placements)| {
            let mut it = placements.into_iter();
            let mut place = |size: usize, running: bool| {
                let (confined, allow, require) = it.next().unwrap();
                let allowed: Vec<usize> = (0..allow.len()).filter(|&i| !confined || allow[i]).collect();
                let required: Vec<usize> =
                    allowed.iter().copied().filter(|&i| !running && require[i] == 0).take(size).collect();
                let p = if confined { Placement::only(allowed) } else { Placement::anywhere() };
                p.requiring(required)
            };
            for j in &mut s.pending {
                j.placement = place(j.size(), false);
            }
            for j in &mut s.running {
                // Where it runs is where it was allowed to.
                let mut p = place(0, true);
                if let Some(a) = &mut p.allowed {
                    a.extend(j.nodes.iter().copied());
                    p = Placement::only(a.clone());
                }
                j.placement = p;
            }
            s
        })
    })
}

/// Applies the decisions' node bookkeeping and checks every invariant.
fn check(kind: &str, s: &Snapshot, ds: &[Decision]) -> Result<(), TestCaseError> {
    prop_assert_eq!(validate(s, ds), Ok(()), "{}", kind);
    let free: HashSet<usize> = s.free_nodes().into_iter().collect();
    let mut handed_out = HashSet::new();
    let mut touched = HashSet::new();
    let running: HashMap<JobId, &RunningJob> = s.running.iter().map(|j| (j.id, j)).collect();
    let any_adapting = s.running.iter().any(|j| j.adapting);
    for d in ds {
        prop_assert!(touched.insert(d.job()), "job {} decided twice", d.job());
        match d {
            Decision::Start { job, nodes, .. } => {
                let p = s.pending.iter().find(|p| p.id == *job).expect("started job is pending");
                let asked = p.nodes.max(1) as usize;
                match (kind, p.malleable) {
                    // mtct-backfill may start a malleable job on fewer nodes,
                    // on a count its spec allows.
                    ("mtct-backfill", Some(spec)) if nodes.len() != asked => {
                        prop_assert!(
                            nodes.len() < asked && spec.allows(nodes.len() as u32),
                            "moldable start on {} of {} nodes off {:?}",
                            nodes.len(),
                            asked,
                            spec
                        );
                    }
                    // natural-plan starts one wider, as Slurm starts --nodes=min-max.
                    ("natural-plan", Some(spec)) if nodes.len() != asked => {
                        prop_assert!(
                            nodes.len() > asked && spec.allows(nodes.len() as u32),
                            "wide start on {} of {} nodes off {:?}",
                            nodes.len(),
                            asked,
                            spec
                        );
                    }
                    _ => prop_assert_eq!(nodes.len(), asked, "starts at its --nodes"),
                }
                for i in nodes {
                    prop_assert!(free.contains(i) && handed_out.insert(*i), "node {} not free", i);
                }
            }
            Decision::Expand { job, add_nodes } | Decision::Shrink { job, remove_nodes: add_nodes } => {
                prop_assert!(!matches!(kind, "fcfs" | "easy"), "{} resized", kind);
                prop_assert!(!any_adapting, "resize while a job adapts");
                let r = running.get(job).expect("resized job runs");
                let spec = r.malleable.expect("resized job is malleable");
                let current = r.nodes.len();
                let after = if matches!(d, Decision::Expand { .. }) {
                    for i in add_nodes {
                        prop_assert!(free.contains(i) && handed_out.insert(*i), "node {} not free", i);
                    }
                    current + add_nodes.len()
                } else {
                    prop_assert!(!add_nodes.contains(&r.nodes[0]), "first node removed");
                    for i in add_nodes {
                        prop_assert!(r.nodes.contains(i), "node {} not the job's", i);
                    }
                    prop_assert!(!add_nodes.is_empty() && add_nodes.len() < current);
                    current - add_nodes.len()
                };
                prop_assert!(spec.allows(after as u32), "{} -> {} off {:?}", current, after, spec);
            }
            Decision::Share { .. } => prop_assert!(false, "{} shared cores on whole-node jobs", kind),
            Decision::Place { .. } => prop_assert!(false, "{} placed a whole-node job on part of nodes", kind),
            Decision::Preempt { .. } => prop_assert!(false, "{} preempted: only the preemption block does", kind),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_strategy_keeps_the_invariants(s in snapshot()) {
        for info in REGISTRY {
            let ds = (info.build)(&malleable_core::Params::defaults(info.params)).schedule(&s).decisions;
            check(info.name, &s, &ds)?;
        }
    }

    /// Preemption after any strategy's pass, with or without shrinking
    /// first, on jobs confined or not, breaks none of the model's rules
    /// together with the pass's own decisions, and never touches a job the
    /// pass decided on.
    #[test]
    fn preemption_after_any_pass_keeps_the_rules(s in placed_snapshot(), who in prop::collection::vec(any::<u8>(), 6), first in any::<bool>()) {
        let mut s = s;
        let ids: Vec<u32> = s.running.iter().map(|r| r.id.0).collect();
        for (p, w) in s.pending.iter_mut().zip(&who) {
            // Some of the running jobs, in an order of their own.
            let mut victims: Vec<u32> = ids.iter().copied().filter(|id| (w >> (id % 8)) & 1 == 1).collect();
            if w & 0x80 != 0 {
                victims.reverse();
            }
            *p = p.clone().preempting(victims);
        }
        for info in REGISTRY {
            let mut ds = (info.build)(&malleable_core::Params::defaults(info.params)).schedule(&s).decisions;
            let decided: HashSet<JobId> = ds.iter().map(Decision::job).collect();
            let extra = malleable_core::blocks::preemption::preempt(&s, &ds, first).decisions;
            for d in &extra {
                prop_assert!(!decided.contains(&d.job()), "{}: preemption decided {} again", info.name, d.job());
            }
            ds.extend(extra);
            prop_assert_eq!(validate(&s, &ds), Ok(()), "{}", info.name);
        }
    }

    /// With partitions, exclusions and required nodes, no strategy hands a
    /// job a node it may not use or starts it without one it requires (both
    /// part of `validate`), and a queue whose first job can be placed on the
    /// free nodes starts it (a start-in-order strategy).
    #[test]
    fn every_strategy_keeps_to_placements(s in placed_snapshot()) {
        for info in REGISTRY {
            let ds = (info.build)(&malleable_core::Params::defaults(info.params)).schedule(&s).decisions;
            check(info.name, &s, &ds)?;
        }
        let first = s.queue_order().into_iter().next().cloned();
        if let Some(first) = first {
            let free: Vec<usize> = s.free_nodes();
            let usable = free.iter().filter(|&&i| first.placement.allows(i)).count();
            let required_free = first.placement.required.iter().all(|r| free.contains(r));
            if usable >= first.size() && required_free {
                for kind in ["fcfs", "easy", "mtct", "mtct-backfill"] {
                    let ds = StrategyChoice::named(kind).unwrap().build().schedule(&s).decisions;
                    prop_assert!(
                        ds.iter().any(|d| matches!(d, Decision::Start { job, .. } if *job == first.id)),
                        "{}: job {} fits on its nodes and is first, but is not started: {:?}", kind, first.id, ds
                    );
                }
            }
        }
    }

    /// Algorithm 1's expansion (mtct, fpsma) hands the idle nodes out round
    /// robin: when it is done, no running malleable job could take its next
    /// valid step with the nodes still idle.
    #[test]
    fn algorithm_1_expansion_leaves_no_usable_idle_node(s in snapshot()) {
        for kind in ["mtct", "fpsma"] {
            let ds = StrategyChoice::named(kind).unwrap().build().schedule(&s).decisions;
            if s.running.iter().any(|j| j.adapting)
                || ds.iter().any(|d| matches!(d, Decision::Shrink { .. }))
            {
                continue;
            }
            let used: usize = ds
                .iter()
                .map(|d| match d {
                    Decision::Start { nodes, .. } => nodes.len(),
                    Decision::Expand { add_nodes, .. } => add_nodes.len(),
                    // On busy nodes only.
                    Decision::Shrink { .. }
                    | Decision::Share { .. }
                    | Decision::Place { .. }
                    | Decision::Preempt { .. } => 0,
                })
                .sum();
            let left = (s.free_nodes().len() - used) as u32;
            for j in s.running.iter().filter(|j| j.malleable.is_some()) {
                let spec = j.malleable.unwrap();
                let grown = ds
                    .iter()
                    .find_map(|d| match d {
                        Decision::Expand { job, add_nodes } if *job == j.id => Some(add_nodes.len()),
                        _ => None,
                    })
                    .unwrap_or(0);
                let after = (j.nodes.len() + grown) as u32;
                prop_assert!(
                    spec.next_valid_above(after, left).is_none(),
                    "{:?}: job {} on {} could still grow with {} idle",
                    kind,
                    j.id,
                    after,
                    left
                );
            }
        }
    }

    #[test]
    fn shrink_target_is_valid_below_current_and_frees_enough_when_possible(
        sp in spec(), current in 1u32..20, needed in 1u32..20,
    ) {
        if let Some(t) = sp.shrink_target(current, needed) {
            prop_assert!(sp.allows(t) && t < current);
            // Frees enough whenever some valid count below does.
            let possible = (1..current).any(|n| sp.allows(n) && current - n >= needed);
            prop_assert_eq!(current - t >= needed, possible);
            // And is the highest such count: no valid count between frees enough.
            if possible {
                prop_assert!(!(t + 1..current).any(|n| sp.allows(n) && current - n >= needed));
            }
        } else {
            prop_assert!(!(1..current).any(|n| sp.allows(n)));
        }
    }

    #[test]
    fn expand_target_is_the_highest_valid_count_the_idle_nodes_allow(
        sp in spec(), current in 1u32..20, idle in 0u32..20,
    ) {
        let best = (current + 1..=current + idle).rev().find(|&n| sp.allows(n));
        prop_assert_eq!(sp.expand_target(current, idle), best);
        if let Some(t) = best {
            prop_assert!(t <= sp.max && t >= sp.min && sp.constraint.is_valid(t));
        }
    }
}
