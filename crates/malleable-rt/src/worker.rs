//! The application's side: one `Runtime` per worker process, connected to
//! the hub that mall-run runs in the job's batch step (its address and the
//! job's token come in the environment mall-run starts the worker with).
//!
//! An adaptation goes as in iMPI (Comprés et al. 2016): every worker calls
//! [`Runtime::probe`] at a safe point; when it answers Expand or Shrink,
//! every worker, and the workers started on new nodes (whose
//! [`Runtime::init`] said they are joining), calls [`Runtime::begin`]
//! (the new ranks), then [`Runtime::redistribute`] (the data, in block
//! order), then the staying ones [`Runtime::commit`] and the leaving ones
//! [`Runtime::finish`]. Probes, begins, redistributions, reductions and
//! barriers are collective: each waits for every worker of the job.

use std::io::{BufReader, BufWriter};
use std::net::TcpStream;
use std::time::Instant;

use crate::power::{Rapl, POWERCAP};
use crate::wire::{bytes_to_f64s, f64s_to_bytes, Frame};

/// What went wrong, said for a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// How an error caused by lost workers begins (see [`Error::is_lost`]).
pub const LOST: &str = "workers were lost";

impl Error {
    /// The job lost workers with their nodes: what this worker was doing
    /// is abandoned; it is to probe, and the probe answers a shrink with
    /// `lost`, whose redistribution hands out the last checkpoint.
    pub fn is_lost(&self) -> bool {
        self.0.starts_with(LOST)
    }
}

impl From<Error> for String {
    fn from(e: Error) -> String {
        e.0
    }
}

impl From<String> for Error {
    fn from(s: String) -> Error {
        Error(s)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The environment mall-run starts a worker with.
pub const ENV_HUB: &str = "MALL_HUB";
pub const ENV_TOKEN: &str = "MALL_TOKEN";
pub const ENV_WORKER: &str = "MALL_WORKER";
/// In restart mode (one step for every worker, an MPI application's), the
/// first worker's number: a worker's is it plus its task's SLURM_PROCID.
pub const ENV_WORKER_BASE: &str = "MALL_WORKER_BASE";

/// A restart-mode worker's number: the step's first plus its task's rank.
fn worker_in_step(base: &str, procid: &str) -> Result<String> {
    let parse = |name: &str, v: &str| {
        v.parse::<u32>().map_err(|_| Error(format!("{name}={v} is not valid: expected a whole number")))
    };
    let (b, p) = (parse(ENV_WORKER_BASE, base)?, parse("SLURM_PROCID", procid)?);
    b.checked_add(p)
        .map(|w| w.to_string())
        .ok_or_else(|| Error(format!("{ENV_WORKER_BASE}={base} and SLURM_PROCID={procid} overflow")))
}

/// What a probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Adaptation {
    None,
    /// The job grew onto `nodes`; `size` workers after it.
    Expand {
        resize: u64,
        nodes: Vec<String>,
        size: usize,
    },
    /// The job is to leave `nodes`; `size` workers after it. With `lost`,
    /// it lost them (they failed): the workers there are gone, and the
    /// redistribution hands out the last checkpoint instead of what the
    /// workers give.
    Shrink {
        resize: u64,
        nodes: Vec<String>,
        size: usize,
        lost: bool,
    },
}

/// Where this worker stands once an adaptation has begun.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Begun {
    /// Its rank after the adaptation (meaningless when leaving).
    pub rank: usize,
    pub size: usize,
    pub leaving: bool,
}

/// One worker's runtime.
pub struct Runtime {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
    rank: usize,
    size: usize,
    /// The adaptation this worker was started for, when it joins.
    joining: Option<u64>,
    /// The adaptation under way, from probe (or from init for a joiner).
    under_way: Option<u64>,
    leaving: bool,
    rapl: Option<Rapl>,
    /// The checkpoint's iteration, after a redistribution that handed it out.
    restart: Option<u64>,
    /// mall-run runs the application in restart mode.
    restarts: bool,
    /// Time spent in this runtime's communication since the last report.
    comm_s: f64,
    since_report: Instant,
}

impl Runtime {
    /// Connect to the hub named in the environment.
    pub fn init() -> Result<Runtime> {
        let var = |name: &str| {
            std::env::var(name).map_err(|_| {
                Error(format!(
                    "{name} is not set: a malleable application is started by mall-run in a Slurm job \
                     (mall-run -- APP ARGS in the batch script)"
                ))
            })
        };
        let (hub, token) = (var(ENV_HUB)?, var(ENV_TOKEN)?);
        let worker = match std::env::var(ENV_WORKER_BASE) {
            Ok(base) => worker_in_step(&base, &var("SLURM_PROCID")?)?,
            Err(_) => var(ENV_WORKER)?,
        };
        Runtime::connect(&hub, &token, &worker)
    }

    /// Connect to the hub at `hub` (host:port) as worker `worker`.
    pub fn connect(hub: &str, token: &str, worker: &str) -> Result<Runtime> {
        let stream =
            TcpStream::connect(hub).map_err(|e| Error(format!("cannot reach mall-run's hub at {hub}: {e}")))?;
        // Small frames go out at once: every collective is a round trip.
        stream.set_nodelay(true).map_err(|e| Error(format!("{hub}: {e}")))?;
        let writer = BufWriter::new(stream.try_clone().map_err(|e| Error(format!("{hub}: {e}")))?);
        let mut rt = Runtime {
            reader: BufReader::new(stream),
            writer,
            rank: 0,
            size: 0,
            joining: None,
            under_way: None,
            leaving: false,
            rapl: Rapl::open(std::path::Path::new(POWERCAP)),
            restart: None,
            restarts: false,
            comm_s: 0.0,
            since_report: Instant::now(),
        };
        let welcome = rt.call(Frame::new("HELLO").with("token", token).with("worker", worker), "WELCOME")?;
        rt.rank = welcome.number("rank")?;
        rt.size = welcome.number("size")?;
        let joining: u64 = welcome.number("joining")?;
        rt.joining = (joining != 0).then_some(joining);
        rt.under_way = rt.joining;
        rt.restarts = welcome.get("restart").is_ok();
        if let Some(r) = rt.rapl.as_mut() {
            r.watts();
        }
        Ok(rt)
    }

    /// Its rank among the job's workers, from 0.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many workers the job has.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The adaptation this worker was started for: it is to call `begin`,
    /// `redistribute` and `commit` before anything else.
    pub fn joining(&self) -> Option<u64> {
        self.joining
    }

    /// Whether mall-run runs the application in restart mode (`--mpi
    /// restart`): at a resize every worker saves its data with
    /// [`Runtime::checkpoint`] and calls [`Runtime::finish`], and the
    /// workers started on the new nodes are joining: `begin`, then
    /// `redistribute` hands each its share of the checkpoint (whose
    /// iteration [`Runtime::restart_iteration`] gives), then `commit`.
    pub fn restarts(&self) -> bool {
        self.restarts
    }

    /// Send one frame and read its reply, which must be `want`.
    fn call(&mut self, frame: Frame, want: &str) -> Result<Frame> {
        let what = frame.verb.clone();
        let lost = |e: std::io::Error| Error(format!("{what}: the connection to mall-run's hub failed: {e}"));
        frame.write_to(&mut self.writer).map_err(lost)?;
        let reply = Frame::read_from(&mut self.reader)
            .map_err(lost)?
            .ok_or_else(|| Error(format!("{what}: mall-run's hub closed the connection")))?;
        if reply.verb == "ERROR" {
            return Err(Error(format!("{what}: {}", String::from_utf8_lossy(&reply.payload))));
        }
        if reply.verb == "LOST" {
            self.under_way = None;
            return Err(Error(format!("{LOST}: {what} abandoned; probe to go on from the last checkpoint")));
        }
        if reply.verb != want && !(want == "PROBED" && ["NONE", "EXPAND", "SHRINK"].contains(&reply.verb.as_str())) {
            return Err(Error(format!("{what}: mall-run's hub answered {}, not {want}", reply.verb)));
        }
        Ok(reply)
    }

    /// A call whose time counts as communication.
    fn comm(&mut self, frame: Frame, want: &str) -> Result<Frame> {
        let t = Instant::now();
        let r = self.call(frame, want);
        self.comm_s += t.elapsed().as_secs_f64();
        r
    }

    /// At a safe point (collective): should the job adapt now?
    pub fn probe(&mut self) -> Result<Adaptation> {
        if self.under_way.is_some() {
            return Err(Error("probe: an adaptation is under way: begin, redistribute and commit it first".into()));
        }
        let r = self.comm(Frame::new("PROBE"), "PROBED")?;
        let a = match r.verb.as_str() {
            "NONE" => Adaptation::None,
            "EXPAND" => {
                Adaptation::Expand { resize: r.number("resize")?, nodes: r.list("nodes")?, size: r.number("size")? }
            }
            _ => Adaptation::Shrink {
                resize: r.number("resize")?,
                nodes: r.list("nodes")?,
                size: r.number("size")?,
                lost: r.get("lost").is_ok(),
            },
        };
        self.under_way = match &a {
            Adaptation::None => None,
            Adaptation::Expand { resize, .. } | Adaptation::Shrink { resize, .. } => Some(*resize),
        };
        Ok(a)
    }

    /// Begin the adaptation the last probe (or init, when joining) named
    /// (collective, joining workers included): this worker's new rank.
    pub fn begin(&mut self) -> Result<Begun> {
        let Some(resize) = self.under_way else {
            return Err(Error("begin: no adaptation is under way (probe found none)".into()));
        };
        let r = self.comm(Frame::new("BEGIN").with("resize", resize), "BEGUN")?;
        let b = Begun { rank: r.number("rank")?, size: r.number("size")?, leaving: r.number::<u8>("leaving")? == 1 };
        self.leaving = b.leaving;
        Ok(b)
    }

    /// Hand this worker's items (each `item_size` bytes, in global order)
    /// to the hub and get this worker's share after the adaptation: the
    /// items of every worker, in rank order, split into equal blocks over
    /// the workers that stay and join (collective). A leaving worker gets
    /// nothing back; a joining one gives nothing.
    pub fn redistribute(&mut self, data: &[u8], item_size: usize) -> Result<Vec<u8>> {
        if item_size == 0 || !data.len().is_multiple_of(item_size) {
            return Err(Error(format!(
                "redistribute: {} bytes are not a whole number of items of {item_size} bytes",
                data.len()
            )));
        }
        let r = self.comm(Frame::new("REDIST").with("item", item_size).with_payload(data.to_vec()), "DATA")?;
        self.restart = match r.get("checkpoint") {
            Ok(_) => Some(r.number("checkpoint")?),
            Err(_) => None,
        };
        Ok(r.payload)
    }

    /// After a redistribution for lost workers: the iteration of the
    /// checkpoint it handed out, to go on from.
    pub fn restart_iteration(&self) -> Option<u64> {
        self.restart
    }

    /// Save this worker's items (each `item_size` bytes) at `iteration`
    /// with the hub (collective): if workers are lost, the others go on
    /// from the last checkpoint all the workers saved.
    pub fn checkpoint(&mut self, iteration: u64, data: &[u8], item_size: usize) -> Result<()> {
        if item_size == 0 || !data.len().is_multiple_of(item_size) {
            return Err(Error(format!(
                "checkpoint: {} bytes are not a whole number of items of {item_size} bytes",
                data.len()
            )));
        }
        let f = Frame::new("CHECKPOINT").with("iteration", iteration).with("item", item_size);
        self.comm(f.with_payload(data.to_vec()), "OK").map(|_| ())
    }

    /// The adaptation is done on this worker's side: it runs with its new
    /// rank. The hub commits it to the scheduler once every worker has,
    /// and every leaving one is gone.
    pub fn commit(&mut self) -> Result<()> {
        if self.leaving {
            return Err(Error("commit: this worker is leaving: it calls finish".into()));
        }
        let r = self.comm(Frame::new("COMMIT"), "COMMITTED")?;
        self.rank = r.number("rank")?;
        self.size = r.number("size")?;
        self.under_way = None;
        self.joining = None;
        Ok(())
    }

    /// What the last `iterations` iterations cost: time computing and time
    /// communicating, in seconds (the MTCT ratio of Chadha et al. 2020 is
    /// their ratio). The node's measured draw goes with it, when readable.
    pub fn report(&mut self, iterations: u32, compute_s: f64, comm_s: f64) -> Result<()> {
        if !(compute_s.is_finite() && comm_s.is_finite() && compute_s >= 0.0 && comm_s >= 0.0) {
            return Err(Error(format!("report: compute_s={compute_s} comm_s={comm_s}: expected numbers 0 or more")));
        }
        let mut f =
            Frame::new("REPORT").with("iterations", iterations).with("compute_s", compute_s).with("comm_s", comm_s);
        if let Some(w) = self.rapl.as_mut().and_then(Rapl::watts) {
            f = f.with("watts", w);
        }
        self.call(f, "OK")?;
        self.comm_s = 0.0;
        self.since_report = Instant::now();
        Ok(())
    }

    /// `report`, with the times this runtime measured itself since the last
    /// report: communication is the time in its calls, computation the rest.
    pub fn report_measured(&mut self, iterations: u32) -> Result<()> {
        let wall = self.since_report.elapsed().as_secs_f64();
        let comm = self.comm_s.min(wall);
        self.report(iterations, wall - comm, comm)
    }

    /// Asked by the application at its own sync point: does the scheduler
    /// have an adaptation for the job? The question reaches the scheduler
    /// (Iserte et al. 2025's model); the next probe carries the answer out.
    pub fn should_reconfigure(&mut self) -> Result<bool> {
        let r = self.call(Frame::new("SHOULD"), "ANSWER")?;
        Ok(r.number::<u8>("yes")? == 1)
    }

    /// The element-wise sum over all workers (collective).
    pub fn allreduce_sum(&mut self, values: &[f64]) -> Result<Vec<f64>> {
        let r =
            self.comm(Frame::new("ALLREDUCE").with("n", values.len()).with_payload(f64s_to_bytes(values)), "RESULT")?;
        Ok(bytes_to_f64s(&r.payload)?)
    }

    /// Wait for every worker (collective).
    pub fn barrier(&mut self) -> Result<()> {
        self.comm(Frame::new("BARRIER"), "OK").map(|_| ())
    }

    /// Send `bytes` to worker `to`; it does not wait for the receiver.
    pub fn send(&mut self, to: usize, bytes: &[u8]) -> Result<()> {
        self.comm(Frame::new("SEND").with("to", to).with_payload(bytes.to_vec()), "OK").map(|_| ())
    }

    /// The next message from worker `from`, waiting for it.
    pub fn recv(&mut self, from: usize) -> Result<Vec<u8>> {
        self.comm(Frame::new("RECV").with("from", from), "MSG").map(|r| r.payload)
    }

    /// This worker is done: it has finished its work, or it leaves the job.
    pub fn finish(mut self) -> Result<()> {
        self.call(Frame::new("BYE"), "OK").map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_mode_worker_is_its_steps_first_plus_its_task_rank_and_bad_values_are_named() {
        assert_eq!(worker_in_step("7", "3"), Ok("10".into()));
        assert_eq!(worker_in_step("7", "x"), Err(Error("SLURM_PROCID=x is not valid: expected a whole number".into())));
        assert_eq!(
            worker_in_step("4294967295", "1"),
            Err(Error("MALL_WORKER_BASE=4294967295 and SLURM_PROCID=1 overflow".into()))
        );
    }
}
