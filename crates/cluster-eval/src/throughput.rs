//! How well a scheduler keeps a machine busy, from a run's logged job lives:
//! total time, mean wait, the share of node time jobs held, and the
//! hand-off, the time from a job's end to the start it allowed.

use crate::replay::RealRun;

/// A run's throughput figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Throughput {
    /// First submission to last end, seconds.
    pub total: f64,
    /// Mean of start minus submit, seconds.
    pub mean_wait: f64,
    /// Node-seconds held by jobs over the machine's node-seconds from the
    /// first start to the last end.
    pub used: f64,
    /// For each start that came after an end, the time since the latest end
    /// before it (and after its job's submission), seconds, sorted.
    pub handoffs: Vec<f64>,
}

/// One job's life, seconds since the epoch, and its node count.
#[derive(Clone, Copy, Debug)]
pub struct Life {
    pub submit: f64,
    pub start: f64,
    pub end: f64,
    pub nodes: usize,
}

impl Throughput {
    /// The figures of `jobs` (all started and ended) on `nodes` nodes.
    pub fn of(jobs: &[Life], nodes: usize) -> Option<Throughput> {
        let first_submit = jobs.iter().map(|j| j.submit).reduce(f64::min)?;
        let first_start = jobs.iter().map(|j| j.start).reduce(f64::min)?;
        let last_end = jobs.iter().map(|j| j.end).reduce(f64::max)?;
        let held: f64 = jobs.iter().map(|j| j.nodes as f64 * (j.end - j.start)).sum();
        let span = (last_end - first_start) * nodes as f64;
        let mut ends: Vec<f64> = jobs.iter().map(|j| j.end).collect();
        ends.sort_by(f64::total_cmp);
        let mut handoffs: Vec<f64> = jobs
            .iter()
            .filter_map(|j| {
                // The latest end at or before this start.
                let i = ends.partition_point(|e| *e <= j.start);
                let end = *ends.get(i.checked_sub(1)?)?;
                (end >= j.submit).then_some(j.start - end)
            })
            .collect();
        handoffs.sort_by(f64::total_cmp);
        Some(Throughput {
            total: last_end - first_submit,
            mean_wait: jobs.iter().map(|j| j.start - j.submit).sum::<f64>() / jobs.len() as f64,
            used: if span > 0.0 { held / span } else { 0.0 },
            handoffs,
        })
    }

    /// The figures of a replayed run; `None` if a job lacks a start or end.
    pub fn of_run(run: &RealRun) -> Option<Throughput> {
        let lives: Option<Vec<Life>> = run
            .jobs
            .iter()
            .map(|j| {
                Some(Life {
                    submit: j.logged.submit?,
                    start: j.logged.start?,
                    end: j.logged.end?,
                    nodes: j.logged.start_nodes.len(),
                })
            })
            .collect();
        Throughput::of(&lives?, run.nodes)
    }

    /// The hand-off at quantile `q` (0.5: the median), seconds.
    pub fn handoff(&self, q: f64) -> Option<f64> {
        quantile(&self.handoffs, q)
    }
}

/// The value at quantile `q` of sorted `v` (nearest rank).
pub fn quantile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    Some(v[((v.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life(submit: f64, start: f64, end: f64, nodes: usize) -> Life {
        Life { submit, start, end, nodes }
    }

    #[test]
    fn a_start_after_an_end_counts_its_handoff() {
        // Two nodes: A and B start at once, C waits for A, D for B.
        let jobs = [
            life(0.0, 0.0, 2.0, 1),
            life(0.0, 0.5, 3.0, 1),
            life(0.0, 2.25, 4.0, 1),
            life(0.0, 3.5, 5.0, 1),
            // E was submitted after the last end before its start: not a hand-off.
            life(4.5, 4.75, 5.0, 1),
        ];
        let t = Throughput::of(&jobs, 2).unwrap();
        assert_eq!(t.handoffs, vec![0.25, 0.5]);
        assert_eq!(t.handoff(0.5), Some(0.5));
        assert_eq!(t.total, 5.0);
        assert!((t.mean_wait - (0.5 + 2.25 + 3.5 + 0.25) / 5.0).abs() < 1e-9);
        // 2 + 2.5 + 1.75 + 1.5 + 0.25 node-seconds of 2 nodes for 5 s.
        assert!((t.used - 8.0 / 10.0).abs() < 1e-9, "{}", t.used);
        assert_eq!(Throughput::of(&[], 2), None);
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(3.0));
        assert_eq!(quantile(&[1.0, 2.0, 3.0], 0.9), Some(3.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
