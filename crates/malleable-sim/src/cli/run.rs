//! The `run` and `compare` drivers: one strategy, or several on the same
//! workload over seeds, with the table, the JSON, per-run files and the plots.

use std::path::{Path, PathBuf};

use malleable_core::StrategyChoice;
use malleable_sim::model::power_meter::PowerReport;
use malleable_sim::report::metrics::{jobs_csv, summarize, Summary};
use malleable_sim::report::{plot_compare, plot_power};
use malleable_sim::workloads::mpdata::static_flavor;
use malleable_sim::workloads::Workload;
use malleable_sim::SimResult;

use super::args::{Common, Compared};
use super::load::load;
use super::progress::simulate_shown;
use super::tables::{print_columns, print_paired, print_table};

/// `run`: one strategy, its table, and with `--out` its files.
pub(super) fn run(common: &Common, strategy: &StrategyChoice, out: Option<PathBuf>, quiet: bool) -> Result<(), String> {
    let w = load(common)?;
    let (s, r) = run_one(&w, strategy, common, quiet);
    print_table(std::slice::from_ref(&s));
    if let Some(dir) = out {
        write_out(&dir, &s.strategy, &s, &r)?;
        let power: Vec<_> = r.power.map(|p| (s.strategy.clone(), p)).into_iter().collect();
        write_power(&dir, &w, &power)?;
    }
    Ok(())
}

pub(super) fn run_one(w: &Workload, kind: &StrategyChoice, c: &Common, quiet: bool) -> (Summary, SimResult) {
    let opts = c.options();
    let r = simulate_shown(w, kind, opts, quiet);
    (summarize(kind, &r), r)
}

pub(super) fn write_out(dir: &PathBuf, name: &str, s: &Summary, r: &SimResult) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(s).unwrap();
    std::fs::write(dir.join(format!("{name}.summary.json")), json).map_err(|e| e.to_string())?;
    std::fs::write(dir.join(format!("{name}.jobs.csv")), jobs_csv(r)).map_err(|e| e.to_string())
}

/// For workloads with a corridor: `power.png` (Chadha et al. 2020's Fig. 4) and each
/// strategy's draw over time as `<strategy>.power.csv`.
pub(super) fn write_power(dir: &Path, w: &Workload, runs: &[(String, PowerReport)]) -> Result<(), String> {
    if runs.is_empty() {
        return Ok(());
    }
    for (name, r) in runs {
        let mut csv = String::from("t_s,draw_w,corridor_low_w,corridor_high_w\n");
        for p in &r.timeline {
            csv += &format!("{:.3},{:.1},{:.1},{:.1}\n", p.t, p.draw, p.low, p.high);
        }
        let path = dir.join(format!("{name}.power.csv"));
        std::fs::write(&path, csv).map_err(|e| format!("--out {}: {e}", path.display()))?;
    }
    let refs: Vec<(&str, &PowerReport)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    let path = plot_power::plot_power(&dir.join("power.png"), &refs, &format!("{}, {} nodes", w.name, w.nodes))?;
    outln!("wrote {}", path.display());
    Ok(())
}

pub(super) fn workload_json(w: &Workload, c: &Common) -> serde_json::Value {
    serde_json::json!({
        "name": w.name, "nodes": w.nodes, "jobs": w.jobs.len(),
        "malleable_fraction": c.malleable_fraction, "seed": c.seed,
        "arrival_scale": c.shared.arrival_scale, "app_model": c.shared.app_model.name(),
        "priority": c.priority.name(),
    })
}

/// `compare`: every strategy on the workload of each seed (the static
/// flavor for `static`), one table of medians over the seeds.
pub(super) fn run_compare(
    common: &Common,
    runs: &Compared,
    seeds: Option<Vec<u64>>,
    json: Option<PathBuf>,
    out: Option<PathBuf>,
    plot: Option<PathBuf>,
    quiet: bool,
) -> Result<(), String> {
    let seeds = seeds.unwrap_or_else(|| vec![common.seed]);
    let mut columns: Vec<Vec<Summary>> = vec![Vec::new(); runs.0.len()];
    let mut results = Vec::new();
    let mut first = None;
    for &seed in &seeds {
        let c = Common { seed, ..common.clone() };
        let w = load(&c)?;
        let mut power = Vec::new();
        for (k, run) in runs.0.iter().enumerate() {
            let flavored;
            let used = if run.static_flavor {
                flavored = static_flavor(&w);
                &flavored
            } else {
                &w
            };
            let (mut s, r) = run_one(used, &run.choice, &c, quiet);
            s.strategy = run.label();
            let name = if seeds.len() == 1 { s.strategy.clone() } else { format!("{}.seed{seed}", s.strategy) };
            if let Some(dir) = &out {
                write_out(dir, &name, &s, &r)?;
            }
            power.extend(r.power.map(|p| (name, p)));
            let mut v = serde_json::to_value(&s).map_err(|e| e.to_string())?;
            v["seed"] = serde_json::json!(seed);
            results.push(v);
            columns[k].push(s);
        }
        if let Some(dir) = &out {
            write_power(dir, &w, &power)?;
        }
        first.get_or_insert_with(|| workload_json(&w, &c));
    }
    if seeds.len() > 1 {
        outln!("median over seeds {seeds:?}");
    }
    print_columns(&columns);
    if seeds.len() > 1 {
        outln!();
        print_paired(&columns);
    }
    if let Some(path) = json {
        let v = serde_json::json!({ "workload": first, "seeds": seeds, "results": results });
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap())
            .map_err(|e| format!("--json {}: {e}", path.display()))?;
    }
    if let Some(path) = plot {
        let name = first.as_ref().and_then(|v| v["name"].as_str()).unwrap_or(&common.workload);
        plot_compare::plot_compare(&path, &columns, name, &seeds).map_err(|e| format!("--plot: {e}"))?;
        outln!("wrote {}", path.display());
    }
    Ok(())
}
