//! Chadha et al. 2020's Fig. 3 as a sweep: every strategy at every fraction of malleable
//! jobs (0.1 .. 1.0) and several seeds, one CSV row per simulation, and the
//! means over seeds that the plots show.

use malleable_core::StrategyChoice;

use crate::engine::{simulate, SimOptions};
use crate::report::metrics::{summarize, Summary};
use crate::workloads::Workload;

/// Fig. 3's x axis: 0.1, 0.2, .., 1.0 (computed as i/10, so no drift).
pub fn paper_fractions() -> Vec<f64> {
    (1..=10).map(|i| f64::from(i) / 10.0).collect()
}

/// `--seeds`: a list `1,2,7`, an inclusive range `1..5` (or `1..=5`), or a
/// mix `1..3,9`. The error names the argument and the forms allowed.
pub fn parse_seeds(v: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("--seeds '{v}' not allowed: a list like 1,2,3 or an inclusive range like 1..5");
    let mut seeds = Vec::new();
    for part in v.split(',').map(str::trim) {
        if let Some((a, b)) = part.split_once("..") {
            let b = b.strip_prefix('=').unwrap_or(b);
            let (a, b) = (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?);
            if a > b {
                return Err(bad());
            }
            seeds.extend(a..=b);
        } else {
            seeds.push(part.parse::<u64>().map_err(|_| bad())?);
        }
    }
    if seeds.is_empty() {
        return Err(bad());
    }
    Ok(seeds)
}

/// One simulation of the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    pub fraction: f64,
    pub seed: u64,
    pub summary: Summary,
}

/// The mean over seeds of one strategy at one fraction.
#[derive(Clone, Debug, PartialEq)]
pub struct MeanRow {
    pub fraction: f64,
    pub strategy: String,
    pub seeds: usize,
    pub makespan_s: f64,
    pub mean_wait_s: f64,
    pub mean_response_s: f64,
    pub mean_slowdown: f64,
    pub mean_bounded_slowdown: f64,
    pub utilization: f64,
    pub expands: f64,
    pub shrinks: f64,
}

/// Run every (fraction, seed, strategy), in that nesting order, on the
/// workload `make(fraction, seed)` builds; `done` is called after each one.
pub fn run_sweep(
    fractions: &[f64],
    seeds: &[u64],
    strategies: &[StrategyChoice],
    opts: SimOptions,
    make: &mut dyn FnMut(f64, u64) -> Result<Workload, String>,
    done: &mut dyn FnMut(&SweepRow),
) -> Result<Vec<SweepRow>, String> {
    let mut rows = Vec::with_capacity(fractions.len() * seeds.len() * strategies.len());
    for &fraction in fractions {
        for &seed in seeds {
            let w = make(fraction, seed)?;
            for k in strategies {
                let r = simulate(&w, k.build().as_mut(), opts);
                let row = SweepRow { fraction, seed, summary: summarize(k, &r) };
                done(&row);
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

/// Means over seeds, one row per (fraction, strategy), in the order the pairs
/// first appear in `rows`.
pub fn means(rows: &[SweepRow]) -> Vec<MeanRow> {
    let mut out: Vec<(MeanRow, usize)> = Vec::new();
    for r in rows {
        let s = &r.summary;
        let i = match out.iter().position(|(m, _)| m.fraction == r.fraction && m.strategy == s.strategy) {
            Some(i) => i,
            None => {
                out.push((
                    MeanRow {
                        fraction: r.fraction,
                        strategy: s.strategy.clone(),
                        seeds: 0,
                        makespan_s: 0.0,
                        mean_wait_s: 0.0,
                        mean_response_s: 0.0,
                        mean_slowdown: 0.0,
                        mean_bounded_slowdown: 0.0,
                        utilization: 0.0,
                        expands: 0.0,
                        shrinks: 0.0,
                    },
                    0,
                ));
                out.len() - 1
            }
        };
        let m = &mut out[i].0;
        m.seeds += 1;
        m.makespan_s += s.makespan_s;
        m.mean_wait_s += s.mean_wait_s;
        m.mean_response_s += s.mean_response_s;
        m.mean_slowdown += s.mean_slowdown;
        m.mean_bounded_slowdown += s.mean_bounded_slowdown;
        m.utilization += s.utilization;
        m.expands += s.expands as f64;
        m.shrinks += s.shrinks as f64;
    }
    out.into_iter()
        .map(|(mut m, _)| {
            let n = m.seeds as f64;
            for v in [
                &mut m.makespan_s,
                &mut m.mean_wait_s,
                &mut m.mean_response_s,
                &mut m.mean_slowdown,
                &mut m.mean_bounded_slowdown,
                &mut m.utilization,
                &mut m.expands,
                &mut m.shrinks,
            ] {
                *v /= n;
            }
            m
        })
        .collect()
}

const METRIC_COLUMNS: &str = "makespan_s,mean_wait_s,mean_response_s,mean_slowdown,\
                              mean_bounded_slowdown,utilization,expands,shrinks";

/// `sweep.csv`: one line per simulation (fraction, seed, strategy, metrics).
pub fn rows_csv(rows: &[SweepRow]) -> String {
    let mut out = format!("fraction,seed,strategy,jobs,{METRIC_COLUMNS}\n");
    for r in rows {
        let s = &r.summary;
        out += &format!(
            "{},{},{},{},{:.3},{:.3},{:.3},{:.6},{:.6},{:.6},{},{}\n",
            r.fraction,
            r.seed,
            s.strategy,
            s.jobs,
            s.makespan_s,
            s.mean_wait_s,
            s.mean_response_s,
            s.mean_slowdown,
            s.mean_bounded_slowdown,
            s.utilization,
            s.expands,
            s.shrinks
        );
    }
    out
}

/// `sweep-means.csv`: the means over seeds behind the plots.
pub fn means_csv(means: &[MeanRow]) -> String {
    let mut out = format!("fraction,strategy,seeds,{METRIC_COLUMNS}\n");
    for m in means {
        out += &format!(
            "{},{},{},{:.3},{:.3},{:.3},{:.6},{:.6},{:.6},{:.1},{:.1}\n",
            m.fraction,
            m.strategy,
            m.seeds,
            m.makespan_s,
            m.mean_wait_s,
            m.mean_response_s,
            m.mean_slowdown,
            m.mean_bounded_slowdown,
            m.utilization,
            m.expands,
            m.shrinks
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(fraction: f64, seed: u64, strategy: &str, makespan: f64, shrinks: u64) -> SweepRow {
        SweepRow {
            fraction,
            seed,
            summary: Summary {
                strategy: strategy.into(),
                jobs: 2,
                makespan_s: makespan,
                mean_wait_s: makespan / 10.0,
                mean_response_s: makespan / 2.0,
                mean_slowdown: 1.5,
                mean_bounded_slowdown: 1.25,
                utilization: 0.5,
                expands: 0,
                shrinks,
                ..Summary::default()
            },
        }
    }

    #[test]
    fn seeds_parse_as_lists_and_inclusive_ranges() {
        assert_eq!(parse_seeds("1..5").unwrap(), vec![1, 2, 3, 4, 5]);
        assert_eq!(parse_seeds("1..=3").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_seeds("4, 2,9").unwrap(), vec![4, 2, 9]);
        assert_eq!(parse_seeds("1..2,7").unwrap(), vec![1, 2, 7]);
        for bad in ["", "5..1", "x", "1..", "1,,2"] {
            let e = parse_seeds(bad).unwrap_err();
            assert!(e.contains("--seeds") && e.contains("1..5"), "{e}");
        }
    }

    #[test]
    fn paper_fractions_are_exact_tenths() {
        let f = paper_fractions();
        assert_eq!(f.len(), 10);
        assert_eq!(f[0], 0.1);
        assert_eq!(f[2], 0.3);
        assert_eq!(f[9], 1.0);
    }

    #[test]
    fn means_average_each_fraction_and_strategy_over_its_seeds() {
        let rows = [
            row(0.1, 1, "easy", 100.0, 0),
            row(0.1, 1, "mtct", 80.0, 3),
            row(0.1, 2, "easy", 300.0, 0),
            row(0.1, 2, "mtct", 90.0, 4),
            row(0.2, 1, "easy", 50.0, 0),
        ];
        let m = means(&rows);
        let key: Vec<(f64, &str, usize)> = m.iter().map(|m| (m.fraction, m.strategy.as_str(), m.seeds)).collect();
        assert_eq!(key, [(0.1, "easy", 2), (0.1, "mtct", 2), (0.2, "easy", 1)]);
        assert_eq!(m[0].makespan_s, 200.0);
        assert_eq!(m[0].mean_wait_s, 20.0);
        assert_eq!(m[0].mean_response_s, 100.0);
        assert_eq!(m[1].makespan_s, 85.0);
        assert_eq!(m[1].shrinks, 3.5);
        assert_eq!(m[1].utilization, 0.5);
        assert_eq!(m[2].makespan_s, 50.0);
    }

    #[test]
    fn csvs_have_a_header_and_one_line_per_row() {
        let rows = [row(0.1, 1, "easy", 100.0, 0), row(0.1, 2, "easy", 300.0, 0)];
        let csv = rows_csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "fraction,seed,strategy,jobs,makespan_s,mean_wait_s,mean_response_s,mean_slowdown,\
             mean_bounded_slowdown,utilization,expands,shrinks"
        );
        assert_eq!(lines[1], "0.1,1,easy,2,100.000,10.000,50.000,1.500000,1.250000,0.500000,0,0");
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.split(',').count() == 12));

        let csv = means_csv(&means(&rows));
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].starts_with("fraction,strategy,seeds,makespan_s,"));
        assert_eq!(lines[1], "0.1,easy,2,200.000,20.000,100.000,1.500000,1.250000,0.500000,0.0,0.0");
        assert_eq!(lines.len(), 2);
    }
}
