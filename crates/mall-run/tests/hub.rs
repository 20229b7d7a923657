//! The hub's rules, input by input: the workers' frames, the job's status
//! from slurmctld, steps that end, and what the hub answers, starts and
//! tells the scheduler.

use std::time::Duration;

use mall_run::hub::{ConnId, Hub, Input, Launch, Output, Rules, WorkerId};
use malleable_model::runtime_msg::{Phase, Request, Status};
use malleable_model::{JobId, MalleableSpec, NodeConstraint};
use malleable_rt::wire::Frame;

const JOB: JobId = JobId(42);

fn nodes(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// A hub on these nodes; a vanished worker's node failure is not waited for.
fn hub(on: &[&str], report_every: Duration) -> (Hub, Vec<Output>) {
    Hub::new(JOB, "secret".into(), &nodes(on), Rules { report_every, ..hub_rules() })
}

/// The rules of [`hub`]: nothing waited for, a failed start tried twice.
fn hub_rules() -> Rules {
    Rules {
        confirm_loss: Duration::ZERO,
        wait_for_step: Duration::ZERO,
        start_tries: 2,
        start_again_after: Duration::ZERO,
        ..Rules::default()
    }
}

#[test]
fn with_nothing_else_to_say_for_a_heartbeat_the_hub_probes() {
    let rules = Rules { heartbeat: Duration::ZERO, report_every: Duration::from_secs(3600), ..Rules::default() };
    let (mut h, out) = Hub::new(JOB, "secret".into(), &nodes(&["n1"]), rules);
    assert_eq!(told(&out), vec![Request::Hello { job: JOB, heartbeat_s: Some(1) }], "a second at least");
    assert_eq!(told(&h.handle(Input::Tick)), vec![Request::Probe { job: JOB }]);
    let rules = Rules { heartbeat: Duration::from_secs(3600), ..Rules::default() };
    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1"]), rules);
    assert!(told(&h.handle(Input::Tick)).is_empty(), "the heartbeat has not passed");
}

fn frame(h: &mut Hub, conn: ConnId, f: Frame) -> Vec<Output> {
    h.handle(Input::Frame(conn, f))
}

/// Worker `w` connects on connection `w` (its conn id is its number).
fn hello(h: &mut Hub, w: WorkerId) -> Vec<Output> {
    frame(h, w as ConnId, Frame::new("HELLO").with("token", "secret").with("worker", w))
}

/// The frames answered, as (connection, frame).
fn replies(out: &[Output]) -> Vec<(ConnId, Frame)> {
    out.iter()
        .filter_map(|o| match o {
            Output::Reply(c, f) => Some((*c, f.clone())),
            _ => None,
        })
        .collect()
}

fn verbs(out: &[Output]) -> Vec<(ConnId, String)> {
    replies(out).into_iter().map(|(c, f)| (c, f.verb)).collect()
}

fn told(out: &[Output]) -> Vec<Request> {
    out.iter()
        .filter_map(|o| match o {
            Output::Tell(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

fn status(phase: Phase) -> Input {
    let spec = MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::None };
    Input::Job { status: Some(Status { phase, runtime: true, ..Status::new(spec) }), nodes: vec![] }
}

/// Every worker in `ws` sends `f`; the outputs of the last.
fn all(h: &mut Hub, ws: &[WorkerId], f: &Frame) -> Vec<Output> {
    let mut out = Vec::new();
    for &w in ws {
        out = frame(h, w as ConnId, f.clone());
    }
    out
}

/// A hub with workers 1..=n on n1..nn, all connected.
fn running(n: usize) -> Hub {
    let names: Vec<String> = (1..=n).map(|i| format!("n{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (mut h, _) = hub(&refs, Duration::from_secs(3600));
    for w in 1..=n as WorkerId {
        hello(&mut h, w);
    }
    h
}

#[test]
fn the_start_launches_a_worker_a_node_and_welcomes_each_by_rank() {
    let (mut h, out) = hub(&["n1", "n2"], Duration::from_secs(5));
    assert_eq!(told(&out), vec![Request::Hello { job: JOB, heartbeat_s: Some(30) }]);
    let launches: Vec<(WorkerId, String, u64)> = out
        .iter()
        .filter_map(|o| match o {
            Output::Launch { worker, node, joining } => Some((*worker, node.clone(), *joining)),
            _ => None,
        })
        .collect();
    assert_eq!(launches, vec![(1, "n1".into(), 0), (2, "n2".into(), 0)]);
    let r = replies(&hello(&mut h, 2));
    assert_eq!(r[0].1, Frame::new("WELCOME").with("rank", 1).with("size", 2).with("joining", 0));
}

#[test]
fn a_connection_without_the_token_or_as_a_worker_not_started_is_refused_and_closed() {
    let (mut h, _) = hub(&["n1"], Duration::from_secs(5));
    for (f, why) in [
        (Frame::new("HELLO").with("token", "guess").with("worker", 1), "HELLO without this job's token"),
        (Frame::new("PROBE"), "PROBE before HELLO"),
        (Frame::new("HELLO").with("token", "secret").with("worker", 9), "worker 9 is not one this hub started"),
    ] {
        let out = frame(&mut h, 77, f);
        let r = replies(&out);
        assert_eq!(r[0].1.verb, "ERROR");
        assert!(String::from_utf8_lossy(&r[0].1.payload).starts_with(why), "{out:?}");
        assert!(out.contains(&Output::Close(77)));
    }
    hello(&mut h, 1);
    let again = frame(&mut h, 78, Frame::new("HELLO").with("token", "secret").with("worker", 1));
    assert!(again.contains(&Output::Close(78)), "a worker connects once");
}

#[test]
fn a_probe_waits_for_every_worker_and_workers_that_disagree_are_told() {
    let mut h = running(2);
    assert!(replies(&frame(&mut h, 1, Frame::new("PROBE"))).is_empty(), "worker 2 has not probed");
    assert_eq!(verbs(&frame(&mut h, 2, Frame::new("PROBE"))), vec![(1, "NONE".into()), (2, "NONE".into())]);
    frame(&mut h, 1, Frame::new("PROBE"));
    let out = frame(&mut h, 2, Frame::new("BARRIER"));
    assert_eq!(verbs(&out), vec![(1, "ERROR".into()), (2, "ERROR".into())]);
}

#[test]
fn an_expand_starts_workers_on_the_new_nodes_and_commits_once_everyone_has() {
    let mut h = running(2);
    let out = h.handle(status(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 }));
    assert!(out.contains(&Output::Launch { worker: 3, node: "n3".into(), joining: 7 }));
    // Until the new worker is there, probes go on as before.
    assert_eq!(verbs(&all(&mut h, &[1, 2], &Frame::new("PROBE"))).len(), 2);
    let r = replies(&hello(&mut h, 3));
    assert_eq!(r[0].1, Frame::new("WELCOME").with("rank", 2).with("size", 3).with("joining", 7));
    let begin = Frame::new("BEGIN").with("resize", 7);
    assert!(replies(&frame(&mut h, 3, begin.clone())).is_empty());
    // Meanwhile the others go on with their own collectives.
    let out = all(&mut h, &[1, 2], &Frame::new("CHECKPOINT").with("iteration", 20).with("item", 1));
    assert_eq!(verbs(&out), vec![(1, "OK".into()), (2, "OK".into())]);
    let out = all(&mut h, &[1, 2], &Frame::new("PROBE"));
    let r = replies(&out);
    assert_eq!(r[0].1, Frame::new("EXPAND").with("resize", 7).with("nodes", "n3").with("size", 3));
    assert_eq!(told(&out), vec![Request::Begin { job: JOB, resize: 7 }]);
    let out = all(&mut h, &[1, 2], &begin);
    let ranks: Vec<(ConnId, String, String)> = replies(&out)
        .into_iter()
        .map(|(c, f)| (c, f.get("rank").unwrap().to_string(), f.get("leaving").unwrap().to_string()))
        .collect();
    assert_eq!(ranks.len(), 3);
    assert!(ranks.contains(&(3, "2".into(), "0".into())));
    // Six one-byte items, two workers' worth, now in three blocks of two.
    frame(&mut h, 1, Frame::new("REDIST").with("item", 1).with_payload(b"abc".to_vec()));
    frame(&mut h, 3, Frame::new("REDIST").with("item", 1));
    let out = frame(&mut h, 2, Frame::new("REDIST").with("item", 1).with_payload(b"def".to_vec()));
    let mut data: Vec<(ConnId, Vec<u8>)> = replies(&out).into_iter().map(|(c, f)| (c, f.payload)).collect();
    data.sort();
    assert_eq!(data, vec![(1, b"ab".to_vec()), (2, b"cd".to_vec()), (3, b"ef".to_vec())]);
    assert!(told(&all(&mut h, &[1, 2], &Frame::new("COMMIT"))).is_empty(), "worker 3 has not committed");
    let out = frame(&mut h, 3, Frame::new("COMMIT"));
    assert_eq!(replies(&out)[0].1, Frame::new("COMMITTED").with("rank", 2).with("size", 3));
    assert_eq!(told(&out), vec![Request::Commit { job: JOB, resize: 7 }]);
    h.handle(Input::Answered { request: Request::Commit { job: JOB, resize: 7 }, result: Ok(()) });
    // Three workers now, and the status still saying Expanding (read before
    // the plugin took the commit) starts nothing again.
    assert!(h.handle(status(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 })).is_empty());
    assert_eq!(verbs(&all(&mut h, &[1, 2, 3], &Frame::new("PROBE"))).len(), 3);
}

#[test]
fn a_resize_decided_while_the_last_commit_is_unanswered_is_taken_up_once_it_is() {
    // The plugin may commit an expand and decide a shrink in its next pass,
    // 20 ms later: the channel reads both in one status, before the commit's
    // answer, and reads it only once (it passes changes on).
    let mut h = running(2);
    h.handle(status(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 }));
    hello(&mut h, 3);
    frame(&mut h, 3, Frame::new("BEGIN").with("resize", 7));
    all(&mut h, &[1, 2], &Frame::new("CHECKPOINT").with("iteration", 20).with("item", 1));
    all(&mut h, &[1, 2], &Frame::new("PROBE"));
    all(&mut h, &[1, 2], &Frame::new("BEGIN").with("resize", 7));
    frame(&mut h, 1, Frame::new("REDIST").with("item", 1).with_payload(b"abc".to_vec()));
    frame(&mut h, 3, Frame::new("REDIST").with("item", 1));
    frame(&mut h, 2, Frame::new("REDIST").with("item", 1).with_payload(b"def".to_vec()));
    let out = all(&mut h, &[1, 2, 3], &Frame::new("COMMIT"));
    assert_eq!(told(&out), vec![Request::Commit { job: JOB, resize: 7 }]);
    assert!(h.handle(status(Phase::Shrinking { resize: 8, nodes: nodes(&["n3"]), since: 2 })).is_empty());
    let out = h.handle(Input::Answered { request: Request::Commit { job: JOB, resize: 7 }, result: Ok(()) });
    assert!(
        out.iter().any(|o| matches!(o, Output::Log(l) if l.starts_with("shrink 8: workers leave n3"))),
        "the shrink is taken up: {out:?}"
    );
    let out = all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
    assert_eq!(replies(&out)[0].1, Frame::new("SHRINK").with("resize", 8).with("nodes", "n3").with("size", 2));
}

#[test]
fn a_shrink_commits_only_once_the_leaving_worker_has_said_bye_and_its_step_ended() {
    let mut h = running(3);
    h.handle(status(Phase::Shrinking { resize: 9, nodes: nodes(&["n2"]), since: 1 }));
    let out = all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
    assert_eq!(replies(&out)[0].1, Frame::new("SHRINK").with("resize", 9).with("nodes", "n2").with("size", 2));
    let out = all(&mut h, &[1, 2, 3], &Frame::new("BEGIN").with("resize", 9));
    let leaving: Vec<(ConnId, String, String)> = replies(&out)
        .into_iter()
        .map(|(c, f)| (c, f.get("rank").unwrap().to_string(), f.get("leaving").unwrap().to_string()))
        .collect();
    assert!(leaving.contains(&(2, "0".into(), "1".into())));
    assert!(leaving.contains(&(3, "1".into(), "0".into())));
    frame(&mut h, 1, Frame::new("REDIST").with("item", 1).with_payload(b"a".to_vec()));
    frame(&mut h, 2, Frame::new("REDIST").with("item", 1).with_payload(b"b".to_vec()));
    let out = frame(&mut h, 3, Frame::new("REDIST").with("item", 1).with_payload(b"c".to_vec()));
    let mut data: Vec<(ConnId, Vec<u8>)> = replies(&out).into_iter().map(|(c, f)| (c, f.payload)).collect();
    data.sort();
    assert_eq!(data, vec![(1, b"ab".to_vec()), (2, vec![]), (3, b"c".to_vec())]);
    assert!(told(&all(&mut h, &[1, 3], &Frame::new("COMMIT"))).is_empty());
    assert!(told(&frame(&mut h, 2, Frame::new("BYE"))).is_empty(), "its step still runs");
    assert!(h.handle(Input::Closed(2)).is_empty());
    let out = h.handle(Input::StepExited { worker: 2, success: true, how: "exit 0".into() });
    assert_eq!(told(&out), vec![Request::Commit { job: JOB, resize: 9 }]);
    // The leaver is no rank any more: two ranks are left.
    let out = frame(&mut h, 3, Frame::new("SEND").with("to", 2));
    assert!(String::from_utf8_lossy(&replies(&out)[0].1.payload).contains("the ranks are 0 to 1"));
}

#[test]
fn an_adaptation_the_scheduler_ends_before_the_workers_begin_it_is_dropped_after_it_is_fatal() {
    let mut h = running(2);
    h.handle(status(Phase::Expanding { resize: 5, nodes: nodes(&["n3"]), since: 1 }));
    let out = h.handle(status(Phase::Steady));
    assert!(matches!(&out[0], Output::Log(l) if l.contains("ended adaptation 5 before the application began it")));
    // Slurm ends the abandoned worker's step: not a failure.
    let out = h.handle(Input::StepExited { worker: 3, success: false, how: "killed".into() });
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "{out:?}");
    assert_eq!(verbs(&all(&mut h, &[1, 2], &Frame::new("PROBE"))), vec![(1, "NONE".into()), (2, "NONE".into())]);

    h.handle(status(Phase::Shrinking { resize: 6, nodes: nodes(&["n2"]), since: 1 }));
    all(&mut h, &[1, 2], &Frame::new("PROBE"));
    let out = h.handle(status(Phase::Steady));
    assert!(out.contains(&Output::Exit(1)), "{out:?}");
    assert!(told(&out).contains(&Request::Bye { job: JOB }));
}

#[test]
fn a_worker_that_fails_or_vanishes_ends_the_run_unless_its_node_was_lost_and_the_last_bye_ends_it_cleanly() {
    let mut h = running(2);
    let out = h.handle(Input::StepExited { worker: 2, success: false, how: "srun on n2 ended with exit 3".into() });
    assert!(out.iter().any(|o| matches!(o, Output::Log(l) if l.contains("waiting to learn whether n2 failed"))));
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "its node may have failed: {out:?}");
    // The time to learn it ran out (0 s here), and the job did not lose n2.
    let out = h.handle(Input::Tick);
    assert!(out.iter().any(|o| matches!(o, Output::Log(l) if l.contains("the job did not lose n2"))), "{out:?}");
    assert!(out.contains(&Output::Exit(1)));

    let mut h = running(2);
    h.handle(Input::Closed(1));
    assert!(h.handle(Input::Tick).contains(&Output::Exit(1)), "closed without BYE");

    let mut h = running(2);
    h.handle(Input::StepExited { worker: 2, success: true, how: "exit 0".into() });
    assert!(h.handle(Input::Tick).contains(&Output::Exit(1)), "ended well but without BYE, its node not lost");

    let mut h = running(2);
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    h.handle(Input::StepExited { worker: 1, success: true, how: "exit 0".into() });
    let out = h.handle(Input::StepExited { worker: 2, success: true, how: "exit 0".into() });
    assert_eq!(told(&out), vec![Request::Bye { job: JOB }]);
    assert!(out.contains(&Output::Exit(0)));
}

#[test]
fn reports_are_summed_over_the_workers_and_sent_at_most_once_an_interval() {
    let (mut h, _) = hub(&["n1", "n2"], Duration::ZERO);
    hello(&mut h, 1);
    hello(&mut h, 2);
    assert!(told(&h.handle(Input::Tick)).is_empty(), "nothing reported yet");
    let report = |it: u32, compute: f64, watts: f64| {
        Frame::new("REPORT").with("iterations", it).with("compute_s", compute).with("comm_s", 1).with("watts", watts)
    };
    frame(&mut h, 1, report(10, 3.0, 100.0));
    frame(&mut h, 1, report(10, 1.0, 100.0));
    frame(&mut h, 2, report(10, 2.0, 200.0));
    let bad = frame(&mut h, 2, Frame::new("REPORT").with("iterations", 1).with("compute_s", "NaN").with("comm_s", 0));
    assert_eq!(verbs(&bad), vec![(2, "ERROR".into())]);
    assert_eq!(
        told(&h.handle(Input::Tick)),
        vec![Request::Report {
            job: JOB,
            iterations: 20,
            compute_s: 6.0,
            comm_s: 3.0,
            watts_per_node: Some(150.0),
            adapt_s: None
        }]
    );
    let (mut slow, _) = hub(&["n1"], Duration::from_secs(3600));
    hello(&mut slow, 1);
    frame(&mut slow, 1, report(10, 4.0, 100.0));
    assert!(told(&slow.handle(Input::Tick)).is_empty(), "the interval has not passed");
}

#[test]
fn messages_wait_for_their_receiver_by_rank() {
    let mut h = running(2);
    assert!(replies(&frame(&mut h, 1, Frame::new("RECV").with("from", 1))).is_empty());
    let out = frame(&mut h, 2, Frame::new("SEND").with("to", 0).with_payload(b"hi".to_vec()));
    let r = replies(&out);
    assert_eq!(r[0], (2, Frame::new("OK")));
    assert_eq!(r[1], (1, Frame::new("MSG").with("from", 1).with_payload(b"hi".to_vec())));
    let out = frame(&mut h, 2, Frame::new("SEND").with("to", 5));
    assert!(String::from_utf8_lossy(&replies(&out)[0].1.payload).contains("the ranks are 0 to 1"));
    let out =
        all(&mut h, &[1, 2], &Frame::new("ALLREDUCE").with_payload(malleable_rt::wire::f64s_to_bytes(&[1.5, 2.0])));
    let sums = malleable_rt::wire::bytes_to_f64s(&replies(&out)[0].1.payload).unwrap();
    assert_eq!(sums, vec![3.0, 4.0]);
}

#[test]
fn a_lost_node_sends_the_others_back_to_the_last_checkpoint() {
    let mut h = running(3);
    // A checkpoint at iteration 20: one 1-byte item a worker.
    for w in 1..=3u32 {
        frame(
            &mut h,
            w as ConnId,
            Frame::new("CHECKPOINT").with("iteration", 20).with("item", 1).with_payload(vec![b'a' + w as u8]),
        );
    }
    // Worker 1 waits for worker 2's message when n2 fails and is lost.
    assert!(replies(&frame(&mut h, 1, Frame::new("RECV").with("from", 1))).is_empty());
    h.handle(Input::Closed(2));
    let out = h.handle(status(Phase::Lost { resize: 8, nodes: nodes(&["n2"]), since: 1 }));
    assert_eq!(verbs(&out), vec![(1, "LOST".into())], "the waiting worker is told");
    assert_eq!(verbs(&frame(&mut h, 3, Frame::new("BARRIER"))), vec![(3, "LOST".into())]);
    let out = all(&mut h, &[1, 3], &Frame::new("PROBE"));
    let r = replies(&out);
    assert_eq!(r[0].1, Frame::new("SHRINK").with("resize", 8).with("nodes", "n2").with("size", 2).with("lost", 1));
    all(&mut h, &[1, 3], &Frame::new("BEGIN").with("resize", 8));
    // What they send is not what they get: the checkpoint is.
    frame(&mut h, 1, Frame::new("REDIST").with("item", 1).with_payload(b"zz".to_vec()));
    let out = frame(&mut h, 3, Frame::new("REDIST").with("item", 1));
    let mut data: Vec<(ConnId, Frame)> = replies(&out);
    data.sort_by_key(|(c, _)| *c);
    assert_eq!(data[0].1, Frame::new("DATA").with_payload(b"bc".to_vec()).with("checkpoint", 20));
    assert_eq!(data[1].1, Frame::new("DATA").with_payload(b"d".to_vec()).with("checkpoint", 20));
    // Both commit; the lost worker's step need not end first.
    let out = all(&mut h, &[1, 3], &Frame::new("COMMIT"));
    assert_eq!(told(&out), vec![Request::Commit { job: JOB, resize: 8 }]);
}

#[test]
fn workers_that_cannot_start_on_the_new_nodes_cancel_the_expand_and_the_job_goes_on() {
    let mut h = running(2);
    h.handle(status(Phase::Expanding { resize: 5, nodes: nodes(&["n3"]), since: 1 }));
    // Its first start fails: it is started again (after 0 s here).
    let failed = Input::StepExited { worker: 3, success: false, how: "srun on n3 ended with exit 1".into() };
    assert!(told(&h.handle(failed.clone())).is_empty());
    assert!(h.handle(Input::Tick).contains(&Output::Launch { worker: 3, node: "n3".into(), joining: 5 }));
    // Its second, the last of the two tries allowed, cancels the expand.
    let out = h.handle(failed);
    assert_eq!(told(&out), vec![Request::Cancel { job: JOB, resize: 5 }]);
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "{out:?}");
    // Never announced, and gone once the scheduler rolled it back.
    assert_eq!(verbs(&all(&mut h, &[1, 2], &Frame::new("PROBE"))), vec![(1, "NONE".into()), (2, "NONE".into())]);
    let out = h.handle(status(Phase::Steady));
    assert!(out.iter().any(|o| matches!(o, Output::Log(l) if l.contains("going on as before"))), "{out:?}");
}

#[test]
fn an_adaptation_decided_as_the_application_finishes_is_dropped_and_the_run_ends() {
    // An expand: the new worker joined, but the others finished their last
    // iteration without probing again. The run ends with BYE alone, which
    // rolls the expand back: a CANCEL would tell the scheduler the new nodes
    // failed, and it would keep them from every job for a minute.
    let mut h = running(2);
    h.handle(status(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 }));
    hello(&mut h, 3);
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    h.handle(Input::StepExited { worker: 1, success: true, how: "exit 0".into() });
    let out = h.handle(Input::StepExited { worker: 2, success: true, how: "exit 0".into() });
    assert_eq!(told(&out), vec![Request::Bye { job: JOB }]);
    assert!(out.contains(&Output::Exit(0)), "{out:?}");

    // A shrink announced to nobody: the job's end frees the nodes.
    let mut h = running(3);
    h.handle(status(Phase::Shrinking { resize: 9, nodes: nodes(&["n2"]), since: 1 }));
    all(&mut h, &[1, 2, 3], &Frame::new("BYE"));
    let mut out = Vec::new();
    for w in 1..=3 {
        out = h.handle(Input::StepExited { worker: w, success: true, how: "exit 0".into() });
    }
    assert_eq!(told(&out), vec![Request::Bye { job: JOB }]);
    assert!(out.contains(&Output::Exit(0)), "{out:?}");
}

#[test]
fn a_new_worker_still_launching_when_the_others_finish_is_waited_for() {
    // Its node's slurmd is dead: srun fails it only after the others ended.
    let mut h = running(2);
    h.handle(status(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 }));
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    h.handle(Input::StepExited { worker: 1, success: true, how: "exit 0".into() });
    let out = h.handle(Input::StepExited { worker: 2, success: true, how: "exit 0".into() });
    assert!(told(&out).is_empty() && !out.contains(&Output::Exit(0)), "waits for the new worker: {out:?}");
    // Its start fails twice (the tries allowed): the expand is cancelled as
    // a failure of the node, and the run ends.
    let failed = Input::StepExited { worker: 3, success: false, how: "srun on n3 ended with exit 1".into() };
    h.handle(failed.clone());
    h.handle(Input::Tick);
    let out = h.handle(failed);
    assert_eq!(told(&out), vec![Request::Cancel { job: JOB, resize: 7 }, Request::Bye { job: JOB }]);
    assert!(out.contains(&Output::Exit(0)), "{out:?}");
}

#[test]
fn an_expand_whose_workers_join_after_the_others_ended_is_dropped_and_the_run_ends() {
    // Seen on ESP (mtct): the application finished and its workers said
    // BYE; the scheduler had just decided an expand, whose new worker was
    // still starting when the last old one ended, and joined after. Nobody
    // would begin it: the run waited for the plugin's AdaptTimeout (60 s),
    // past the job's time limit, on 24 nodes.
    let mut h = running(2);
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    h.handle(Input::StepExited { worker: 1, success: true, how: "exit 0".into() });
    let out = h.handle(status(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 }));
    assert!(out.contains(&Output::Launch { worker: 3, node: "n3".into(), joining: 7 }), "{out:?}");
    let out = h.handle(Input::StepExited { worker: 2, success: true, how: "exit 0".into() });
    assert!(told(&out).is_empty(), "waits for the new worker: {out:?}");
    let out = hello(&mut h, 3);
    assert_eq!(told(&out), vec![Request::Bye { job: JOB }], "{out:?}");
    assert!(out.contains(&Output::Exit(0)), "{out:?}");
}

/// A restart-mode hub (one MPI step) on these nodes, every worker connected.
fn restarting(on: &[&str]) -> Hub {
    let rules = Rules { launch: Launch::Restart, confirm_loss: Duration::ZERO, ..Rules::default() };
    let (mut h, out) = Hub::new(JOB, "secret".into(), &nodes(on), rules);
    assert!(out.contains(&Output::LaunchStep { first: 1, nodes: nodes(on), joining: 0 }), "{out:?}");
    assert!(!out.iter().any(|o| matches!(o, Output::Launch { .. })), "one step, not one a worker: {out:?}");
    for w in 1..=on.len() as WorkerId {
        let r = replies(&hello(&mut h, w));
        assert_eq!(r[0].1.get("restart"), Ok("1"), "{r:?}");
    }
    h
}

fn ended(h: &mut Hub, ws: &[WorkerId]) -> Vec<Output> {
    let mut out = Vec::new();
    for &worker in ws {
        out = h.handle(Input::StepExited { worker, success: true, how: "exit 0".into() });
    }
    out
}

fn job_on(phase: Phase, on: &[&str]) -> Input {
    match status(phase) {
        Input::Job { status, .. } => Input::Job { status, nodes: nodes(on) },
        _ => unreachable!(),
    }
}

#[test]
fn in_restart_mode_an_expand_checkpoints_ends_the_step_and_starts_one_on_all_nodes_from_the_checkpoint() {
    let mut h = restarting(&["n1", "n2"]);
    let out = h.handle(job_on(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 }, &["n1", "n2", "n3"]));
    assert!(!out.iter().any(|o| matches!(o, Output::LaunchStep { .. } | Output::Launch { .. })), "{out:?}");
    // Announced at once: nothing starts before the old step has ended.
    let out = all(&mut h, &[1, 2], &Frame::new("PROBE"));
    assert_eq!(replies(&out)[0].1, Frame::new("EXPAND").with("resize", 7).with("nodes", "n3").with("size", 3));
    assert_eq!(told(&out), vec![Request::Begin { job: JOB, resize: 7 }]);
    // BEGIN is the other mode's way; here the workers checkpoint and finish.
    let r = replies(&frame(&mut h, 1, Frame::new("BEGIN").with("resize", 7)));
    assert!(String::from_utf8_lossy(&r[0].1.payload).contains("restart mode"), "{r:?}");
    frame(&mut h, 1, Frame::new("CHECKPOINT").with("iteration", 20).with("item", 1).with_payload(b"abc".to_vec()));
    let cp = Frame::new("CHECKPOINT").with("iteration", 20).with("item", 1).with_payload(b"def".to_vec());
    assert_eq!(verbs(&frame(&mut h, 2, cp)), vec![(1, "OK".into()), (2, "OK".into())]);
    let out = all(&mut h, &[1, 2], &Frame::new("BYE"));
    assert!(told(&out).is_empty() && !out.iter().any(|o| matches!(o, Output::LaunchStep { .. })), "{out:?}");
    assert!(!ended(&mut h, &[1]).iter().any(|o| matches!(o, Output::LaunchStep { .. })), "worker 2's step runs");
    let out = ended(&mut h, &[2]);
    assert!(out.contains(&Output::LaunchStep { first: 3, nodes: nodes(&["n1", "n2", "n3"]), joining: 7 }), "{out:?}");
    // The new step's ranks join, and the checkpoint is shared out among them.
    for (w, rank) in [(3, 0), (4, 1), (5, 2)] {
        let r = replies(&hello(&mut h, w));
        assert_eq!(
            r[0].1,
            Frame::new("WELCOME").with("rank", rank).with("size", 3).with("joining", 7).with("restart", 1)
        );
    }
    all(&mut h, &[3, 4, 5], &Frame::new("BEGIN").with("resize", 7));
    let out = all(&mut h, &[3, 4, 5], &Frame::new("REDIST").with("item", 1));
    let mut data: Vec<(ConnId, Vec<u8>, String)> = replies(&out)
        .into_iter()
        .map(|(c, f)| (c, f.payload.clone(), f.get("checkpoint").unwrap().to_string()))
        .collect();
    data.sort();
    let want = [(3, b"ab", "20"), (4, b"cd", "20"), (5, b"ef", "20")];
    assert_eq!(data, want.map(|(c, d, i)| (c, d.to_vec(), i.to_string())).to_vec());
    assert!(told(&all(&mut h, &[3, 4], &Frame::new("COMMIT"))).is_empty(), "rank 2 has not committed");
    assert_eq!(told(&frame(&mut h, 5, Frame::new("COMMIT"))), vec![Request::Commit { job: JOB, resize: 7 }]);
}

#[test]
fn in_restart_mode_a_shrink_starts_the_step_on_the_nodes_left_and_an_application_that_finished_is_not_started_again() {
    let mut h = restarting(&["n1", "n2", "n3"]);
    h.handle(job_on(Phase::Shrinking { resize: 8, nodes: nodes(&["n2"]), since: 1 }, &["n1", "n2", "n3"]));
    let out = all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
    assert_eq!(replies(&out)[0].1, Frame::new("SHRINK").with("resize", 8).with("nodes", "n2").with("size", 2));
    all(&mut h, &[1, 2, 3], &Frame::new("CHECKPOINT").with("iteration", 5).with("item", 1));
    all(&mut h, &[1, 2, 3], &Frame::new("BYE"));
    let out = ended(&mut h, &[1, 2, 3]);
    assert!(out.contains(&Output::LaunchStep { first: 4, nodes: nodes(&["n1", "n3"]), joining: 8 }), "{out:?}");

    // An application whose last iteration met the announcement finishes
    // without a checkpoint: nothing starts again, and the run ends.
    let mut h = restarting(&["n1", "n2"]);
    h.handle(job_on(Phase::Shrinking { resize: 9, nodes: nodes(&["n2"]), since: 1 }, &["n1", "n2"]));
    all(&mut h, &[1, 2], &Frame::new("PROBE"));
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    let out = ended(&mut h, &[1, 2]);
    assert!(!out.iter().any(|o| matches!(o, Output::LaunchStep { .. })), "{out:?}");
    assert_eq!(told(&out), vec![Request::Bye { job: JOB }]);
    assert!(out.contains(&Output::Exit(0)), "{out:?}");
}

#[test]
fn in_restart_mode_a_step_that_does_not_end_after_every_rank_said_bye_is_ended_once_and_counts_as_ended() {
    // The run's end: rank 2 has not said BYE, so the step is not ended
    // however long rank 1 has been done.
    let mut h = restarting(&["n1", "n2"]);
    frame(&mut h, 1, Frame::new("BYE"));
    let ends = |out: &[Output]| out.iter().filter(|o| matches!(o, Output::EndStep { .. })).count();
    assert_eq!(ends(&h.handle(Input::Tick)), 0);
    frame(&mut h, 2, Frame::new("BYE"));
    // Within the grace (30 s by default) nothing is ended.
    assert_eq!(ends(&h.handle(Input::Tick)), 0);

    let rules = Rules { launch: Launch::Restart, end_grace: Duration::ZERO, ..Rules::default() };
    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1", "n2"]), rules);
    hello(&mut h, 1);
    hello(&mut h, 2);
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    let out = h.handle(Input::Tick);
    assert_eq!(out.iter().filter(|o| **o == Output::EndStep { worker: 1 }).count(), 1, "{out:?}");
    assert_eq!(ends(&h.handle(Input::Tick)), 0, "once");
    // Ended by the hub, its srun fails: the application had finished.
    for worker in [1, 2] {
        let out = h.handle(Input::StepExited { worker, success: false, how: "signal 15".into() });
        if worker == 2 {
            assert!(out.contains(&Output::Exit(0)), "{out:?}");
        }
    }

    // A restart: the old step, ended by the hub, is followed by the new one.
    let rules = Rules { launch: Launch::Restart, end_grace: Duration::ZERO, ..Rules::default() };
    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1", "n2"]), rules);
    hello(&mut h, 1);
    hello(&mut h, 2);
    h.handle(job_on(Phase::Shrinking { resize: 8, nodes: nodes(&["n2"]), since: 1 }, &["n1", "n2"]));
    all(&mut h, &[1, 2], &Frame::new("PROBE"));
    all(&mut h, &[1, 2], &Frame::new("CHECKPOINT").with("iteration", 5).with("item", 1));
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    assert!(h.handle(Input::Tick).contains(&Output::EndStep { worker: 1 }));
    h.handle(Input::StepExited { worker: 1, success: false, how: "signal 15".into() });
    let out = h.handle(Input::StepExited { worker: 2, success: false, how: "signal 15".into() });
    assert!(out.contains(&Output::LaunchStep { first: 3, nodes: nodes(&["n1"]), joining: 8 }), "{out:?}");
    // The new step's worker has said nothing: it is not ended.
    assert_eq!(ends(&h.handle(Input::Tick)), 0);
}

#[test]
fn in_restart_mode_an_adaptations_old_step_that_saved_its_data_is_given_its_own_shorter_grace() {
    // The run's end keeps the whole grace (30 s); an adaptation's old step
    // whose ranks checkpointed has its own (here none).
    let rules = Rules { launch: Launch::Restart, adapt_end_grace: Duration::ZERO, ..Rules::default() };
    let ends = |out: &[Output]| out.iter().filter(|o| matches!(o, Output::EndStep { .. })).count();
    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1", "n2"]), rules);
    hello(&mut h, 1);
    hello(&mut h, 2);
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    assert_eq!(ends(&h.handle(Input::Tick)), 0, "the run's end waits its grace");

    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1", "n2"]), rules);
    hello(&mut h, 1);
    hello(&mut h, 2);
    h.handle(job_on(Phase::Expanding { resize: 8, nodes: nodes(&["n3"]), since: 1 }, &["n1", "n2", "n3"]));
    all(&mut h, &[1, 2], &Frame::new("PROBE"));
    all(&mut h, &[1, 2], &Frame::new("CHECKPOINT").with("iteration", 5).with("item", 1));
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    let out = h.handle(Input::Tick);
    assert_eq!(out.iter().filter(|o| **o == Output::EndStep { worker: 1 }).count(), 1, "{out:?}");
    assert!(
        out.iter().any(|o| matches!(o, Output::Log(l) if l.contains("0 s after its last rank said BYE"))),
        "{out:?}"
    );
}

/// Worker `w`'s item at a checkpoint at iteration 20: one byte.
fn checkpoint_all(h: &mut Hub, ws: &[WorkerId]) {
    for &w in ws {
        let f = Frame::new("CHECKPOINT").with("iteration", 20).with("item", 1).with_payload(vec![b'a' + w as u8]);
        frame(h, w as ConnId, f);
    }
}

/// Workers `a` and `b` (in that order of ranks) begin `resize`, each gets
/// its share of the checkpoint of [`checkpoint_all`] over workers 1 to 3
/// ("bc" and "d"), and their commits commit it.
fn resume_two_from_the_checkpoint(h: &mut Hub, a: WorkerId, b: WorkerId, resize: u64) {
    all(h, &[a, b], &Frame::new("BEGIN").with("resize", resize));
    frame(h, a as ConnId, Frame::new("REDIST").with("item", 1));
    let mut data = replies(&frame(h, b as ConnId, Frame::new("REDIST").with("item", 1)));
    data.sort_by_key(|(c, _)| *c);
    assert_eq!(data[0].1, Frame::new("DATA").with_payload(b"bc".to_vec()).with("checkpoint", 20));
    assert_eq!(data[1].1, Frame::new("DATA").with_payload(b"d".to_vec()).with("checkpoint", 20));
    let out = all(h, &[a, b], &Frame::new("COMMIT"));
    assert_eq!(told(&out), vec![Request::Commit { job: JOB, resize }]);
}

#[test]
fn a_node_lost_in_the_middle_of_a_shrink_sends_the_others_back_to_the_last_checkpoint() {
    // Seen on a compose site: a shrink off n2 had begun when n2's host was
    // killed; the plugin ended the shrink as the job lost n2 and told the
    // loss, and mall-run ended the run ("the scheduler ended adaptation 9
    // while the application was carrying it out").
    let mut h = running(3);
    checkpoint_all(&mut h, &[1, 2, 3]);
    h.handle(status(Phase::Shrinking { resize: 9, nodes: nodes(&["n2"]), since: 1 }));
    all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
    all(&mut h, &[1, 2, 3], &Frame::new("BEGIN").with("resize", 9));
    // 1 and 3 wait in REDIST for 2, whose host is gone.
    frame(&mut h, 1, Frame::new("REDIST").with("item", 1).with_payload(b"x".to_vec()));
    frame(&mut h, 3, Frame::new("REDIST").with("item", 1).with_payload(b"y".to_vec()));
    h.handle(Input::Closed(2));
    let out = h.handle(status(Phase::Lost { resize: 10, nodes: nodes(&["n2"]), since: 2 }));
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "the job goes on: {out:?}");
    let mut waiting = verbs(&out);
    waiting.sort();
    assert_eq!(waiting, vec![(1, "LOST".into()), (3, "LOST".into())], "{out:?}");
    let out = all(&mut h, &[1, 3], &Frame::new("PROBE"));
    assert_eq!(
        replies(&out)[0].1,
        Frame::new("SHRINK").with("resize", 10).with("nodes", "n2").with("size", 2).with("lost", 1)
    );
    resume_two_from_the_checkpoint(&mut h, 1, 3, 10);
    // n2's step ends as its node is gone: no failure.
    let out = h.handle(Input::StepExited { worker: 2, success: false, how: "Node failure".into() });
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "{out:?}");
}

#[test]
fn a_worker_that_left_a_node_lost_before_its_step_ended_keeps_neither_the_commit_nor_the_end_waiting() {
    // CI on a 26.05 site: a shrink off n3; its worker moved its data and
    // said BYE, and n3's host was killed before its srun had ended, so it
    // never did. The shrink could not commit (its leaver's step runs), the
    // loss of n3 ended it, the others went back to their checkpoint and
    // finished, and mall-run waited for that step until the job's limit.
    let mut h = running(3);
    checkpoint_all(&mut h, &[1, 2, 3]);
    h.handle(status(Phase::Shrinking { resize: 9, nodes: nodes(&["n3"]), since: 1 }));
    all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
    all(&mut h, &[1, 2, 3], &Frame::new("BEGIN").with("resize", 9));
    for w in 1..=3 {
        frame(&mut h, w as ConnId, Frame::new("REDIST").with("item", 1).with_payload(vec![b'x']));
    }
    frame(&mut h, 3, Frame::new("BYE"));
    h.handle(Input::Closed(3));
    let out = all(&mut h, &[1, 2], &Frame::new("COMMIT"));
    assert!(told(&out).is_empty(), "the leaver's step still runs: {out:?}");
    let out = h.handle(status(Phase::Lost { resize: 10, nodes: nodes(&["n3"]), since: 2 }));
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "the job goes on: {out:?}");
    // The survivors learn of the loss at their next call, and go back.
    assert_eq!(verbs(&frame(&mut h, 1, Frame::new("SEND").with("to", 1))), vec![(1, "LOST".into())]);
    all(&mut h, &[1, 2], &Frame::new("PROBE"));
    resume_two_from_the_checkpoint(&mut h, 1, 2, 10);
    h.handle(Input::Answered { request: Request::Commit { job: JOB, resize: 10 }, result: Ok(()) });
    all(&mut h, &[1, 2], &Frame::new("BYE"));
    h.handle(Input::StepExited { worker: 1, success: true, how: "exit 0".into() });
    let out = h.handle(Input::StepExited { worker: 2, success: true, how: "exit 0".into() });
    assert_eq!(told(&out), vec![Request::Bye { job: JOB }], "n3's step is not waited for: {out:?}");
    assert!(out.contains(&Output::Exit(0)), "{out:?}");
}

#[test]
fn a_node_lost_in_the_middle_of_a_shrink_off_two_takes_both_and_of_an_expand_drops_the_new_workers() {
    // The shrink was off n2 and n3; only n3 failed: the plugin forces the
    // shrink off n2 (slurmd ends its worker) and tells the loss of n3. The
    // same before the workers began it (seen on a compose site, n3's host
    // killed before any worker probed): n2's worker leaves too, or the
    // shrink's nodes, freed later, end it as a failure.
    for begun in [true, false] {
        let mut h = running(3);
        checkpoint_all(&mut h, &[1, 2, 3]);
        h.handle(status(Phase::Shrinking { resize: 9, nodes: nodes(&["n2", "n3"]), since: 1 }));
        if begun {
            all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
            all(&mut h, &[1, 2, 3], &Frame::new("BEGIN").with("resize", 9));
        }
        h.handle(Input::Closed(3));
        h.handle(status(Phase::Lost { resize: 10, nodes: nodes(&["n3"]), since: 2 }));
        let out = frame(&mut h, 1, Frame::new("PROBE"));
        assert_eq!(
            replies(&out)[0].1,
            Frame::new("SHRINK").with("resize", 10).with("nodes", "n3").with("size", 1).with("lost", 1),
            "worker 1 goes on alone (begun: {begun})"
        );
        frame(&mut h, 1, Frame::new("BEGIN").with("resize", 10));
        let data = replies(&frame(&mut h, 1, Frame::new("REDIST").with("item", 1)));
        assert_eq!(data[0].1, Frame::new("DATA").with_payload(b"bcd".to_vec()).with("checkpoint", 20));
        assert_eq!(told(&frame(&mut h, 1, Frame::new("COMMIT"))), vec![Request::Commit { job: JOB, resize: 10 }]);
        for (w, how) in [(2, "killed"), (3, "Node failure")] {
            let out = h.handle(Input::StepExited { worker: w, success: false, how: how.into() });
            assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "{out:?}");
        }
    }

    // An expand onto n3 had begun when n1 failed: the plugin rolls the
    // expand back (slurmd ends the new worker) and tells the loss of n1.
    let mut h = running(2);
    checkpoint_all(&mut h, &[1, 2]);
    h.handle(status(Phase::Expanding { resize: 7, nodes: nodes(&["n3"]), since: 1 }));
    hello(&mut h, 3);
    frame(&mut h, 3, Frame::new("BEGIN").with("resize", 7));
    all(&mut h, &[1, 2], &Frame::new("PROBE"));
    all(&mut h, &[1, 2], &Frame::new("BEGIN").with("resize", 7));
    h.handle(Input::Closed(1));
    let out = h.handle(status(Phase::Lost { resize: 8, nodes: nodes(&["n1"]), since: 2 }));
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "the job goes on: {out:?}");
    assert!(out.contains(&Output::Close(3)), "the new worker is let go: {out:?}");
    let out = frame(&mut h, 2, Frame::new("PROBE"));
    assert_eq!(
        replies(&out)[0].1,
        Frame::new("SHRINK").with("resize", 8).with("nodes", "n1").with("size", 1).with("lost", 1)
    );
    frame(&mut h, 2, Frame::new("BEGIN").with("resize", 8));
    let data = replies(&frame(&mut h, 2, Frame::new("REDIST").with("item", 1)));
    assert_eq!(data[0].1, Frame::new("DATA").with_payload(b"bc".to_vec()).with("checkpoint", 20));
    assert_eq!(told(&frame(&mut h, 2, Frame::new("COMMIT"))), vec![Request::Commit { job: JOB, resize: 8 }]);
    let out = h.handle(Input::StepExited { worker: 3, success: false, how: "killed".into() });
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "{out:?}");
}

#[test]
fn in_restart_mode_a_node_lost_in_an_expand_ends_its_new_step_and_starts_again_on_the_nodes_left() {
    // The expand's new step on n1-n4 has started from the checkpoint its
    // ranks saved when n2 fails; the plugin rolls the expand back (n4
    // freed) and tells the loss. Before, the run ended: "the scheduler
    // ended adaptation 7 while the application was carrying it out".
    let mut h = restarting(&["n1", "n2", "n3"]);
    h.handle(job_on(Phase::Expanding { resize: 7, nodes: nodes(&["n4"]), since: 1 }, &["n1", "n2", "n3", "n4"]));
    all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
    checkpoint_all(&mut h, &[1, 2, 3]);
    all(&mut h, &[1, 2, 3], &Frame::new("BYE"));
    let out = ended(&mut h, &[1, 2, 3]);
    assert!(out.contains(&Output::LaunchStep { first: 4, nodes: nodes(&["n1", "n2", "n3", "n4"]), joining: 7 }));
    for w in 4..=7 {
        hello(&mut h, w);
    }
    let out = h.handle(job_on(Phase::Lost { resize: 8, nodes: nodes(&["n2"]), since: 2 }, &["n1", "n3"]));
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "{out:?}");
    assert!(out.contains(&Output::EndStep { worker: 4 }), "{out:?}");
    assert!(!out.iter().any(|o| matches!(o, Output::LaunchStep { .. })), "the expand's step runs yet: {out:?}");
    assert_eq!(told(&out), vec![Request::Begin { job: JOB, resize: 8 }]);
    let mut out = Vec::new();
    for worker in 4..=7 {
        out = h.handle(Input::StepExited { worker, success: false, how: "signal 15".into() });
    }
    assert!(out.contains(&Output::LaunchStep { first: 8, nodes: nodes(&["n1", "n3"]), joining: 8 }), "{out:?}");
    for w in [8, 9] {
        hello(&mut h, w);
    }
    resume_two_from_the_checkpoint(&mut h, 8, 9, 8);

    // A shrink off n3 forced as n2 is lost, before the new step started:
    // the job may hold n3 a while yet (slurmdbd away); nothing starts there.
    let mut h = restarting(&["n1", "n2", "n3"]);
    h.handle(job_on(Phase::Shrinking { resize: 7, nodes: nodes(&["n3"]), since: 1 }, &["n1", "n2", "n3"]));
    all(&mut h, &[1, 2, 3], &Frame::new("PROBE"));
    checkpoint_all(&mut h, &[1, 2, 3]);
    let out = h.handle(job_on(Phase::Lost { resize: 8, nodes: nodes(&["n2"]), since: 2 }, &["n1", "n3"]));
    assert!(out.contains(&Output::EndStep { worker: 1 }), "{out:?}");
    let out = ended(&mut h, &[1, 2, 3]);
    assert!(out.contains(&Output::LaunchStep { first: 6, nodes: nodes(&["n1"]), joining: 8 }), "{out:?}");
}

#[test]
fn in_restart_mode_a_lost_node_starts_the_step_again_on_the_nodes_left_from_the_last_checkpoint() {
    let mut h = restarting(&["n1", "n2", "n3"]);
    // A checkpoint of every rank's rows at iteration 20 (--checkpoint-every).
    checkpoint_all(&mut h, &[1, 2, 3]);
    // n2 fails: Slurm ends the step, every rank with it, before the plugin
    // tells the loss.
    for w in 1..=3u32 {
        h.handle(Input::Closed(w as ConnId));
    }
    let mut out = Vec::new();
    for worker in 1..=3 {
        out.extend(h.handle(Input::StepExited { worker, success: false, how: "srun ended with exit 1".into() }));
    }
    assert!(!out.iter().any(|o| matches!(o, Output::Exit(_))), "waits to learn whether a node failed: {out:?}");
    let out = h.handle(job_on(Phase::Lost { resize: 8, nodes: nodes(&["n2"]), since: 2 }, &["n1", "n3"]));
    assert!(out.contains(&Output::LaunchStep { first: 4, nodes: nodes(&["n1", "n3"]), joining: 8 }), "{out:?}");
    assert_eq!(told(&out), vec![Request::Begin { job: JOB, resize: 8 }]);
    // The new step's ranks resume from the checkpoint, split over two.
    for w in [4, 5] {
        let r = replies(&hello(&mut h, w));
        assert_eq!((r[0].1.get("restart"), r[0].1.get("joining")), (Ok("1"), Ok("8")), "{r:?}");
    }
    resume_two_from_the_checkpoint(&mut h, 4, 5, 8);

    // Told before the step ended: the hub ends it, and starts the new one
    // once it has.
    let mut h = restarting(&["n1", "n2"]);
    checkpoint_all(&mut h, &[1, 2]);
    let out = h.handle(job_on(Phase::Lost { resize: 8, nodes: nodes(&["n2"]), since: 2 }, &["n1"]));
    assert!(out.contains(&Output::EndStep { worker: 1 }), "{out:?}");
    assert!(!out.iter().any(|o| matches!(o, Output::LaunchStep { .. })), "{out:?}");
    let out = ended(&mut h, &[1, 2]);
    assert!(out.contains(&Output::LaunchStep { first: 3, nodes: nodes(&["n1"]), joining: 8 }), "{out:?}");

    // No checkpoint to go on from: the run ends at once, saying why.
    let mut h = restarting(&["n1", "n2"]);
    let out = h.handle(job_on(Phase::Lost { resize: 8, nodes: nodes(&["n2"]), since: 2 }, &["n1"]));
    assert!(out.contains(&Output::Exit(1)), "{out:?}");
    assert!(
        out.iter().any(|o| matches!(o, Output::Log(l) if l.contains("took no checkpoint to start again from"))),
        "{out:?}"
    );
}

#[test]
fn a_step_none_of_whose_workers_connects_is_ended_and_started_again() {
    // Chaos run 23: the step's slurmstepd died at its launch (the node's
    // /tmp full) and srun waited for it until the job's time limit.
    let ends = |out: &[Output]| out.iter().filter(|o| matches!(o, Output::EndStep { .. })).count();
    // Within the two minutes given by default, a silent step is waited for.
    let rules = Rules { launch: Launch::Restart, ..Rules::default() };
    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1", "n2"]), rules);
    assert_eq!(ends(&h.handle(Input::Tick)), 0);

    let rules = Rules {
        launch: Launch::Restart,
        connect_within: Duration::ZERO,
        start_again_after: Duration::ZERO,
        ..Rules::default()
    };
    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1", "n2"]), rules);
    let out = h.handle(Input::Tick);
    assert!(out.contains(&Output::EndStep { worker: 1 }), "{out:?}");
    assert!(
        out.iter().any(|o| matches!(o, Output::Log(l) if l.contains("none of its workers has connected"))),
        "{out:?}"
    );
    assert_eq!(ends(&h.handle(Input::Tick)), 0, "ended once");
    // Its srun, ended, fails: the step is started again, once.
    h.handle(Input::StepExited { worker: 1, success: false, how: "signal 15".into() });
    h.handle(Input::StepExited { worker: 2, success: false, how: "signal 15".into() });
    let out = h.handle(Input::Tick);
    let launches = out.iter().filter(|o| matches!(o, Output::LaunchStep { .. })).count();
    assert!(out.contains(&Output::LaunchStep { first: 1, nodes: nodes(&["n1", "n2"]), joining: 0 }), "{out:?}");
    assert_eq!(launches, 1, "{out:?}");
    assert!(!out.contains(&Output::Exit(1)), "{out:?}");
    // Its workers connect this time: nothing is ended.
    hello(&mut h, 1);
    hello(&mut h, 2);
    assert_eq!(ends(&h.handle(Input::Tick)), 0);

    // A worker's own step (not MPI) alike; after its tries, the run ends
    // with the reason rather than waiting for ever.
    let rules = Rules { connect_within: Duration::ZERO, start_tries: 2, ..hub_rules() };
    let (mut h, _) = Hub::new(JOB, "secret".into(), &nodes(&["n1"]), rules);
    assert!(h.handle(Input::Tick).contains(&Output::EndStep { worker: 1 }));
    h.handle(Input::StepExited { worker: 1, success: false, how: "signal 15".into() });
    let out = h.handle(Input::Tick);
    assert!(out.iter().any(|o| matches!(o, Output::Launch { worker: 1, .. })), "{out:?}");
    assert!(h.handle(Input::Tick).contains(&Output::EndStep { worker: 1 }));
    let out = h.handle(Input::StepExited { worker: 1, success: false, how: "signal 15".into() });
    assert!(out.contains(&Output::Exit(1)), "{out:?}");
}
