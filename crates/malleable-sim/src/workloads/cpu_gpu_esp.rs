//! The CPU-GPU ESP of Soner and Ozturan (IPSCHED, Table 4): ESP-2's job
//! types A-M, each job twice (once on CPU cores only, once with 2 GPUs on
//! every node it uses), plus the two full-machine Z jobs: 458 jobs on 1,024
//! nodes of 8 cores and 2 GPUs, asking for cores rather than nodes. The
//! `ragged` variant (their Table 7) moves each size by up to 4 cores either
//! way and lets a job spread over any number of nodes.
//!
//! What the paper leaves open, and what is chosen here:
//! - a size is the type's fraction of the 8,192 cores, rounded to whole
//!   cores (H's 0.15820 and K's 0.09570 are ESP-2's 81/512 and 49/512,
//!   1,296 and 784 cores: whole nodes, as the paper says every size is);
//! - without the ragged change a job asks for exactly its cores / 8 nodes
//!   (constraint (5) on: Nmin = Nmax), so it runs on whole nodes;
//! - the order is a seeded shuffle of the 456 A-M jobs; the first 50 are
//!   submitted at t = 0, the rest one after another with Gaussian gaps of
//!   mean 30 s (standard deviation 10 s, none below 0); the Z jobs come at
//!   the 160th and 480th minute, ESP's 80th and 240th doubled as the paper
//!   doubled the job count;
//! - the run times are Table 4's, and the time limits equal them (the
//!   paper ran sleep jobs; IPSCHED itself never reads a limit).

use malleable_model::CoreRequest;
use rand::seq::SliceRandom;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::workloads::{JobSpec, Workload};

/// Table 4: type, fraction of the machine's cores, count, run time (s).
pub const TABLE_4: [(&str, f64, u32, f64); 14] = [
    ("A", 0.03125, 75, 257.0),
    ("B", 0.06250, 9, 341.0),
    ("C", 0.50000, 3, 536.0),
    ("D", 0.25000, 3, 601.0),
    ("E", 0.50000, 3, 312.0),
    ("F", 0.06250, 9, 1846.0),
    ("G", 0.12500, 6, 1321.0),
    ("H", 0.15820, 6, 1078.0),
    ("I", 0.03125, 24, 1438.0),
    ("J", 0.06250, 24, 715.0),
    ("K", 0.09570, 15, 495.0),
    ("L", 0.12500, 36, 369.0),
    ("M", 0.25000, 15, 192.0),
    ("Z", 1.00000, 2, 100.0),
];

pub const NODES: usize = 1024;
pub const CORES: u32 = 8;
pub const GPUS: u32 = 2;
/// Jobs submitted at t = 0.
pub const FIRST: usize = 50;
pub const GAP_MEAN: f64 = 30.0;
pub const GAP_SD: f64 = 10.0;
/// When the Z jobs come, in seconds.
pub const Z_AT: [f64; 2] = [160.0 * 60.0, 480.0 * 60.0];
/// How far a ragged size moves, either way, in cores.
pub const RAGGED: i64 = 4;

/// The workload for `seed`; `ragged` is Table 7's variant.
pub fn cpu_gpu_esp(seed: u64, ragged: bool) -> Workload {
    let total = NODES as u32 * CORES;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // (cores, GPUs per node, run time) of every A-M job, each type's jobs
    // once on cores alone and once with GPUs.
    let mut jobs: Vec<(u32, u32, f64)> = Vec::new();
    for &(name, fraction, count, time) in &TABLE_4 {
        if name == "Z" {
            continue;
        }
        let cores = (fraction * f64::from(total)).round() as u32;
        for gpus in [0, GPUS] {
            jobs.extend((0..count).map(|_| (cores, gpus, time)));
        }
    }
    jobs.shuffle(&mut rng);
    let gap = Normal::new(GAP_MEAN, GAP_SD).expect("a valid normal distribution");
    // The sizes' moves from a stream of their own: the ragged variant has
    // the same jobs at the same times, only their sizes differ.
    let mut moves = ChaCha8Rng::seed_from_u64(seed);
    moves.set_stream(1);
    let mut t = 0.0;
    let mut specs = Vec::with_capacity(jobs.len() + 2);
    for (i, (cores, gpus, time)) in jobs.into_iter().enumerate() {
        if i >= FIRST {
            t += f64::max(gap.sample(&mut rng), 0.0);
        }
        let cores = if ragged {
            let moved = i64::from(cores) + moves.gen_range(-RAGGED..=RAGGED);
            moved.clamp(1, i64::from(total)) as u32
        } else {
            cores
        };
        specs.push(spec(specs.len() as u32 + 1, t, cores, gpus, time, ragged));
    }
    let z = TABLE_4.iter().find(|r| r.0 == "Z").expect("Table 4 has Z");
    for at in Z_AT {
        specs.push(spec(specs.len() as u32 + 1, at, total, 0, z.3, ragged));
    }
    specs.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id)));
    let name = if ragged { "cpu-gpu-esp-ragged" } else { "cpu-gpu-esp" };
    Workload { name: name.into(), nodes: NODES, jobs: specs, power: None, cores: CORES, gpus: GPUS }
}

/// One job: `cores` (and `gpus` on each node it uses) for `time` seconds;
/// on exactly cores / 8 nodes unless `ragged`, then on any count.
fn spec(id: u32, submit: f64, cores: u32, gpus: u32, time: f64, ragged: bool) -> JobSpec {
    let fewest = cores.div_ceil(CORES);
    let (min_nodes, max_nodes) = if ragged { (1, NODES as u32) } else { (fewest, fewest) };
    JobSpec {
        cores: Some(CoreRequest { cores, gpus_per_node: gpus, min_nodes, max_nodes }),
        ..JobSpec::rigid(id, submit, fewest, time, time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_4_gives_458_jobs_half_of_a_m_with_gpus_and_whole_nodes() {
        let w = cpu_gpu_esp(1, false);
        assert_eq!((w.nodes, w.cores, w.gpus, w.jobs.len()), (1024, 8, 2, 458));
        let req = |j: &JobSpec| j.cores.unwrap();
        let with_gpus = w.jobs.iter().filter(|j| req(j).gpus_per_node == 2).count();
        assert_eq!(with_gpus, 228, "every A-M job once with GPUs");
        // Every size is whole nodes, asked as exactly that many.
        assert!(w
            .jobs
            .iter()
            .all(|j| req(j).cores % 8 == 0 && req(j).min_nodes == j.nodes && req(j).max_nodes == j.nodes));
        // H and K: ESP-2's 81/512 and 49/512 of the machine.
        assert_eq!(w.jobs.iter().filter(|j| req(j).cores == 1296).count(), 12);
        assert_eq!(w.jobs.iter().filter(|j| req(j).cores == 784).count(), 30);
        // The work in whole-machine seconds: the paper's "sum of completion
        // times", 21,822 s.
        let work: f64 = w.jobs.iter().map(|j| f64::from(req(j).cores) / 8192.0 * j.run_time).sum();
        assert!((work - 21_822.0).abs() < 1.0, "{work}");
    }

    #[test]
    fn fifty_come_first_the_rest_every_30_s_and_the_z_jobs_at_their_minutes() {
        let w = cpu_gpu_esp(3, false);
        assert_eq!(w.jobs.iter().filter(|j| j.submit == 0.0).count(), FIRST);
        let z: Vec<f64> = w.jobs.iter().filter(|j| j.cores.unwrap().cores == 8192).map(|j| j.submit).collect();
        assert_eq!(z, Z_AT);
        let last = w.jobs.iter().filter(|j| j.cores.unwrap().cores < 8192).map(|j| j.submit).fold(0.0, f64::max);
        let mean_gap = last / (456 - FIRST) as f64;
        assert!((mean_gap - GAP_MEAN).abs() < 2.0, "mean gap {mean_gap}");
        assert_eq!(cpu_gpu_esp(3, false).jobs, w.jobs, "seeded");
        assert_ne!(cpu_gpu_esp(4, false).jobs, w.jobs);
    }

    #[test]
    fn ragged_sizes_move_by_up_to_4_cores_on_any_count_of_nodes() {
        let (w, r) = (cpu_gpu_esp(5, false), cpu_gpu_esp(5, true));
        assert_eq!(r.name, "cpu-gpu-esp-ragged");
        let mut moved = 0;
        for (a, b) in w.jobs.iter().zip(&r.jobs) {
            let (a, b) = (a.cores.unwrap(), b.cores.unwrap());
            let d = i64::from(b.cores) - i64::from(a.cores);
            assert!(d.abs() <= RAGGED || a.cores == 8192, "{a:?} -> {b:?}");
            moved += usize::from(d != 0);
            assert_eq!((b.min_nodes, b.max_nodes), (1, 1024));
        }
        assert!(moved > 300, "most sizes move ({moved})");
    }
}
