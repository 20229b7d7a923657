//! The `sweep` driver: Chadha et al. 2020's Fig. 3 over fractions, seeds and
//! strategies, written as CSVs and PNGs, its means printed as tables.

use malleable_sim::report::{plot, sweep};

use super::args::SweepArgs;
use super::load::load_workload;
use super::progress::progress_bar;
use super::tables::print_means;

pub(super) fn run_sweep(a: SweepArgs, quiet: bool) -> Result<(), String> {
    let fractions = if a.fractions.is_empty() { sweep::paper_fractions() } else { a.fractions.clone() };
    // A bad --workload is said before anything is made or run (and leaves
    // no empty --out folder behind).
    load_workload(&a.workload, a.shared.nodes, fractions[0], a.seeds[0], a.shared.arrival_scale, false)?;
    std::fs::create_dir_all(&a.out).map_err(|e| format!("--out {}: {e}", a.out.display()))?;
    let total = (fractions.len() * a.seeds.len() * a.strategies.0.len()) as u64;
    let pb = progress_bar(total, quiet, "{msg} [{wide_bar}] {pos}/{len} simulations ({elapsed}, eta {eta})");
    let opts = a.shared.options();
    let mut machine = 0;
    let rows = sweep::run_sweep(
        &fractions,
        &a.seeds,
        &a.strategies.0,
        opts,
        &mut |fraction, seed| {
            pb.set_message(format!("fraction {fraction:.1} seed {seed}"));
            let w = load_workload(&a.workload, a.shared.nodes, fraction, seed, a.shared.arrival_scale, false)?;
            machine = w.nodes;
            Ok(w)
        },
        &mut |_| pb.inc(1),
    )?;
    pb.finish_and_clear();
    let means = sweep::means(&rows);
    let write = |name: &str, text: String| {
        let path = a.out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("--out {}: {e}", path.display()))?;
        Ok::<_, String>(path)
    };
    let mut written =
        vec![write("sweep.csv", sweep::rows_csv(&rows))?, write("sweep-means.csv", sweep::means_csv(&means))?];
    let caption = format!(
        "{}, {machine} nodes, mean of {} seed{}",
        a.workload,
        a.seeds.len(),
        if a.seeds.len() == 1 { "" } else { "s" }
    );
    written.extend(plot::plot_fig3(&a.out, &means, &caption)?);
    print_means(&means);
    for p in written {
        outln!("wrote {}", p.display());
    }
    Ok(())
}
