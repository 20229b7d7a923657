//! FCFS and EASY on the NASA iPSC/860 trace with arrivals x0.7, checked against
//! an independent implementation written here in another style: a closed-form
//! recurrence over a heap of end times (FCFS, must agree exactly), and for
//! EASY the properties it must have against that FCFS.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use malleable_core::StrategyKind;
use malleable_sim::workload::{swf, Workload};
use malleable_sim::{simulate, SimOptions};

/// The trace lives in ../shared/workloads beside the checkout (as in CI).
fn nasa() -> Workload {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/workloads/NASA-iPSC-1993-3.1-cln.swf.gz");
    assert!(path.exists(), "{} is missing: the workload traces must sit in ../shared beside the checkout", path.display());
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

#[test]
fn fcfs_on_nasa_agrees_exactly_with_the_reference() {
    let w = nasa();
    assert_eq!(w.jobs.len(), 18_066);
    let opts = SimOptions {
        tick: 0.0,
        ..SimOptions::default()
    };
    let r = simulate(&w, StrategyKind::Fcfs.build().as_mut(), opts);
    let expected = fcfs_starts(&w);
    let mut got: Vec<_> = r.jobs.iter().map(|j| (j.id, j.start)).collect();
    got.sort_by_key(|p| p.0);
    let mut want: Vec<_> = w
        .jobs
        .iter()
        .zip(&expected)
        .map(|(j, &s)| (j.id, s))
        .collect();
    want.sort_by_key(|p| p.0);
    assert_eq!(got, want);
}

#[test]
fn easy_on_nasa_never_waits_longer_on_average_than_fcfs() {
    let w = nasa();
    let fcfs: f64 = w
        .jobs
        .iter()
        .zip(fcfs_starts(&w))
        .map(|(j, s)| s - j.submit)
        .sum();
    let r = simulate(
        &w,
        StrategyKind::Easy.build().as_mut(),
        SimOptions::default(),
    );
    assert_eq!(r.jobs.len(), w.jobs.len());
    let easy: f64 = r.jobs.iter().map(|j| j.start - j.submit).sum();
    assert!(easy <= fcfs, "easy {easy} fcfs {fcfs}");
    // Never oversubscribed: at every start, the nodes held fit the machine.
    let mut ev: Vec<(f64, i64)> = r
        .jobs
        .iter()
        .flat_map(|j| {
            [
                (j.start, j.start_nodes as i64),
                (j.end, -(j.start_nodes as i64)),
            ]
        })
        .collect();
    ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut held = 0;
    for (_, d) in ev {
        held += d;
        assert!(held <= w.nodes as i64);
    }
}
