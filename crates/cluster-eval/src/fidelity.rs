//! The simulator held against the real cluster: the same workload's figures
//! side by side, whether jobs started in the same order, and the targets
//! of the evaluation (same order for rigid EASY, makespan within 5% rigid and
//! 10% malleable, the malleable-over-EASY ratio within 0.05).

use malleable_sim::engine::JobRecord;
use malleable_sim::Summary;

/// Job ids in the order they started (ties by id, as one pass starts them).
pub fn start_order(jobs: &[JobRecord]) -> Vec<u32> {
    let mut v: Vec<&JobRecord> = jobs.iter().filter(|j| j.start.is_finite()).collect();
    v.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.id.cmp(&b.id)));
    v.into_iter().map(|j| j.id).collect()
}

/// Where two start orders first differ: (position, real's job, simulated job).
pub fn first_difference(real: &[u32], sim: &[u32]) -> Option<(usize, Option<u32>, Option<u32>)> {
    let n = real.len().max(sim.len());
    (0..n).find(|&i| real.get(i) != sim.get(i)).map(|i| (i, real.get(i).copied(), sim.get(i).copied()))
}

/// Why two start orders part, when it is the usual cause: the jobs whose
/// ends freed the nodes for the first differing start (the latest ends at
/// or before it, in the simulation) ended at one instant in the simulator
/// and apart on the real cluster, so the real scheduler saw their nodes come
/// back one at a time and could decide otherwise. ESP's job types share run
/// times, so such simulated ties are common. (jobs, simulated instant, real
/// spread in seconds), or `None` when no tie came just before.
pub fn tie_before(real: &[JobRecord], sim: &[JobRecord], sim_job: u32) -> Option<(Vec<u32>, f64, f64)> {
    let start = sim.iter().find(|j| j.id == sim_job)?.start;
    let last_end = sim.iter().map(|j| j.end).filter(|&e| e <= start).max_by(f64::total_cmp)?;
    let mut tied: Vec<u32> = sim.iter().filter(|j| j.end == last_end).map(|j| j.id).collect();
    if tied.len() < 2 {
        return None;
    }
    tied.sort_unstable();
    let ends: Vec<f64> = real.iter().filter(|j| tied.contains(&j.id)).map(|j| j.end).collect();
    let spread = ends.iter().copied().fold(f64::MIN, f64::max) - ends.iter().copied().fold(f64::MAX, f64::min);
    Some((tied, last_end, spread))
}

/// One strategy run both ways.
#[derive(Clone, Debug)]
pub struct Pair {
    pub strategy: String,
    pub malleable: bool,
    pub real: Summary,
    pub sim: Summary,
    pub real_jobs: Vec<JobRecord>,
    pub sim_jobs: Vec<JobRecord>,
}

impl Pair {
    /// |real - sim| / sim of the makespan.
    pub fn makespan_error(&self) -> f64 {
        (self.real.makespan_s - self.sim.makespan_s).abs() / self.sim.makespan_s.max(1e-9)
    }

    /// The makespan target: 5% for rigid runs, 10% when jobs resize.
    pub fn makespan_target(&self) -> f64 {
        if self.malleable {
            0.10
        } else {
            0.05
        }
    }

    pub fn order_difference(&self) -> Option<(usize, Option<u32>, Option<u32>)> {
        first_difference(&start_order(&self.real_jobs), &start_order(&self.sim_jobs))
    }
}

/// The table: per strategy, real and simulated side by side, and what
/// missed its target (empty when all met).
pub fn report(pairs: &[Pair], baseline: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut missed = Vec::new();
    out.push_str(&format!(
        "{:<16} {:>21} {:>21} {:>21} {:>17} {:>13}\n",
        "strategy", "makespan s real/sim", "mean wait real/sim", "response real/sim", "util % real/sim", "resizes r/s"
    ));
    for p in pairs {
        let (r, s) = (&p.real, &p.sim);
        out.push_str(&format!(
            "{:<16} {:>9.1} /{:>9.1}  {:>9.1} /{:>9.1}  {:>9.1} /{:>9.1}  {:>7.1} /{:>7.1}  {:>5} /{:>5}\n",
            p.strategy,
            r.makespan_s,
            s.makespan_s,
            r.mean_wait_s,
            s.mean_wait_s,
            r.mean_response_s,
            s.mean_response_s,
            100.0 * r.utilization,
            100.0 * s.utilization,
            r.expands + r.shrinks,
            s.expands + s.shrinks
        ));
        let err = p.makespan_error();
        let verdict = if err <= p.makespan_target() { "met" } else { "MISSED" };
        out.push_str(&format!(
            "{:<16} makespan off by {:.1}% (target {:.0}%: {verdict})",
            "",
            100.0 * err,
            100.0 * p.makespan_target()
        ));
        if err > p.makespan_target() {
            missed.push(format!("{}: makespan off by {:.1}%", p.strategy, 100.0 * err));
        }
        if p.strategy == baseline && !p.malleable {
            match p.order_difference() {
                None => out.push_str(&format!("; start order identical ({} jobs)", p.real_jobs.len())),
                Some((i, a, b)) => {
                    let says = |x: Option<u32>| x.map_or("none".to_string(), |v| v.to_string());
                    out.push_str(&format!(
                        "; start order DIFFERS at start {}: real job {}, simulated job {}",
                        i + 1,
                        says(a),
                        says(b)
                    ));
                    if let Some((tied, at, spread)) = b.and_then(|b| tie_before(&p.real_jobs, &p.sim_jobs, b)) {
                        let ids: Vec<String> = tied.iter().map(u32::to_string).collect();
                        out.push_str(&format!(
                            " (jobs {} ended together at {at:.3} s in the simulator, {spread:.3} s apart on the cluster)",
                            ids.join(", ")
                        ));
                    }
                    missed.push(format!("{}: start order differs at start {}", p.strategy, i + 1));
                }
            }
        }
        out.push('\n');
    }
    let base = pairs.iter().find(|p| p.strategy == baseline);
    for p in pairs.iter().filter(|p| p.strategy != baseline) {
        let Some(b) = base else { break };
        let ratio = |x: &Summary, y: &Summary| x.makespan_s / y.makespan_s.max(1e-9);
        let (rr, sr) = (ratio(&p.real, &b.real), ratio(&p.sim, &b.sim));
        let ok = (rr - sr).abs() <= 0.05;
        out.push_str(&format!(
            "makespan {}/{baseline}: real {rr:.3}, simulated {sr:.3} (within 0.05: {})\n",
            p.strategy,
            if ok { "met" } else { "MISSED" }
        ));
        if !ok {
            missed.push(format!("{}/{baseline} makespan ratio off by {:.3}", p.strategy, (rr - sr).abs()));
        }
    }
    (out, missed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: u32, start: f64, end: f64) -> JobRecord {
        JobRecord {
            id,
            submit: 0.0,
            start,
            end,
            start_nodes: 1,
            final_nodes: 1,
            malleable: false,
            expands: 0,
            shrinks: 0,
            class: None,
            alone_run: None,
            packing: None,
        }
    }

    fn summary(strategy: &str, makespan: f64) -> Summary {
        Summary { strategy: strategy.into(), makespan_s: makespan, ..Summary::default() }
    }

    #[test]
    fn start_orders_compare_with_ties_broken_by_id() {
        let real = [rec(1, 0.0, 5.0), rec(3, 0.2, 4.0), rec(2, 0.2, 9.0), rec(4, f64::NAN, f64::NAN)];
        assert_eq!(start_order(&real), [1, 2, 3]);
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 3, 2], &[1, 2, 3]), Some((1, Some(3), Some(2))));
        assert_eq!(first_difference(&[1, 2], &[1, 2, 3]), Some((2, None, Some(3))));
    }

    #[test]
    fn a_simulated_tie_the_cluster_broke_is_named() {
        // Jobs 1 and 2 end together at 10 s in the simulator, and job 3
        // starts on their nodes; on the cluster they ended 0.2 s apart.
        let sim = [rec(1, 0.0, 10.0), rec(2, 0.0, 10.0), rec(3, 10.0, 20.0), rec(4, 0.0, 4.0)];
        let real = [rec(1, 0.0, 10.1), rec(2, 0.0, 10.3), rec(3, 10.3, 20.3), rec(4, 0.0, 4.0)];
        let (tied, at, spread) = tie_before(&real, &sim, 3).unwrap();
        assert_eq!((tied, at), (vec![1, 2], 10.0));
        assert!((spread - 0.2).abs() < 1e-9);
        // Without the tie nothing is said, nor for a job the run lacks.
        let untied = [rec(1, 0.0, 9.0), rec(2, 0.0, 10.0), rec(3, 10.0, 20.0)];
        assert_eq!(tie_before(&real, &untied, 3), None);
        assert_eq!(tie_before(&real, &sim, 9), None);
    }

    #[test]
    fn the_report_says_which_target_was_missed() {
        let jobs = vec![rec(1, 0.0, 10.0), rec(2, 1.0, 10.0)];
        let swapped = vec![rec(1, 1.0, 10.0), rec(2, 0.0, 10.0)];
        let easy = Pair {
            strategy: "easy".into(),
            malleable: false,
            real: summary("easy", 104.0),
            sim: summary("easy", 100.0),
            real_jobs: jobs.clone(),
            sim_jobs: swapped,
        };
        let mtct = Pair {
            strategy: "mtct-backfill".into(),
            malleable: true,
            real: summary("mtct-backfill", 90.0),
            sim: summary("mtct-backfill", 78.0),
            real_jobs: jobs.clone(),
            sim_jobs: jobs,
        };
        let (text, missed) = report(&[easy, mtct], "easy");
        assert!(text.contains("makespan off by 4.0% (target 5%: met)"), "{text}");
        assert!(text.contains("start order DIFFERS at start 1: real job 1, simulated job 2"), "{text}");
        // 90/104 = 0.865 against 78/100 = 0.780.
        assert!(
            text.contains("makespan mtct-backfill/easy: real 0.865, simulated 0.780 (within 0.05: MISSED)"),
            "{text}"
        );
        assert_eq!(
            missed,
            [
                "easy: start order differs at start 1",
                "mtct-backfill: makespan off by 15.4%",
                "mtct-backfill/easy makespan ratio off by 0.085"
            ]
        );
    }
}
