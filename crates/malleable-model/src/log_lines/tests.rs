//! Each declared line written and read back, and read as slurmctld printed it.

use super::*;

fn names(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

/// One of each kind, with the fields a writer would give.
fn samples() -> Vec<LogLine> {
    let j = JobId(4);
    vec![
        LogLine::AgentStarted { config: "Strategy=mtct SchedulerTick=1".into() },
        LogLine::AgentStopped { passes: 12 },
        LogLine::ParametersAdded {
            lacks: names("sched_interval=-1").into_iter().chain(names("permit_job_expansion")).collect(),
            reasons: "without sched_interval=-1 slurmctld's own scheduler would run; without permit_job_expansion \
                      no job could grow"
                .into(),
            was: "bf_interval=30".into(),
            now: "bf_interval=30,sched_interval=-1,permit_job_expansion".into(),
        },
        LogLine::Reconfigured { config: "Strategy=fcfs SchedulerTick=7".into() },
        LogLine::CorridorNow { corridor: Corridor::new(0.0, 300.0).unwrap(), cause: CorridorCause::Start },
        LogLine::CorridorNow { corridor: Corridor::new(0.0, 1000.0).unwrap(), cause: CorridorCause::Reconfigured },
        LogLine::CorridorNow { corridor: Corridor::new(100.0, 1000.5).unwrap(), cause: CorridorCause::Scheduled },
        LogLine::Started { job: j, cores: None, nodes: "n[1-2]".into(), detail: " (mtct)".into() },
        LogLine::Started {
            job: j,
            cores: None,
            nodes: "n1,m[1-2]".into(),
            detail: " (ipsched), CPUs as decided: n1:3".into(),
        },
        LogLine::Started { job: j, cores: None, nodes: "n1".into(), detail: String::new() },
        LogLine::Started {
            job: j,
            cores: Some((2, 8)),
            nodes: "n[1-2]".into(),
            detail: " (sd-policy), taken from JobId=2; its time limit 5 min".into(),
        },
        LogLine::CouldNotStart { job: j, nodes: 2, why: "Requested nodes are busy; said once while it repeats".into() },
        LogLine::Preempting { job: j, victims: vec![JobId(2), JobId(3)], nodes: names("n1,n2") },
        LogLine::Growing { job: j, nodes: names("n3"), strategy: "mtct".into() },
        LogLine::Expanding {
            job: j,
            nodes: names("n2,n3"),
            resize: 17,
            helper: JobId(5),
            holds: "n[1-3]".into(),
            strategy: "mtct-backfill".into(),
        },
        LogLine::ExpandNotDone {
            job: j,
            nodes: names("n2"),
            error: "Requested node configuration is not available".into(),
        },
        LogLine::ExpandCommitted { job: j, nodes: names("n2,n3"), after: Some(0.25) },
        LogLine::ExpandCommitted { job: j, nodes: names("n2"), after: None },
        LogLine::AdaptBound { job: j, bound_s: 16, timeout_s: 1 },
        LogLine::Cancelled { job: j, why: "it lost n3 and holds 1 nodes, fewer than its minimum".into() },
        LogLine::Shrinking { job: j, nodes: names("n3"), resize: 18, strategy: "mtct".into() },
        LogLine::Released {
            job: j,
            ending: Ending::ShrinkCommitted { nodes: names("n3,n4"), after: Some(0.15) },
            holds: "n[1-2]".into(),
        },
        LogLine::Released {
            job: j,
            ending: Ending::ShrinkForced { nodes: names("n2"), why: "not committed within 2 s".into(), hold_s: 2 },
            holds: "n1".into(),
        },
        LogLine::Released {
            job: j,
            ending: Ending::RolledBack {
                nodes: names("n4"),
                why: "not done: n4 stopped answering or was drained".into(),
                hold_s: 30,
            },
            holds: "n[1-3]".into(),
        },
        LogLine::ReleaseFailed {
            job: j,
            ending: Ending::ShrinkCommitted { nodes: names("n3"), after: None },
            error: "Invalid job id specified".into(),
        },
        LogLine::ReleaseHeld {
            job: j,
            ending: Ending::ShrinkCommitted { nodes: names("n3"), after: Some(4.5) },
            waits_for: "slurmdbd, away or behind (sdiag: DBD Agent queue size)".into(),
        },
        LogLine::ReleaseHeld {
            job: j,
            ending: Ending::ShrinkForced { nodes: names("n2"), why: "not committed within 2 s".into(), hold_s: 2 },
            waits_for: "slurmdbd, which does not answer (slurmdbd:6819: Connection refused)".into(),
        },
        LogLine::Stretched { job: j, minutes: 12 },
        LogLine::RequeuedAfterResize { job: j },
        LogLine::RequeueFinished { job: j },
        LogLine::UsageTakenBack { job: j, tres_s: 88 },
        LogLine::BatchHostRestored { job: j, said: "n1".into(), runs_on: "n2".into() },
        LogLine::Dropped { job: j, what: "expand onto n3,n4".into() },
        LogLine::Suspect { nodes: names("n2,n3"), secs: 60 },
        LogLine::Lost { job: j, nodes: names("n3"), holds: 2, resize: None },
        LogLine::Lost { job: j, nodes: names("n3"), holds: 2, resize: Some(19) },
        LogLine::LostCommitted { job: j, nodes: names("n3"), after: Some(1.5) },
        LogLine::PriorityRaised { job: j, priority: 4_294_967_293 },
        LogLine::Capped { job: j, most: 3 },
        LogLine::TasksSplitOff { job: j, split: vec![5, 6] },
        LogLine::ReleasedAtSyncPoint { job: j, releaser: JobId(2), nodes: 2 },
        LogLine::PowerHeld {
            job: j,
            nodes: 1,
            before_w: 284.0,
            after_w: 463.5,
            corridor: Corridor::new(0.0, 300.0).unwrap(),
        },
        LogLine::ShrinkInsteadOfPreempt {
            job: j,
            nodes: names("n3,n2"),
            preemptor: JobId(1),
            node_s: 2400,
            ran_s: 600,
            on_nodes: 4,
        },
        LogLine::RequestTaken { job: j, request: "mall1 seq=7 COMMIT job=4 resize=17".into() },
        LogLine::LocksHeld {
            pass: 3,
            read_ms: 1.2,
            apply_ms: Some(0.4),
            on_cpu_ms: 1.5,
            queued_ms: None,
            decide_ms: 12.0,
        },
        LogLine::LocksHeld {
            pass: 4,
            read_ms: 2.2,
            apply_ms: Some(0.4),
            on_cpu_ms: 1.5,
            queued_ms: Some(0.9),
            decide_ms: 12.0,
        },
        // Nothing to write: the locks were not taken again.
        LogLine::LocksHeld {
            pass: 5,
            read_ms: 0.6,
            apply_ms: None,
            on_cpu_ms: 0.5,
            queued_ms: Some(0.0),
            decide_ms: 0.3,
        },
        LogLine::FeedRead { records: 12, whole: None, kept: 5566, nodes_walked: false },
        LogLine::FeedRead { records: 5570, whole: Some("Partitions".into()), kept: 5566, nodes_walked: true },
        LogLine::ResizesHeld { unanswered: None },
        LogLine::ResizesHeld {
            unanswered: Some("slurmdbd:6819 (172.18.0.2:6819): Connection refused (os error 111)".into()),
        },
        LogLine::ResizesResumed,
    ]
}

#[test]
fn each_line_reads_back_as_written() {
    for l in samples() {
        let text = l.to_string();
        assert_eq!(LogLine::parse(&text), Some(l.clone()), "{text}");
        // As slurmctld prints it, from either plugin, at info or as a warning.
        for p in PLUGINS {
            let printed = format!("[2026-11-24T00:24:55.030+01:00] {p}: {text}");
            assert_eq!(LogLine::parse(&printed), Some(l.clone()), "{printed}");
            let warned = format!("[2026-11-24T00:24:55.030] {p}: warning: {text}");
            assert_eq!(LogLine::parse(&warned), Some(l.clone()), "{warned}");
        }
    }
}

#[test]
fn the_lines_read_as_slurmctld_printed_them() {
    let log = "\
[2026-11-24T00:24:54.123] sched/malleable: started JobId=1 on n1 (mtct)
[2026-11-24T00:24:55.030] sched/malleable: JobId=1: expand onto n2,n3,n4 (resize 17, through JobId=2); it now holds n[1-4] (mtct); waiting for its application to commit
[2026-11-24T00:24:55.282] sched/malleable: JobId=1: expand onto n2,n3,n4 committed 0.25 s after the decision
[2026-11-24T00:24:56.033] sched/malleable: JobId=1: shrink off n3,n4 (resize 18, mtct); waiting for its application to leave them and commit
[2026-11-24T00:24:56.184] sched/malleable: JobId=1: shrink off n3,n4 committed 0.15 s after the decision; it now holds n[1-2]
[2026-11-24T00:24:56.200] sched/malleable: pass 41: slurmctld's locks held 0.8 ms to read, 2.5 ms to apply, on the CPU 0.0 ms of them (none while deciding, 0.3 ms)
[2026-11-24T14:14:58.351] select/natural: JobId=4: priority raised to 4294967293: a job released nodes for it
[2026-11-24T00:24:57.000] sched: Allocate JobId=9 NodeList=n5 #CPUs=1 Partition=debug
";
    let read: Vec<LogLine> = LogLine::all(log).collect();
    assert_eq!(read.len(), 7, "{read:?}");
    assert_eq!(read[0], LogLine::Started { job: JobId(1), cores: None, nodes: "n1".into(), detail: " (mtct)".into() });
    assert!(matches!(&read[1], LogLine::Expanding { resize: 17, helper: JobId(2), holds, .. } if holds == "n[1-4]"));
    assert!(matches!(&read[2], LogLine::ExpandCommitted { after: Some(a), .. } if *a == 0.25));
    assert!(matches!(&read[3], LogLine::Shrinking { resize: 18, .. }));
    assert!(
        matches!(&read[4], LogLine::Released { ending: Ending::ShrinkCommitted { nodes, .. }, holds, .. } if nodes.len() == 2 && holds == "n[1-2]")
    );
    assert!(matches!(read[5], LogLine::LocksHeld { pass: 41, .. }));
    assert_eq!(read[6].job(), Some(JobId(4)));
}

#[test]
fn a_reworded_line_does_not_read() {
    for text in [
        "[2026-11-24T00:24:54.123] sched/malleable: began JobId=1 on n1 (mtct)",
        "sched/malleable: JobId=1: expand onto n2 (resize 17, via JobId=2); it now holds n[1-2] (mtct); waiting for its application to commit",
        "sched/malleable: JobId=1: expand onto n2 committed 0.25 s since the decision",
        "sched/malleable: JobId=1: shrink off n3 (resize 18, mtct); waiting for its application",
        "sched/malleable: JobId=1: shrink off n3 done; it now holds n1",
        "sched/malleable: JobId=1: expand onto n2 not committed within 30 s: undone (not resized again for 30 s); it now holds n1",
        "sched/malleable: pass 4: slurmctld's locks held 1.0 ms to read, 2.0 ms to apply",
        "sched/malleable: agent stopped after many passes",
        "sched/malleable: power corridor now 0-1000 (changed)",
        "sched/malleable: JobId=x: grows to 3 nodes at most: its QOS's and association's node limits allow no more",
        "sched/malleable: JobId=4: time limit stretched to 12 min",
    ] {
        assert_eq!(LogLine::parse(text), None, "{text}");
    }
}

#[test]
fn an_ending_reads_apart_from_the_lines_around_it() {
    let e = Ending::RolledBack { nodes: names("n4,n5"), why: "not committed within 30 s".into(), hold_s: 30 };
    assert_eq!(e.to_string(), "expand onto n4,n5 not committed within 30 s: rolled back (not resized again for 30 s)");
    assert_eq!(Ending::parse(&e.to_string()), Some(e.clone()));
    assert!(e.is_rollback());
    // A refused expand is not an ending, nor a committed one.
    let not_done = "JobId=4: expand onto n2 not done, it keeps its nodes: busy";
    assert!(matches!(LogLine::parse(not_done), Some(LogLine::ExpandNotDone { .. })));
}
