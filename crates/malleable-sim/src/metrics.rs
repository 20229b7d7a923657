//! The metrics of a run (seed 002, section VI-B, plus slowdowns): makespan,
//! mean wait, response, slowdown and bounded slowdown, utilization, number of
//! expands and shrinks; and the per-job CSV.

use serde::Serialize;

use crate::engine::SimResult;

/// Bounded slowdown's threshold (s): short jobs do not dominate the mean.
pub const BOUNDED_SLOWDOWN_TAU: f64 = 10.0;

/// One strategy's row in `compare`'s JSON (the field names).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub strategy: String,
    pub jobs: usize,
    pub makespan_s: f64,
    pub mean_wait_s: f64,
    pub mean_response_s: f64,
    pub mean_slowdown: f64,
    pub mean_bounded_slowdown: f64,
    pub utilization: f64,
    pub expands: u64,
    pub shrinks: u64,
    /// Power-corridor figures (seed 002, Table II), `null` for workloads
    /// without a corridor: breaks the scheduler's next pass did not repair,
    pub power_violations: Option<u64>,
    /// all breaks, repaired or not,
    pub corridor_breaks: Option<u64>,
    pub seconds_outside_corridor: Option<f64>,
    pub energy_j: Option<f64>,
    /// and the LP's solve times, `null` for strategies without one.
    pub lp_median_ms: Option<f64>,
    pub lp_max_ms: Option<f64>,
    pub lp_solves: Option<u64>,
    /// Waiting-job combinations the LP was given, over the run.
    pub lp_combinations_tried: Option<u64>,
}

pub fn summarize(strategy: &str, r: &SimResult) -> Summary {
    let n = r.jobs.len().max(1) as f64;
    let first_submit = r.jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min);
    let last_end = r.jobs.iter().map(|j| j.end).fold(f64::NEG_INFINITY, f64::max);
    let makespan = if r.jobs.is_empty() { 0.0 } else { last_end - first_submit };
    let mean = |f: &dyn Fn(&crate::engine::JobRecord) -> f64| r.jobs.iter().map(f).sum::<f64>() / n;
    Summary {
        strategy: strategy.to_string(),
        jobs: r.jobs.len(),
        makespan_s: makespan,
        mean_wait_s: mean(&|j| j.start - j.submit),
        mean_response_s: mean(&|j| j.end - j.submit),
        mean_slowdown: mean(&|j| {
            let run = j.end - j.start;
            if run > 0.0 {
                (j.end - j.submit) / run
            } else {
                1.0
            }
        }),
        mean_bounded_slowdown: mean(&|j| ((j.end - j.submit) / (j.end - j.start).max(BOUNDED_SLOWDOWN_TAU)).max(1.0)),
        utilization: if makespan > 0.0 { r.node_seconds / (r.nodes as f64 * makespan) } else { 0.0 },
        expands: r.jobs.iter().map(|j| u64::from(j.expands)).sum(),
        shrinks: r.jobs.iter().map(|j| u64::from(j.shrinks)).sum(),
        power_violations: r.power.as_ref().map(|p| p.violations),
        corridor_breaks: r.power.as_ref().map(|p| p.breaks),
        seconds_outside_corridor: r.power.as_ref().map(|p| p.seconds_outside),
        energy_j: r.power.as_ref().map(|p| p.energy_j),
        lp_median_ms: r.lp.as_ref().map(|l| median(&l.solve_ms)),
        lp_max_ms: r.lp.as_ref().map(|l| l.solve_ms.iter().copied().fold(0.0, f64::max)),
        lp_solves: r.lp.as_ref().map(|l| l.solves),
        lp_combinations_tried: r.lp.as_ref().map(|l| l.combinations_tried),
    }
}

/// The median (mean of the middle two for an even count); 0 when empty.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One line per job.
pub fn jobs_csv(r: &SimResult) -> String {
    let mut out = String::from("id,submit,start,end,wait,response,start_nodes,final_nodes,malleable,expands,shrinks\n");
    let mut jobs: Vec<_> = r.jobs.iter().collect();
    jobs.sort_by_key(|j| j.id);
    for j in jobs {
        out += &format!(
            "{},{:.3},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{}\n",
            j.id,
            j.submit,
            j.start,
            j.end,
            j.start - j.submit,
            j.end - j.submit,
            j.start_nodes,
            j.final_nodes,
            j.malleable,
            j.expands,
            j.shrinks
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::JobRecord;

    fn rec(id: u32, submit: f64, start: f64, end: f64) -> JobRecord {
        JobRecord { id, submit, start, end, start_nodes: 1, final_nodes: 1, malleable: false, expands: 0, shrinks: 1 }
    }

    #[test]
    fn metrics_by_hand() {
        // Two 1-node jobs on 2 nodes: (0, 0, 100) and (10, 100, 105).
        let r = SimResult {
            nodes: 2,
            jobs: vec![rec(1, 0.0, 0.0, 100.0), rec(2, 10.0, 100.0, 105.0)],
            node_seconds: 105.0,
            passes: 0,
            power: None,
            lp: None,
        };
        let s = summarize("x", &r);
        assert_eq!(s.makespan_s, 105.0);
        assert_eq!(s.mean_wait_s, 45.0);
        assert_eq!(s.mean_response_s, 97.5);
        assert_eq!(s.mean_slowdown, (1.0 + 19.0) / 2.0);
        assert_eq!(s.mean_bounded_slowdown, (1.0 + 9.5) / 2.0);
        assert_eq!(s.utilization, 0.5);
        assert_eq!(s.shrinks, 2);
        assert_eq!(s.power_violations, None);
        assert_eq!(s.lp_median_ms, None);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
