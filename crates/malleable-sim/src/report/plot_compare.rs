//! `compare --plot`: a PNG laid out as D'Amico et al. 2019's Figs. 1-3, one group of
//! bars per metric (makespan, mean response, mean slowdown, mean wait) and one bar per
//! compared column, each the column's figure over the first column's (so the first is 1.0).

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::report::metrics::{median, Summary};
use crate::report::plot::{draw_legend, register_fonts, COLOURS, FONT};

/// The PNG's size in pixels.
pub const SIZE: (u32, u32) = (1200, 700);

/// A bar group's metric: its name on the x axis and how to read it.
pub type Metric = (&'static str, fn(&Summary) -> f64);

/// The metrics of the plot, one bar group each, in their order on the x axis.
pub const METRICS: [Metric; 4] = [
    ("makespan", |s| s.makespan_s),
    ("mean response time", |s| s.mean_response_s),
    ("mean slowdown", |s| s.mean_slowdown),
    ("mean wait time", |s| s.mean_wait_s),
];

/// The x axis's units per bar group.
const GROUP: i32 = 1000;

/// One metric's bars: each column's figure over the first column's, in
/// column order; `None` where a column has no finite figure for it.
#[derive(Clone, Debug, PartialEq)]
pub struct BarGroup {
    pub metric: &'static str,
    pub ratios: Vec<Option<f64>>,
}

/// What the plot shows: the columns' names, the bar groups that could be
/// normalised, and a note for each group or bar left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Bars {
    pub labels: Vec<String>,
    pub groups: Vec<BarGroup>,
    pub notes: Vec<String>,
}

/// The figure `compare` prints in a column's cell: the median over the
/// column's runs (one per seed); `None` for a column without runs.
fn cell(column: &[Summary], value: fn(&Summary) -> f64) -> Option<f64> {
    let values: Vec<f64> = column.iter().map(value).collect();
    (!values.is_empty()).then(|| median(&values))
}

/// Normalise `compare`'s columns (one `Vec` of runs per strategy, in the
/// order given) by the first: a metric whose first-column figure is 0 or
/// not finite is left out, with a note, rather than divided by.
pub fn normalise(columns: &[Vec<Summary>]) -> Bars {
    let labels: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(k, c)| c.first().map_or_else(|| format!("column {}", k + 1), |s| s.strategy.clone()))
        .collect();
    let mut groups = Vec::new();
    let mut notes = Vec::new();
    let Some(first) = columns.first() else {
        return Bars { labels, groups, notes };
    };
    for (metric, value) in METRICS {
        let base = cell(first, value);
        let base = match base {
            Some(b) if b != 0.0 && b.is_finite() => b,
            _ => {
                let shown = base.map_or_else(|| "none".to_string(), |b| b.to_string());
                notes.push(format!("{metric} left out: {}'s figure is {shown}", labels[0]));
                continue;
            }
        };
        let mut ratios = Vec::with_capacity(columns.len());
        for (c, label) in columns.iter().zip(&labels) {
            let ratio = cell(c, value).map(|v| v / base).filter(|r| r.is_finite());
            if ratio.is_none() {
                notes.push(format!("{metric}: {label}'s bar left out, its figure is not finite"));
            }
            ratios.push(ratio);
        }
        groups.push(BarGroup { metric, ratios });
    }
    Bars { labels, groups, notes }
}

/// `seeds` as a short list, consecutive ones as ranges: "1-3, 7".
pub fn seed_list(seeds: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seeds.len() {
        let mut j = i;
        while j + 1 < seeds.len() && seeds[j + 1] == seeds[j].wrapping_add(1) {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", seeds[i], seeds[j]) } else { seeds[i].to_string() });
        i = j + 1;
    }
    parts.join(", ")
}

/// The plot's title: the workload, what the bars are relative to, and the seeds.
pub fn title(workload: &str, first: &str, seeds: &[u64]) -> String {
    let seeds = match seeds {
        [] => String::new(),
        [one] => format!(", seed {one}"),
        many => format!(", median over seeds {}", seed_list(many)),
    };
    format!("{workload}: relative to {first}{seeds}")
}

/// Draw `columns` (as [`normalise`] takes them) as grouped bars into the
/// PNG `path`, [`SIZE`] pixels, for `workload` run on `seeds`. The notes of
/// groups or bars left out go to stderr.
pub fn plot_compare(path: &Path, columns: &[Vec<Summary>], workload: &str, seeds: &[u64]) -> Result<(), String> {
    let bars = normalise(columns);
    for note in &bars.notes {
        eprintln!("plot {}: {note}", path.display());
    }
    // Opened first, so that a path that cannot be written is said plainly
    // (the PNG encoder's own error is a debug dump).
    std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    register_fonts();
    let err = |e: DrawingAreaErrorKind<_>| format!("plot {}: {e}", path.display());
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let first = bars.labels.first().map_or("the first column", String::as_str);

    let n = bars.groups.len().max(1);
    let k = bars.labels.len().max(1);
    let all = || bars.groups.iter().flat_map(|g| g.ratios.iter().flatten().copied());
    let hi = all().fold(1.0f64, f64::max);
    let y0 = all().fold(0.0f64, f64::min);
    // Room above the tallest bar for its value, then for the legend (one
    // row per column) in the upper right, so that it never hides a bar.
    let top = hi + (hi - y0) * 0.1;
    let plot_px = f64::from(SIZE.1) - 170.0;
    let legend = ((26.0 * k as f64 + 24.0) / plot_px).min(0.6);
    let y1 = y0 + (top - y0) / (1.0 - legend);

    // x in thousandths of a group (integers, so the axis takes the groups'
    // centres as its own labels): group g spans [1000 g, 1000 (g + 1)).
    let centres: Vec<i32> = (0..n as i32).map(|g| g * GROUP + GROUP / 2).collect();
    let names: Vec<&str> = bars.groups.iter().map(|g| g.metric).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(title(workload, first, seeds), (FONT, 24).into_font().style(FontStyle::Bold))
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d((0..n as i32 * GROUP).with_key_points(centres), y0..y1)
        .map_err(err)?;
    let group_name = |x: &i32| names.get((x / GROUP).max(0) as usize).map_or_else(String::new, |m| m.to_string());
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_label_formatter(&group_name)
        .y_label_formatter(&|y| format!("{y:.2}"))
        .y_labels(10)
        .y_desc(format!("ratio to {first}"))
        .label_style((FONT, 18))
        .axis_desc_style((FONT, 19))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(err)?;
    if bars.groups.is_empty() {
        let (x, y) = chart.backend_coord(&(n as i32 * GROUP / 2, (y0 + y1) / 2.0));
        root.draw(&Text::new(
            format!("nothing to plot: {first}'s figures are all 0 or not finite"),
            (x, y),
            TextStyle::from((FONT, 20).into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(err)?;
    }

    // A group's bars share its middle 80%, with a gap between neighbours.
    let slot = f64::from(GROUP) * 0.8 / k as f64;
    let span = |g: usize, j: usize| {
        let left = f64::from(GROUP) * (g as f64 + 0.1) + j as f64 * slot;
        ((left + slot * 0.08).round() as i32, (left + slot * 0.92).round() as i32)
    };
    let (px0, _) = chart.backend_coord(&(span(0, 0).0, 0.0));
    let (px1, _) = chart.backend_coord(&(span(0, 0).1, 0.0));
    let show_values = px1 - px0 >= 40;
    for (j, label) in bars.labels.iter().enumerate() {
        let colour = COLOURS[j % COLOURS.len()];
        let rects = bars.groups.iter().enumerate().filter_map(|(g, group)| {
            let r = group.ratios.get(j).copied().flatten()?;
            let (a, b) = span(g, j);
            Some(Rectangle::new([(a, 0.0), (b, r)], colour.filled()))
        });
        chart
            .draw_series(rects)
            .map_err(err)?
            .label(label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 7), (x + 22, y + 7)], colour.filled()));
    }
    // The first column's level.
    chart.draw_series(LineSeries::new([(0, 1.0), (n as i32 * GROUP, 1.0)], BLACK.stroke_width(2))).map_err(err)?;
    // Each bar's ratio as compare prints it, above (below, if negative) the bar.
    // Left out when the bars are too narrow for it.
    if show_values {
        let texts = bars.groups.iter().enumerate().flat_map(|(g, group)| {
            group.ratios.iter().enumerate().filter_map(move |(j, r)| {
                let r = (*r)?;
                let (a, b) = span(g, j);
                let pos = Pos::new(HPos::Center, if r >= 0.0 { VPos::Bottom } else { VPos::Top });
                let dy = if r >= 0.0 { -3 } else { 3 };
                let style = TextStyle::from((FONT, 15).into_font()).pos(pos);
                Some(EmptyElement::at(((a + b) / 2, r)) + Text::new(format!("{r:.3}"), (0, dy), style))
            })
        });
        chart.draw_series(texts).map_err(err)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 0.9, 18).map_err(err)?;
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `strategy` with these makespan, mean response, mean slowdown
    /// and mean wait.
    fn run(strategy: &str, [makespan_s, mean_response_s, mean_slowdown, mean_wait_s]: [f64; 4]) -> Summary {
        Summary {
            strategy: strategy.into(),
            makespan_s,
            mean_response_s,
            mean_slowdown,
            mean_wait_s,
            ..Summary::default()
        }
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn normalise_divides_each_column_by_the_first_in_metric_order() {
        let columns = vec![
            vec![run("easy", [100.0, 40.0, 4.0, 20.0])],
            vec![run("sd-policy[MaxSlowdown=2]", [90.0, 50.0, 2.0, 5.0])],
        ];
        let bars = normalise(&columns);
        assert_eq!(bars.labels, ["easy", "sd-policy[MaxSlowdown=2]"]);
        assert!(bars.notes.is_empty());
        let metrics: Vec<&str> = bars.groups.iter().map(|g| g.metric).collect();
        assert_eq!(metrics, ["makespan", "mean response time", "mean slowdown", "mean wait time"]);
        for (group, want) in bars.groups.iter().zip([0.9, 1.25, 0.5, 0.25]) {
            assert_eq!(group.ratios[0], Some(1.0), "{}", group.metric);
            assert!(close(group.ratios[1], want), "{}: {:?}, want {want}", group.metric, group.ratios[1]);
        }
    }

    #[test]
    fn normalise_uses_the_median_over_seeds_as_compare_prints() {
        // Makespans 100, 300, 200 (median 200) against 150, 450, 1000 (median 450).
        let columns = vec![
            [100.0, 300.0, 200.0].map(|m| run("easy", [m, 1.0, 1.0, 1.0])).to_vec(),
            [150.0, 450.0, 1000.0].map(|m| run("sd-policy", [m, 1.0, 1.0, 1.0])).to_vec(),
        ];
        let bars = normalise(&columns);
        assert!(close(bars.groups[0].ratios[1], 2.25), "{:?}", bars.groups[0]);
        // An even count takes the mean of the middle two, as compare does.
        let columns = vec![
            [100.0, 300.0].map(|m| run("easy", [m, 1.0, 1.0, 1.0])).to_vec(),
            [100.0, 500.0].map(|m| run("sd-policy", [m, 1.0, 1.0, 1.0])).to_vec(),
        ];
        assert!(close(normalise(&columns).groups[0].ratios[1], 1.5));
    }

    #[test]
    fn normalise_leaves_out_a_group_whose_baseline_is_zero_or_not_finite() {
        let columns = vec![
            vec![run("easy", [100.0, f64::NAN, 2.0, 0.0])],
            vec![run("sd-policy", [50.0, 30.0, f64::INFINITY, 10.0])],
        ];
        let bars = normalise(&columns);
        let metrics: Vec<&str> = bars.groups.iter().map(|g| g.metric).collect();
        // Mean response (NaN) and mean wait (0) are left out; makespan stays.
        assert_eq!(metrics, ["makespan", "mean slowdown"]);
        assert!(close(bars.groups[0].ratios[1], 0.5));
        // A non-finite figure in another column leaves only its bar out.
        assert_eq!(bars.groups[1].ratios, [Some(1.0), None]);
        assert_eq!(bars.notes.len(), 3, "{:?}", bars.notes);
        assert!(bars.notes.iter().any(|n| n.contains("mean wait time left out") && n.contains("easy")));
        assert!(bars.notes.iter().any(|n| n.contains("mean response time left out")));
        assert!(bars.notes.iter().all(|n| !n.contains("makespan")));
    }

    #[test]
    fn title_names_the_workload_and_the_seeds() {
        assert_eq!(title("lublin:500:128:48", "easy", &[1]), "lublin:500:128:48: relative to easy, seed 1");
        assert_eq!(title("esp", "easy", &[1, 2, 3, 7, 9, 10]), "esp: relative to easy, median over seeds 1-3, 7, 9-10");
    }

    /// A directory of this test's own under the system's temp dir.
    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("malleable-sim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn plot_compare_writes_a_png_of_the_requested_size() {
        let dir = temp_dir("plot-compare");
        let path = dir.join("compare.png");
        let columns = vec![
            vec![run("easy", [100.0, 40.0, 4.0, 20.0]), run("easy", [120.0, 44.0, 5.0, 22.0])],
            vec![run("sd-policy", [90.0, 50.0, 2.0, 5.0]), run("sd-policy", [95.0, 52.0, 3.0, 6.0])],
            vec![run("sd-policy[MaxSlowdown=2]", [80.0, 30.0, 1.5, 0.0]), run("x", [85.0, 33.0, 1.6, 1.0])],
        ];
        let result = plot_compare(&path, &columns, "lublin:500:128:48", &[1, 2]);
        let bytes = std::fs::read(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        result.unwrap();
        let bytes = bytes.unwrap();
        assert_eq!(bytes[..8], [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n']);
        assert_eq!(&bytes[12..16], b"IHDR");
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!((width, height), SIZE);
        assert_eq!(SIZE, (1200, 700));
    }

    #[test]
    fn plot_compare_names_a_path_it_cannot_write() {
        let dir = temp_dir("plot-compare-bad");
        let path = dir.join("no-such-dir").join("compare.png");
        let columns = vec![vec![run("easy", [100.0, 40.0, 4.0, 20.0])]];
        let result = plot_compare(&path, &columns, "esp", &[1]);
        std::fs::remove_dir_all(&dir).unwrap();
        let e = result.unwrap_err();
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
}
