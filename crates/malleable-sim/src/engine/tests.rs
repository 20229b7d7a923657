//! The engine's own cases: delays, priorities, ticks, iterative jobs'
//! checks, resize costs, core sharing and placement on part of nodes, each
//! small enough to follow by hand.

use malleable_core::blocks::mates::RuntimeModel;
use malleable_core::StrategyChoice;
use malleable_model::{CoreRequest, MalleableSpec, NodeConstraint};

use super::*;
use crate::model::app_model::{AppModel, Iterative, ResizeCost};
use crate::model::priority::Priority;

fn job(id: u32, nodes: u32, malleable: Option<MalleableSpec>) -> JobSpec {
    JobSpec { malleable, ..JobSpec::rigid(id, 0.0, nodes, 10.0, 60.0) }
}

fn run(w: &Workload, strategy: &str, opts: SimOptions) -> SimResult {
    simulate(w, StrategyChoice::parse(strategy).unwrap().build().as_mut(), opts)
}

#[test]
fn a_start_delay_holds_the_nodes_before_the_work_begins() {
    let spec = MalleableSpec { min: 1, max: 2, constraint: NodeConstraint::None };
    let w = Workload {
        name: "t".into(),
        nodes: 2,
        jobs: vec![job(1, 1, None), job(2, 1, Some(spec))],
        power: None,
        cores: 1,
        gpus: 0,
    };
    let opts = SimOptions { start_delay: 0.5, malleable_start_delay: 2.0, tick: 0.0, ..SimOptions::default() };
    let r = run(&w, "easy", opts);
    let end = |id: u32| r.jobs.iter().find(|j| j.id == id).unwrap().end;
    assert!((end(1) - 10.5).abs() < 1e-9 && (end(2) - 12.0).abs() < 1e-9, "{:?}", r.jobs);
    assert!((r.node_seconds - 22.5).abs() < 1e-9);
}

#[test]
fn a_pass_delay_starts_jobs_late_and_events_meanwhile_join_the_pass() {
    // One node. Job 1 and 2 arrive at 0, job 3 at 10.3, inside the delay
    // after job 1's end at 10.25: it joins the pass at 10.5 instead of
    // calling for one of its own.
    let mut third = job(3, 1, None);
    third.submit = 10.3;
    let w = Workload {
        name: "t".into(),
        nodes: 1,
        jobs: vec![job(1, 1, None), job(2, 1, None), third],
        power: None,
        cores: 1,
        gpus: 0,
    };
    let opts = SimOptions { pass_delay: 0.25, tick: 0.0, ..SimOptions::default() };
    let r = run(&w, "fcfs", opts);
    let start = |id: u32| r.jobs.iter().find(|j| j.id == id).unwrap().start;
    assert!((start(1) - 0.25).abs() < 1e-9, "{:?}", r.jobs);
    assert!((start(2) - 10.5).abs() < 1e-9, "{:?}", r.jobs);
    assert!((start(3) - 20.75).abs() < 1e-9, "{:?}", r.jobs);
    // Passes at 0.25, 10.5 and 20.75 (the run ends with job 3, before
    // the pass its end calls for).
    assert_eq!(r.passes, 3);
    let r0 = run(&w, "fcfs", SimOptions { tick: 0.0, ..SimOptions::default() });
    // Without a delay: 0, 10, 10.3 (job 3's submission alone), 20 and 30.
    assert_eq!((r0.jobs[1].start, r0.passes), (10.0, 5));
}

#[test]
fn multifactor_priority_puts_the_larger_job_first() {
    // Two nodes. Job 1 holds both from 0 to 10; job 2 (1 node) comes at
    // 1, job 3 (2 nodes) at 2. FCFS starts job 2 at 10 and job 3 once it
    // ends, at 20. Multifactor at 10: job 2 has 9/60 + 10,080 / 2 ->
    // 5,040, job 3 8/60 + 10,080 -> 10,080: job 3 first, at 10, then 2.
    let at = |id, nodes, submit| JobSpec { submit, ..job(id, nodes, None) };
    let w = Workload {
        name: "t".into(),
        nodes: 2,
        jobs: vec![at(1, 2, 0.0), at(2, 1, 1.0), at(3, 2, 2.0)],
        power: None,
        cores: 1,
        gpus: 0,
    };
    let start = |r: &SimResult, id: u32| r.jobs.iter().find(|j| j.id == id).unwrap().start;
    let fcfs = run(&w, "fcfs", SimOptions { tick: 0.0, ..SimOptions::default() });
    assert_eq!((start(&fcfs, 2), start(&fcfs, 3)), (10.0, 20.0));
    let mf = Priority::parse("multifactor").unwrap();
    let multi = run(&w, "fcfs", SimOptions { tick: 0.0, priority: mf, ..SimOptions::default() });
    assert_eq!((start(&multi, 3), start(&multi, 2)), (10.0, 20.0));
}

#[test]
fn ticking_while_jobs_run_adds_the_plugins_passes() {
    // Nothing waits: without the option no tick comes, and the only
    // passes are at the submissions and job 1's end; with it, one every
    // 5 s while job 2 runs, as sched/malleable's agent passes.
    let spec = MalleableSpec { min: 1, max: 2, constraint: NodeConstraint::None };
    let long = JobSpec { run_time: 100.0, estimate: 200.0, ..job(2, 1, Some(spec)) };
    let w = Workload { name: "t".into(), nodes: 2, jobs: vec![job(1, 1, None), long], power: None, cores: 1, gpus: 0 };
    let base = SimOptions { app_model: AppModel::Linear, tick: 5.0, ..SimOptions::default() };
    let (off, on) = (run(&w, "mtct", base), run(&w, "mtct", SimOptions { tick_while_running: true, ..base }));
    assert!(off.passes <= 4, "{}", off.passes);
    assert!(on.passes >= 10, "{}", on.passes);
    // The schedule itself is the same here: job 2 grows when job 1 ends
    // (ends equal but for the rounding of progress brought up to date at each pass).
    for (a, b) in off.jobs.iter().zip(&on.jobs) {
        assert_eq!((a.start, a.expands, a.final_nodes), (b.start, b.expands, b.final_nodes));
        assert!((a.end - b.end).abs() < 1e-9);
    }
}

/// 1 s an iteration on one node, 0.5 s on two.
const SERIES: &[(u32, f64)] = &[(1, 1.0), (2, 0.5)];

/// An iterative job of 10 iterations, malleable in [1, 2], asking every 4.
fn iterative(id: u32, nodes: u32, submit: f64) -> JobSpec {
    let it = Iterative { class: "t", iterations: 10, seconds: SERIES, check_every: 4, time_scale: 1.0 };
    let spec = MalleableSpec { min: 1, max: 2, constraint: NodeConstraint::None };
    JobSpec { run_time: it.run_time(nodes), estimate: 100.0, iterative: Some(it), submit, ..job(id, nodes, Some(spec)) }
}

#[test]
fn an_iterative_job_asks_at_its_checks_and_only_then_resizes() {
    // Two nodes, the job on one. After 4 iterations (4 s) it asks:
    // nothing waits, so it grows to 2; at iteration 8 (2 s later) it
    // asks again and stays; it ends after 6 iterations at 0.5 s: 7 s.
    let w = Workload { name: "t".into(), nodes: 2, jobs: vec![iterative(1, 1, 0.0)], power: None, cores: 1, gpus: 0 };
    let opts = SimOptions { resize_cost: ResizeCost::parse("0+0n/0+0n").unwrap(), tick: 0.0, ..SimOptions::default() };
    let r = run(&w, "natural", opts);
    assert_eq!((r.jobs[0].expands, r.jobs[0].final_nodes), (1, 2));
    assert!((r.jobs[0].end - 7.0).abs() < 1e-9, "{:?}", r.jobs[0]);
    assert_eq!(r.tally.get("natural_asked"), Some(&Total::Count(2)));
    // A strategy that resizes on its own passes is asked nothing and,
    // with no pass after the start, never grows it: 10 s on one node.
    let r = run(&w, "conservative", opts);
    assert_eq!((r.jobs[0].expands, r.jobs[0].end), (0, 10.0));
    // A resize cost stops the work: 1 s to grow, ending at 8 s, and it
    // is summed in the run's resize time.
    let cost = ResizeCost::parse("1+0n/0+0n").unwrap();
    let r = run(&w, "natural", SimOptions { resize_cost: cost, ..opts });
    assert!((r.jobs[0].end - 8.0).abs() < 1e-9 && r.resize_seconds == 1.0, "{:?}", r.jobs[0]);
}

#[test]
fn a_shrink_at_a_check_starts_the_waiting_job_on_the_nodes_released() {
    // The job holds both nodes; a 1-node rigid job arrives at 1 s and
    // waits. At iteration 4 (2 s) the job asks and gives a node for
    // it: it starts at 2 s; the job's other 6 iterations take 6 s.
    let rigid = JobSpec { submit: 1.0, ..job(2, 1, None) };
    let w = Workload {
        name: "t".into(),
        nodes: 2,
        jobs: vec![iterative(1, 2, 0.0), rigid],
        power: None,
        cores: 1,
        gpus: 0,
    };
    let opts = SimOptions { resize_cost: ResizeCost::parse("0+0n/0+0n").unwrap(), tick: 0.0, ..SimOptions::default() };
    let r = run(&w, "natural", opts);
    let by = |id: u32| r.jobs.iter().find(|j| j.id == id).unwrap();
    assert_eq!((by(1).shrinks, by(1).final_nodes), (1, 1));
    assert!((by(2).start - 2.0).abs() < 1e-9 && (by(1).end - 8.0).abs() < 1e-9, "{:?}", r.jobs);
}

#[test]
fn the_resize_cost_is_the_one_given() {
    // A malleable job started on 1 of 4 nodes; at 1 s a 1-node job
    // arrives, and that pass grows the first onto the 2 nodes left.
    let spec = MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::None };
    let later = JobSpec { submit: 1.0, ..job(2, 1, None) };
    let w = Workload {
        name: "t".into(),
        nodes: 4,
        jobs: vec![job(1, 1, Some(spec)), later],
        power: None,
        cores: 1,
        gpus: 0,
    };
    let cost = ResizeCost { expand_fixed: 1.0, expand_per_node: 0.5, shrink_fixed: 0.0, shrink_per_node: 0.0 };
    let opts = SimOptions { app_model: AppModel::Linear, resize_cost: cost, tick: 0.0, ..SimOptions::default() };
    let r = run(&w, "mtct", opts);
    assert_eq!((r.jobs[0].expands, r.jobs[0].final_nodes), (1, 3));
    // 1 s of work on 1 node (a tenth), 2.5 s expanding (1 + 0.5 * 3),
    // then the other nine tenths on 3 nodes: 3 s.
    assert!((r.jobs[0].end - 6.5).abs() < 1e-9, "{:?}", r.jobs[0]);
}

/// Nodes of 4 cores; each job opted in to core sharing unless said.
fn sharing(id: u32, submit: f64, nodes: u32, run_time: f64, estimate: f64) -> JobSpec {
    JobSpec { submit, run_time, estimate, share_cores: true, ..job(id, nodes, None) }
}

fn shared_run(jobs: Vec<JobSpec>, model: RuntimeModel) -> SimResult {
    let w = Workload { name: "t".into(), nodes: 2, jobs, power: None, cores: 4, gpus: 0 };
    run(&w, "sd-policy", SimOptions { tick: 0.0, sharing_model: model, ..SimOptions::default() })
}

fn ends(r: &SimResult) -> Vec<(u32, f64, f64)> {
    let mut v: Vec<(u32, f64, f64)> = r.jobs.iter().map(|j| (j.id, j.start, j.end)).collect();
    v.sort_by_key(|t| t.0);
    v
}

#[test]
fn a_shared_start_runs_both_jobs_at_the_pace_of_their_cores() {
    // 1 holds both nodes (1000 s). 2 would wait to 1000: it starts at 1 on
    // 2 of each node's 4 cores, so its 100 s take 200; 1 does 100 s of
    // work in those 200 and ends at 1100. 3 (rigid) waits for both.
    let jobs = vec![
        sharing(1, 0.0, 2, 1000.0, 1000.0),
        sharing(2, 1.0, 2, 100.0, 100.0),
        JobSpec { submit: 2.0, ..job(3, 2, None) },
    ];
    let r = shared_run(jobs, RuntimeModel::Ideal);
    assert_eq!(ends(&r), vec![(1, 0.0, 1100.0), (2, 1.0, 201.0), (3, 1100.0, 1110.0)]);
    assert_eq!(r.jobs[1].alone_run, Some(100.0), "its slowdown counts against its run alone");
    assert_eq!(r.jobs[2].alone_run, None);
    // Shared nodes count once: every node busy from 0 to the end.
    let util = r.node_seconds / (2.0 * 1110.0);
    assert!((util - 1.0).abs() < 1e-9, "{util}");
}

#[test]
fn a_mate_ending_first_leaves_its_cores_and_nodes_to_the_job_on_them() {
    // 1 really runs 50 s: 1 s alone, 49 s of work at half pace end it at
    // 99. 2 did 49 s of its 100 by then, the other 51 at full pace: 150.
    // The nodes are free only then, for 3.
    let jobs = vec![
        sharing(1, 0.0, 2, 50.0, 1000.0),
        sharing(2, 1.0, 2, 100.0, 100.0),
        JobSpec { submit: 2.0, ..job(3, 2, None) },
    ];
    let r = shared_run(jobs, RuntimeModel::Ideal);
    assert_eq!(ends(&r), vec![(1, 0.0, 99.0), (2, 1.0, 150.0), (3, 150.0, 160.0)]);
}

#[test]
fn the_worst_case_model_goes_at_the_least_served_nodes_pace() {
    // Mates 1 (node 0, ends at 99 as above) and 2 (node 1, 1000 s); 3
    // starts on both at 1. From 99 it has 4 cores on node 0 and 2 on node
    // 1: 51 s of work left take 68 s at Eq. 5's 3/4 pace, 102 s at Eq.
    // 6's 1/2.
    let jobs =
        || vec![sharing(1, 0.0, 1, 50.0, 1000.0), sharing(2, 0.0, 1, 1000.0, 1000.0), sharing(3, 1.0, 2, 100.0, 100.0)];
    let ideal = shared_run(jobs(), RuntimeModel::Ideal);
    let worst = shared_run(jobs(), RuntimeModel::Worst);
    let end3 = |r: &SimResult| r.jobs.iter().find(|j| j.id == 3).unwrap().end;
    assert!((end3(&ideal) - 167.0).abs() < 1e-6, "{}", end3(&ideal));
    assert!((end3(&worst) - 201.0).abs() < 1e-6, "{}", end3(&worst));
}

/// A job asking `cores` cores (and `gpus` a node) on one node.
fn asking(id: u32, submit: f64, cores: u32, gpus: u32, run_time: f64) -> JobSpec {
    let ask = CoreRequest { cores, gpus_per_node: gpus, min_nodes: 1, max_nodes: 1 };
    JobSpec { submit, run_time, estimate: run_time, cores: Some(ask), ..job(id, 1, None) }
}

#[test]
fn jobs_placed_on_part_of_a_node_share_it_and_give_it_back() {
    // One node of 8 cores and 2 GPUs: 5 cores for 100 s at 0, 3 cores
    // and a GPU for 50 s at 1 (what the first left), all 8 at 2 (waits
    // until both have ended, at 100).
    let jobs = vec![asking(1, 0.0, 5, 0, 100.0), asking(2, 1.0, 3, 1, 50.0), asking(3, 2.0, 8, 0, 10.0)];
    let w = Workload { name: "t".into(), nodes: 1, jobs, power: None, cores: 8, gpus: 2 };
    let r = run(&w, "ipsched", SimOptions { tick: 0.0, ..SimOptions::default() });
    let at = |id: u32| r.jobs.iter().find(|j| j.id == id).map(|j| (j.start, j.end)).unwrap();
    assert_eq!((at(1), at(2), at(3)), ((0.0, 100.0), (1.0, 51.0), (100.0, 110.0)));
    // Node-seconds by the cores held: 5/8 of 100 s, 3/8 of 50 s, then all of 10 s.
    assert!((r.node_seconds - (62.5 + 18.75 + 10.0)).abs() < 1e-9, "{}", r.node_seconds);
    assert!(r.jobs.iter().all(|j| j.packing == Some(1.0)));
}
