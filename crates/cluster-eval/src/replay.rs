//! A simulator workload replayed through a real cluster: each job submitted
//! with sbatch at its submit time, rigid ones as `sleep`, malleable ones as
//! the example application under mall-run, sized so that it takes the job's
//! run time on its start size and less on more nodes (linearly, like the
//! simulator's `linear` model), or, for an iterative job (MPDATA), following
//! its own curve of iteration times and asking at its checks; then waited
//! for and read back from the log. With [`ElasticApp::MpiRestart`] the
//! malleable jobs run the MPI Jacobi instead, restarted at each resize.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use malleable_model::NodeConstraint;
use malleable_sim::engine::JobRecord;
use malleable_sim::model::app_model::Iterative;
use malleable_sim::workloads::workload::{slurm_minutes, JobSpec, Workload};
use malleable_sim::SimResult;
use testcluster::Cluster;

use crate::records::{read_log, LoggedJob};

/// Cells of the example application's line: divisible by every count from 1
/// to 10 and by 12, 14, 15, 16, 18, 20, 21, 24, 28, 30 and 32, so a job's
/// work splits evenly on most sizes.
pub const CELLS: u64 = 10_080;

/// About how long one iteration takes on the start size: short enough that
/// a resize is probed for soon, long enough that the per-iteration overhead
/// (halo exchange, probe) stays around 1% of it.
const ITERATION_S: f64 = 0.25;

/// `mall-example` arguments that make `run_time` seconds of work on `nodes` nodes.
pub fn app_args(run_time: f64, nodes: u32) -> String {
    let block = CELLS.div_ceil(u64::from(nodes.max(1)));
    let iterations = (run_time / ITERATION_S).round().max(1.0) as u64;
    let unit_us = ((run_time * 1e6 / iterations as f64 / block as f64).round() as u64).max(1);
    format!("--cells {CELLS} --unit-us {unit_us} --iterations {iterations} --checkpoint-every 0")
}

/// Rows of the MPI Jacobi's grid, divisible as [`CELLS`] is; 32 columns.
pub const JACOBI_ROWS: u64 = 1_680;

/// `mall-jacobi-*` arguments that make `run_time` seconds of work on `nodes`
/// nodes (the emulated time is per row a rank holds, as `app_args`' per cell).
pub fn jacobi_args(run_time: f64, nodes: u32) -> String {
    let block = JACOBI_ROWS.div_ceil(u64::from(nodes.max(1)));
    let iterations = (run_time / ITERATION_S).round().max(1.0) as u64;
    let unit_us = ((run_time * 1e6 / iterations as f64 / block as f64).round() as u64).max(1);
    format!("--rows {JACOBI_ROWS} --cols 32 --unit-us {unit_us} --iterations {iterations}")
}

/// What a malleable job runs under mall-run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElasticApp {
    /// mall-example, a worker a node (iterative jobs follow their curve).
    Example,
    /// The MPI Jacobi in restart mode: built with Open MPI (srun
    /// --mpi=pmix) for odd job numbers, MPICH (--mpi=pmi2) for even ones.
    MpiRestart,
}

impl ElasticApp {
    /// For malleable job `spec`: the staged command, mall-run's options
    /// before `--`, and the command's options (its `--serial` run with
    /// them computes what the job must).
    pub fn for_job(self, spec: &JobSpec) -> (&'static str, &'static str, String) {
        match self {
            ElasticApp::Example => (
                "mall-example",
                "",
                spec.iterative.as_ref().map_or_else(|| app_args(spec.run_time, spec.nodes), iterative_args),
            ),
            ElasticApp::MpiRestart if spec.id % 2 == 1 => {
                ("mall-jacobi-openmpi", "--mpi restart --mpi-plugin pmix", jacobi_args(spec.run_time, spec.nodes))
            }
            ElasticApp::MpiRestart => {
                ("mall-jacobi-mpich", "--mpi restart --mpi-plugin pmi2", jacobi_args(spec.run_time, spec.nodes))
            }
        }
    }
}

/// `mall-example` arguments for an iterative job (MPDATA): its iterations,
/// each taking its curve's time on the current node count (one worker a
/// node), run `time_scale` times faster, asking whether to reconfigure at
/// its checks.
pub fn iterative_args(it: &Iterative) -> String {
    let curve: Vec<String> = it.seconds.iter().map(|(n, t)| format!("{n}:{t}")).collect();
    format!(
        "--cells {CELLS} --unit-us 0 --iterations {} --iteration-seconds {} --time-scale {} --ask-every {} --checkpoint-every 0",
        it.iterations,
        curve.join(","),
        it.time_scale,
        it.check_every
    )
}

/// How one job of the workload went.
#[derive(Clone, Debug)]
pub struct RunJob {
    pub spec: JobSpec,
    pub slurm_id: u32,
    pub logged: LoggedJob,
    /// Slurm's final state (COMPLETED, FAILED, ...).
    pub state: String,
    /// The example application's output file, for malleable jobs.
    pub output: Option<PathBuf>,
}

/// A workload's run on the real cluster.
#[derive(Clone, Debug)]
pub struct RealRun {
    pub label: String,
    pub nodes: usize,
    /// Node names in order (rows of the occupancy chart).
    pub node_names: Vec<String>,
    pub jobs: Vec<RunJob>,
    /// The first submission, seconds since the epoch: time 0 of the records.
    pub t0: f64,
}

impl RealRun {
    /// The jobs as the simulator records them, times from the first submission.
    pub fn records(&self) -> Vec<JobRecord> {
        self.jobs
            .iter()
            .map(|j| {
                let rel = |t: Option<f64>| t.map_or(f64::NAN, |t| t - self.t0);
                JobRecord {
                    id: j.spec.id,
                    submit: rel(j.logged.submit),
                    start: rel(j.logged.start),
                    end: rel(j.logged.end),
                    start_nodes: j.logged.start_nodes.len() as u32,
                    final_nodes: j.logged.final_nodes() as u32,
                    malleable: j.spec.malleable.is_some(),
                    expands: j.logged.expands,
                    shrinks: j.logged.shrinks,
                    class: j.spec.iterative.map(|it| it.class),
                    alone_run: None,
                    packing: None,
                }
            })
            .collect()
    }

    /// Every (node, workload job id, from, to) a job held, from the first submission.
    pub fn occupancy(&self) -> Vec<(String, u32, f64, f64)> {
        let until = self.jobs.iter().filter_map(|j| j.logged.end).fold(self.t0, f64::max);
        let mut out = Vec::new();
        for j in &self.jobs {
            for (node, a, b) in j.logged.occupancy(until) {
                out.push((node, j.spec.id, a - self.t0, b - self.t0));
            }
        }
        out
    }

    /// As a simulator result, so that `malleable_sim::summarize` gives the
    /// same figures for both.
    pub fn as_sim_result(&self) -> SimResult {
        let node_seconds = self.occupancy().iter().map(|o| o.3 - o.2).sum();
        SimResult {
            nodes: self.nodes,
            jobs: self.records(),
            node_seconds,
            passes: 0,
            power: None,
            tally: Default::default(),
            // Not measured on the real cluster.
            resize_seconds: 0.0,
        }
    }

    /// Resizes rolled back over the run.
    pub fn rollbacks(&self) -> u32 {
        self.jobs.iter().map(|j| j.logged.rollbacks).sum()
    }
}

/// How to replay.
pub struct Replay<'a> {
    pub cluster: &'a Cluster,
    /// Where mall-run and the applications are.
    pub bin: &'a Path,
    pub app: ElasticApp,
    /// mall-run's `--poll-ms`: with many malleable jobs, each polling
    /// slurmctld, a longer period spares the controller.
    pub poll_ms: u64,
    pub label: String,
    /// Give up waiting this long after the last submission.
    pub drain_timeout: Duration,
}

impl Replay<'_> {
    /// Submit every job at its time, wait for all to end, read them back.
    pub fn run(&self, w: &Workload) -> Result<RealRun, String> {
        let dir = self.cluster.dir.join(format!("run-{}", self.label.replace(['/', ' '], "_")));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut order: Vec<&JobSpec> = w.jobs.iter().collect();
        order.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id)));
        let mut submitted: Vec<(JobSpec, u32, Option<PathBuf>)> = Vec::new();
        let started = Instant::now();
        let mut progress = Progress::new(&self.label, w.jobs.len());
        for spec in order {
            let due = started + Duration::from_secs_f64(spec.submit.max(0.0));
            while Instant::now() < due {
                progress.show(self.cluster, submitted.len(), started, false);
                std::thread::sleep((due - Instant::now()).min(Duration::from_millis(500)));
            }
            let (id, out) = self.submit(spec, &dir)?;
            submitted.push((spec.clone(), id, out));
        }
        let ids: Vec<u32> = submitted.iter().map(|s| s.1).collect();
        let deadline = Instant::now() + self.drain_timeout;
        let infos = loop {
            let jobs = self.cluster.jobs()?;
            let mine: Vec<_> = jobs.into_iter().filter(|j| ids.contains(&j.id)).collect();
            if mine.len() == ids.len() && mine.iter().all(|j| j.is_finished()) {
                break mine;
            }
            if Instant::now() > deadline {
                progress.done();
                let left: Vec<String> =
                    mine.iter().filter(|j| !j.is_finished()).map(|j| format!("{}:{}", j.id, j.state)).collect();
                return Err(format!(
                    "{}: jobs still not finished {} s after the last submission: {}",
                    self.label,
                    self.drain_timeout.as_secs(),
                    left.join(" ")
                ));
            }
            progress.show(self.cluster, submitted.len(), started, true);
            std::thread::sleep(Duration::from_millis(500));
        };
        progress.done();
        let logged = read_log(&self.cluster.ctld_log());
        let mut jobs = Vec::new();
        for (spec, id, output) in submitted {
            let info = infos.iter().find(|j| j.id == id);
            let state = info.map(|j| j.state.clone()).unwrap_or_default();
            let mut logged = logged.get(&id).cloned().unwrap_or_default();
            // A job ended by its time limit or cancelled has no
            // `_job_complete ... done` line: scontrol's whole second then.
            if logged.end.is_none() {
                logged.end = info.and_then(|j| j.end).map(|t| t as f64);
            }
            jobs.push(RunJob { spec, slurm_id: id, logged, state, output });
        }
        jobs.sort_by_key(|j| j.spec.id);
        let t0 = jobs.iter().filter_map(|j| j.logged.submit).fold(f64::INFINITY, f64::min);
        Ok(RealRun {
            label: self.label.clone(),
            nodes: w.nodes,
            node_names: self.cluster.node_names(),
            jobs,
            t0: if t0.is_finite() { t0 } else { 0.0 },
        })
    }

    fn submit(&self, spec: &JobSpec, dir: &Path) -> Result<(u32, Option<PathBuf>), String> {
        let name = format!("--job-name=j{}", spec.id);
        let nodes = format!("--nodes={}", spec.nodes);
        let time = format!("--time={}", slurm_minutes(spec.estimate));
        let Some(m) = spec.malleable else {
            let out = format!("--output={}/j{}.out", dir.display(), spec.id);
            let wrap = format!("sleep {:.3}", spec.run_time);
            return Ok((self.cluster.sbatch(&[&name, &nodes, &time, &out, "--wrap", &wrap])?, None));
        };
        let script = dir.join(format!("j{}.sh", spec.id));
        let output = dir.join(format!("j{}.out", spec.id));
        let (command, mall_run, args) = self.app.for_job(spec);
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nexec {} --poll-ms {} {mall_run} -- {} {args}\n",
                self.bin.join("mall-run").display(),
                self.poll_ms,
                self.bin.join(command).display(),
            ),
        )
        .map_err(|e| format!("{}: {e}", script.display()))?;
        let constraint = match m.constraint {
            NodeConstraint::None => "none",
            NodeConstraint::PowerOfTwo => "pof2",
            NodeConstraint::Even => "even",
            NodeConstraint::Odd => "odd",
            NodeConstraint::NCube => "ncube",
        };
        let id = self.cluster.sbatch(&[
            &name,
            &nodes,
            &time,
            &format!("--output={}", output.display()),
            &format!("--min-nodes-invasive={}", m.min),
            &format!("--max-nodes-invasive={}", m.max),
            &format!("--node-constraints={constraint}"),
            script.to_str().unwrap_or_default(),
        ])?;
        Ok((id, Some(output)))
    }
}

/// A progress line on stderr while a run goes on: redrawn in place on a
/// terminal, a line every 30 s otherwise (CI logs).
struct Progress {
    label: String,
    total: usize,
    tty: bool,
    last: Option<Instant>,
}

impl Progress {
    fn new(label: &str, total: usize) -> Self {
        Progress { label: label.to_string(), total, tty: std::io::stderr().is_terminal(), last: None }
    }

    fn show(&mut self, c: &Cluster, submitted: usize, since: Instant, draining: bool) {
        let every = if self.tty { Duration::from_secs(1) } else { Duration::from_secs(30) };
        if self.last.is_some_and(|l| l.elapsed() < every) {
            return;
        }
        self.last = Some(Instant::now());
        let jobs = c.jobs().unwrap_or_default();
        let running = jobs.iter().filter(|j| j.has_started() && !j.is_finished()).count();
        let done = jobs.iter().filter(|j| j.is_finished() && j.name.starts_with('j')).count();
        let line = format!(
            "{}: {:>4} s, submitted {submitted}/{}, running {running}, done {done}{}",
            self.label,
            since.elapsed().as_secs(),
            self.total,
            if draining { ", waiting for the last jobs" } else { "" }
        );
        if self.tty {
            eprint!("\r{line:<100}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
    }

    fn done(&self) {
        if self.tty && self.last.is_some() {
            eprint!("\r{:<100}\r", "");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds the application computes for with these arguments on `n` nodes.
    fn compute_s(args: &str, n: u64) -> f64 {
        let v = |k: &str| -> u64 {
            let w: Vec<&str> = args.split_whitespace().collect();
            w[w.iter().position(|x| *x == k).unwrap() + 1].parse().unwrap()
        };
        (v("--iterations") * v("--unit-us") * v("--cells").div_ceil(n)) as f64 / 1e6
    }

    #[test]
    fn the_application_is_sized_to_the_jobs_run_time_and_scales_linearly() {
        for (t, n) in [(26.7, 1), (32.2, 2), (53.4, 16), (184.6, 2), (10.0, 5), (18.7, 8)] {
            let args = app_args(t, n);
            let got = compute_s(&args, u64::from(n));
            assert!((got / t - 1.0).abs() < 0.02, "{t} s on {n}: {args} computes {got} s");
            // Twice the nodes (where the line splits evenly), half the time.
            if CELLS.is_multiple_of(u64::from(2 * n)) {
                assert!((compute_s(&args, u64::from(2 * n)) * 2.0 - got).abs() < 1e-9);
            }
        }
        assert!(app_args(0.01, 1).contains("--iterations 1 "));
    }

    #[test]
    fn an_iterative_job_runs_its_curve_scaled_and_asks_at_its_checks() {
        let w =
            malleable_sim::workloads::workload::for_slurm(&malleable_sim::workloads::mpdata::mpdata(30, 31, 1), 10.0)
                .unwrap();
        let large = w.jobs.iter().find(|j| j.iterative.is_some_and(|it| it.class == "large")).unwrap();
        let args = iterative_args(large.iterative.as_ref().unwrap());
        assert!(args.contains("--iterations 100 ") && args.contains("--time-scale 10 "), "{args}");
        assert!(args.contains("--iteration-seconds 4:12.2,5:6.1,") && args.contains("--ask-every 4 "), "{args}");
        // What the application then takes on the 5 nodes it asks for is the job's run time.
        assert_eq!(large.nodes, 5);
        assert!((large.run_time - 100.0 * 6.1 / 10.0).abs() < 1e-9, "{}", large.run_time);
    }
}
