//! The messages between a malleable application's runtime and the scheduler
//! plugin, modelled on iMPI's probe/adapt/commit and DMR's reconfigure call:
//! the application asks at a safe point whether to adapt, says when it
//! begins and commits an adaptation, reports its timings (the MTCT ratio of
//! Chadha et al. 2020, section IV-D) and its measured power, and may ask
//! "should I reconfigure?" itself.
//!
//! One request, one reply, each a single line of text: a verb, then
//! `key=value` fields (a refusal's reason is the rest of its line). Both
//! ends encode and decode here, and decoding is strict, since anything a
//! user's process sends must be checked: unknown verbs and keys, missing or
//! repeated keys, numbers that are not finite or negative, node names
//! outside `[A-Za-z0-9._-]`, and lines longer than [`MAX_LINE`] are errors
//! that say which.
//!
//! The channel is the job's own record in slurmctld: the runtime writes its
//! latest request into the job's `Comment` as an [`Envelope`] (Slurm lets
//! only the job's owner or an operator change it, and authenticates the
//! change with munge), and the plugin publishes the job's [`Status`] in its
//! `SystemComment`, which only slurmctld can write and any client can read.
//! Both are kept in slurmctld's state, so the conversation survives a
//! restart, and both show in `scontrol show job`.

use crate::constraint::{MalleableSpec, NodeConstraint};
use crate::ids::{JobId, Time};

/// Longest line either end accepts, in bytes: room for a few thousand node
/// names, small enough that a misbehaving client cannot make the plugin
/// buffer much.
pub const MAX_LINE: usize = 64 * 1024;

/// Identifies one adaptation of a job, so a late commit cannot be taken for
/// a later adaptation's.
pub type ResizeId = u64;

/// From the application's runtime to the plugin.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// The runtime of one of the job's processes starts.
    Hello { job: JobId },
    /// At a safe point: what should the job do now?
    Probe { job: JobId },
    /// The application starts carrying out adaptation `resize`.
    Begin { job: JobId, resize: ResizeId },
    /// The application has finished adaptation `resize`: it runs on the new
    /// nodes, or no longer on the leaving ones.
    Commit { job: JobId, resize: ResizeId },
    /// What the last `iterations` iterations cost, summed over them: time in
    /// computation and in communication, in seconds (their ratio is the MTCT
    /// ratio), and the measured draw per node, when the node exposes one.
    Report { job: JobId, iterations: u32, compute_s: f64, comm_s: f64, watts_per_node: Option<f64> },
    /// The application, at its own sync point, asks whether to reconfigure
    /// (Iserte et al. 2025's interaction model).
    ShouldReconfigure { job: JobId },
}

/// What the plugin tells a job to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    None,
    /// Grow onto these nodes.
    Expand {
        resize: ResizeId,
        nodes: Vec<String>,
    },
    /// Leave these nodes.
    Shrink {
        resize: ResizeId,
        nodes: Vec<String>,
    },
}

/// From the plugin to the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Ok,
    Action(Action),
    /// The request was not taken, and why (not the job's owner, too many
    /// requests, no such adaptation, a malformed line).
    Refused(String),
}

impl Request {
    pub fn job(&self) -> JobId {
        match self {
            Request::Hello { job }
            | Request::Probe { job }
            | Request::Begin { job, .. }
            | Request::Commit { job, .. }
            | Request::Report { job, .. }
            | Request::ShouldReconfigure { job } => *job,
        }
    }

    pub fn encode(&self) -> String {
        match self {
            Request::Hello { job } => format!("HELLO job={job}"),
            Request::Probe { job } => format!("PROBE job={job}"),
            Request::Begin { job, resize } => format!("BEGIN job={job} resize={resize}"),
            Request::Commit { job, resize } => format!("COMMIT job={job} resize={resize}"),
            Request::Report { job, iterations, compute_s, comm_s, watts_per_node } => {
                let mut line =
                    format!("REPORT job={job} iterations={iterations} compute_s={compute_s} comm_s={comm_s}");
                if let Some(w) = watts_per_node {
                    line += &format!(" watts_per_node={w}");
                }
                line
            }
            Request::ShouldReconfigure { job } => format!("SHOULD_RECONFIGURE job={job}"),
        }
    }

    pub fn decode(line: &str) -> Result<Request, String> {
        let (verb, mut f) = Fields::of(line)?;
        let job = JobId(f.number("job")?);
        let request = match verb {
            "HELLO" => Request::Hello { job },
            "PROBE" => Request::Probe { job },
            "BEGIN" => Request::Begin { job, resize: f.number("resize")? },
            "COMMIT" => Request::Commit { job, resize: f.number("resize")? },
            "REPORT" => Request::Report {
                job,
                iterations: f.number("iterations")?,
                compute_s: f.amount("compute_s")?,
                comm_s: f.amount("comm_s")?,
                watts_per_node: f.optional("watts_per_node", Fields::amount)?,
            },
            "SHOULD_RECONFIGURE" => Request::ShouldReconfigure { job },
            other => {
                return Err(format!(
                    "unknown request '{other}': expected HELLO, PROBE, BEGIN, COMMIT, REPORT or SHOULD_RECONFIGURE"
                ))
            }
        };
        f.done()?;
        Ok(request)
    }
}

impl Reply {
    pub fn encode(&self) -> String {
        match self {
            Reply::Ok => "OK".into(),
            Reply::Action(Action::None) => "NONE".into(),
            Reply::Action(Action::Expand { resize, nodes }) => {
                format!("EXPAND resize={resize} nodes={}", nodes.join(","))
            }
            Reply::Action(Action::Shrink { resize, nodes }) => {
                format!("SHRINK resize={resize} nodes={}", nodes.join(","))
            }
            // One line: a reason never carries a line break.
            Reply::Refused(why) => format!("REFUSED {}", why.replace(['\n', '\r'], " ")),
        }
    }

    pub fn decode(line: &str) -> Result<Reply, String> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        if line.len() > MAX_LINE {
            return Err(format!("a line of {} bytes, longer than the {MAX_LINE} allowed", line.len()));
        }
        if let Some(why) = line.strip_prefix("REFUSED") {
            if why.is_empty() || why.starts_with(' ') {
                return Ok(Reply::Refused(why.trim_start().to_string()));
            }
        }
        let (verb, mut f) = Fields::of(line)?;
        let reply = match verb {
            "OK" => Reply::Ok,
            "NONE" => Reply::Action(Action::None),
            "EXPAND" => Reply::Action(Action::Expand { resize: f.number("resize")?, nodes: f.nodes("nodes")? }),
            "SHRINK" => Reply::Action(Action::Shrink { resize: f.number("resize")?, nodes: f.nodes("nodes")? }),
            other => return Err(format!("unknown reply '{other}': expected OK, NONE, EXPAND, SHRINK or REFUSED")),
        };
        f.done()?;
        Ok(reply)
    }
}

/// What marks our lines in a job's Comment and SystemComment, and their version.
pub const TAG: &str = "mall1";

/// A request as the runtime writes it into its job's Comment: numbered, so
/// the plugin handles each once and the runtime knows when it was handled.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    pub seq: u64,
    pub request: Request,
}

impl Envelope {
    pub fn encode(&self) -> String {
        format!("{TAG} seq={} {}", self.seq, self.request.encode())
    }

    /// `None` for a comment that is not ours (any other text the owner
    /// wrote); an error for one of ours that does not read.
    pub fn decode(comment: &str) -> Option<Result<Envelope, String>> {
        let rest = comment.strip_prefix(TAG)?.strip_prefix(' ')?;
        Some((|| {
            let (seq, line) = rest.split_once(' ').ok_or("a request is missing after seq=")?;
            let seq =
                seq.strip_prefix("seq=").and_then(|n| n.parse().ok()).ok_or_else(|| format!("'{seq}' is not seq=N"))?;
            Ok(Envelope { seq, request: Request::decode(line)? })
        })())
    }
}

/// Where a malleable job stands in an adaptation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Steady,
    /// Nodes for an expand are being allocated (a helper job, `helper`):
    /// not the job's yet.
    Allocating {
        resize: ResizeId,
        nodes: Vec<String>,
        since: Time,
        helper: u32,
    },
    /// The job holds `nodes` more; the application is to start on them
    /// and commit.
    Expanding {
        resize: ResizeId,
        nodes: Vec<String>,
        since: Time,
    },
    /// The application is to leave `nodes` and commit; then they are freed.
    Shrinking {
        resize: ResizeId,
        nodes: Vec<String>,
        since: Time,
    },
}

/// What the plugin publishes about a malleable job, in its SystemComment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub spec: MalleableSpec,
    pub phase: Phase,
    /// The last request (its `seq`) the plugin handled.
    pub ack: u64,
    /// The last request refused, and why.
    pub refused: Option<(u64, String)>,
}

impl Status {
    pub fn new(spec: MalleableSpec) -> Status {
        Status { spec, phase: Phase::Steady, ack: 0, refused: None }
    }

    /// What the application is to do now.
    pub fn action(&self) -> Action {
        match &self.phase {
            Phase::Expanding { resize, nodes, .. } => Action::Expand { resize: *resize, nodes: nodes.clone() },
            Phase::Shrinking { resize, nodes, .. } => Action::Shrink { resize: *resize, nodes: nodes.clone() },
            Phase::Steady | Phase::Allocating { .. } => Action::None,
        }
    }

    pub fn encode(&self) -> String {
        let mut line = format!("{TAG} range={}..{} constraint={}", self.spec.min, self.spec.max, self.spec.constraint);
        match &self.phase {
            Phase::Steady => line += " state=steady",
            Phase::Allocating { resize, nodes, since, helper } => {
                line += &format!(
                    " state=allocating resize={resize} nodes={} since={since} helper={helper}",
                    nodes.join(",")
                )
            }
            Phase::Expanding { resize, nodes, since } => {
                line += &format!(" state=expanding resize={resize} nodes={} since={since}", nodes.join(","))
            }
            Phase::Shrinking { resize, nodes, since } => {
                line += &format!(" state=shrinking resize={resize} nodes={} since={since}", nodes.join(","))
            }
        }
        line += &format!(" ack={}", self.ack);
        if let Some((seq, why)) = &self.refused {
            line += &format!(" refused={seq} why={}", why.replace(['\n', '\r'], " "));
        }
        line
    }

    /// `None` for a SystemComment that is not ours.
    pub fn decode(text: &str) -> Option<Result<Status, String>> {
        let rest = text.strip_prefix(TAG)?.strip_prefix(' ')?;
        Some((|| {
            // The refusal's reason is the rest of the line.
            let (fields, why) = match rest.split_once(" why=") {
                Some((f, w)) => (f, Some(w.to_string())),
                None => (rest, None),
            };
            let line = format!("STATUS {fields}");
            let (_, mut f) = Fields::of(&line)?;
            let range = f.required("range")?.to_string();
            let (min, max) = range
                .split_once("..")
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                .ok_or_else(|| format!("STATUS: range={range} is not MIN..MAX"))?;
            let constraint = NodeConstraint::parse(f.required("constraint")?)?;
            let state = f.required("state")?.to_string();
            let phase = match state.as_str() {
                "steady" => Phase::Steady,
                "allocating" => Phase::Allocating {
                    resize: f.number("resize")?,
                    nodes: f.nodes("nodes")?,
                    since: f.number("since")?,
                    helper: f.number("helper")?,
                },
                "expanding" => Phase::Expanding {
                    resize: f.number("resize")?,
                    nodes: f.nodes("nodes")?,
                    since: f.number("since")?,
                },
                "shrinking" => Phase::Shrinking {
                    resize: f.number("resize")?,
                    nodes: f.nodes("nodes")?,
                    since: f.number("since")?,
                },
                other => {
                    return Err(format!("STATUS: state={other} is not steady, allocating, expanding or shrinking"))
                }
            };
            let ack = f.number("ack")?;
            let refused = match (f.optional("refused", Fields::number)?, why) {
                (Some(seq), Some(why)) => Some((seq, why)),
                (None, None) => None,
                _ => return Err("STATUS: refused= and why= go together".into()),
            };
            f.done()?;
            Ok(Status { spec: MalleableSpec { min, max, constraint }, phase, ack, refused })
        })())
    }
}

/// A line's `key=value` fields, taken one by one; what is left is an error.
struct Fields<'a> {
    verb: &'a str,
    fields: Vec<(&'a str, &'a str)>,
}

impl<'a> Fields<'a> {
    fn of(line: &'a str) -> Result<(&'a str, Fields<'a>), String> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        if line.len() > MAX_LINE {
            return Err(format!("a line of {} bytes, longer than the {MAX_LINE} allowed", line.len()));
        }
        let mut words = line.split(' ');
        let verb = words.next().filter(|v| !v.is_empty()).ok_or("an empty line")?;
        let mut fields: Vec<(&str, &str)> = Vec::new();
        for word in words {
            let (k, v) = word.split_once('=').ok_or_else(|| format!("{verb}: '{word}' is not key=value"))?;
            if fields.iter().any(|(seen, _)| *seen == k) {
                return Err(format!("{verb}: {k} given twice"));
            }
            fields.push((k, v));
        }
        Ok((verb, Fields { verb, fields }))
    }

    fn take(&mut self, key: &str) -> Option<&'a str> {
        let i = self.fields.iter().position(|(k, _)| *k == key)?;
        Some(self.fields.remove(i).1)
    }

    fn required(&mut self, key: &str) -> Result<&'a str, String> {
        self.take(key).ok_or_else(|| format!("{}: {key}= is missing", self.verb))
    }

    fn number<T: std::str::FromStr>(&mut self, key: &str) -> Result<T, String> {
        let v = self.required(key)?;
        v.parse().map_err(|_| format!("{}: {key}={v} is not valid: expected a whole number", self.verb))
    }

    fn amount(&mut self, key: &str) -> Result<f64, String> {
        let v = self.required(key)?;
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err(format!("{}: {key}={v} is not valid: expected a number 0 or more", self.verb)),
        }
    }

    fn optional<T>(&mut self, key: &str, read: fn(&mut Self, &str) -> Result<T, String>) -> Result<Option<T>, String> {
        if self.fields.iter().any(|(k, _)| *k == key) {
            read(self, key).map(Some)
        } else {
            Ok(None)
        }
    }

    fn nodes(&mut self, key: &str) -> Result<Vec<String>, String> {
        let v = self.required(key)?;
        let names: Vec<String> = v.split(',').map(str::to_string).collect();
        let ok = |n: &String| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if let Some(bad) = names.iter().find(|n| !ok(n)) {
            return Err(format!("{}: {key}= holds '{bad}', which is not a node name", self.verb));
        }
        Ok(names)
    }

    fn done(self) -> Result<(), String> {
        match self.fields.first() {
            None => Ok(()),
            Some((k, _)) => Err(format!("{}: unknown field {k}=", self.verb)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraint::NodeConstraint;

    #[test]
    fn every_message_reads_back_as_sent() {
        let job = JobId(42);
        for r in [
            Request::Hello { job },
            Request::Probe { job },
            Request::Begin { job, resize: 7 },
            Request::Commit { job, resize: u64::MAX },
            Request::Report { job, iterations: 4, compute_s: 1.25, comm_s: 0.5, watts_per_node: None },
            Request::Report { job, iterations: 1, compute_s: 0.0, comm_s: 3e-3, watts_per_node: Some(181.5) },
            Request::ShouldReconfigure { job },
        ] {
            assert_eq!(Request::decode(&r.encode()), Ok(r.clone()), "{}", r.encode());
            assert_eq!(r.job(), job);
        }
        for r in [
            Reply::Ok,
            Reply::Action(Action::None),
            Reply::Action(Action::Expand { resize: 3, nodes: vec!["n5".into(), "n6".into()] }),
            Reply::Action(Action::Shrink { resize: 4, nodes: vec!["node-01.cluster".into()] }),
            Reply::Refused("JobId=42 belongs to uid 1000, not to uid 1001".into()),
            Reply::Refused(String::new()),
        ] {
            assert_eq!(Reply::decode(&r.encode()), Ok(r.clone()), "{}", r.encode());
        }
        assert_eq!(Reply::Refused("two\nlines".into()).encode(), "REFUSED two lines");
        assert_eq!(Request::decode("PROBE job=3\n"), Ok(Request::Probe { job: JobId(3) }));
    }

    #[test]
    fn envelopes_and_statuses_read_back_as_written() {
        let e = Envelope { seq: 17, request: Request::Commit { job: JobId(5), resize: 3 } };
        assert_eq!(e.encode(), "mall1 seq=17 COMMIT job=5 resize=3");
        assert_eq!(Envelope::decode(&e.encode()), Some(Ok(e)));
        assert_eq!(Envelope::decode("my own comment"), None, "an owner's own comment is not ours");
        assert!(Envelope::decode("mall1 seq=x PROBE job=1").unwrap().unwrap_err().contains("not seq=N"));
        assert!(Envelope::decode("mall1 seq=4").unwrap().is_err());

        let spec = MalleableSpec { min: 2, max: 8, constraint: NodeConstraint::Even };
        let mut st = Status::new(spec);
        assert_eq!(st.encode(), "mall1 range=2..8 constraint=even state=steady ack=0");
        assert_eq!(st.action(), Action::None);
        for phase in [
            Phase::Steady,
            Phase::Allocating { resize: 1, nodes: vec!["n5".into()], since: 100, helper: 42 },
            Phase::Expanding { resize: 2, nodes: vec!["n5".into(), "n6".into()], since: 101 },
            Phase::Shrinking { resize: 3, nodes: vec!["n2".into()], since: 102 },
        ] {
            st.phase = phase;
            st.ack = 9;
            st.refused = Some((8, "JobId=5 has no adaptation 7 under way".into()));
            assert_eq!(Status::decode(&st.encode()), Some(Ok(st.clone())), "{}", st.encode());
        }
        assert_eq!(st.action(), Action::Shrink { resize: 3, nodes: vec!["n2".into()] });
        assert_eq!(Status::decode("set by an admin"), None);
        assert!(Status::decode("mall1 range=2..8 constraint=even state=flying ack=0").unwrap().is_err());
    }

    #[test]
    fn malformed_lines_are_refused_saying_why() {
        for (line, want) in [
            ("", "an empty line"),
            ("FLY job=1", "unknown request 'FLY'"),
            ("PROBE", "PROBE: job= is missing"),
            ("PROBE job=x", "PROBE: job=x is not valid: expected a whole number"),
            ("PROBE job=-1", "PROBE: job=-1 is not valid"),
            ("PROBE job=1 job=2", "PROBE: job given twice"),
            ("PROBE job=1 extra=2", "PROBE: unknown field extra="),
            ("PROBE job=1 loose", "PROBE: 'loose' is not key=value"),
            ("BEGIN job=1", "BEGIN: resize= is missing"),
            (
                "REPORT job=1 iterations=2 compute_s=NaN comm_s=1",
                "REPORT: compute_s=NaN is not valid: expected a number 0 or more",
            ),
            ("REPORT job=1 iterations=2 compute_s=1 comm_s=-1", "REPORT: comm_s=-1 is not valid"),
            (
                "REPORT job=1 iterations=2 compute_s=1 comm_s=1 watts_per_node=inf",
                "REPORT: watts_per_node=inf is not valid",
            ),
        ] {
            let e = Request::decode(line).unwrap_err();
            assert!(e.starts_with(want), "{line:?}: {e}");
        }
        let long = format!("PROBE job=1 {}", "x".repeat(MAX_LINE));
        assert!(Request::decode(&long).unwrap_err().contains("longer than the 65536 allowed"));
        for (line, want) in [
            ("EXPAND resize=1 nodes=n1,,n2", "EXPAND: nodes= holds '', which is not a node name"),
            ("SHRINK resize=1 nodes=n1;rm", "SHRINK: nodes= holds 'n1;rm'"),
            ("GROW", "unknown reply 'GROW'"),
            ("REFUSEDX", "unknown reply 'REFUSEDX'"),
        ] {
            let e = Reply::decode(line).unwrap_err();
            assert!(e.starts_with(want), "{line:?}: {e}");
        }
    }
}
