//! The hub's decisions, apart from sockets, srun and slurmctld: what each
//! input (a worker's frame or disconnection, the job's status read from
//! slurmctld, the scheduler's answer to a request, a worker step's exit, a
//! tick) makes it answer, start, tell the scheduler or log. The driver
//! (`run.rs`) feeds it and carries its outputs out, so every rule here is
//! tested without a cluster.
//!
//! An adaptation, from the scheduler's decision to its commit:
//! 1. the job's status says Expanding (the job already holds the new
//!    nodes: workers are started there) or Shrinking;
//! 2. once the new workers are connected, the next collective probe
//!    answers EXPAND or SHRINK, and BEGIN goes to the scheduler;
//! 3. BEGIN (collective with the new workers): the ranks after it;
//! 4. REDIST (collective): every worker's items, in rank order, split in
//!    equal blocks over the workers that stay and join;
//! 5. each staying worker commits; the leaving ones say BYE and their
//!    steps end; then COMMIT goes to the scheduler, which frees the left
//!    nodes, and the adaptation is over once it acknowledges.
//!
//! A worker that vanishes is waited for while its step runs: its node may
//! have failed, and a job submitted with --no-kill goes on without it (the
//! status says `lost`). Then every other worker's pending call is answered
//! LOST, their next probe answers SHRINK with `lost=1`, and the data they
//! get back is the last checkpoint (CHECKPOINT, collective), from which
//! they compute again. A node lost while an adaptation is under way ends
//! it (the plugin rolls an expand back, forces a shrink) and the loss is
//! taken up as above, the workers on a forced shrink's nodes leaving with
//! the lost ones. A worker that ended without its node being lost ends the
//! run.
//!
//! In restart mode (an MPI application: one srun step holds every rank),
//! steps 3 to 5 go otherwise: at the announcing probe the workers
//! CHECKPOINT (collective) and say BYE; once their step has ended, one
//! step is started on the job's new node set, whose workers join: BEGIN,
//! REDIST (handing out the checkpoint, as after a loss) and COMMIT, and the
//! adaptation is committed to the scheduler.
//!
//! The rules are split by what they handle: `collectives.rs` (probe,
//! begin, redistribute, reductions, checkpoints, messages),
//! `lifecycle.rs` (the job's status, commits, workers that come and go)
//! `restart.rs` (restart mode's relaunch) and `teardown.rs` (steps that
//! do not end after their ranks said BYE).

mod bound;
mod collectives;
mod io;
mod lifecycle;
mod restart;
mod teardown;
mod unconnected;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::Instant;

use malleable_model::runtime_msg::{Phase, Request, Status};
use malleable_model::JobId;
use malleable_rt::wire::Frame;

pub use io::{ConnId, Input, Launch, Output, Rules, WorkerId, ADAPT_END_GRACE, CONNECT_WITHIN};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Expand,
    Shrink,
    /// The job lost nodes: the workers there are gone, the rest go on from
    /// the last checkpoint.
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    /// The scheduler decided; workers are starting on new nodes.
    Starting,
    /// A probe told the workers.
    Announced,
    /// They began: the new ranks are known.
    Begun,
    /// The data moved; the staying workers commit, the leaving ones go.
    Moved,
    /// Told the scheduler; waiting for it to take the commit.
    Committing,
}

#[derive(Debug)]
struct Adapt {
    resize: u64,
    kind: Kind,
    nodes: Vec<String>,
    joiners: Vec<WorkerId>,
    leavers: Vec<WorkerId>,
    stage: Stage,
    /// The ranks after it.
    next: Vec<WorkerId>,
    committed: HashSet<WorkerId>,
    /// Its new workers could not start: the scheduler is asked to roll it
    /// back, and it is never announced.
    cancelled: bool,
    /// The leaving workers' end was logged (once, with its time).
    left_logged: bool,
    /// Restart mode: the workers saved their data after the announcement.
    checkpointed: bool,
    /// The joiners' steps were started (restart mode starts them once the
    /// old step has ended; the other mode at once).
    launched: bool,
}

#[derive(Debug, Default)]
struct Worker {
    node: String,
    conn: Option<ConnId>,
    connected_once: bool,
    /// When it said BYE.
    said_bye: Option<Instant>,
    closed: bool,
    /// Its step ended, and whether it succeeded.
    exited: Option<bool>,
    /// Started for an expand the scheduler then ended: Slurm ends it.
    abandoned: bool,
    /// Ended without BYE: until this time the hub waits to learn whether
    /// its node failed (then the job goes on without it) or not (the run
    /// ends).
    vanished: Option<Instant>,
    /// Its node failed.
    lost: bool,
    /// Its step failed before it connected this many times.
    failed_starts: u32,
    /// When to start its step again.
    restart_at: Option<Instant>,
    /// The first worker of its srun step (itself, but in restart mode).
    step: WorkerId,
    /// Its step is being ended by the hub (`teardown.rs`, `unconnected.rs`).
    ending: bool,
    /// When its step was last launched.
    launched: Option<Instant>,
}

impl Worker {
    fn gone(&self) -> bool {
        self.lost || ((self.said_bye.is_some() || self.closed || self.abandoned) && self.exited.is_some())
    }
}

/// The application's data as its workers last saved it together, in rank
/// order, to go on from if workers are lost.
#[derive(Debug)]
struct Checkpoint {
    iteration: u64,
    item: usize,
    data: Vec<u8>,
}

/// What the workers reported since the last report to the scheduler.
#[derive(Debug, Default)]
struct Reports {
    /// Each worker's iterations (the job's are the most any worker did).
    iterations: BTreeMap<WorkerId, u32>,
    compute_s: f64,
    comm_s: f64,
    watts: BTreeMap<String, f64>,
    count: u32,
}

pub struct Hub {
    job: JobId,
    token: String,
    rules: Rules,
    workers: BTreeMap<WorkerId, Worker>,
    next_worker: WorkerId,
    /// The workers in rank order.
    comm: Vec<WorkerId>,
    conns: HashMap<ConnId, WorkerId>,
    /// Collective calls waiting for the rest.
    waiting: HashMap<WorkerId, (ConnId, Frame)>,
    /// Messages by (from rank, to rank).
    mailbox: HashMap<(usize, usize), VecDeque<Vec<u8>>>,
    /// A worker waiting in RECV, and from which rank.
    receiving: HashMap<WorkerId, (ConnId, usize)>,
    adapt: Option<Adapt>,
    /// Adaptations carried out or given up: never taken up again.
    done: HashSet<u64>,
    status: Option<Status>,
    /// The job's nodes, as last read.
    job_nodes: Vec<String>,
    checkpoint: Option<Checkpoint>,
    /// Workers were lost: every call but a probe is answered LOST until
    /// the probe that starts the recovery.
    broken: bool,
    reports: Reports,
    last_report: Instant,
    finishing: bool,
    /// How long an adaptation can take, as measured (bound.rs).
    bound: bound::Bound,
    /// When a request was last told to the scheduler (the heartbeat's).
    last_told: Instant,
}

/// The wall clock as `unix time S.mmm`, for lines a resize's latency is read from
/// beside slurmctld's log (same host, same clock).
pub(crate) fn unix_time() -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    format!("unix time {}.{:03}", ms / 1000, ms % 1000)
}

/// Tokens compared without stopping at the first difference.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn error(conn: ConnId, why: impl Into<String>) -> Output {
    Output::Reply(conn, Frame::new("ERROR").with_payload(why.into().into_bytes()))
}

/// The answer to every call of a worker while the job recovers from lost
/// workers: it is to probe.
fn lost(conn: ConnId) -> Output {
    Output::Reply(conn, Frame::new("LOST"))
}

impl Hub {
    /// A hub for job `job` on `nodes`; the first
    /// outputs start them.
    pub fn new(job: JobId, token: String, nodes: &[String], rules: Rules) -> (Hub, Vec<Output>) {
        let mut hub = Hub {
            job,
            token,
            rules,
            workers: BTreeMap::new(),
            next_worker: 1,
            comm: Vec::new(),
            conns: HashMap::new(),
            waiting: HashMap::new(),
            mailbox: HashMap::new(),
            receiving: HashMap::new(),
            adapt: None,
            done: HashSet::new(),
            status: None,
            job_nodes: nodes.to_vec(),
            checkpoint: None,
            broken: false,
            reports: Reports::default(),
            last_report: Instant::now(),
            finishing: false,
            bound: bound::Bound::default(),
            last_told: Instant::now(),
        };
        let heartbeat_s = Some(rules.heartbeat.as_secs().clamp(1, u64::from(u32::MAX)) as u32);
        let mut out = vec![Output::Tell(Request::Hello { job, heartbeat_s })];
        for node in nodes {
            for id in hub.add_workers(node) {
                hub.comm.push(id);
                if rules.launch == Launch::Workers {
                    out.push(Output::Launch { worker: id, node: node.clone(), joining: 0 });
                }
            }
        }
        if rules.launch == Launch::Restart {
            let ws = hub.comm.clone();
            hub.launch_step(&ws, 0, &mut out);
        }
        hub.bound.saw(&out, Instant::now());
        hub.note_launches(&out, Instant::now());
        (hub, out)
    }

    fn add_workers(&mut self, node: &str) -> Vec<WorkerId> {
        (0..self.rules.per_node)
            .map(|_| {
                let id = self.next_worker;
                self.next_worker += 1;
                self.workers.insert(id, Worker { node: node.to_string(), step: id, ..Worker::default() });
                id
            })
            .collect()
    }

    fn rank_of(&self, w: WorkerId) -> Option<usize> {
        self.comm.iter().position(|&c| c == w)
    }

    pub fn handle(&mut self, input: Input) -> Vec<Output> {
        let mut out = Vec::new();
        let tick = matches!(input, Input::Tick);
        match input {
            Input::Frame(conn, frame) => self.on_frame(conn, frame, &mut out),
            Input::Closed(conn) => self.on_closed(conn, &mut out),
            Input::Job { status, nodes } => self.on_job(status, &nodes, &mut out),
            Input::Answered { request, result } => self.on_answered(request, result, &mut out),
            Input::StepExited { worker, success, how } => self.on_exit(worker, success, &how, &mut out),
            Input::Tick => self.on_tick(&mut out),
        }
        let now = Instant::now();
        self.bound.saw(&out, now);
        self.note_launches(&out, now);
        let told = |out: &[Output]| out.iter().any(|o| matches!(o, Output::Tell(_)));
        // With nothing else said for a heartbeat, a probe says the runtime
        // is there (the plugin acknowledges it, and answers nothing new).
        if tick && !told(&out) && !self.finishing && now.duration_since(self.last_told) >= self.rules.heartbeat {
            out.push(Output::Tell(Request::Probe { job: self.job }));
        }
        if told(&out) {
            self.last_told = now;
        }
        out
    }

    fn fatal(&mut self, why: String, out: &mut Vec<Output>) {
        if self.finishing {
            return;
        }
        self.finishing = true;
        out.push(Output::Log(format!("error: {why}")));
        out.push(Output::Tell(Request::Bye { job: self.job }));
        out.push(Output::Exit(1));
    }

    fn on_frame(&mut self, conn: ConnId, frame: Frame, out: &mut Vec<Output>) {
        let Some(&w) = self.conns.get(&conn) else {
            return self.on_hello(conn, frame, out);
        };
        let collective = ["PROBE", "BEGIN", "REDIST", "ALLREDUCE", "BARRIER", "CHECKPOINT"];
        // After a loss, the workers drop what they were doing and probe.
        if self.broken && !["PROBE", "REPORT", "SHOULD", "BYE"].contains(&frame.verb.as_str()) {
            return out.push(lost(conn));
        }
        match frame.verb.as_str() {
            v if collective.contains(&v) => self.on_collective(w, conn, frame, out),
            "COMMIT" => self.on_commit(w, conn, out),
            "REPORT" => match self.on_report(w, &frame) {
                Ok(()) => out.push(Output::Reply(conn, Frame::new("OK"))),
                Err(e) => out.push(error(conn, e)),
            },
            "SHOULD" => {
                out.push(Output::Tell(Request::ShouldReconfigure { job: self.job }));
                let decided = self.adapt.as_ref().is_some_and(|a| a.stage == Stage::Starting)
                    || self.status.as_ref().is_some_and(|s| s.phase != Phase::Steady);
                out.push(Output::Reply(conn, Frame::new("ANSWER").with("yes", u8::from(decided))));
            }
            "SEND" => self.on_send(w, conn, frame, out),
            "RECV" => self.on_recv(w, conn, &frame, out),
            "BYE" => {
                if let Some(wk) = self.workers.get_mut(&w) {
                    wk.said_bye = Some(Instant::now());
                }
                out.push(Output::Reply(conn, Frame::new("OK")));
                self.check_commit(out);
                self.check_finished(out);
            }
            other => out.push(error(conn, format!("'{other}' is not a request the hub knows"))),
        }
    }

    fn on_hello(&mut self, conn: ConnId, frame: Frame, out: &mut Vec<Output>) {
        let refuse = |out: &mut Vec<Output>, why: String| {
            out.push(Output::Log(format!("refused a connection: {why}")));
            out.push(error(conn, why));
            out.push(Output::Close(conn));
        };
        if frame.verb != "HELLO" {
            return refuse(out, format!("{} before HELLO", frame.verb));
        }
        if !frame.get("token").is_ok_and(|t| same_token(t, &self.token)) {
            return refuse(out, "HELLO without this job's token".into());
        }
        let Ok(w) = frame.number::<WorkerId>("worker") else {
            return refuse(out, "HELLO without a worker number".into());
        };
        let exited_unconnected = self.workers.values().any(|x| x.exited.is_some() && !x.connected_once);
        let Some(wk) = self.workers.get_mut(&w).filter(|x| x.conn.is_none() && !x.connected_once) else {
            return refuse(out, format!("worker {w} is not one this hub started, or it is connected already"));
        };
        wk.conn = Some(conn);
        wk.connected_once = true;
        self.conns.insert(conn, w);
        if exited_unconnected {
            return self.fatal(
                "a worker ended without connecting to the hub while others use the runtime: every worker \
                 of the application must call the runtime's init"
                    .into(),
                out,
            );
        }
        let (rank, size, joining) = match self.adapt.as_ref().filter(|a| a.joiners.contains(&w)) {
            Some(a) => {
                let stay = self.comm.iter().filter(|w| !a.leavers.contains(w)).count();
                let at = a.joiners.iter().position(|&j| j == w).unwrap_or(0);
                (stay + at, stay + a.joiners.len(), a.resize)
            }
            None => (self.rank_of(w).unwrap_or(0), self.comm.len(), 0),
        };
        let welcome = Frame::new("WELCOME").with("rank", rank).with("size", size).with("joining", joining);
        let restarts = self.rules.launch == Launch::Restart;
        out.push(Output::Reply(conn, if restarts { welcome.with("restart", 1) } else { welcome }));
        // The last joiner connected: its srun step runs. Logged with the
        // time, as the step launch's end in a resize's latency.
        if let Some(a) = self.adapt.as_ref().filter(|a| a.joiners.contains(&w)) {
            if a.joiners.iter().all(|j| self.workers.get(j).is_some_and(|x| x.connected_once)) {
                let (resize, nodes) = (a.resize, a.nodes.join(","));
                // A restart-mode shrink's new step is on the nodes that stay.
                let line = if a.kind == Kind::Expand {
                    format!("expand {resize}: workers on {nodes} joined ({})", unix_time())
                } else {
                    format!("shrink {resize}: the new step's {} workers joined ({})", a.joiners.len(), unix_time())
                };
                out.push(Output::Log(line));
            }
        }
        // The last joiner connected: the adaptation may be announced, or,
        // if the others finished while it started, dropped (check_finished
        // waits for joiners still launching).
        self.try_collectives(out);
        self.check_finished(out);
    }

    fn on_report(&mut self, w: WorkerId, f: &Frame) -> Result<(), String> {
        let amount = |k: &str| -> Result<f64, String> {
            let v: f64 = f.number(k)?;
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(format!("REPORT: {k}={v} is not valid: expected a number 0 or more"))
            }
        };
        let (iterations, compute, comm) = (f.number::<u32>("iterations")?, amount("compute_s")?, amount("comm_s")?);
        let watts = if f.get("watts").is_ok() { Some(amount("watts")?) } else { None };
        // Reports from the middle of an adaptation mix two sizes.
        if self.adapt.is_some() {
            return Ok(());
        }
        let r = &mut self.reports;
        *r.iterations.entry(w).or_default() += iterations;
        r.compute_s += compute;
        r.comm_s += comm;
        r.count += 1;
        if let (Some(w), Some(wk)) = (watts, self.workers.get(&w)) {
            r.watts.insert(wk.node.clone(), w);
        }
        Ok(())
    }

    fn on_tick(&mut self, out: &mut Vec<Output>) {
        self.check_vanished(out);
        self.start_again(out);
        self.end_lingering_steps(out);
        self.end_unconnected_steps(out);
        if self.reports.count == 0 || self.last_report.elapsed() < self.rules.report_every || self.adapt.is_some() {
            return;
        }
        let r = std::mem::take(&mut self.reports);
        let watts = (!r.watts.is_empty()).then(|| r.watts.values().sum::<f64>() / r.watts.len() as f64);
        out.push(Output::Tell(Request::Report {
            job: self.job,
            iterations: r.iterations.values().copied().max().unwrap_or(0),
            compute_s: r.compute_s,
            comm_s: r.comm_s,
            watts_per_node: watts,
            adapt_s: self.bound.report_now(&self.rules),
        }));
        self.last_report = Instant::now();
    }
}
