//! What every integer program of the strategies shares, so a second one
//! (IPSCHED's) does not copy it: the backend (CBC, or the pure-Rust microlp),
//! the solver kept silent (these run inside slurmctld, where anything printed
//! lands nowhere useful), the settings measured for each kind of program, an
//! integer objective minimised through an integer bound `z`, the search's
//! limits (a node limit that stops it at the same point on every machine, and
//! seconds), a known solution to start from, the statuses mapped to optimal /
//! infeasible / stopped (with the best solution found by then), and solver
//! values rounded to integers only when they are near one. Each program
//! checks its rounded answer against its own rows in plain Rust before using
//! it (see `strategies/power/lp.rs`).

use good_lp::{variable, Constraint, Expression, ProblemVariables, SolverModel, Variable};
#[cfg(all(feature = "microlp", not(feature = "cbc")))]
use good_lp::{ResolutionError, Solution, SolutionStatus};

#[cfg(not(any(feature = "cbc", feature = "microlp")))]
compile_error!(
    "malleable-core needs an LP backend for its integer programs: enable feature `cbc` (the default; \
     needs Debian's coinor-libcbc-dev) or feature `microlp` (pure Rust), e.g. \
     `--no-default-features --features microlp`"
);

/// How far from an integer a solver's value of an integer variable may be
/// before we call the solve failed rather than round it.
const INTEGER_TOLERANCE: f64 = 1e-4;

/// Which backend this build uses ("coin_cbc" or "microlp"), for logs and
/// benchmarks. With both features on, CBC is used.
pub fn backend() -> &'static str {
    if cfg!(feature = "cbc") {
        "coin_cbc"
    } else {
        "microlp"
    }
}

/// How a solve ended.
pub enum Outcome<T> {
    /// Proven optimal; what `read` made of the values.
    Optimal(T),
    Infeasible,
    /// A limit of [`Search`] stopped the branch and bound first (CBC only):
    /// what `read` made of the best solution found by then, or `None` when
    /// there was none (CBC then hands back a relaxation's values, which
    /// `read` refuses as not integral, or the program's own check refuses).
    Stopped(Option<T>),
}

/// How far a search may go, and where it may start.
#[derive(Clone, Debug, Default)]
pub struct Search {
    /// Branch-and-bound nodes at most: the same stop on every machine.
    pub node_limit: Option<u32>,
    /// Wall-clock seconds at most (whole seconds, rounded up, as CBC takes
    /// them): where it stops depends on the machine and its load.
    pub seconds: Option<f64>,
    /// Values of a solution known to keep every row; CBC starts from it as
    /// its first incumbent. Variables left out are 0.
    pub start: Vec<(Variable, f64)>,
}

/// Minimise `objective`, which must take an integer value at every integer
/// point of the model, over `vars` subject to `constraints` (added in their
/// order, after the objective's row), and hand the optimum's values to
/// `read`. `node_limit` bounds CBC's branch and bound (microlp has none and
/// always runs to the end). `program` names the program in error messages.
pub fn minimise_integral<T>(
    program: &str,
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
    node_limit: Option<u32>,
    read: impl FnOnce(&dyn Fn(Variable) -> f64) -> Result<T, String>,
) -> Result<Outcome<T>, String> {
    let search = Search { node_limit, ..Search::default() };
    solve(program, vars, Goal::MinimiseIntegral(objective), constraints, search, read)
}

/// Maximise `objective` (any real coefficients) over `vars` subject to
/// `constraints`, within `search`, as [`minimise_integral`] otherwise; the
/// search ends once no solution can beat the best found by more than `gap`
/// (an absolute amount of the objective): below it, differences the program
/// does not care about need no proof.
pub fn maximise<T>(
    program: &str,
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
    search: Search,
    gap: f64,
    read: impl FnOnce(&dyn Fn(Variable) -> f64) -> Result<T, String>,
) -> Result<Outcome<T>, String> {
    solve(program, vars, Goal::Maximise(objective, gap), constraints, search, read)
}

/// What a solve is after.
enum Goal {
    MinimiseIntegral(Expression),
    /// With the absolute gap that ends the search.
    Maximise(Expression, f64),
}

fn solve<T>(
    program: &str,
    mut vars: ProblemVariables,
    goal: Goal,
    constraints: Vec<Constraint>,
    search: Search,
    read: impl FnOnce(&dyn Fn(Variable) -> f64) -> Result<T, String>,
) -> Result<Outcome<T>, String> {
    // Minimise an integer z >= objective rather than the objective itself.
    // microlp prunes a node only when its bound reaches the incumbent, not
    // when it is within 1 of it with an integral objective; on problems with
    // many equally good configurations that left it proving 99.5 < 100 over
    // thousands of nodes (44 s for bench_lp's 64 jobs on 200 nodes); with z
    // it branches z up to the integer bound at once (1 ms). CBC infers the
    // objective's integrality itself, but was faster with z too (random
    // 64-job problems: median 6 ms, 90th percentile 27 ms, against 7 ms and
    // 156 ms without).
    let z = matches!(goal, Goal::MinimiseIntegral(_)).then(|| vars.add(variable().integer().min(0)));
    // Each variable's column: good_lp adds one column per variable, in the
    // order they were added, and keeps a variable's index private.
    #[cfg(feature = "cbc")]
    let columns: std::collections::HashMap<Variable, usize> =
        vars.iter_variables_with_def().enumerate().map(|(i, (v, _))| (v, i)).collect();
    let (problem, z_row, gap) = match goal {
        Goal::MinimiseIntegral(objective) => {
            let z = z.expect("added above");
            (vars.minimise(z), Some((Expression::from(z) - objective).geq(0.0)), None)
        }
        Goal::Maximise(objective, gap) => (vars.maximise(objective), None, Some(gap)),
    };
    #[cfg(feature = "cbc")]
    let mut model = {
        use good_lp::WithInitialSolution;
        let mut m = problem.using(good_lp::solvers::coin_cbc::coin_cbc);
        // Silence CBC (and the Clp it drives): we run inside slurmctld.
        m.set_log_level(0);
        m.set_parameter("slogLevel", "0");
        // CBC's preprocessing costs more than it saves on both programs:
        // their models are small or their rows already tight, and they are
        // solved afresh at every pass. On IPSCHED's programs (with its cover
        // rows and start, strategies/ipsched) it took 9 passes to strengthen
        // the same 29 rows, 0.3 s of a 0.3 s solve; without it the ragged
        // CPU-GPU ESP's slowest solve went from 0.66 s to 0.1-0.4 s. Its
        // primal heuristics stay on there (the feasibility pump finds the
        // rounding of the relaxation the bound proves optimal); the power
        // LP's bound is close, and there they cost more than the branching
        // they save: measured on bench_lp's problems and 100 random ones of
        // each size, the 14-node scenario's median solve drops from about
        // 2.5 ms to 1.3 ms, and 64 jobs on 200 nodes from about 12 ms to
        // 6 ms. (Turning cuts off too saves another 0.5 ms at 14 nodes, but
        // at 64 jobs the median goes to 10 ms and the 90th percentile to
        // 300 ms.)
        m.set_parameter("preprocess", "off");
        if gap.is_none() {
            m.set_parameter("heuristicsOnOff", "off");
        } else {
            // At most 20 rounds of cuts at the root (CBC's default is up
            // to 100, and again after a restart): past them IPSCHED's
            // weighted knapsacks gain little bound and lose much time. Its
            // 17 ragged CPU-GPU ESP programs slowest to solve went from at
            // most 6.3 s to 1.7 s, each to the same optimum.
            m.set_parameter("passCuts", "20");
        }
        if let Some(limit) = search.node_limit {
            m.set_parameter("maxNodes", &limit.to_string());
        }
        if let Some(seconds) = search.seconds {
            // Wall-clock time, not CBC's default CPU time: a pass waits for
            // the wall clock, and CPU time runs slow when the machine is shared.
            m.set_parameter("timeMode", "elapsed");
            m.set_parameter("sec", &seconds.ceil().max(0.0).to_string());
        }
        if let Some(gap) = gap {
            m.set_parameter("allowableGap", &gap.to_string());
        }
        if !search.start.is_empty() {
            m = m.with_initial_solution(search.start.iter().copied());
        }
        m
    };
    #[cfg(all(feature = "microlp", not(feature = "cbc")))]
    let mut model = {
        // microlp has no gap setting nor limits: it proves the optimum outright.
        let _ = (gap, &search);
        problem.using(good_lp::solvers::microlp::microlp)
    };
    if let Some(row) = z_row {
        model.add_constraint(row);
    }
    for c in constraints {
        model.add_constraint(c);
    }
    #[cfg(feature = "cbc")]
    return cbc_solve(program, &model, &columns, search.node_limit.is_some() || search.seconds.is_some(), read);
    #[cfg(all(feature = "microlp", not(feature = "cbc")))]
    {
        let sol = match model.solve() {
            Ok(sol) => sol,
            Err(ResolutionError::Infeasible) => return Ok(Outcome::Infeasible),
            Err(e) => return Err(format!("{program}: the {} solver failed: {e}", backend())),
        };
        match sol.status() {
            SolutionStatus::Optimal | SolutionStatus::GapLimit => {}
            other => {
                return Err(format!(
                    "{program}: the {} solver stopped without proving optimality ({other:?})",
                    backend()
                ))
            }
        }
        read(&|v| sol.value(v)).map(Outcome::Optimal)
    }
}

/// Solve `model` with CBC through coin_cbc itself rather than good_lp's
/// `solve()`, which answers a node limit with an error and drops the best
/// solution found: here it is kept ([`Outcome::Stopped`]). The statuses map
/// as good_lp maps them otherwise. `columns`: each variable's column.
/// `limited`: whether a limit was set (a stop without one is an error).
#[cfg(feature = "cbc")]
fn cbc_solve<T>(
    program: &str,
    model: &good_lp::solvers::coin_cbc::CoinCbcProblem,
    columns: &std::collections::HashMap<Variable, usize>,
    limited: bool,
    read: impl FnOnce(&dyn Fn(Variable) -> f64) -> Result<T, String>,
) -> Result<Outcome<T>, String> {
    use coin_cbc::raw::Status;
    let solution = model.as_inner().solve();
    let raw = solution.raw();
    let values = raw.col_solution();
    let value = |v: Variable| columns.get(&v).and_then(|&i| values.get(i)).copied().unwrap_or(f64::NAN);
    match raw.status() {
        Status::Finished | Status::Unlaunched => {
            if raw.is_proven_infeasible() {
                Ok(Outcome::Infeasible)
            } else if raw.is_continuous_unbounded() {
                Err(format!("{program}: the {} solver found the program unbounded", backend()))
            } else {
                read(&value).map(Outcome::Optimal)
            }
        }
        Status::Stopped if limited => Ok(Outcome::Stopped(read(&value).ok())),
        other => Err(format!("{program}: the {} solver stopped without proving optimality ({other:?})", backend())),
    }
}

/// Round a solver value that must be integral, or say it is not.
pub fn integral(program: &str, x: f64, what: &str) -> Result<i64, String> {
    let r = x.round();
    if !x.is_finite() || (x - r).abs() > INTEGER_TOLERANCE {
        return Err(format!("{program}: the {} solver returned {x} for {what}, which should be an integer", backend()));
    }
    Ok(r as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_is_the_one_built() {
        let want = if cfg!(feature = "cbc") { "coin_cbc" } else { "microlp" };
        assert_eq!(backend(), want);
    }

    #[test]
    fn near_integers_round_and_others_are_errors() {
        assert_eq!(integral("t", 3.00001, "x"), Ok(3));
        assert_eq!(integral("t", -1.99999, "x"), Ok(-2));
        let e = integral("t", 2.5, "job 1's count").unwrap_err();
        assert!(
            e.starts_with("t: the ") && e.ends_with("returned 2.5 for job 1's count, which should be an integer"),
            "{e}"
        );
        assert!(integral("t", f64::NAN, "x").is_err());
    }

    /// A knapsack in miniature: minimise 3a + 2b with a + b >= 3, a <= 1,
    /// integers: a = 0, b = 3 (6) beats a = 1, b = 2 (7).
    #[test]
    fn an_integer_program_is_solved_and_read() {
        let mut vars = ProblemVariables::new();
        let a = vars.add(variable().integer().min(0).max(1));
        let b = vars.add(variable().integer().min(0).max(10));
        let objective = Expression::from(a) * 3.0 + Expression::from(b) * 2.0;
        let rows = vec![(Expression::from(a) + b).geq(3.0)];
        let got = minimise_integral("t", vars, objective, rows, None, |value| {
            Ok((integral("t", value(a), "a")?, integral("t", value(b), "b")?))
        });
        assert!(matches!(got, Ok(Outcome::Optimal((0, 3)))));

        let mut vars = ProblemVariables::new();
        let a = vars.add(variable().integer().min(0).max(1));
        let rows = vec![Expression::from(a).geq(2.0)];
        let got = minimise_integral("t", vars, Expression::from(a), rows, None, |_| Ok(()));
        assert!(matches!(got, Ok(Outcome::Infeasible)));
    }
}

#[cfg(all(test, feature = "cbc"))]
mod stop_tests {
    use super::*;

    /// A search stopped by its node limit keeps the best solution found (at
    /// least the start it was given), where good_lp's solve() returned an
    /// error. The program: choose among 30 items of sizes 2 * (10..40)
    /// under an odd capacity, 301, each worth its size plus a hair: no
    /// subset fills it exactly, the relaxation does (value 301), and proving
    /// 300 the best takes more than one node.
    #[test]
    fn a_stopped_search_keeps_its_best_solution() {
        let mut vars = ProblemVariables::new();
        let items: Vec<(Variable, f64)> =
            (0..30).map(|i| (vars.add(variable().binary()), f64::from(2 * (10 + i)))).collect();
        let objective: Expression = items.iter().map(|&(x, a)| (a + 1e-3) * x).sum();
        let rows = vec![items.iter().map(|&(x, a)| a * x).sum::<Expression>().leq(301.0)];
        // Start: items 0..5 (sizes 20..28: 120).
        let start: Vec<(Variable, f64)> = items[..5].iter().map(|&(x, _)| (x, 1.0)).collect();
        let search = Search { node_limit: Some(1), seconds: None, start };
        let read = |value: &dyn Fn(Variable) -> f64| -> Result<f64, String> {
            let mut size = 0.0;
            for &(x, a) in &items {
                size += a * integral("t", value(x), "x")? as f64;
            }
            Ok(size)
        };
        match maximise("t", vars, objective, rows, search, 1e-6, read).unwrap() {
            Outcome::Stopped(Some(size)) => assert!((120.0..=300.0).contains(&size), "{size}"),
            Outcome::Optimal(size) => panic!("proved at the root ({size}): the test needs a harder program"),
            _ => panic!("no solution kept"),
        }
    }
}
