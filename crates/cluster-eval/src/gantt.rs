//! The node-occupancy chart of one or more runs, one panel each over the
//! same time axis: a row per node, a bar per stretch of time a job held
//! it, coloured by job, malleable jobs outlined in black so that their
//! resizes show as bars starting or stopping inside the job's span.

use std::path::Path;

use malleable_sim::report::plot::{register_fonts, FONT};
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

/// The chart's size for `runs`: (width, height) in pixels.
fn size(runs: &[&RealRun]) -> (u32, u32) {
    let rows: usize = runs.iter().map(|r| r.node_names.len()).sum();
    (1400, (120 + runs.len() * 90 + rows * 18) as u32)
}

/// Draw `runs` stacked into a PNG at `path`.
pub fn draw(runs: &[&RealRun], path: &Path) -> Result<(), String> {
    let root = BitMapBackend::new(path, size(runs)).into_drawing_area();
    paint(&root, runs).map_err(|e| format!("{}: {e}", path.display()))
}

/// Draw `runs` into RGB pixels (what `draw` writes, for tests).
pub fn pixels(runs: &[&RealRun]) -> Result<(Vec<u8>, (u32, u32)), String> {
    let (w, h) = size(runs);
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        paint(&root, runs).map_err(|e| e.to_string())?;
    }
    Ok((buf, (w, h)))
}

fn paint<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    runs: &[&RealRun],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    register_fonts();
    let end = runs.iter().flat_map(|r| r.occupancy()).map(|o| o.3).fold(1.0, f64::max);
    let height = size(runs).1;
    root.fill(&WHITE)?;
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
        panel(&area, run, end)?;
    }
    root.present()
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
        .build_cartesian_2d(0.0..end * 1.02, -0.5..n as f64 - 0.5)?;
    let names = run.node_names.clone();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("seconds since the first submission")
        .y_labels(n + 1)
        .y_label_formatter(&|y| {
            // Rows are centred on whole numbers, the top one the first node.
            let i = y.round();
            if (y - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < names.len() {
                names[names.len() - 1 - i as usize].clone()
            } else {
                String::new()
            }
        })
        .label_style((FONT, if n > 32 { 9 } else { 13 }))
        .draw()?;
    let row = |node: &str| run.node_names.iter().position(|x| x == node).map(|i| (n - 1 - i) as f64);
    let malleable: Vec<u32> = run.jobs.iter().filter(|j| j.spec.malleable.is_some()).map(|j| j.spec.id).collect();
    for (node, id, a, b) in run.occupancy() {
        let Some(y) = row(&node) else { continue };
        let rect = [(a, y - 0.4), (b, y + 0.4)];
        chart.draw_series(std::iter::once(Rectangle::new(rect, colour(id).filled())))?;
        let edge = if malleable.contains(&id) { BLACK.stroke_width(2) } else { RGBColor(90, 90, 90).stroke_width(1) };
        chart.draw_series(std::iter::once(Rectangle::new(rect, edge)))?;
        if b - a > end / 40.0 {
            chart.draw_series(std::iter::once(Text::new(
                format!("{id}"),
                (a + end / 400.0, y + 0.3),
                (FONT, 11).into_font().color(&BLACK),
            )))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::records::{Change, LoggedJob};
    use crate::replay::RunJob;
    use malleable_model::{MalleableSpec, NodeConstraint};
    use malleable_sim::workloads::workload::JobSpec;

    fn job(id: u32, nodes: &[&str], start: f64, end: f64, changes: Vec<Change>, malleable: bool) -> RunJob {
        let spec = JobSpec {
            malleable: malleable.then_some(MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::None }),
            ..JobSpec::rigid(id, 0.0, nodes.len() as u32, end - start, 60.0)
        };
        let logged = LoggedJob {
            submit: Some(0.0),
            start: Some(start),
            end: Some(end),
            start_nodes: nodes.iter().map(|n| n.to_string()).collect(),
            changes,
            ..LoggedJob::default()
        };
        RunJob { spec, slurm_id: id, logged, state: "COMPLETED".into(), output: None }
    }

    /// Pixels of exactly this colour.
    fn count(buf: &[u8], c: RGBColor) -> usize {
        buf.chunks(3).filter(|p| p == &[c.0, c.1, c.2]).count()
    }

    #[test]
    fn each_job_is_drawn_where_and_while_it_held_nodes() {
        let names: Vec<String> = (1..=4).map(|i| format!("n{i}")).collect();
        let grow = Change { at: 50.0, gained: true, nodes: vec!["n3".into(), "n4".into()] };
        let run = RealRun {
            label: "t".into(),
            nodes: 4,
            node_names: names,
            jobs: vec![job(1, &["n1", "n2"], 0.0, 100.0, vec![grow], true), job(2, &["n3"], 0.0, 40.0, vec![], false)],
            t0: 0.0,
        };
        let (buf, (w, h)) = pixels(&[&run]).unwrap();
        assert_eq!(buf.len(), (w * h * 3) as usize);
        let (one, two) = (count(&buf, colour(1)), count(&buf, colour(2)));
        // Job 1: two rows for 100 s and two more for 50 s, three times job
        // 2's one row for 40 s, give or take the outlines and labels.
        assert!(two > 1000, "job 2 drawn: {two} pixels");
        let ratio = one as f64 / two as f64;
        assert!((6.0..9.0).contains(&ratio), "job 1 / job 2 pixels {ratio} ({one} / {two})");
        assert_eq!(count(&buf, colour(3)), 0, "no job 3");
        // And the PNG is written.
        let path = std::env::temp_dir().join(format!("gantt-test-{}.png", std::process::id()));
        draw(&[&run], &path).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
        let _ = std::fs::remove_file(path);
    }

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
