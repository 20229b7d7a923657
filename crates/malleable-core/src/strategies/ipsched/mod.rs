//! IPSCHED (Soner and Ozturan): each pass, the first `Window` waiting jobs
//! and every node's free cores and GPUs go into one integer program that
//! starts the jobs of most priority it can, each spread over as few nodes
//! as it can (`model.rs`); no reservation is kept for anyone. A job that
//! asks for cores is placed on part of nodes, one that asks for nodes gets
//! whole free ones.
//!
//! Where it departs from the paper, and why:
//! - the program is solved whole at every pass, its search bounded by a
//!   node count rather than the interval's seconds (the same answer on
//!   every machine); when the bound is hit the pass falls back to EASY,
//!   where the paper started nothing and halved its window;
//! - with the waiting jobs' priorities all equal (the simulator's, FCFS by
//!   submission) each job weighs 1 less a hair per place in the queue, as
//!   Slurm's basic priority (one less per later job, from a large number)
//!   weighs them; otherwise by priority over the window's highest;
//! - `FavourSize=1` weighs each job by its cores too, a reading of the
//!   paper's experiments 6 and 8, which "favour big jobs" without saying how;
//! - a job may be held to some nodes (a partition, `--exclude`,
//!   reservations) and require some (`--nodelist`), which the paper's
//!   plugin assumed no job did: the program places it only where it may
//!   (`model.rs`); a job whose nodes must be consecutive (`--contiguous`),
//!   which the program cannot say, is started by EASY on what the program
//!   leaves.

pub mod model;

use std::time::Instant;

use malleable_model::{Decision, JobId, NodeIndex, PendingJob, RunningJob, Snapshot};

use crate::blocks::backfill::easy;
use crate::blocks::queue::runnable_queue;
use crate::params::{ParamKind, ParamSpec, Params};
use crate::strategy::{Measure, MeasureKind, MeasureSpec, PassReport, Strategy, StrategyInfo};
use model::{solve_classes, solve_exact, Ask, OpenNode, Problem, Solved, WindowJob};

pub const IPSCHED: StrategyInfo = StrategyInfo {
    name: "ipsched",
    about: "IPSCHED: one integer program a pass starts the waiting jobs of most priority that fit now, on cores \
            and GPUs of nodes, each on as few nodes as it can; no reservations",
    params: &[
        ParamSpec {
            key: "Window",
            kind: ParamKind::Whole { min: 1, max: 10_000 },
            default: 200.0,
            help: "waiting jobs in the program, first in the queue (the paper's MAX_JOB_COUNT)",
        },
        ParamSpec {
            key: "FavourSize",
            kind: ParamKind::Whole { min: 0, max: 1 },
            default: 0.0,
            help: "1: a job weighs its priority times its cores (the paper's big-job experiments); 0: its priority",
        },
        ParamSpec {
            key: "SolverNodes",
            kind: ParamKind::Whole { min: 1, max: 10_000_000 },
            default: 20_000.0,
            help: "branch-and-bound nodes CBC may search a pass; beyond them the pass falls back to EASY",
        },
        ParamSpec {
            key: "Exact",
            kind: ParamKind::Whole { min: 0, max: 1 },
            default: 0.0,
            help: "1: solve the paper's per-node program rather than the equivalent one by node classes \
                   (slow beyond small clusters; for checks and benches)",
        },
    ],
    measures: &[
        MeasureSpec { name: "ip", kind: MeasureKind::Millis, help: "wall time of each solve" },
        MeasureSpec { name: "ip_solves", kind: MeasureKind::Count, help: "programs solved" },
        MeasureSpec {
            name: "ip_fallbacks",
            kind: MeasureKind::Count,
            help: "passes that hit the node bound and fell back to EASY",
        },
        MeasureSpec { name: "ip_window", kind: MeasureKind::Highest, help: "the most jobs in one program" },
    ],
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: true,
    build: |p| Box::new(Ipsched::new(p)),
};

struct Ipsched {
    window: usize,
    favour_size: bool,
    solver_nodes: u32,
    exact: bool,
}

impl Ipsched {
    fn new(p: &Params) -> Ipsched {
        Ipsched {
            window: p.whole("Window") as usize,
            favour_size: p.whole("FavourSize") == 1,
            solver_nodes: u32::try_from(p.whole("SolverNodes")).unwrap_or(u32::MAX),
            exact: p.whole("Exact") == 1,
        }
    }
}

/// How much less each later place in the queue weighs when priorities tie:
/// far below a node's spreading penalty (1 / 2N, N up to millions), so it
/// only orders otherwise equal choices.
const PLACE_STEP: f64 = 1e-9;

/// The program of snapshot `s`: the window's jobs with their weights, and
/// every node with a core to give.
pub fn problem(s: &Snapshot, window: usize, favour_size: bool) -> Problem {
    let node_cores = s.nodes.iter().map(|n| n.cores).max().unwrap_or(1);
    let chosen: Vec<(&PendingJob, usize)> =
        runnable_queue(s).into_iter().filter(|(j, _)| !j.placement.contiguous).take(window).collect();
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
            if favour_size {
                weight *= cores_of(ask) / most_cores;
            }
            WindowJob { id: j.id, weight, ask: *ask, placement: j.placement.clone() }
        })
        .collect();
    let nodes = s
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.cores_available() > 0)
        .map(|(index, n)| OpenNode { index, free: n.free, cores: n.cores_available(), gpus: n.gpus_available() })
        .collect();
    Problem { jobs, nodes, machine_nodes: s.nodes.len() }
}

impl Strategy for Ipsched {
    fn name(&self) -> &'static str {
        "ipsched"
    }

    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        let p = problem(s, self.window, self.favour_size);
        if p.jobs.is_empty() || p.nodes.is_empty() {
            return PassReport::default();
        }
        let began = Instant::now();
        let limit = Some(self.solver_nodes);
        let solved = if self.exact { solve_exact(&p, limit) } else { solve_classes(&p, limit) };
        let mut report = PassReport {
            measures: vec![
                ("ip", Measure::Millis(began.elapsed().as_secs_f64() * 1e3)),
                ("ip_solves", Measure::Count(1)),
                ("ip_window", Measure::Highest(p.jobs.len() as u64)),
            ],
            ..PassReport::default()
        };
        let (mut decisions, fell_back) = decide(&p, solved, s);
        if fell_back.is_none() && s.pending.iter().any(|j| j.placement.contiguous) {
            // What the program cannot say: EASY starts such jobs on what it leaves.
            let rest = left_by(s, &decisions, |j| j.placement.contiguous);
            decisions.extend(easy(&rest));
        }
        report.decisions = decisions;
        match fell_back {
            Some(None) => report.measures.push(("ip_fallbacks", Measure::Count(1))),
            Some(Some(why)) => {
                report.notes.push(crate::strategy::Note::pass(format!("{why}; the pass fell back to EASY")))
            }
            None => {}
        }
        report
    }
}

/// The pass's decisions from a solve of `p`: its starts, or EASY's on `s`
/// when the search hit its bound (`Some(None)`) or the solver failed
/// (`Some(Some(why))`).
fn decide(p: &Problem, solved: Result<Solved, String>, s: &Snapshot) -> (Vec<Decision>, Option<Option<String>>) {
    match solved {
        Ok(Solved::Optimal(solution)) => {
            let decisions = solution
                .starts
                .into_iter()
                .map(|(j, layout)| {
                    let job = p.jobs[j].id;
                    match p.jobs[j].ask {
                        Ask::Cores { .. } => Decision::Place { job, layout },
                        Ask::WholeNodes(_) => Decision::Start {
                            job,
                            nodes: layout.into_iter().map(|(i, _)| i).collect(),
                            time_limit: None,
                        },
                    }
                })
                .collect();
            (decisions, None)
        }
        Ok(Solved::NodeLimit) => (easy(s), Some(None)),
        Err(e) => (easy(s), Some(Some(e))),
    }
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
        // The head asks 3 nodes' cores, then two of 1 node and one of 2: the
        // program starts three jobs (1 + 1 + ... no: 1 + 2 nodes, or 1 + 1),
        // the most it can on 3 free nodes, and never the head alone.
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

    #[test]
    fn a_search_cut_short_or_failed_falls_back_to_easy() {
        let mut s = machine();
        s.pending = vec![
            PendingJob::new(1, 3).submit(0).asking_cores(ask(24, 0)),
            PendingJob::new(2, 1).submit(1).asking_cores(ask(8, 0)),
        ];
        let p = problem(&s, 200, false);
        let (d, why) = decide(&p, Ok(Solved::NodeLimit), &s);
        assert_eq!((d.clone(), why), (easy(&s), Some(None)));
        // EASY starts the head, the program the other: they differ.
        assert_eq!(d.iter().map(Decision::job).collect::<Vec<_>>(), vec![JobId(1)]);
        let (d, why) = decide(&p, Err("solver gone".into()), &s);
        assert_eq!((d, why), (easy(&s), Some(Some("solver gone".to_string()))));
    }
}
