//! What a run gives back: each job's record, the node-seconds held, and the
//! strategy's own figures added up over its passes (what `report::metrics`
//! turns into the paper's metrics).

use malleable_core::Measure;

use crate::model::power_meter::PowerReport;

/// What happened to one job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    pub id: u32,
    pub submit: f64,
    pub start: f64,
    pub end: f64,
    pub start_nodes: u32,
    pub final_nodes: u32,
    pub malleable: bool,
    pub expands: u32,
    pub shrinks: u32,
    /// Its class, for an iterative job that has one (MPDATA's small, medium, large).
    pub class: Option<&'static str>,
    /// For a job that shared cores (as a mate or on mates' cores): its run
    /// time alone on its nodes, what its slowdown is counted against, as
    /// SD-Policy's paper counts it (its own run was stretched by sharing).
    pub alone_run: Option<f64>,
    /// For a job that asks for cores: the nodes it was spread over, over
    /// the fewest that hold its cores (IPSCHED's packing factor, 1 at best).
    pub packing: Option<f64>,
}

/// A finished run: every job's record and the node-seconds jobs held.
#[derive(Clone, Debug)]
pub struct SimResult {
    pub nodes: usize,
    pub jobs: Vec<JobRecord>,
    pub node_seconds: f64,
    pub passes: u64,
    /// Draw against the corridor, for workloads with one.
    pub power: Option<PowerReport>,
    /// The strategy's figures, added up over the run's passes.
    pub tally: Tally,
    /// Seconds jobs spent resizing, summed over every expand and shrink
    /// (Iserte et al. 2025's accumulated resize time, Table 5).
    pub resize_seconds: f64,
}

/// A figure added up over a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Total {
    Count(u64),
    Highest(u64),
    /// Every time reported, in milliseconds.
    Millis(Vec<f64>),
}

/// The strategy's figures over a run, by name, in the order first reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally(pub Vec<(&'static str, Total)>);

impl Tally {
    pub fn add(&mut self, name: &'static str, m: Measure) {
        let i = match self.0.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                let empty = match m {
                    Measure::Count(_) => Total::Count(0),
                    Measure::Highest(_) => Total::Highest(0),
                    Measure::Millis(_) => Total::Millis(Vec::new()),
                };
                self.0.push((name, empty));
                self.0.len() - 1
            }
        };
        match (&mut self.0[i].1, m) {
            (Total::Count(c), Measure::Count(n)) => *c += n,
            (Total::Highest(h), Measure::Highest(v)) => *h = (*h).max(v),
            (Total::Millis(all), Measure::Millis(ms)) => all.push(ms),
            (total, m) => panic!("figure {name} reported as {m:?} and before as {total:?}"),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Total> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, t)| t)
    }
}
