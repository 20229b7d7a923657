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
//! - `HELLO`, `PROBE`, `BEGIN`, `SHOULD_RECONFIGURE` are acknowledged (the
//!   answer to a probe is the status itself);
//! - anything else, or a request about another adaptation, is refused.
//!
//! Every request handled is acknowledged by its sequence number. An
//! adaptation not committed within `AdaptTimeout` is finished here: an
//! expand is rolled back (the new nodes are freed), a shrink is forced (the
//! nodes are freed, and slurmd ends the job's tasks there).
//!
//! This file decides; the agent carries the frees out in slurmctld.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use malleable_model::runtime_msg::{Envelope, Phase, Request, Status};
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
    /// Its Comment: the runtime's latest request, or the owner's own text.
    pub comment: String,
    pub running: bool,
    /// Its nodes now, by name.
    pub nodes: Vec<String>,
}

/// What the agent is to do in slurmctld for a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub job: JobId,
    /// The nodes to take from it.
    pub nodes: Vec<String>,
    /// Said in the log when done.
    pub why: String,
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
}

/// The outcome of reading one job.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub status: Status,
    pub release: Option<Release>,
    pub log: Vec<String>,
}

fn since_of(phase: &Phase) -> Option<Time> {
    match phase {
        Phase::Steady => None,
        Phase::Allocating { since, .. } | Phase::Expanding { since, .. } | Phase::Shrinking { since, .. } => {
            Some(*since)
        }
    }
}

fn resize_of(phase: &Phase) -> Option<u64> {
    match phase {
        Phase::Steady => None,
        Phase::Allocating { resize, .. } | Phase::Expanding { resize, .. } | Phase::Shrinking { resize, .. } => {
            Some(*resize)
        }
    }
}

/// How long since the decision, for the log: the resize latency.
fn latency(m: &Measured) -> String {
    match m.decided_at {
        Some(t) => format!(" {:.2} s after the decision", t.elapsed().as_secs_f64()),
        None => String::new(),
    }
}

/// Read one job's request and deadline at `now`.
pub fn step(job: &MalleableJob, now: Time, timeout: Duration, m: &mut Measured) -> Step {
    let mut status = job.status.clone();
    status.spec = job.spec;
    let mut out = Step { status, release: None, log: Vec::new() };
    match Envelope::decode(&job.comment) {
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
        Some(Ok(env)) if env.seq > out.status.ack => handle(job, env, &mut out, m),
        Some(Ok(_)) => {}
    }
    // The deadline.
    if let Some(since) = since_of(&out.status.phase) {
        if now.saturating_sub(since) >= timeout.as_secs() as Time {
            let t = timeout.as_secs();
            match out.status.phase.clone() {
                Phase::Expanding { nodes, .. } | Phase::Allocating { nodes, .. } => {
                    out.release = Some(Release {
                        job: job.id,
                        why: format!("expand onto {} not committed within {t} s: rolled back", nodes.join(",")),
                        nodes,
                    })
                }
                Phase::Shrinking { nodes, .. } => {
                    out.release = Some(Release {
                        job: job.id,
                        why: format!(
                            "shrink off {} not committed within {t} s: forced (its tasks there are ended)",
                            nodes.join(",")
                        ),
                        nodes,
                    })
                }
                Phase::Steady => {}
            }
            end_adaptation(&mut out.status, m);
        }
    }
    out
}

/// Back to steady; measurements start again.
fn end_adaptation(status: &mut Status, m: &mut Measured) {
    status.phase = Phase::Steady;
    m.mtct_ratio = None;
    m.watts_per_node = None;
    m.decided_at = None;
}

fn handle(job: &MalleableJob, env: Envelope, out: &mut Step, m: &mut Measured) {
    out.status.ack = env.seq;
    let refuse = |out: &mut Step, why: String| {
        out.log.push(format!("JobId={}: request {} refused: {why}", job.id, env.seq));
        out.status.refused = Some((env.seq, why));
    };
    if env.request.job() != job.id {
        return refuse(out, format!("it names JobId={}, and it was written to JobId={}", env.request.job(), job.id));
    }
    let under_way = resize_of(&out.status.phase);
    match env.request {
        Request::Hello { .. } | Request::Probe { .. } | Request::ShouldReconfigure { .. } => {}
        Request::Begin { resize, .. } if Some(resize) == under_way => {}
        Request::Commit { resize, .. } if Some(resize) == under_way => match out.status.phase.clone() {
            Phase::Shrinking { nodes, .. } => {
                out.release = Some(Release {
                    job: job.id,
                    why: format!("shrink off {} committed{}", nodes.join(","), latency(m)),
                    nodes,
                });
                end_adaptation(&mut out.status, m);
            }
            Phase::Expanding { nodes, .. } => {
                out.log.push(format!("JobId={}: expand onto {} committed{}", job.id, nodes.join(","), latency(m)));
                end_adaptation(&mut out.status, m);
            }
            _ => refuse(out, format!("adaptation {resize} is still allocating its nodes")),
        },
        Request::Begin { resize, .. } | Request::Commit { resize, .. } => {
            let now = match under_way {
                Some(r) => format!("adaptation {r} is under way"),
                None => "no adaptation is under way".to_string(),
            };
            refuse(out, format!("there is no adaptation {resize}: {now}"))
        }
        Request::Report { compute_s, comm_s, watts_per_node, .. } => {
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

/// The plugin's memory of every job, forgetting the ones that are gone.
#[derive(Default)]
pub struct Memory(pub HashMap<JobId, Measured>);

impl Memory {
    pub fn keep_only(&mut self, live: impl Fn(JobId) -> bool) {
        self.0.retain(|id, _| live(*id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_model::NodeConstraint;

    fn job(phase: Phase, comment: &str) -> MalleableJob {
        let spec = MalleableSpec { min: 1, max: 8, constraint: NodeConstraint::None };
        MalleableJob {
            id: JobId(7),
            spec,
            status: Status { spec, phase, ack: 4, refused: None },
            comment: comment.into(),
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

    #[test]
    fn a_commit_ends_the_adaptation_and_a_shrink_frees_its_nodes_then() {
        let mut m = Measured { mtct_ratio: Some(0.5), ..Measured::default() };
        let s = step(&job(shrinking(), &req(5, Request::Commit { job: JobId(7), resize: 2 })), 1010, T, &mut m);
        assert_eq!((s.status.phase.clone(), s.status.ack, s.status.refused.clone()), (Phase::Steady, 5, None));
        let r = s.release.unwrap();
        assert_eq!((r.nodes, r.why.starts_with("shrink off n3 committed")), (vec!["n3".to_string()], true));
        assert_eq!(m.mtct_ratio, None, "measurements start again after an adaptation");

        let expanding = Phase::Expanding { resize: 3, nodes: vec!["n4".into()], since: 1000 };
        let s = step(&job(expanding, &req(5, Request::Commit { job: JobId(7), resize: 3 })), 1010, T, &mut m);
        assert_eq!((s.status.phase, s.release), (Phase::Steady, None));
        assert!(s.log[0].starts_with("JobId=7: expand onto n4 committed"), "{:?}", s.log);
    }

    #[test]
    fn a_request_is_handled_once_and_a_wrong_one_refused_saying_why() {
        let mut m = Measured::default();
        // Already acknowledged (seq 4 = ack): nothing happens.
        let s = step(&job(shrinking(), &req(4, Request::Commit { job: JobId(7), resize: 2 })), 1010, T, &mut m);
        assert_eq!((s.status.phase, s.release), (shrinking(), None));
        // Another adaptation's commit.
        let s = step(&job(shrinking(), &req(5, Request::Commit { job: JobId(7), resize: 9 })), 1010, T, &mut m);
        assert_eq!(s.status.phase, shrinking());
        assert_eq!(s.status.refused, Some((5, "there is no adaptation 9: adaptation 2 is under way".to_string())));
        assert_eq!(s.status.ack, 5);
        // Another job's request in this job's comment.
        let s = step(&job(Phase::Steady, &req(5, Request::Hello { job: JobId(8) })), 1010, T, &mut m);
        assert!(s.status.refused.unwrap().1.contains("it names JobId=8"));
        // A comment that is not ours is left alone; one of ours that does not read is refused.
        let s = step(&job(Phase::Steady, "my notes"), 1010, T, &mut m);
        assert_eq!((s.status.ack, s.status.refused), (4, None));
        let s = step(&job(Phase::Steady, "mall1 seq=5 FLY job=7"), 1010, T, &mut m);
        assert_eq!(s.status.refused.unwrap().0, 5);
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
                },
            )
        };
        let s = step(&job(Phase::Steady, &report(5)), 1010, T, &mut m);
        assert_eq!((m.mtct_ratio, m.watts_per_node, s.status.refused), (Some(0.25), Some(180.0), None));
        let s = step(&job(Phase::Steady, &report(6)), 1010, T, &mut m);
        assert_eq!(s.status.refused, Some((6, "rate-limited: at most one report a 1 s".to_string())));
        assert_eq!(s.status.ack, 6);
    }

    #[test]
    fn past_the_deadline_an_expand_is_rolled_back_and_a_shrink_forced() {
        let mut m = Measured::default();
        let s = step(&job(shrinking(), ""), 1029, T, &mut m);
        assert_eq!((s.status.phase, s.release), (shrinking(), None), "not yet");
        let s = step(&job(shrinking(), ""), 1030, T, &mut m);
        assert_eq!(s.status.phase, Phase::Steady);
        let r = s.release.unwrap();
        assert_eq!(r.nodes, vec!["n3".to_string()]);
        assert_eq!(r.why, "shrink off n3 not committed within 30 s: forced (its tasks there are ended)");
        let expanding = Phase::Expanding { resize: 3, nodes: vec!["n4".into(), "n5".into()], since: 1000 };
        let s = step(&job(expanding, ""), 1031, T, &mut m);
        let r = s.release.unwrap();
        assert_eq!(r.why, "expand onto n4,n5 not committed within 30 s: rolled back");
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
