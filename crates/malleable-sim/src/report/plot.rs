//! PNG plots of a sweep, laid out as Chadha et al. 2020's Fig. 3: (a) makespan, (b)
//! utilization, (c) mean response, (d) mean wait, each against the fraction of
//! malleable jobs, one line per strategy. Text is drawn with DejaVu Sans
//! embedded in the binary, so no system font or fontconfig is needed.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::sweep::MeanRow;

/// One panel of Fig. 3.
pub struct Panel {
    /// File name of the panel's own PNG.
    pub file: &'static str,
    pub title: &'static str,
    pub y_label: &'static str,
    pub value: fn(&MeanRow) -> f64,
}

/// The four metrics of Chadha et al. 2020's Fig. 3, in its panel order.
pub const FIG3: [Panel; 4] = [
    Panel { file: "fig3a-makespan.png", title: "(a) Makespan", y_label: "makespan (s)", value: |m| m.makespan_s },
    Panel {
        file: "fig3b-utilization.png",
        title: "(b) Average system utilization",
        y_label: "utilization (%)",
        value: |m| 100.0 * m.utilization,
    },
    Panel {
        file: "fig3c-response.png",
        title: "(c) Average response time",
        y_label: "mean response time (s)",
        value: |m| m.mean_response_s,
    },
    Panel {
        file: "fig3d-wait.png",
        title: "(d) Average waiting time",
        y_label: "mean waiting time (s)",
        value: |m| m.mean_wait_s,
    },
];

pub const FONT: &str = "sans-serif";

pub fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are DejaVu Sans, known-good TTFs: registration cannot fail.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// The legend every plot draws: boxed in black on a see-through white
/// (`opacity`) at `position`, its labels in `FONT` at `font_size`. One
/// helper so that the sweep's, compare's and power's plots read alike.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    opacity: f64,
    font_size: u32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(opacity))
        .border_style(BLACK)
        .label_font((FONT, font_size))
        .draw()
}

/// Line (and bar) colours, one per strategy in order of first appearance,
/// cycled past ten.
pub const COLOURS: [RGBColor; 10] = [
    RGBColor(0, 0, 0),
    RGBColor(230, 97, 1),
    RGBColor(31, 120, 180),
    RGBColor(51, 160, 44),
    RGBColor(152, 78, 163),
    RGBColor(166, 118, 29),
    RGBColor(227, 26, 28),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(247, 129, 191),
];

/// The strategies in `means`, in order of first appearance.
fn strategies(means: &[MeanRow]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for m in means {
        if !out.contains(&m.strategy.as_str()) {
            out.push(&m.strategy);
        }
    }
    out
}

fn draw_panel<'b>(
    area: &DrawingArea<BitMapBackend<'b>, Shift>,
    panel: &Panel,
    caption: &str,
    means: &[MeanRow],
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<_>| format!("plot {}: {e}", panel.file);
    area.fill(&WHITE).map_err(err)?;
    let (mut lo, mut hi) =
        means.iter().map(panel.value).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.02).max(1e-9);
    // Headroom above the data for the legend, so it never hides a line.
    let (y0, y1) = ((lo - pad).max(0.0), hi + pad + (hi - lo + pad) * 0.35);
    let (x0, x1) =
        means.iter().map(|m| m.fraction).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    let (x0, x1) = if x0.is_finite() && x1 > x0 { (x0 - 0.03, x1 + 0.03) } else { (0.0, 1.05) };

    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: {caption}", panel.title), (FONT, 24).into_font().style(FontStyle::Bold))
        .margin(18)
        .x_label_area_size(56)
        .y_label_area_size(88)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("fraction of malleable jobs")
        .y_desc(panel.y_label)
        .x_labels(11)
        .y_labels(8)
        .x_label_formatter(&|x| format!("{x:.1}"))
        .y_label_formatter(&|y| {
            if (y1 - y0) >= 100.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        })
        .label_style((FONT, 17))
        .axis_desc_style((FONT, 19))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()
        .map_err(err)?;

    for (i, name) in strategies(means).into_iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<(f64, f64)> =
            means.iter().filter(|m| m.strategy == name).map(|m| (m.fraction, (panel.value)(m))).collect();
        let style = colour.stroke_width(3);
        chart
            .draw_series(LineSeries::new(points.clone(), style))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3)));
        // Markers of a different shape per strategy, for grey-scale prints.
        let pts = points.iter().copied();
        match i % 4 {
            0 => chart.draw_series(pts.map(|p| Circle::new(p, 5, colour.filled()))),
            1 => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 7, colour.filled()))),
            2 => chart.draw_series(pts.map(|p| Cross::new(p, 6, colour.stroke_width(3)))),
            _ => chart
                .draw_series(pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-5, -5), (5, 5)], colour.filled()))),
        }
        .map_err(err)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 0.85, 18).map_err(err)?;
    Ok(())
}

/// Write the four panels as their own PNGs and together as `fig3.png` (2 x 2)
/// into `dir`; `caption` (e.g. "esp, 32 nodes, mean of 5 seeds") follows
/// each panel's title. Returns the paths written.
pub fn plot_fig3(dir: &Path, means: &[MeanRow], caption: &str) -> Result<Vec<PathBuf>, String> {
    register_fonts();
    let mut written = Vec::new();
    for panel in &FIG3 {
        let path = dir.join(panel.file);
        let area = BitMapBackend::new(&path, (900, 640)).into_drawing_area();
        draw_panel(&area, panel, caption, means)?;
        area.present().map_err(|e| format!("write {}: {e}", path.display()))?;
        drop(area);
        written.push(path);
    }
    let path = dir.join("fig3.png");
    let area = BitMapBackend::new(&path, (1800, 1280)).into_drawing_area();
    for (sub, panel) in area.split_evenly((2, 2)).iter().zip(&FIG3) {
        draw_panel(sub, panel, caption, means)?;
    }
    area.present().map_err(|e| format!("write {}: {e}", path.display()))?;
    drop(area);
    written.push(path);
    Ok(written)
}
