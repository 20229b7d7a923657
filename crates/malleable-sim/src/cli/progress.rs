//! Progress bars on stderr for long simulations: hidden with `--quiet` or
//! when stderr is not a terminal, so logs, pipes and CI output stay clean.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use malleable_core::StrategyChoice;
use malleable_sim::workloads::Workload;
use malleable_sim::{simulate_with_progress, SimOptions, SimResult};

/// Workloads with at least this many jobs get a progress bar in run/compare.
pub(super) const PROGRESS_MIN_JOBS: usize = 5_000;

/// A bar on stderr, or a hidden one with `--quiet` or when stderr is not a
/// terminal (so logs and CI output stay clean).
pub(super) fn progress_bar(len: u64, quiet: bool, template: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    pb.set_style(ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> "));
    pb
}

pub(super) const JOBS_TEMPLATE: &str = "{msg} [{wide_bar}] {pos}/{len} jobs done ({elapsed}, eta {eta})";

/// Simulate with a job-completion bar when the workload is big.
pub(super) fn simulate_shown(w: &Workload, kind: &StrategyChoice, opts: SimOptions, quiet: bool) -> SimResult {
    let quiet = quiet || w.jobs.len() < PROGRESS_MIN_JOBS;
    let pb = progress_bar(w.jobs.len() as u64, quiet, JOBS_TEMPLATE);
    pb.set_message(kind.to_string());
    let r = simulate_with_progress(w, kind.build().as_mut(), opts, &mut |done| pb.set_position(done as u64));
    pb.finish_and_clear();
    r
}
