//! The messages between a malleable application's runtime and the scheduler
//! plugin, modelled on iMPI's probe/adapt/commit and DMR's reconfigure call:
//! the application asks at a safe point whether to adapt, says when it
//! begins and commits an adaptation, reports its timings (the MTCT ratio of
//! Chadha et al. 2020, section IV-D) and its measured power, and may ask
//! "should I reconfigure?" itself.
//!
//! A request is one line of text: a verb, then `key=value` fields; the
//! answer is the job's [`Status`], one line too (a refusal's reason is the
//! rest of it). Both ends encode and decode here, and decoding is strict, since anything a
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
    /// The runtime of one of the job's processes starts; `heartbeat_s`: it
    /// says something at least this often (seconds), and a runtime silent
    /// for ten of them is gone (its batch host lost it) or hangs.
    Hello { job: JobId, heartbeat_s: Option<u32> },
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
    /// `adapt_s`: the longest an adaptation of the job can take, in whole
    /// seconds, as the runtime bounds it from what it measured (a step's
    /// launch, a checkpoint, an iteration); the plugin gives the job's
    /// adaptations that long when it is more than its `AdaptTimeout`.
    Report {
        job: JobId,
        iterations: u32,
        compute_s: f64,
        comm_s: f64,
        watts_per_node: Option<f64>,
        adapt_s: Option<u32>,
    },
    /// The application, at its own sync point, asks whether to reconfigure
    /// (Iserte et al. 2025's interaction model).
    ShouldReconfigure { job: JobId },
    /// The application has ended: the job is rigid from now on.
    Bye { job: JobId },
    /// The application cannot carry out adaptation `resize` (its workers
    /// could not start on the new nodes, say): the plugin ends it now, as
    /// it would at the deadline.
    Cancel { job: JobId, resize: ResizeId },
}

/// What the plugin tells a job to do (read from its [`Status`]).
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

impl Request {
    pub fn job(&self) -> JobId {
        match self {
            Request::Hello { job, .. }
            | Request::Probe { job }
            | Request::Begin { job, .. }
            | Request::Commit { job, .. }
            | Request::Report { job, .. }
            | Request::ShouldReconfigure { job }
            | Request::Bye { job }
            | Request::Cancel { job, .. } => *job,
        }
    }

    pub fn encode(&self) -> String {
        match self {
            Request::Hello { job, heartbeat_s: None } => format!("HELLO job={job}"),
            Request::Hello { job, heartbeat_s: Some(h) } => format!("HELLO job={job} heartbeat_s={h}"),
            Request::Probe { job } => format!("PROBE job={job}"),
            Request::Begin { job, resize } => format!("BEGIN job={job} resize={resize}"),
            Request::Commit { job, resize } => format!("COMMIT job={job} resize={resize}"),
            Request::Report { job, iterations, compute_s, comm_s, watts_per_node, adapt_s } => {
                let mut line =
                    format!("REPORT job={job} iterations={iterations} compute_s={compute_s} comm_s={comm_s}");
                if let Some(w) = watts_per_node {
                    line += &format!(" watts_per_node={w}");
                }
                if let Some(s) = adapt_s {
                    line += &format!(" adapt_s={s}");
                }
                line
            }
            Request::ShouldReconfigure { job } => format!("SHOULD_RECONFIGURE job={job}"),
            Request::Bye { job } => format!("BYE job={job}"),
            Request::Cancel { job, resize } => format!("CANCEL job={job} resize={resize}"),
        }
    }

    pub fn decode(line: &str) -> Result<Request, String> {
        let (verb, mut f) = Fields::of(line)?;
        let job = JobId(f.number("job")?);
        let request = match verb {
            "HELLO" => Request::Hello { job, heartbeat_s: f.optional("heartbeat_s", Fields::number)? },
            "PROBE" => Request::Probe { job },
            "BEGIN" => Request::Begin { job, resize: f.number("resize")? },
            "COMMIT" => Request::Commit { job, resize: f.number("resize")? },
            "REPORT" => Request::Report {
                job,
                iterations: f.number("iterations")?,
                compute_s: f.amount("compute_s")?,
                comm_s: f.amount("comm_s")?,
                watts_per_node: f.optional("watts_per_node", Fields::amount)?,
                adapt_s: f.optional("adapt_s", Fields::number)?,
            },
            "SHOULD_RECONFIGURE" => Request::ShouldReconfigure { job },
            "BYE" => Request::Bye { job },
            "CANCEL" => Request::Cancel { job, resize: f.number("resize")? },
            other => {
                return Err(format!(
                    "unknown request '{other}': expected HELLO, PROBE, BEGIN, COMMIT, REPORT, SHOULD_RECONFIGURE, \
                     BYE or CANCEL"
                ))
            }
        };
        f.done()?;
        Ok(request)
    }
}

/// What marks our lines in a job's SystemComment, and the runtime's
/// requests, and their version.
pub const TAG: &str = "mall1";

/// The tag of the runtime's last request as job_submit/malleable keeps it
/// in the job's SystemComment (the request was sent as an update of the
/// job's comment, which the plugin takes off the update: the job's
/// Comment stays its owner's).
pub const REQUEST_TAG: &str = "mall1-req";

/// A request as the runtime sends it (an update of its job's comment, which
/// job_submit/malleable keeps in the job's SystemComment as
/// [`Envelope::kept`]): numbered, so the plugin handles each once and the
/// runtime knows when it was handled.
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
        Some(Self::fields(rest))
    }

    fn fields(rest: &str) -> Result<Envelope, String> {
        let (seq, line) = rest.split_once(' ').ok_or("a request is missing after seq=")?;
        let seq =
            seq.strip_prefix("seq=").and_then(|n| n.parse().ok()).ok_or_else(|| format!("'{seq}' is not seq=N"))?;
        Ok(Envelope { seq, request: Request::decode(line)? })
    }

    /// The request line `sent` (as the runtime sent it, ours or not) as
    /// kept in a SystemComment: `None` when it is not one of ours.
    pub fn to_kept(sent: &str) -> Option<String> {
        let rest = sent.strip_prefix(TAG)?.strip_prefix(' ')?;
        Some(format!("{REQUEST_TAG} {}", rest.lines().next().unwrap_or("")))
    }

    /// The request kept in a SystemComment: `None` when it holds none; an
    /// error for one that does not read.
    pub fn kept(system_comment: &str) -> Option<Result<Envelope, String>> {
        let rest = system_comment.lines().find_map(|l| l.strip_prefix(REQUEST_TAG)?.strip_prefix(' '))?;
        Some(Self::fields(rest))
    }

    /// The kept request's line in a SystemComment, as written there.
    pub fn kept_line(system_comment: &str) -> Option<&str> {
        system_comment.lines().find(|l| l.strip_prefix(REQUEST_TAG).is_some_and(|r| r.starts_with(' ')))
    }
}

/// `system_comment` with `kept` (a [`REQUEST_TAG`] line) as its request,
/// in place of the one it held, every other line as it was.
pub fn with_kept_request(system_comment: &str, kept: Option<&str>) -> String {
    let mut lines: Vec<&str> = system_comment
        .lines()
        .filter(|l| !l.is_empty() && !l.strip_prefix(REQUEST_TAG).is_some_and(|r| r.starts_with(' ')))
        .collect();
    lines.extend(kept);
    lines.join("\n")
}

/// The SystemComment to write for a job whose status and records are now
/// `text` (its status, its cores record), where `current` is what it holds:
/// the runtime's request kept there stays, unless `text`'s status answers it
/// (its ack is the request's number or later). The request may have come in
/// since the pass read the job; the plugin's own lines would otherwise
/// overwrite it.
pub fn keeping_request(text: &str, current: &str) -> String {
    let Some(line) = Envelope::kept_line(current) else {
        return text.to_string();
    };
    let answered = match (Envelope::kept(current), Status::decode(text)) {
        (Some(Ok(req)), Some(Ok(st))) => st.ack >= req.seq,
        _ => false,
    };
    if answered {
        with_kept_request(text, None)
    } else {
        with_kept_request(text, Some(line))
    }
}

/// Where a malleable job stands in an adaptation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Steady,
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
    /// The job lost `nodes` (they failed; Slurm kept the job, submitted
    /// with --no-kill): the application is to go on without them, from
    /// what it saved, and commit.
    Lost {
        resize: ResizeId,
        nodes: Vec<String>,
        since: Time,
    },
}

impl Phase {
    /// The adaptation under way, if any.
    pub fn resize(&self) -> Option<ResizeId> {
        match self {
            Phase::Steady => None,
            Phase::Expanding { resize, .. } | Phase::Shrinking { resize, .. } | Phase::Lost { resize, .. } => {
                Some(*resize)
            }
        }
    }

    /// The adaptation under way in words, as the log tells it: "expand
    /// onto c2,c3"; None when steady.
    pub fn described(&self) -> Option<String> {
        match self {
            Phase::Steady => None,
            Phase::Expanding { nodes, .. } => Some(format!("expand onto {}", nodes.join(","))),
            Phase::Shrinking { nodes, .. } => Some(format!("shrink off {}", nodes.join(","))),
            Phase::Lost { nodes, .. } => Some(format!("going on without {}", nodes.join(","))),
        }
    }

    /// When the adaptation under way was decided.
    pub fn since(&self) -> Option<Time> {
        match self {
            Phase::Steady => None,
            Phase::Expanding { since, .. } | Phase::Shrinking { since, .. } | Phase::Lost { since, .. } => Some(*since),
        }
    }
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
    /// Whether the job's application runtime is there to carry out a
    /// resize: it said HELLO, and not yet BYE. A job without one is not
    /// resized (the adaptation could only time out).
    pub runtime: bool,
    /// The longest an adaptation of the job takes, in seconds, as its
    /// runtime last bounded it (`REPORT adapt_s=`; the plugin caps it): its
    /// adaptations' deadline when longer than `AdaptTimeout`.
    pub adapt_s: Option<u32>,
    /// How often its runtime said it would speak (`HELLO heartbeat_s=`):
    /// silent for ten of them, the runtime is gone and the job is ended.
    pub heartbeat_s: Option<u32>,
}

impl Status {
    pub fn new(spec: MalleableSpec) -> Status {
        Status { spec, phase: Phase::Steady, ack: 0, refused: None, runtime: false, adapt_s: None, heartbeat_s: None }
    }

    /// What the application is to do now.
    pub fn action(&self) -> Action {
        match &self.phase {
            Phase::Expanding { resize, nodes, .. } => Action::Expand { resize: *resize, nodes: nodes.clone() },
            Phase::Shrinking { resize, nodes, .. } | Phase::Lost { resize, nodes, .. } => {
                Action::Shrink { resize: *resize, nodes: nodes.clone() }
            }
            Phase::Steady => Action::None,
        }
    }

    pub fn encode(&self) -> String {
        let mut line = format!("{TAG} range={}..{} constraint={}", self.spec.min, self.spec.max, self.spec.constraint);
        match &self.phase {
            Phase::Steady => line += " state=steady",
            Phase::Expanding { resize, nodes, since } => {
                line += &format!(" state=expanding resize={resize} nodes={} since={since}", nodes.join(","))
            }
            Phase::Shrinking { resize, nodes, since } => {
                line += &format!(" state=shrinking resize={resize} nodes={} since={since}", nodes.join(","))
            }
            Phase::Lost { resize, nodes, since } => {
                line += &format!(" state=lost resize={resize} nodes={} since={since}", nodes.join(","))
            }
        }
        line += &format!(" ack={} runtime={}", self.ack, if self.runtime { "on" } else { "off" });
        if let Some(s) = self.adapt_s {
            line += &format!(" adapt_s={s}");
        }
        if let Some(h) = self.heartbeat_s {
            line += &format!(" heartbeat_s={h}");
        }
        if let Some((seq, why)) = &self.refused {
            line += &format!(" refused={seq} why={}", why.replace(['\n', '\r'], " "));
        }
        line
    }

    /// `None` for a SystemComment that is not ours. The status is the
    /// comment's line that starts with the tag; other lines (a
    /// [`SharedCores`] record) are not its.
    pub fn decode(text: &str) -> Option<Result<Status, String>> {
        let rest = text.lines().find_map(|l| l.strip_prefix(TAG)?.strip_prefix(' '))?;
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
                "lost" => {
                    Phase::Lost { resize: f.number("resize")?, nodes: f.nodes("nodes")?, since: f.number("since")? }
                }
                other => return Err(format!("STATUS: state={other} is not steady, expanding, shrinking or lost")),
            };
            let ack = f.number("ack")?;
            let runtime = match f.required("runtime")? {
                "on" => true,
                "off" => false,
                other => return Err(format!("STATUS: runtime={other} is not on or off")),
            };
            let adapt_s = f.optional("adapt_s", Fields::number)?;
            let heartbeat_s = f.optional("heartbeat_s", Fields::number)?;
            let refused = match (f.optional("refused", Fields::number)?, why) {
                (Some(seq), Some(why)) => Some((seq, why)),
                (None, None) => None,
                _ => return Err("STATUS: refused= and why= go together".into()),
            };
            f.done()?;
            Ok(Status {
                spec: MalleableSpec { min, max, constraint },
                phase,
                ack,
                refused,
                runtime,
                adapt_s,
                heartbeat_s,
            })
        })())
    }
}

/// The tag of a [`SharedCores`] line.
pub const CORES_TAG: &str = "mall1-cores";

/// SD-Policy's core sharing as the plugin records it, a line of the
/// SystemComment of every job in it (the job started on its mates' cores,
/// and each mate): task/drom reads it on the nodes to confine each job to
/// its cores, and the plugin reads it back after a restart. Only slurmctld
/// writes a SystemComment, so a node can trust it where it could trust
/// nothing a job's owner sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedCores {
    /// The job started on its mates' cores.
    pub job: JobId,
    /// Cores of each node that job holds while the mate there runs ...
    pub cores: u32,
    /// ... of the node's `of` (Slurm's CPUs of the node).
    pub of: u32,
    /// The running jobs whose cores it took, one on each of its nodes.
    pub mates: Vec<JobId>,
    /// Seconds this sharing added to the limit of the job whose comment
    /// holds the line.
    pub increase: Time,
}

impl SharedCores {
    pub fn encode(&self) -> String {
        let mates: Vec<String> = self.mates.iter().map(|m| m.0.to_string()).collect();
        format!(
            "{CORES_TAG} job={} cores={} of={} mates={} increase={}",
            self.job,
            self.cores,
            self.of,
            mates.join(","),
            self.increase
        )
    }

    /// The record in a SystemComment: `None` when it has none.
    pub fn decode(text: &str) -> Option<Result<SharedCores, String>> {
        let line = text.lines().find(|l| l.strip_prefix(CORES_TAG).is_some_and(|r| r.starts_with(' ')))?;
        Some((|| {
            let (_, mut f) = Fields::of(line)?;
            let job = JobId(f.number("job")?);
            let cores: u32 = f.number("cores")?;
            let of: u32 = f.number("of")?;
            let mates = f.required("mates")?;
            let mates = mates
                .split(',')
                .map(|m| m.parse().map(JobId).map_err(|_| format!("{CORES_TAG}: mates={mates} is not job ids")))
                .collect::<Result<Vec<_>, _>>()?;
            let increase = f.number("increase")?;
            f.done()?;
            if cores == 0 || cores >= of {
                return Err(format!("{CORES_TAG}: cores={cores} of={of}: expected 1 <= cores < of"));
            }
            Ok(SharedCores { job, cores, of, mates, increase })
        })())
    }

    /// The record as it stands in a SystemComment that may hold a
    /// [`Status`] line too: that line, then this one.
    pub fn beside(&self, status: Option<&str>) -> String {
        match status {
            Some(s) if !s.is_empty() => format!("{s}\n{}", self.encode()),
            _ => self.encode(),
        }
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
    fn an_adaptation_is_described_by_its_kind_and_nodes() {
        let nodes = vec!["c2".to_string(), "c3".to_string()];
        assert_eq!(Phase::Steady.described(), None);
        let expand = Phase::Expanding { resize: 3, nodes: nodes.clone(), since: 10 };
        assert_eq!(expand.described().as_deref(), Some("expand onto c2,c3"));
        let lost = Phase::Lost { resize: 4, nodes, since: 10 };
        assert_eq!(lost.described().as_deref(), Some("going on without c2,c3"));
    }

    #[test]
    fn every_message_reads_back_as_sent() {
        let job = JobId(42);
        for r in [
            Request::Hello { job, heartbeat_s: None },
            Request::Hello { job, heartbeat_s: Some(30) },
            Request::Probe { job },
            Request::Begin { job, resize: 7 },
            Request::Commit { job, resize: u64::MAX },
            Request::Report { job, iterations: 4, compute_s: 1.25, comm_s: 0.5, watts_per_node: None, adapt_s: None },
            Request::Report {
                job,
                iterations: 1,
                compute_s: 0.0,
                comm_s: 3e-3,
                watts_per_node: Some(181.5),
                adapt_s: Some(75),
            },
            Request::ShouldReconfigure { job },
            Request::Bye { job },
            Request::Cancel { job, resize: 12 },
        ] {
            assert_eq!(Request::decode(&r.encode()), Ok(r.clone()), "{}", r.encode());
            assert_eq!(r.job(), job);
        }
        assert_eq!(Request::decode("PROBE job=3\n"), Ok(Request::Probe { job: JobId(3) }));
    }

    #[test]
    fn a_request_kept_in_a_system_comment_stays_until_a_status_answers_it() {
        let sent = "mall1 seq=7 COMMIT job=5 resize=3";
        let kept = Envelope::to_kept(sent).unwrap();
        assert_eq!(kept, "mall1-req seq=7 COMMIT job=5 resize=3");
        assert_eq!(Envelope::to_kept("grant ABC-123"), None, "the owner's own comment is not a request");
        let spec = MalleableSpec { min: 2, max: 8, constraint: NodeConstraint::Even };
        let mut st = Status::new(spec);
        st.ack = 6;
        let cores = "mall1-cores job=5 cores=1 of=2 mates=4 increase=0";
        let sc = with_kept_request(&format!("{}\n{cores}", st.encode()), Some(&kept));
        // The status and the cores record read as before beside it.
        assert_eq!(Status::decode(&sc), Some(Ok(st.clone())));
        assert!(SharedCores::decode(&sc).unwrap().is_ok());
        assert_eq!(Envelope::kept(&sc).unwrap().unwrap().seq, 7);
        assert_eq!(Envelope::kept(&st.encode()), None);
        // A later request replaces it.
        let later = with_kept_request(&sc, Envelope::to_kept("mall1 seq=8 CANCEL job=5 resize=3").as_deref());
        assert_eq!(Envelope::kept(&later).unwrap().unwrap().seq, 8);
        assert_eq!(later.lines().count(), 3);
        // The plugin's write keeps an unanswered request, drops an answered one.
        assert_eq!(keeping_request(&st.encode(), &sc), format!("{}\n{kept}", st.encode()));
        st.ack = 7;
        assert_eq!(keeping_request(&st.encode(), &sc), st.encode());
        assert_eq!(keeping_request(&st.encode(), "no request here"), st.encode());
        // One that does not read stays for the plugin to refuse.
        let bad = with_kept_request(&st.encode(), Envelope::to_kept("mall1 seq=x").as_deref());
        assert!(Envelope::kept(&bad).unwrap().is_err());
        assert_eq!(keeping_request(&st.encode(), &bad), bad);
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
        assert_eq!(st.encode(), "mall1 range=2..8 constraint=even state=steady ack=0 runtime=off");
        assert_eq!(st.action(), Action::None);
        for phase in [
            Phase::Steady,
            Phase::Expanding { resize: 2, nodes: vec!["n5".into(), "n6".into()], since: 101 },
            Phase::Lost { resize: 4, nodes: vec!["n3".into()], since: 103 },
            Phase::Shrinking { resize: 3, nodes: vec!["n2".into()], since: 102 },
        ] {
            st.phase = phase;
            st.ack = 9;
            st.runtime = !st.runtime;
            st.refused = Some((8, "JobId=5 has no adaptation 7 under way".into()));
            st.adapt_s = st.adapt_s.xor(Some(90));
            st.heartbeat_s = st.heartbeat_s.xor(Some(30));
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
            ("HELLO job=1 heartbeat_s=soon", "HELLO: heartbeat_s=soon is not valid"),
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
            ("REPORT job=1 iterations=2 compute_s=1 comm_s=1 adapt_s=1.5", "REPORT: adapt_s=1.5 is not valid"),
            ("REPORT job=1 iterations=2 compute_s=1 comm_s=1 adapt_s=-3", "REPORT: adapt_s=-3 is not valid"),
        ] {
            let e = Request::decode(line).unwrap_err();
            assert!(e.starts_with(want), "{line:?}: {e}");
        }
        let long = format!("PROBE job=1 {}", "x".repeat(MAX_LINE));
        assert!(Request::decode(&long).unwrap_err().contains("longer than the 65536 allowed"));
        for (text, want) in [
            (
                "mall1 range=1..2 constraint=none state=shrinking resize=1 nodes=n1,,n2 since=1 ack=0 runtime=on",
                "STATUS: nodes= holds '', which is not a node name",
            ),
            (
                "mall1 range=1..2 constraint=none state=shrinking resize=1 nodes=n1;rm since=1 ack=0 runtime=on",
                "STATUS: nodes= holds 'n1;rm'",
            ),
            ("mall1 range=1..2 constraint=none state=steady ack=0 runtime=maybe", "STATUS: runtime=maybe"),
            ("mall1 range=1..2 constraint=none state=steady ack=0", "STATUS: runtime= is missing"),
        ] {
            let e = Status::decode(text).unwrap().unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_core_sharing_record_reads_back_beside_a_status_and_nonsense_is_refused() {
        let rec = SharedCores { job: JobId(17), cores: 1, of: 2, mates: vec![JobId(15), JobId(16)], increase: 240 };
        assert_eq!(rec.encode(), "mall1-cores job=17 cores=1 of=2 mates=15,16 increase=240");
        let st = Status::new(MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::None });
        let comment = rec.beside(Some(&st.encode()));
        // Each reader finds its own line, whichever comes first.
        assert_eq!(SharedCores::decode(&comment), Some(Ok(rec.clone())));
        assert_eq!(Status::decode(&comment), Some(Ok(st.clone())));
        assert_eq!(Status::decode(&rec.encode()), None, "a record alone is no status");
        assert_eq!(SharedCores::decode(&st.encode()), None, "a status alone is no record");
        assert_eq!(SharedCores::decode(&rec.beside(None)), Some(Ok(rec)));
        for (text, want) in [
            (
                "mall1-cores job=17 cores=0 of=2 mates=15 increase=0",
                "mall1-cores: cores=0 of=2: expected 1 <= cores < of",
            ),
            ("mall1-cores job=17 cores=2 of=2 mates=15 increase=0", "mall1-cores: cores=2 of=2"),
            ("mall1-cores job=17 cores=1 of=2 mates=15,x increase=0", "mall1-cores: mates=15,x is not job ids"),
            ("mall1-cores job=17 cores=1 of=2 mates=15", "mall1-cores: increase= is missing"),
            ("mall1-cores job=17 cores=1 of=2 mates=15 increase=0 cpus=3", "mall1-cores: unknown field cpus="),
        ] {
            let e = SharedCores::decode(text).unwrap().unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }
}
