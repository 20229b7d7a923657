//! The integer program of Chadha et al. 2020's power-aware strategy (section V-B,
//! Algorithm 2, Equation 1): given the running jobs (and, in Algorithm 2's
//! second step, one waiting job), find node counts that keep the machine's
//! draw inside the power corridor with as few idle nodes as possible.
//!
//! # Equation 1
//! With `K` jobs, `k_i` nodes for job `i`, `k_idle` idle nodes, `N` usable
//! nodes, `P_idle` the draw of an idle node and `[l, u]` the corridor:
//!
//! ```text
//! minimise   k_idle * P_idle
//! subject to l <= sum_i k_i * p_low_i  + k_idle * P_idle
//!            u >= sum_i k_i * p_high_i + k_idle * P_idle
//!            k_i a valid count of job i (within [min, max], on its node
//!                constraint), k_i >= 1, integer
//!            0 <= k_idle < N, integer
//!            sum_i k_i + k_idle = N
//! ```
//!
//! The last row is implicit in the paper (every node is either some job's or
//! idle) and explicit here. `p_low`/`p_high` are [`JobPower::low`] and
//! [`JobPower::high`]: the measurement once there is one, else the user's
//! estimates. The paper writes the waiting job `j` as a separate term
//! `m_j * p^(j)`; here it is one more job with [`LpNodes::Fixed`]`(m_j)`, as is
//! a rigid running job or a malleable one in the middle of an adaptation.
//!
//! We minimise `k_idle` itself rather than `k_idle * P_idle`: for
//! `P_idle > 0` that is the same optimum, and for `P_idle = 0` the paper's
//! objective would be constant while its stated aim (section V-B: "improve
//! the system utilization, i.e. reduce the number of idle nodes") still asks
//! for the fewest idle nodes.
//!
//! # Tie-break (not in the paper)
//! Many configurations often share the least `k_idle` (moving a node between
//! two jobs of equal power changes nothing Equation 1 sees). Each resize
//! stops a job for seconds (Chadha et al. 2020, Fig. 5: 1.8 s to 3.1 s at 32 nodes),
//! so among them we take the one with the fewest node moves,
//! `sum_i |k_i - current_i|`, linearised with an integer deviation
//! `d_i >= 0`, `d_i >= k_i - c_i`, `d_i >= c_i - k_i` (for a job encoded with
//! binaries, below, its moves are linear in them: `sum_v |v - c_i| b_v`). The
//! objective is `W * k_idle + sum_i d_i` with `W = sum_i D_i + 1`, `D_i` the
//! largest deviation job `i` can have: one idle node more always costs more
//! than any number of moves, so the tie-break never trades against
//! Equation 1's goal. All coefficients are integers, so the optimum is exact;
//! the solvers minimise an integer `z >= objective`, which lets them prune
//! with that integrality (see `run_solver`). A fixed job's moves are not
//! counted: nothing can change them.
//!
//! # Encoding of the node constraints
//! Each job's count must lie in its valid set `V_i` (within `[min, max]`,
//! `[1, N]`, and on its constraint). Most such sets are not intervals, and
//! solving the interval relaxation and rounding would return counts the job
//! cannot run on, or miss the optimum. So each is encoded exactly:
//! - `none`: an integer `k` in `[first, last]` of `V_i`;
//! - `even`: `k = 2y`, `odd`: `k = 2y + 1`, `y` an integer whose bounds come
//!   from `V_i`'s first and last value;
//! - `pof2`, `ncube`: one binary `b_v` per `v` in `V_i`, `sum_v b_v = 1`,
//!   `k = sum_v v * b_v` (at most 8 binaries for 200 nodes: these sets are
//!   small);
//! - a set with one value is a constant, and a `pof2`/`ncube` set that happens
//!   to be an interval (`{1, 2}`) is an integer interval.
//!
//! Before the model is built, every job's upper bound is tightened to
//! `N - (sum of the other jobs' least counts)`; this is implied by the
//! node-count row, so it changes no answer, but it keeps the binaries and the
//! branch-and-bound small. A job with no valid count, a `Fixed(0)` or a fixed
//! count above `N` makes the problem infeasible (`Ok(None)`), not an error.
//!
//! # Floating point
//! The power rows are given to the solver with [`POWER_TOLERANCE`] of slack,
//! so a configuration that sits exactly on a corridor bound is not lost to
//! rounding in the sums. The solver's values are rounded to integers
//! (refusing values that are not near one) and the rounded configuration is
//! checked against every row above in plain Rust before it is returned: a
//! failed check is an `Err` naming the row, never a wrong configuration.
//!
//! # Backends
//! CBC (feature `cbc`, the default; Debian's `coinor-libcbc-dev`) or the
//! pure-Rust microlp (feature `microlp`), through the scaffolding in
//! `crate::lp`: silent solvers, an integer bound `z` on the objective, the
//! node limit, rounding.
//!
//! # Speed
//! `malleable_sim::bench::lp` times the paper's scenario (14 nodes, 5
//! running jobs, a waiting one) and 64 malleable jobs on 200 nodes. In
//! release mode, medians: CBC about 1.4 ms and 4.5 ms, microlp about 0.05 ms
//! and 1 ms; CBC's floor is its per-call set-up (0.4 ms even when presolve
//! alone proves infeasibility). The tie-break is what costs: proving the
//! fewest moves among many equally idle configurations is a knapsack, and on
//! some random 64-job problems it took a few hundred milliseconds with either
//! backend (minimising `k_idle` alone stays under 15 ms there).

use good_lp::{variable, Constraint, Expression, ProblemVariables, Variable};
use malleable_model::{Corridor, JobPower, MalleableSpec, NodeConstraint, Watts};

use crate::lp::{self, backend, Outcome};

/// How this program is named in error messages.
const PROGRAM: &str = "power_lp";

/// Slack on the corridor's bounds, in watts: a draw of `l - 1e-6` counts as
/// `l`. Far below any measurement's precision, far above the rounding error
/// of summing a few hundred products of watts and node counts.
pub const POWER_TOLERANCE: Watts = 1e-6;

/// How many nodes a job may get in the solution.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum LpNodes {
    /// Exactly this many: a waiting job's `m_j`, a rigid job, or a malleable
    /// job that is adapting now.
    Fixed(u32),
    /// Any count the spec allows (within `[min, max]`, on its constraint).
    Choose(MalleableSpec),
}

/// One job of Equation 1.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LpJob {
    pub nodes: LpNodes,
    /// Its count now (0 for a waiting job); ties are broken toward it.
    pub current: u32,
    pub power: JobPower,
}

/// Equation 1's data.
#[derive(Clone, Debug, PartialEq)]
pub struct LpProblem {
    /// `N`: the nodes the jobs and the idle nodes share.
    pub total_nodes: u32,
    /// `P_idle`: what a node without a job draws.
    pub idle_node: Watts,
    /// `[l, u]`.
    pub corridor: Corridor,
    pub jobs: Vec<LpJob>,
}

/// An optimal configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LpSolution {
    /// `k_i`, one per job, in the order of [`LpProblem::jobs`].
    pub counts: Vec<u32>,
    /// `k_idle`.
    pub idle: u32,
    /// `sum_i k_i * p_low_i + k_idle * P_idle`: the draw the lower bound was
    /// checked with.
    pub low_draw: Watts,
    /// `sum_i k_i * p_high_i + k_idle * P_idle`: the draw the upper bound was
    /// checked with.
    pub high_draw: Watts,
}

/// The counts a job may take, after tightening to the machine.
#[derive(Clone, Debug, PartialEq)]
enum Domain {
    /// One value: no variable.
    Const(u32),
    /// Every integer in `first..=last`.
    Interval { first: u32, last: u32 },
    /// `first, first + 2, ..., last` (`even`, `odd`): `k = 2y + first % 2`.
    Step2 { first: u32, last: u32 },
    /// These values, ascending, at least two, not an interval.
    Pick(Vec<u32>),
}

impl Domain {
    fn first(&self) -> u32 {
        match self {
            Domain::Const(v) => *v,
            Domain::Interval { first, .. } | Domain::Step2 { first, .. } => *first,
            Domain::Pick(values) => values[0],
        }
    }
    fn last(&self) -> u32 {
        match self {
            Domain::Const(v) => *v,
            Domain::Interval { last, .. } | Domain::Step2 { last, .. } => *last,
            Domain::Pick(values) => values[values.len() - 1],
        }
    }
}

/// The valid counts of `spec` in `lo..=hi`, or `None` if there is none.
fn domain(spec: &MalleableSpec, lo: u32, hi: u32) -> Option<Domain> {
    let lo = lo.max(spec.min).max(1);
    let hi = hi.min(spec.max);
    if lo > hi {
        return None;
    }
    let valid = |n: &u32| spec.constraint.is_valid(*n);
    let first = (lo..=hi).find(valid)?;
    let last = (first..=hi).rev().find(valid)?;
    if first == last {
        return Some(Domain::Const(first));
    }
    Some(match spec.constraint {
        NodeConstraint::None => Domain::Interval { first, last },
        NodeConstraint::Even | NodeConstraint::Odd => Domain::Step2 { first, last },
        NodeConstraint::PowerOfTwo | NodeConstraint::NCube => {
            let values: Vec<u32> = (first..=last).filter(valid).collect();
            if values.len() as u32 == last - first + 1 {
                Domain::Interval { first, last }
            } else {
                Domain::Pick(values)
            }
        }
    })
}

/// Each job's domain within `[1, N]` and what the others leave it, or `None`
/// when some job has no valid count (the problem is then infeasible).
fn domains(p: &LpProblem) -> Option<Vec<Domain>> {
    let n = p.total_nodes;
    let mut out = Vec::with_capacity(p.jobs.len());
    for job in &p.jobs {
        out.push(match job.nodes {
            LpNodes::Fixed(m) if m == 0 || m > n => return None,
            LpNodes::Fixed(m) => Domain::Const(m),
            LpNodes::Choose(spec) => domain(&spec, 1, n)?,
        });
    }
    // Every job takes at least its least count, so none can take more than
    // N minus the others' least counts.
    let least: u64 = out.iter().map(|d| u64::from(d.first())).sum();
    if least > u64::from(n) {
        return None;
    }
    let spare = n - least as u32;
    for (d, job) in out.iter_mut().zip(&p.jobs) {
        if let LpNodes::Choose(spec) = job.nodes {
            if d.last() > d.first() + spare {
                *d = domain(&spec, d.first(), d.first() + spare)?;
            }
        }
    }
    Some(out)
}

/// Round a solver value that must be integral.
fn integral(x: f64, what: &str) -> Result<i64, String> {
    lp::integral(PROGRAM, x, what)
}

/// Check `counts`/`idle` against every row of Equation 1 and the node-count
/// rules; the draws `(low, high)` when all hold, else which one failed.
fn verify(p: &LpProblem, counts: &[u32], idle: u32) -> Result<(Watts, Watts), String> {
    let n = p.total_nodes;
    if counts.len() != p.jobs.len() {
        return Err(format!("{} counts for {} jobs", counts.len(), p.jobs.len()));
    }
    for (i, (job, &k)) in p.jobs.iter().zip(counts).enumerate() {
        let ok = match job.nodes {
            LpNodes::Fixed(m) => k == m,
            LpNodes::Choose(spec) => spec.allows(k),
        };
        if !ok || k == 0 {
            return Err(format!("job {i} gets {k} nodes, which {:?} forbids", job.nodes));
        }
    }
    if idle >= n {
        return Err(format!("{idle} idle nodes, not below N = {n}"));
    }
    let used: u64 = counts.iter().map(|&k| u64::from(k)).sum::<u64>() + u64::from(idle);
    if used != u64::from(n) {
        return Err(format!("jobs and idle nodes add up to {used}, not N = {n}"));
    }
    let (low, high) = draws(p, counts, idle);
    if low < p.corridor.low - POWER_TOLERANCE {
        return Err(format!("low draw {low} W is below the corridor's {} W", p.corridor.low));
    }
    if high > p.corridor.high + POWER_TOLERANCE {
        return Err(format!("high draw {high} W is above the corridor's {} W", p.corridor.high));
    }
    Ok((low, high))
}

fn draws(p: &LpProblem, counts: &[u32], idle: u32) -> (Watts, Watts) {
    let idle_draw = f64::from(idle) * p.idle_node;
    p.jobs.iter().zip(counts).fold((idle_draw, idle_draw), |(lo, hi), (job, &k)| {
        let k = f64::from(k);
        (lo + k * job.power.low(), hi + k * job.power.high())
    })
}

/// How a job's count reads off the solver's values.
enum Count {
    Const(u32),
    /// `k = 2y + offset` (`Interval`: `k = y`, scale 1).
    Affine {
        y: Variable,
        scale: u32,
        offset: u32,
    },
    /// `k = values[argmax b]`.
    Pick {
        b: Vec<Variable>,
        values: Vec<u32>,
    },
}

/// Solve Equation 1 (with the node-count row and the tie-break toward each
/// job's current count, see the module docs).
///
/// `Ok(None)` when no configuration satisfies it (including a job with no
/// valid count, a `Fixed(0)`, a fixed count above `N`, no jobs at all since
/// `k_idle < N`, or `N = 0`). `Err` when the solver fails or returns a
/// configuration that does not pass the check, or when the input has a
/// power that is not a finite number (the solver cannot be given that); the
/// message says which.
pub fn solve(p: &LpProblem) -> Result<Option<LpSolution>, String> {
    solve_limited(p, TIE_BREAK_NODE_LIMIT).map(|(sol, _)| sol)
}

/// [`solve`] with the tie-break's node limit given; also says whether the
/// tie-break stopped at it.
fn solve_limited(p: &LpProblem, node_limit: u32) -> Result<(Option<LpSolution>, bool), String> {
    let finite = p.idle_node.is_finite()
        && p.corridor.low.is_finite()
        && p.corridor.high.is_finite()
        && p.jobs.iter().all(|j| j.power.low().is_finite() && j.power.high().is_finite());
    if !finite {
        return Err("power_lp: a power in the problem is not a finite number of watts".into());
    }
    let n = p.total_nodes;
    if n == 0 || p.jobs.is_empty() {
        return Ok((None, false));
    }
    let Some(doms) = domains(p) else {
        return Ok((None, false));
    };

    // Nothing to choose: the counts are given, k_idle follows.
    if doms.iter().all(|d| matches!(d, Domain::Const(_))) {
        let counts: Vec<u32> = doms.iter().map(Domain::first).collect();
        let used: u32 = counts.iter().sum(); // <= N: checked in domains()
        let sol = verify(p, &counts, n - used).ok().map(|(low_draw, high_draw)| LpSolution {
            counts,
            idle: n - used,
            low_draw,
            high_draw,
        });
        return Ok((sol, false));
    }

    let mut gave_up = false;
    let found = match run_solver(p, &doms, Objective::IdleThenMoves, node_limit)? {
        Run::Solved(found) => found,
        // The tie-break's search hit its node limit: take the fewest idle
        // nodes without it (see TIE_BREAK_NODE_LIMIT).
        Run::GaveUp => {
            gave_up = true;
            match run_solver(p, &doms, Objective::IdleOnly, node_limit)? {
                Run::Solved(found) => found,
                Run::GaveUp => return Err(format!("power_lp: the {} solver stopped on k_idle alone", backend())),
            }
        }
    };
    let Some((counts, idle)) = found else {
        return Ok((None, gave_up));
    };
    let (low_draw, high_draw) = verify(p, &counts, idle)
        .map_err(|why| format!("power_lp: the {} solver's configuration fails Equation 1: {why}", backend()))?;
    let sol = LpSolution { counts, idle, low_draw, high_draw };
    Ok((Some(sol), gave_up))
}

/// What a solver run is asked to minimise.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Objective {
    /// `W * k_idle + moves` (the module docs), within
    /// [`TIE_BREAK_NODE_LIMIT`] branch-and-bound nodes with CBC.
    IdleThenMoves,
    /// `k_idle` alone, to the end.
    IdleOnly,
}

/// Branch-and-bound nodes CBC may spend on the tie-break. Proving the fewest
/// moves among many equally idle configurations is a knapsack: on random
/// problems of 64 jobs on 200 nodes (`malleable-sim bench`'s random cases)
/// it took up to 2.8 s, against 20 ms for `k_idle` alone, and slurmctld's
/// scheduling locks are held meanwhile. A node count, unlike a time limit,
/// stops the search at the same point on every machine, so the simulator
/// stays deterministic. At the limit the answer is the idle-only optimum
/// (its moves are then not the fewest). With 100 nodes the slowest of 200
/// such problems took 0.34 s, 6 of them reached the limit, and problems of
/// the scenario's size never come near it.
pub const TIE_BREAK_NODE_LIMIT: u32 = 100;

/// A solver run's result: counts and `k_idle` (rounded, not yet verified;
/// `None` when infeasible), or the tie-break stopped at its node limit.
enum Run {
    Solved(Option<(Vec<u32>, u32)>),
    GaveUp,
}

/// Build the model of the module docs over `doms`, solve it, and read the
/// counts and k_idle off the solution, rounded but not yet verified.
/// `node_limit` bounds the tie-break's search ([`Objective::IdleThenMoves`]).
fn run_solver(p: &LpProblem, doms: &[Domain], goal: Objective, node_limit: u32) -> Result<Run, String> {
    let with_moves = goal == Objective::IdleThenMoves;
    let n = p.total_nodes;
    let mut vars = ProblemVariables::new();
    let idle = vars.add(variable().integer().min(0).max(n - 1));
    let mut nodes_row = Expression::with_capacity(p.jobs.len() + 1);
    let mut low_row = Expression::with_capacity(p.jobs.len() + 1);
    let mut high_row = Expression::with_capacity(p.jobs.len() + 1);
    nodes_row.add_mul(1.0, idle);
    low_row.add_mul(p.idle_node, idle);
    high_row.add_mul(p.idle_node, idle);
    // Fixed contributions go to the right-hand sides.
    let (mut fixed_nodes, mut fixed_low, mut fixed_high) = (0.0, 0.0, 0.0);
    let mut reads = Vec::with_capacity(p.jobs.len());
    // (d_i, k_i, current_i) for the deviation rows.
    let mut deviations: Vec<(Variable, Expression, f64)> = Vec::new();
    // The tie-break's terms: d_i, or |v - current_i| per binary b_v.
    let mut moves: Vec<(Variable, f64)> = Vec::new();
    let mut pick_rows: Vec<Expression> = Vec::new();
    // sum_i D_i: the most moves any configuration can have.
    let mut max_moves: u32 = 0;
    for (job, dom) in p.jobs.iter().zip(doms) {
        let (lo_w, hi_w) = (job.power.low(), job.power.high());
        let c = job.current;
        let k: Expression = match *dom {
            Domain::Const(v) => {
                let v = f64::from(v);
                fixed_nodes += v;
                fixed_low += v * lo_w;
                fixed_high += v * hi_w;
                reads.push(Count::Const(dom.first()));
                continue;
            }
            Domain::Interval { first, last } => {
                let y = vars.add(variable().integer().min(first).max(last));
                reads.push(Count::Affine { y, scale: 1, offset: 0 });
                y.into()
            }
            Domain::Step2 { first, last } => {
                let r = first % 2;
                let y = vars.add(variable().integer().min((first - r) / 2).max((last - r) / 2));
                reads.push(Count::Affine { y, scale: 2, offset: r });
                let mut e = Expression::with_capacity(1);
                e.add_mul(2.0, y);
                e + f64::from(r)
            }
            Domain::Pick(ref values) => {
                let b: Vec<Variable> = values.iter().map(|_| vars.add(variable().binary())).collect();
                let mut k = Expression::with_capacity(b.len());
                let mut one = Expression::with_capacity(b.len());
                for (&v, &bv) in values.iter().zip(&b) {
                    k.add_mul(f64::from(v), bv);
                    one.add_mul(1.0, bv);
                    // With one binary per value the moves are linear in
                    // the binaries: no deviation variable, and a tighter
                    // relaxation than d >= |sum v b_v - c|.
                    moves.push((bv, f64::from(v.abs_diff(c))));
                }
                pick_rows.push(one);
                reads.push(Count::Pick { b, values: values.clone() });
                max_moves += dom.first().abs_diff(c).max(dom.last().abs_diff(c));
                nodes_row.add_mul(1.0, k.clone());
                low_row.add_mul(lo_w, k.clone());
                high_row.add_mul(hi_w, k);
                continue;
            }
        };
        nodes_row.add_mul(1.0, k.clone());
        low_row.add_mul(lo_w, k.clone());
        high_row.add_mul(hi_w, k.clone());
        if !with_moves {
            continue;
        }
        let d_max = dom.first().abs_diff(c).max(dom.last().abs_diff(c));
        max_moves += d_max;
        // Integer, though |k - c| is integral anyway: with every objective
        // term an integer variable, CBC knows the objective is integral and
        // prunes every node whose bound is within 1 of the incumbent.
        let d = vars.add(variable().integer().min(0).max(d_max));
        deviations.push((d, k, f64::from(c)));
        moves.push((d, 1.0));
    }

    // W * k_idle + moves, W = max_moves + 1 (module docs); or k_idle alone.
    let mut objective = Expression::with_capacity(moves.len() + 1);
    if with_moves {
        objective.add_mul(f64::from(max_moves) + 1.0, idle);
        for &(v, w) in &moves {
            objective.add_mul(w, v);
        }
    } else {
        objective.add_mul(1.0, idle);
    }

    let mut rows: Vec<Constraint> = vec![
        nodes_row.eq(f64::from(n) - fixed_nodes),
        low_row.geq(p.corridor.low - fixed_low - POWER_TOLERANCE),
        high_row.leq(p.corridor.high - fixed_high + POWER_TOLERANCE),
    ];
    rows.extend(pick_rows.into_iter().map(|one| one.eq(1.0)));
    for (d, k, c) in deviations {
        // d >= k - c and d >= c - k.
        rows.push((Expression::from(d) - k.clone()).geq(-c));
        rows.push((Expression::from(d) + k).geq(c));
    }
    let limit = with_moves.then_some(node_limit);
    let outcome =
        lp::minimise_integral(PROGRAM, vars, objective, rows, limit, |value| read_counts(p, &reads, idle, value))?;
    Ok(match outcome {
        Outcome::Optimal(found) => Run::Solved(Some(found)),
        Outcome::Infeasible => Run::Solved(None),
        Outcome::Stopped(_) => Run::GaveUp,
    })
}

/// Each job's count and k_idle off the solver's values, rounded, not yet verified.
fn read_counts(
    p: &LpProblem,
    reads: &[Count],
    idle: Variable,
    value: &dyn Fn(Variable) -> f64,
) -> Result<(Vec<u32>, u32), String> {
    let mut counts = Vec::with_capacity(p.jobs.len());
    for (i, read) in reads.iter().enumerate() {
        counts.push(match read {
            Count::Const(v) => *v,
            Count::Affine { y, scale, offset } => {
                let y = integral(value(*y), &format!("job {i}'s node count"))?;
                let k = y * i64::from(*scale) + i64::from(*offset);
                u32::try_from(k).map_err(|_| format!("power_lp: job {i} got {k} nodes"))?
            }
            Count::Pick { b, values } => {
                let mut chosen = None;
                for (&bv, &v) in b.iter().zip(values) {
                    if integral(value(bv), &format!("job {i}'s choice of {v} nodes"))? == 1 {
                        if chosen.is_some() {
                            return Err(format!("power_lp: the {} solver chose two counts for job {i}", backend()));
                        }
                        chosen = Some(v);
                    }
                }
                chosen.ok_or_else(|| format!("power_lp: the {} solver chose no count for job {i}", backend()))?
            }
        });
    }
    let idle = integral(value(idle), "k_idle")?;
    let idle = u32::try_from(idle).map_err(|_| format!("power_lp: k_idle came out as {idle}"))?;
    Ok((counts, idle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(min: u32, max: u32, constraint: NodeConstraint) -> LpNodes {
        LpNodes::Choose(MalleableSpec { min, max, constraint })
    }

    fn any(max: u32) -> LpNodes {
        choose(1, max, NodeConstraint::None)
    }

    fn job(nodes: LpNodes, current: u32, watts: Watts) -> LpJob {
        LpJob { nodes, current, power: JobPower::fixed(watts) }
    }

    fn problem(n: u32, idle_node: Watts, low: Watts, high: Watts, jobs: Vec<LpJob>) -> LpProblem {
        LpProblem { total_nodes: n, idle_node, corridor: Corridor { low, high }, jobs }
    }

    fn solved(p: &LpProblem) -> LpSolution {
        solve(p).expect("solver failed").expect("should be feasible")
    }

    fn infeasible(p: &LpProblem) -> bool {
        solve(p).expect("solver failed").is_none()
    }

    /// 64 malleable jobs on 200 nodes, every constraint kind, 120-280 W,
    /// the corridor from `seed` (a fixed LCG, no RNG crate in this crate).
    fn many_jobs(seed: u64) -> LpProblem {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let kinds = NodeConstraint::ALL;
        let jobs = (0..64)
            .map(|_| {
                let spec = MalleableSpec { min: 1, max: 16, constraint: kinds[next(kinds.len() as u64) as usize] };
                let current = (1..=16).filter(|&v| spec.allows(v)).nth(next(2) as usize).unwrap();
                job(LpNodes::Choose(spec), current, 120.0 + next(161) as f64)
            })
            .collect();
        let low = 20_000.0 + next(12_000) as f64;
        problem(200, 71.0, low, low + 9000.0, jobs)
    }

    /// At its node limit the tie-break gives way to the fewest idle nodes
    /// alone: the answer keeps Equation 1's optimum (and passes `verify`),
    /// only its moves may be more.
    #[cfg(feature = "cbc")]
    #[test]
    fn tie_break_at_its_node_limit_keeps_the_fewest_idle_nodes() {
        let mut gave_up = 0;
        for seed in 0..6 {
            let p = many_jobs(seed);
            let (exact, exact_gave_up) = solve_limited(&p, 1_000_000).unwrap();
            let (limited, stopped) = solve_limited(&p, 0).unwrap();
            assert!(!exact_gave_up);
            assert_eq!(exact.is_some(), limited.is_some(), "seed {seed}");
            if let (Some(e), Some(l)) = (exact, limited) {
                assert_eq!(e.idle, l.idle, "seed {seed}");
                assert!(verify(&p, &l.counts, l.idle).is_ok());
                gave_up += usize::from(stopped);
            }
        }
        assert!(gave_up > 0, "no problem reached the limit: the fallback went untested");
    }

    #[test]
    fn unique_configuration_with_no_idle_node() {
        // (1,3) 250 W, (2,2) 300 W, (3,1) 350 W, idle configurations lower.
        let p = problem(4, 10.0, 300.0, 320.0, vec![job(any(4), 1, 100.0), job(any(4), 1, 50.0)]);
        let s = solved(&p);
        assert_eq!((s.counts, s.idle), (vec![2, 2], 0));
        assert_eq!((s.low_draw, s.high_draw), (300.0, 300.0));
    }

    #[test]
    fn idle_nodes_when_the_ceiling_needs_them_and_bounds_are_inclusive() {
        // 100 k + 10 (5 - k) <= 320: k = 3 draws exactly 320 W.
        let p = problem(5, 10.0, 0.0, 320.0, vec![job(any(5), 5, 100.0)]);
        let s = solved(&p);
        assert_eq!((s.counts, s.idle, s.high_draw), (vec![3], 2, 320.0));
        // The floor too: exactly 320 W wanted from below.
        let p = problem(5, 10.0, 320.0, 330.0, vec![job(any(5), 1, 100.0)]);
        assert_eq!(solved(&p).counts, vec![3]);
    }

    #[test]
    fn low_and_high_use_estimates_or_measurement() {
        // Estimates 80..120 W per node: 4 nodes, 1 idle at 10 W give
        // 330..490 W; the corridor 300-500 takes k = 4, not 5 (610 W high).
        let mut j = job(any(5), 1, 0.0);
        j.power = JobPower { min_per_node: 80.0, max_per_node: 120.0, measured_per_node: None };
        let p = problem(5, 10.0, 300.0, 500.0, vec![j]);
        let s = solved(&p);
        assert_eq!((s.counts.clone(), s.idle), (vec![4], 1));
        assert_eq!((s.low_draw, s.high_draw), (330.0, 490.0));
        // Measured at 100 W: 5 nodes draw 500 W, inside.
        let mut p = p;
        p.jobs[0].power.measured_per_node = Some(100.0);
        assert_eq!(solved(&p).counts, vec![5]);
    }

    #[test]
    fn infeasible_when_the_corridor_is_too_high_or_too_low() {
        // At most 4 x 100 W = 400 W.
        let p = problem(4, 10.0, 500.0, 600.0, vec![job(any(4), 1, 100.0)]);
        assert!(infeasible(&p));
        // At least 100 W + 3 x 10 W = 130 W.
        let p = problem(4, 10.0, 0.0, 129.0, vec![job(any(4), 1, 100.0)]);
        assert!(infeasible(&p));
        // Between: a gap no count hits (100 k + 10 (4 - k) = 40 + 90 k).
        let p = problem(4, 10.0, 231.0, 309.0, vec![job(any(4), 1, 100.0)]);
        assert!(infeasible(&p));
    }

    /// One malleable job `c` at 100 W with a 1-node fixed job at 100 W and
    /// idle nodes at 10 W: the draw is 90 k + 100 + 10 (N - 1) for k nodes.
    fn constrained(n: u32, c: NodeConstraint, high: Watts) -> LpSolution {
        let p = problem(n, 10.0, 0.0, high, vec![job(choose(1, n, c), 1, 100.0), job(LpNodes::Fixed(1), 1, 100.0)]);
        solved(&p)
    }

    #[test]
    fn constraints_are_encoded_exactly_where_the_interval_optimum_is_off_them() {
        // 90 k + 170 <= 700: k <= 5 on an interval; pof2 and even give 4.
        let s = constrained(8, NodeConstraint::PowerOfTwo, 700.0);
        assert_eq!((s.counts, s.idle), (vec![4, 1], 3));
        let s = constrained(8, NodeConstraint::Even, 700.0);
        assert_eq!((s.counts, s.idle), (vec![4, 1], 3));
        let s = constrained(8, NodeConstraint::None, 700.0);
        assert_eq!((s.counts, s.idle), (vec![5, 1], 2));
        // 90 k + 170 <= 610: k <= 4 on an interval; odd gives 3.
        let s = constrained(8, NodeConstraint::Odd, 610.0);
        assert_eq!((s.counts, s.idle), (vec![3, 1], 4));
        // 90 k + 190 <= 1000 on 10 nodes: k <= 9; ncube gives 8.
        let s = constrained(10, NodeConstraint::NCube, 1000.0);
        assert_eq!((s.counts, s.idle), (vec![8, 1], 1));
    }

    #[test]
    fn every_constraint_gives_only_valid_counts() {
        for &c in NodeConstraint::ALL {
            for high in (300..=1300).step_by(37) {
                let n = 12;
                let p = problem(
                    n,
                    10.0,
                    0.0,
                    f64::from(high),
                    vec![job(choose(1, n, c), 3, 100.0), job(choose(2, 9, c), 2, 60.0), job(any(n), 1, 150.0)],
                );
                if let Some(s) = solve(&p).unwrap() {
                    for (j, &k) in p.jobs.iter().zip(&s.counts) {
                        let LpNodes::Choose(spec) = j.nodes else { unreachable!() };
                        assert!(spec.allows(k), "{c}: {k} nodes for {spec:?}");
                    }
                    assert_eq!(s.counts.iter().sum::<u32>() + s.idle, n);
                }
            }
        }
    }

    #[test]
    fn a_spec_with_no_valid_count_is_infeasible() {
        let p = problem(8, 10.0, 0.0, 1e6, vec![job(choose(3, 3, NodeConstraint::Even), 0, 1.0)]);
        assert!(infeasible(&p));
        let p = problem(8, 10.0, 0.0, 1e6, vec![job(choose(9, 12, NodeConstraint::None), 0, 1.0)]);
        assert!(infeasible(&p));
        // Valid counts exist, but not within what the fixed job leaves.
        let p = problem(
            8,
            10.0,
            0.0,
            1e6,
            vec![job(choose(3, 8, NodeConstraint::PowerOfTwo), 4, 1.0), job(LpNodes::Fixed(5), 0, 1.0)],
        );
        assert!(infeasible(&p));
    }

    #[test]
    fn bad_fixed_counts_and_empty_problems_are_infeasible() {
        let one = |nodes| problem(4, 10.0, 0.0, 1e6, vec![job(nodes, 0, 100.0)]);
        assert!(infeasible(&one(LpNodes::Fixed(0))));
        assert!(infeasible(&one(LpNodes::Fixed(5))));
        assert!(solve(&one(LpNodes::Fixed(4))).unwrap().is_some());
        let two = problem(4, 10.0, 0.0, 1e6, vec![job(LpNodes::Fixed(3), 3, 1.0), job(LpNodes::Fixed(2), 0, 1.0)]);
        assert!(infeasible(&two));
        // No job: k_idle = N, but Equation 1 wants k_idle < N.
        assert!(infeasible(&problem(4, 10.0, 0.0, 1e6, vec![])));
        assert!(infeasible(&problem(0, 10.0, 0.0, 1e6, vec![job(any(4), 1, 1.0)])));
    }

    #[test]
    fn non_finite_power_is_an_error() {
        let mut p = problem(4, 10.0, 0.0, 1e6, vec![job(any(4), 1, 100.0)]);
        p.jobs[0].power.max_per_node = f64::NAN;
        assert!(solve(&p).unwrap_err().contains("not a finite"));
    }

    #[test]
    fn fixed_jobs_keep_their_count() {
        // Shrinking the 300 W waiting job would leave no idle node; it is
        // fixed, so the malleable job goes to 1 and 2 nodes idle.
        // 900 + 100 k + 10 (3 - k) <= 1100: k = 1.
        let p = problem(6, 10.0, 0.0, 1100.0, vec![job(any(6), 3, 100.0), job(LpNodes::Fixed(3), 0, 300.0)]);
        let s = solved(&p);
        assert_eq!((s.counts, s.idle), (vec![1, 3], 2));
        // All fixed: nothing to choose, the corridor is only checked.
        let p = problem(6, 10.0, 0.0, 1000.0, vec![job(LpNodes::Fixed(2), 2, 100.0), job(LpNodes::Fixed(3), 3, 200.0)]);
        let s = solved(&p);
        assert_eq!((s.counts, s.idle, s.high_draw), (vec![2, 3], 1, 810.0));
        let mut p = p;
        p.corridor.high = 800.0;
        assert!(infeasible(&p));
    }

    #[test]
    fn ties_go_to_the_current_counts() {
        // Any split of 6 nodes between two equal jobs has no idle node.
        for current in [(4, 2), (5, 1), (1, 5), (3, 3)] {
            let p = problem(6, 10.0, 0.0, 1e6, vec![job(any(6), current.0, 100.0), job(any(6), current.1, 100.0)]);
            assert_eq!(solved(&p).counts, vec![current.0, current.1]);
        }
        // From (2, 2) with 2 idle, filling the machine takes 2 moves, and
        // the tie-break does not keep an idle node to save them.
        let p = problem(6, 10.0, 0.0, 1e6, vec![job(any(6), 2, 100.0), job(any(6), 2, 100.0)]);
        let s = solved(&p);
        assert_eq!(s.idle, 0);
        assert_eq!(s.counts.iter().map(|&k| k.abs_diff(2)).sum::<u32>(), 2);
        // A waiting job fixed at 3: the running jobs give up 3 nodes
        // between them, as few moves as that takes (3), from the cheaper
        // of the two ways, with no idle node.
        let p = problem(
            8,
            10.0,
            0.0,
            1e6,
            vec![
                job(any(8), 5, 100.0),
                job(choose(1, 8, NodeConstraint::Even), 2, 100.0),
                job(LpNodes::Fixed(3), 0, 100.0),
            ],
        );
        let s = solved(&p);
        assert_eq!((s.counts, s.idle), (vec![3, 2, 3], 0));
    }

    #[test]
    fn the_papers_scenario_shape_is_solved_and_checked() {
        // 14 nodes, 71 W idle, corridor 1700-2500 (the paper's section VI-C),
        // 5 running jobs at 170 or 250 W and a waiting 3-node job.
        let jobs: Vec<LpJob> = [(3, 170.0), (3, 250.0), (2, 170.0), (3, 250.0), (3, 170.0)]
            .iter()
            .map(|&(c, w)| job(any(14), c, w))
            .chain([job(LpNodes::Fixed(3), 0, 170.0)])
            .collect();
        let mut p = problem(14, 71.0, 1700.0, 2500.0, jobs);
        let s = solved(&p);
        assert!(verify(&p, &s.counts, s.idle).is_ok());
        assert_eq!(s.counts[5], 3);
        // Brute force over the five running jobs' counts: the least idle.
        let mut best = u32::MAX;
        for code in 0..14u32.pow(5) {
            let counts: Vec<u32> = (0..5).map(|i| code / 14u32.pow(i) % 14 + 1).chain([3]).collect();
            let used: u32 = counts.iter().sum();
            if used < 14 && verify(&p, &counts, 14 - used).is_ok() {
                best = best.min(14 - used);
            }
        }
        assert_eq!(s.idle, best);
        // In the 1000-1700 corridor the waiting job cannot start: even with
        // every running job on 1 node, 1010 + 510 + 6 x 71 = 1946 W > 1700 W.
        p.corridor = Corridor { low: 1000.0, high: 1700.0 };
        assert!(infeasible(&p));
        // Without it (scenario 2), 1 node each and 9 idle: 1649 W.
        p.jobs.pop();
        let s = solved(&p);
        assert_eq!((s.counts, s.idle), (vec![1; 5], 9));
    }

    #[test]
    fn verify_names_the_row_that_fails() {
        let p = problem(4, 10.0, 0.0, 300.0, vec![job(choose(1, 4, NodeConstraint::Even), 2, 100.0)]);
        assert!(verify(&p, &[2], 2).is_ok());
        assert!(verify(&p, &[3], 1).unwrap_err().contains("forbids"));
        assert!(verify(&p, &[2], 1).unwrap_err().contains("add up to 3"));
        assert!(verify(&p, &[4], 0).unwrap_err().contains("above the corridor"));
        assert!(verify(&p, &[], 4).unwrap_err().contains("0 counts"));
    }

    /// The simulator may solve from several threads: the answers must not
    /// depend on it (with CBC, `singlethread-cbc` serialises the solves).
    #[test]
    fn concurrent_solves_agree() {
        let p = problem(
            12,
            10.0,
            0.0,
            900.0,
            vec![
                job(choose(1, 12, NodeConstraint::PowerOfTwo), 4, 100.0),
                job(choose(1, 12, NodeConstraint::Odd), 3, 60.0),
                job(any(12), 2, 150.0),
            ],
        );
        let want = solve(&p);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..4).map(|_| s.spawn(|| (0..25).map(|_| solve(&p)).collect::<Vec<_>>())).collect();
            for h in handles {
                for got in h.join().unwrap() {
                    assert_eq!(got, want);
                }
            }
        });
    }

    /// CBC writes to the process's stdout itself, past Rust's capture: run
    /// the scenario test in a child process and look at what it printed.
    #[cfg(feature = "cbc")]
    #[test]
    fn cbc_prints_nothing() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "strategies::power::lp::tests::the_papers_scenario_shape_is_solved_and_checked",
                "--nocapture",
                "--test-threads=1",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(text.contains("1 passed"), "{text}");
        for word in ["Cbc", "Clp", "Coin", "Welcome", "Objective"] {
            assert!(!text.contains(word), "CBC printed:\n{text}");
        }
    }
}
