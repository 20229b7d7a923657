//! The tables the commands print: `compare`'s columns of medians with their
//! ratios (and the paired ratios over seeds), the sweep's means, and the
//! strategies' registry.

use malleable_core::REGISTRY;
use malleable_sim::report::metrics::{self, Summary};
use malleable_sim::report::sweep;

/// A row of the comparison table: its name and how to read it (`None`:
/// not measured for this run, printed as "-").
pub(super) type Metric = (String, Box<dyn Fn(&Summary) -> Option<f64>>);
/// A row every summary of its kind has.
pub(super) type FixedMetric = (&'static str, fn(&Summary) -> Option<f64>);

pub(super) fn print_table(rows: &[Summary]) {
    let columns: Vec<Vec<Summary>> = rows.iter().map(|r| vec![r.clone()]).collect();
    print_columns(&columns);
}

/// The comparison table, one column per strategy: each figure's median over
/// the column's runs (one run per seed), and its ratio to the first column's.
pub(super) fn print_columns(columns: &[Vec<Summary>]) {
    let metrics = metrics_of(columns);
    out!("{:<26}", "metric");
    for c in columns {
        out!("{:>26}", c[0].strategy);
    }
    outln!();
    // The median over a column's runs that have the figure.
    let cell = |f: &dyn Fn(&Summary) -> Option<f64>, c: &[Summary]| {
        let values: Vec<f64> = c.iter().filter_map(f).collect();
        (!values.is_empty()).then(|| metrics::median(&values))
    };
    for (name, f) in &metrics {
        out!("{name:<26}");
        let base = cell(f.as_ref(), &columns[0]);
        for c in columns {
            let Some(v) = cell(f.as_ref(), c) else {
                out!("{:>17} {:>8}", "-", "");
                continue;
            };
            let ratio = match base {
                Some(b) if b != 0.0 => format!("({:.3})", v / b),
                _ => String::new(),
            };
            // A packing factor differs from 1 in the third decimal.
            let digits = if name.starts_with("packing") { 4 } else { 2 };
            out!("{:>17.digits$} {:>8}", v, ratio);
        }
        outln!();
    }
}

/// With several seeds, each figure's ratio to the first column's on the
/// same seed (the same workload), median over the seeds, and its range
/// (lowest to highest seed's ratio): the comparison a paper's one run
/// against its baseline stands for, where the table's ratio of medians sets
/// one seed's figure against another's.
pub(super) fn print_paired(columns: &[Vec<Summary>]) {
    let metrics = metrics_of(columns);
    outln!(
        "paired: each seed's ratio to {} on that seed, median over the seeds [lowest, highest]",
        columns[0][0].strategy
    );
    out!("{:<26}", "metric");
    for c in columns {
        out!("{:>26}", c[0].strategy);
    }
    outln!();
    for (name, f) in &metrics {
        out!("{name:<26}");
        for c in columns {
            match paired_spread(c, &columns[0], f.as_ref()) {
                Some(p) => out!("{:>26}", format!("{:.3} [{:.3}, {:.3}]", p.median, p.lowest, p.highest)),
                None => out!("{:>26}", "-"),
            }
        }
        outln!();
    }
}

/// The seeds' ratios to the base: their median, lowest and highest.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(super) struct PairedRatio {
    pub median: f64,
    pub lowest: f64,
    pub highest: f64,
}

/// Each run's figure over the base column's on the same seed (runs in seed
/// order in both): the median of those ratios and their range; `None` when
/// no seed has both figures and a base that is not 0.
pub(super) fn paired_spread(
    runs: &[Summary],
    base: &[Summary],
    f: &dyn Fn(&Summary) -> Option<f64>,
) -> Option<PairedRatio> {
    let ratios: Vec<f64> = runs
        .iter()
        .zip(base)
        .filter_map(|(run, b)| Some((f(run)?, f(b)?)))
        .filter(|&(_, b)| b != 0.0)
        .map(|(v, b)| v / b)
        .collect();
    (!ratios.is_empty()).then(|| PairedRatio {
        median: metrics::median(&ratios),
        lowest: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        highest: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The rows of the comparison: the figures every summary has, power's when
/// a run has them, the strategies' own, and per class.
pub(super) fn metrics_of(columns: &[Vec<Summary>]) -> Vec<Metric> {
    let rows: Vec<&Summary> = columns.iter().flatten().collect();
    let fixed: [FixedMetric; 9] = [
        ("makespan_s", |s| Some(s.makespan_s)),
        ("mean_wait_s", |s| Some(s.mean_wait_s)),
        ("mean_response_s", |s| Some(s.mean_response_s)),
        ("mean_slowdown", |s| Some(s.mean_slowdown)),
        ("mean_bounded_slowdown", |s| Some(s.mean_bounded_slowdown)),
        ("utilization", |s| Some(s.utilization)),
        ("expands", |s| Some(s.expands as f64)),
        ("shrinks", |s| Some(s.shrinks as f64)),
        ("resize_s", |s| Some(s.resize_s)),
    ];
    let mut metrics: Vec<Metric> = fixed.into_iter().map(|(n, f)| (n.to_string(), Box::new(f) as _)).collect();
    if rows.iter().any(|r| r.power_violations.is_some()) {
        let power: [FixedMetric; 4] = [
            ("power_violations", |s| s.power_violations.map(|v| v as f64)),
            ("corridor_breaks", |s| s.corridor_breaks.map(|v| v as f64)),
            ("seconds_outside_corridor", |s| s.seconds_outside_corridor),
            ("energy_j", |s| s.energy_j),
        ];
        metrics.extend(power.into_iter().map(|(n, f)| (n.to_string(), Box::new(f) as _)));
    }
    if rows.iter().any(|r| r.packing_factor.is_some()) {
        let packing: [FixedMetric; 2] =
            [("packing_factor", |s| s.packing_factor), ("packing_factor_sd", |s| s.packing_factor_sd)];
        metrics.extend(packing.into_iter().map(|(n, f)| (n.to_string(), Box::new(f) as _)));
    }
    // The strategies' own figures, each in the order it first appears.
    let mut figures: Vec<String> = Vec::new();
    for r in &rows {
        for (name, _) in &r.figures.0 {
            if !figures.contains(name) {
                figures.push(name.clone());
            }
        }
    }
    for name in figures {
        let key = name.clone();
        metrics.push((name, Box::new(move |s: &Summary| s.figure(&key))));
    }
    // Per class (Iserte et al. 2025's Fig. 5), for workloads with classes.
    let mut classes: Vec<String> = Vec::new();
    for r in &rows {
        for c in &r.classes {
            if !classes.contains(&c.class) {
                classes.push(c.class.clone());
            }
        }
    }
    type ClassMetric = (&'static str, fn(&metrics::ClassFigures) -> f64);
    let per_class: [ClassMetric; 3] = [
        ("median_wait_s", |c| c.median_wait_s),
        ("median_run_s", |c| c.median_run_s),
        ("median_turnaround_s", |c| c.median_turnaround_s),
    ];
    for class in classes {
        for (what, f) in per_class {
            let key = class.clone();
            let read = move |s: &Summary| s.classes.iter().find(|c| c.class == key).map(f);
            metrics.push((format!("{class} {what}"), Box::new(read)));
        }
    }
    metrics
}

/// The registry as a user reads it: what each strategy does, what it takes
/// (`--strategy NAME[Key=value,...]`, or Key=value lines in malleable.conf),
/// and what figures its runs report.
pub(super) fn print_strategies() {
    for info in REGISTRY {
        outln!("{:<20} {}", info.name, info.about);
        for p in info.params {
            let default = p.show_value(p.default_value());
            outln!("{:<22}{}={default}: {}; {}", "", p.key(), p.help(), p.allowed());
        }
        if !info.measures.is_empty() {
            let names: Vec<&str> = info.measures.iter().map(|m| m.name).collect();
            outln!("{:<22}reports: {}", "", names.join(", "));
        }
    }
}

/// A table of the sweep's means: its name and how to read it.
pub(super) type MeanColumn = (&'static str, fn(&sweep::MeanRow) -> f64);

/// The sweep's means as a fraction x strategy table per metric.
pub(super) fn print_means(means: &[sweep::MeanRow]) {
    let mut strategies: Vec<&str> = Vec::new();
    let mut fractions: Vec<f64> = Vec::new();
    for m in means {
        if !strategies.contains(&m.strategy.as_str()) {
            strategies.push(&m.strategy);
        }
        if !fractions.contains(&m.fraction) {
            fractions.push(m.fraction);
        }
    }
    let metrics: [MeanColumn; 4] = [
        ("makespan_s", |m| m.makespan_s),
        ("mean_wait_s", |m| m.mean_wait_s),
        ("mean_response_s", |m| m.mean_response_s),
        ("utilization", |m| m.utilization),
    ];
    for (name, f) in metrics {
        out!("{name:<16}");
        for s in &strategies {
            out!("{s:>15}");
        }
        outln!();
        for &fr in &fractions {
            out!("{fr:<16.1}");
            for s in &strategies {
                match means.iter().find(|m| m.fraction == fr && m.strategy == *s) {
                    Some(m) if name == "utilization" => out!("{:>15.3}", f(m)),
                    Some(m) => out!("{:>15.1}", f(m)),
                    None => out!("{:>15}", "-"),
                }
            }
            outln!();
        }
        outln!();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_ratio_sets_each_seed_against_the_same_seed() {
        let run = |makespan_s: f64| Summary { makespan_s, ..Summary::default() };
        // Seed by seed: 50/100, 90/100, 60/200: 0.5, 0.9, 0.3, median 0.5;
        // the ratio of the medians would be 60/100 = 0.6.
        let base = vec![run(100.0), run(100.0), run(200.0)];
        let other = vec![run(50.0), run(90.0), run(60.0)];
        let f = |s: &Summary| Some(s.makespan_s);
        let median = |r: &[Summary], b: &[Summary], f: &dyn Fn(&Summary) -> Option<f64>| {
            paired_spread(r, b, f).map(|p| p.median)
        };
        assert_eq!(median(&other, &base, &f), Some(0.5));
        // A seed whose base is 0 or that lacks the figure is left out.
        let zero = vec![run(0.0), run(100.0), run(200.0)];
        assert_eq!(median(&other, &zero, &f), Some((0.9 + 0.3) / 2.0));
        assert_eq!(median(&other, &base, &|_| None), None);
    }

    #[test]
    fn a_paired_ratio_comes_with_the_seeds_range() {
        let run = |makespan_s: f64| Summary { makespan_s, ..Summary::default() };
        let base = vec![run(100.0), run(100.0), run(200.0)];
        let other = vec![run(50.0), run(90.0), run(60.0)];
        let f = |s: &Summary| Some(s.makespan_s);
        assert_eq!(paired_spread(&other, &base, &f), Some(PairedRatio { median: 0.5, lowest: 0.3, highest: 0.9 }));
        assert_eq!(paired_spread(&other, &base, &|_| None), None);
    }
}
