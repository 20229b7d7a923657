//! Iserte et al. 2025's evaluation workload (section 5.1): 30 MPDATA jobs on
//! 31 nodes, drawn from Table 3's classes with a seed, each an iterative
//! application with Table 2's iteration times. The dynamic flavor runs them
//! malleable within [Min, Max] from its most efficient count; the static
//! flavor rigid at Max.

use malleable_model::{MalleableSpec, NodeConstraint};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::app_model::{Iterative, MPDATA_TABLE_2};
use crate::workloads::{JobSpec, Workload};

/// Table 3 (with Table 1's iterations): class, iterations, Min and Max
/// nodes, likelihood, and its series in Table 2. "Max" is the largest
/// count whose efficiency stays at or above the one at Min.
pub const MPDATA_CLASSES: [(&str, u32, u32, u32, f64); 3] =
    [("small", 20, 1, 8, 0.2), ("medium", 60, 2, 6, 0.2), ("large", 100, 4, 11, 0.6)];

/// The paper's machine: 32 nodes, one of them running the controller.
pub const MPDATA_NODES: usize = 31;
pub const MPDATA_JOBS: usize = 30;

/// Iterations between two reconfiguration checks (DMR's inhibitor, section 5.1).
pub const MPDATA_CHECK_EVERY: u32 = 4;

/// Mean seconds between submissions. The paper's value (a Feitelson 1996
/// model) was lost from the text; Fig. 6 shows every job submitted "in the
/// first few minutes", which 10 s (30 jobs in about five minutes) gives.
pub const MPDATA_INTER_ARRIVAL: f64 = 10.0;

/// The dynamic flavor: `jobs` jobs, classes drawn by Table 3's likelihoods
/// and exponential gaps between submissions, both from `seed`. Each job is
/// malleable within [Min, Max] and submitted on the count Table 2 says it
/// runs most efficiently on (small and medium 4, large 5; the paper does
/// not say what its dynamic jobs asked for, and DMR passes the scheduler
/// such a preferred count), with the time limit of a run on Min nodes,
/// which no resize can then make it exceed.
pub fn mpdata(jobs: usize, nodes: usize, seed: u64) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut submit = 0.0;
    let specs = (0..jobs)
        .map(|i| {
            let draw: f64 = rng.gen();
            let mut at = 0.0;
            let k = MPDATA_CLASSES
                .iter()
                .position(|c| {
                    at += c.4;
                    draw < at
                })
                .unwrap_or(MPDATA_CLASSES.len() - 1);
            let (class, iterations, min, max, _) = MPDATA_CLASSES[k];
            let it = Iterative {
                class,
                iterations,
                seconds: MPDATA_TABLE_2[k],
                check_every: MPDATA_CHECK_EVERY,
                time_scale: 1.0,
            };
            if i > 0 {
                let u: f64 = rng.gen();
                submit += -MPDATA_INTER_ARRIVAL * (1.0 - u).ln();
            }
            let asked = it.most_efficient(min, max);
            JobSpec {
                malleable: Some(MalleableSpec { min, max, constraint: NodeConstraint::None }),
                iterative: Some(it),
                ..JobSpec::rigid(i as u32 + 1, submit, asked, it.run_time(asked), it.run_time(min))
            }
        })
        .collect();
    Workload { name: "mpdata".into(), nodes, jobs: specs, power: None, cores: 1, gpus: 0 }
}

/// The static flavor of a workload: every malleable iterative job rigid at
/// its Max, with the time limit of a run there (the paper's "Static jobs
/// are submitted with the maximum number of nodes"). Other jobs as they are.
pub fn static_flavor(w: &Workload) -> Workload {
    let jobs = w
        .jobs
        .iter()
        .map(|j| match (j.malleable, j.iterative) {
            (Some(spec), Some(it)) => JobSpec {
                nodes: spec.max,
                run_time: it.run_time(spec.max),
                estimate: it.run_time(spec.max),
                malleable: None,
                ..j.clone()
            },
            _ => j.clone(),
        })
        .collect();
    Workload { name: format!("{}-static", w.name), jobs, ..w.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classes_follow_table_3_and_arrive_in_the_first_minutes() {
        // Many draws come near the likelihoods; 30 come in minutes.
        let w = mpdata(3000, MPDATA_NODES, 1);
        let share = |c: &str| w.jobs.iter().filter(|j| j.iterative.unwrap().class == c).count() as f64 / 3000.0;
        assert!((share("small") - 0.2).abs() < 0.03 && (share("large") - 0.6).abs() < 0.03);
        let w = mpdata(MPDATA_JOBS, MPDATA_NODES, 1);
        let last = w.jobs.last().unwrap().submit;
        assert!(last > 60.0 && last < 900.0, "{last}");
        assert_eq!(w.jobs, mpdata(MPDATA_JOBS, MPDATA_NODES, 1).jobs, "a seed gives one workload");
        assert_ne!(w.jobs, mpdata(MPDATA_JOBS, MPDATA_NODES, 2).jobs);
        // A large job: 100 iterations of 12.2 s on 4 nodes (its limit),
        // 6.1 s on 5 (where it does most per node: it asks for 5), 4.19 s on 11.
        let large = w.jobs.iter().find(|j| j.iterative.unwrap().class == "large").unwrap();
        let spec = large.malleable.unwrap();
        assert_eq!((large.nodes, spec.min, spec.max), (5, 4, 11));
        assert!((large.run_time - 610.0).abs() < 1e-6 && (large.estimate - 1220.0).abs() < 1e-6);
        // Small and medium jobs ask for 4 (5.88 and 15.2 node-seconds an iteration).
        for class in ["small", "medium"] {
            let j = w.jobs.iter().find(|j| j.iterative.unwrap().class == class).unwrap();
            assert_eq!(j.nodes, 4, "{class}");
        }
        let fixed = static_flavor(&w);
        let rigid = fixed.jobs.iter().find(|j| j.id == large.id).unwrap();
        assert_eq!((rigid.nodes, rigid.malleable), (11, None));
        assert!((rigid.run_time - 419.0).abs() < 1e-6 && (rigid.estimate - 419.0).abs() < 1e-6);
    }
}
