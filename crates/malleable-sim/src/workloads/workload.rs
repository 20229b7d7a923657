//! The simulator's workloads: Chadha et al. 2020's ESP mix (Table I) generated from a
//! seed, and Standard Workload Format traces (plain or gzipped), each job with
//! an optional malleable spec chosen by the same seeded rules.

use std::io::{BufRead, BufReader, Read};

use crate::model::app_model::Iterative;
use malleable_model::{CoreRequest, CorridorSchedule, JobPower, MalleableSpec, NodeConstraint, Watts};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One job as submitted.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub id: u32,
    /// Seconds from the start of the simulation.
    pub submit: f64,
    /// `--nodes`: the size it starts on (and keeps, if rigid).
    pub nodes: u32,
    /// Its run time on `nodes` nodes.
    pub run_time: f64,
    /// Its time limit (what schedulers plan with), seconds.
    pub estimate: f64,
    pub malleable: Option<MalleableSpec>,
    /// Its per-node power: the users' estimates, and as `measured_per_node`
    /// what it really draws (the simulator shows that to strategies only
    /// once the job runs, as measurements work in Chadha et al. 2020's section IV-D).
    pub power: Option<JobPower>,
    /// For an iterative application (MPDATA): its iterations and their
    /// times, which then give its run time on any node count, and where it
    /// asks whether to reconfigure.
    pub iterative: Option<Iterative>,
    /// Its owner lets it share nodes' cores with other such jobs
    /// (`--malleable-cores`, SD-Policy).
    pub share_cores: bool,
    /// `None`: it asks for `nodes` whole nodes. Else the cores and GPUs it
    /// asks for (IPSCHED's workloads), `nodes` the fewest that hold them.
    pub cores: Option<CoreRequest>,
}

impl JobSpec {
    /// A rigid job asking `nodes` whole nodes, running `run_time` seconds
    /// under a limit of `estimate`: what every workload starts from, with what
    /// it adds (malleability, power, iterations, sharing, cores) set over it.
    pub fn rigid(id: u32, submit: f64, nodes: u32, run_time: f64, estimate: f64) -> JobSpec {
        JobSpec {
            id,
            submit,
            nodes,
            run_time,
            estimate,
            malleable: None,
            power: None,
            iterative: None,
            share_cores: false,
            cores: None,
        }
    }
}

/// A workload and what it was built from (for the JSON report).
#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub nodes: usize,
    pub jobs: Vec<JobSpec>,
    /// The power corridor and idle draw, for power-aware runs.
    pub power: Option<PowerSetup>,
    /// Cores on each node (1 where a workload knows only whole nodes).
    pub cores: u32,
    /// GPUs on each node.
    pub gpus: u32,
}

impl Workload {
    /// The offered load: the jobs' node-seconds over the machine's nodes times the span of
    /// the submissions (last - first); 0 when there is no span.
    pub fn offered_load(&self) -> f64 {
        let first = self.jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min);
        let last = self.jobs.iter().map(|j| j.submit).fold(f64::NEG_INFINITY, f64::max);
        let work: f64 = self.jobs.iter().map(|j| j.nodes as f64 * j.run_time).sum();
        if last > first {
            work / (self.nodes as f64 * (last - first))
        } else {
            0.0
        }
    }
}

/// A machine's power contract: its corridor over time and what an idle node draws.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerSetup {
    pub corridor: CorridorSchedule,
    pub idle_node: Watts,
}

/// Chadha et al. 2020, Table I: job type, fraction of system size, count, static
/// execution time (s), node constraint.
pub const ESP_TABLE_I: [(&str, f64, u32, f64, NodeConstraint); 14] = [
    ("A", 0.03125, 75, 267.0, NodeConstraint::None),
    ("B", 0.06250, 9, 322.0, NodeConstraint::PowerOfTwo),
    ("C", 0.50000, 3, 534.0, NodeConstraint::None),
    ("D", 0.25000, 3, 616.0, NodeConstraint::Even),
    ("E", 0.50000, 3, 315.0, NodeConstraint::None),
    ("F", 0.06250, 9, 1846.0, NodeConstraint::PowerOfTwo),
    ("G", 0.12500, 6, 1334.0, NodeConstraint::Even),
    ("H", 0.15625, 6, 1067.0, NodeConstraint::Odd),
    ("I", 0.03125, 24, 1432.0, NodeConstraint::None),
    ("J", 0.06250, 24, 725.0, NodeConstraint::PowerOfTwo),
    ("K", 0.09375, 15, 487.0, NodeConstraint::None),
    ("L", 0.12500, 36, 366.0, NodeConstraint::Even),
    ("M", 0.25000, 15, 187.0, NodeConstraint::None),
    ("Z", 1.00000, 2, 100.0, NodeConstraint::None),
];

/// Seconds between ESP submissions (Chadha et al. 2020, section VI-B).
pub const ESP_INTER_ARRIVAL: f64 = 30.0;

/// Chadha et al. 2020's min/max rule: the lowest and highest count the constraint allows
/// on the machine (1 and the machine size when unconstrained).
pub fn paper_spec(constraint: NodeConstraint, machine: u32) -> MalleableSpec {
    let all = MalleableSpec { min: 1, max: machine, constraint };
    MalleableSpec { min: all.lowest_valid().unwrap_or(1), max: all.highest_valid().unwrap_or(machine), constraint }
}

/// The ESP mix on `machine` nodes: 230 jobs in a random order from `seed`,
/// one every 30 s; time limits equal the static times. The malleable jobs are
/// the first `fraction` of a second seeded permutation, so the order of
/// submission is the same at every fraction and the malleable set only grows.
pub fn esp(machine: usize, malleable_fraction: f64, seed: u64) -> Workload {
    let m = machine as u32;
    let mut types = Vec::new();
    for &(_, fraction, count, time, constraint) in &ESP_TABLE_I {
        let size = ((fraction * machine as f64).round() as u32).clamp(1, m);
        types.extend((0..count).map(|_| (size, time, constraint)));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    types.shuffle(&mut rng);
    let malleable = choose_malleable(types.len(), malleable_fraction, seed);
    let jobs = types
        .into_iter()
        .enumerate()
        .map(|(i, (size, time, constraint))| JobSpec {
            malleable: malleable[i].then(|| paper_spec(constraint, m)),
            ..JobSpec::rigid(i as u32 + 1, i as f64 * ESP_INTER_ARRIVAL, size, time, time)
        })
        .collect();
    Workload { name: "esp".into(), nodes: machine, jobs, power: None, cores: 1, gpus: 0 }
}

/// `w` as a real Slurm runs it, `time_scale` times faster: submit and run
/// times divided by `time_scale`, and each time limit divided too but then
/// rounded up to whole minutes, since a Slurm time limit is whole minutes
/// (what the scheduler plans with on the real cluster, so the simulator must
/// plan with it as well). The name says the scale (`esp/10`).
pub fn for_slurm(w: &Workload, time_scale: f64) -> Result<Workload, String> {
    if !(time_scale.is_finite() && time_scale >= 1.0) {
        return Err(format!(
            "time scale {time_scale}: expected a number >= 1 (how many times faster than the workload)"
        ));
    }
    let jobs = w
        .jobs
        .iter()
        .map(|j| JobSpec {
            submit: j.submit / time_scale,
            run_time: j.run_time / time_scale,
            estimate: slurm_minutes(j.estimate / time_scale) as f64 * 60.0,
            iterative: j.iterative.map(|it| Iterative { time_scale: it.time_scale * time_scale, ..it }),
            share_cores: false,
            cores: None,
            ..j.clone()
        })
        .collect();
    let name = if time_scale == 1.0 { w.name.clone() } else { format!("{}/{time_scale}", w.name) };
    Ok(Workload { name, jobs, ..w.clone() })
}

/// A time limit in seconds as Slurm's `--time` takes it: whole minutes, at least one.
pub fn slurm_minutes(seconds: f64) -> u32 {
    ((seconds / 60.0).ceil() as u32).max(1)
}

/// Which of `n` jobs are malleable: round(fraction * n) of them, chosen by a
/// ChaCha stream separate from the one ordering submissions.
fn choose_malleable(n: usize, fraction: f64, seed: u64) -> Vec<bool> {
    let k = ((fraction.clamp(0.0, 1.0) * n as f64).round() as usize).min(n);
    let mut idx: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6d61_6c6c_6561_626c);
    idx.shuffle(&mut rng);
    let mut chosen = vec![false; n];
    for &i in &idx[..k] {
        chosen[i] = true;
    }
    chosen
}

/// Make the chosen fraction of `jobs` malleable ([`choose_malleable`]) with
/// min 1, max the machine and no constraint: what a trace or a synthetic job
/// does not say about itself.
pub(crate) fn make_malleable(jobs: &mut [JobSpec], fraction: f64, seed: u64, machine: usize) {
    let chosen = choose_malleable(jobs.len(), fraction, seed);
    for (job, m) in jobs.iter_mut().zip(chosen) {
        if m {
            job.malleable = Some(MalleableSpec { min: 1, max: machine as u32, constraint: NodeConstraint::None });
        }
    }
}

/// A synthetic workload for scale tests (`bench`, `--workload synthetic:N`):
/// `jobs` jobs on `machine` nodes, all drawn from `seed`. Sizes are
/// log-uniform on 1..=machine/8 (half of them rounded to a power of two, as
/// in real traces); run times log-uniform on 30 s..10 h; time limits the run
/// time times U(1, 3); Poisson arrivals at the rate that offers `load` times
/// the machine's node-seconds. Malleable jobs (the chosen fraction) get min
/// 1, max the machine, no constraint, as for SWF traces.
pub fn synthetic(jobs: usize, machine: usize, load: f64, malleable_fraction: f64, seed: u64) -> Workload {
    use rand::Rng;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7379_6e74_6865_7469);
    let log_uniform = |rng: &mut ChaCha8Rng, lo: f64, hi: f64| (lo.ln() + rng.gen::<f64>() * (hi.ln() - lo.ln())).exp();
    let largest = (machine / 8).max(1) as f64;
    let mut specs: Vec<JobSpec> = (0..jobs)
        .map(|i| {
            let mut size = log_uniform(&mut rng, 1.0, largest + 0.999).floor();
            if rng.gen_bool(0.5) {
                size = 2f64.powi(size.log2().round() as i32).min(largest);
            }
            let run_time = log_uniform(&mut rng, 30.0, 36_000.0).round();
            let estimate = (run_time * rng.gen_range(1.0..3.0)).ceil();
            JobSpec::rigid(i as u32 + 1, 0.0, (size as u32).clamp(1, machine as u32), run_time, estimate)
        })
        .collect();
    let work: f64 = specs.iter().map(|j| j.nodes as f64 * j.run_time).sum();
    let mean_gap = work / specs.len().max(1) as f64 / (machine as f64 * load);
    let mut t = 0.0f64;
    for j in &mut specs {
        j.submit = t.round();
        // Exponential gaps: -ln(U) with U in (0, 1].
        t += -(1.0 - rng.gen::<f64>()).ln() * mean_gap;
    }
    make_malleable(&mut specs, malleable_fraction, seed, machine);
    Workload { name: format!("synthetic:{jobs}"), nodes: machine, jobs: specs, power: None, cores: 1, gpus: 0 }
}

/// What was dropped while reading a trace, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwfSkipped {
    pub no_size_or_runtime: usize,
    pub larger_than_machine: usize,
}

/// Read an SWF trace (gzip if the file starts with gzip's magic bytes). Jobs
/// with no size or a run time of 0 or less are dropped (NASA: 173 of 18,239).
/// Submit times are made relative to the first job and multiplied by
/// `arrival_scale`; the size is allocated processors (else requested); the
/// estimate is the requested time, or the run time where that is -1. The
/// machine size is `--nodes` if given, else the header's MaxNodes/MaxProcs.
/// Malleable jobs (the chosen fraction) get min 1, max the machine, no constraint.
pub fn swf(
    path: &str,
    machine: Option<usize>,
    arrival_scale: f64,
    malleable_fraction: f64,
    seed: u64,
) -> Result<(Workload, SwfSkipped), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("--workload swf:{path}: {e}"))?;
    let mut reader = BufReader::new(file);
    let gz = reader.fill_buf().map(|b| b.starts_with(&[0x1f, 0x8b])).unwrap_or(false);
    let input: Box<dyn Read> = if gz { Box::new(flate2::read::MultiGzDecoder::new(reader)) } else { Box::new(reader) };
    let (header_size, rows) = parse_swf(BufReader::new(input)).map_err(|e| format!("--workload swf:{path}: {e}"))?;
    let machine = machine
        .or(header_size)
        .ok_or_else(|| format!("--workload swf:{path}: no MaxNodes/MaxProcs in the header; give --nodes"))?;
    let mut skipped = SwfSkipped::default();
    let first = rows.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let mut jobs = Vec::new();
    for (id, submit, run_time, size, requested) in rows {
        if size == 0 || run_time <= 0.0 {
            skipped.no_size_or_runtime += 1;
            continue;
        }
        if size as usize > machine {
            skipped.larger_than_machine += 1;
            continue;
        }
        let estimate = if requested > 0.0 { requested } else { run_time };
        jobs.push(JobSpec::rigid(id, (submit - first) * arrival_scale, size, run_time, estimate));
    }
    // Sorted by submit time (stable: trace order breaks ties).
    jobs.sort_by(|a, b| a.submit.total_cmp(&b.submit));
    make_malleable(&mut jobs, malleable_fraction, seed, machine);
    let name = format!("swf:{path}");
    Ok((Workload { name, nodes: machine, jobs, power: None, cores: 1, gpus: 0 }, skipped))
}

type SwfRow = (u32, f64, f64, u32, f64);

/// The header's machine size and the rows (id, submit, run time, size, requested time).
fn parse_swf(input: impl BufRead) -> Result<(Option<usize>, Vec<SwfRow>), String> {
    let mut header = (None, None);
    let mut rows = Vec::new();
    for (lineno, line) in input.lines().enumerate() {
        let line = line.map_err(|e| e.to_string())?;
        let line = line.trim();
        if let Some(comment) = line.strip_prefix(';') {
            let mut kv = comment.splitn(2, ':');
            let key = kv.next().unwrap_or("").trim();
            let value = kv.next().and_then(|v| v.trim().parse::<usize>().ok());
            match key {
                "MaxNodes" => header.0 = value,
                "MaxProcs" => header.1 = value,
                _ => {}
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let f: Vec<f64> = line
            .split_whitespace()
            .map(|x| x.parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("line {}: {e}", lineno + 1))?;
        if f.len() < 9 {
            return Err(format!("line {}: {} fields, SWF has 18", lineno + 1, f.len()));
        }
        let size = if f[4] > 0.0 { f[4] } else { f[7].max(0.0) };
        rows.push((f[0] as u32, f[1], f[3], size as u32, f[8]));
    }
    Ok((header.0.or(header.1), rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_for_slurm_is_scaled_and_plans_with_whole_minutes() {
        let w = esp(32, 0.5, 1);
        let s = for_slurm(&w, 10.0).unwrap();
        assert_eq!(s.name, "esp/10");
        for (a, b) in w.jobs.iter().zip(&s.jobs) {
            assert_eq!((a.id, a.nodes, a.malleable), (b.id, b.nodes, b.malleable));
            assert!((b.submit * 10.0 - a.submit).abs() < 1e-9 && (b.run_time * 10.0 - a.run_time).abs() < 1e-9);
            // Whole minutes, never below the scaled limit, less than a minute above it.
            assert_eq!(b.estimate % 60.0, 0.0);
            assert!(b.estimate >= a.estimate / 10.0 && b.estimate < a.estimate / 10.0 + 60.0, "{b:?}");
        }
        assert_eq!(slurm_minutes(1846.0 / 10.0), 4);
        assert_eq!(slurm_minutes(10.0), 1);
        assert!(for_slurm(&w, 0.5).unwrap_err().contains("time scale 0.5"));
    }

    #[test]
    fn esp_has_table_i_mix_on_32_nodes() {
        let w = esp(32, 0.0, 1);
        assert_eq!(w.jobs.len(), 230);
        let count = |n: u32, t: f64| w.jobs.iter().filter(|j| j.nodes == n && j.run_time == t).count();
        assert_eq!(count(1, 267.0), 75); // A
        assert_eq!(count(5, 1067.0), 6); // H: 0.15625 * 32
        assert_eq!(count(32, 100.0), 2); // Z
        assert!(w.jobs.windows(2).all(|p| p[1].submit - p[0].submit == 30.0));
        assert!(w.jobs.iter().all(|j| j.malleable.is_none()));
    }

    #[test]
    fn esp_order_is_seeded_and_malleable_set_grows_with_fraction() {
        let sizes = |w: &Workload| w.jobs.iter().map(|j| (j.nodes, j.run_time as u32)).collect::<Vec<_>>();
        assert_eq!(sizes(&esp(32, 0.3, 7)), sizes(&esp(32, 0.9, 7)));
        assert_ne!(sizes(&esp(32, 0.3, 7)), sizes(&esp(32, 0.3, 8)));
        let low = esp(32, 0.1, 7);
        let high = esp(32, 1.0, 7);
        assert_eq!(low.jobs.iter().filter(|j| j.malleable.is_some()).count(), 23);
        for (a, b) in low.jobs.iter().zip(&high.jobs) {
            assert!(a.malleable.is_none() || a.malleable == b.malleable);
        }
        // The paper's min/max: even -> 2..32, odd -> 1..31, pof2 -> 1..32.
        let spec = |c| paper_spec(c, 32);
        assert_eq!((spec(NodeConstraint::Even).min, spec(NodeConstraint::Even).max), (2, 32));
        assert_eq!((spec(NodeConstraint::Odd).min, spec(NodeConstraint::Odd).max), (1, 31));
        assert_eq!((spec(NodeConstraint::None).min, spec(NodeConstraint::None).max), (1, 32));
        // Every malleable job starts on a count its spec allows.
        assert!(high.jobs.iter().all(|j| j.malleable.unwrap().allows(j.nodes)));
    }

    #[test]
    fn synthetic_is_seeded_fits_the_machine_and_offers_the_load() {
        let a = synthetic(5_000, 512, 0.8, 0.5, 3);
        assert_eq!(a.jobs, synthetic(5_000, 512, 0.8, 0.5, 3).jobs);
        assert_ne!(a.jobs, synthetic(5_000, 512, 0.8, 0.5, 4).jobs);
        assert!(a.jobs.iter().all(|j| (1..=64).contains(&j.nodes)));
        assert!(a.jobs.iter().all(|j| j.estimate >= j.run_time));
        assert!(a.jobs.windows(2).all(|p| p[0].submit <= p[1].submit));
        assert_eq!(a.jobs.iter().filter(|j| j.malleable.is_some()).count(), 2_500);
        // Offered load: work / (machine * span) near 0.8.
        let work: f64 = a.jobs.iter().map(|j| j.nodes as f64 * j.run_time).sum();
        let span = a.jobs.last().unwrap().submit;
        let offered = work / (512.0 * span);
        assert!((0.7..0.9).contains(&offered), "offered load {offered}");
    }

    #[test]
    fn swf_rows_use_runtime_as_estimate_when_requested_time_is_missing() {
        let text = "; MaxNodes: 8\n\
                    1 100 0 50 4 -1 -1 4 -1 -1 1 1 1 1 1 -1 -1 -1\n\
                    2 110 0 20 -1 -1 -1 2 60 -1 1 1 1 1 1 -1 -1 -1\n\
                    3 120 0 -1 2 -1 -1 2 60 -1 0 1 1 1 1 -1 -1 -1\n";
        let (size, rows) = parse_swf(text.as_bytes()).unwrap();
        assert_eq!(size, Some(8));
        assert_eq!(rows[0], (1, 100.0, 50.0, 4, -1.0));
        assert_eq!(rows[1], (2, 110.0, 20.0, 2, 60.0));
        assert_eq!(rows.len(), 3);
    }
}
