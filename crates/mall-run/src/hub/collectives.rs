//! The hub's collective calls (probe, begin, redistribute, reductions,
//! barriers, checkpoints), each complete once every worker taking part has
//! called it, and the messages workers send each other by rank.

use std::collections::{HashMap, VecDeque};

use malleable_model::runtime_msg::Request;
use malleable_rt::wire::{bytes_to_f64s, f64s_to_bytes, Frame};

use super::{error, Checkpoint, ConnId, Hub, Kind, Launch, Output, Stage, WorkerId};

impl Hub {
    /// Who takes part in collective `verb`.
    pub(super) fn participants(&self, verb: &str) -> Vec<WorkerId> {
        match (verb, &self.adapt) {
            // In restart mode the old step's workers checkpoint and end; the
            // new step's begin and take the data.
            ("BEGIN" | "REDIST", Some(a)) if self.rules.launch == Launch::Restart => a.joiners.clone(),
            ("BEGIN" | "REDIST", Some(a)) => {
                self.comm.iter().chain(a.joiners.iter().filter(|j| !self.comm.contains(j))).copied().collect()
            }
            _ => self.comm.clone(),
        }
    }

    pub(super) fn on_collective(&mut self, w: WorkerId, conn: ConnId, frame: Frame, out: &mut Vec<Output>) {
        let verb = frame.verb.clone();
        let stage_ok = match verb.as_str() {
            "BEGIN" => self.adapt.as_ref().is_some_and(|a| {
                a.stage == Stage::Announced || (a.joiners.contains(&w) && a.stage <= Stage::Announced)
            }),
            "REDIST" => self.adapt.as_ref().is_some_and(|a| a.stage == Stage::Begun),
            _ => true,
        };
        let restarting_old = self.rules.launch == Launch::Restart
            && verb == "BEGIN"
            && self.adapt.as_ref().is_some_and(|a| !a.joiners.contains(&w));
        if restarting_old {
            return out.push(error(
                conn,
                "BEGIN: mall-run runs this application in restart mode (--mpi restart): at a resize its workers \
                 checkpoint (mall_checkpoint) and finish, and the step started on the new nodes resumes from the \
                 checkpoint",
            ));
        }
        if !stage_ok {
            return out.push(error(conn, format!("{verb}: no adaptation is at that step")));
        }
        if !self.participants(&verb).contains(&w) {
            return out.push(error(conn, format!("{verb}: this worker takes no part in it now")));
        }
        self.waiting.insert(w, (conn, frame));
        self.try_collectives(out);
    }

    /// Complete every collective whose participants are all waiting.
    pub(super) fn try_collectives(&mut self, out: &mut Vec<Output>) {
        for verb in ["PROBE", "BEGIN", "REDIST", "ALLREDUCE", "BARRIER", "CHECKPOINT"] {
            // A joining worker begins as soon as it is up; the others only
            // once a probe has told them: until then its BEGIN just waits.
            let stage = self.adapt.as_ref().map(|a| a.stage);
            let due = match verb {
                "BEGIN" => stage == Some(Stage::Announced),
                "REDIST" => stage == Some(Stage::Begun),
                _ => true,
            };
            let who = self.participants(verb);
            if !due || who.is_empty() || !who.iter().all(|w| self.waiting.contains_key(w)) {
                continue;
            }
            // Everyone waits, and someone in this one: it is complete.
            if !who.iter().any(|w| self.waiting[w].1.verb == verb) {
                continue;
            }
            let frames: Vec<(WorkerId, ConnId, Frame)> = who
                .iter()
                .map(|w| {
                    let (c, f) = self.waiting.remove(w).expect("checked waiting");
                    (*w, c, f)
                })
                .collect();
            if let Some(other) = frames.iter().find(|(_, _, f)| f.verb != verb) {
                // Workers that disagree on the collective would deadlock:
                // every one of them is told.
                let why = format!("the workers disagree: one called {verb}, another {}", other.2.verb);
                for (_, c, _) in &frames {
                    out.push(error(*c, why.clone()));
                }
                continue;
            }
            match verb {
                "PROBE" => self.complete_probe(&frames, out),
                "BEGIN" => self.complete_begin(&frames, out),
                "REDIST" => self.complete_redist(&frames, out),
                "ALLREDUCE" => complete_allreduce(&frames, out),
                "CHECKPOINT" => self.complete_checkpoint(&frames, out),
                _ => frames.iter().for_each(|(_, c, _)| out.push(Output::Reply(*c, Frame::new("OK")))),
            }
        }
    }

    fn complete_probe(&mut self, frames: &[(WorkerId, ConnId, Frame)], out: &mut Vec<Output>) {
        // Restart mode starts the joiners only after the announcement.
        let ready = self.adapt.as_ref().is_some_and(|a| {
            a.stage == Stage::Starting
                && !a.cancelled
                && (!a.launched || a.joiners.iter().all(|j| self.workers.get(j).is_some_and(|w| w.conn.is_some())))
        });
        let reply = match self.adapt.as_mut().filter(|_| ready) {
            Some(a) => {
                a.stage = Stage::Announced;
                let leaving = if a.kind == Kind::Lost { 0 } else { a.leavers.len() };
                let size = self.comm.len() - leaving + a.joiners.len();
                out.push(Output::Tell(Request::Begin { job: self.job, resize: a.resize }));
                let verb = if a.kind == Kind::Expand { "EXPAND" } else { "SHRINK" };
                let f = Frame::new(verb).with("resize", a.resize).with("nodes", a.nodes.join(",")).with("size", size);
                if a.kind == Kind::Lost {
                    self.broken = false;
                    f.with("lost", 1)
                } else {
                    f
                }
            }
            None => Frame::new("NONE"),
        };
        for (_, c, _) in frames {
            out.push(Output::Reply(*c, reply.clone()));
        }
        // Joiners may have begun already.
        if ready {
            self.try_collectives(out);
        }
    }

    fn complete_begin(&mut self, frames: &[(WorkerId, ConnId, Frame)], out: &mut Vec<Output>) {
        let Some(a) = self.adapt.as_mut() else { return };
        let resize = a.resize;
        if let Some((_, _, f)) = frames.iter().find(|(_, _, f)| f.number::<u64>("resize") != Ok(resize)) {
            let why = format!("BEGIN names adaptation {}, and {resize} is under way", f.get("resize").unwrap_or("?"));
            refuse_all(frames, &why, out);
            return;
        }
        a.next = self.comm.iter().filter(|w| !a.leavers.contains(w)).chain(&a.joiners).copied().collect();
        a.stage = Stage::Begun;
        for (w, c, _) in frames {
            let rank = a.next.iter().position(|n| n == w);
            out.push(Output::Reply(
                *c,
                Frame::new("BEGUN")
                    .with("rank", rank.unwrap_or(0))
                    .with("size", a.next.len())
                    .with("leaving", u8::from(rank.is_none())),
            ));
        }
    }

    fn complete_redist(&mut self, frames: &[(WorkerId, ConnId, Frame)], out: &mut Vec<Output>) {
        let Some(a) = self.adapt.as_mut() else { return };
        let item: Vec<Result<usize, String>> = frames.iter().map(|(_, _, f)| f.number::<usize>("item")).collect();
        let size = match item.first() {
            Some(Ok(s)) if *s > 0 && item.iter().all(|i| i == &Ok(*s)) => *s,
            _ => {
                let why = "REDIST: every worker must give the same item size, more than 0";
                refuse_all(frames, why, out);
                return;
            }
        };
        if let Some(why) = partial_items("REDIST", frames, size) {
            return refuse_all(frames, &why, out);
        }
        // Every item in rank order (the joiners' after), then equal blocks;
        // after a loss, or in restart mode, the checkpoint's instead.
        let from_checkpoint = a.kind == Kind::Lost || self.rules.launch == Launch::Restart;
        let (all, size, restart): (Vec<u8>, usize, Option<u64>) = if from_checkpoint {
            match &self.checkpoint {
                Some(c) => (c.data.clone(), c.item, Some(c.iteration)),
                None => {
                    let why = "REDIST: workers were lost and no checkpoint was taken: there is nothing to go on from";
                    refuse_all(frames, why, out);
                    return;
                }
            }
        } else {
            (frames.iter().flat_map(|(_, _, f)| f.payload.iter().copied()).collect(), size, None)
        };
        let items = all.len() / size;
        let n = a.next.len().max(1);
        let mut start = 0;
        let mut share: HashMap<WorkerId, Vec<u8>> = HashMap::new();
        for (i, w) in a.next.iter().enumerate() {
            let count = items / n + usize::from(i < items % n);
            share.insert(*w, all[start * size..(start + count) * size].to_vec());
            start += count;
        }
        for (w, c, _) in frames {
            let data = Frame::new("DATA").with_payload(share.remove(w).unwrap_or_default());
            out.push(Output::Reply(*c, if let Some(i) = restart { data.with("checkpoint", i) } else { data }));
        }
        self.comm = a.next.clone();
        a.stage = Stage::Moved;
        // Messages are addressed by rank, and the ranks just changed.
        self.mailbox.clear();
    }

    /// Every worker's items at one iteration, kept in rank order.
    fn complete_checkpoint(&mut self, frames: &[(WorkerId, ConnId, Frame)], out: &mut Vec<Output>) {
        let head: Vec<Result<(u64, usize), String>> =
            frames.iter().map(|(_, _, f)| Ok((f.number("iteration")?, f.number("item")?))).collect();
        let first = head.first().cloned();
        let (iteration, item) = match first {
            Some(Ok((i, s))) if s > 0 && head.iter().all(|h| h == &Ok((i, s))) => (i, s),
            _ => {
                let why = "CHECKPOINT: every worker must give the same iteration and item size (more than 0)";
                refuse_all(frames, why, out);
                return;
            }
        };
        if let Some(why) = partial_items("CHECKPOINT", frames, item) {
            return refuse_all(frames, &why, out);
        }
        let data = frames.iter().flat_map(|(_, _, f)| f.payload.iter().copied()).collect();
        self.checkpoint = Some(Checkpoint { iteration, item, data });
        // Restart mode: the checkpoint an announced adaptation waits for.
        if let Some(a) = self.adapt.as_mut().filter(|a| a.stage == Stage::Announced) {
            a.checkpointed = true;
        }
        frames.iter().for_each(|(_, c, _)| out.push(Output::Reply(*c, Frame::new("OK"))));
    }

    pub(super) fn on_send(&mut self, w: WorkerId, conn: ConnId, f: Frame, out: &mut Vec<Output>) {
        let (Some(from), Ok(to)) = (self.rank_of(w), f.number::<usize>("to")) else {
            return out.push(error(conn, "SEND: from a worker outside the job's ranks, or without to="));
        };
        if to >= self.comm.len() {
            return out.push(error(conn, format!("SEND: to={to}, and the ranks are 0 to {}", self.comm.len() - 1)));
        }
        self.mailbox.entry((from, to)).or_default().push_back(f.payload);
        out.push(Output::Reply(conn, Frame::new("OK")));
        let dest = self.comm[to];
        if let Some(&(c, want)) = self.receiving.get(&dest) {
            if want == from {
                self.receiving.remove(&dest);
                self.deliver(c, from, to, out);
            }
        }
    }

    pub(super) fn on_recv(&mut self, w: WorkerId, conn: ConnId, f: &Frame, out: &mut Vec<Output>) {
        let (Some(me), Ok(from)) = (self.rank_of(w), f.number::<usize>("from")) else {
            return out.push(error(conn, "RECV: by a worker outside the job's ranks, or without from="));
        };
        if from >= self.comm.len() {
            return out.push(error(conn, format!("RECV: from={from}, and the ranks are 0 to {}", self.comm.len() - 1)));
        }
        if self.mailbox.get(&(from, me)).is_some_and(|q| !q.is_empty()) {
            self.deliver(conn, from, me, out);
        } else {
            self.receiving.insert(w, (conn, from));
        }
    }

    fn deliver(&mut self, conn: ConnId, from: usize, to: usize, out: &mut Vec<Output>) {
        if let Some(bytes) = self.mailbox.get_mut(&(from, to)).and_then(VecDeque::pop_front) {
            out.push(Output::Reply(conn, Frame::new("MSG").with("from", from).with_payload(bytes)));
        }
    }
}

fn complete_allreduce(frames: &[(WorkerId, ConnId, Frame)], out: &mut Vec<Output>) {
    let values: Result<Vec<Vec<f64>>, String> = frames.iter().map(|(_, _, f)| bytes_to_f64s(&f.payload)).collect();
    let sum = match values {
        Ok(v) if v.iter().all(|x| x.len() == v[0].len()) => {
            (0..v[0].len()).map(|i| v.iter().map(|x| x[i]).sum::<f64>()).collect::<Vec<f64>>()
        }
        _ => {
            refuse_all(frames, "ALLREDUCE: the workers gave different lengths", out);
            return;
        }
    };
    let reply = Frame::new("RESULT").with_payload(f64s_to_bytes(&sum));
    frames.iter().for_each(|(_, c, _)| out.push(Output::Reply(*c, reply.clone())));
}

/// The same error to every worker of a collective.
fn refuse_all(frames: &[(WorkerId, ConnId, Frame)], why: &str, out: &mut Vec<Output>) {
    frames.iter().for_each(|(_, c, _)| out.push(error(*c, why)));
}

/// What is wrong when a worker's payload is not whole items of `size` bytes.
fn partial_items(verb: &str, frames: &[(WorkerId, ConnId, Frame)], size: usize) -> Option<String> {
    let (_, _, f) = frames.iter().find(|(_, _, f)| !f.payload.len().is_multiple_of(size))?;
    Some(format!("{verb}: {} bytes are not whole items of {size} bytes", f.payload.len()))
}
