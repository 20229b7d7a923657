//! How long one IPSCHED program takes to solve (issue 16, item 5): windows of
//! M = 50, 100 and 200 jobs drawn from the ragged CPU-GPU ESP's job mix on
//! its 1,024 nodes of 8 cores and 2 GPUs, some nodes busy and some partly
//! used, in the class form and in the paper's per-node form. Wall-clock
//! figures, not tests.

use std::time::Instant;

use malleable_core::strategies::ipsched::model::{solve_classes, solve_exact, Limits, Solved};
use malleable_core::strategies::ipsched::problem::Problem;
use malleable_core::strategies::ipsched::{problem, Setup};
use malleable_model::{CoreRequest, Node, PendingJob, Snapshot};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::workloads::cpu_gpu_esp::{cpu_gpu_esp, CORES, GPUS, NODES};

/// The window sizes the issue asks for.
pub const WINDOWS: [usize; 3] = [50, 100, 200];

/// The program of one pass: `m` jobs of the ragged CPU-GPU ESP (seed
/// `seed`'s sizes) waiting 0 to 3 hours, each asking its cores on any
/// number of nodes, on the 1,024 nodes of which 20% to 90% are held whole
/// and up to 64 partly (1 to 7 cores and 0 to 2 GPUs spare), the rest free;
/// weighed as the strategy's defaults weigh them.
pub fn window(m: usize, seed: u64) -> Problem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let now = 1_000_000;
    let mut nodes = Node::numbered_with(vec![true; NODES], CORES, GPUS);
    let mut order: Vec<usize> = (0..NODES).collect();
    order.shuffle(&mut rng);
    let busy = (rng.gen_range(0.2..0.9) * NODES as f64) as usize;
    let partly = rng.gen_range(0..=64);
    for (k, &i) in order.iter().enumerate().take(busy + partly) {
        nodes[i].free = false;
        if k >= busy {
            nodes[i].spare_cores = rng.gen_range(1..CORES);
            nodes[i].spare_gpus = rng.gen_range(0..=GPUS);
        }
    }
    let mut mix = cpu_gpu_esp(seed, true).jobs;
    mix.shuffle(&mut rng);
    let pending = mix
        .iter()
        .take(m)
        .enumerate()
        .map(|(k, j)| {
            let r: CoreRequest = j.cores.expect("the CPU-GPU ESP's jobs ask for cores");
            PendingJob::new(k as u32, j.nodes)
                .submit(now - rng.gen_range(0..3 * 3600))
                .time_limit(Some(j.estimate.ceil() as i64))
                .asking_cores(r)
        })
        .collect();
    let s = Snapshot { now, nodes, running: Vec::new(), pending, power: None };
    let setup = Setup { window: m, response_ratio: true, favour_size: false, head_reservation: false };
    problem(&s, setup)
}

/// One form's figures over its windows.
#[derive(Clone, Debug, PartialEq)]
pub struct FormTimes {
    /// The window size.
    pub m: usize,
    /// "classes" or "exact".
    pub form: &'static str,
    /// Each window's wall time in milliseconds, model building included.
    pub ms: Vec<f64>,
    /// Windows whose search a limit stopped (their best solution kept).
    pub stopped: usize,
    /// Each window's value, `None` for one stopped or failed.
    pub values: Vec<Option<f64>>,
}

impl FormTimes {
    pub fn median(&self) -> f64 {
        crate::report::metrics::median(&self.ms)
    }

    pub fn max(&self) -> f64 {
        self.ms.iter().copied().fold(0.0, f64::max)
    }
}

/// Solve `count` windows of `m` jobs (seeds 1, 2, ...) in one form within
/// `limits`.
pub fn time_form(m: usize, count: usize, exact: bool, limits: Limits) -> FormTimes {
    let mut t =
        FormTimes { m, form: if exact { "exact" } else { "classes" }, ms: Vec::new(), stopped: 0, values: Vec::new() };
    for seed in 1..=count as u64 {
        let p = window(m, seed);
        let began = Instant::now();
        let solved = if exact { solve_exact(&p, limits) } else { solve_classes(&p, limits) };
        t.ms.push(began.elapsed().as_secs_f64() * 1e3);
        t.values.push(match solved {
            Ok(Solved::Optimal(s)) => Some(s.value),
            Ok(Solved::Stopped(_)) => {
                t.stopped += 1;
                None
            }
            Err(_) => None,
        });
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_core::strategies::ipsched::problem::Ask;

    #[test]
    fn a_window_has_its_jobs_and_a_machine_partly_used() {
        let p = window(50, 3);
        assert_eq!((p.jobs.len(), p.machine_nodes), (50, 1024));
        // 20% to 90% held whole: 102 to 922 open nodes, and some partly used.
        let free = p.nodes.iter().filter(|n| n.free).count();
        assert!((1024 - 921 - 64..=1024 - 204).contains(&free), "{free}");
        assert!(p.nodes.iter().all(|n| n.free == (n.cores == 8)), "a partly used node has 1 to 7 cores");
        assert!(p.jobs.iter().all(|j| matches!(j.ask, Ask::Cores { min_nodes: 1, max_nodes: 1024, .. })));
        assert_eq!(window(50, 3), p, "seeded");
        // Both forms find the same optimum on a small one.
        let (a, b) = (time_form(5, 1, false, Limits::default()), time_form(5, 1, true, Limits::default()));
        let (a, b) = (a.values[0].unwrap(), b.values[0].unwrap());
        assert!((a - b).abs() < 1e-6, "{a} against {b}");
    }
}
