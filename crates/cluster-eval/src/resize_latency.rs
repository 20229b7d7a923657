//! Chadha et al. 2020's Fig. 5 on a real cluster: how long a one-node expand or
//! shrink of a malleable job takes against the job's size, and its parts, read
//! from slurmctld's log and mall-run's output; their statistics, a linear fit and
//! the plot. `cargo xtask bench-resize` drives the cluster and calls this.
//!
//! The instants of one step, in the order they happen:
//! - expand: the plugin decides (`growing onto`), slurmctld has merged the helper
//!   job (`expand onto ... (resize R, ...)`), mall-run's new workers joined
//!   (`expand R: workers on ... joined`), the plugin read the commit
//!   (`expand onto ... committed`);
//! - shrink: the plugin decides (`shrink off ... (resize R, ...)`), the leaving
//!   workers' steps ended (`shrink R: workers on ... left`), mall-run's COMMIT
//!   reached slurmctld (job_submit/malleable's `its runtime's request: ...
//!   COMMIT` line, as it takes the request), the plugin
//!   read it and slurmctld freed the nodes (`shrink off ... committed ...; it now
//!   holds`). A shrink changes the allocation at its end, not its start.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use malleable_model::log_lines::{Ending, LogLine};
use malleable_model::stamped::Stamped;
use malleable_model::JobId;
use malleable_sim::report::plot::{register_fonts, FONT};

use crate::records::number;
use testcluster::hostlist;

/// What the paper measured at 32 nodes (Fig. 5), drawn beside ours.
pub const PAPER_32: (f64, f64) = (3.1, 1.8);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Expand,
    Shrink,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Expand => "expand",
            Kind::Shrink => "shrink",
        }
    }
}

/// One resize, decision to commit, in seconds. A part is `None` when its
/// instant was not logged (mall-run older than its timestamped lines, say).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub kind: Kind,
    pub resize: u64,
    /// Nodes the job holds after it.
    pub nodes_after: usize,
    /// Nodes it added or removed.
    pub moved: usize,
    pub total: f64,
    /// Expand: decision -> helper job merged. Shrink: COMMIT in slurmctld -> nodes freed.
    pub slurmctld: Option<f64>,
    /// Expand: merged -> new workers joined. Shrink: decision -> leaving workers gone.
    pub launch: Option<f64>,
    /// Expand: joined -> commit read by the plugin. Shrink: workers gone -> COMMIT in slurmctld.
    pub ack: Option<f64>,
}

/// A line of slurmctld's log about the job, with its time in ms since the epoch.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Growing {
        nodes: String,
    },
    Expanded {
        nodes: String,
        resize: u64,
        holds: usize,
    },
    ExpandCommitted {
        nodes: String,
    },
    ShrinkDecided {
        nodes: String,
        resize: u64,
    },
    ShrinkCommitted {
        nodes: String,
        holds: usize,
    },
    /// mall-run's COMMIT written into the job's comment.
    CommitArrived {
        resize: u64,
    },
    /// An adaptation ended without its application (rolled back, forced, not
    /// done), or slurmctld refused to free a committed shrink's nodes.
    Failed {
        line: String,
    },
}

fn count(list: &str) -> Option<usize> {
    hostlist::expand(list).ok().map(|v| v.len())
}

/// The lines of slurmctld's log about job `job`'s resizes, in order.
pub fn ctld_events(log: &str, job: u32) -> Vec<(i64, Event)> {
    let mut out = Vec::new();
    for line in log.lines() {
        let Some(t) = Stamped::parse(line).map(|s| s.ms) else { continue };
        let Some(ours) = LogLine::parse(line).filter(|l| l.job() == Some(JobId(job))) else { continue };
        if let Some(e) = plugin_line(ours, job) {
            out.push((t, e));
        }
    }
    out
}

/// One of the plugin's lines about the job, as a step's instant.
fn plugin_line(line: LogLine, job: u32) -> Option<Event> {
    let failed = Event::Failed { line: line.to_string() };
    match line {
        // mall-run's COMMIT, as job_submit/malleable takes it.
        LogLine::RequestTaken { request, .. } => {
            let commit = format!(" COMMIT job={job} resize=");
            request
                .find(&commit)
                .and_then(|i| number(&request[i + commit.len()..]))
                .map(|resize| Event::CommitArrived { resize })
        }
        LogLine::ExpandNotDone { .. } | LogLine::ReleaseFailed { .. } => Some(failed),
        LogLine::Released { ending: Ending::ShrinkCommitted { nodes, .. }, holds, .. } => {
            Some(Event::ShrinkCommitted { nodes: nodes.join(","), holds: count(&holds)? })
        }
        LogLine::Released { .. } => Some(failed),
        LogLine::Growing { nodes, .. } => Some(Event::Growing { nodes: nodes.join(",") }),
        LogLine::Expanding { nodes, resize, holds, .. } => {
            Some(Event::Expanded { nodes: nodes.join(","), resize, holds: count(&holds)? })
        }
        LogLine::ExpandCommitted { nodes, .. } => Some(Event::ExpandCommitted { nodes: nodes.join(",") }),
        LogLine::Shrinking { nodes, resize, .. } => Some(Event::ShrinkDecided { nodes: nodes.join(","), resize }),
        _ => None,
    }
}

/// mall-run's timestamped lines: (kind, resize) -> ms since the epoch, for
/// `expand R: workers on ... joined (unix time S.mmm)` and `shrink R: ... left (...)`.
pub fn app_events(out: &str) -> HashMap<(Kind, u64), i64> {
    let mut found = HashMap::new();
    for line in out.lines() {
        let Some(i) = line.find("mall-run: ") else { continue };
        let rest = &line[i + "mall-run: ".len()..];
        let (kind, rest, verb) = if let Some(r) = rest.strip_prefix("expand ") {
            (Kind::Expand, r, " joined (unix time ")
        } else if let Some(r) = rest.strip_prefix("shrink ") {
            (Kind::Shrink, r, " left (unix time ")
        } else {
            continue;
        };
        let Some(resize) = number::<u64>(rest) else { continue };
        let Some(stamp) = rest.split_once(verb).and_then(|(_, s)| s.strip_suffix(')')) else { continue };
        let (s, ms) = stamp.split_once('.').unwrap_or((stamp, "0"));
        let (Ok(s), Some(ms)) = (s.parse::<i64>(), format!("{ms:0<3}").get(..3).and_then(|m| m.parse::<i64>().ok()))
        else {
            continue;
        };
        found.entry((kind, resize)).or_insert(s * 1000 + ms);
    }
    found
}

/// The resizes read from both sources, and what could not be read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Read {
    pub steps: Vec<Step>,
    /// Adaptations that ended without their application.
    pub failed: Vec<String>,
    /// Committed resizes whose decision was not found (a log cut short).
    pub incomplete: usize,
}

/// Put each committed resize of the job together from its instants.
pub fn read_steps(ctld_log: &str, app_out: &str, job: u32) -> Read {
    let app = app_events(app_out);
    let secs = |a: i64, b: i64| (b - a) as f64 / 1000.0;
    let part = |a: Option<i64>, b: Option<i64>| Some(secs(a?, b?));
    let mut read = Read::default();
    let mut growing: Option<(i64, String)> = None;
    // (resize, nodes, decided, merged, holds)
    let mut expand: Option<(u64, String, Option<i64>, i64, usize)> = None;
    let mut shrink: Option<(u64, String, i64)> = None;
    let mut commits: HashMap<u64, i64> = HashMap::new();
    for (t, e) in ctld_events(ctld_log, job) {
        match e {
            Event::Growing { nodes } => growing = Some((t, nodes)),
            Event::Expanded { nodes, resize, holds } => {
                let decided = growing.take().filter(|(_, n)| *n == nodes).map(|(t0, _)| t0);
                expand = Some((resize, nodes, decided, t, holds));
            }
            Event::ExpandCommitted { nodes } => match expand.take() {
                Some((resize, n, Some(t0), t1, holds)) if n == nodes => {
                    let t2 = app.get(&(Kind::Expand, resize)).copied();
                    read.steps.push(Step {
                        kind: Kind::Expand,
                        resize,
                        nodes_after: holds,
                        moved: nodes.split(',').count(),
                        total: secs(t0, t),
                        slurmctld: Some(secs(t0, t1)),
                        launch: part(Some(t1), t2),
                        ack: part(t2, Some(t)),
                    });
                }
                _ => read.incomplete += 1,
            },
            Event::ShrinkDecided { nodes, resize } => shrink = Some((resize, nodes, t)),
            Event::CommitArrived { resize } => {
                commits.entry(resize).or_insert(t);
            }
            Event::ShrinkCommitted { nodes, holds } => match shrink.take() {
                Some((resize, n, t0)) if n == nodes => {
                    let (t1, t2) = (app.get(&(Kind::Shrink, resize)).copied(), commits.get(&resize).copied());
                    read.steps.push(Step {
                        kind: Kind::Shrink,
                        resize,
                        nodes_after: holds,
                        moved: nodes.split(',').count(),
                        total: secs(t0, t),
                        slurmctld: part(t2, Some(t)),
                        launch: part(Some(t0), t1),
                        ack: part(t1, t2),
                    });
                }
                _ => read.incomplete += 1,
            },
            Event::Failed { line } => {
                (expand, shrink) = (None, None);
                read.failed.push(line);
            }
        }
    }
    read
}

/// Median (the mean of the middle two for an even count), least and most.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

pub fn spread(values: &[f64]) -> Option<Spread> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    Some(Spread { median, min: v[0], max: v[n - 1], count: n })
}

/// The steps of one kind ending at one size: the total's spread, the parts' medians.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub total: Spread,
    pub slurmctld: Option<f64>,
    pub launch: Option<f64>,
    pub ack: Option<f64>,
}

fn summary(steps: &[&Step]) -> Option<Summary> {
    let med = |f: fn(&Step) -> Option<f64>| {
        let v: Vec<f64> = steps.iter().filter_map(|s| f(s)).collect();
        spread(&v).map(|s| s.median)
    };
    Some(Summary {
        total: spread(&steps.iter().map(|s| s.total).collect::<Vec<_>>())?,
        slurmctld: med(|s| s.slurmctld),
        launch: med(|s| s.launch),
        ack: med(|s| s.ack),
    })
}

/// One line of the table: a size and the steps that ended there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub nodes: usize,
    pub expand: Option<Summary>,
    pub shrink: Option<Summary>,
}

/// One row a size any step ended at, smallest first.
pub fn rows(steps: &[Step]) -> Vec<Row> {
    let mut by: BTreeMap<usize, (Vec<&Step>, Vec<&Step>)> = BTreeMap::new();
    for s in steps {
        let e = by.entry(s.nodes_after).or_default();
        match s.kind {
            Kind::Expand => e.0.push(s),
            Kind::Shrink => e.1.push(s),
        }
    }
    by.into_iter().map(|(nodes, (e, s))| Row { nodes, expand: summary(&e), shrink: summary(&s) }).collect()
}

/// `seconds = a + b * nodes` by least squares, with its R².
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    pub a: f64,
    pub b: f64,
    pub r2: f64,
    pub points: usize,
}

impl Fit {
    pub fn at(&self, nodes: f64) -> f64 {
        self.a + self.b * nodes
    }
}

/// None with fewer than two distinct x.
pub fn fit(points: &[(f64, f64)]) -> Option<Fit> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx <= f64::EPSILON * n {
        return None;
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let r2 = if syy > 0.0 { (sxy * sxy) / (sxx * syy) } else { 1.0 };
    Some(Fit { a, b, r2, points: points.len() })
}

/// The fit over every step of `kind` (each step a point, not the medians).
pub fn fit_of(steps: &[Step], kind: Kind) -> Option<Fit> {
    let pts: Vec<(f64, f64)> =
        steps.iter().filter(|s| s.kind == kind).map(|s| (s.nodes_after as f64, s.total)).collect();
    fit(&pts)
}

fn cell(s: Option<Summary>) -> String {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    match s {
        None => format!("{:<24} {:>9} {:>9} {:>9}", "", "", "", ""),
        Some(s) => format!(
            "{:<24} {:>9} {:>9} {:>9}",
            format!("{:.3} ({:.3}-{:.3})", s.total.median, s.total.min, s.total.max),
            opt(s.slurmctld),
            opt(s.launch),
            opt(s.ack)
        ),
    }
}

/// The fit as a formula, e.g. `seconds = 0.412 + 0.0213 * nodes (R² 0.61, 155 steps)`.
pub fn formula(f: &Fit) -> String {
    let sign = if f.b < 0.0 { '-' } else { '+' };
    format!("seconds = {:.3} {sign} {:.4} * nodes (R² {:.2}, {} steps)", f.a, f.b.abs(), f.r2, f.points)
}

/// The table, the parts' meaning and the fits, as printed.
pub fn table(steps: &[Step]) -> String {
    let mut t = String::new();
    let head = format!("{:<24} {:>9} {:>9} {:>9}", "total", "slurmctld", "launch", "ack");
    let shead = format!("{:<24} {:>9} {:>9} {:>9}", "total", "slurmctld", "leave", "ack");
    let _ =
        writeln!(t, "seconds, decision to commit: median (min-max) of the steps ending at that size; parts: medians");
    let _ =
        writeln!(t, "{:>5}  {:<54}  {:<54}", "", "expand (one node, to this size)", "shrink (one node, to this size)");
    let _ = writeln!(t, "{:>5}  {head:<54}  {shead:<54}", "nodes");
    for r in rows(steps) {
        let _ = writeln!(t, "{:>5}  {:<54}  {:<54}", r.nodes, cell(r.expand), cell(r.shrink));
    }
    let _ = writeln!(
        t,
        "expand: slurmctld = decision -> helper job merged; launch = -> new worker joined; ack = -> commit read"
    );
    let _ = writeln!(
        t,
        "shrink: leave = decision -> leaving worker gone; ack = -> COMMIT in slurmctld; slurmctld = -> nodes freed"
    );
    for kind in [Kind::Expand, Kind::Shrink] {
        match fit_of(steps, kind) {
            Some(f) => {
                let _ = writeln!(t, "{} fit: {}", kind.name(), formula(&f));
            }
            None => {
                let _ = writeln!(t, "{} fit: too few sizes", kind.name());
            }
        }
    }
    // Trailing spaces of the empty cells are noise.
    t.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
}

const EXPAND_COLOUR: RGBColor = RGBColor(230, 97, 1);
const SHRINK_COLOUR: RGBColor = RGBColor(31, 120, 180);

/// One marker shape a series, so a grey-scale print still tells them apart; in
/// the chart's coordinates or, for the legend, in pixels.
fn marker<DB: DrawingBackend, C: Clone + 'static>(
    kind: Kind,
    at: C,
    size: i32,
    style: ShapeStyle,
) -> DynElement<'static, DB, C> {
    match kind {
        Kind::Expand => Circle::new(at, size, style).into_dyn(),
        Kind::Shrink => TriangleMarker::new(at, size + 2, style).into_dyn(),
    }
}

/// Fig. 5 as a PNG: seconds against the size after the step, the median of each
/// size with its min-max whisker, the least-squares lines dashed. The axes fit our
/// steps; the paper's 32-node figures are drawn as hollow markers when they fall
/// inside them (a local cluster is far faster), and always said in a note.
/// `caption` follows the title.
pub fn plot(path: &Path, steps: &[Step], caption: &str) -> Result<(), String> {
    register_fonts();
    let err = |e: DrawingAreaErrorKind<_>| format!("plot {}: {e}", path.display());
    let rows = rows(steps);
    let most = steps.iter().map(|s| s.nodes_after).max().unwrap_or(1).max(2);
    let highest = steps.iter().map(|s| s.total).fold(0.0, f64::max).max(0.01);
    let paper_shown = most >= 32 && PAPER_32.0 <= 3.0 * highest;
    let data_top = if paper_shown { highest.max(PAPER_32.0) } else { highest };
    // Headroom above the data for the legend, so it never hides a point.
    let top = data_top * 1.6;
    let area = BitMapBackend::new(path, (1100, 700)).into_drawing_area();
    area.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&area)
        .caption(format!("Resize latency: {caption}"), (FONT, 24).into_font().style(FontStyle::Bold))
        .margin(18)
        .x_label_area_size(56)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..(most as f64 + 1.0), 0f64..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("nodes after the one-node step")
        .y_desc("seconds, decision to commit")
        .x_labels((most + 2).min(18))
        .y_labels(10)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| if top >= 5.0 { format!("{y:.1}") } else { format!("{y:.2}") })
        .label_style((FONT, 17))
        .axis_desc_style((FONT, 19))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()
        .map_err(err)?;
    for kind in [Kind::Expand, Kind::Shrink] {
        let colour = if kind == Kind::Expand { EXPAND_COLOUR } else { SHRINK_COLOUR };
        let of = |r: &Row| if kind == Kind::Expand { r.expand } else { r.shrink };
        // Expand a little left of its size, shrink a little right: whiskers at one size do not overlap.
        let shift = if kind == Kind::Expand { -0.12 } else { 0.12 };
        let medians: Vec<(f64, Spread)> =
            rows.iter().filter_map(|r| of(r).map(|s| (r.nodes as f64 + shift, s.total))).collect();
        // Whiskers: a vertical stroke from min to max with short caps.
        for (x, t) in &medians {
            let style = colour.mix(0.6).stroke_width(2);
            chart.draw_series(std::iter::once(PathElement::new(vec![(*x, t.min), (*x, t.max)], style))).map_err(err)?;
            for y in [t.min, t.max] {
                let cap = EmptyElement::at((*x, y)) + PathElement::new(vec![(-5, 0), (5, 0)], style);
                chart.draw_series(std::iter::once(cap)).map_err(err)?;
            }
        }
        chart
            .draw_series(medians.iter().map(|(x, t)| marker(kind, (*x, t.median), 5, colour.filled())))
            .map_err(err)?
            .label(format!("{} (median, min-max)", kind.name()))
            .legend(move |(x, y)| marker(kind, (x + 12, y), 5, colour.filled()));
        if let Some(f) = fit_of(steps, kind) {
            let line = [(1.0, f.at(1.0)), (most as f64, f.at(most as f64))];
            let sign = if f.b < 0.0 { '-' } else { '+' };
            chart
                .draw_series(DashedLineSeries::new(line, 10, 6, colour.stroke_width(2)))
                .map_err(err)?
                .label(format!("{} fit: {:.3} {sign} {:.4} * nodes", kind.name(), f.a, f.b.abs()))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
        }
        if paper_shown {
            let paper = if kind == Kind::Expand { PAPER_32.0 } else { PAPER_32.1 };
            chart
                .draw_series(std::iter::once(marker(kind, (32.0, paper), 9, colour.stroke_width(2))))
                .map_err(err)?
                .label(format!("{}: Chadha et al. 2020, 32 nodes", kind.name()))
                .legend(move |(x, y)| marker(kind, (x + 12, y), 7, colour.stroke_width(2)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 17))
        .draw()
        .map_err(err)?;
    let note = format!("Chadha et al. 2020 (Fig. 5), 32 nodes: expand {} s, shrink {} s", PAPER_32.0, PAPER_32.1);
    area.draw(&Text::new(note, (560, 88), (FONT, 16).into_font().color(&RGBColor(90, 90, 90)))).map_err(err)?;
    area.present().map_err(|e| format!("write {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTLD: &str = "\
[2026-11-24T00:00:10.000+00:00] sched/malleable: JobId=3: growing onto n2 (mtct)
[2026-11-24T00:00:10.120+00:00] sched/malleable: JobId=3: expand onto n2 (resize 100, through JobId=9); it now holds n[1-2] (mtct); waiting for its application to commit
[2026-11-24T00:00:11.000+00:00] job_submit/malleable: JobId=3: its runtime's request: mall1 seq=7 COMMIT job=3 resize=100
[2026-11-24T00:00:11.050+00:00] sched/malleable: JobId=3: expand onto n2 committed 0.93 s after the decision
[2026-11-24T00:00:12.000+00:00] sched/malleable: JobId=5: growing onto n3 (mtct)
[2026-11-24T00:00:20.000+00:00] sched/malleable: JobId=3: shrink off n2 (resize 101, mtct); waiting for its application to leave them and commit
[2026-11-24T00:00:20.500+00:00] job_submit/malleable: JobId=3: its runtime's request: mall1 seq=8 COMMIT job=3 resize=101
[2026-11-24T00:00:20.530+00:00] sched/malleable: JobId=3: shrink off n2 committed 0.53 s after the decision; it now holds n1
";
    const APP: &str = "\
mall-run: expand 100: starting workers on n2
mall-run: expand 100: workers on n2 joined (unix time 1795478410.620)
mall-example: iteration 5: expand to 2 workers
mall-run: shrink 101: workers leave n2
mall-run: shrink 101: workers on n2 left (unix time 1795478420.300)
";

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn the_plugins_and_slurmctlds_lines_become_events_of_the_job_only() {
        let ev: Vec<Event> = ctld_events(CTLD, 3).into_iter().map(|(_, e)| e).collect();
        assert_eq!(
            ev,
            vec![
                Event::Growing { nodes: "n2".into() },
                Event::Expanded { nodes: "n2".into(), resize: 100, holds: 2 },
                Event::CommitArrived { resize: 100 },
                Event::ExpandCommitted { nodes: "n2".into() },
                Event::ShrinkDecided { nodes: "n2".into(), resize: 101 },
                Event::CommitArrived { resize: 101 },
                Event::ShrinkCommitted { nodes: "n2".into(), holds: 1 },
            ]
        );
        let failed = "[2026-11-24T00:00:10.000] sched/malleable: JobId=3: expand onto n4 not committed within 60 s: \
                      rolled back (not resized again for 60 s); it now holds n[1-3]";
        assert!(matches!(&ctld_events(failed, 3)[0].1, Event::Failed { line } if line.contains("rolled back")));
        let refused =
            "[2026-11-24T00:00:10.000] error: sched/malleable: JobId=3: shrink off n8 committed 0.10 s after \
                       the decision, but freeing the nodes failed: update_job NodeList=: Invalid node name specified";
        assert!(matches!(&ctld_events(refused, 3)[0].1, Event::Failed { line } if line.contains("freeing")));
        // Job 5's line, and another job's COMMIT, are not job 3's.
        let other =
            "[2026-11-24T00:00:10.000] job_submit/malleable: JobId=33: its runtime's request: mall1 seq=2 COMMIT \
                     job=33 resize=4";
        assert!(ctld_events(other, 3).is_empty());
    }

    #[test]
    fn mall_runs_timestamped_lines_are_read_by_resize() {
        let app = app_events(APP);
        assert_eq!(app.get(&(Kind::Expand, 100)), Some(&1_795_478_410_620));
        assert_eq!(app.get(&(Kind::Shrink, 101)), Some(&1_795_478_420_300));
        assert_eq!(app.len(), 2, "the lines without a time are not instants: {app:?}");
    }

    #[test]
    fn an_expand_splits_into_merge_launch_and_ack() {
        let r = read_steps(CTLD, APP, 3);
        let e = &r.steps[0];
        assert_eq!((e.kind, e.resize, e.nodes_after, e.moved), (Kind::Expand, 100, 2, 1));
        assert!((e.total - 1.05).abs() < 1e-9);
        assert!(close(e.slurmctld, 0.12) && close(e.launch, 0.5) && close(e.ack, 0.43), "{e:?}");
    }

    #[test]
    fn a_shrink_splits_into_leave_ack_and_the_nodes_freed() {
        let r = read_steps(CTLD, APP, 3);
        let s = &r.steps[1];
        assert_eq!((s.kind, s.resize, s.nodes_after, s.moved), (Kind::Shrink, 101, 1, 1));
        assert!((s.total - 0.53).abs() < 1e-9);
        assert!(close(s.launch, 0.3) && close(s.ack, 0.2) && close(s.slurmctld, 0.03), "{s:?}");
        assert_eq!((r.failed.len(), r.incomplete), (0, 0));
    }

    #[test]
    fn without_mall_runs_lines_the_total_stands_and_the_parts_are_unknown() {
        let r = read_steps(CTLD, "", 3);
        assert_eq!(r.steps.len(), 2);
        assert!(close(r.steps[0].slurmctld, 0.12) && r.steps[0].launch.is_none() && r.steps[0].ack.is_none());
        assert!(r.steps[1].launch.is_none() && r.steps[1].ack.is_none() && close(r.steps[1].slurmctld, 0.03));
        // A commit whose decision is not in the log is counted, not guessed.
        let cut: String = CTLD.lines().skip(1).map(|l| format!("{l}\n")).collect();
        let r = read_steps(&cut, APP, 3);
        assert_eq!((r.steps.len(), r.incomplete), (1, 1));
        assert_eq!(r.steps[0].kind, Kind::Shrink);
    }

    #[test]
    fn spread_takes_the_middle_and_the_ends() {
        let s = spread(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.count), (2.0, 1.0, 3.0, 3));
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[f64::NAN, 1.0]).unwrap().count, 1);
    }

    fn step(kind: Kind, nodes_after: usize, total: f64) -> Step {
        Step { kind, resize: 0, nodes_after, moved: 1, total, slurmctld: Some(0.1), launch: None, ack: Some(total) }
    }

    #[test]
    fn rows_group_by_size_and_kind() {
        let steps = vec![
            step(Kind::Expand, 2, 1.0),
            step(Kind::Expand, 2, 3.0),
            step(Kind::Shrink, 1, 0.5),
            step(Kind::Expand, 3, 2.0),
        ];
        let r = rows(&steps);
        assert_eq!(r.iter().map(|r| r.nodes).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!(r[0].expand.is_none());
        assert_eq!(r[0].shrink.unwrap().total.median, 0.5);
        let e = r[1].expand.unwrap();
        assert_eq!((e.total.median, e.total.min, e.total.max, e.total.count), (2.0, 1.0, 3.0, 2));
        assert_eq!((e.slurmctld, e.launch, e.ack), (Some(0.1), None, Some(2.0)));
        let t = table(&steps);
        assert!(t.contains("    2  2.000 (1.000-3.000)"), "{t}");
        assert!(t.contains("shrink fit: too few sizes"), "{t}");
        // (2, 1), (2, 3), (3, 2): flat at 2.
        assert!(t.contains("expand fit: seconds = 2.000 + 0.0000 * nodes (R² 0.00, 3 steps)"), "{t}");
    }

    #[test]
    fn the_fit_recovers_a_known_line() {
        let pts: Vec<(f64, f64)> = (1..=32).map(|n| (n as f64, 0.4 + 0.08 * n as f64)).collect();
        let f = fit(&pts).unwrap();
        assert!((f.a - 0.4).abs() < 1e-9 && (f.b - 0.08).abs() < 1e-9 && (f.r2 - 1.0).abs() < 1e-9, "{f:?}");
        // Noise around the line that sums to zero at each x leaves it where it was.
        let noisy: Vec<(f64, f64)> = pts.iter().flat_map(|&(x, y)| [(x, y + 0.3), (x, y - 0.3)]).collect();
        let f = fit(&noisy).unwrap();
        assert!((f.a - 0.4).abs() < 1e-9 && (f.b - 0.08).abs() < 1e-9 && f.r2 < 1.0, "{f:?}");
        assert_eq!(formula(&f).split(" (").next(), Some("seconds = 0.400 + 0.0800 * nodes"));
        let down = fit(&[(1.0, 3.0), (2.0, 2.0)]).unwrap();
        assert!(formula(&down).starts_with("seconds = 4.000 - 1.0000 * nodes"));
        assert_eq!(fit(&[(2.0, 1.0), (2.0, 3.0)]), None, "one size gives no slope");
        assert_eq!(fit(&[(2.0, 1.0)]), None);
    }

    #[test]
    fn the_plot_is_written() {
        let dir = std::env::temp_dir().join(format!("resize-latency-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fig5.png");
        let mut steps = Vec::new();
        for n in 2..=8 {
            steps.push(step(Kind::Expand, n, 0.5 + 0.05 * n as f64));
            steps.push(step(Kind::Expand, n, 0.7 + 0.05 * n as f64));
            steps.push(step(Kind::Shrink, n - 1, 0.3 + 0.02 * n as f64));
        }
        plot(&path, &steps, "test").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 1000 && bytes.starts_with(b"\x89PNG"), "{} bytes", bytes.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
