//! The metrics of a run (Chadha et al. 2020, section VI-B, plus slowdowns):
//! makespan, mean wait, response, slowdown and bounded slowdown,
//! utilization, number of expands and shrinks, the strategy's own figures;
//! and the per-job CSV.

use malleable_core::{MeasureKind, StrategyChoice};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::engine::{SimResult, Total};

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
    /// Seconds jobs spent resizing, over all resizes (Iserte et al. 2025, Table 5).
    pub resize_s: f64,
    /// Power-corridor figures (Chadha et al. 2020, Table II), `null` for workloads
    /// without a corridor: breaks the scheduler's next pass did not repair,
    pub power_violations: Option<u64>,
    /// all breaks, repaired or not,
    pub corridor_breaks: Option<u64>,
    pub seconds_outside_corridor: Option<f64>,
    pub energy_j: Option<f64>,
    /// Soner and Ozturan's packing factor for workloads whose jobs ask for
    /// cores (`null` otherwise): the mean over those jobs of the nodes each
    /// was spread over, over the fewest that hold its cores (1 at best),
    /// and its standard deviation.
    pub packing_factor: Option<f64>,
    pub packing_factor_sd: Option<f64>,
    /// The strategy's own figures (those its registry entry declares, then
    /// any other it reported), as fields of their own: a count or highest
    /// value as `name`, times as `name_median_ms` and `name_max_ms`.
    #[serde(flatten)]
    pub figures: Figures,
    /// Medians per job class, for workloads whose jobs have one (MPDATA's
    /// Fig. 5); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassFigures>,
}

/// Iserte et al. 2025's Fig. 5 for one job class: median wait, run and
/// turnaround (wait plus run).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ClassFigures {
    pub class: String,
    pub jobs: usize,
    pub median_wait_s: f64,
    pub median_run_s: f64,
    pub median_turnaround_s: f64,
}

/// The per-class medians of a run's jobs, classes in order of first
/// appearance by job id.
fn classes(r: &SimResult) -> Vec<ClassFigures> {
    let mut jobs: Vec<_> = r.jobs.iter().filter(|j| j.class.is_some()).collect();
    jobs.sort_by_key(|j| j.id);
    let mut names: Vec<&str> = Vec::new();
    for j in &jobs {
        let c = j.class.unwrap_or_default();
        if !names.contains(&c) {
            names.push(c);
        }
    }
    names
        .into_iter()
        .map(|c| {
            let of: Vec<_> = jobs.iter().filter(|j| j.class == Some(c)).collect();
            let m = |f: &dyn Fn(&crate::engine::JobRecord) -> f64| median(&of.iter().map(|j| f(j)).collect::<Vec<_>>());
            ClassFigures {
                class: c.to_string(),
                jobs: of.len(),
                median_wait_s: m(&|j| j.start - j.submit),
                median_run_s: m(&|j| j.end - j.start),
                median_turnaround_s: m(&|j| j.end - j.submit),
            }
        })
        .collect()
}

/// One of a strategy's figures over a run.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Figure {
    Count(u64),
    Value(f64),
}

impl Figure {
    pub fn as_f64(self) -> f64 {
        match self {
            Figure::Count(c) => c as f64,
            Figure::Value(v) => v,
        }
    }
}

/// A strategy's figures in order, written into the summary's JSON as fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures(pub Vec<(String, Figure)>);

impl Serialize for Figures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, f) in &self.0 {
            match f {
                Figure::Count(c) => map.serialize_entry(name, c)?,
                Figure::Value(v) => map.serialize_entry(name, v)?,
            }
        }
        map.end()
    }
}

impl Summary {
    /// A figure by its field name, if the strategy has it.
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures.0.iter().find(|(n, _)| n == name).map(|(_, f)| f.as_f64())
    }
}

/// The figures of a run: each one the strategy declares (0 when never
/// reported), then any it reported without declaring.
fn figures(choice: &StrategyChoice, r: &SimResult) -> Figures {
    let mut out = Vec::new();
    let mut push = |name: &str, total: Option<&Total>, kind: MeasureKind| match (kind, total) {
        (MeasureKind::Millis, t) => {
            let all = match t {
                Some(Total::Millis(all)) => all.as_slice(),
                _ => &[],
            };
            out.push((format!("{name}_median_ms"), Figure::Value(median(all))));
            out.push((format!("{name}_max_ms"), Figure::Value(all.iter().copied().fold(0.0, f64::max))));
        }
        (_, Some(Total::Count(c) | Total::Highest(c))) => out.push((name.to_string(), Figure::Count(*c))),
        (_, _) => out.push((name.to_string(), Figure::Count(0))),
    };
    for m in choice.info.measures {
        push(m.name, r.tally.get(m.name), m.kind);
    }
    for (name, total) in &r.tally.0 {
        if !choice.info.measures.iter().any(|m| m.name == *name) {
            let kind = match total {
                Total::Millis(_) => MeasureKind::Millis,
                _ => MeasureKind::Count,
            };
            push(name, Some(total), kind);
        }
    }
    Figures(out)
}

pub fn summarize(choice: &StrategyChoice, r: &SimResult) -> Summary {
    let n = r.jobs.len().max(1) as f64;
    let first_submit = r.jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min);
    let last_end = r.jobs.iter().map(|j| j.end).fold(f64::NEG_INFINITY, f64::max);
    let makespan = if r.jobs.is_empty() { 0.0 } else { last_end - first_submit };
    let mean = |f: &dyn Fn(&crate::engine::JobRecord) -> f64| r.jobs.iter().map(f).sum::<f64>() / n;
    Summary {
        strategy: choice.to_string(),
        jobs: r.jobs.len(),
        makespan_s: makespan,
        mean_wait_s: mean(&|j| j.start - j.submit),
        mean_response_s: mean(&|j| j.end - j.submit),
        mean_slowdown: mean(&|j| {
            // A job that shared cores counts against its run alone.
            let run = j.alone_run.unwrap_or(j.end - j.start);
            if run > 0.0 {
                (j.end - j.submit) / run
            } else {
                1.0
            }
        }),
        mean_bounded_slowdown: mean(&|j| {
            ((j.end - j.submit) / j.alone_run.unwrap_or(j.end - j.start).max(BOUNDED_SLOWDOWN_TAU)).max(1.0)
        }),
        utilization: if makespan > 0.0 { r.node_seconds / (r.nodes as f64 * makespan) } else { 0.0 },
        expands: r.jobs.iter().map(|j| u64::from(j.expands)).sum(),
        shrinks: r.jobs.iter().map(|j| u64::from(j.shrinks)).sum(),
        resize_s: r.resize_seconds,
        power_violations: r.power.as_ref().map(|p| p.violations),
        corridor_breaks: r.power.as_ref().map(|p| p.breaks),
        seconds_outside_corridor: r.power.as_ref().map(|p| p.seconds_outside),
        energy_j: r.power.as_ref().map(|p| p.energy_j),
        packing_factor: packing(r).map(|(m, _)| m),
        packing_factor_sd: packing(r).map(|(_, sd)| sd),
        figures: figures(choice, r),
        classes: classes(r),
    }
}

/// The mean and standard deviation of the jobs' packing factors, when any
/// job has one.
fn packing(r: &SimResult) -> Option<(f64, f64)> {
    let v: Vec<f64> = r.jobs.iter().filter_map(|j| j.packing).collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    Some((mean, var.sqrt()))
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
        JobRecord {
            id,
            submit,
            start,
            end,
            start_nodes: 1,
            final_nodes: 1,
            malleable: false,
            expands: 0,
            shrinks: 1,
            class: None,
            alone_run: None,
            packing: None,
        }
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
            tally: Default::default(),
            resize_seconds: 0.0,
        };
        let s = summarize(&StrategyChoice::named("easy").unwrap(), &r);
        assert_eq!(s.makespan_s, 105.0);
        assert_eq!(s.mean_wait_s, 45.0);
        assert_eq!(s.mean_response_s, 97.5);
        assert_eq!(s.mean_slowdown, (1.0 + 19.0) / 2.0);
        assert_eq!(s.mean_bounded_slowdown, (1.0 + 9.5) / 2.0);
        assert_eq!(s.utilization, 0.5);
        assert_eq!(s.shrinks, 2);
        assert_eq!(s.power_violations, None);
        assert_eq!(s.figures, Figures::default(), "easy declares no figures");
    }

    #[test]
    fn figures_follow_the_declaration_and_land_in_the_json() {
        let mut tally = crate::engine::Tally::default();
        tally.add("lp_solves", malleable_core::Measure::Count(2));
        tally.add("lp", malleable_core::Measure::Millis(3.0));
        tally.add("lp", malleable_core::Measure::Millis(1.0));
        tally.add("extra", malleable_core::Measure::Count(7));
        let r =
            SimResult { nodes: 1, jobs: vec![], node_seconds: 0.0, passes: 0, power: None, tally, resize_seconds: 0.0 };
        let s = summarize(&StrategyChoice::named("power").unwrap(), &r);
        let names: Vec<&str> = s.figures.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "lp_median_ms",
                "lp_max_ms",
                "lp_solves",
                "lp_combinations_tried",
                "lp_repairs_attempted",
                "lp_repairs_found",
                "lp_longest_combination",
                "lp_solver_errors",
                "extra"
            ]
        );
        assert_eq!((s.figure("lp_median_ms"), s.figure("lp_max_ms")), (Some(2.0), Some(3.0)));
        assert_eq!(
            (s.figure("lp_solves"), s.figure("lp_repairs_found"), s.figure("extra")),
            (Some(2.0), Some(0.0), Some(7.0))
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["lp_solves"], serde_json::json!(2));
        assert_eq!(json["lp_median_ms"], serde_json::json!(2.0));
        assert_eq!(json["strategy"], "power");
    }

    #[test]
    fn class_medians_by_hand() {
        let with = |id, class, submit, start, end| JobRecord { class: Some(class), ..rec(id, submit, start, end) };
        let r = SimResult {
            nodes: 2,
            jobs: vec![
                with(2, "large", 0.0, 10.0, 110.0),
                with(1, "small", 0.0, 0.0, 5.0),
                with(3, "small", 5.0, 20.0, 30.0),
                with(4, "small", 5.0, 40.0, 41.0),
                rec(5, 0.0, 0.0, 1.0),
            ],
            node_seconds: 0.0,
            passes: 0,
            power: None,
            tally: Default::default(),
            resize_seconds: 2.5,
        };
        let s = summarize(&StrategyChoice::named("easy").unwrap(), &r);
        let got: Vec<(&str, usize, f64, f64, f64)> = s
            .classes
            .iter()
            .map(|c| (c.class.as_str(), c.jobs, c.median_wait_s, c.median_run_s, c.median_turnaround_s))
            .collect();
        // Small: waits 0, 15, 35; runs 5, 10, 1; turnarounds 5, 25, 36.
        assert_eq!(got, vec![("small", 3, 15.0, 5.0, 25.0), ("large", 1, 10.0, 100.0, 110.0)]);
        assert_eq!(s.resize_s, 2.5);
        // A workload without classes has none, and none in its JSON.
        let plain =
            summarize(&StrategyChoice::named("easy").unwrap(), &SimResult { jobs: vec![rec(5, 0.0, 0.0, 1.0)], ..r });
        assert!(plain.classes.is_empty() && serde_json::to_value(&plain).unwrap().get("classes").is_none());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
