//! Property tests for FCFS, EASY and conservative backfill on random
//! snapshots: decisions never oversubscribe, FCFS keeps queue order, EASY
//! never delays the head job's reservation, and conservative backfill starts
//! exactly the jobs a brute-force booking of every waiting job starts, with
//! contiguous jobs in a row; the references are written independently here.

use malleable_core::blocks::backfill::easy;
use malleable_core::strategies::conservative::MAX_JOB_TEST;
use malleable_core::strategies::fcfs::fcfs;
use malleable_model::{validate, Decision, JobId, Node, PendingJob, RunningJob, Snapshot, Time};
use proptest::prelude::*;
use std::collections::HashSet;

const NOW: Time = 1_000;

// ---- generators ----------------------------------------------------------

/// A rigid running job (FCFS, EASY and conservative see no other kind).
fn rigid(id: JobId, nodes: Vec<usize>, start: Time, end_limit: Option<Time>) -> RunningJob {
    RunningJob::new(id.0, nodes).start(start).end_limit(end_limit)
}

fn conservative(s: &Snapshot) -> Vec<Decision> {
    malleable_core::strategies::conservative::conservative(s, MAX_JOB_TEST)
}

fn end_limit() -> impl Strategy<Value = Option<Time>> {
    // Some already overdue (before NOW), a few unlimited.
    prop_oneof![4 => (NOW - 100..NOW + 400).prop_map(Some), 1 => Just(None)]
}

fn pending(max_nodes: usize) -> impl Strategy<Value = Vec<PendingJob>> {
    let one =
        (0u32..3, 0i64..4, 0..=max_nodes as u32 + 1, prop_oneof![4 => (0i64..300).prop_map(Some), 1 => Just(None)]);
    prop::collection::vec(one, 0..9).prop_map(|jobs| {
        jobs.into_iter()
            .enumerate()
            .map(|(i, (priority, submit, nodes, time_limit))| {
                PendingJob::new(i as u32 + 1, nodes).priority(priority).submit(submit).time_limit(time_limit)
            })
            .collect()
    })
}

/// A snapshot as the plugin should send it: each node free, drained, or held
/// by exactly one running job.
fn consistent_snapshot() -> impl Strategy<Value = Snapshot> {
    (0usize..10, prop::collection::vec(end_limit(), 0..5)).prop_flat_map(|(n, ends)| {
        // Per node: 0 = free, 1 = drained, 2 + k = held by running job k.
        let owner = prop::collection::vec(0..ends.len() + 2, n);
        (owner, pending(n)).prop_map(move |(owner, pending)| {
            let running = ends
                .iter()
                .enumerate()
                .map(|(k, &end_limit)| {
                    rigid(JobId(100 + k as u32), (0..n).filter(|&i| owner[i] == k + 2).collect(), 0, end_limit)
                })
                .collect();
            Snapshot { now: NOW, nodes: Node::numbered(owner.iter().map(|&o| o == 0)), running, pending, power: None }
        })
    })
}

/// Anything goes: running jobs listing free nodes, nodes held twice, indices
/// out of range.
fn messy_snapshot() -> impl Strategy<Value = Snapshot> {
    (0usize..10).prop_flat_map(|n| {
        let running = prop::collection::vec((prop::collection::vec(0..n + 3, 0..5), end_limit()), 0..5);
        (prop::collection::vec(any::<bool>(), n), running, pending(n)).prop_map(|(free, running, pending)| {
            let running = running
                .into_iter()
                .enumerate()
                .map(|(k, (nodes, end_limit))| rigid(JobId(100 + k as u32), nodes, 0, end_limit))
                .collect();
            Snapshot { now: NOW, nodes: Node::numbered(free), running, pending, power: None }
        })
    })
}

fn snapshot() -> impl Strategy<Value = Snapshot> {
    prop_oneof![3 => consistent_snapshot(), 1 => messy_snapshot()]
}

/// A snapshot where some waiting jobs want their nodes in a row (`--contiguous`).
fn contiguous_snapshot() -> impl Strategy<Value = Snapshot> {
    (snapshot(), prop::collection::vec(any::<bool>(), 9)).prop_map(|(mut s, rows)| {
        for (job, row) in s.pending.iter_mut().zip(rows) {
            job.placement.contiguous = row;
        }
        s
    })
}

// ---- independent reference -----------------------------------------------

fn size(job: &PendingJob) -> usize {
    (job.nodes as usize).max(1)
}

/// Pending jobs that could ever run, in queue order (sorted here, not taken
/// from the library), with their sizes.
fn runnable(s: &Snapshot) -> Vec<(JobId, usize)> {
    let mut q: Vec<&PendingJob> = s.pending.iter().collect();
    q.sort_by_key(|j| (std::cmp::Reverse(j.priority), j.submit, j.id));
    q.into_iter().map(|j| (j.id, size(j))).filter(|&(_, k)| k <= s.nodes.len()).collect()
}

/// Brute force: the earliest time at which `need` nodes are free, trying every
/// end limit as a candidate. A node is usable at `t` if it is free, or if some
/// running job holds it and every job holding it has ended by `t`.
/// `Time::MIN` means "now"; `None` means never.
fn earliest_start(s: &Snapshot, need: usize) -> Option<Time> {
    let mut candidates: Vec<Time> = s.running.iter().filter_map(|r| r.end_limit).collect();
    candidates.push(Time::MIN);
    candidates.sort();
    candidates.into_iter().find(|&t| {
        let usable = (0..s.nodes.len())
            .filter(|&i| {
                let holders: Vec<&RunningJob> = s.running.iter().filter(|r| r.nodes.contains(&i)).collect();
                s.nodes[i].free || (!holders.is_empty() && holders.iter().all(|r| r.end_limit.is_some_and(|e| e <= t)))
            })
            .count();
        usable >= need
    })
}

/// `s` with these decisions applied: their nodes busy, held by new running
/// jobs ending at now + time limit. Running jobs first forget the free nodes
/// they list: a node's `free` flag is the truth about now.
fn apply(s: &Snapshot, decisions: &[&Decision]) -> Snapshot {
    let mut after = s.clone();
    for r in &mut after.running {
        r.nodes.retain(|&i| i < s.nodes.len() && !s.nodes[i].free);
    }
    for (job, nodes) in decisions.iter().map(|d| start_of(d)) {
        let p = s.pending.iter().find(|p| p.id == *job).unwrap();
        for &i in nodes {
            after.nodes[i].free = false;
        }
        after.running.push(rigid(*job, nodes.clone(), s.now, p.time_limit.map(|l| s.now.saturating_add(l.max(0)))));
    }
    after
}

/// FCFS and EASY only ever start jobs: anything else is a bug here.
fn start_of(d: &Decision) -> (&JobId, &Vec<usize>) {
    match d {
        Decision::Start { job, nodes, .. } => (job, nodes),
        other => panic!("FCFS/EASY resized a job: {other:?}"),
    }
}

fn started_ids(decisions: &[Decision]) -> Vec<JobId> {
    decisions.iter().map(|d| *start_of(d).0).collect()
}

/// Every node free and used once, every job pending and started once, with
/// the node count it asked for (at least 1); nodes handed out lowest first.
/// The model's `validate` must agree that the decisions can be carried out.
fn check_valid(s: &Snapshot, decisions: &[Decision]) -> Result<(), TestCaseError> {
    check_valid_placed(s, decisions)?;
    let in_order: Vec<usize> = decisions.iter().flat_map(|d| start_of(d).1.iter().copied()).collect();
    let free: Vec<usize> = (0..s.nodes.len()).filter(|&i| s.nodes[i].free).collect();
    prop_assert_eq!(&in_order[..], &free[..in_order.len()]);
    Ok(())
}

/// As [`check_valid`], the nodes wherever the strategy placed them (the
/// lowest free may be booked for a job ahead: conservative's plan is by node).
fn check_valid_placed(s: &Snapshot, decisions: &[Decision]) -> Result<(), TestCaseError> {
    prop_assert_eq!(validate(s, decisions), Ok(()));
    let mut used = HashSet::new();
    let mut jobs = HashSet::new();
    for (job, nodes) in decisions.iter().map(start_of) {
        prop_assert!(jobs.insert(*job), "job {} started twice", job);
        let p = s.pending.iter().find(|p| p.id == *job);
        prop_assert!(p.is_some(), "job {} is not pending", job);
        prop_assert_eq!(nodes.len(), size(p.unwrap()));
        for &i in nodes {
            prop_assert!(i < s.nodes.len() && s.nodes[i].free, "node {} not free", i);
            prop_assert!(used.insert(i), "node {} given twice", i);
        }
    }
    Ok(())
}

/// Every contiguous job started is given consecutive nodes.
fn check_rows(s: &Snapshot, decisions: &[Decision]) -> Result<(), TestCaseError> {
    for (job, nodes) in decisions.iter().map(start_of) {
        let row = s.pending.iter().any(|p| p.id == *job && p.placement.contiguous);
        prop_assert!(!row || nodes.windows(2).all(|w| w[1] == w[0] + 1), "job {} not in a row: {:?}", job, nodes);
    }
    Ok(())
}

/// The head job by counting alone: the first runnable job in queue order
/// that does not fit on what the jobs before it left free. Returns how many
/// jobs precede it and its size.
fn head(s: &Snapshot) -> Option<(usize, usize)> {
    let mut free = s.nodes.iter().filter(|n| n.free).count();
    for (pos, (_, k)) in runnable(s).into_iter().enumerate() {
        if k > free {
            return Some((pos, k));
        }
        free -= k;
    }
    None
}

/// When node `i` is free from, going by time limits: now if it is free; a
/// second from now at the earliest for one held past its job's limit;
/// `None` if an unlimited job, or no job (down), holds it.
fn node_back(s: &Snapshot, i: usize) -> Option<Time> {
    if s.nodes[i].free {
        return Some(s.now);
    }
    let holders: Vec<&RunningJob> = s.running.iter().filter(|r| r.nodes.contains(&i)).collect();
    if holders.is_empty() {
        return None;
    }
    let mut last = s.now + 1;
    for r in holders {
        last = last.max(r.end_limit?);
    }
    Some(last)
}

/// Conservative backfill the slow way, by node: the first `MAX_JOB_TEST`
/// runnable jobs in queue order each book the earliest instant (now, or one
/// where a node comes back or a booking begins or ends) from which enough
/// nodes it may use are back and unbooked for its whole time limit (at
/// least a second), its required ones among them, on those and the lowest
/// others. Jobs booked at now start. Returns the started ids.
fn conservative_reference(s: &Snapshot) -> Vec<JobId> {
    let n = s.nodes.len();
    let back: Vec<Option<Time>> = (0..n).map(|i| node_back(s, i)).collect();
    // (start, end or never, nodes)
    let mut booked: Vec<(Time, Option<Time>, Vec<usize>)> = Vec::new();
    let mut started = Vec::new();
    let jobs: std::collections::HashMap<JobId, &PendingJob> = s.pending.iter().map(|p| (p.id, p)).collect();
    for (id, k) in runnable(s).into_iter().take(MAX_JOB_TEST) {
        let job = jobs[&id];
        let len = job.time_limit.map(|l| l.max(1));
        let mut candidates: Vec<Time> = back.iter().flatten().copied().filter(|&t| t > s.now).collect();
        candidates.extend(booked.iter().flat_map(|(b, e, _)| std::iter::once(*b).chain(*e)).filter(|&t| t > s.now));
        candidates.push(s.now);
        candidates.sort();
        candidates.dedup();
        let free_over = |i: usize, t: Time| {
            let end = len.map(|l| t.saturating_add(l));
            back[i].is_some_and(|b| b <= t)
                && !booked.iter().any(|(b, e, nodes)| {
                    nodes.contains(&i) && e.is_none_or(|e| e > t) && end.is_none_or(|end| *b < end)
                })
        };
        let found = candidates.into_iter().find_map(|t| {
            let usable: Vec<usize> = (0..n).filter(|&i| job.placement.allows(i) && free_over(i, t)).collect();
            if job.placement.contiguous {
                // The lowest k in a row, holding every required node.
                let k = k.max(job.placement.required.len());
                return (0..n).find_map(|first| {
                    let row: Vec<usize> = (first..first + k).collect();
                    let fits = row.iter().all(|i| usable.contains(i))
                        && job.placement.required.iter().all(|r| row.contains(r));
                    fits.then_some((t, row))
                });
            }
            let mut chosen: Vec<usize> = job.placement.required.clone();
            if !chosen.iter().all(|r| usable.contains(r)) {
                return None;
            }
            chosen.extend(usable.iter().filter(|i| !job.placement.required.contains(i)));
            chosen.truncate(k.max(job.placement.required.len()));
            (chosen.len() >= k).then_some((t, chosen))
        });
        let Some((start, nodes)) = found else { continue };
        if start == s.now {
            started.push(id);
        }
        booked.push((start, len.map(|l| start.saturating_add(l)), nodes));
    }
    started
}

// ---- properties ----------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decisions_never_oversubscribe(s in snapshot()) {
        check_valid(&s, &fcfs(&s))?;
        check_valid(&s, &easy(&s))?;
        check_valid_placed(&s, &conservative(&s))?;
    }

    #[test]
    fn conservative_starts_what_booking_every_job_starts(s in snapshot()) {
        prop_assert_eq!(started_ids(&conservative(&s)), conservative_reference(&s));
    }

    #[test]
    fn contiguous_jobs_get_nodes_in_a_row(s in contiguous_snapshot()) {
        for decisions in [fcfs(&s), easy(&s), conservative(&s)] {
            check_valid_placed(&s, &decisions)?;
            check_rows(&s, &decisions)?;
        }
        prop_assert_eq!(started_ids(&conservative(&s)), conservative_reference(&s));
    }

    #[test]
    fn fcfs_starts_a_maximal_prefix_of_the_queue(s in snapshot()) {
        let started = started_ids(&fcfs(&s));
        let queue = runnable(&s);
        let prefix: Vec<JobId> = queue.iter().take(started.len()).map(|&(id, _)| id).collect();
        prop_assert_eq!(&started, &prefix);
        let expected = head(&s).map_or(queue.len(), |(pos, _)| pos);
        prop_assert_eq!(started.len(), expected);
    }

    #[test]
    fn easy_starts_everything_ahead_of_the_head_like_fcfs(s in snapshot()) {
        let f = fcfs(&s);
        let e = easy(&s);
        prop_assert_eq!(&e[..f.len().min(e.len())], &f[..]);
        if let Some((pos, _)) = head(&s) {
            let ahead: Vec<JobId> = runnable(&s).iter().take(pos).map(|&(id, _)| id).collect();
            prop_assert_eq!(&started_ids(&e)[..pos], &ahead[..]);
        }
    }

    #[test]
    fn easy_never_delays_the_head(s in snapshot()) {
        let Some((pos, need)) = head(&s) else { return Ok(()) };
        let e = easy(&s);
        let all: Vec<&Decision> = e.iter().collect();
        let before = earliest_start(&apply(&s, &all[..pos]), need);
        let after = earliest_start(&apply(&s, &all), need);
        if let Some(shadow) = before {
            prop_assert!(after.is_some_and(|a| a <= shadow), "head delayed from {:?} to {:?}", before, after);
        }
    }

    /// EASY is not over-cautious: any job it left out that still fits would,
    /// if started too, delay the head (or there is no head reservation to
    /// protect, and then it should have started).
    #[test]
    fn easy_leaves_out_only_jobs_that_would_delay_the_head(s in snapshot()) {
        let Some((pos, need)) = head(&s) else { return Ok(()) };
        let e = easy(&s);
        let all: Vec<&Decision> = e.iter().collect();
        let shadow = earliest_start(&apply(&s, &all[..pos]), need);
        let used: usize = e.iter().map(|d| start_of(d).1.len()).sum();
        let free: Vec<usize> = (0..s.nodes.len()).filter(|&i| s.nodes[i].free).skip(used).collect();
        let started: HashSet<JobId> = started_ids(&e).into_iter().collect();
        for &(id, k) in runnable(&s).iter().skip(pos + 1) {
            if started.contains(&id) || k > free.len() {
                continue;
            }
            let extra = Decision::Start { job: id, nodes: free[..k].to_vec(), time_limit: None };
            let mut more = all.clone();
            more.push(&extra);
            let with_it = earliest_start(&apply(&s, &more), need);
            let delays = match (shadow, with_it) {
                (Some(shadow), Some(t)) => t > shadow,
                (Some(_), None) => true,
                (None, _) => false,
            };
            prop_assert!(delays, "job {} could have started without delaying the head ({:?})", id, shadow);
        }
    }

    #[test]
    fn no_panic_on_extreme_values(
        now in any::<i64>(),
        free in prop::collection::vec(any::<bool>(), 0..6),
        running in prop::collection::vec((prop::collection::vec(any::<usize>(), 0..3), any::<Option<i64>>()), 0..4),
        jobs in prop::collection::vec((any::<u32>(), any::<i64>(), any::<u32>(), any::<Option<i64>>()), 0..6),
    ) {
        let n = free.len();
        let s = Snapshot {
            now,
            nodes: Node::numbered(free),
            running: running
                .into_iter()
                .map(|(nodes, end_limit)| rigid(JobId(0), nodes.into_iter().map(|i| i % (n + 2)).collect(), now, end_limit))
                .collect(),
            pending: jobs
                .into_iter()
                .enumerate()
                .map(|(i, (priority, submit, nodes, time_limit))| {
                    // Mostly small enough to fit, sometimes huge.
                    let nodes = if nodes % 4 == 0 { nodes } else { nodes % 4 };
                    PendingJob::new(i as u32 + 1, nodes).priority(priority).submit(submit).time_limit(time_limit)
                })
                .collect(),
            power: None,
        };
        check_valid(&s, &fcfs(&s))?;
        check_valid(&s, &easy(&s))?;
        check_valid_placed(&s, &conservative(&s))?;
    }
}
