//! Reading the agent's log lines back: each line's message split at the
//! fixed parts of its wording (words.rs) into its fields. A line that does
//! not read is None, a reworded one included.

use super::words::*;
use super::{CorridorCause, Ending, LogLine};
use crate::{Corridor, JobId};

impl Ending {
    pub(super) fn parse(text: &str) -> Option<Ending> {
        if let Some(rest) = text.strip_prefix("shrink off ") {
            let (nodes, rest) = rest.split_once(' ')?;
            let nodes = node_names(nodes)?;
            if let Some(after) = rest.strip_prefix("committed") {
                return Some(Ending::ShrinkCommitted { nodes, after: after_decision(after)? });
            }
            let (why, held) = rest.rsplit_once(": forced (its tasks there are ended; not resized again for ")?;
            return Some(Ending::ShrinkForced { nodes, why: why.to_string(), hold_s: seconds_closing(held)? });
        }
        let rest = text.strip_prefix("expand onto ")?;
        let (nodes, rest) = rest.split_once(' ')?;
        let (why, held) = rest.rsplit_once(": rolled back (not resized again for ")?;
        Some(Ending::RolledBack { nodes: node_names(nodes)?, why: why.to_string(), hold_s: seconds_closing(held)? })
    }
}

impl LogLine {
    pub(super) fn parse_message(m: &str) -> Option<LogLine> {
        if let Some(rest) = m.strip_prefix(PARAMETERS_HEAD) {
            let (rest, now) = rest.strip_suffix(PARAMETERS_TAIL)?.rsplit_once(PARAMETERS_NOW)?;
            let (lacks, rest) = rest.split_once(" (")?;
            let (reasons, was) = rest.rsplit_once(PARAMETERS_WAS)?;
            return Some(LogLine::ParametersAdded {
                lacks: lacks.split(" and ").map(str::to_string).collect(),
                reasons: reasons.to_string(),
                was: was.to_string(),
                now: now.to_string(),
            });
        }
        if let Some(config) = m.strip_prefix("agent started: ") {
            return Some(LogLine::AgentStarted { config: config.to_string() });
        }
        if let Some(rest) = m.strip_prefix("agent stopped after ") {
            return Some(LogLine::AgentStopped { passes: rest.strip_suffix(" passes")?.parse().ok()? });
        }
        if let Some(config) = m.strip_prefix("reconfigured: ") {
            return Some(LogLine::Reconfigured { config: config.to_string() });
        }
        if let Some(rest) = m.strip_prefix("power corridor now ") {
            let (corridor, cause) = match rest.split_once(' ') {
                None => (rest, CorridorCause::Start),
                Some((c, "(reconfigured)")) => (c, CorridorCause::Reconfigured),
                Some((c, "(scheduled change)")) => (c, CorridorCause::Scheduled),
                Some(_) => return None,
            };
            return Some(LogLine::CorridorNow { corridor: Corridor::parse(corridor).ok()?, cause });
        }
        if let Some(rest) = m.strip_prefix("started JobId=") {
            let (job, rest) = rest.split_once(" on ")?;
            let (cores, rest) = match of_each(rest) {
                Some((c, of, rest)) => (Some((c, of)), rest),
                None => (None, rest),
            };
            // A hostlist has no space; what follows it starts with one.
            let end = rest.find(' ').unwrap_or(rest.len());
            let (nodes, detail) = rest.split_at(end);
            if nodes.is_empty() {
                return None;
            }
            return Some(LogLine::Started {
                job: job_id(job)?,
                cores,
                nodes: nodes.to_string(),
                detail: detail.to_string(),
            });
        }
        if let Some(rest) = m.strip_prefix("could not start JobId=") {
            let (job, rest) = rest.split_once(" on ")?;
            let (nodes, why) = rest.split_once(" nodes: ")?;
            return Some(LogLine::CouldNotStart {
                job: job_id(job)?,
                nodes: nodes.parse().ok()?,
                why: why.to_string(),
            });
        }
        if m == "resizes held: slurmdbd is away or behind (sdiag: DBD Agent queue size)" {
            return Some(LogLine::ResizesHeld { unanswered: None });
        }
        if let Some(why) = m.strip_prefix("resizes held: slurmdbd does not answer (").and_then(|r| r.strip_suffix(')'))
        {
            return Some(LogLine::ResizesHeld { unanswered: Some(why.to_string()) });
        }
        if m == "resizes resumed: slurmdbd has caught up" {
            return Some(LogLine::ResizesResumed);
        }
        if let Some(rest) = m.strip_prefix("feed: ") {
            let (rest, nodes_walked) = match rest.rsplit_once(", nodes ")? {
                (rest, "walked") => (rest, true),
                (rest, "as last walked") => (rest, false),
                _ => return None,
            };
            let (head, kept) = rest.strip_suffix(" waiting kept")?.rsplit_once(", ")?;
            let kept = kept.parse().ok()?;
            if let Some(rest) = head.strip_prefix("whole read (") {
                let (why, records) = rest.split_once("), ")?;
                let records = records.strip_suffix(" records")?.parse().ok()?;
                return Some(LogLine::FeedRead { records, whole: Some(why.to_string()), kept, nodes_walked });
            }
            let records = head.strip_suffix(" records read")?.parse().ok()?;
            return Some(LogLine::FeedRead { records, whole: None, kept, nodes_walked });
        }
        if let Some(rest) = m.strip_prefix("pass ") {
            let (pass, rest) = rest.split_once(": slurmctld's locks held ")?;
            let (read, rest) = rest.split_once(" ms to read, ")?;
            let (apply, rest) = rest.split_once(" to apply, on the CPU ")?;
            // "not again": nothing to write, the locks were not taken for it.
            let apply_ms = match apply {
                "not again" => None,
                a => Some(a.strip_suffix(" ms")?.parse().ok()?),
            };
            let (held, rest) = rest.split_once(" (none while deciding, ")?;
            let decide = rest.strip_suffix(" ms)")?;
            // The run delay is said only where the kernel keeps it.
            let (on_cpu, queued) = match held.split_once(" ms of them, waiting for one ") {
                Some((on_cpu, queued)) => (on_cpu, Some(queued.strip_suffix(" ms")?.parse().ok()?)),
                None => (held.strip_suffix(" ms of them")?, None),
            };
            return Some(LogLine::LocksHeld {
                pass: pass.parse().ok()?,
                read_ms: read.parse().ok()?,
                apply_ms,
                on_cpu_ms: on_cpu.parse().ok()?,
                queued_ms: queued,
                decide_ms: decide.parse().ok()?,
            });
        }
        if let Some((nodes, rest)) = m.split_once(" kept from the strategies for ") {
            return Some(LogLine::Suspect { nodes: node_names(nodes)?, secs: rest.strip_suffix(" s")?.parse().ok()? });
        }
        if let Some((job, rest)) = m.strip_prefix("JobId=").and_then(|r| r.split_once(POWER_HELD_HEAD)) {
            let (nodes, rest) = rest.split_once(POWER_HELD_DRAW)?;
            let (before_w, rest) = rest.split_once(POWER_HELD_TO)?;
            let (after_w, corridor) = rest.split_once(POWER_HELD_TOP)?;
            return Some(LogLine::PowerHeld {
                job: job_id(job)?,
                nodes: nodes.parse().ok()?,
                before_w: before_w.parse().ok()?,
                after_w: after_w.parse().ok()?,
                corridor: Corridor::parse(corridor.strip_suffix(" W")?).ok()?,
            });
        }
        let (job, what) = m.strip_prefix("JobId=")?.split_once(": ")?;
        let job = job_id(job)?;
        Self::parse_about(job, what)
    }

    /// The lines `JobId=J: WHAT`.
    fn parse_about(job: JobId, what: &str) -> Option<LogLine> {
        // Nodes freed: the hostlist at the end has no space, which sets it
        // apart from the expand's "it now holds LIST (strategy); waiting".
        if let Some((ending, holds)) = what.rsplit_once("; it now holds ") {
            if !holds.contains(' ') {
                return Some(LogLine::Released { job, ending: Ending::parse(ending)?, holds: holds.to_string() });
            }
        }
        if let Some(why) = what.strip_prefix("cancelled: ") {
            return Some(LogLine::Cancelled { job, why: why.to_string() });
        }
        if let Some(rest) = what.strip_prefix(ADAPT_BOUND_HEAD) {
            let (bound, rest) = rest.split_once(" s (AdaptTimeout=")?;
            let (timeout, _) = rest.split_once("): its adaptations are given ")?;
            return Some(LogLine::AdaptBound { job, bound_s: bound.parse().ok()?, timeout_s: timeout.parse().ok()? });
        }
        if what == REQUEUED_AFTER_RESIZE {
            return Some(LogLine::RequeuedAfterResize { job });
        }
        if what == REQUEUE_FINISHED {
            return Some(LogLine::RequeueFinished { job });
        }
        if let Some(rest) = what.strip_prefix(TAKEN_BACK_HEAD) {
            return Some(LogLine::UsageTakenBack { job, tres_s: rest.strip_suffix(TAKEN_BACK_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix(BATCH_HOST_HEAD) {
            let (runs_on, said) = rest.strip_suffix(BATCH_HOST_TAIL)?.split_once(BATCH_HOST_MID)?;
            return Some(LogLine::BatchHostRestored { job, said: said.to_string(), runs_on: runs_on.to_string() });
        }
        if let Some(rest) = what.strip_prefix(DROPPED_HEAD) {
            return Some(LogLine::Dropped { job, what: rest.strip_suffix(" dropped")?.to_string() });
        }
        if let Some((ending, waits_for)) = what.split_once(RELEASE_HELD_MID) {
            return Some(LogLine::ReleaseHeld {
                job,
                ending: Ending::parse(ending)?,
                waits_for: waits_for.to_string(),
            });
        }
        if let Some((ending, error)) = what.split_once(", but freeing the nodes failed: ") {
            return Some(LogLine::ReleaseFailed { job, ending: Ending::parse(ending)?, error: error.to_string() });
        }
        if let Some(rest) = what.strip_prefix("expand onto ") {
            let (nodes, rest) = rest.split_once(' ')?;
            let nodes = node_names(nodes)?;
            if let Some(rest) = rest.strip_prefix("(resize ") {
                let (resize, rest) = rest.split_once(", through JobId=")?;
                let (helper, rest) = rest.split_once("); it now holds ")?;
                let (holds, rest) = rest.split_once(" (")?;
                return Some(LogLine::Expanding {
                    job,
                    nodes,
                    resize: resize.parse().ok()?,
                    helper: job_id(helper)?,
                    holds: holds.to_string(),
                    strategy: rest.strip_suffix(EXPANDING_TAIL)?.to_string(),
                });
            }
            if let Some(error) = rest.strip_prefix("not done, it keeps its nodes: ") {
                return Some(LogLine::ExpandNotDone { job, nodes, error: error.to_string() });
            }
            let after = after_decision(rest.strip_prefix("committed")?)?;
            return Some(LogLine::ExpandCommitted { job, nodes, after });
        }
        if let Some(rest) = what.strip_prefix("shrink off ") {
            let (nodes, rest) = rest.split_once(" (resize ")?;
            let (resize, strategy) = rest.split_once(", ")?;
            return Some(LogLine::Shrinking {
                job,
                nodes: node_names(nodes)?,
                resize: resize.parse().ok()?,
                strategy: strategy.strip_suffix(SHRINKING_TAIL)?.to_string(),
            });
        }
        if let Some(rest) = what.strip_prefix("growing onto ") {
            let (nodes, strategy) = rest.split_once(" (")?;
            let strategy = strategy.strip_suffix(')')?.to_string();
            return Some(LogLine::Growing { job, nodes: node_names(nodes)?, strategy });
        }
        if let Some(rest) = what.strip_prefix("preempting ") {
            let (victims, rest) = rest.split_once(" for its start on ")?;
            let victims = victims.split(',').map(|v| job_id(v.strip_prefix("JobId=")?)).collect::<Option<_>>()?;
            let nodes = node_names(rest.strip_suffix(PREEMPTING_TAIL)?)?;
            return Some(LogLine::Preempting { job, victims, nodes });
        }
        if let Some(rest) = what.strip_prefix("lost ") {
            let (nodes, rest) = rest.split_once("; it goes on with ")?;
            let (holds, rest) = rest.split_once(" nodes")?;
            let resize = match rest {
                "" => None,
                r => Some(r.strip_prefix(" (resize ")?.strip_suffix(LOST_TAIL)?.parse().ok()?),
            };
            return Some(LogLine::Lost { job, nodes: node_names(nodes)?, holds: holds.parse().ok()?, resize });
        }
        if let Some(rest) = what.strip_prefix("going on without ") {
            let (nodes, after) = rest.split_once(" committed")?;
            return Some(LogLine::LostCommitted { job, nodes: node_names(nodes)?, after: after_decision(after)? });
        }
        if let Some(rest) = what.strip_prefix("time limit stretched to ") {
            return Some(LogLine::Stretched { job, minutes: rest.strip_suffix(STRETCHED_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix("priority raised to ") {
            return Some(LogLine::PriorityRaised { job, priority: rest.strip_suffix(PRIORITY_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix("grows to ") {
            return Some(LogLine::Capped { job, most: rest.strip_suffix(CAPPED_TAIL)?.parse().ok()? });
        }
        if let Some(rest) = what.strip_prefix("JobId=") {
            let (releaser, rest) = rest.split_once(SYNC_MID)?;
            let nodes = rest.strip_suffix(SYNC_TAIL)?.parse().ok()?;
            return Some(LogLine::ReleasedAtSyncPoint { job, releaser: job_id(releaser)?, nodes });
        }
        if let Some(rest) = what.strip_prefix(SPLIT_HEAD) {
            let ids = rest.strip_suffix(SPLIT_TAIL)?.strip_prefix('[')?.strip_suffix(']')?;
            let split = ids.split(", ").map(|i| i.parse().ok()).collect::<Option<_>>()?;
            return Some(LogLine::TasksSplitOff { job, split });
        }
        if let Some(rest) = what.strip_prefix("shrinking off ") {
            let (nodes, rest) = rest.split_once(" for JobId=")?;
            let (preemptor, rest) = rest.split_once(INSTEAD_MID)?;
            let (node_s, rest) = rest.split_once(INSTEAD_RAN)?;
            let (ran_s, rest) = rest.split_once(" s on ")?;
            return Some(LogLine::ShrinkInsteadOfPreempt {
                job,
                nodes: node_names(nodes)?,
                preemptor: job_id(preemptor)?,
                node_s: node_s.parse().ok()?,
                ran_s: ran_s.parse().ok()?,
                on_nodes: rest.strip_suffix(INSTEAD_TAIL)?.parse().ok()?,
            });
        }
        if let Some(request) = what.strip_prefix(REQUEST_HEAD) {
            return Some(LogLine::RequestTaken { job, request: request.to_string() });
        }
        None
    }
}

fn job_id(s: &str) -> Option<JobId> {
    // A plain number: "+4" or " 4" would read as 4 and hide a rewording.
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().map(JobId)
}

/// `n1,n3`: names without spaces.
fn node_names(s: &str) -> Option<Vec<String>> {
    if s.is_empty() || s.contains(' ') {
        return None;
    }
    Some(s.split(',').map(str::to_string).collect())
}

/// What follows "committed": nothing, or ` S.SS s after the decision`.
fn after_decision(s: &str) -> Option<Option<f64>> {
    if s.is_empty() {
        return Some(None);
    }
    let secs = s.strip_prefix(' ')?.strip_suffix(" s after the decision")?;
    Some(Some(secs.parse().ok()?))
}

/// `H s)`, the end of a hold.
fn seconds_closing(s: &str) -> Option<u64> {
    s.strip_suffix(" s)")?.parse().ok()
}

/// `C of the OF cores of each of REST`.
fn of_each(s: &str) -> Option<(u32, u32, &str)> {
    let (c, rest) = s.split_once(" of the ")?;
    let (of, rest) = rest.split_once(" cores of each of ")?;
    Some((c.parse().ok()?, of.parse().ok()?, rest))
}
