//! FCFS and EASY on the NASA iPSC/860 trace with arrivals x0.7, checked against
//! independent implementations written here in another style: for FCFS a
//! closed-form recurrence over a heap of end times, for EASY an event loop
//! that counts nodes instead of naming them. Both must agree exactly with the
//! simulator on every job's start; EASY must also have the properties it
//! should have against that FCFS.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use malleable_core::StrategyChoice;
use malleable_sim::workloads::workload::{swf, Workload};
use malleable_sim::{simulate, SimOptions};

/// The trace lives in ../shared/workloads beside the checkout (as in CI).
fn nasa() -> Workload {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/workloads/NASA-iPSC-1993-3.1-cln.swf.gz");
    assert!(
        path.exists(),
        "{} is missing: the workload traces must sit in ../shared beside the checkout",
        path.display()
    );
    swf(path.to_str().unwrap(), None, 0.7, 0.0, 1).unwrap().0
}

/// Strict FCFS: start_i = the first moment >= max(submit_i, start_{i-1}) at
/// which size_i nodes are free, with nodes coming back at their end times.
fn fcfs_starts(w: &Workload) -> Vec<f64> {
    let mut ends: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let (mut free, mut last) = (w.nodes as u32, 0.0f64);
    w.jobs
        .iter()
        .map(|j| {
            let mut t = j.submit.max(last);
            loop {
                // Everything ending by t is back.
                while let Some(&Reverse((e, n))) = ends.peek() {
                    if f64::from_bits(e) > t {
                        break;
                    }
                    free += n;
                    ends.pop();
                }
                if free >= j.nodes {
                    break;
                }
                let Reverse((e, _)) = *ends.peek().expect("a job larger than the machine");
                t = f64::from_bits(e);
            }
            free -= j.nodes;
            ends.push(Reverse(((t + j.run_time).to_bits(), j.nodes)));
            last = t;
            t
        })
        .collect()
}

/// Every job's (id, start) as the simulator runs `kind`, with ticks off (as
/// the references assume: passes at submissions and completions only), by id.
fn simulated_starts(w: &Workload, kind: &str) -> Vec<(u32, f64)> {
    let opts = SimOptions { tick: 0.0, ..SimOptions::default() };
    let r = simulate(w, StrategyChoice::named(kind).unwrap().build().as_mut(), opts);
    let mut got: Vec<_> = r.jobs.iter().map(|j| (j.id, j.start)).collect();
    got.sort_by_key(|p| p.0);
    got
}

/// A reference's starts (in workload order) as (id, start), by id.
fn by_id(w: &Workload, starts: &[f64]) -> Vec<(u32, f64)> {
    let mut want: Vec<_> = w.jobs.iter().zip(starts).map(|(j, &s)| (j.id, s)).collect();
    want.sort_by_key(|p| p.0);
    want
}

#[test]
fn fcfs_on_nasa_agrees_exactly_with_the_reference() {
    let w = nasa();
    assert_eq!(w.jobs.len(), 18_066);
    assert_eq!(simulated_starts(&w, "fcfs"), by_id(&w, &fcfs_starts(&w)));
}

/// What [`easy_starts`] saw along the way, so the test can tell that both of
/// EASY's backfill rules were really exercised.
#[derive(Debug, Default)]
struct EasyStats {
    /// Started behind a blocked head because it ends by the shadow time.
    by_shadow: usize,
    /// Started behind a blocked head on the head's extra nodes.
    on_extra: usize,
}

/// EASY as the simulator runs it, with node counts only: which nodes a job
/// gets never changes when anything starts, so `free` is all there is to know
/// of the machine. A pass runs at every instant with a submission or a
/// completion (ticks are off), and sees the clock and the limits in whole
/// seconds as the engine rounds them:
/// - `now` is the instant rounded up;
/// - a job started in this pass at most ends at `now + ceil(estimate)`;
/// - a job started earlier at `ceil(start + estimate)` (the float start).
///
/// Both are never earlier than the real end, so no backfilled job overruns
/// the shadow time it was admitted by.
///
/// The queue is priority 0 for all, then floored submit, then index: since the
/// loader sorts jobs by submit time, that is simply index order.
fn easy_starts(w: &Workload) -> (Vec<f64>, EasyStats) {
    let total = w.nodes as u32;
    assert!(w.jobs.iter().all(|j| (1..=total).contains(&j.nodes)), "the loader drops jobs that can never run");
    let limit = |i: usize| w.jobs[i].estimate.ceil() as i64;
    // What `running` holds of job i started at t.
    let launch = |i: usize, t: f64| {
        let j = &w.jobs[i];
        (t + j.run_time, (t + j.estimate).ceil() as i64, j.nodes)
    };
    let mut start = vec![f64::NAN; w.jobs.len()];
    let mut stats = EasyStats::default();
    // (when it really finishes, its end limit, nodes) for each running job.
    let mut running: Vec<(f64, i64, u32)> = Vec::new();
    let mut waiting: VecDeque<usize> = VecDeque::new();
    let (mut free, mut next) = (total, 0);
    loop {
        let arrival = w.jobs.get(next).map(|j| j.submit.max(0.0));
        let finish = running.iter().map(|r| r.0).min_by(f64::total_cmp);
        let Some(t) = arrival.into_iter().chain(finish).min_by(f64::total_cmp) else {
            break;
        };
        // Everything happening at t happens before the pass.
        free += running.iter().filter(|r| r.0 <= t).map(|r| r.2).sum::<u32>();
        running.retain(|r| r.0 > t);
        while w.jobs.get(next).is_some_and(|j| j.submit.max(0.0) <= t) {
            waiting.push_back(next);
            next += 1;
        }
        let now = t.ceil() as i64;

        // FCFS while the head fits. The jobs started here count towards the
        // head's shadow time with the end this pass predicts for them.
        let mut releases: Vec<(i64, u32)> = running.iter().map(|r| (r.1, r.2)).collect();
        while let Some(i) = waiting.pop_front() {
            if w.jobs[i].nodes > free {
                waiting.push_front(i);
                break;
            }
            free -= w.jobs[i].nodes;
            start[i] = t;
            releases.push((now + limit(i), w.jobs[i].nodes));
            running.push(launch(i, t));
        }
        let Some(&head) = waiting.front() else {
            continue;
        };

        // Shadow time: the first end limit by which enough nodes are back for
        // the head (every limit is finite, so there is one). Extra: what is
        // back by then (that instant included) beyond the head's need.
        releases.sort_unstable();
        let need = w.jobs[head].nodes;
        let back_by = |s: i64| free + releases.iter().filter(|r| r.0 <= s).map(|r| r.1).sum::<u32>();
        let shadow = releases.iter().map(|r| r.0).find(|&e| back_by(e) >= need).expect("every job has a time limit");
        let mut extra = back_by(shadow) - need;

        // Backfill, in queue order: a job that fits now may start if it is done
        // by the shadow time, or else if the extra nodes can hold it forever.
        waiting.retain(|&i| {
            let n = w.jobs[i].nodes;
            if i == head || n > free {
                return true;
            }
            if now + limit(i) <= shadow {
                stats.by_shadow += 1;
            } else if n <= extra {
                extra -= n;
                stats.on_extra += 1;
            } else {
                return true;
            }
            free -= n;
            start[i] = t;
            running.push(launch(i, t));
            false
        });
    }
    assert!(start.iter().all(|s| s.is_finite()), "every job starts");
    (start, stats)
}

#[test]
fn easy_on_nasa_agrees_exactly_with_the_reference() {
    let w = nasa();
    let (expected, stats) = easy_starts(&w);
    let got = simulated_starts(&w, "easy");
    assert_eq!(got.len(), w.jobs.len());
    let want = by_id(&w, &expected);
    let differ: Vec<_> = got.iter().zip(&want).filter(|(g, w)| g != w).collect();
    assert!(
        differ.is_empty(),
        "{} of {} jobs differ (simulator, reference), first: {:?}",
        differ.len(),
        want.len(),
        &differ[..differ.len().min(5)]
    );
    // Not vacuous: both backfill rules fire, and EASY is not just FCFS here.
    assert!(stats.by_shadow > 0 && stats.on_extra > 0, "{stats:?}");
    let overtaken = expected.iter().zip(fcfs_starts(&w)).filter(|&(&e, f)| e != f).count();
    assert!(overtaken > 0);
}

#[test]
fn easy_on_nasa_never_waits_longer_on_average_than_fcfs() {
    let w = nasa();
    let fcfs: f64 = w.jobs.iter().zip(fcfs_starts(&w)).map(|(j, s)| s - j.submit).sum();
    let r = simulate(&w, StrategyChoice::named("easy").unwrap().build().as_mut(), SimOptions::default());
    assert_eq!(r.jobs.len(), w.jobs.len());
    let easy: f64 = r.jobs.iter().map(|j| j.start - j.submit).sum();
    assert!(easy <= fcfs, "easy {easy} fcfs {fcfs}");
    // Never oversubscribed: at every start, the nodes held fit the machine.
    let mut ev: Vec<(f64, i64)> =
        r.jobs.iter().flat_map(|j| [(j.start, j.start_nodes as i64), (j.end, -(j.start_nodes as i64))]).collect();
    ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut held = 0;
    for (_, d) in ev {
        held += d;
        assert!(held <= w.nodes as i64);
    }
}
