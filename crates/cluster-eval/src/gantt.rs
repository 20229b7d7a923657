//! The node-occupancy chart of one or more runs, one panel each over the
//! same time axis: a row per node, a bar per stretch of time a job held
//! it, coloured by job, malleable jobs outlined in black so that their
//! resizes show as bars starting or stopping inside the job's span.

use std::path::Path;

use malleable_sim::plot::{register_fonts, FONT};
use plotters::prelude::*;

use crate::replay::RealRun;

/// A distinct, stable colour for job `id` (golden-ratio hues).
fn colour(id: u32) -> RGBColor {
    let h = (f64::from(id) * 0.618_033_988_75).fract();
    let (s, v) = (0.55, 0.92);
    let i = (h * 6.0).floor();
    let f = h * 6.0 - i;
    let (p, q, t) = (v * (1.0 - s), v * (1.0 - f * s), v * (1.0 - (1.0 - f) * s));
    let (r, g, b) = match i as u32 % 6 {
        0 => (v, t, p),
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        _ => (v, p, q),
    };
    RGBColor((r * 255.0) as u8, (g * 255.0) as u8, (b * 255.0) as u8)
}

/// Draw `runs` stacked into a PNG at `path`.
pub fn draw(runs: &[&RealRun], path: &Path) -> Result<(), String> {
    register_fonts();
    let end = runs.iter().flat_map(|r| r.occupancy()).map(|o| o.3).fold(1.0, f64::max);
    let rows: usize = runs.iter().map(|r| r.node_names.len()).sum();
    let height = (120 + runs.len() * 90 + rows * 18) as u32;
    let root = BitMapBackend::new(path, (1400, height)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let weights: Vec<usize> = runs.iter().map(|r| r.node_names.len() + 5).collect();
    let total: usize = weights.iter().sum();
    let mut rest = root.clone();
    for (k, run) in runs.iter().enumerate() {
        let (area, below) = if k + 1 == runs.len() {
            (rest.clone(), rest.clone())
        } else {
            rest.split_vertically(height as i32 * weights[k] as i32 / total as i32)
        };
        rest = below;
        panel(&area, run, end).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    run: &RealRun,
    end: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let n = run.node_names.len();
    let mut chart = ChartBuilder::on(area)
        .caption(&run.label, (FONT, 22))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..end * 1.02, 0.0..n as f64)?;
    let names = run.node_names.clone();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("seconds since the first submission")
        .y_labels(n.min(32))
        .y_label_formatter(&|y| {
            let i = y.floor() as usize;
            if (y - y.floor()).abs() < 1e-9 && i < names.len() {
                names[names.len() - 1 - i].clone()
            } else {
                String::new()
            }
        })
        .label_style((FONT, 13))
        .draw()?;
    let row = |node: &str| run.node_names.iter().position(|x| x == node).map(|i| (n - 1 - i) as f64);
    let malleable: Vec<u32> = run.jobs.iter().filter(|j| j.spec.malleable.is_some()).map(|j| j.spec.id).collect();
    for (node, id, a, b) in run.occupancy() {
        let Some(y) = row(&node) else { continue };
        let rect = [(a, y + 0.1), (b, y + 0.9)];
        chart.draw_series(std::iter::once(Rectangle::new(rect, colour(id).filled())))?;
        let edge = if malleable.contains(&id) { BLACK.stroke_width(2) } else { RGBColor(90, 90, 90).stroke_width(1) };
        chart.draw_series(std::iter::once(Rectangle::new(rect, edge)))?;
        if b - a > end / 40.0 {
            chart.draw_series(std::iter::once(Text::new(
                format!("{id}"),
                (a + end / 400.0, y + 0.75),
                (FONT, 11).into_font().color(&BLACK),
            )))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_differ_between_neighbouring_jobs() {
        for id in 1..200u32 {
            let (a, b) = (colour(id), colour(id + 1));
            let d = (i32::from(a.0) - i32::from(b.0)).abs()
                + (i32::from(a.1) - i32::from(b.1)).abs()
                + (i32::from(a.2) - i32::from(b.2)).abs();
            assert!(d > 60, "jobs {id} and {} look alike: {a:?} {b:?}", id + 1);
        }
    }
}
