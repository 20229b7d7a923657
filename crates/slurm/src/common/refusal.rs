//! The lines the safe layer says when it refuses something for a plugin (a
//! load, a start, a reconfigure, a job's submission or update), written and
//! read here, so that a test waits on one as it is written. The plugins'
//! own lines are malleable-model's `log_lines`, Slurm's its `slurm_lines`.

use std::fmt;

/// What was refused, and why (the plugin's error, as its user reads it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The plugin's `init` failed: the daemon does not load it.
    Load(String),
    /// Its first start (select's) failed: slurmctld stops.
    Start(String),
    /// A reconfigure's settings: the previous ones stay in force.
    Reconfigure(String),
    /// job_submit refused a submission.
    Submission(String),
    /// job_submit refused an update of a job.
    Update(String),
}

/// A refusal of one kind, from its why.
type Make = fn(String) -> Refusal;

/// Every kind, in the order a line is tried.
const KINDS: [Make; 5] = [Refusal::Load, Refusal::Start, Refusal::Reconfigure, Refusal::Submission, Refusal::Update];

impl Refusal {
    /// A log line (`[time] error: sched/malleable: refusing to load: ...`),
    /// or its message, if it says a refusal.
    pub fn parse(line: &str) -> Option<Refusal> {
        // The head follows the plugin's name (the logger's prefix), which
        // ends in ": "; a refusal's own words may hold any head later on.
        let heads = KINDS.into_iter().map(|make| (make(String::new()).head(), make));
        heads.filter_map(|(head, make)| Some((line.find(head)?, head, make))).min_by_key(|k| k.0).and_then(
            |(at, head, make)| {
                (at == 0 || line[..at].ends_with(": ")).then(|| make(line[at + head.len()..].to_string()))
            },
        )
    }

    /// Why, as the plugin said it.
    pub fn why(&self) -> &str {
        match self {
            Refusal::Load(w)
            | Refusal::Start(w)
            | Refusal::Reconfigure(w)
            | Refusal::Submission(w)
            | Refusal::Update(w) => w,
        }
    }
}

impl Refusal {
    /// The words that begin the line of this kind.
    fn head(&self) -> &'static str {
        match self {
            Refusal::Load(_) => "refusing to load: ",
            Refusal::Start(_) => "refusing to start: ",
            Refusal::Reconfigure(_) => "reconfigure rejected, keeping the previous configuration: ",
            Refusal::Submission(_) => "submission refused: ",
            Refusal::Update(_) => "update refused: ",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.head(), self.why())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_reads_back_as_it_is_written_after_the_loggers_prefix() {
        let why = "malleable.conf: line 2: SchedulerTick=soon is not valid: expected whole seconds from 1 to 3600";
        for r in [
            Refusal::Load(why.into()),
            Refusal::Start("Strategy=easy: select/natural answers ...".into()),
            Refusal::Reconfigure("line 1: Strategy=fastest: unknown strategy 'fastest'".into()),
            Refusal::Submission("--min-nodes-invasive=0 is not valid".into()),
            Refusal::Update("--nodes=3 is outside --min-nodes-invasive=1 .. --max-nodes-invasive=2".into()),
        ] {
            assert_eq!(Refusal::parse(&r.to_string()), Some(r.clone()));
            let line = format!("[2026-12-07T10:00:00.000] error: sched/malleable: {r}");
            assert_eq!(Refusal::parse(&line), Some(r));
        }
        // A refusal whose words hold another head is still the first one.
        let nested = Refusal::Load("the update refused: no".into());
        assert_eq!(Refusal::parse(&format!("error: job_submit/malleable: {nested}")), Some(nested));
        assert_eq!(Refusal::parse("sched/malleable: agent started: Strategy=easy"), None);
        assert_eq!(Refusal::parse("the update refused: x"), None, "not after a prefix");
    }
}
