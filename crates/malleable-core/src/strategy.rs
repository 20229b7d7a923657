//! What a strategy is to the rest of the system: a policy that decides on a
//! snapshot ([`Strategy`]), what one pass reports ([`PassReport`]: its
//! decisions, notes for the log, figures to count), and the registry entry
//! that names it, declares its parameters and figures, and builds it
//! ([`StrategyInfo`]). The plugin logs a pass's notes, the simulator sums its
//! figures; neither knows any strategy by name.

use malleable_model::{Decision, JobId, Snapshot};

use crate::blocks::waiting::{waiting, Waiting};
use crate::params::{AnyParam, Params};

/// A scheduling policy: given the cluster now, what to start and what to
/// resize. Strategies may keep state between passes.
pub trait Strategy: Send {
    /// The name `Strategy=` uses for it.
    fn name(&self) -> &'static str;
    /// One scheduling pass.
    fn schedule(&mut self, snapshot: &Snapshot) -> PassReport;
    /// A running malleable job, at one of its own synchronisation points,
    /// asks whether to reconfigure now: the pull model of Iserte et al.
    /// 2025 (DMR's `DMR_Reconfiguration`, answered by select/natural). The
    /// answer is at most one `Expand` or `Shrink` of that job. Strategies
    /// that resize on their own passes answer nothing.
    fn reconfigure(&mut self, _snapshot: &Snapshot, _job: JobId) -> PassReport {
        PassReport::default()
    }
    /// Why the jobs this pass did not start wait, and when they are
    /// expected to start (the job's Reason and `squeue --start`): by
    /// default the head job's EASY reservation ([`waiting`]).
    fn waiting(&self, snapshot: &Snapshot, decisions: &[Decision]) -> Vec<Waiting> {
        waiting(snapshot, decisions)
    }
}

/// A strategy that keeps no state between passes and says nothing but its
/// decisions: its name and its pass. Most strategies are one of these.
pub struct Stateless {
    name: &'static str,
    pass: Box<Pass>,
}

/// One pass of a [`Stateless`] strategy.
type Pass = dyn Fn(&Snapshot) -> Vec<Decision> + Send;

impl Stateless {
    pub fn new(name: &'static str, pass: impl Fn(&Snapshot) -> Vec<Decision> + Send + 'static) -> Box<Stateless> {
        Box::new(Stateless { name, pass: Box::new(pass) })
    }
}

impl Strategy for Stateless {
    fn name(&self) -> &'static str {
        self.name
    }
    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        (self.pass)(s).into()
    }
}

/// What one pass decided and has to say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassReport {
    pub decisions: Vec<Decision>,
    /// Lines for the daemon's log, each with its reason.
    pub notes: Vec<Note>,
    /// Figures of this pass, by the names the strategy's
    /// [`StrategyInfo::measures`] declare.
    pub measures: Vec<(&'static str, Measure)>,
    /// Waiting jobs to start before any other (a running job released
    /// nodes for them): a strategy that starts jobs itself keeps to this
    /// on its own; beside another scheduler, their priority is raised.
    pub start_first: Vec<JobId>,
}

impl From<Vec<Decision>> for PassReport {
    fn from(decisions: Vec<Decision>) -> Self {
        PassReport { decisions, ..PassReport::default() }
    }
}

impl PassReport {
    /// Add `n` to counter `name`.
    pub fn count(&mut self, name: &'static str, n: u64) {
        self.measures.push((name, Measure::Count(n)));
    }

    /// Record one time taken, in milliseconds, under `name`.
    pub fn millis(&mut self, name: &'static str, ms: f64) {
        self.measures.push((name, Measure::Millis(ms)));
    }

    /// Record a value of which the run keeps the highest.
    pub fn highest(&mut self, name: &'static str, v: u64) {
        self.measures.push((name, Measure::Highest(v)));
    }

    /// The sum of counter `name` over this pass (0 if not counted).
    pub fn counted(&self, name: &str) -> u64 {
        self.measures
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, m)| match m {
                Measure::Count(c) => *c,
                _ => 0,
            })
            .sum()
    }
}

/// A line for the log. A note about a waiting job is said once while the
/// job waits for the same reason; a note about no job, every time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub job: Option<JobId>,
    /// What makes two notes about a job the same one (e.g. "held by the power
    /// budget under corridor 0-300"): a changed reason is said again.
    pub reason: String,
    pub text: String,
}

impl Note {
    /// A note about a waiting job.
    pub fn about(job: JobId, reason: impl Into<String>, text: impl Into<String>) -> Note {
        Note { job: Some(job), reason: reason.into(), text: text.into() }
    }

    /// A note about the pass itself.
    pub fn pass(text: impl Into<String>) -> Note {
        Note { job: None, reason: String::new(), text: text.into() }
    }
}

/// One figure of a pass.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Measure {
    /// Summed over passes.
    Count(u64),
    /// The highest over passes.
    Highest(u64),
    /// One time taken, in milliseconds: a run reports their median and maximum.
    Millis(f64),
}

/// How a declared figure adds up over a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MeasureKind {
    Count,
    Highest,
    Millis,
}

/// A figure a strategy reports, declared in its registry entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MeasureSpec {
    pub name: &'static str,
    pub kind: MeasureKind,
    pub help: &'static str,
}

/// A strategy's registry entry: all that the plugin's configuration, the
/// simulator's command line and their messages know about it.
pub struct StrategyInfo {
    /// The name `Strategy=` and `--strategy` use.
    pub name: &'static str,
    /// One line for help texts.
    pub about: &'static str,
    /// Its parameters, with their ranges and defaults.
    pub params: &'static [&'static dyn AnyParam],
    /// The figures its passes report.
    pub measures: &'static [MeasureSpec],
    /// Whether it schedules by a power corridor (the site's `PowerCorridor=`).
    pub uses_power_corridor: bool,
    /// It starts jobs on cores of running jobs' nodes (`Decision::Share`).
    pub shares_cores: bool,
    /// It starts jobs that ask for cores on part of nodes (`Decision::Place`).
    pub places_cores: bool,
    /// A new instance with these parameter values.
    pub build: fn(&Params) -> Box<dyn Strategy>,
}

impl std::fmt::Debug for StrategyInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for StrategyInfo {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
