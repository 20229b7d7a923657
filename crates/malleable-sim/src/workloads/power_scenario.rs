//! The `power-corridor` workload: Chadha et al. 2020's section VI-C scenario (Table II,
//! Fig. 4), with the figures the paper leaves out chosen here.
//!
//! From the paper: 14 nodes; 20 jobs alternating a PI-like job (170 W per
//! node) and a heat-equation-like job (250 W per node), submitted 2 s apart;
//! `--nodes` from 1 to 4; every job malleable between 1 and 14 nodes without
//! a node constraint; idle nodes draw 71 W; the corridor starts at
//! 1700-2500 W, drops to 1000-1700 W and later rises to 2500-3500 W.
//!
//! Chosen here (the paper gives neither job lengths nor change times):
//! - `--nodes` of each job: uniform in 1..=4 from the seed.
//! - Run time on its `--nodes`: PI [`PI_SECONDS`] (160 s), heat
//!   [`HEAT_SECONDS`] (210 s), each times a seeded factor in 0.4..1.6
//!   ([`LENGTH_SPREAD`]), time limit 1.5 x that. With these, `easy` (the
//!   static backfill of Table II's scenario 1) takes 14.4 minutes on seed 1
//!   (12.3 to 16.3 over seeds 1-5), as the paper's 13.75.
//! - The corridor drops at [`DROP_AT`] (100 s) and rises at [`RISE_AT`]
//!   (170 s), while every job has arrived and the machine is full. Later
//!   changes, or a longer low phase, cost the power-aware runs makespan in
//!   proportion: at 1000-1700 W only 4 to 7 of the 14 nodes can compute,
//!   where static backfill, blind to the corridor, keeps all 14 busy.
//! - Jobs scale by the simulator's application model (the fitted one by
//!   default), like the ESP jobs.
//! - The users' power estimates bracket the real draw: PI 160-180 W, heat
//!   240-260 W per node; the simulator reveals the real draw (170, 250) to
//!   the strategy once a job runs, as Chadha et al. 2020's runtime measurement does.

use malleable_model::{Corridor, CorridorSchedule, JobPower, MalleableSpec, NodeConstraint};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::workloads::{JobSpec, PowerSetup, Workload};

pub const NODES: usize = 14;
pub const JOBS: usize = 20;
pub const INTER_ARRIVAL: f64 = 2.0;
pub const IDLE_NODE_WATTS: f64 = 71.0;
pub const PI_WATTS: f64 = 170.0;
pub const HEAT_WATTS: f64 = 250.0;
/// Mean run time of a PI job on its `--nodes` (s).
pub const PI_SECONDS: f64 = 160.0;
/// Mean run time of a heat job on its `--nodes` (s).
pub const HEAT_SECONDS: f64 = 210.0;
/// When the corridor drops from 1700-2500 to 1000-1700 W (s).
pub const DROP_AT: i64 = 100;
/// When it rises to 2500-3500 W (s).
pub const RISE_AT: i64 = 170;

/// Seeded spread of run times around the means: factor in 1 +- this.
pub const LENGTH_SPREAD: f64 = 0.6;

/// The figures the paper leaves open, as one value (the constants above are
/// its default; other values are for exploring the scenario).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Scenario {
    pub pi_seconds: f64,
    pub heat_seconds: f64,
    pub length_spread: f64,
    pub drop_at: i64,
    pub rise_at: i64,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            pi_seconds: PI_SECONDS,
            heat_seconds: HEAT_SECONDS,
            length_spread: LENGTH_SPREAD,
            drop_at: DROP_AT,
            rise_at: RISE_AT,
        }
    }
}

/// The corridor of the scenario over time.
pub fn corridor() -> CorridorSchedule {
    Scenario::default().corridor()
}

/// The scenario's 20 jobs from `seed`.
pub fn power_corridor(seed: u64) -> Workload {
    Scenario::default().build(seed)
}

impl Scenario {
    pub fn corridor(&self) -> CorridorSchedule {
        let c = |l, h| Corridor::new(l, h).expect("a valid corridor");
        CorridorSchedule::new(
            c(1700.0, 2500.0),
            vec![(self.drop_at, c(1000.0, 1700.0)), (self.rise_at, c(2500.0, 3500.0))],
        )
    }

    pub fn build(&self, seed: u64) -> Workload {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let jobs = (0..JOBS)
            .map(|i| {
                let (mean, watts, spread) =
                    if i % 2 == 0 { (self.pi_seconds, PI_WATTS, 10.0) } else { (self.heat_seconds, HEAT_WATTS, 10.0) };
                let f = self.length_spread;
                let run_time = (mean * rng.gen_range(1.0 - f..1.0 + f)).round();
                JobSpec {
                    malleable: Some(MalleableSpec { min: 1, max: NODES as u32, constraint: NodeConstraint::None }),
                    power: Some(JobPower {
                        min_per_node: watts - spread,
                        max_per_node: watts + spread,
                        measured_per_node: Some(watts),
                    }),
                    // The only draw in the job: its size, after its run time's.
                    ..JobSpec::rigid(
                        i as u32 + 1,
                        i as f64 * INTER_ARRIVAL,
                        rng.gen_range(1..=4),
                        run_time,
                        (run_time * 1.5).ceil(),
                    )
                }
            })
            .collect();
        Workload {
            name: "power-corridor".into(),
            nodes: NODES,
            jobs,
            power: Some(PowerSetup { corridor: self.corridor(), idle_node: IDLE_NODE_WATTS }),
            cores: 1,
            gpus: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_is_the_papers_mix() {
        let w = power_corridor(1);
        assert_eq!((w.nodes, w.jobs.len()), (14, 20));
        for (i, j) in w.jobs.iter().enumerate() {
            assert_eq!(j.submit, 2.0 * i as f64);
            assert!((1..=4).contains(&j.nodes));
            let m = j.malleable.unwrap();
            assert_eq!((m.min, m.max), (1, 14));
            let real = j.power.unwrap().measured_per_node.unwrap();
            assert_eq!(real, if i % 2 == 0 { 170.0 } else { 250.0 });
        }
        let c = w.power.unwrap().corridor;
        assert_eq!(c.at(0), Corridor::new(1700.0, 2500.0).unwrap());
        assert_eq!(c.at(DROP_AT), Corridor::new(1000.0, 1700.0).unwrap());
        assert_eq!(c.at(RISE_AT + 1), Corridor::new(2500.0, 3500.0).unwrap());
        assert_ne!(power_corridor(2).jobs, w.jobs, "the seed changes sizes and lengths");
    }
}
