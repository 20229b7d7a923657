//! A PNG like Chadha et al. 2020's Fig. 4: the machine's draw over time against the
//! power corridor, one panel per strategy, stacked with a shared time axis,
//! time outside the corridor shaded red.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::model::power_meter::PowerReport;
use crate::report::plot::{draw_legend, register_fonts, FONT};

const PANEL_HEIGHT: u32 = 330;
const WIDTH: u32 = 1400;
const DRAW: RGBColor = RGBColor(31, 119, 180);
const BOUND: RGBColor = RGBColor(40, 40, 40);
const CORRIDOR: RGBColor = RGBColor(200, 230, 200);
const OUTSIDE: RGBColor = RGBColor(230, 60, 60);

/// Points of a step function that holds each value until the next time.
fn steps(samples: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(samples.len() * 2);
    for (i, &(t, v)) in samples.iter().enumerate() {
        if i > 0 {
            out.push((t, samples[i - 1].1));
        }
        out.push((t, v));
    }
    out
}

/// Draw `runs` (strategy name, its power report) into `path`.
pub fn plot_power(path: &Path, runs: &[(&str, &PowerReport)], caption: &str) -> Result<PathBuf, String> {
    register_fonts();
    let err = |e: DrawingAreaErrorKind<_>| format!("plot {}: {e}", path.display());
    let height = PANEL_HEIGHT * runs.len().max(1) as u32 + 60;
    let root = BitMapBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (title, body) = root.split_vertically(60);
    title
        .draw(&Text::new(
            format!("System power and power corridor: {caption}"),
            (20, 18),
            (FONT, 26).into_font().style(FontStyle::Bold),
        ))
        .map_err(err)?;

    let t_end = runs.iter().filter_map(|(_, r)| r.timeline.last().map(|s| s.t)).fold(1.0f64, f64::max) / 60.0;
    let w_max =
        runs.iter().flat_map(|(_, r)| r.timeline.iter().map(|s| s.draw.max(s.high))).fold(1.0f64, f64::max) * 1.08;

    for ((name, report), area) in runs.iter().zip(body.split_evenly((runs.len().max(1), 1))) {
        let tl = &report.timeline;
        let mut chart = ChartBuilder::on(&area)
            .caption(
                format!(
                    "{name}: {} violation(s), {} break(s), {:.0} s outside, {:.2} MJ",
                    report.violations,
                    report.breaks,
                    report.seconds_outside,
                    report.energy_j / 1e6
                ),
                (FONT, 20),
            )
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..t_end, 0.0..w_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (min)")
            .y_desc("power (W)")
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .light_line_style(RGBColor(242, 242, 242))
            .draw()
            .map_err(err)?;

        // The corridor as a band, then the red stretches outside it.
        for w in tl.windows(2) {
            let (a, b) = (w[0].t / 60.0, w[1].t / 60.0);
            chart
                .draw_series(std::iter::once(Rectangle::new([(a, w[0].low), (b, w[0].high)], CORRIDOR.filled())))
                .map_err(err)?;
            if !w[0].inside() {
                let edge = if w[0].draw > w[0].high { w[0].high } else { w[0].low };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(a, edge), (b, w[0].draw)],
                        OUTSIDE.mix(0.45).filled(),
                    )))
                    .map_err(err)?;
            }
        }
        let series = |f: fn(&crate::model::power_meter::PowerSample) -> f64| {
            steps(&tl.iter().map(|s| (s.t / 60.0, f(s))).collect::<Vec<_>>())
        };
        chart
            .draw_series(LineSeries::new(series(|s| s.low), BOUND.stroke_width(2)))
            .map_err(err)?
            .label("corridor bounds")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BOUND.stroke_width(2)));
        chart.draw_series(LineSeries::new(series(|s| s.high), BOUND.stroke_width(2))).map_err(err)?;
        chart
            .draw_series(LineSeries::new(series(|s| s.draw), DRAW.stroke_width(3)))
            .map_err(err)?
            .label("system power")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], DRAW.stroke_width(3)));
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 0.85, 15).map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_each_value_until_the_next_time() {
        assert_eq!(
            steps(&[(0.0, 1.0), (2.0, 3.0), (5.0, 4.0)]),
            vec![(0.0, 1.0), (2.0, 1.0), (2.0, 3.0), (5.0, 3.0), (5.0, 4.0)]
        );
    }
}
