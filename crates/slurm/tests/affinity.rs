//! Setting a CPU mask on every thread of a process, checked on this test
//! process itself: a binary of its own, so no other test runs on the
//! threads whose masks it changes.
#![cfg(feature = "stepd")]

use std::sync::{Arc, Barrier};

use slurm::stepd::{set_process_affinity, CpuSet};

/// Cpus_allowed_list of every thread of this process, as the kernel says.
fn masks_of_all_threads() -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let tid: i32 = e.file_name().to_str().unwrap().parse().unwrap();
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else { continue };
        let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string();
        out.push((tid, list));
    }
    out
}

#[test]
fn every_thread_of_a_process_gets_the_mask_and_gets_it_back() {
    let all = CpuSet::own().unwrap();
    // Three more threads, parked until the checks are done.
    let parked = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let b = parked.clone();
            std::thread::spawn(move || b.wait())
        })
        .collect();
    let pid = std::process::id() as i32;

    // Set to all CPUs: every thread (at least ours and the three) is reached.
    let n = set_process_affinity(pid, &all).unwrap();
    assert!(n >= 4, "set {n} threads");

    if all.len() >= 2 {
        let last = CpuSet::from_ids([*all.ids().last().unwrap()]);
        set_process_affinity(pid, &last).unwrap();
        for (tid, list) in masks_of_all_threads() {
            assert_eq!(list, last.to_string(), "thread {tid}");
        }
        // And back, as task/drom gives a mate its cores back.
        set_process_affinity(pid, &all).unwrap();
        for (tid, list) in masks_of_all_threads() {
            assert_eq!(list, all.to_string(), "thread {tid}");
        }
    } else {
        eprintln!("one CPU here: only the walk over the threads is checked");
    }
    parked.wait();
    for t in threads {
        t.join().unwrap();
    }
}
