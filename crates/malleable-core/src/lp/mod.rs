//! What every integer program of the strategies shares, so a second one
//! (IPSCHED's) does not copy it: the backend (CBC, or the pure-Rust microlp),
//! the solver kept silent (these run inside slurmctld, where anything printed
//! lands nowhere useful), the settings measured for small models, an integer
//! objective minimised through an integer bound `z`, a node limit that stops
//! the search at the same point on every machine, the statuses mapped to
//! optimal / infeasible / stopped, and solver values rounded to integers only
//! when they are near one. Each program checks its rounded answer against its
//! own rows in plain Rust before using it (see `strategies/power/lp.rs`).

use good_lp::{
    variable, Constraint, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus, SolverModel,
    Variable,
};

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
    /// The branch and bound reached its node limit first (CBC only).
    NodeLimit,
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
    solve(program, vars, Goal::MinimiseIntegral(objective), constraints, node_limit, read)
}

/// Maximise `objective` (any real coefficients) over `vars` subject to
/// `constraints`, as [`minimise_integral`] otherwise; the search stops once
/// no solution can beat the best found by more than `gap` (an absolute
/// amount of the objective): below it, differences the program does not
/// care about need no proof.
pub fn maximise<T>(
    program: &str,
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
    node_limit: Option<u32>,
    gap: f64,
    read: impl FnOnce(&dyn Fn(Variable) -> f64) -> Result<T, String>,
) -> Result<Outcome<T>, String> {
    solve(program, vars, Goal::Maximise(objective, gap), constraints, node_limit, read)
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
    node_limit: Option<u32>,
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
    let (problem, z_row, gap) = match goal {
        Goal::MinimiseIntegral(objective) => {
            let z = vars.add(variable().integer().min(0));
            (vars.minimise(z), Some((Expression::from(z) - objective).geq(0.0)), None)
        }
        Goal::Maximise(objective, gap) => (vars.maximise(objective), None, Some(gap)),
    };
    #[cfg(feature = "cbc")]
    let mut model = {
        let mut m = problem.using(good_lp::solvers::coin_cbc::coin_cbc);
        // Silence CBC (and the Clp it drives): we run inside slurmctld.
        m.set_log_level(0);
        m.set_parameter("slogLevel", "0");
        // The power LP's models are small and their LP bound is close:
        // CBC's preprocessing and primal heuristics (the feasibility pump
        // above all) cost more than the branching they save. Measured on
        // bench_lp's problems and 100 random ones of each size: the 14-node
        // scenario's median solve drops from about 2.5 ms to 1.3 ms, and
        // 64 jobs on 200 nodes from about 12 ms to 6 ms. (Turning cuts off
        // too saves another 0.5 ms at 14 nodes, but at 64 jobs the median
        // goes to 10 ms and the 90th percentile to 300 ms.) IPSCHED's
        // knapsacks over windows of near-equal jobs are the other way round:
        // without them 200 jobs on 300 free nodes hit 20,000 nodes (3 s),
        // with them 11 ms.
        if gap.is_none() {
            m.set_parameter("preprocess", "off");
            m.set_parameter("heuristicsOnOff", "off");
        }
        if let Some(limit) = node_limit {
            m.set_parameter("maxNodes", &limit.to_string());
        }
        if let Some(gap) = gap {
            m.set_parameter("allowableGap", &gap.to_string());
        }
        m
    };
    #[cfg(all(feature = "microlp", not(feature = "cbc")))]
    let mut model = {
        // microlp has no gap setting: it proves the optimum outright.
        let _ = gap;
        problem.using(good_lp::solvers::microlp::microlp)
    };
    if let Some(row) = z_row {
        model.add_constraint(row);
    }
    for c in constraints {
        model.add_constraint(c);
    }

    let sol = match model.solve() {
        Ok(sol) => sol,
        Err(ResolutionError::Infeasible) => return Ok(Outcome::Infeasible),
        // good_lp's word for CBC stopping on its node limit.
        Err(ResolutionError::Other("Stopped")) if node_limit.is_some() => return Ok(Outcome::NodeLimit),
        Err(e) => return Err(format!("{program}: the {} solver failed: {e}", backend())),
    };
    match sol.status() {
        SolutionStatus::Optimal | SolutionStatus::GapLimit => {}
        other => {
            return Err(format!("{program}: the {} solver stopped without proving optimality ({other:?})", backend()))
        }
    }
    read(&|v| sol.value(v)).map(Outcome::Optimal)
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
