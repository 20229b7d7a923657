//! IPSCHED (Soner and Ozturan): each pass, the first `Window` waiting jobs
//! and every node's free cores and GPUs go into one integer program that
//! starts the jobs of most weight it can, each spread over as few nodes as
//! it can (`model.rs`). A job that asks for cores is placed on part of
//! nodes, one that asks for nodes gets whole free ones.
//!
//! Where it departs from the paper, and why:
//! - a job weighs its priority times its response ratio, (wait + time
//!   limit) / time limit (Brinch Hansen's highest-response-ratio-next), by
//!   default (`ResponseRatio=1`); the paper's p_j is its priority alone
//!   (`ResponseRatio=0`). With FCFS priorities (Slurm's basic: one less per
//!   later job, from a large number) every job weighs about the same, so the
//!   program starts as many jobs as fit and the large ones wait until the
//!   queue drains: on the CPU-GPU ESP the 256-node, 192 s M jobs waited
//!   13,600 s (a slowdown of 72, half the mean slowdown of all jobs). The
//!   ratio is the slowdown a job would have if it started now; weighing by
//!   it starts short jobs first and lets any job's weight grow while it
//!   waits, so none waits forever (see docs/evaluation.md for the figures);
//! - the program is solved whole at every pass; its search is bounded by a
//!   node count (`SolverNodes`: the same answer on every machine) and, when
//!   asked, seconds (`SolverSeconds`, the paper's interval; off by default
//!   so that simulations do not depend on the machine). At a limit the pass
//!   starts the best solution found by then, which keeps every rule; with
//!   none (or none that starts a job) it falls back to EASY, where the paper
//!   started nothing and halved its window;
//! - `HeadReservation=1` keeps EASY's reservation for the head job (the
//!   first of the window): it starts now if it fits on the free nodes;
//!   otherwise jobs that would still run at its shadow time may take no
//!   more than its extra nodes of those back by then. The paper keeps none,
//!   which it says favours small jobs. Off by default: on the CPU-GPU ESP
//!   it cost more mean wait than it saved the largest jobs
//!   (docs/evaluation.md);
//! - `FavourSize=1` weighs each job by its cores too, a reading of the
//!   paper's experiments 6 and 8, which "favour big jobs" without saying how;
//! - with the waiting jobs' priorities all equal (the simulator's FCFS)
//!   each job weighs 1 less a hair per place in the queue, as Slurm's basic
//!   priority weighs them; otherwise by priority over the window's highest;
//! - a job may be held to some nodes (a partition, `--exclude`,
//!   reservations) and require some (`--nodelist`), which the paper's
//!   plugin assumed no job did: the program places it only where it may
//!   (`model.rs`); a job whose nodes must be consecutive (`--contiguous`),
//!   which the program cannot say, is started by EASY on what the program
//!   leaves.

mod covers;
mod greedy;
pub mod model;
pub mod problem;

use std::collections::BTreeSet;
use std::time::Instant;

use malleable_model::{Decision, JobId, NodeIndex, PendingJob, RunningJob, Snapshot};

use crate::blocks::backfill::easy;
use crate::blocks::queue::{end_if_started, runnable_queue};
use crate::blocks::reservation::reservation;
use crate::blocks::returns::node_backs;
use crate::params::{Flag, Param, Params, Span, Whole};
use crate::strategy::{Measure, MeasureKind, MeasureSpec, Note, PassReport, Strategy, StrategyInfo};
use model::{solve_classes, solve_exact, Limits, Solved};
use problem::{Ask, HeadHold, OpenNode, Problem, WindowJob};

pub const WINDOW: Param<usize> = Param {
    key: "Window",
    default: 200,
    allowed: Whole::new(1, 10_000),
    help: "waiting jobs in the program, first in the queue (the paper's MAX_JOB_COUNT)",
};

pub const RESPONSE_RATIO: Param<bool> = Param {
    key: "ResponseRatio",
    default: true,
    allowed: Flag::ONE_ZERO,
    help: "1: a job weighs its priority times (wait + time limit) / time limit; 0: its priority (the paper's)",
};

pub const FAVOUR_SIZE: Param<bool> = Param {
    key: "FavourSize",
    default: false,
    allowed: Flag::ONE_ZERO,
    help: "1: a job's weight is multiplied by its cores (the paper's big-job experiments)",
};

pub const HEAD_RESERVATION: Param<bool> = Param {
    key: "HeadReservation",
    default: false,
    allowed: Flag::ONE_ZERO,
    help: "1: keep EASY's reservation for the head job (no start may delay it); 0: none (the paper's)",
};

pub const SOLVER_NODES: Param<u32> = Param {
    key: "SolverNodes",
    // A search of IPSCHED's weighted knapsacks finds its best
    // solution early (most often the greedy start) and spends the
    // rest proving it: 2,000 nodes took 1.4-7.5 s on windows of 50
    // jobs on 1,024 nodes (bench-ipsched). Stopped at 500, the
    // CPU-GPU ESP runs (seeds 1..3, both variants) started the same
    // jobs as at 20,000.
    default: 500,
    allowed: Whole::new(1, 10_000_000),
    help: "branch-and-bound nodes CBC may search a pass; beyond them the pass starts the best \
           solution found, or falls back to EASY",
};

pub const SOLVER_SECONDS: Param<f64> = Param {
    key: "SolverSeconds",
    default: 0.0,
    allowed: Span { min: 0.0, max: 3600.0 },
    help: "wall-clock seconds CBC may search a pass (whole seconds, the paper's interval), as \
           SolverNodes; 0: no limit (a run then gives the same answers on every machine)",
};

pub const EXACT: Param<bool> = Param {
    key: "Exact",
    default: false,
    allowed: Flag::ONE_ZERO,
    help: "1: solve the paper's per-node program rather than the equivalent one by node classes \
           (slow beyond small clusters; for checks and benches)",
};

pub const IPSCHED: StrategyInfo = StrategyInfo {
    name: "ipsched",
    about: "IPSCHED: one integer program a pass starts the waiting jobs of most weight that fit now, on cores \
            and GPUs of nodes, each on as few nodes as it can",
    params: &[&WINDOW, &RESPONSE_RATIO, &FAVOUR_SIZE, &HEAD_RESERVATION, &SOLVER_NODES, &SOLVER_SECONDS, &EXACT],
    measures: &[
        MeasureSpec { name: "ip", kind: MeasureKind::Millis, help: "wall time of each solve" },
        MeasureSpec { name: "ip_solves", kind: MeasureKind::Count, help: "programs solved" },
        MeasureSpec {
            name: "ip_stopped",
            kind: MeasureKind::Count,
            help: "passes a limit cut the search short and the best solution found was started",
        },
        MeasureSpec {
            name: "ip_fallbacks",
            kind: MeasureKind::Count,
            help: "passes that fell back to EASY (a limit hit with no solution starting a job, or a solver error)",
        },
        MeasureSpec { name: "ip_window", kind: MeasureKind::Highest, help: "the most jobs in one program" },
    ],
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: true,
    build: |p| Box::new(Ipsched::new(p)),
};

/// How a window becomes a program: `problem`'s settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    pub window: usize,
    pub response_ratio: bool,
    pub favour_size: bool,
    pub head_reservation: bool,
}

struct Ipsched {
    setup: Setup,
    limits: Limits,
    exact: bool,
}

impl Ipsched {
    fn new(p: &Params) -> Ipsched {
        let seconds = p.get(&SOLVER_SECONDS);
        Ipsched {
            setup: Setup {
                window: p.get(&WINDOW),
                response_ratio: p.get(&RESPONSE_RATIO),
                favour_size: p.get(&FAVOUR_SIZE),
                head_reservation: p.get(&HEAD_RESERVATION),
            },
            limits: Limits { nodes: Some(p.get(&SOLVER_NODES)), seconds: (seconds > 0.0).then_some(seconds) },
            exact: p.get(&EXACT),
        }
    }
}

/// How much less each later place in the queue weighs when priorities tie:
/// far below a node's spreading penalty (1 / 2N, N up to millions), so it
/// only orders otherwise equal choices.
const PLACE_STEP: f64 = 1e-9;

/// A job's response ratio if it started now: (wait + time limit) / time
/// limit, the slowdown it would have; 1 for a job without a limit.
fn response_ratio(s: &Snapshot, j: &PendingJob) -> f64 {
    match j.time_limit {
        Some(limit) if limit > 0 => (s.now.saturating_sub(j.submit).max(0) + limit) as f64 / limit as f64,
        _ => 1.0,
    }
}

/// The program of snapshot `s`: the window's jobs with their weights, every
/// node with a core to give, and the head job's reservation if kept.
pub fn problem(s: &Snapshot, setup: Setup) -> Problem {
    let node_cores = s.nodes.iter().map(|n| n.cores).max().unwrap_or(1);
    let chosen: Vec<(&PendingJob, usize)> =
        runnable_queue(s).into_iter().filter(|(j, _)| !j.placement.contiguous).take(setup.window).collect();
    let asks: Vec<Ask> = chosen
        .iter()
        .map(|(j, size)| match j.cores {
            Some(r) => {
                Ask::Cores { cores: r.cores, gpus: r.gpus_per_node, min_nodes: r.min_nodes, max_nodes: r.max_nodes }
            }
            None => Ask::WholeNodes(*size as u32),
        })
        .collect();
    let cores_of = |a: &Ask| match *a {
        Ask::Cores { cores, .. } => f64::from(cores),
        Ask::WholeNodes(n) => f64::from(n * node_cores),
    };
    let top_priority = chosen.iter().map(|(j, _)| j.priority).max().unwrap_or(0);
    let most_cores = asks.iter().map(cores_of).fold(1.0, f64::max);
    let jobs = chosen
        .iter()
        .zip(&asks)
        .enumerate()
        .map(|(place, ((j, _), ask))| {
            let priority = if top_priority == 0 { 1.0 } else { f64::from(j.priority) / f64::from(top_priority) };
            let mut weight = priority * (1.0 - PLACE_STEP * place as f64);
            if setup.response_ratio {
                weight *= response_ratio(s, j);
            }
            if setup.favour_size {
                weight *= cores_of(ask) / most_cores;
            }
            WindowJob { id: j.id, weight, ask: *ask, placement: j.placement.clone() }
        })
        .collect();
    let nodes: Vec<OpenNode> = s
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.cores_available() > 0)
        .map(|(index, n)| OpenNode { index, free: n.free, cores: n.cores_available(), gpus: n.gpus_available() })
        .collect();
    let mut p = Problem { jobs, nodes, machine_nodes: s.nodes.len(), hold: None };
    if let Some(&(head, size)) = chosen.first().filter(|_| setup.head_reservation) {
        p.hold = head_hold(s, head, size, &p, &chosen);
    }
    p
}

/// EASY's reservation for `head` (asking `size` whole nodes, as EASY books
/// it) as program `p` keeps it: the head starts now if it fits on the free
/// nodes (and alone on the open ones); otherwise the open nodes back by its
/// shadow time, its extra nodes, and which of the window's jobs would run
/// past it. None when it can never get its nodes (nothing to keep).
fn head_hold(
    s: &Snapshot,
    head: &PendingJob,
    size: usize,
    p: &Problem,
    window: &[(&PendingJob, usize)],
) -> Option<HeadHold> {
    let r = reservation(s, s.free_nodes().len(), &[], &head.placement, size)?;
    if r.shadow_time <= s.now && greedy::fits_alone(p, 0) {
        return Some(HeadHold::StartsNow);
    }
    let backs = node_backs(s);
    let back: BTreeSet<_> = p
        .nodes
        .iter()
        .filter(|n| n.free || backs.get(n.index).copied().flatten().flatten().is_some_and(|t| t <= r.shadow_time))
        .map(|n| n.index)
        .collect();
    let late = window.iter().map(|(j, _)| end_if_started(s.now, j).is_none_or(|end| end > r.shadow_time)).collect();
    Some(HeadHold::Until { back, extra: u32::try_from(r.extra_nodes).unwrap_or(u32::MAX), late })
}

impl Strategy for Ipsched {
    fn name(&self) -> &'static str {
        "ipsched"
    }

    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        let p = problem(s, self.setup);
        if p.jobs.is_empty() || p.nodes.is_empty() {
            return PassReport::default();
        }
        let began = Instant::now();
        let solved = if self.exact { solve_exact(&p, self.limits) } else { solve_classes(&p, self.limits) };
        let mut report = PassReport {
            measures: vec![
                ("ip", Measure::Millis(began.elapsed().as_secs_f64() * 1e3)),
                ("ip_solves", Measure::Count(1)),
                ("ip_window", Measure::Highest(p.jobs.len() as u64)),
            ],
            ..PassReport::default()
        };
        let (mut decisions, end) = decide(&p, solved, s);
        if !matches!(end, PassEnd::FellBack(_)) && s.pending.iter().any(|j| j.placement.contiguous) {
            // What the program cannot say: EASY starts such jobs on what it leaves.
            let rest = left_by(s, &decisions, |j| j.placement.contiguous);
            decisions.extend(easy(&rest));
        }
        report.decisions = decisions;
        match end {
            PassEnd::Solved => {}
            PassEnd::KeptBest => report.measures.push(("ip_stopped", Measure::Count(1))),
            PassEnd::FellBack(why) => {
                report.measures.push(("ip_fallbacks", Measure::Count(1)));
                if let Some(why) = why {
                    report.notes.push(Note::pass(format!("{why}; the pass fell back to EASY")));
                }
            }
        }
        report
    }
}

/// How a pass ended.
#[derive(Clone, Debug, PartialEq)]
enum PassEnd {
    /// The program's optimum was started.
    Solved,
    /// A limit stopped the search; the best solution found was started.
    KeptBest,
    /// EASY's starts instead: a limit stopped the search before any solution
    /// that starts a job (`None`), or the solver failed (why).
    FellBack(Option<String>),
}

/// The pass's decisions from a solve of `p` on `s`.
fn decide(p: &Problem, solved: Result<Solved, String>, s: &Snapshot) -> (Vec<Decision>, PassEnd) {
    let (solution, end) = match solved {
        Ok(Solved::Optimal(solution)) => (solution, PassEnd::Solved),
        Ok(Solved::Stopped(Some(best))) if !best.starts.is_empty() => (best, PassEnd::KeptBest),
        Ok(Solved::Stopped(_)) => return (easy(s), PassEnd::FellBack(None)),
        Err(e) => return (easy(s), PassEnd::FellBack(Some(e))),
    };
    let decisions = solution
        .starts
        .into_iter()
        .map(|(j, layout)| {
            let job = p.jobs[j].id;
            match p.jobs[j].ask {
                Ask::Cores { .. } => Decision::Place { job, layout },
                Ask::WholeNodes(_) => {
                    Decision::Start { job, nodes: layout.into_iter().map(|(i, _)| i).collect(), time_limit: None }
                }
            }
        })
        .collect();
    (decisions, end)
}

/// `s` as `decisions` (starts and places) leave it, the waiting jobs not
/// started and that `keep` keeps in its queue; what they started runs
/// until its limit.
fn left_by(s: &Snapshot, decisions: &[Decision], keep: impl Fn(&PendingJob) -> bool) -> Snapshot {
    let mut view = s.clone();
    for d in decisions {
        let Some(job) = s.pending.iter().find(|j| j.id == d.job()) else { continue };
        let (nodes, gpus): (Vec<(NodeIndex, u32)>, u32) = match d {
            Decision::Start { nodes, .. } => (nodes.iter().map(|&i| (i, u32::MAX)).collect(), u32::MAX),
            Decision::Place { layout, .. } => (layout.clone(), job.cores.map_or(0, |r| r.gpus_per_node)),
            _ => continue,
        };
        for &(i, c) in &nodes {
            let n = &mut view.nodes[i];
            let (cores, left_gpus) = (n.cores_available(), n.gpus_available());
            n.free = false;
            n.spare_cores = cores.saturating_sub(c);
            n.spare_gpus = left_gpus.saturating_sub(gpus);
        }
        let end = job.time_limit.map(|t| s.now + t);
        view.running.push(RunningJob::new(job.id.0, nodes.iter().map(|&(i, _)| i)).start(s.now).end_limit(end));
    }
    let started: Vec<JobId> = decisions.iter().map(Decision::job).collect();
    view.pending.retain(|j| keep(j) && !started.contains(&j.id));
    view
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_model::{CoreRequest, JobId, Node, Placement, RunningJob};
    use problem::Solution;

    fn ask(cores: u32, gpus: u32) -> CoreRequest {
        CoreRequest { cores, gpus_per_node: gpus, min_nodes: cores.div_ceil(8), max_nodes: cores.div_ceil(8) }
    }

    /// 4 nodes of 8 cores and 2 GPUs, the last held whole until 500.
    fn machine() -> Snapshot {
        let mut nodes = Node::numbered_with([true, true, true, false], 8, 2);
        nodes[3].free = false;
        Snapshot {
            now: 0,
            nodes,
            running: vec![RunningJob::new(9, [3]).end_limit(Some(500))],
            pending: Vec::new(),
            power: None,
        }
    }

    fn run(s: &Snapshot, params: &[(&str, &str)]) -> PassReport {
        let mut p = Params::defaults(IPSCHED.params);
        for (k, v) in params {
            p.set(k, v).unwrap();
        }
        (IPSCHED.build)(&p).schedule(s)
    }

    #[test]
    fn more_small_jobs_start_rather_than_the_big_one_first_in_line() {
        // The head asks 3 nodes' cores, then two of 1 node and one of 2: on
        // 3 free nodes at most two jobs start (1 + 1 nodes, or 1 + 2), more
        // than the head alone.
        let mut s = machine();
        s.pending = vec![
            PendingJob::new(1, 3).submit(0).asking_cores(ask(24, 0)),
            PendingJob::new(2, 1).submit(1).asking_cores(ask(8, 2)),
            PendingJob::new(3, 1).submit(2).asking_cores(ask(8, 0)),
            PendingJob::new(4, 2).submit(3).asking_cores(ask(16, 0)),
        ];
        let r = run(&s, &[]);
        let started: Vec<JobId> = r.decisions.iter().map(Decision::job).collect();
        assert_eq!(started.len(), 2, "{:?}", r.decisions);
        assert!(!started.contains(&JobId(1)), "{:?}", r.decisions);
        // Of the pairs that fit (2+3, 2+4? no: 1+2 nodes = 3, yes), the
        // earlier ones weigh a hair more: jobs 2 and 3 on 2 nodes spread
        // less than 2 and 4 on 3.
        assert_eq!(started, vec![JobId(2), JobId(3)]);
        assert!(malleable_model::validate(&s, &r.decisions).is_ok());
        assert!(r.measures.iter().any(|(n, _)| *n == "ip_solves"));
    }

    #[test]
    fn big_jobs_win_when_size_weighs_in() {
        let mut s = machine();
        s.pending = vec![
            PendingJob::new(1, 3).submit(0).asking_cores(ask(24, 0)),
            PendingJob::new(2, 1).submit(1).asking_cores(ask(8, 0)),
            PendingJob::new(3, 1).submit(2).asking_cores(ask(8, 0)),
        ];
        let started = |r: PassReport| r.decisions.iter().map(Decision::job).collect::<Vec<_>>();
        assert_eq!(started(run(&s, &[])), vec![JobId(2), JobId(3)]);
        assert_eq!(started(run(&s, &[("FavourSize", "1")])), vec![JobId(1)]);
    }

    #[test]
    fn whole_node_jobs_start_on_free_nodes_and_restricted_ones_where_they_may() {
        // Free nodes 0-2. Job 2 may use 0 or 1 only: both start, job 1 on
        // the other two.
        let mut s = machine();
        s.pending =
            vec![PendingJob::new(1, 2).submit(0), PendingJob::new(2, 1).submit(1).placement(Placement::only([0, 1]))];
        let r = run(&s, &[]);
        assert!(malleable_model::validate(&s, &r.decisions).is_ok(), "{:?}", r.decisions);
        let nodes_of = |id: u32| match r.decisions.iter().find(|d| d.job() == JobId(id)) {
            Some(Decision::Start { nodes, .. }) => nodes.clone(),
            other => panic!("{other:?}"),
        };
        let (mut one, two) = (nodes_of(1), nodes_of(2));
        one.extend(&two);
        one.sort_unstable();
        assert!(two == vec![0] || two == vec![1], "{two:?}");
        assert_eq!(one, vec![0, 1, 2]);
    }

    #[test]
    fn a_contiguous_job_is_started_by_easy_on_what_the_program_leaves() {
        // Job 1 asks 8 cores anywhere, job 2 two whole nodes in a row. The
        // program places job 1 on one free node; of the two left, EASY
        // starts job 2 on them if they are neighbours.
        let mut s = machine();
        s.pending = vec![
            PendingJob::new(1, 1).submit(0).asking_cores(ask(8, 0)),
            PendingJob::new(2, 2).submit(1).placement(Placement::anywhere().contiguous_if(true)),
        ];
        let r = run(&s, &[]);
        assert!(malleable_model::validate(&s, &r.decisions).is_ok(), "{:?}", r.decisions);
        let started: Vec<JobId> = r.decisions.iter().map(Decision::job).collect();
        assert_eq!(started, vec![JobId(1), JobId(2)], "{:?}", r.decisions);
        match &r.decisions[1] {
            Decision::Start { nodes, .. } => assert_eq!(nodes, &vec![1, 2]),
            other => panic!("{other:?}"),
        }
    }

    const DEFAULTS: Setup = Setup { window: 200, response_ratio: true, favour_size: false, head_reservation: false };

    #[test]
    fn a_search_cut_short_keeps_its_best_or_falls_back_to_easy() {
        let mut s = machine();
        s.pending = vec![
            PendingJob::new(1, 3).submit(0).asking_cores(ask(24, 0)),
            PendingJob::new(2, 1).submit(1).asking_cores(ask(8, 0)),
        ];
        let p = problem(&s, DEFAULTS);
        // The best found starts job 2 on node 1: it is started.
        let best = Solution { value: 0.9, starts: vec![(1, vec![(1, 8)])] };
        let (d, end) = decide(&p, Ok(Solved::Stopped(Some(best))), &s);
        assert_eq!(end, PassEnd::KeptBest);
        assert_eq!(d, vec![Decision::Place { job: JobId(2), layout: vec![(1, 8)] }]);
        // None found, or one that starts nothing: EASY, which starts the
        // head (the program would have started the other: they differ).
        let (d, end) = decide(&p, Ok(Solved::Stopped(None)), &s);
        assert_eq!((d.clone(), end), (easy(&s), PassEnd::FellBack(None)));
        assert_eq!(d.iter().map(Decision::job).collect::<Vec<_>>(), vec![JobId(1)]);
        let nothing = Solution { value: 0.0, starts: Vec::new() };
        assert_eq!(decide(&p, Ok(Solved::Stopped(Some(nothing))), &s), (easy(&s), PassEnd::FellBack(None)));
        let (d, end) = decide(&p, Err("solver gone".into()), &s);
        assert_eq!((d, end), (easy(&s), PassEnd::FellBack(Some("solver gone".to_string()))));
    }

    #[test]
    fn a_job_waiting_long_for_its_length_outweighs_two_fresh_ones() {
        // At t = 1000 on 3 free nodes: job 1 (2 nodes' cores, limit 100 s,
        // waiting since 0: ratio (1000 + 100) / 100 = 11) and jobs 2 and 3
        // (a node each, limit 1000 s, since 990: ratio 1.01), and job 4 (2
        // nodes, limit 1000 s, since 990). At most two jobs fit on the 3
        // nodes. By priority alone (the paper's) any two weigh the same, and
        // 2 and 3 spread over the fewest nodes. By response ratio job 1 (11)
        // with job 2 (1.01, first of the equal two) beats 2 and 3 (2.02).
        let mut s = machine();
        s.now = 1000;
        s.running[0] = RunningJob::new(9, [3]).end_limit(Some(1500));
        s.pending = vec![
            PendingJob::new(1, 2).submit(0).time_limit(Some(100)).asking_cores(ask(16, 0)),
            PendingJob::new(2, 1).submit(990).time_limit(Some(1000)).asking_cores(ask(8, 0)),
            PendingJob::new(3, 1).submit(990).time_limit(Some(1000)).asking_cores(ask(8, 0)),
            PendingJob::new(4, 2).submit(990).time_limit(Some(1000)).asking_cores(ask(16, 0)),
        ];
        let started = |r: PassReport| {
            let mut ids: Vec<u32> = r.decisions.iter().map(|d| d.job().0).collect();
            ids.sort_unstable();
            ids
        };
        assert_eq!(started(run(&s, &[("ResponseRatio", "0")])), vec![2, 3]);
        assert_eq!(started(run(&s, &[])), vec![1, 2]);
    }

    #[test]
    fn a_head_reservation_keeps_late_jobs_off_the_heads_nodes() {
        // The head (job 1) asks all 4 nodes' cores: node 3 is back at 500,
        // its shadow time, with no extra node. Job 2 (a node for 1000 s)
        // would still run then; job 3 (a node for 400 s) would not.
        let mut s = machine();
        s.pending = vec![
            PendingJob::new(1, 4).submit(0).time_limit(Some(100)).asking_cores(ask(32, 0)),
            PendingJob::new(2, 1).submit(1).time_limit(Some(1000)).asking_cores(ask(8, 0)),
            PendingJob::new(3, 1).submit(2).time_limit(Some(400)).asking_cores(ask(8, 0)),
        ];
        let started = |r: &PassReport| r.decisions.iter().map(|d| d.job().0).collect::<Vec<_>>();
        let free = run(&s, &[]);
        assert_eq!(started(&free), vec![2, 3]);
        let held = run(&s, &[("HeadReservation", "1")]);
        assert_eq!(started(&held), vec![3], "{:?}", held.decisions);
        // As EASY would: it backfills job 3 alone.
        assert_eq!(easy(&s).iter().map(|d| d.job().0).collect::<Vec<_>>(), vec![3]);
        assert!(malleable_model::validate(&s, &held.decisions).is_ok());
        let p = problem(&s, Setup { head_reservation: true, ..DEFAULTS });
        let hold = HeadHold::Until { back: [0, 1, 2].into(), extra: 0, late: vec![false, true, false] };
        assert_eq!(p.hold, Some(hold));
    }

    #[test]
    fn a_head_that_fits_now_starts_now_with_a_reservation() {
        // 3 free nodes: the head asks 2, three more jobs 1 each. By weight
        // three small jobs beat the head and one; EASY starts the head.
        let mut s = machine();
        s.pending = vec![
            PendingJob::new(1, 2).submit(0).time_limit(Some(100)).asking_cores(ask(16, 0)),
            PendingJob::new(2, 1).submit(1).time_limit(Some(100)).asking_cores(ask(8, 0)),
            PendingJob::new(3, 1).submit(2).time_limit(Some(100)).asking_cores(ask(8, 0)),
            PendingJob::new(4, 1).submit(3).time_limit(Some(100)).asking_cores(ask(8, 0)),
        ];
        let started = |r: &PassReport| r.decisions.iter().map(|d| d.job().0).collect::<Vec<_>>();
        assert_eq!(started(&run(&s, &[])), vec![2, 3, 4]);
        assert_eq!(started(&run(&s, &[("HeadReservation", "1")])), vec![1, 2]);
        assert_eq!(problem(&s, Setup { head_reservation: true, ..DEFAULTS }).hold, Some(HeadHold::StartsNow));
    }
}
