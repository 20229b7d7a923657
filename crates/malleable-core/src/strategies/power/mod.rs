//! Chadha et al. 2020's Algorithm 2, Power_Aware_Schedule: keep the
//! machine's draw inside the power corridor by resizing malleable jobs and
//! choosing which waiting job to start, with the integer program of
//! Equation 1 ([`lp`]).
//!
//! One pass:
//! 1. If a repair planned earlier is still being carried out, carry on with
//!    it (below) and do nothing else: its shrinks free the nodes its starts
//!    and expansions need.
//! 2. Lines 4-14: if no malleable job is adapting, at least one runs, and the
//!    corridor is broken, solve Equation 1 with the running jobs and waiting
//!    jobs in priority order: every single waiting job first, then every pair
//!    (the paper's lengths one and two), then longer ones (up to
//!    `MaxCombinationLength`, among the first `CombinationWindow` waiting
//!    jobs) while the pass's time budget (`DeepSearchBudgetMs`) lasts. The first feasible configuration becomes the
//!    plan. `power-running-only` (Table II's scenario 2) solves with the
//!    running jobs alone; `power` falls back to that when no combination is
//!    feasible.
//! 3. Lines 15-17: start the highest-priority jobs that fit the power budget.
//!    The paper starts jobs only while the corridor holds; we also start them
//!    while the draw is below the corridor if step 2 could not run (no
//!    malleable job runs, or one is adapting): otherwise an empty machine,
//!    which draws only idle power, would never start anything. After step 2
//!    ran and found no configuration, nothing starts. Jobs start by EASY's
//!    rules (so a big head job is not starved by the budget check), keeping
//!    in queue order those starts whose upper draw estimate fits under the
//!    corridor's top.
//!
//! Carrying out a plan takes passes, because a shrink frees its nodes only
//! when the adaptation ends: the first pass orders every shrink, and every
//! start and expansion the free nodes already allow; later passes (each
//! adaptation's end triggers one) start and expand the rest. A plan is given
//! up when a job in it disappears or the corridor moves; the next pass then
//! plans afresh.
//!
//! Draw is the measured draw when the snapshot has one; otherwise it is
//! estimated from the jobs' per-node power (their measurement, else the
//! users' estimates: the lower one for the lower bound, the upper one for the
//! upper bound), idle nodes at the idle draw. A job with no power information
//! is taken to draw what an idle node does (the plugin fills in
//! `DefaultJobWatts=`, so in slurmctld that does not happen).
//!
//! What a pass says: when it looked for a repair, what the LP found and how
//! long its solves took; for each job EASY would start but the budget holds
//! back, why (once per job and corridor, the plugin sees to that). Its
//! figures are the LP's: solves and their times, combinations tried, repairs
//! attempted and found.

pub mod lp;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use malleable_model::log_lines::LogLine;
use malleable_model::{Corridor, Decision, JobId, JobPower, PendingJob, PowerState, RunningJob, Snapshot, Watts};

use self::lp::{LpJob, LpNodes, LpProblem};
use crate::blocks::adapt::{any_adapting, resizable_jobs};
use crate::blocks::backfill::easy;
use crate::blocks::pool::FreePool;
use crate::blocks::queue::runnable_queue;
use crate::blocks::waiting::{waiting, WaitReason, Waiting};
use crate::params::{AnyParam, Param, Params, Whole, Within};
use crate::strategy::{MeasureKind, MeasureSpec, Note, PassReport, Strategy, StrategyInfo};

/// Waiting jobs considered for combinations by default, in priority order
/// (like Slurm's backfill window): pairs of 16 jobs are 120 solves.
pub const COMBINATION_WINDOW: usize = 16;
/// Longest combination of waiting jobs tried by default once lengths one
/// and two failed.
pub const MAX_COMBINATION_LEN: usize = 4;
/// Time allowed by default for combinations longer than two in one pass.
/// Lengths one and two are always tried in full, so runs that find a plan
/// there (the paper found every one there) do not depend on the machine's speed.
pub const DEEP_SEARCH_BUDGET: Duration = Duration::from_millis(20);

pub const COMBINATION_WINDOW_PARAM: Param<usize> = Param {
    key: "CombinationWindow",
    default: COMBINATION_WINDOW,
    allowed: Whole::new(1, 1000),
    help: "waiting jobs, in priority order, whose combinations the LP is given",
};

pub const MAX_COMBINATION_LEN_PARAM: Param<usize> = Param {
    key: "MaxCombinationLength",
    default: MAX_COMBINATION_LEN,
    allowed: Whole::new(1, 16),
    help: "most waiting jobs started together by one repair",
};

pub const DEEP_SEARCH_BUDGET_PARAM: Param<Duration> = Param {
    key: "DeepSearchBudgetMs",
    default: DEEP_SEARCH_BUDGET,
    allowed: Within::millis(0, 60_000),
    help: "milliseconds a pass may spend on combinations of three jobs or more",
};

const PARAMS: &[&dyn AnyParam] = &[&COMBINATION_WINDOW_PARAM, &MAX_COMBINATION_LEN_PARAM, &DEEP_SEARCH_BUDGET_PARAM];

const MEASURES: &[MeasureSpec] = &[
    MeasureSpec { name: "lp", kind: MeasureKind::Millis, help: "wall time of each solve of Equation 1" },
    MeasureSpec { name: "lp_solves", kind: MeasureKind::Count, help: "solves of Equation 1" },
    MeasureSpec { name: "lp_combinations_tried", kind: MeasureKind::Count, help: "waiting-job combinations solved" },
    MeasureSpec {
        name: "lp_repairs_attempted",
        kind: MeasureKind::Count,
        help: "passes that found the corridor broken and looked for a repair",
    },
    MeasureSpec { name: "lp_repairs_found", kind: MeasureKind::Count, help: "repairs that found a configuration" },
    MeasureSpec { name: "lp_longest_combination", kind: MeasureKind::Highest, help: "the longest combination solved" },
    MeasureSpec { name: "lp_solver_errors", kind: MeasureKind::Count, help: "solver failures (not infeasibility)" },
];

/// `Strategy=power`: Algorithm 2 with waiting jobs in the LP.
pub const POWER: StrategyInfo = StrategyInfo {
    name: "power",
    about: "Chadha et al. 2020, Algorithm 2: keep the draw inside the power corridor by resizing and choosing starts",
    params: PARAMS,
    measures: MEASURES,
    uses_power_corridor: true,
    shares_cores: false,
    places_cores: false,
    build: |p| Box::new(PowerAware::new(p)),
};

/// `Strategy=power-running-only`: the paper's Table II scenario 2, which
/// repairs by resizing running jobs only.
pub const POWER_RUNNING_ONLY: StrategyInfo = StrategyInfo {
    name: "power-running-only",
    about: "Algorithm 2 resizing running jobs only (the paper's Table II, scenario 2)",
    params: PARAMS,
    measures: MEASURES,
    uses_power_corridor: true,
    shares_cores: false,
    places_cores: false,
    build: |p| Box::new(PowerAware::running_only(p)),
};

/// What the LP did in one pass.
#[derive(Clone, Debug, Default, PartialEq)]
struct LpPass {
    solve_ms: Vec<f64>,
    repairs_attempted: u64,
    repairs_found: u64,
    combinations_tried: u64,
    longest_combination: usize,
    solver_errors: u64,
    /// What the repair attempt found, said for the log.
    last: String,
}

impl LpPass {
    /// Its figures and, when it looked for a repair, a note saying what it
    /// found and what the solves cost.
    fn report_into(self, report: &mut PassReport) {
        if self.repairs_attempted > 0 {
            let total: f64 = self.solve_ms.iter().sum();
            report.notes.push(Note::pass(format!(
                "power: {} (LP: {} solve(s) in {total:.1} ms)",
                self.last,
                self.solve_ms.len()
            )));
        }
        report.count("lp_solves", self.solve_ms.len() as u64);
        for ms in self.solve_ms {
            report.millis("lp", ms);
        }
        report.count("lp_combinations_tried", self.combinations_tried);
        report.count("lp_repairs_attempted", self.repairs_attempted);
        report.count("lp_repairs_found", self.repairs_found);
        report.highest("lp_longest_combination", self.longest_combination as u64);
        report.count("lp_solver_errors", self.solver_errors);
    }
}

/// The power-aware strategy (`power`), or its variant that resizes running
/// jobs only (`power-running-only`).
pub struct PowerAware {
    with_waiting_jobs: bool,
    combination_window: usize,
    max_combination_len: usize,
    deep_search_budget: Duration,
    plan: Option<Plan>,
}

/// A configuration being carried out.
#[derive(Clone, Debug, PartialEq)]
struct Plan {
    /// Running jobs and the node count each is to reach.
    resize: Vec<(JobId, u32)>,
    /// Waiting jobs to start, with their node counts.
    start: Vec<(JobId, u32)>,
    /// The corridor it was planned for.
    corridor: Corridor,
}

impl PowerAware {
    /// `power`: the LP with waiting jobs (Algorithm 2).
    pub fn new(p: &Params) -> Self {
        PowerAware {
            with_waiting_jobs: true,
            combination_window: p.get(&COMBINATION_WINDOW_PARAM),
            max_combination_len: p.get(&MAX_COMBINATION_LEN_PARAM),
            deep_search_budget: p.get(&DEEP_SEARCH_BUDGET_PARAM),
            plan: None,
        }
    }

    /// `power-running-only`: the LP over running jobs only.
    pub fn running_only(p: &Params) -> Self {
        PowerAware { with_waiting_jobs: false, ..PowerAware::new(p) }
    }
}

impl Strategy for PowerAware {
    fn name(&self) -> &'static str {
        if self.with_waiting_jobs {
            POWER.name
        } else {
            POWER_RUNNING_ONLY.name
        }
    }

    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        let mut lp = LpPass::default();
        let (decisions, held) = self.decide(s, &mut lp);
        let mut report = PassReport::from(decisions);
        report.notes = held_notes(s, &report.decisions, held);
        lp.report_into(&mut report);
        report
    }

    /// As EASY says, except that a job the power budget holds back (the
    /// notes' jobs) waits for power, with no estimate.
    fn waiting(&self, s: &Snapshot, decisions: &[Decision]) -> Vec<Waiting> {
        let held: HashSet<JobId> = held_notes(s, decisions, None).into_iter().filter_map(|n| n.job).collect();
        let mut out = waiting(s, decisions);
        for w in out.iter_mut().filter(|w| held.contains(&w.job)) {
            w.reason = WaitReason::Power;
            w.start = None;
        }
        out
    }
}

impl PowerAware {
    /// The pass's decisions, and the starts the budget held back when the
    /// budget was what chose them (lines 15-17).
    fn decide(&mut self, s: &Snapshot, lp: &mut LpPass) -> (Vec<Decision>, Option<Vec<HeldBack>>) {
        // Without a corridor there is nothing to keep: schedule like EASY.
        let Some(power) = s.power else {
            return (easy(s), None);
        };

        if let Some(plan) = self.plan.take() {
            if plan.corridor == power.corridor {
                if let Some((decisions, rest)) = advance(&plan, s) {
                    self.plan = rest;
                    return (decisions, None);
                }
            }
            // Gone stale: plan afresh below.
        }

        let draw = Draw::of(s, &power);
        let broken = draw.low < power.corridor.low || draw.high > power.corridor.high;
        let mut repair_failed = false;
        if broken && !any_adapting(s) && !resizable_jobs(s).is_empty() {
            lp.repairs_attempted += 1;
            if let Some(plan) = self.find_plan(s, &power, lp) {
                lp.repairs_found += 1;
                if let Some((decisions, rest)) = advance(&plan, s) {
                    self.plan = rest;
                    return (decisions, None);
                }
            }
            repair_failed = true;
        }

        // Lines 15-17 run only while no violation is detected. While the
        // draw is below the corridor they also run when no repair could be
        // attempted (nothing malleable runs, or a job is adapting): an empty
        // machine draws only idle power and would otherwise never start
        // anything. After a repair was attempted and found nothing, nothing
        // starts, as in the paper: the break stands until jobs end or the
        // corridor moves. (Starting by EASY there anyway made
        // power-running-only start the waiting jobs that only the LP with
        // waiting jobs is meant to choose, and hid Table II's difference.)
        if draw.high <= power.corridor.high && !repair_failed {
            let (kept, held) = budget_starts(s);
            return (kept, Some(held));
        }
        (Vec::new(), None)
    }
}

/// Notes on the jobs EASY would start now that the power budget holds back,
/// because their start would take the estimated draw above the corridor's
/// top: the core's own budget check (lines 15-17), whichever branch the pass
/// took. A pass that carried out a resize plan holds nothing back by budget.
/// `held`: the budget's verdict when the pass already asked for it.
fn held_notes(s: &Snapshot, decisions: &[Decision], held: Option<Vec<HeldBack>>) -> Vec<Note> {
    let Some(power) = s.power else {
        return Vec::new();
    };
    if decisions.iter().any(|d| !matches!(d, Decision::Start { .. })) {
        return Vec::new();
    }
    let held = held.unwrap_or_else(|| budget_starts(s).1);
    held.into_iter()
        .filter(|h| !decisions.iter().any(|d| d.job() == h.job))
        .map(|h| {
            Note::about(
                h.job,
                format!("held back by the power budget under corridor {}", power.corridor),
                LogLine::PowerHeld {
                    job: h.job,
                    nodes: h.nodes,
                    before_w: h.draw_before,
                    after_w: h.draw_after,
                    corridor: power.corridor,
                }
                .to_string(),
            )
        })
        .collect()
}

/// The machine's draw, as a range when estimated from the users' figures.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Draw {
    low: Watts,
    high: Watts,
}

impl Draw {
    fn of(s: &Snapshot, power: &PowerState) -> Draw {
        if let Some(w) = power.measured_draw {
            return Draw { low: w, high: w };
        }
        let held: usize = s.running.iter().map(|j| j.nodes.len()).sum();
        let idle = s.nodes.len().saturating_sub(held) as f64 * power.idle_node;
        let (mut low, mut high) = (idle, idle);
        for j in &s.running {
            let p = job_power(j.power, power);
            low += j.nodes.len() as f64 * p.low();
            high += j.nodes.len() as f64 * p.high();
        }
        Draw { low, high }
    }
}

fn job_power(p: Option<JobPower>, power: &PowerState) -> JobPower {
    p.unwrap_or_else(|| JobPower::fixed(power.idle_node))
}

impl PowerAware {
    /// Lines 6-8: the first feasible configuration, trying waiting-job
    /// combinations in priority order, then (or, for `power-running-only`,
    /// only) the running jobs alone.
    fn find_plan(&self, s: &Snapshot, power: &PowerState, stats: &mut LpPass) -> Option<Plan> {
        let running: Vec<&RunningJob> = s.running.iter().collect();
        let resizable: Vec<JobId> = resizable_jobs(s).iter().map(|j| j.id).collect();
        // Nodes neither free nor held (down, drained) still draw idle power
        // but can be given to nobody: they shift the corridor.
        let held: usize = running.iter().map(|j| j.nodes.len()).sum();
        let usable = held + s.free_nodes().len();
        let fixed_draw = s.nodes.len().saturating_sub(usable) as f64 * power.idle_node;
        let corridor = Corridor { low: power.corridor.low - fixed_draw, high: power.corridor.high - fixed_draw };

        let base: Vec<LpJob> = running
            .iter()
            .map(|j| {
                let n = j.nodes.len() as u32;
                LpJob {
                    nodes: match j.malleable {
                        Some(spec) if resizable.contains(&j.id) => LpNodes::Choose(spec),
                        _ => LpNodes::Fixed(n),
                    },
                    current: n,
                    power: job_power(j.power, power),
                }
            })
            .collect();
        // The fewest nodes the running jobs can be shrunk to: a combination
        // needing more than the rest cannot be feasible and is not solved.
        let floor: u32 = base
            .iter()
            .map(|j| match j.nodes {
                LpNodes::Fixed(n) => n,
                LpNodes::Choose(spec) => spec.lowest_valid().unwrap_or(u32::MAX),
            })
            .fold(0u32, u32::saturating_add);
        let room = (usable as u32).saturating_sub(floor);

        let queue: Vec<(&PendingJob, usize)> = runnable_queue(s).into_iter().take(self.combination_window).collect();
        let solve = |stats: &mut LpPass, extra: &[(&PendingJob, usize)]| -> Option<Plan> {
            let mut jobs = base.clone();
            jobs.extend(extra.iter().map(|&(p, size)| LpJob {
                nodes: LpNodes::Fixed(size as u32),
                current: 0,
                power: job_power(p.power, power),
            }));
            let problem = LpProblem { total_nodes: usable as u32, idle_node: power.idle_node, corridor, jobs };
            let t = Instant::now();
            let result = lp::solve(&problem);
            stats.solve_ms.push(t.elapsed().as_secs_f64() * 1e3);
            match result {
                Ok(Some(sol)) => Some(Plan {
                    resize: running
                        .iter()
                        .zip(&sol.counts)
                        .filter(|(j, &k)| j.nodes.len() as u32 != k)
                        .map(|(j, &k)| (j.id, k))
                        .collect(),
                    start: extra.iter().zip(&sol.counts[running.len()..]).map(|(&(p, _), &m)| (p.id, m)).collect(),
                    corridor: power.corridor,
                }),
                Ok(None) => None,
                Err(e) => {
                    stats.solver_errors += 1;
                    stats.last = format!("LP solver failed: {e}");
                    None
                }
            }
        };

        if self.with_waiting_jobs {
            let started = Instant::now();
            let mut tried = 0u64;
            for len in 1..=self.max_combination_len.min(queue.len()) {
                if len > 2 && started.elapsed() > self.deep_search_budget {
                    break;
                }
                let mut found = None;
                for_each_combination(queue.len(), len, &mut |idx| {
                    if len > 2 && started.elapsed() > self.deep_search_budget {
                        return false;
                    }
                    let combo: Vec<(&PendingJob, usize)> = idx.iter().map(|&i| queue[i]).collect();
                    let need: usize = combo.iter().map(|&(_, n)| n).sum();
                    if need as u32 > room {
                        return true;
                    }
                    tried += 1;
                    stats.longest_combination = stats.longest_combination.max(len);
                    found = solve(stats, &combo);
                    found.is_none()
                });
                if let Some(plan) = found {
                    stats.combinations_tried += tried;
                    stats.last = format!(
                        "corridor {} broken: configuration found with waiting job(s) {} after {tried} combination(s)",
                        power.corridor,
                        plan.start.iter().map(|(id, m)| format!("{id} on {m}")).collect::<Vec<_>>().join(", ")
                    );
                    return Some(plan);
                }
            }
            stats.combinations_tried += tried;
        }
        let plan = solve(stats, &[]);
        stats.last = match &plan {
            Some(p) => {
                format!("corridor {} broken: resizing running jobs only ({} resized)", power.corridor, p.resize.len())
            }
            None => format!("corridor {} broken: no feasible configuration", power.corridor),
        };
        plan
    }
}

/// Call `f` with each `len`-subset of `0..n` in lexicographic order (so the
/// highest-priority combinations come first) until it returns false.
fn for_each_combination(n: usize, len: usize, f: &mut dyn FnMut(&[usize]) -> bool) {
    if len == 0 || len > n {
        return;
    }
    let mut idx: Vec<usize> = (0..len).collect();
    loop {
        if !f(&idx) {
            return;
        }
        // Advance the rightmost index that can still move.
        let Some(i) = (0..len).rev().find(|&i| idx[i] < n - len + i) else {
            return;
        };
        idx[i] += 1;
        for k in i + 1..len {
            idx[k] = idx[k - 1] + 1;
        }
    }
}

/// Carry a plan one pass further: the decisions of this pass and what is
/// left of the plan, or `None` if the plan no longer applies (a job in it
/// ended, started elsewhere or became non-resizable).
fn advance(plan: &Plan, s: &Snapshot) -> Option<(Vec<Decision>, Option<Plan>)> {
    let find = |id: JobId| s.running.iter().find(|j| j.id == id);
    let resizing: Vec<(&RunningJob, u32)> =
        plan.resize.iter().map(|&(id, k)| find(id).map(|j| (j, k))).collect::<Option<_>>()?;
    let starting: Vec<(&PendingJob, u32)> = plan
        .start
        .iter()
        .map(|&(id, m)| s.pending.iter().find(|p| p.id == id).map(|p| (p, m)))
        .collect::<Option<_>>()?;

    let mut decisions = Vec::new();
    // Shrinks first: they are what frees nodes. A job keeps its first nodes;
    // a job still adapting is waited for.
    for &(job, target) in &resizing {
        if !job.adapting && target < job.nodes.len() as u32 {
            job.resizable()?;
            decisions.push(Decision::Shrink { job: job.id, remove_nodes: job.nodes[target as usize..].to_vec() });
        }
    }
    let mut pool = FreePool::new(s);
    let mut start = Vec::new();
    for &(p, m) in &starting {
        match pool.start(p, m as usize) {
            Some(d) => decisions.push(d),
            None => start.push((p.id, m)),
        }
    }
    for &(job, target) in &resizing {
        let current = job.nodes.len() as u32;
        if !job.adapting && target > current {
            job.resizable()?;
            // Short of free nodes, a later pass expands it.
            if let Some(add_nodes) = pool.take(&job.placement, (target - current) as usize) {
                decisions.push(Decision::Expand { job: job.id, add_nodes });
            }
        }
    }
    // Targets not reached yet: an adaptation ordered now or under way
    // reaches its target only when it ends.
    let resize: Vec<(JobId, u32)> =
        resizing.iter().filter(|&&(j, k)| j.adapting || j.nodes.len() as u32 != k).map(|&(j, k)| (j.id, k)).collect();
    let done = resize.is_empty() && start.is_empty();
    if decisions.is_empty() && !any_adapting(s) && !done {
        // Nothing moved and nothing will: the plan cannot be carried out.
        return None;
    }
    Some((decisions, (!done).then_some(Plan { resize, start, corridor: plan.corridor })))
}

/// A start the power budget held back (lines 15-17), with the estimated
/// draw (upper estimates) before and after it.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldBack {
    pub job: JobId,
    pub nodes: usize,
    pub draw_before: Watts,
    pub draw_after: Watts,
}

/// Lines 15-17: EASY's starts, kept in queue order while the upper estimate
/// of the draw stays under the corridor's top, and those held back. Without
/// a corridor, all of EASY's starts.
pub fn budget_starts(s: &Snapshot) -> (Vec<Decision>, Vec<HeldBack>) {
    let Some(power) = s.power else {
        return (easy(s), Vec::new());
    };
    let mut high = Draw::of(s, &power).high;
    let (mut kept, mut held) = (Vec::new(), Vec::new());
    for d in easy(s) {
        let Decision::Start { job, nodes, .. } = &d else {
            continue;
        };
        let Some(p) = s.pending.iter().find(|p| p.id == *job) else {
            continue;
        };
        let added = nodes.len() as f64 * (job_power(p.power, &power).high() - power.idle_node);
        if high + added <= power.corridor.high {
            high += added;
            kept.push(d);
        } else {
            held.push(HeldBack { job: *job, nodes: nodes.len(), draw_before: high, draw_after: high + added });
        }
    }
    (kept, held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, job};
    use malleable_model::{MalleableSpec, NodeConstraint};

    const PI: f64 = 170.0;
    const HEAT: f64 = 250.0;

    fn any_count(max: u32) -> MalleableSpec {
        MalleableSpec { min: 1, max, constraint: NodeConstraint::None }
    }

    fn power() -> PowerAware {
        PowerAware::new(&Params::defaults(PARAMS))
    }

    fn running_only() -> PowerAware {
        PowerAware::running_only(&Params::defaults(PARAMS))
    }

    /// 14 nodes; running jobs (id, first node, nodes, watts) hold the nodes
    /// from their first on; the corridor as given, idle nodes at 71 W.
    fn machine(running: &[(u32, usize, usize, f64)], low: f64, high: f64) -> Snapshot {
        let mut free = [true; 14];
        let mut s = cluster(&free);
        for &(id, first, n, w) in running {
            free[first..first + n].iter_mut().for_each(|f| *f = false);
            let job = RunningJob::new(id, first..first + n).end_limit(Some(10_000)).malleable(any_count(14));
            s.running.push(job.power(JobPower::fixed(w)));
        }
        for (node, f) in s.nodes.iter_mut().zip(free) {
            node.free = f;
        }
        s.power =
            Some(PowerState { corridor: Corridor::new(low, high).unwrap(), idle_node: 71.0, measured_draw: None });
        s
    }

    fn waiting(id: u32, nodes: u32, w: f64) -> PendingJob {
        job(id, 1, id as i64, nodes).malleable(any_count(14)).power(JobPower::fixed(w))
    }

    fn sizes(d: &[Decision]) -> Vec<(u32, &'static str, usize)> {
        d.iter()
            .map(|d| match d {
                Decision::Start { job, nodes, .. } => (job.0, "start", nodes.len()),
                Decision::Expand { job, add_nodes } => (job.0, "expand", add_nodes.len()),
                Decision::Shrink { job, remove_nodes } => (job.0, "shrink", remove_nodes.len()),
                Decision::Share { job, nodes, .. } => (job.0, "share", nodes.len()),
                Decision::Place { job, layout } => (job.0, "place", layout.len()),
                Decision::Preempt { job, nodes, .. } => (job.0, "preempt", nodes.len()),
            })
            .collect()
    }

    #[test]
    fn without_a_corridor_it_schedules_like_easy() {
        let mut s = machine(&[(1, 0, 10, HEAT)], 0.0, 1.0);
        s.power = None;
        s.pending = vec![waiting(2, 3, PI), waiting(3, 2, PI)];
        let r = power().schedule(&s);
        assert_eq!(r.decisions, easy(&s));
        assert!(r.notes.is_empty());
    }

    #[test]
    fn a_draw_above_the_corridor_shrinks_to_the_largest_count_that_fits() {
        // 4 idle nodes and a 10-node heat job: 4*71 + 10*250 = 2784 W > 1700.
        // 994 + 179 k <= 1700 gives k <= 3.9: the job keeps 3 nodes.
        let s = machine(&[(1, 0, 10, HEAT)], 1000.0, 1700.0);
        let r = running_only().schedule(&s);
        assert_eq!(sizes(&r.decisions), vec![(1, "shrink", 7)]);
        assert_eq!(r.decisions[0], Decision::Shrink { job: JobId(1), remove_nodes: (3..10).collect() });
        assert_eq!((r.counted("lp_repairs_attempted"), r.counted("lp_repairs_found")), (1, 1));
        // The repair is said, with its solves.
        assert_eq!(r.notes.len(), 1);
        let note = &r.notes[0];
        assert_eq!(note.job, None);
        assert!(
            note.text.starts_with(
                "power: corridor 1000-1700 broken: resizing running jobs only (1 resized) (LP: 1 solve(s) in "
            ) && note.text.ends_with(" ms)"),
            "{}",
            note.text
        );
        assert_eq!(r.measures.iter().filter(|(n, _)| *n == "lp").count(), 1);
    }

    #[test]
    fn a_draw_below_the_corridor_starts_a_waiting_job_and_fills_the_machine() {
        // A 2-node PI job alone: 2*170 + 12*71 = 1192 W < 2500. PI on all 14
        // nodes is only 2380 W, so the running job cannot repair it alone;
        // with the 3-node heat job waiting: 11*170 + 3*250 = 2620 W fits.
        let mut s = machine(&[(1, 0, 2, PI)], 2500.0, 3500.0);
        s.pending = vec![waiting(2, 3, HEAT)];
        let r = power().schedule(&s);
        assert_eq!(sizes(&r.decisions), vec![(2, "start", 3), (1, "expand", 9)]);
        assert_eq!(r.counted("lp_combinations_tried"), 1);

        // Scenario 2 of Table II has no such repair, and after a repair
        // found nothing, lines 15-17 do not run: the break stands.
        let r = running_only().schedule(&s);
        assert_eq!(r.decisions, vec![]);
        let counts = ["lp_repairs_attempted", "lp_repairs_found", "lp_combinations_tried"].map(|n| r.counted(n));
        assert_eq!(counts, [1, 0, 0]);
        assert!(r.notes[0].text.contains("corridor 2500-3500 broken: no feasible configuration"), "{:?}", r.notes);
    }

    #[test]
    fn an_empty_machine_below_the_corridor_starts_by_the_budget() {
        // Nothing runs, so no repair can be attempted: 994 W < 1700, and the
        // waiting jobs start by EASY while they fit under 2500 W.
        let mut s = machine(&[], 1700.0, 2500.0);
        s.pending = vec![waiting(1, 4, HEAT), waiting(2, 4, HEAT), waiting(3, 4, HEAT)];
        for mut p in [power(), running_only()] {
            // 994 + 4 * 179 = 1710, + 716 = 2426, + 716 = 3142 > 2500: held.
            let r = p.schedule(&s);
            assert_eq!(sizes(&r.decisions), vec![(1, "start", 4), (2, "start", 4)]);
            assert_eq!(r.counted("lp_repairs_attempted"), 0);
            assert_eq!(r.notes.iter().map(|n| n.job).collect::<Vec<_>>(), vec![Some(JobId(3))]);
        }
    }

    #[test]
    fn a_plan_that_needs_freed_nodes_is_carried_out_over_passes() {
        // The machine is full of heat at 3500 W; the corridor drops to
        // 1000-1700. With the 1-node PI job: 994 + 179 k + 99 <= 1700, k = 3.
        let mut s = machine(&[(1, 0, 14, HEAT)], 1000.0, 1700.0);
        s.pending = vec![waiting(2, 1, PI)];
        let mut p = power();
        let r = p.schedule(&s);
        assert_eq!(sizes(&r.decisions), vec![(1, "shrink", 11)]);
        assert_eq!(r.counted("lp_combinations_tried"), 1);
        // While the shrink runs, nothing else happens, and no budget note:
        // the plan, not the budget, holds the job back.
        s.running[0].adapting = true;
        let r = p.schedule(&s);
        assert_eq!((r.decisions, r.notes), (vec![], vec![]));
        // Shrunk: the waiting job of the plan starts on a freed node.
        s.running[0].adapting = false;
        s.running[0].nodes.truncate(3);
        for n in &mut s.nodes[3..] {
            n.free = true;
        }
        let r = p.schedule(&s);
        assert_eq!(r.decisions, vec![Decision::Start { job: JobId(2), nodes: vec![3], time_limit: None }]);
        assert_eq!(r.counted("lp_solves"), 0, "carrying out a plan solves nothing");
    }

    #[test]
    fn no_repair_while_a_job_adapts() {
        let mut s = machine(&[(1, 0, 10, HEAT)], 1000.0, 1700.0);
        s.running[0].adapting = true;
        let r = power().schedule(&s);
        assert_eq!(r.decisions, vec![]);
        assert_eq!(r.counted("lp_repairs_attempted"), 0);
    }

    #[test]
    fn starts_are_kept_under_the_corridors_top() {
        // Inside the corridor at 1093 W (one PI node). Waiting: 4 heat nodes
        // (+716 W: 1809 > 1700, held back) and 2 PI nodes (+198 W: fits).
        let mut s = machine(&[(1, 0, 1, PI)], 1000.0, 1700.0);
        s.pending = vec![waiting(2, 4, HEAT), waiting(3, 2, PI)];
        let r = power().schedule(&s);
        assert_eq!(sizes(&r.decisions), vec![(3, "start", 2)]);
        // squeue says so: job 2 waits for power.
        let w = power().waiting(&s, &r.decisions);
        assert_eq!(w.iter().map(|w| (w.job.0, w.reason)).collect::<Vec<_>>(), vec![(2, WaitReason::Power)]);
        assert_eq!(
            r.notes,
            vec![Note::about(
                JobId(2),
                "held back by the power budget under corridor 1000-1700",
                "JobId=2 held back by the power budget: starting it on 4 node(s) would raise the estimated draw \
                 from 1093 W to 1809 W, above the top of the power corridor 1000-1700 W"
            )]
        );
    }

    /// What the plugin used to work out by itself, now said by the strategy:
    /// the example of the power issue, 4 idle nodes at 71 W (284 W) and a
    /// 250 W job on one node (463 W) under a 300 W top.
    #[test]
    fn a_start_above_the_corridor_is_said_held_back_with_the_draws() {
        let mut s = cluster(&[true; 4]);
        s.power =
            Some(PowerState { corridor: Corridor::new(0.0, 300.0).unwrap(), idle_node: 71.0, measured_draw: None });
        s.pending = vec![job(7, 93, 0, 1).power(JobPower::fixed(250.0))];
        let r = power().schedule(&s);
        assert_eq!(r.decisions, vec![]);
        assert_eq!(
            r.notes[0].text,
            "JobId=7 held back by the power budget: starting it on 1 node(s) would raise the estimated draw \
             from 284 W to 463 W, above the top of the power corridor 0-300 W"
        );
        // The job's own starts use up the budget first: under 600 W one
        // starts (463 W), the second would add 179 W more (642 W).
        s.power.as_mut().unwrap().corridor = Corridor::new(0.0, 600.0).unwrap();
        s.pending.push(job(8, 92, 0, 1).power(JobPower::fixed(250.0)));
        let r = power().schedule(&s);
        assert_eq!(r.decisions.len(), 1);
        assert_eq!(r.notes.iter().map(|n| n.job).collect::<Vec<_>>(), vec![Some(JobId(8))]);
        assert!(r.notes[0].text.contains("from 463 W to 642 W"), "{}", r.notes[0].text);
        // A running job counts at its upper estimate, a measurement first.
        let mut s = cluster(&[false, true, true, true]);
        s.power =
            Some(PowerState { corridor: Corridor::new(0.0, 600.0).unwrap(), idle_node: 71.0, measured_draw: None });
        let measured = JobPower { min_per_node: 100.0, max_per_node: 300.0, measured_per_node: Some(200.5) };
        s.running = vec![RunningJob::new(9, [0]).end_limit(Some(5000)).power(measured)];
        s.pending = vec![job(3, 97, 0, 2).power(JobPower::fixed(250.0))];
        let note = &power().schedule(&s).notes[0];
        assert!(note.text.contains("on 2 node(s)") && note.text.contains("from 413.5 W to 771.5 W"), "{note:?}");
    }

    #[test]
    fn parameters_bound_the_combinations() {
        // No single 1-node heat job lets the PI job fill the corridor's
        // floor (13 PI + 1 heat: 2460 W < 2500), the pair does (12 PI + 2
        // heat: 2540 W).
        let mut s = machine(&[(1, 0, 2, PI)], 2500.0, 3500.0);
        s.pending = vec![waiting(2, 1, HEAT), waiting(3, 1, HEAT)];
        let run = |key: &str, value: &str| {
            let mut p = Params::defaults(PARAMS);
            if !key.is_empty() {
                p.set(key, value).unwrap();
            }
            let r = (POWER.build)(&p).schedule(&s);
            (sizes(&r.decisions), r.counted("lp_combinations_tried"))
        };
        let pair = vec![(2, "start", 1), (3, "start", 1), (1, "expand", 10)];
        assert_eq!(run("", ""), (pair, 3), "two singles, then the pair");
        assert_eq!(run("MaxCombinationLength", "1"), (vec![], 2), "singles only");
        assert_eq!(run("CombinationWindow", "1"), (vec![], 1), "job 2 alone");
    }

    #[test]
    fn combinations_come_in_priority_order() {
        let mut seen = Vec::new();
        for_each_combination(4, 2, &mut |c| {
            seen.push(c.to_vec());
            true
        });
        assert_eq!(seen, vec![vec![0, 1], vec![0, 2], vec![0, 3], vec![1, 2], vec![1, 3], vec![2, 3]]);
        let mut n = 0;
        for_each_combination(5, 3, &mut |_| {
            n += 1;
            n < 4
        });
        assert_eq!(n, 4, "stops when asked");
    }
}
