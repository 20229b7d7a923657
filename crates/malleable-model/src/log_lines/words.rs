//! The wording of the agent's log lines that Display and the parser share:
//! the fixed parts around each line's fields, and how watts are written.

use crate::Watts;

pub(super) const EXPANDING_TAIL: &str = "); waiting for its application to commit";
pub(super) const SHRINKING_TAIL: &str = "); waiting for its application to leave them and commit";
pub(super) const PREEMPTING_TAIL: &str =
    " (slurm.conf's PreemptType and PreemptMode); it starts once their nodes are back";
pub(super) const STRETCHED_TAIL: &str = " min for the work left on fewer nodes";
pub(super) const PRIORITY_TAIL: &str = ": a job released nodes for it";
pub(super) const CAPPED_TAIL: &str = " nodes at most: its QOS's and association's node limits allow no more";
pub(super) const SYNC_MID: &str = ", asking at its sync point, releases ";
pub(super) const SYNC_TAIL: &str = " nodes for it; it starts first";
pub(super) const POWER_HELD_HEAD: &str = " held back by the power budget: starting it on ";
pub(super) const POWER_HELD_DRAW: &str = " node(s) would raise the estimated draw from ";
pub(super) const POWER_HELD_TO: &str = " W to ";
pub(super) const POWER_HELD_TOP: &str = " W, above the top of the power corridor ";
pub(super) const SPLIT_HEAD: &str = "tasks split off as JobIds ";
pub(super) const SPLIT_TAIL: &str = " for their aftercorr dependency";
pub(super) const INSTEAD_MID: &str = " instead of preempting it (ShrinkBeforePreempt): it keeps running, and the ";
pub(super) const INSTEAD_RAN: &str = " node-seconds it has run (";
pub(super) const INSTEAD_TAIL: &str = " nodes) are not lost";
/// How the reason of an adaptation that ran out of time starts
/// (`not committed within 30 s`): [`Ending::timed_out`] reads it.
pub const NOT_COMMITTED_WITHIN: &str = "not committed within";
/// What a kept request line says before the request.
pub(super) const REQUEST_HEAD: &str = "its runtime's request: ";
pub(super) const LOST_TAIL: &str = "); waiting for its application to commit";
pub(super) const ADAPT_BOUND_HEAD: &str = "its runtime bounds an adaptation at ";
pub(super) const REQUEUED_AFTER_RESIZE: &str =
    "requeued after a resize: its next run recorded as a new one, not into the record of that resize";
pub(super) const REQUEUE_FINISHED: &str = "its requeue finished, which slurmctld left undone when its node went down as its last run ended: its next run recorded as a new one";
pub(super) const TAKEN_BACK_HEAD: &str = "fair-share usage of ";
pub(super) const TAKEN_BACK_TAIL: &str = " billable TRES-s counted twice by Slurm at the resize taken back";
pub(super) const DROPPED_HEAD: &str = "no longer runs (requeued): its ";
pub(super) const BATCH_HOST_HEAD: &str = "its batch script runs on ";
pub(super) const BATCH_HOST_MID: &str = ", not on ";
pub(super) const BATCH_HOST_TAIL: &str =
    ", which slurmctld took for its batch host when it read its state (the first of its nodes): set back";
pub(super) const RELEASE_HELD_MID: &str = "; freeing the nodes waits for ";

/// Watts as the log says them: at most one decimal, none when whole.
pub(super) fn watts(w: Watts) -> String {
    let t = format!("{w:.1}");
    t.strip_suffix(".0").map_or(t.clone(), str::to_string)
}

/// [`LogLine::ParametersAdded`]'s fixed parts.
pub(super) const PARAMETERS_HEAD: &str = "SchedulerParameters in slurm.conf lacks ";
pub(super) const PARAMETERS_WAS: &str = "; it is '";
pub(super) const PARAMETERS_NOW: &str = "'): sched/malleable adds them, so slurmctld runs with SchedulerParameters=";
pub(super) const PARAMETERS_TAIL: &str = "; set that in slurm.conf to silence this";
