//! mall-example: a malleable application for mall-run. It smooths a line
//! of cells (each becomes the mean of itself and its two neighbours, the
//! ends held at 0) for a number of iterations, spread in equal blocks over
//! its workers: each iteration exchanges the block edges with the
//! neighbouring workers (real messages through the runtime), computes, and
//! at a safe point probes for a resize; on one it moves its cells to the
//! new set of workers and goes on. The result does not depend on the
//! resizes: rank 0 gathers the cells at the end and prints their checksum,
//! which `--serial` computes without Slurm for comparison.
//!
//! Computation is emulated: every worker of a test cluster shares this
//! machine's 2 cores, so each iteration also sleeps `--unit-us` per cell
//! the worker holds, as a node of its own would spend computing. That is
//! what makes the job faster on more nodes.

use std::time::{Duration, Instant};

use clap::Parser;
use malleable_rt::{Adaptation, CoreWatch, Runtime};

#[derive(Parser, Debug)]
#[command(name = "mall-example", version)]
struct Args {
    /// Cells in the line.
    #[arg(long, default_value_t = 4096)]
    cells: usize,
    /// Iterations to run.
    #[arg(long, default_value_t = 200)]
    iterations: u64,
    /// Emulated compute time per cell per iteration, in microseconds.
    #[arg(long, default_value_t = 50)]
    unit_us: u64,
    /// Instead of --unit-us: seconds one iteration takes on N workers, as
    /// `N:SECONDS,...` ascending (an application's measured curve, e.g.
    /// MPDATA's in Iserte et al. 2025's Table 2); beyond its ends the
    /// nearest end's value.
    #[arg(long, value_parser = parse_curve)]
    iteration_seconds: Option<Curve>,
    /// Run --iteration-seconds this many times faster.
    #[arg(long, default_value_t = 1.0, value_parser = parse_scale)]
    time_scale: f64,
    /// Probe for a resize every this many iterations.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    probe_every: u64,
    /// Ask the scheduler whether to reconfigure every this many iterations
    /// (0: never), as DMR's applications do at their sync points (Iserte et
    /// al. 2025; their inhibitor is 4); the answer comes at a later probe.
    #[arg(long, default_value_t = 0)]
    ask_every: u64,
    /// Report timings to the scheduler every this many iterations.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    report_every: u64,
    /// Wait this long inside each adaptation before committing (to watch
    /// the job adapting, or to let the scheduler's AdaptTimeout pass).
    #[arg(long, default_value_t = 0)]
    adapt_delay_ms: u64,
    /// Save the cells with mall-run at the start and every this many
    /// iterations (0: never), to go on from if a node fails.
    #[arg(long, default_value_t = 20)]
    checkpoint_every: u64,
    /// Compute the same line in this process alone, without Slurm, and
    /// print its checksum.
    #[arg(long)]
    serial: bool,
}

/// Seconds an iteration takes by worker count.
#[derive(Clone, Debug, PartialEq)]
struct Curve(Vec<(usize, f64)>);

impl Curve {
    fn at(&self, n: usize) -> f64 {
        let first = self.0[0];
        if n <= first.0 {
            return first.1;
        }
        self.0.iter().find(|p| p.0 == n).or(self.0.last()).map_or(first.1, |p| p.1)
    }
}

fn parse_curve(v: &str) -> Result<Curve, String> {
    let bad = || format!("'{v}': expected N:SECONDS,... with N ascending from 1 and seconds >= 0, e.g. 1:8.9,2:3.4");
    let mut points: Vec<(usize, f64)> = Vec::new();
    for part in v.split(',') {
        let (n, t) = part.trim().split_once(':').ok_or_else(bad)?;
        let (n, t): (usize, f64) = (n.trim().parse().map_err(|_| bad())?, t.trim().parse().map_err(|_| bad())?);
        if n == 0 || !t.is_finite() || t < 0.0 || points.last().is_some_and(|p| p.0 >= n) {
            return Err(bad());
        }
        points.push((n, t));
    }
    Ok(Curve(points))
}

fn parse_scale(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("'{v}': expected a number above 0")),
    }
}

/// The line's start: a saw-tooth, so smoothing has work to do.
fn initial(i: usize) -> f64 {
    (i % 17) as f64
}

/// One smoothing step of `block` (cells `first..`), given the cells just
/// left and right of it (0 beyond the ends).
fn smooth(block: &[f64], left: f64, right: f64) -> Vec<f64> {
    (0..block.len())
        .map(|i| {
            let l = if i == 0 { left } else { block[i - 1] };
            let r = if i + 1 == block.len() { right } else { block[i + 1] };
            (l + block[i] + r) / 3.0
        })
        .collect()
}

/// The sum of the cells in order, as bits: equal only for equal lines.
fn checksum(cells: &[f64]) -> String {
    let sum: f64 = cells.iter().sum();
    format!("{sum:.17e}")
}

fn to_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()
}

fn main() {
    let args = Args::parse();
    let result = if args.serial { serial(&args) } else { malleable(&args) };
    if let Err(e) = result {
        eprintln!("mall-example: {e}");
        std::process::exit(1);
    }
}

fn serial(a: &Args) -> Result<(), String> {
    let mut line: Vec<f64> = (0..a.cells).map(initial).collect();
    for _ in 0..a.iterations {
        line = smooth(&line, 0.0, 0.0);
    }
    println!("mall-example: done iterations={} cells={} checksum={}", a.iterations, a.cells, checksum(&line));
    Ok(())
}

/// This worker's first cell and count, in equal blocks (the first ones one
/// more when it does not divide), as the hub splits them.
fn block_of(cells: usize, rank: usize, size: usize) -> (usize, usize) {
    let base = cells / size;
    let extra = cells % size;
    let first = rank * base + rank.min(extra);
    (first, base + usize::from(rank < extra))
}

/// Where a worker stands between iterations.
struct Worker {
    rt: Runtime,
    node: String,
    block: Vec<f64>,
    iteration: u64,
    /// The probe of this iteration happened (a joiner's, before it came).
    probed: bool,
    since_report: u32,
    /// Its cores, which task/drom changes when a job starts on some of
    /// them or gives them back (a threaded code would resize its pool).
    cores: Option<CoreWatch>,
}

/// What an iteration ends with.
enum Flow {
    Go,
    /// This worker leaves the job: it says so and ends.
    Left,
}

fn malleable(a: &Args) -> Result<(), String> {
    let mut rt = Runtime::init()?;
    let node = std::env::var("SLURMD_NODENAME").unwrap_or_default();
    let joining = rt.joining().is_some();
    let block = if joining {
        println!("mall-example: worker joining on {node}");
        adapt(&mut rt, &[], a)?.ok_or("a joining worker was told to leave")?
    } else {
        if a.cells < rt.size() {
            return Err(format!("--cells={} is fewer than the {} workers", a.cells, rt.size()));
        }
        let (first, count) = block_of(a.cells, rt.rank(), rt.size());
        println!("mall-example: worker {} of {} on {node}", rt.rank(), rt.size());
        (first..first + count).map(initial).collect()
    };
    // A joining worker enters the loop where the others are: just after
    // the probe that started the adaptation, at the iteration rank 0 says.
    let iteration = agree_on_iteration(&mut rt, 0)?;
    let mut w = Worker { rt, node, block, iteration, probed: joining, since_report: 0, cores: CoreWatch::new().ok() };
    // The starting cells are the first checkpoint: a node lost before the
    // first period costs the work done, not the run.
    if a.checkpoint_every > 0 && !joining && w.iteration == 0 {
        w.rt.checkpoint(0, &to_bytes(&w.block), 8)?;
    }
    let started = Instant::now();
    while w.iteration < a.iterations {
        match iterate(&mut w, a) {
            Ok(Flow::Go) => {}
            Ok(Flow::Left) => return Ok(w.rt.finish()?),
            // Workers were lost: what this one was doing is dropped; its
            // next probe starts the recovery from the last checkpoint.
            Err(e) if e.is_lost() => {
                eprintln!("mall-example: {e}");
                w.probed = false;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    // Rank 0 gathers the line, in rank order, and prints its checksum.
    let (rank, size) = (w.rt.rank(), w.rt.size());
    if rank == 0 {
        let mut line = std::mem::take(&mut w.block);
        for r in 1..size {
            line.extend(from_bytes(&w.rt.recv(r)?));
        }
        println!(
            "mall-example: done iterations={} cells={} checksum={} workers={size} seconds={:.2}",
            a.iterations,
            line.len(),
            checksum(&line),
            started.elapsed().as_secs_f64()
        );
    } else {
        w.rt.send(0, &to_bytes(&w.block))?;
    }
    Ok(w.rt.finish()?)
}

/// One iteration: maybe a probe (and an adaptation), the halo exchange,
/// the computation, maybe a report and a checkpoint.
fn iterate(w: &mut Worker, a: &Args) -> malleable_rt::Result<Flow> {
    // One question for the job: rank 0 asks.
    if a.ask_every > 0 && w.iteration > 0 && w.iteration.is_multiple_of(a.ask_every) && w.rt.rank() == 0 {
        w.rt.should_reconfigure()?;
    }
    let due = w.iteration.is_multiple_of(a.probe_every);
    if let Some(n) = w.cores.as_mut().filter(|_| due).and_then(CoreWatch::changed) {
        println!("mall-example: iteration {}: {n} cores on {}", w.iteration, w.node);
    }
    if !std::mem::take(&mut w.probed) && due {
        let what = w.rt.probe()?;
        if what != Adaptation::None {
            let (kind, size) = match &what {
                Adaptation::Expand { size, .. } => ("expand", *size),
                Adaptation::Shrink { size, lost: false, .. } => ("shrink", *size),
                Adaptation::Shrink { size, lost: true, .. } => ("recover", *size),
                Adaptation::None => unreachable!("checked above"),
            };
            if w.rt.rank() == 0 {
                println!("mall-example: iteration {}: {kind} to {size} workers", w.iteration);
            }
            match adapt(&mut w.rt, &w.block, a).map_err(malleable_rt::Error)? {
                Some(b) => w.block = b,
                None => {
                    println!("mall-example: worker leaving {}", w.node);
                    return Ok(Flow::Left);
                }
            }
            if let Some(from) = w.rt.restart_iteration() {
                w.iteration = from;
                if w.rt.rank() == 0 {
                    println!("mall-example: going on from the checkpoint of iteration {from}");
                }
            }
            w.iteration = agree_on_iteration(&mut w.rt, w.iteration).map_err(malleable_rt::Error)?;
            w.since_report = 0;
            if w.block.is_empty() {
                return Err(malleable_rt::Error(format!("--cells={} is fewer than the {size} workers", a.cells)));
            }
        }
    }
    // The block's edges to the neighbours, theirs back.
    let (rank, size) = (w.rt.rank(), w.rt.size());
    let block = &w.block;
    if rank > 0 {
        w.rt.send(rank - 1, &to_bytes(&block[..1]))?;
    }
    if rank + 1 < size {
        w.rt.send(rank + 1, &to_bytes(&block[block.len() - 1..]))?;
    }
    let left = if rank > 0 { from_bytes(&w.rt.recv(rank - 1)?)[0] } else { 0.0 };
    let right = if rank + 1 < size { from_bytes(&w.rt.recv(rank + 1)?)[0] } else { 0.0 };
    w.block = smooth(&w.block, left, right);
    let compute = match &a.iteration_seconds {
        Some(curve) => Duration::from_secs_f64(curve.at(size) / a.time_scale),
        None => Duration::from_micros(a.unit_us * w.block.len() as u64),
    };
    std::thread::sleep(compute);
    w.iteration += 1;
    w.since_report += 1;
    if u64::from(w.since_report) >= a.report_every {
        w.rt.report_measured(w.since_report)?;
        w.since_report = 0;
    }
    if a.checkpoint_every > 0 && w.iteration.is_multiple_of(a.checkpoint_every) {
        w.rt.checkpoint(w.iteration, &to_bytes(&w.block), 8)?;
    }
    Ok(Flow::Go)
}

/// Carry out the adaptation under way: begin, move the cells, commit.
/// The new block, or `None` when this worker leaves.
fn adapt(rt: &mut Runtime, block: &[f64], a: &Args) -> Result<Option<Vec<f64>>, String> {
    let begun = rt.begin()?;
    let moved = from_bytes(&rt.redistribute(&to_bytes(block), 8)?);
    if begun.leaving {
        return Ok(None);
    }
    if a.adapt_delay_ms > 0 {
        std::thread::sleep(Duration::from_millis(a.adapt_delay_ms));
    }
    rt.commit()?;
    Ok(Some(moved))
}

fn agree_on_iteration(rt: &mut Runtime, mine: u64) -> Result<u64, String> {
    let v = if rt.rank() == 0 { mine as f64 } else { 0.0 };
    let sum = rt.allreduce_sum(&[v])?;
    Ok(sum[0] as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_reads_and_gives_the_nearest_end_beyond_it() {
        let c = parse_curve("2:8.7, 3:5.3,4:3.8").unwrap();
        assert_eq!((c.at(1), c.at(3), c.at(9)), (8.7, 5.3, 3.8));
        for bad in ["", "2", "0:1", "3:1,2:1", "1:-1", "1:x"] {
            assert!(parse_curve(bad).unwrap_err().contains("N:SECONDS"), "{bad}");
        }
    }

    #[test]
    fn blocks_cover_the_line_as_the_hub_splits_it() {
        for (cells, size) in [(10, 3), (4096, 7), (5, 5)] {
            let mut next = 0;
            for r in 0..size {
                let (first, count) = block_of(cells, r, size);
                assert_eq!(first, next);
                next += count;
            }
            assert_eq!(next, cells);
        }
        assert_eq!(block_of(10, 0, 3), (0, 4));
    }

    #[test]
    fn smoothing_in_blocks_is_smoothing_the_whole_line() {
        let line: Vec<f64> = (0..50).map(initial).collect();
        let whole = smooth(&line, 0.0, 0.0);
        let (a, b) = line.split_at(20);
        let mut parts = smooth(a, 0.0, b[0]);
        parts.extend(smooth(b, a[19], 0.0));
        assert_eq!(checksum(&whole), checksum(&parts));
        assert_eq!(whole, parts);
    }
}
