//! The adaptations of running malleable jobs, from decision to commit.
//!
//! A job's [`Status`] (in its SystemComment, kept by slurmctld) is the
//! state: steady, expanding (it holds the new nodes; its application is to
//! start on them and commit) or shrinking (its application is to leave the
//! nodes and commit; then they are freed). The application's runtime
//! writes its requests into the job's Comment; each pass reads them here:
//! - `COMMIT` of the adaptation under way ends it: a shrink frees the nodes
//!   then, an expand simply stands;
//! - `REPORT` gives the job's MTCT ratio and power (at most one a
//!   [`REPORT_INTERVAL`], reset by each adaptation, as Chadha et al. 2020
//!   reset their measurements);
//! - `HELLO`, `PROBE`, `BEGIN` are acknowledged (the answer to a probe is
//!   the status itself);
//! - `SHOULD_RECONFIGURE` is acknowledged and marks the job as asking: the
//!   pass puts the question to the strategy (Iserte et al. 2025's model),
//!   and its answer, an adaptation, is in the status its probes read;
//! - anything else, or a request about another adaptation, is refused.
//!
//! Every request handled is acknowledged by its sequence number. An
//! adaptation not committed within its deadline (`AdaptTimeout`, or the
//! bound its runtime reports when that is longer: [`deadline`]), or cancelled by its
//! application (`CANCEL`), is finished here: an expand is rolled back (the
//! new nodes are freed), a shrink is forced (the nodes are freed, and
//! slurmd ends the job's tasks there). An expand onto a node that stopped
//! answering or was drained meanwhile is rolled back at once.
//!
//! A job that lost nodes it held (they failed, and Slurm kept the job,
//! submitted with --no-kill) goes on without them: its application is told
//! as a shrink it cannot refuse (state `lost`) and commits it; a job left
//! with fewer nodes than its minimum is cancelled.
//!
//! This file decides; the agent carries the frees out in slurmctld.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use malleable_model::log_lines::{Ending, LogLine, NOT_COMMITTED_WITHIN};
use malleable_model::runtime_msg::{Envelope, Phase, Request, ResizeId, Status};
use malleable_model::{JobId, JobPower, MalleableSpec, Time};

/// The fewest seconds between two reports a job's MTCT ratio is taken from:
/// each report is an update of the job's record in slurmctld.
pub const REPORT_INTERVAL: Duration = Duration::from_secs(1);

/// A running (or waiting) malleable job as a pass reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct MalleableJob {
    pub id: JobId,
    pub spec: MalleableSpec,
    /// From its SystemComment, or steady if it has none yet.
    pub status: Status,
    /// Its SystemComment read as `status` (else it is still to be written).
    pub shown: bool,
    /// Its runtime's latest request, as job_submit/malleable keeps it in
    /// the job's SystemComment (`mall1-req seq=N ...`); empty when none.
    pub request: String,
    pub running: bool,
    /// Its nodes now, by name.
    pub nodes: Vec<String>,
}

/// What the agent is to do in slurmctld for a job.
#[derive(Clone, Debug, PartialEq)]
pub struct Release {
    pub job: JobId,
    /// The nodes to take from it.
    pub nodes: Vec<String>,
    /// Said in the log when done (the nodes as decided: a loss may have
    /// taken some of `nodes` since).
    pub ending: Ending,
    /// An expand undone because its nodes failed it (a dead slurmd, or the
    /// application could not start there): they are suspect for a while.
    pub suspect: bool,
    /// A shrink: the job goes on with fewer nodes than it computed on, so
    /// its time limit is stretched (an expand rolled back is not).
    pub stretch: bool,
}

impl Release {
    /// The release of the nodes of it the job still holds (a loss may
    /// have taken some since it was decided); none if none are left.
    pub fn of_held(mut self, held: &[String]) -> Option<Release> {
        self.nodes.retain(|n| held.contains(n));
        (!self.nodes.is_empty()).then_some(self)
    }
}

/// What the plugin remembers of a job between passes (not in slurmctld:
/// measurements start again after a restart, as after an adaptation).
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub mtct_ratio: Option<f64>,
    pub watts_per_node: Option<f64>,
    last_report: Option<Instant>,
    /// When this process decided the adaptation under way, for its latency.
    pub decided_at: Option<Instant>,
    /// The nodes the job held after our last pass: one it no longer holds,
    /// and that we did not take, was lost.
    pub nodes_seen: Vec<String>,
    /// An adaptation of the job was ended without its application (too
    /// slow, cancelled, its nodes failed): it is not resized again before
    /// then, or a slow application would be resized, and fail, over and over.
    pub hold_until: Option<Instant>,
    /// Nodes an adaptation ended by a loss gives back, kept while slurmdbd
    /// holds resizes (agent/settle.rs): the loss is told at once, the
    /// nodes are freed once slurmdbd is back.
    pub deferred: Option<Release>,
    /// When this process last handled a request of the job's runtime, or
    /// first found it on (a restart of slurmctld counts from then).
    pub heard: Option<Instant>,
}

impl Measured {
    /// A job that no longer runs (requeued) holds nothing: the nodes it
    /// held, what it was to free, its hold and its decision go. Its
    /// measured power stays, for its next start. Else, started again on
    /// fewer nodes, it would be told it lost the others.
    pub fn forget_allocation(&mut self) {
        self.nodes_seen.clear();
        self.deferred = None;
        self.hold_until = None;
        self.decided_at = None;
        self.heard = None;
    }

    /// Whether the job is held from resizes now.
    pub fn held(&self) -> bool {
        self.hold_until.is_some_and(|t| Instant::now() < t)
    }
}

/// The outcome of reading one job.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub status: Status,
    pub release: Option<Release>,
    /// Cancel the job, for this reason.
    pub cancel: Option<String>,
    /// Its application asked whether to reconfigure now.
    pub asked: bool,
    pub log: Vec<String>,
}

/// What a pass knows beyond the job: the time, the deadline, whether a node
/// can take work (responding, not drained), and new adaptation ids.
pub struct Context<'a> {
    pub now: Time,
    pub timeout: Duration,
    pub usable: &'a dyn Fn(&str) -> bool,
    pub next_resize: &'a mut dyn FnMut() -> ResizeId,
}

/// The longest a runtime's bound may make a job's adaptations last: the
/// longest `AdaptTimeout` a site may set.
pub const MAX_ADAPT_S: u32 = crate::config::ADAPT_TIMEOUT.allowed.max as u32;

/// How long a job's adaptation is given from the decision to its commit:
/// `AdaptTimeout`, or the bound its runtime reported when longer (a step's
/// launch, an MPI finalize and a checkpoint's load, as it measured them,
/// may not fit in the site's timeout: an application that cannot adapt in
/// time would fail in the middle of every adaptation).
pub fn deadline(status: &Status, timeout: Duration) -> Duration {
    let bound = status.adapt_s.map_or(0, |s| s.min(MAX_ADAPT_S));
    timeout.max(Duration::from_secs(bound.into()))
}

/// Heartbeats a runtime may miss before it is taken for gone.
pub const SILENT_HEARTBEATS: u32 = 10;

/// Why a running job whose runtime said it would speak every `heartbeat_s`
/// has to be ended: it said nothing for [`SILENT_HEARTBEATS`] of them. Its
/// mall-run lives in the batch script: gone with the batch host, slurmctld
/// may still count the job running (22.05 purges a batch job missing from
/// its batch host only when none of its other nodes reported it lately),
/// and the job would hold its nodes until its time limit.
fn silent(job: &MalleableJob, status: &Status, m: &mut Measured) -> Option<String> {
    let heartbeat = status.heartbeat_s.filter(|_| job.running && status.runtime)?;
    let heard = *m.heard.get_or_insert_with(Instant::now);
    let limit = Duration::from_secs(u64::from(heartbeat) * u64::from(SILENT_HEARTBEATS));
    (heard.elapsed() >= limit).then(|| {
        format!(
            "its runtime (mall-run, in its batch script) said it would speak every {heartbeat} s and has said \
             nothing for {} s: it is gone (with its batch host?) or hangs, and the job would hold its nodes until \
             its time limit",
            limit.as_secs()
        )
    })
}

/// How long since the decision, for the log: the resize latency.
fn latency(m: &Measured) -> Option<f64> {
    m.decided_at.map(|t| t.elapsed().as_secs_f64())
}

/// Read one job's request, nodes and deadline.
pub fn step(job: &MalleableJob, cx: &mut Context, m: &mut Measured) -> Step {
    let mut status = job.status.clone();
    status.spec = job.spec;
    let mut out = Step { status, release: None, cancel: None, asked: false, log: Vec::new() };
    let lost: Vec<String> = m.nodes_seen.iter().filter(|n| !job.nodes.contains(n)).cloned().collect();
    if job.running && !lost.is_empty() {
        return lost_nodes(job, lost, cx, m, out);
    }
    match Envelope::kept(&job.request) {
        None => {}
        Some(Err(why)) => {
            // A request that does not read: refuse it once (its seq is
            // unknown, so the refusal carries the last one handled + 1).
            let seq = out.status.ack + 1;
            if out.status.refused.as_ref().map(|(s, _)| *s) != Some(seq) {
                out.log.push(format!("JobId={}: its runtime's request does not read: {why}", job.id));
                out.status.refused = Some((seq, why));
            }
        }
        Some(Ok(env)) if env.seq > out.status.ack => {
            m.heard = Some(Instant::now());
            handle(job, env, &mut out, m, cx.timeout)
        }
        Some(Ok(_)) => {}
    }
    if let Some(why) = silent(job, &out.status, m) {
        out.cancel = Some(why);
        return out;
    }
    // New nodes that went away before the application came.
    if let Phase::Expanding { nodes, .. } = &out.status.phase {
        if let Some(dead) = nodes.iter().find(|n| !(cx.usable)(n)) {
            let why = format!("not done: {dead} stopped answering or was drained");
            finish_unilaterally(job, &mut out, m, &why, cx.timeout);
            suspect(&mut out);
        }
    }
    // The deadline.
    if let Some(since) = out.status.phase.since() {
        let deadline = deadline(&out.status, cx.timeout);
        if cx.now.saturating_sub(since) >= deadline.as_secs() as Time {
            let why = format!("{NOT_COMMITTED_WITHIN} {} s", deadline.as_secs());
            finish_unilaterally(job, &mut out, m, &why, cx.timeout);
        }
    }
    out
}

/// The job lost `lost` (Slurm took them out of it when they failed).
fn lost_nodes(job: &MalleableJob, lost: Vec<String>, cx: &mut Context, m: &mut Measured, mut out: Step) -> Step {
    let names = lost.join(",");
    let held = job.nodes.len() as u32;
    // What was under way cannot go on as decided.
    finish_unilaterally(job, &mut out, m, &format!("ended: the job lost {names}"), cx.timeout);
    // A shrink off exactly the nodes lost frees nothing: no release, which
    // the agent would hold while slurmdbd is away, and the loss untold.
    out.release = out.release.take().and_then(|r| r.of_held(&job.nodes));
    if held < job.spec.min {
        out.cancel = Some(format!(
            "it lost {names} and holds {held} nodes, fewer than its --min-nodes-invasive={}",
            job.spec.min
        ));
        return out;
    }
    if out.status.runtime {
        let resize = (cx.next_resize)();
        out.status.phase = Phase::Lost { resize, nodes: lost.clone(), since: cx.now };
        m.decided_at = Some(Instant::now());
        out.log.push(LogLine::Lost { job: job.id, nodes: lost, holds: held, resize: Some(resize) }.to_string());
    } else {
        out.log.push(LogLine::Lost { job: job.id, nodes: lost, holds: held, resize: None }.to_string());
    }
    out
}

/// End the adaptation under way without its application: an expand is
/// rolled back (the new nodes freed), a shrink forced (the nodes freed, and
/// slurmd ends the job's tasks there).
/// The job is then held from resizes for `hold`.
fn finish_unilaterally(job: &MalleableJob, out: &mut Step, m: &mut Measured, why: &str, hold: Duration) {
    if out.status.phase != Phase::Steady {
        m.hold_until = Some(Instant::now() + hold);
    }
    let (why, hold_s) = (why.to_string(), hold.as_secs());
    match out.status.phase.clone() {
        Phase::Expanding { nodes, .. } => {
            let ending = Ending::RolledBack { nodes: nodes.clone(), why, hold_s };
            out.release = Some(Release { job: job.id, ending, nodes, suspect: false, stretch: false })
        }
        Phase::Shrinking { nodes, .. } => {
            out.release = Some(Release {
                job: job.id,
                ending: Ending::ShrinkForced { nodes: nodes.clone(), why, hold_s },
                nodes,
                suspect: false,
                stretch: true,
            })
        }
        Phase::Lost { nodes, .. } => {
            out.log.push(format!("JobId={}: going on without {} {why}", job.id, nodes.join(",")));
        }
        Phase::Steady => return,
    }
    end_adaptation(&mut out.status, m);
}

/// The nodes of an expand undone by a failure are suspect.
fn suspect(out: &mut Step) {
    if let Some(r) = out.release.as_mut() {
        r.suspect = r.ending.is_rollback();
    }
}

/// Back to steady; measurements start again.
fn end_adaptation(status: &mut Status, m: &mut Measured) {
    status.phase = Phase::Steady;
    m.mtct_ratio = None;
    m.watts_per_node = None;
    m.decided_at = None;
}

fn handle(job: &MalleableJob, env: Envelope, out: &mut Step, m: &mut Measured, hold: Duration) {
    out.status.ack = env.seq;
    let refuse = |out: &mut Step, why: String| {
        out.log.push(format!("JobId={}: request {} refused: {why}", job.id, env.seq));
        out.status.refused = Some((env.seq, why));
    };
    if env.request.job() != job.id {
        return refuse(out, format!("it names JobId={}, and it was written to JobId={}", env.request.job(), job.id));
    }
    let under_way = out.status.phase.resize();
    match env.request {
        Request::Hello { heartbeat_s, .. } => {
            out.status.runtime = true;
            out.status.heartbeat_s = heartbeat_s;
        }
        Request::Bye { .. } => {
            out.status.runtime = false;
            finish_unilaterally(job, out, m, "left by its application (BYE)", hold);
        }
        Request::Probe { .. } => {}
        Request::ShouldReconfigure { .. } => out.asked = true,
        Request::Begin { resize, .. } if Some(resize) == under_way => {}
        Request::Commit { resize, .. } if Some(resize) == under_way => match out.status.phase.clone() {
            Phase::Shrinking { nodes, .. } => {
                out.release = Some(Release {
                    job: job.id,
                    ending: Ending::ShrinkCommitted { nodes: nodes.clone(), after: latency(m) },
                    nodes,
                    suspect: false,
                    stretch: true,
                });
                end_adaptation(&mut out.status, m);
            }
            Phase::Expanding { nodes, .. } => {
                out.log.push(LogLine::ExpandCommitted { job: job.id, nodes, after: latency(m) }.to_string());
                end_adaptation(&mut out.status, m);
            }
            Phase::Lost { nodes, .. } => {
                out.log.push(LogLine::LostCommitted { job: job.id, nodes, after: latency(m) }.to_string());
                end_adaptation(&mut out.status, m);
            }
            Phase::Steady => refuse(out, "no adaptation is under way".into()),
        },
        Request::Cancel { resize, .. } if Some(resize) == under_way => {
            finish_unilaterally(job, out, m, "cancelled by its application", hold);
            suspect(out);
        }
        Request::Begin { resize, .. } | Request::Commit { resize, .. } | Request::Cancel { resize, .. } => {
            let now = match under_way {
                Some(r) => format!("adaptation {r} is under way"),
                None => "no adaptation is under way".to_string(),
            };
            refuse(out, format!("there is no adaptation {resize}: {now}"))
        }
        Request::Report { compute_s, comm_s, watts_per_node, adapt_s, .. } => {
            // The bound is taken even from a report rate-limited: it is
            // the job's deadline, not a measurement the strategy reads.
            if let Some(s) = adapt_s.map(|s| s.min(MAX_ADAPT_S)) {
                let before = deadline(&out.status, hold);
                out.status.adapt_s = Some(s);
                if deadline(&out.status, hold) != before {
                    out.log
                        .push(LogLine::AdaptBound { job: job.id, bound_s: s, timeout_s: hold.as_secs() }.to_string());
                }
            }
            if m.last_report.is_some_and(|t| t.elapsed() < REPORT_INTERVAL) {
                return refuse(out, format!("rate-limited: at most one report a {} s", REPORT_INTERVAL.as_secs()));
            }
            m.last_report = Some(Instant::now());
            m.mtct_ratio = (compute_s > 0.0).then(|| comm_s / compute_s);
            m.watts_per_node = watts_per_node;
        }
    }
}

/// A job's power as the strategy sees it: its estimates, and the runtime's
/// measurement once there is one.
pub fn measured_power(estimate: Option<JobPower>, m: Option<&Measured>) -> Option<JobPower> {
    let measured = m.and_then(|m| m.watts_per_node);
    match (estimate, measured) {
        (Some(p), w) => Some(JobPower { measured_per_node: w.or(p.measured_per_node), ..p }),
        (None, Some(w)) => Some(JobPower { measured_per_node: Some(w), ..JobPower::fixed(w) }),
        (None, None) => None,
    }
}

/// The plugin's memory of its adaptations: what each job's runtime
/// measured and when its adaptations were decided (forgetting the jobs
/// that are gone), and the last adaptation id handed out. Settling an
/// adaptation and deciding one both write here, through these methods.
#[derive(Default)]
pub struct Memory {
    jobs: HashMap<JobId, Measured>,
    last_resize: ResizeId,
}

impl Memory {
    pub fn keep_only(&mut self, live: impl Fn(JobId) -> bool) {
        self.jobs.retain(|id, _| live(*id));
    }

    pub fn of(&self, job: JobId) -> Option<&Measured> {
        self.jobs.get(&job)
    }

    pub fn of_mut(&mut self, job: JobId) -> &mut Measured {
        self.jobs.entry(job).or_default()
    }

    /// A job that is no longer running keeps what its runtime measured,
    /// not what it held.
    pub fn forget_allocation(&mut self, job: JobId) {
        if let Some(m) = self.jobs.get_mut(&job) {
            m.forget_allocation();
        }
    }

    /// A new adaptation of `job` decided now, onto `added` nodes (none for
    /// a shrink): its id.
    pub fn decided(&mut self, job: JobId, added: &[String]) -> ResizeId {
        let resize = next_resize(&mut self.last_resize);
        let m = self.of_mut(job);
        m.decided_at = Some(Instant::now());
        m.nodes_seen.extend(added.iter().cloned());
        resize
    }

    /// Step `job`'s adaptation (`step`) with the next ids this memory hands
    /// out. With `trial`, on a copy, which is kept (with the ids it took)
    /// only if `keep` says so of the step: a step whose outcome must wait
    /// leaves no trace.
    pub fn step(
        &mut self,
        job: &MalleableJob,
        now: i64,
        timeout: Duration,
        usable: &dyn Fn(&str) -> bool,
        trial: bool,
        keep: impl FnOnce(&Step) -> bool,
    ) -> Step {
        let mut last = self.last_resize;
        let mut ids = || next_resize(&mut last);
        let mut cx = Context { now, timeout, usable, next_resize: &mut ids };
        let m = self.jobs.entry(job.id).or_default();
        // Cloning every job's memory each pass, under the locks, would cost
        // the largest queues: only a trial's is.
        let mut copy = trial.then(|| m.clone());
        let out = step(job, &mut cx, copy.as_mut().unwrap_or(m));
        if keep(&out) {
            self.last_resize = last;
            if let Some(c) = copy {
                *m = c;
            }
        }
        out
    }
}

/// A new adaptation's id: unique over the plugin's restarts, as it starts
/// from the time in milliseconds.
fn next_resize(last: &mut ResizeId) -> ResizeId {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    *last = (*last + 1).max(ms);
    *last
}

/// The time limit (minutes) a job needs after shrinking from `before` to
/// `after` nodes, `left` seconds before its limit runs out: the rest of its
/// work takes `before / after` times as long on fewer nodes (the linear
/// scaling the strategies plan with), so the limit grows by the difference,
/// rounded up to a minute. Slurm would otherwise end a job the scheduler
/// shrank for running the longer it had to (seen on ESP at fraction 1.0:
/// 12 of 230 jobs ended TIMEOUT). A limit is never shortened.
pub fn stretched_limit(limit_minutes: u32, left: i64, before: usize, after: usize) -> u32 {
    if after == 0 || after >= before || left <= 0 {
        return limit_minutes;
    }
    let extra = left as f64 * (before as f64 / after as f64 - 1.0);
    limit_minutes.saturating_add((extra / 60.0).ceil() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shrink_stretches_the_time_limit_by_the_rest_of_the_work() {
        // 90 s left on 4 nodes is 180 s on 2: 90 s more, 2 minutes rounded up.
        assert_eq!(stretched_limit(10, 90, 4, 2), 12);
        // 30 s left on 8 nodes, 40 s on 6: 10 s more, a minute.
        assert_eq!(stretched_limit(10, 30, 8, 6), 11);
        // Nothing left, not a shrink, or nothing kept: unchanged.
        assert_eq!(stretched_limit(10, 0, 4, 2), 10);
        assert_eq!(stretched_limit(10, 90, 2, 4), 10);
        assert_eq!(stretched_limit(10, 90, 4, 0), 10);
    }
    use malleable_model::NodeConstraint;

    fn job(phase: Phase, comment: &str) -> MalleableJob {
        let spec = MalleableSpec { min: 1, max: 8, constraint: NodeConstraint::None };
        MalleableJob {
            id: JobId(7),
            spec,
            status: Status { spec, phase, ack: 4, refused: None, runtime: true, adapt_s: None, heartbeat_s: None },
            shown: true,
            request: Envelope::to_kept(comment).unwrap_or_else(|| comment.to_string()),
            running: true,
            nodes: vec!["n1".into(), "n2".into(), "n3".into()],
        }
    }

    fn req(seq: u64, r: Request) -> String {
        Envelope { seq, request: r }.encode()
    }

    fn shrinking() -> Phase {
        Phase::Shrinking { resize: 2, nodes: vec!["n3".into()], since: 1000 }
    }

    const T: Duration = Duration::from_secs(30);

    /// `step` at `now`, every node usable, new adaptations numbered 99.
    fn run(j: &MalleableJob, now: Time, m: &mut Measured) -> Step {
        let usable = |_: &str| true;
        let mut next = || 99;
        step(j, &mut Context { now, timeout: T, usable: &usable, next_resize: &mut next }, m)
    }

    #[test]
    fn a_trial_step_not_kept_leaves_the_memory_and_its_ids_as_they_were() {
        // A job that lost n4: its step hands out an adaptation id.
        let j = job(Phase::Steady, "");
        let mut mem = Memory::default();
        mem.of_mut(j.id).nodes_seen.extend(["n1", "n2", "n3", "n4"].map(String::from));
        let usable = |_: &str| true;
        let lost_id = |s: &Step| match s.status.phase {
            Phase::Lost { resize, .. } => resize,
            ref p => panic!("not a loss: {p:?}"),
        };
        let s = mem.step(&j, 1010, T, &usable, true, |_| false);
        assert!(lost_id(&s) > 0);
        assert_eq!((mem.last_resize, mem.of(j.id).unwrap().decided_at), (0, None));
        assert!(mem.of(j.id).unwrap().nodes_seen.iter().any(|n| n == "n4"), "the copy's changes are dropped");
        // Kept, on a copy or not: the id is the memory's last.
        for trial in [true, false] {
            let mut mem = Memory::default();
            mem.of_mut(j.id).nodes_seen.extend(["n1", "n2", "n3", "n4"].map(String::from));
            let s = mem.step(&j, 1010, T, &usable, trial, |_| true);
            assert_eq!(mem.last_resize, lost_id(&s), "trial {trial}");
            assert!(mem.of(j.id).unwrap().decided_at.is_some(), "trial {trial}");
            assert!(mem.decided(j.id, &[]) > lost_id(&s), "ids only grow");
        }
    }

    #[test]
    fn a_commit_ends_the_adaptation_and_a_shrink_frees_its_nodes_then() {
        let mut m = Measured { mtct_ratio: Some(0.5), ..Measured::default() };
        let s = run(&job(shrinking(), &req(5, Request::Commit { job: JobId(7), resize: 2 })), 1010, &mut m);
        assert_eq!((s.status.phase.clone(), s.status.ack, s.status.refused.clone()), (Phase::Steady, 5, None));
        let r = s.release.unwrap();
        assert_eq!(
            (r.nodes, r.ending.to_string().starts_with("shrink off n3 committed")),
            (vec!["n3".to_string()], true)
        );
        assert_eq!(m.mtct_ratio, None, "measurements start again after an adaptation");

        let expanding = Phase::Expanding { resize: 3, nodes: vec!["n4".into()], since: 1000 };
        let s = run(&job(expanding, &req(5, Request::Commit { job: JobId(7), resize: 3 })), 1010, &mut m);
        assert_eq!((s.status.phase, s.release), (Phase::Steady, None));
        assert!(s.log[0].starts_with("JobId=7: expand onto n4 committed"), "{:?}", s.log);
    }

    #[test]
    fn a_question_marks_the_job_as_asking_once() {
        let mut m = Measured::default();
        let asking = job(Phase::Steady, &req(5, Request::ShouldReconfigure { job: JobId(7) }));
        let s = run(&asking, 1010, &mut m);
        assert!(s.asked && s.status.ack == 5 && s.status.refused.is_none(), "{s:?}");
        // Read again once acknowledged: asked once only.
        let again = MalleableJob { status: s.status.clone(), ..asking };
        assert!(!run(&again, 1011, &mut m).asked);
        // A probe is no question.
        assert!(!run(&job(Phase::Steady, &req(5, Request::Probe { job: JobId(7) })), 1010, &mut m).asked);
    }

    #[test]
    fn a_request_is_handled_once_and_a_wrong_one_refused_saying_why() {
        let mut m = Measured::default();
        // Already acknowledged (seq 4 = ack): nothing happens.
        let s = run(&job(shrinking(), &req(4, Request::Commit { job: JobId(7), resize: 2 })), 1010, &mut m);
        assert_eq!((s.status.phase, s.release), (shrinking(), None));
        // Another adaptation's commit.
        let s = run(&job(shrinking(), &req(5, Request::Commit { job: JobId(7), resize: 9 })), 1010, &mut m);
        assert_eq!(s.status.phase, shrinking());
        assert_eq!(s.status.refused, Some((5, "there is no adaptation 9: adaptation 2 is under way".to_string())));
        assert_eq!(s.status.ack, 5);
        // Another job's request in this job's comment.
        let s = run(&job(Phase::Steady, &req(5, Request::Hello { job: JobId(8), heartbeat_s: None })), 1010, &mut m);
        assert!(s.status.refused.unwrap().1.contains("it names JobId=8"));
        // A comment that is not ours is left alone; one of ours that does not read is refused.
        let s = run(&job(Phase::Steady, "my notes"), 1010, &mut m);
        assert_eq!((s.status.ack, s.status.refused), (4, None));
        let s = run(&job(Phase::Steady, "mall1 seq=5 FLY job=7"), 1010, &mut m);
        assert_eq!(s.status.refused.unwrap().0, 5);
    }

    #[test]
    fn hello_makes_a_job_resizable_and_bye_ends_what_is_under_way() {
        let mut m = Measured::default();
        let mut j = job(Phase::Steady, &req(5, Request::Hello { job: JobId(7), heartbeat_s: None }));
        j.status.runtime = false;
        let s = run(&j, 1010, &mut m);
        assert!(s.status.runtime);
        let s = run(&job(shrinking(), &req(5, Request::Bye { job: JobId(7) })), 1010, &mut m);
        assert!(!s.status.runtime);
        assert_eq!(s.status.phase, Phase::Steady);
        let r = s.release.unwrap();
        assert_eq!(r.ending.to_string(), "shrink off n3 left by its application (BYE): forced (its tasks there are ended; not resized again for 30 s)");
    }

    #[test]
    fn reports_give_the_mtct_ratio_at_most_once_an_interval() {
        let mut m = Measured::default();
        let report = |seq| {
            req(
                seq,
                Request::Report {
                    job: JobId(7),
                    iterations: 3,
                    compute_s: 4.0,
                    comm_s: 1.0,
                    watts_per_node: Some(180.0),
                    adapt_s: None,
                },
            )
        };
        let s = run(&job(Phase::Steady, &report(5)), 1010, &mut m);
        assert_eq!((m.mtct_ratio, m.watts_per_node, s.status.refused), (Some(0.25), Some(180.0), None));
        let s = run(&job(Phase::Steady, &report(6)), 1010, &mut m);
        assert_eq!(s.status.refused, Some((6, "rate-limited: at most one report a 1 s".to_string())));
        assert_eq!(s.status.ack, 6);
    }

    #[test]
    fn past_the_deadline_an_expand_is_rolled_back_and_a_shrink_forced() {
        let mut m = Measured::default();
        let s = run(&job(shrinking(), ""), 1029, &mut m);
        assert_eq!((s.status.phase, s.release), (shrinking(), None), "not yet");
        let s = run(&job(shrinking(), ""), 1030, &mut m);
        assert_eq!(s.status.phase, Phase::Steady);
        let r = s.release.unwrap();
        assert_eq!(r.nodes, vec!["n3".to_string()]);
        assert_eq!(
            r.ending.to_string(),
            "shrink off n3 not committed within 30 s: forced (its tasks there are ended; not resized again for 30 s)"
        );
        let expanding = Phase::Expanding { resize: 3, nodes: vec!["n4".into(), "n5".into()], since: 1000 };
        let s = run(&job(expanding, ""), 1031, &mut m);
        let r = s.release.unwrap();
        assert_eq!(
            r.ending.to_string(),
            "expand onto n4,n5 not committed within 30 s: rolled back (not resized again for 30 s)"
        );
    }

    #[test]
    fn a_runtime_that_bounds_its_adaptations_beyond_the_timeout_is_given_its_bound() {
        let report = |seq, adapt_s| {
            let r = Request::Report {
                job: JobId(7),
                iterations: 3,
                compute_s: 4.0,
                comm_s: 1.0,
                watts_per_node: None,
                adapt_s,
            };
            req(seq, r)
        };
        let mut m = Measured::default();
        // 45 s, more than the 30 s timeout: kept in the status, and said.
        let s = run(&job(shrinking(), &report(5, Some(45))), 1010, &mut m);
        assert_eq!(s.status.adapt_s, Some(45));
        assert_eq!(
            s.log,
            vec!["JobId=7: its runtime bounds an adaptation at 45 s (AdaptTimeout=30): its adaptations are given 45 s"
                .to_string()]
        );
        let mut j = job(shrinking(), "");
        j.status = s.status;
        // Past AdaptTimeout, within the bound: not yet.
        let s = run(&j, 1044, &mut m);
        assert_eq!((s.status.phase, s.release), (shrinking(), None));
        let s = run(&j, 1045, &mut m);
        assert_eq!(
            s.release.unwrap().ending.to_string(),
            "shrink off n3 not committed within 45 s: forced (its tasks there are ended; not resized again for 30 s)"
        );
        // A bound within the timeout changes nothing and is not said; one
        // past an hour is taken as an hour.
        let mut m = Measured::default();
        let s = run(&job(Phase::Steady, &report(5, Some(12))), 1010, &mut m);
        assert_eq!((s.status.adapt_s, s.log.len()), (Some(12), 0));
        assert_eq!(deadline(&s.status, T), T);
        let mut m = Measured::default();
        let s = run(&job(Phase::Steady, &report(5, Some(1_000_000))), 1010, &mut m);
        assert_eq!(deadline(&s.status, T), Duration::from_secs(3600));
    }

    #[test]
    fn a_runtime_silent_for_ten_heartbeats_has_its_job_cancelled() {
        let mut m = Measured::default();
        let hello = req(5, Request::Hello { job: JobId(7), heartbeat_s: Some(3) });
        let s = run(&job(Phase::Steady, &hello), 1010, &mut m);
        assert_eq!((s.status.heartbeat_s, s.cancel), (Some(3), None));
        let mut j = job(Phase::Steady, &hello);
        j.status = s.status;
        // Heard 29 s ago: not yet.
        m.heard = Instant::now().checked_sub(Duration::from_secs(29));
        assert_eq!(run(&j, 1040, &mut m).cancel, None);
        m.heard = Instant::now().checked_sub(Duration::from_secs(30));
        let why = run(&j, 1041, &mut m).cancel.unwrap();
        assert!(why.contains("every 3 s and has said nothing for 30 s"), "{why}");
        // A request heard counts again from now.
        let mut talking = j.clone();
        talking.request = Envelope::to_kept(&req(6, Request::Probe { job: JobId(7) })).unwrap();
        m.heard = Instant::now().checked_sub(Duration::from_secs(60));
        assert_eq!(run(&talking, 1042, &mut m).cancel, None);
        // A runtime that named no heartbeat (an older mall-run), or that
        // said BYE, is never taken for gone.
        let mut m = Measured { heard: Instant::now().checked_sub(Duration::from_secs(3600)), ..Measured::default() };
        let mut quiet = j.clone();
        quiet.status.heartbeat_s = None;
        assert_eq!(run(&quiet, 1042, &mut m).cancel, None);
        quiet.status.heartbeat_s = Some(3);
        quiet.status.runtime = false;
        assert_eq!(run(&quiet, 1042, &mut m).cancel, None);
    }

    #[test]
    fn an_expand_cancelled_or_onto_a_dead_node_is_rolled_back_and_its_nodes_made_suspect() {
        let expanding = || Phase::Expanding { resize: 3, nodes: vec!["n4".into()], since: 1000 };
        let mut m = Measured::default();
        let s = run(&job(expanding(), &req(5, Request::Cancel { job: JobId(7), resize: 3 })), 1001, &mut m);
        let r = s.release.unwrap();
        assert_eq!((r.nodes, r.suspect), (vec!["n4".to_string()], true));
        assert_eq!(
            r.ending.to_string(),
            "expand onto n4 cancelled by its application: rolled back (not resized again for 30 s)"
        );
        assert_eq!(s.status.phase, Phase::Steady);

        let usable = |n: &str| n != "n4";
        let mut next = || 99;
        let mut cx = Context { now: 1001, timeout: T, usable: &usable, next_resize: &mut next };
        let s = step(&job(expanding(), ""), &mut cx, &mut m);
        let r = s.release.unwrap();
        assert!(r.suspect && r.ending.to_string().contains("n4 stopped answering"), "{}", r.ending);
        // A timeout is no failure of the nodes.
        let mut m = Measured::default();
        let s = run(&job(expanding(), ""), 1030, &mut m);
        assert!(!s.release.unwrap().suspect);
        // Either way, the job is not resized again for a while.
        assert!(m.held());
    }

    #[test]
    fn a_lost_node_is_told_as_a_shrink_and_below_the_minimum_the_job_is_cancelled() {
        let mut m =
            Measured { nodes_seen: vec!["n1".into(), "n2".into(), "n3".into(), "n4".into()], ..Measured::default() };
        // It held n1-n4 and holds n1-n3 now: n4 was lost.
        let s = run(&job(Phase::Steady, ""), 1010, &mut m);
        assert_eq!(s.status.phase, Phase::Lost { resize: 99, nodes: vec!["n4".into()], since: 1010 });
        assert_eq!((s.release, s.cancel), (None, None));
        // Its application goes on without it and commits.
        let lost = Phase::Lost { resize: 99, nodes: vec!["n4".into()], since: 1010 };
        let mut m = Measured::default();
        let s = run(&job(lost, &req(5, Request::Commit { job: JobId(7), resize: 99 })), 1012, &mut m);
        assert_eq!((s.status.phase, s.release), (Phase::Steady, None));
        assert!(s.log[0].starts_with("JobId=7: going on without n4 committed"), "{:?}", s.log);
        // A shrink under way when a node is lost is forced, off the nodes it still holds.
        let mut m =
            Measured { nodes_seen: vec!["n1".into(), "n2".into(), "n3".into(), "n4".into()], ..Measured::default() };
        let shrink = Phase::Shrinking { resize: 2, nodes: vec!["n3".into(), "n4".into()], since: 1000 };
        let s = run(&job(shrink, ""), 1010, &mut m);
        assert_eq!(s.release.unwrap().nodes, vec!["n3".to_string()]);
        assert!(matches!(s.status.phase, Phase::Lost { .. }));
        // One off exactly the node lost frees nothing: no release at all.
        let mut m =
            Measured { nodes_seen: vec!["n1".into(), "n2".into(), "n3".into(), "n4".into()], ..Measured::default() };
        let shrink = Phase::Shrinking { resize: 2, nodes: vec!["n4".into()], since: 1000 };
        let s = run(&job(shrink, ""), 1010, &mut m);
        assert_eq!(s.release, None);
        assert_eq!(s.status.phase, Phase::Lost { resize: 99, nodes: vec!["n4".into()], since: 1010 });
        // Under the minimum: cancelled.
        let mut j = job(Phase::Steady, "");
        j.spec.min = 4;
        let mut m =
            Measured { nodes_seen: vec!["n1".into(), "n2".into(), "n3".into(), "n4".into()], ..Measured::default() };
        let s = run(&j, 1010, &mut m);
        assert_eq!(s.cancel.as_deref(), Some("it lost n4 and holds 3 nodes, fewer than its --min-nodes-invasive=4"));
    }

    #[test]
    fn a_job_requeued_and_started_again_on_fewer_nodes_has_lost_none() {
        // Seen in a chaos campaign: requeued when its batch host failed, a
        // job that had held n1-n4 started again on n1 and was told it lost
        // n2-n4; its application ended.
        let mut m =
            Measured { nodes_seen: vec!["n1".into(), "n2".into(), "n3".into(), "n4".into()], ..Measured::default() };
        m.forget_allocation();
        let mut j = job(Phase::Steady, "");
        j.nodes = vec!["n1".into()];
        let s = run(&j, 1010, &mut m);
        assert_eq!((s.status.phase, s.release, s.cancel), (Phase::Steady, None, None));
    }

    #[test]
    fn a_measured_draw_joins_the_estimates() {
        let m = Measured { watts_per_node: Some(190.0), ..Measured::default() };
        let p = measured_power(
            Some(JobPower { min_per_node: 150.0, max_per_node: 250.0, measured_per_node: None }),
            Some(&m),
        );
        assert_eq!(p.map(|p| (p.low(), p.high())), Some((190.0, 190.0)));
        assert_eq!(measured_power(None, None), None);
        assert_eq!(measured_power(None, Some(&m)).map(|p| p.high()), Some(190.0));
    }
}
