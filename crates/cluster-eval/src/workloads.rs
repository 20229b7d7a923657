//! The workloads the real-cluster commands run besides the scaled ESP:
//! the demo's mix and the soak's stream, both as simulator workloads so the
//! simulator can run them too.

use malleable_model::{MalleableSpec, NodeConstraint};
use malleable_sim::workloads::workload::{JobSpec, Workload};
use rand_free::Lcg;

/// The demo: rigid jobs and four elastic ones (the example application,
/// constraints none, pof2 and even) arriving over 33 s, about 75 s of work for
/// 16 nodes. Sizes are for 16 nodes and scale with `nodes`. Time limits are
/// whole minutes, as in Slurm: 1 for jobs up to 20 s, else 2.
pub fn demo(nodes: usize) -> Workload {
    // (submit s, nodes of 16, run s, elastic (min, max of 16, constraint))
    type Elastic = Option<(u32, u32, NodeConstraint)>;
    const JOBS: &[(f64, u32, f64, Elastic)] = &[
        (0.0, 4, 30.0, Some((2, 16, NodeConstraint::None))),
        (0.0, 8, 15.0, None),
        (1.0, 4, 24.0, Some((2, 8, NodeConstraint::PowerOfTwo))),
        (2.0, 2, 20.0, None),
        (4.0, 8, 15.0, None),
        (5.0, 4, 20.0, Some((2, 8, NodeConstraint::PowerOfTwo))),
        (6.0, 1, 25.0, None),
        (8.0, 16, 8.0, None),
        (10.0, 4, 24.0, Some((2, 16, NodeConstraint::Even))),
        (12.0, 2, 20.0, Some((2, 12, NodeConstraint::Even))),
        (14.0, 2, 10.0, None),
        (16.0, 6, 12.0, None),
        (18.0, 2, 16.0, Some((1, 16, NodeConstraint::None))),
        (20.0, 4, 16.0, Some((1, 16, NodeConstraint::None))),
        (22.0, 8, 10.0, None),
        (25.0, 3, 24.0, Some((1, 16, NodeConstraint::None))),
        (28.0, 12, 8.0, None),
        (30.0, 2, 10.0, None),
        (33.0, 4, 16.0, Some((2, 16, NodeConstraint::Even))),
    ];
    let scale = |n: u32| ((n as usize * nodes).div_ceil(16)).clamp(1, nodes) as u32;
    let jobs = JOBS
        .iter()
        .enumerate()
        .map(|(i, &(submit, n, run_time, elastic))| {
            let malleable = elastic.map(|(min, max, constraint)| {
                let spec = MalleableSpec { min: scale(min), max: scale(max), constraint };
                // Keep the range one the constraint has counts in on small clusters.
                MalleableSpec {
                    min: spec.lowest_valid().unwrap_or(1),
                    max: spec.highest_valid().unwrap_or(spec.max),
                    constraint,
                }
            });
            let mut n = scale(n);
            if let Some(m) = malleable {
                n = n.clamp(m.min, m.max);
                while !m.constraint.is_valid(n) && n > m.min {
                    n -= 1;
                }
            }
            JobSpec {
                malleable,
                ..JobSpec::rigid(i as u32 + 1, submit, n, run_time, if run_time <= 20.0 { 60.0 } else { 120.0 })
            }
        })
        .collect();
    Workload { name: "demo".into(), nodes, jobs, power: None, cores: 1, gpus: 0 }
}

/// The soak: `jobs` jobs on `nodes` nodes, every third elastic (min 1, max
/// the machine, constraints in turn none, even, pof2), sizes 1 to a quarter
/// of the machine, 2 to 8 s of work, arriving every `gap` seconds on
/// average, so the queue stays full and resizes happen often. Drawn from `seed`.
pub fn soak(jobs: usize, nodes: usize, gap: f64, seed: u64) -> Workload {
    let mut rng = Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let quarter = (nodes / 4).max(1) as u32;
    let mut t = 0.0;
    let specs = (0..jobs)
        .map(|i| {
            let size = 1 + (rng.next() * f64::from(quarter)) as u32 % quarter;
            let run_time = (2.0 + rng.next() * 6.0).round();
            let malleable = (i % 3 == 2).then(|| {
                let constraint = [NodeConstraint::None, NodeConstraint::Even, NodeConstraint::PowerOfTwo][(i / 3) % 3];
                let all = MalleableSpec { min: 1, max: nodes as u32, constraint };
                MalleableSpec {
                    min: all.lowest_valid().unwrap_or(1),
                    max: all.highest_valid().unwrap_or(nodes as u32),
                    constraint,
                }
            });
            let mut n = size;
            if let Some(m) = malleable {
                n = n.clamp(m.min, m.max);
                while !m.constraint.is_valid(n) && n < m.max {
                    n += 1;
                }
            }
            let spec =
                JobSpec { malleable, ..JobSpec::rigid(i as u32 + 1, (t * 10.0f64).round() / 10.0, n, run_time, 60.0) };
            t += gap * 2.0 * rng.next();
            spec
        })
        .collect();
    Workload { name: format!("soak:{jobs}"), nodes, jobs: specs, power: None, cores: 1, gpus: 0 }
}

/// The burst of issue 13's comparison with stock Slurm: `jobs` rigid jobs
/// of 1 to 4 nodes (at most the machine) and 0 to 2 s each, a minute's
/// limit, all submitted at once, so that how fast a job's end becomes the
/// next start decides how busy the machine stays. Drawn from `seed`.
pub fn burst(jobs: usize, nodes: usize, seed: u64) -> Workload {
    let mut rng = Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let widest = nodes.clamp(1, 4) as u32;
    let specs = (0..jobs)
        // Drawn in this order: the size, then the run time.
        .map(|i| {
            let nodes = 1 + (rng.next() * f64::from(widest)) as u32 % widest;
            JobSpec::rigid(i as u32 + 1, 0.0, nodes, (rng.next() * 20.0).round() / 10.0, 60.0)
        })
        .collect();
    Workload { name: format!("burst:{jobs}"), nodes, jobs: specs, power: None, cores: 1, gpus: 0 }
}

/// A tiny seeded generator: the soak needs variety, not statistical quality,
/// and this keeps the crate off another dependency.
mod rand_free {
    pub struct Lcg(pub u64);

    impl Lcg {
        /// Uniform in [0, 1).
        pub fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_is_valid_on_any_size() {
        for nodes in [2, 4, 8, 16, 32] {
            let w = demo(nodes);
            assert_eq!(w.jobs.iter().filter(|j| j.malleable.is_some()).count(), 9);
            for j in &w.jobs {
                assert!(j.nodes >= 1 && j.nodes as usize <= nodes, "{nodes}: {j:?}");
                if let Some(m) = j.malleable {
                    assert!(m.allows(j.nodes), "{nodes}: {j:?}");
                }
            }
        }
        // On 16 nodes the sizes are as written.
        assert_eq!(demo(16).jobs.iter().map(|j| j.nodes).collect::<Vec<_>>()[..4], [4, 8, 4, 2]);
    }

    #[test]
    fn the_soak_is_a_third_elastic_and_valid() {
        let w = soak(300, 32, 2.0, 7);
        assert_eq!(w.jobs.iter().filter(|j| j.malleable.is_some()).count(), 100);
        for j in &w.jobs {
            assert!(j.nodes >= 1 && j.nodes <= 32 && (2.0..=8.0).contains(&j.run_time), "{j:?}");
            if let Some(m) = j.malleable {
                assert!(m.allows(j.nodes), "{j:?}");
            }
        }
        assert!(w.jobs.windows(2).all(|p| p[0].submit <= p[1].submit));
        // Same seed, same workload; another seed, another.
        assert_eq!(soak(50, 32, 2.0, 7).jobs, soak(50, 32, 2.0, 7).jobs);
        assert_ne!(soak(50, 32, 2.0, 7).jobs, soak(50, 32, 2.0, 8).jobs);
    }

    #[test]
    fn the_burst_covers_its_sizes_and_lengths() {
        let w = burst(1000, 8, 1);
        assert!(w.jobs.iter().all(|j| j.submit == 0.0 && j.malleable.is_none() && (0.0..=2.0).contains(&j.run_time)));
        for size in 1..=4 {
            assert!(w.jobs.iter().filter(|j| j.nodes == size).count() > 150, "size {size}");
        }
        assert!(w.jobs.iter().all(|j| j.nodes <= 4));
        assert!(burst(10, 2, 1).jobs.iter().all(|j| j.nodes <= 2));
        let mean = w.jobs.iter().map(|j| j.run_time).sum::<f64>() / 1000.0;
        assert!((0.9..1.1).contains(&mean), "{mean}");
    }
}
