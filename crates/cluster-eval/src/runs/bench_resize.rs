//! `cargo xtask bench-resize`'s run: Chadha et al. 2020's Fig. 5 on a local cluster, the
//! time of a malleable job's one-node expand and shrink against its size. This file
//! drives the cluster; cluster-eval's `resize_latency` reads the logs, sums up, plots.
//!
//! One node at a time, under Strategy=mtct: the elastic job (mall-example under
//! mall-run, 1 to N nodes) starts alone on n1 and grows into every node at once (a
//! warm-up, not counted). Then each round submits 1-node rigid fillers one by one:
//! for each, mtct shrinks the job by the one node it needs, and the filler runs
//! there; then cancels them one by one, and the job grows into each freed node.
//! Each step's commit is awaited before the next, and every step is checked to have
//! moved exactly one node. The job starts on n1 because the plugin takes a job's
//! lowest node for its batch host (a shrink must keep it): a job started on a
//! higher node that grows below it is shrunk off its batch host, which slurmctld
//! refuses. mall-example's cells are few (kilobytes move), so what is measured is
//! the scheduler, slurmctld, srun and the runtime. With `--mpi restart` the job is
//! the MPI Jacobi under `mall-run --mpi restart`, once built with Open MPI (srun
//! --mpi=pmix) and once with MPICH (--mpi=pmi2): each step ends the MPI step and
//! starts it again on the new node set, so its cost grows with the job's size.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use malleable_model::slurm_lines::SlurmLine;
use testcluster::plugins;
use testcluster::{wait, Cluster, ClusterSpec};

use super::common::Result;
use crate::resize_latency::{self, Event, Kind};

/// Longest wait for one step: AdaptTimeout (60 s) ends a stuck one before.
const STEP_WITHIN: Duration = Duration::from_secs(120);

/// The new part of slurmctld's log since the last look: reading the whole log
/// ten times a second would load the two cores the cluster's daemons share.
struct LogTail {
    path: PathBuf,
    offset: u64,
}

impl LogTail {
    /// Whole lines added since the last call.
    fn new_lines(&mut self) -> Result<String> {
        let mut f = File::open(&self.path).map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
        f.seek(SeekFrom::Start(self.offset)).map_err(|e| e.to_string())?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).map_err(|e| e.to_string())?;
        // A line being written is left for the next look.
        let whole = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.offset += whole as u64;
        Ok(String::from_utf8_lossy(&buf[..whole]).into_owned())
    }
}

/// Wait for the elastic job's next committed step of `kind`; an adaptation that
/// ended without the application, or the job's end, stops the bench.
fn next_commit(tail: &mut LogTail, job: u32, kind: Kind, out: &Path) -> Result<()> {
    let ended = SlurmLine::JobComplete { job, what: "done".into() };
    wait::until(&format!("JobId={job}'s next {} to commit", kind.name()), STEP_WITHIN, || {
        let text = tail.new_lines()?;
        if text.lines().any(|l| SlurmLine::parse(l).as_ref() == Some(&ended)) {
            return Ok(Some(Err(format!("JobId={job} ended during the bench; its output is in {}", out.display()))));
        }
        for (_, e) in resize_latency::ctld_events(&text, job) {
            match e {
                Event::Failed { line } => {
                    return Ok(Some(Err(format!("JobId={job}: an adaptation failed, the bench stops: {line}"))))
                }
                Event::ExpandCommitted { .. } if kind == Kind::Expand => return Ok(Some(Ok(()))),
                Event::ShrinkCommitted { .. } if kind == Kind::Shrink => return Ok(Some(Ok(()))),
                _ => {}
            }
        }
        Ok(None)
    })?
}

/// A 1-node rigid job that sleeps for the whole bench.
fn filler(cluster: &Cluster, minutes: usize) -> Result<u32> {
    cluster.sbatch(&["-N1", "-t", &minutes.to_string(), "--job-name=filler", "--wrap", "sleep 100000"])
}

fn scancel(cluster: &Cluster, id: u32) -> Result<()> {
    let st = cluster.cmd("scancel").arg(id.to_string()).status().map_err(|e| format!("scancel {id}: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("scancel {id} failed: {st}"))
    }
}

/// The application a bench resizes.
struct Subject {
    /// For the table's caption.
    label: &'static str,
    /// Where its logs and plot go, under target/bench-resize/N-nodes.
    dir: &'static str,
    /// mall-run's options before `--`, the staged command and its options.
    mall_run: &'static str,
    command: &'static str,
    args: String,
}

impl Subject {
    /// mall-example, a worker a node. About 20 ms an iteration on one node
    /// (64 cells a node, 10 us each), so a probe is never far.
    fn workers(nodes: usize) -> Subject {
        Subject {
            label: "mall-example",
            dir: "",
            mall_run: "",
            command: "mall-example",
            args: format!("--cells {} --iterations 100000000 --unit-us 10 --report-every 50", 64 * nodes),
        }
    }

    /// The MPI Jacobi restarted, with each MPI: 4 rows a node of 1 ms each.
    fn restarted(nodes: usize) -> Vec<Subject> {
        let args = format!("--rows {} --cols 64 --iterations 100000000 --unit-us 1000", 4 * nodes);
        vec![
            Subject {
                label: "Open MPI (srun --mpi=pmix), restart",
                dir: "-openmpi-restart",
                mall_run: "--mpi restart --mpi-plugin pmix",
                command: "mall-jacobi-openmpi",
                args: args.clone(),
            },
            Subject {
                label: "MPICH (srun --mpi=pmi2), restart",
                dir: "-mpich-restart",
                mall_run: "--mpi restart --mpi-plugin pmi2",
                command: "mall-jacobi-mpich",
                args,
            },
        ]
    }
}

/// The bench, with the plugins (and the tools built for their release, in
/// their `bin/`) staged in `staged`, its logs and plots under `target` (the
/// workspace's target/).
pub fn run(staged: &Path, target: &Path, nodes: usize, rounds: usize, mpi: bool) -> Result<()> {
    if nodes < 2 {
        return Err(format!("bench-resize --nodes {nodes}: a one-node step needs at least 2 nodes"));
    }
    if !mpi {
        return bench(staged, target, nodes, rounds, &Subject::workers(nodes));
    }
    for s in Subject::restarted(nodes) {
        bench(staged, target, nodes, rounds, &s)?;
    }
    Ok(())
}

fn bench(staged: &Path, target: &Path, nodes: usize, rounds: usize, subject: &Subject) -> Result<()> {
    // rfc5424_ms: slurmctld's times carry their UTC offset, to set beside mall-run's.
    let mut spec = plugins::sched_malleable(ClusterSpec::new("bench", nodes), staged)
        .set("LogTimeFormat", "rfc5424_ms")
        .file("malleable.conf", "Strategy=mtct\nSchedulerTick=5\n");
    if !subject.mall_run.is_empty() {
        // A TmpFS a node, as mpi/pmix needs; each slurmd in a network
        // namespace of its own: with every rank on one host's loopback,
        // Open MPI's ranks hung in their first exchange after a restart.
        spec = spec.own_tmpfs().networked();
    }
    let cluster = Cluster::up(spec)?;
    let bin = staged.join("bin");
    let script = cluster.dir.join("bench.sh");
    let app = bin.join(subject.command);
    if !app.is_file() {
        return Err(format!(
            "{} is not built for this release (cargo xtask build makes it on the host)",
            app.display()
        ));
    }
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {} --poll-ms 50 {} -- {} {}\n",
            bin.join("mall-run").display(),
            subject.mall_run,
            app.display(),
            subject.args
        ),
    )
    .map_err(|e| e.to_string())?;
    let steps_each = nodes - 1;
    // Generous: a step takes seconds; the job must not reach its limit mid-bench.
    let minutes = rounds * nodes + 60;
    println!(
        "{nodes}-node cluster, Strategy=mtct, {}; {rounds} rounds of {steps_each} one-node shrinks ({nodes} -> 1) \
         and {steps_each} one-node expands (1 -> {nodes})",
        subject.label
    );

    let out = cluster.dir.join("elastic.out");
    let mut tail = LogTail { path: cluster.log_dir().join("slurmctld.log"), offset: 0 };
    let id = cluster.sbatch(&[
        &format!("--output={}", out.display()),
        "-N1",
        "--min-nodes-invasive=1",
        &format!("--max-nodes-invasive={nodes}"),
        "-t",
        &minutes.to_string(),
        script.to_str().ok_or("the cluster's path is not UTF-8")?,
    ])?;
    // The warm-up: once its runtime said hello, the job grows into the idle nodes.
    let show = || testcluster::process::output(cluster.cmd("scontrol").args(["show", "job", &id.to_string()]));
    let mut held = 1;
    while held < nodes {
        next_commit(&mut tail, id, Kind::Expand, &out)?;
        held = cluster.job(id)?.num_nodes as usize;
    }
    let first = cluster.node_names().into_iter().next().unwrap_or_default();
    let record = show()?;
    let batch_host = record.split_whitespace().find_map(|f| f.strip_prefix("BatchHost=")).unwrap_or("?");
    if batch_host != first {
        return Err(format!(
            "JobId={id} started on {batch_host}, not {first}: the plugin takes a job's lowest node for its batch \
             host, so its shrinks would fail"
        ));
    }
    println!("warm-up: JobId={id} started on {first} and grew to {nodes} nodes (not counted)");

    let mut fillers: VecDeque<u32> = VecDeque::new();
    for round in 1..=rounds {
        let started = Instant::now();
        for _ in 0..steps_each {
            let f = filler(&cluster, minutes)?;
            fillers.push_back(f);
            next_commit(&mut tail, id, Kind::Shrink, &out)?;
            // Running on the freed node before the next one waits: one job waiting, one node a shrink.
            cluster.wait_job(f, "to start on the freed node", STEP_WITHIN, |j| j.state == "RUNNING")?;
        }
        let shrunk = started.elapsed().as_secs_f64();
        let started = Instant::now();
        for _ in 0..steps_each {
            let f = fillers.pop_front().ok_or("no filler left to cancel")?;
            scancel(&cluster, f)?;
            next_commit(&mut tail, id, Kind::Expand, &out)?;
        }
        println!(
            "round {round}/{rounds}: shrank {nodes} -> 1 in {shrunk:.0} s, grew back in {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }
    let _ = scancel(&cluster, id);
    cluster.wait_job(id, "to end", Duration::from_secs(60), |j| j.is_finished())?;
    for f in fillers {
        let _ = scancel(&cluster, f);
    }

    let log = cluster.ctld_log();
    let app_out = std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let read = resize_latency::read_steps(&log, &app_out, id);
    // Kept beside the plot: the cluster's directory is cleared by its next start.
    let dir = target.join(format!("bench-resize/{nodes}-nodes{}", subject.dir));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, text) in [("slurmctld.log", &log), ("elastic.out", &app_out)] {
        std::fs::write(dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    // The warm-up's expands come before the first shrink.
    let counted = read.steps.into_iter().skip_while(|s| s.kind == Kind::Expand);
    let (one, other): (Vec<_>, Vec<_>) = counted.partition(|s| s.moved == 1);
    let expected = 2 * rounds * steps_each;
    println!();
    println!(
        "{} one-node steps read of {expected} made{}",
        one.len(),
        if read.incomplete > 0 {
            format!(", {} without their decision in the log", read.incomplete)
        } else {
            String::new()
        }
    );
    for line in &read.failed {
        println!("ended without its application: {line}");
    }
    for s in &other {
        println!("left out: {} {} moved {} nodes, not one", s.kind.name(), s.resize, s.moved);
    }
    if one.is_empty() {
        return Err(format!("no step was read from {}", dir.join("slurmctld.log").display()));
    }
    print!("{}", resize_latency::table(&one));
    let png = dir.join("resize-latency.png");
    let caption = format!(
        "{nodes}-node local cluster, Strategy=mtct, {}, {rounds} round{}",
        subject.label,
        if rounds == 1 { "" } else { "s" }
    );
    resize_latency::plot(&png, &one, &caption)?;
    println!("plot: {}", png.display());
    println!("logs: {}, {}", dir.join("slurmctld.log").display(), dir.join("elastic.out").display());
    Ok(())
}
