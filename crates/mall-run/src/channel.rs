//! The conversation with the scheduler plugin, through the job's record in
//! slurmctld: a request is sent as an update of the job's comment
//! (numbered; Slurm takes it only from the job's owner or an operator,
//! authenticated by munge), which job_submit/malleable takes off the update
//! and keeps in the job's SystemComment, so the job's Comment stays its
//! owner's; the plugin's answer is the SystemComment's status, with the
//! last request it handled. One request at a time: the next is sent once
//! the plugin has taken the last, or a later one would replace it. The
//! record outlives a slurmctld restart, and so does the conversation: while
//! slurmctld is away, the channel keeps trying.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use malleable_model::runtime_msg::{with_kept_request, Envelope, Phase, Request, Status};

use crate::hub::Input;

/// How often the job's record is read: `steady` while nothing is under way,
/// `busy` while an adaptation or a request is.
#[derive(Clone, Copy, Debug)]
pub struct Polling {
    pub steady: Duration,
    pub busy: Duration,
    /// How long a request may wait for the plugin (slurmctld restarts
    /// included) before it is given up.
    pub answer_within: Duration,
}

pub struct Channel {
    job: u32,
    polling: Polling,
    events: Sender<Input>,
    /// What was last read, to pass on only changes.
    last: Option<(String, String)>,
    status: Option<Status>,
    /// The last number written.
    seq: u64,
    /// Whether slurmctld was unreachable at the last read (said once).
    away: bool,
    /// The request kept in the job's SystemComment at the last read.
    kept: Option<String>,
}

impl Channel {
    pub fn new(job: u32, polling: Polling, events: Sender<Input>) -> Channel {
        Channel { job, polling, events, last: None, status: None, seq: 0, away: false, kept: None }
    }

    /// Serve requests until the hub hangs up or the job is over.
    pub fn run(mut self, requests: Receiver<Request>) {
        loop {
            if !self.read() {
                return;
            }
            let busy = self.status.as_ref().is_some_and(|s| s.phase != Phase::Steady);
            let wait = if busy { self.polling.busy } else { self.polling.steady };
            match requests.recv_timeout(wait) {
                Ok(r) => {
                    let result = self.send(&r);
                    if self.events.send(Input::Answered { request: r, result }).is_err() {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Read the job's record and pass a change on. False once the job is
    /// gone or the hub is.
    fn read(&mut self) -> bool {
        match slurm::client::load_job(self.job) {
            Ok(rec) => {
                if self.away {
                    eprintln!("mall-run: slurmctld answers again");
                    self.away = false;
                }
                if rec.state != "RUNNING" {
                    return false;
                }
                self.kept = Envelope::kept_line(&rec.system_comment).map(str::to_string);
                // What the plugin says: the SystemComment less the request kept there.
                let now = (with_kept_request(&rec.system_comment, None), rec.nodes.clone());
                if self.last.as_ref() == Some(&now) {
                    return true;
                }
                self.last = Some(now);
                self.status = Status::decode(&rec.system_comment).and_then(Result::ok);
                let nodes = slurm::client::hostnames(&rec.nodes);
                self.events.send(Input::Job { status: self.status.clone(), nodes }).is_ok()
            }
            Err(e) => {
                // slurmctld restarting, or the job gone for good.
                if e.contains("Invalid job id") {
                    return false;
                }
                if !self.away {
                    eprintln!("mall-run: cannot read the job from slurmctld, trying again: {e}");
                    self.away = true;
                }
                true
            }
        }
    }

    /// Write one request and wait for the plugin to take it.
    fn send(&mut self, request: &Request) -> Result<(), String> {
        let deadline = Instant::now() + self.polling.answer_within;
        let acked = self.status.as_ref().map_or(0, |s| s.ack);
        self.seq = self.seq.max(acked) + 1;
        let seq = self.seq;
        let line = Envelope { seq, request: request.clone() }.encode();
        self.write(&line, deadline)?;
        loop {
            if !self.read() {
                return Err("the job ended".into());
            }
            // A slurmctld killed before it saved the update has lost it.
            if !self.away && self.kept != Envelope::to_kept(&line) && self.status.as_ref().is_some_and(|s| s.ack < seq)
            {
                eprintln!("mall-run: slurmctld lost request {seq} (restarted?): writing it again");
                self.write(&line, deadline)?;
            }
            if let Some(st) = &self.status {
                if st.ack >= seq {
                    return match &st.refused {
                        Some((s, why)) if *s == seq => Err(why.clone()),
                        _ => Ok(()),
                    };
                }
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the scheduler did not take request {seq} within {} s (is SchedulerType=sched/malleable?)",
                    self.polling.answer_within.as_secs()
                ));
            }
            std::thread::sleep(self.polling.busy);
        }
    }

    fn write(&self, line: &str, deadline: Instant) -> Result<(), String> {
        loop {
            match slurm::client::set_comment(self.job, line) {
                Ok(()) => return Ok(()),
                // Not the job's owner, or the job is gone: no use trying again.
                Err(e) if ["Invalid user id", "denied", "Invalid job id"].iter().any(|p| e.contains(p)) => {
                    return Err(e)
                }
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(self.polling.busy),
            }
        }
    }
}
