//! A run's passes as the strategy was asked them and what it decided: the
//! sequence a test replays through the controller's own way of asking
//! (malleable-ctld's agent/pass.rs), to show both ask the same things.

use malleable_core::StrategyPass;
use malleable_model::{Decision, JobId, Snapshot};

/// One call of the core's pass: what it was given and the decisions out.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedPass {
    pub snapshot: Snapshot,
    /// The jobs that asked whether to reconfigure, in the order answered.
    pub asking: Vec<JobId>,
    /// The strategy's own pass too, or the answers only.
    pub scheduling: Option<StrategyPass>,
    pub decisions: Vec<Decision>,
}

impl RecordedPass {
    /// The pass just made, onto `recorded` when the run is recorded.
    pub(super) fn push_to(
        recorded: &mut Option<Vec<RecordedPass>>,
        input: &malleable_core::PassInput<'_>,
        outcome: &malleable_core::PassOutcome,
    ) {
        if let Some(recorded) = recorded {
            recorded.push(RecordedPass {
                snapshot: input.snapshot.clone(),
                asking: input.asking.to_vec(),
                scheduling: input.scheduling,
                decisions: outcome.decisions.clone(),
            });
        }
    }
}
