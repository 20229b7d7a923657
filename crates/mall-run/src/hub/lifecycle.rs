//! The hub's side of the job's life: the scheduler's decisions as the job's
//! status shows them, the commit once the workers are through, and the
//! workers that connect, finish, fail to start, or vanish.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use malleable_model::runtime_msg::{Phase, Request, Status};
use malleable_rt::wire::Frame;

use super::{error, lost, Adapt, ConnId, Hub, Kind, Launch, Output, Reports, Stage, WorkerId};

impl Hub {
    pub(super) fn on_commit(&mut self, w: WorkerId, conn: ConnId, out: &mut Vec<Output>) {
        let Some(a) = self.adapt.as_mut().filter(|a| a.stage == Stage::Moved) else {
            return out.push(error(conn, "COMMIT: no adaptation has moved its data"));
        };
        let Some(rank) = a.next.iter().position(|&n| n == w) else {
            return out.push(error(conn, "COMMIT: this worker is leaving: it says BYE"));
        };
        a.committed.insert(w);
        out.push(Output::Reply(conn, Frame::new("COMMITTED").with("rank", rank).with("size", a.next.len())));
        self.check_commit(out);
    }

    /// Once every staying worker committed and every leaving one is gone,
    /// the scheduler is told.
    pub(super) fn check_commit(&mut self, out: &mut Vec<Output>) {
        // In restart mode the way to the commit goes through a new step.
        self.relaunch_when_ended(out);
        let Some(a) = self.adapt.as_mut().filter(|a| a.stage == Stage::Moved) else { return };
        let all_committed = a.next.iter().all(|w| a.committed.contains(w));
        let leavers_gone = a.leavers.iter().all(|w| self.workers.get(w).is_some_and(super::Worker::gone));
        // When the leaving workers' steps had all ended, for a resize's latency.
        if leavers_gone && a.kind == Kind::Shrink && !a.left_logged {
            a.left_logged = true;
            let (resize, nodes) = (a.resize, a.nodes.join(","));
            out.push(Output::Log(format!("shrink {resize}: workers on {nodes} left ({})", super::unix_time())));
        }
        if all_committed && leavers_gone {
            a.stage = Stage::Committing;
            out.push(Output::Tell(Request::Commit { job: self.job, resize: a.resize }));
        }
    }

    pub(super) fn on_job(&mut self, status: Option<Status>, nodes: &[String], out: &mut Vec<Output>) {
        self.status = status.clone();
        self.job_nodes = nodes.to_vec();
        let Some(status) = status else { return };
        // The nodes of a shrink the plugin forced as the job lost others:
        // their workers leave with the lost ones.
        let mut forced: Vec<String> = Vec::new();
        // Restart mode: the workers of an adaptation's new step that a loss
        // ended, to end before the step starts again.
        let mut stale: Vec<WorkerId> = Vec::new();
        let decided = match &status.phase {
            Phase::Expanding { resize, nodes, .. } => Some((Kind::Expand, *resize, nodes.clone())),
            Phase::Shrinking { resize, nodes, .. } => Some((Kind::Shrink, *resize, nodes.clone())),
            Phase::Lost { resize, nodes, .. } => Some((Kind::Lost, *resize, nodes.clone())),
            Phase::Steady => None,
        };
        if let Some(a) = &self.adapt {
            let still = decided.as_ref().is_some_and(|(_, r, _)| *r == a.resize);
            if still || a.stage == Stage::Committing {
                return;
            }
            // The scheduler ended it without the application (its
            // AdaptTimeout, or our CANCEL): before the workers began,
            // nothing is lost.
            let (resize, stage, joiners, launched) = (a.resize, a.stage, a.joiners.clone(), a.launched);
            let shrunk = if a.kind == Kind::Shrink { a.nodes.clone() } else { Vec::new() };
            self.done.insert(resize);
            self.adapt = None;
            let lost_now = matches!(decided, Some((Kind::Lost, ..)));
            if lost_now {
                // A shrink the plugin ended as the job lost nodes was
                // forced: its nodes are freed now, or once slurmdbd is
                // back, begun or not, and their workers leave too.
                forced = shrunk;
            }
            if lost_now && stage > Stage::Starting {
                // A node failed while the application carried it out: the
                // plugin ended it as the job lost the node (an expand
                // rolled back, its new workers ended by slurmd; a shrink
                // forced, the workers on its nodes ended too) and tells the
                // loss. What the workers moved since their last checkpoint
                // is dropped with it, and the loss sends them back there.
                self.abandon(&joiners, out);
                self.comm.retain(|w| !joiners.contains(w));
                if self.rules.launch == Launch::Restart {
                    // Restart mode: a new step already started ends too
                    // (its ranks wait for the lost ones), and the step
                    // that starts again waits for it; one never started
                    // is forgotten.
                    if launched {
                        stale = joiners;
                    } else {
                        self.workers.retain(|w, _| !joiners.contains(w));
                    }
                }
                out.push(Output::Log(format!(
                    "adaptation {resize} ended as the job lost nodes; the workers go back to their last checkpoint"
                )));
            } else if stage > Stage::Starting {
                return self.fatal(
                    format!(
                        "the scheduler ended adaptation {resize} while the application was carrying it out (its \
                         AdaptTimeout ran out?): the application cannot go on consistently"
                    ),
                    out,
                );
            } else {
                self.abandon(&joiners, out);
                out.push(Output::Log(format!(
                    "the scheduler ended adaptation {resize} before the application began it; going on as before"
                )));
            }
        }
        let Some((kind, resize, nodes)) = decided else { return };
        if self.done.contains(&resize) || self.finishing {
            return;
        }
        let mut a = Adapt {
            resize,
            kind,
            nodes: nodes.clone(),
            joiners: Vec::new(),
            leavers: Vec::new(),
            stage: Stage::Starting,
            next: Vec::new(),
            committed: HashSet::new(),
            cancelled: false,
            left_logged: false,
            checkpointed: false,
            launched: self.rules.launch == Launch::Workers,
        };
        // The workers on the adaptation's nodes (and on a forced shrink's).
        let on = |hub: &Hub| -> Vec<WorkerId> {
            let gone = |n: &String| nodes.contains(n) || forced.contains(n);
            hub.comm.iter().copied().filter(|w| gone(&hub.workers[w].node)).collect()
        };
        if self.rules.launch == Launch::Restart {
            a.leavers = stale;
            return self.restart_for(a, &forced, out);
        }
        match kind {
            Kind::Expand => {
                for node in &nodes {
                    for id in self.add_workers(node) {
                        a.joiners.push(id);
                        out.push(Output::Launch { worker: id, node: node.clone(), joining: resize });
                    }
                }
                out.push(Output::Log(format!("expand {resize}: starting workers on {}", nodes.join(","))));
            }
            Kind::Shrink => {
                a.leavers = on(self);
                out.push(Output::Log(format!("shrink {resize}: workers leave {}", nodes.join(","))));
            }
            Kind::Lost => {
                // The workers there are gone with their nodes; the others
                // drop what they wait for and probe.
                a.leavers = on(self);
                self.lose(&a.leavers, out);
                // So are workers that had left those nodes (a shrink's,
                // their BYE said) while their step runs: srun may wait for
                // a node that is gone until the job ends, and neither a
                // commit nor the run's end may wait for it.
                let left: Vec<WorkerId> = self
                    .workers
                    .iter()
                    .filter(|(_, wk)| nodes.contains(&wk.node) && !wk.lost && wk.exited.is_none())
                    .map(|(w, _)| *w)
                    .collect();
                self.lose(&left, out);
                self.comm.retain(|w| !a.leavers.contains(w));
                self.broken = true;
                // A worker waiting in a probe is where it should be.
                let dropped: Vec<WorkerId> =
                    self.waiting.iter().filter(|(_, (_, f))| f.verb != "PROBE").map(|(w, _)| *w).collect();
                for w in dropped {
                    if let Some((c, _)) = self.waiting.remove(&w) {
                        out.push(lost(c));
                    }
                }
                for (_, (c, _)) in self.receiving.drain() {
                    out.push(lost(c));
                }
                self.mailbox.clear();
                out.push(Output::Log(format!(
                    "lost {}: {} workers go on from their last checkpoint",
                    nodes.join(","),
                    self.comm.len()
                )));
            }
        }
        self.adapt = Some(a);
        // The survivors may all be waiting in a probe already.
        self.try_collectives(out);
    }

    /// Workers started for an expand that will not happen: Slurm ends
    /// their steps, which is no failure.
    fn abandon(&mut self, joiners: &[WorkerId], out: &mut Vec<Output>) {
        for j in joiners {
            if let Some(wk) = self.workers.get_mut(j) {
                wk.abandoned = true;
                if let Some(c) = wk.conn.take() {
                    self.conns.remove(&c);
                    out.push(Output::Close(c));
                }
            }
            self.waiting.remove(j);
        }
    }

    pub(super) fn on_answered(&mut self, request: Request, result: Result<(), String>, out: &mut Vec<Output>) {
        match (&request, &result) {
            (Request::Commit { resize, .. }, _) => {
                if self.adapt.as_ref().is_some_and(|a| a.resize == *resize) {
                    self.adapt = None;
                }
                self.done.insert(*resize);
                // Measurements start again after an adaptation.
                self.reports = Reports::default();
                self.last_report = Instant::now();
                match result {
                    Ok(()) => {
                        out.push(Output::Log(format!("adaptation {resize} committed; {} workers", self.comm.len())))
                    }
                    Err(e) => {
                        out.push(Output::Log(format!("error: the scheduler refused the commit of {resize}: {e}")))
                    }
                }
                self.check_finished(out);
                // The next resize may have been decided while this commit
                // was unanswered: its status came then and was set aside,
                // and the channel passes a status on only when it changes.
                let (status, nodes) = (self.status.clone(), self.job_nodes.clone());
                self.on_job(status, &nodes, out);
            }
            (Request::Bye { .. }, _) if self.finishing => {}
            (_, Err(e)) => out.push(Output::Log(format!("the scheduler refused {request:?}: {e}"))),
            _ => {}
        }
    }

    /// A worker started for an expand could not start, or ended, before
    /// the workers were told: the expand is cancelled (the scheduler rolls
    /// it back) and the job goes on as it was. Whether that applied.
    fn joiner_failed(&mut self, w: WorkerId, how: &str, out: &mut Vec<Output>) -> bool {
        let Some(a) = self.adapt.as_ref().filter(|a| a.joiners.contains(&w) && a.stage == Stage::Starting) else {
            return false;
        };
        let (resize, joiners) = (a.resize, a.joiners.clone());
        let node = self.workers[&w].node.clone();
        out.push(Output::Log(format!(
            "expand {resize}: the worker on {node} could not start ({how}); asking the scheduler to roll it back"
        )));
        out.push(Output::Tell(Request::Cancel { job: self.job, resize }));
        self.abandon(&joiners, out);
        // Never announced; the status going back to steady ends it.
        if let Some(a) = self.adapt.as_mut() {
            a.cancelled = true;
        }
        true
    }

    pub(super) fn on_closed(&mut self, conn: ConnId, out: &mut Vec<Output>) {
        let Some(w) = self.conns.remove(&conn) else { return };
        self.waiting.remove(&w);
        self.receiving.remove(&w);
        let Some(wk) = self.workers.get_mut(&w) else { return };
        wk.conn = None;
        wk.closed = true;
        let leaving = self.adapt.as_ref().is_some_and(|a| a.leavers.contains(&w) && a.stage == Stage::Moved);
        if !(wk.said_bye.is_some() || wk.abandoned || wk.lost || leaving) {
            if self.joiner_failed(w, "its connection ended", out) {
                return self.check_finished(out);
            }
            self.vanished(w, self.rules.wait_for_step, out);
        }
        self.check_commit(out);
        self.check_finished(out);
    }

    pub(super) fn on_exit(&mut self, w: WorkerId, success: bool, how: &str, out: &mut Vec<Output>) {
        let Some(wk) = self.workers.get_mut(&w) else { return };
        wk.exited = Some(success);
        let (node, abandoned, bye, connected) =
            (wk.node.clone(), wk.abandoned, wk.said_bye.is_some(), wk.connected_once);
        if abandoned || wk.lost {
            self.check_commit(out);
            return self.check_finished(out);
        }
        let leaving = self.adapt.as_ref().is_some_and(|a| a.leavers.contains(&w));
        // A step that failed before its worker connected is started again
        // a few times (srun fails while slurmctld restarts, say).
        if !success && !connected && wk.failed_starts + 1 < self.rules.start_tries {
            wk.failed_starts += 1;
            wk.exited = None;
            wk.restart_at = Some(Instant::now() + self.rules.start_again_after);
            out.push(Output::Log(format!("worker {w} on {node} could not start ({how}); trying again")));
            return;
        }
        if !success && self.joiner_failed(w, how, out) {
            // The others may have finished meanwhile.
            return self.check_finished(out);
        }
        if !connected {
            if !success {
                return self.fatal(format!("worker {w} on {node} failed: {how}"), out);
            }
            if self.workers.values().any(|x| x.connected_once) {
                return self.fatal(
                    format!(
                        "worker {w} on {node} ended ({how}) without connecting to the hub while others use the \
                         runtime: every worker of the application must call the runtime's init"
                    ),
                    out,
                );
            }
        } else if !bye && !leaving {
            // Its node may have failed (srun then ends well, saying "Node
            // failure"): the plugin says so soon if it did.
            self.vanished(w, self.rules.confirm_loss, out);
        }
        self.check_commit(out);
        self.check_finished(out);
    }

    /// Start again the steps whose time has come.
    pub(super) fn start_again(&mut self, out: &mut Vec<Output>) {
        let now = Instant::now();
        if self.rules.launch == Launch::Restart {
            let mut due = Vec::new();
            for (w, wk) in self.workers.iter_mut() {
                if wk.restart_at.is_some_and(|t| t <= now) && !wk.abandoned {
                    wk.restart_at = None;
                    due.push(*w);
                }
            }
            if !due.is_empty() {
                self.start_step_again(&due, out);
            }
            return;
        }
        for (w, wk) in self.workers.iter_mut() {
            if wk.restart_at.is_some_and(|t| t <= now) && !wk.abandoned {
                wk.restart_at = None;
                let joining = self.adapt.as_ref().filter(|a| a.joiners.contains(w)).map_or(0, |a| a.resize);
                out.push(Output::Launch { worker: *w, node: wk.node.clone(), joining });
            }
        }
    }

    /// Workers `ws` are gone with their nodes: their ends are no failure,
    /// and their connections, if still open, are closed.
    pub(super) fn lose(&mut self, ws: &[WorkerId], out: &mut Vec<Output>) {
        for w in ws {
            let wk = self.workers.get_mut(w).expect("a worker the hub started");
            wk.lost = true;
            wk.vanished = None;
            if let Some(c) = wk.conn {
                out.push(Output::Close(c));
            }
        }
    }

    /// Worker `w` ended without finishing: wait at most `within` to learn
    /// that its node was lost.
    fn vanished(&mut self, w: WorkerId, within: Duration, out: &mut Vec<Output>) {
        let Some(wk) = self.workers.get_mut(&w) else { return };
        let by = Instant::now() + within;
        if wk.vanished.is_none() {
            out.push(Output::Log(format!(
                "worker {w} on {} ended without finishing; waiting to learn whether {} failed",
                wk.node, wk.node
            )));
        }
        wk.vanished = Some(wk.vanished.map_or(by, |t| t.min(by)));
    }

    /// A vanished worker whose node was not lost in time ends the run.
    pub(super) fn check_vanished(&mut self, out: &mut Vec<Output>) {
        let now = Instant::now();
        let overdue = self.workers.iter().find(|(_, wk)| wk.vanished.is_some_and(|t| t <= now) && !wk.lost);
        if let Some((w, wk)) = overdue {
            let why = format!(
                "worker {w} on {} ended without finishing (BYE), and the job did not lose {}: the application failed",
                wk.node, wk.node
            );
            self.fatal(why, out);
        }
    }

    /// Every worker done: the application is over.
    pub(super) fn check_finished(&mut self, out: &mut Vec<Output>) {
        if !self.finishing {
            self.drop_adaptation_nobody_takes_up(out);
        }
        if self.finishing || self.adapt.is_some() {
            return;
        }
        let all = self
            .workers
            .values()
            .all(|w| w.abandoned || w.lost || (w.exited.is_some() && (w.said_bye.is_some() || !w.connected_once)));
        if all {
            self.finishing = true;
            if self.workers.values().all(|w| !w.connected_once) {
                out.push(Output::Log(
                    "no worker connected to the hub: the application does not use malleable-rt, and its job was \
                     not resized"
                        .into(),
                ));
            }
            out.push(Output::Tell(Request::Bye { job: self.job }));
            out.push(Output::Exit(0));
        }
    }

    /// The application finished its work while the scheduler's adaptation
    /// was still to be begun (decided during its last iterations): every
    /// worker but those started for it said BYE and ended, so none will
    /// take it up. It is dropped: the BYE that ends the run makes the
    /// scheduler roll an expand back (Slurm ends the new workers' steps) and
    /// finish a shrink. Without this the run would wait for a BEGIN
    /// that never comes until the job's time limit.
    fn drop_adaptation_nobody_takes_up(&mut self, out: &mut Vec<Output>) {
        let Some(a) = self.adapt.as_ref().filter(|a| matches!(a.stage, Stage::Starting | Stage::Announced)) else {
            return;
        };
        // In restart mode, workers that saved their data ended to be
        // started again: the new step takes the adaptation up.
        if self.rules.launch == Launch::Restart && a.checkpointed {
            return;
        }
        let done = self
            .workers
            .iter()
            .filter(|(w, _)| !a.joiners.contains(w))
            .all(|(_, wk)| wk.abandoned || wk.lost || (wk.said_bye.is_some() && wk.exited.is_some()));
        // A new worker still being launched: wait for it. If its node
        // fails it, the expand is cancelled as such (the scheduler keeps
        // the node from the strategies a while); if it joins, it is dropped.
        let launching = a.launched
            && a.joiners.iter().any(|j| {
                self.workers.get(j).is_some_and(|wk| !wk.abandoned && !wk.connected_once && wk.exited.is_none())
            });
        if !done || launching {
            return;
        }
        let (resize, kind, joiners) = (a.resize, a.kind, a.joiners.clone());
        if kind == Kind::Expand && !a.cancelled {
            // Not CANCEL, which says the new nodes failed the workers (the
            // plugin then keeps them from the strategies for a while): the
            // BYE that follows makes the plugin roll the expand back, nodes
            // in good standing.
            out.push(Output::Log(format!(
                "expand {resize}: the application finished before taking it up; the scheduler rolls it back"
            )));
        }
        self.abandon(&joiners, out);
        self.adapt = None;
    }
}
