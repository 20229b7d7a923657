//! The agent's slurmctld log lines as the tests wait for them and count them,
//! read through malleable-model's `log_lines` (the wording's one reader): a
//! reworded line then fails that crate's tests instead of leaving these waiting.

pub use malleable_model::log_lines::{CorridorCause, Ending, LogLine};
pub use malleable_model::JobId;

/// A kind of line a test waits for: what it is, for a timeout's message,
/// and which of the agent's lines say it.
pub struct Said {
    pub what: String,
    test: Box<dyn Fn(&LogLine) -> bool>,
}

impl Said {
    /// A kind of its own: `test` picks the lines.
    pub fn new(what: String, test: impl Fn(&LogLine) -> bool + 'static) -> Said {
        Said { what, test: Box::new(test) }
    }

    /// Whether `line` (as slurmctld prints it) says it.
    pub fn matches(&self, line: &str) -> bool {
        LogLine::parse(line).is_some_and(|l| (self.test)(&l))
    }

    /// The first line of `log` that says it.
    pub fn first<'a>(&self, log: &'a str) -> Option<&'a str> {
        log.lines().find(|l| self.matches(l))
    }

    /// Where in `log` the first (or last) line saying it starts, in bytes.
    pub fn find(&self, log: &str) -> Option<usize> {
        self.offsets(log).next()
    }

    pub fn rfind(&self, log: &str) -> Option<usize> {
        self.offsets(log).last()
    }

    /// How many lines of `log` say it.
    pub fn count(&self, log: &str) -> usize {
        log.lines().filter(|l| self.matches(l)).count()
    }

    pub fn in_log(&self, log: &str) -> bool {
        self.first(log).is_some()
    }

    fn offsets<'a>(&'a self, log: &'a str) -> impl Iterator<Item = usize> + 'a {
        // Lines are slices of `log`: their offset is their address's.
        log.lines().filter(|l| self.matches(l)).map(move |l| l.as_ptr() as usize - log.as_ptr() as usize)
    }
}

/// `nodes` as comma-separated names, or any when empty.
fn nodes_are(nodes: &[String], want: &str) -> bool {
    want.is_empty() || nodes.join(",") == want
}

fn about(l: &LogLine, id: u32) -> bool {
    l.job() == Some(JobId(id))
}

fn on(nodes: &str) -> String {
    if nodes.is_empty() {
        String::new()
    } else {
        format!(" {nodes}")
    }
}

/// The agent started job `id`.
pub fn started(id: u32) -> Said {
    Said::new(format!("started JobId={id}"), move |l| matches!(l, LogLine::Started { .. }) && about(l, id))
}

/// The agent started job `id` on `nodes` (slurmctld's hostlist, as `n[1-4]`).
pub fn started_on(id: u32, nodes: &str) -> Said {
    let nodes = nodes.to_string();
    Said::new(format!("started JobId={id} on {nodes}"), move |l| {
        matches!(l, LogLine::Started { nodes: n, .. } if *n == nodes) && about(l, id)
    })
}

/// The agent started job `id`, or slurmctld refused to.
pub fn started_or_refused(id: u32) -> Said {
    Said::new(format!("(could not) start JobId={id}"), move |l| {
        matches!(l, LogLine::Started { .. } | LogLine::CouldNotStart { .. }) && about(l, id)
    })
}

/// Slurm took `nodes` out of job `id` (they failed); with `resize` when its
/// application is to commit going on without them.
pub fn lost(id: u32, nodes: &str, resize: bool) -> Said {
    let nodes = nodes.to_string();
    Said::new(format!("JobId={id}: lost {nodes}"), move |l| {
        matches!(l, LogLine::Lost { nodes: n, resize: r, .. } if nodes_are(n, &nodes) && r.is_some() == resize)
            && about(l, id)
    })
}

/// slurmctld merged `nodes` into job `id`; its application is to commit.
pub fn expanding(id: u32, nodes: &str) -> Said {
    let nodes = nodes.to_string();
    Said::new(format!("JobId={id}: expand onto{} (resize", on(&nodes)), move |l| match l {
        LogLine::Expanding { nodes: n, .. } => about(l, id) && nodes_are(n, &nodes),
        _ => false,
    })
}

/// Job `id`'s expand onto `nodes` committed.
pub fn expand_committed(id: u32, nodes: &str) -> Said {
    let nodes = nodes.to_string();
    Said::new(format!("JobId={id}: expand onto{} committed", on(&nodes)), move |l| match l {
        LogLine::ExpandCommitted { nodes: n, .. } => about(l, id) && nodes_are(n, &nodes),
        _ => false,
    })
}

/// The agent decided to shrink job `id` off `nodes`.
pub fn shrinking(id: u32, nodes: &str) -> Said {
    let nodes = nodes.to_string();
    Said::new(format!("JobId={id}: shrink off{} (resize", on(&nodes)), move |l| match l {
        LogLine::Shrinking { nodes: n, .. } => about(l, id) && nodes_are(n, &nodes),
        _ => false,
    })
}

/// Nodes freed at the end of one of job `id`'s adaptations, of the kind `kind` accepts.
fn released(id: u32, what: String, nodes: &str, kind: fn(&Ending) -> bool) -> Said {
    let nodes = nodes.to_string();
    Said::new(what, move |l| match l {
        LogLine::Released { ending, .. } => about(l, id) && kind(ending) && nodes_are(ending.nodes(), &nodes),
        _ => false,
    })
}

/// Job `id`'s shrink off `nodes` committed and the nodes freed.
pub fn shrink_committed(id: u32, nodes: &str) -> Said {
    let what = format!("JobId={id}: shrink off{} committed", on(nodes));
    released(id, what, nodes, |e| matches!(e, Ending::ShrinkCommitted { .. }))
}

/// Job `id`'s adaptation ended (its nodes `nodes` to be freed), and the
/// freeing held until slurmdbd is back.
pub fn release_held(id: u32, nodes: &str) -> Said {
    let nodes = nodes.to_string();
    Said::new(format!("JobId={id}: freeing{} waits for slurmdbd", on(&nodes)), move |l| match l {
        LogLine::ReleaseHeld { ending, .. } => about(l, id) && nodes_are(ending.nodes(), &nodes),
        _ => false,
    })
}

/// Job `id`'s shrink off `nodes` forced without its application.
pub fn shrink_forced(id: u32, nodes: &str) -> Said {
    let what = format!("JobId={id}: shrink off{} forced", on(nodes));
    released(id, what, nodes, |e| matches!(e, Ending::ShrinkForced { .. }))
}

/// Job `id`'s batch host set back to `runs_on`, where slurmctld took
/// another after reading its state.
pub fn batch_host_restored(id: u32, runs_on: &str) -> Said {
    let runs_on = runs_on.to_string();
    Said::new(format!("JobId={id}: its batch script runs on {runs_on}, not on ..."), move |l| match l {
        LogLine::BatchHostRestored { runs_on: r, .. } => about(l, id) && *r == runs_on,
        _ => false,
    })
}

/// Job `id`, requeued, had its adaptation under way dropped.
pub fn dropped(id: u32) -> Said {
    Said::new(format!("JobId={id}: no longer runs (requeued): its ... dropped"), move |l| {
        matches!(l, LogLine::Dropped { .. }) && about(l, id)
    })
}

/// Job `id`'s expand onto `nodes` rolled back.
pub fn rolled_back(id: u32, nodes: &str) -> Said {
    let what = format!("JobId={id}: expand onto{} rolled back", on(nodes));
    released(id, what, nodes, Ending::is_rollback)
}

/// Job `id`'s application committed going on without `nodes`, which it lost.
pub fn lost_committed(id: u32, nodes: &str) -> Said {
    let nodes = nodes.to_string();
    Said::new(format!("JobId={id}: going on without{} committed", on(&nodes)), move |l| match l {
        LogLine::LostCommitted { nodes: n, .. } => about(l, id) && nodes_are(n, &nodes),
        _ => false,
    })
}

/// Job `id`'s time limit stretched for a shrink.
pub fn stretched(id: u32) -> Said {
    Said::new(format!("JobId={id}: time limit stretched"), move |l| {
        matches!(l, LogLine::Stretched { .. }) && about(l, id)
    })
}

/// slurmctld refused to start job `id`.
pub fn could_not_start(id: u32) -> Said {
    Said::new(format!("could not start JobId={id}"), move |l| {
        matches!(l, LogLine::CouldNotStart { .. }) && about(l, id)
    })
}

/// slurmctld refused some start of the agent's.
pub fn any_refused_start() -> Said {
    Said::new("could not start JobId=J".into(), |l| matches!(l, LogLine::CouldNotStart { .. }))
}

/// Elastic job `id` shrinks for `preemptor` instead of being preempted.
pub fn shrink_instead_of_preempting(id: u32, preemptor: u32) -> Said {
    Said::new(format!("JobId={id}: shrinking off ... for JobId={preemptor} instead of preempting it"), move |l| {
        matches!(l, LogLine::ShrinkInsteadOfPreempt { preemptor: p, .. } if *p == JobId(preemptor)) && about(l, id)
    })
}

/// Some elastic job shrinks for a job instead of being preempted.
pub fn any_shrink_instead_of_preempting() -> Said {
    Said::new("JobId=J: shrinking off ... instead of preempting it".into(), |l| {
        matches!(l, LogLine::ShrinkInsteadOfPreempt { .. })
    })
}

/// `releaser`, asking at its sync point, releases `nodes` nodes for job
/// `id` (select/natural's note); any number when `nodes` is 0.
pub fn released_at_sync_point(id: u32, releaser: u32, nodes: usize) -> Said {
    Said::new(format!("JobId={id}: JobId={releaser}, asking at its sync point, releases {nodes} nodes"), move |l| {
        matches!(l, LogLine::ReleasedAtSyncPoint { releaser: r, nodes: n, .. }
            if *r == JobId(releaser) && (nodes == 0 || *n == nodes))
            && about(l, id)
    })
}

/// Job `id` held back by the power budget, the line as `line` says it.
pub fn power_held(line: LogLine) -> Said {
    Said::new(line.to_string(), move |l| *l == line)
}

/// Array `id`'s pending tasks split off as jobs for their aftercorr dependency.
pub fn tasks_split_off(id: u32) -> Said {
    Said::new(format!("JobId={id}: tasks split off"), move |l| {
        matches!(l, LogLine::TasksSplitOff { split, .. } if !split.is_empty()) && about(l, id)
    })
}

/// An adaptation ran out of time (rolled back or forced).
pub fn any_timed_out() -> Said {
    Said::new(
        "... not committed within N s".into(),
        |l| matches!(l, LogLine::Released { ending, .. } | LogLine::ReleaseHeld { ending, .. } if ending.timed_out()),
    )
}

/// The agent preempts jobs for some job's start.
pub fn any_preemption() -> Said {
    Said::new("JobId=J: preempting".into(), |l| matches!(l, LogLine::Preempting { .. }))
}

/// The agent preempts `victim` (among others) for job `id`'s start.
pub fn preempting(id: u32, victim: u32) -> Said {
    Said::new(format!("JobId={id}: preempting JobId={victim}"), move |l| {
        matches!(l, LogLine::Preempting { victims, .. } if victims.contains(&JobId(victim))) && about(l, id)
    })
}

/// Job `id`'s priority raised (a job released nodes for it).
pub fn priority_raised(id: u32) -> Said {
    Said::new(format!("JobId={id}: priority raised"), move |l| {
        matches!(l, LogLine::PriorityRaised { .. }) && about(l, id)
    })
}

/// Job `id` may grow to `most` nodes at most (its QOS's and association's limits).
pub fn capped(id: u32, most: u32) -> Said {
    Said::new(format!("JobId={id}: grows to {most} nodes at most"), move |l| {
        matches!(l, LogLine::Capped { most: m, .. } if *m == most) && about(l, id)
    })
}

/// `nodes` kept from the strategies for `secs` s after an expand failed there.
pub fn suspect(nodes: &str, secs: u64) -> Said {
    let nodes = nodes.to_string();
    Said::new(
        format!("{nodes} kept from the strategies for {secs} s"),
        move |l| matches!(l, LogLine::Suspect { nodes: n, secs: s } if nodes_are(n, &nodes) && *s == secs),
    )
}

pub fn agent_started() -> Said {
    Said::new("agent started".into(), |l| matches!(l, LogLine::AgentStarted { .. }))
}

/// The agent started with a configuration that `config` starts.
pub fn agent_started_with(config: &'static str) -> Said {
    Said::new(
        format!("agent started: {config}"),
        move |l| matches!(l, LogLine::AgentStarted { config: c } if c.starts_with(config)),
    )
}

pub fn agent_stopped() -> Said {
    Said::new("agent stopped".into(), |l| matches!(l, LogLine::AgentStopped { .. }))
}

/// The agent took a new configuration that `config` starts.
pub fn reconfigured(config: &'static str) -> Said {
    Said::new(
        format!("reconfigured: {config}"),
        move |l| matches!(l, LogLine::Reconfigured { config: c } if c.starts_with(config)),
    )
}

/// The power corridor in force is now `corridor` (`LOW-HIGH`), for `cause`.
pub fn corridor(corridor: &'static str, cause: CorridorCause) -> Said {
    Said::new(
        format!("power corridor now {corridor} ({cause:?})"),
        move |l| matches!(l, LogLine::CorridorNow { corridor: c, cause: w } if c.to_string() == corridor && *w == cause),
    )
}

pub fn resizes_resumed() -> Said {
    Said::new("resizes resumed".into(), |l| matches!(l, LogLine::ResizesResumed))
}

/// Resizes held for slurmdbd, however it was found away.
pub fn resizes_held() -> Said {
    Said::new("resizes held".into(), |l| matches!(l, LogLine::ResizesHeld { .. }))
}

/// Resizes held for slurmdbd found not answering by the plugin's probe,
/// before slurmctld's connection knew.
pub fn resizes_held_unanswered() -> Said {
    Said::new("resizes held: slurmdbd does not answer".into(), |l| {
        matches!(l, LogLine::ResizesHeld { unanswered: Some(_) })
    })
}

/// job_submit/malleable took a `verb` request of job `id`'s runtime
/// (`SHOULD_RECONFIGURE`, `REPORT`, ...), whatever its number.
pub fn request_verb(id: u32, verb: &'static str) -> Said {
    Said::new(
        format!("JobId={id}'s runtime asking {verb}"),
        move |l| matches!(l, LogLine::RequestTaken { job, request } if job.0 == id && request.split(' ').nth(2) == Some(verb)),
    )
}

/// job_submit/malleable took job `id`'s runtime request starting with
/// `request` (e.g. `mall1 seq=1 HELLO`; any when empty).
pub fn request_taken(id: u32, request: &str) -> Said {
    let want = request.to_string();
    Said::new(
        format!("JobId={id}'s runtime request {request:?} taken"),
        move |l| matches!(l, LogLine::RequestTaken { job, request } if job.0 == id && request.starts_with(&want)),
    )
}

/// The nodes an agent's line moves (added, freed) or starts a job on, as
/// names (a start's hostlist as written), or none for another line.
pub fn nodes(line: &str) -> Vec<String> {
    match LogLine::parse(line) {
        Some(LogLine::Started { nodes, .. }) => vec![nodes],
        Some(
            LogLine::Growing { nodes, .. }
            | LogLine::Expanding { nodes, .. }
            | LogLine::ExpandCommitted { nodes, .. }
            | LogLine::Shrinking { nodes, .. }
            | LogLine::Lost { nodes, .. }
            | LogLine::LostCommitted { nodes, .. },
        ) => nodes,
        Some(LogLine::Released { ending, .. } | LogLine::ReleaseFailed { ending, .. }) => ending.nodes().to_vec(),
        _ => Vec::new(),
    }
}

/// The hostlist the job holds after the line's change (an expand merged,
/// nodes freed), or its start's nodes.
pub fn holds(line: &str) -> Option<String> {
    match LogLine::parse(line)? {
        LogLine::Started { nodes, .. } => Some(nodes),
        LogLine::Expanding { holds, .. } | LogLine::Released { holds, .. } => Some(holds),
        _ => None,
    }
}

/// Job `id` was cancelled by the agent, saying why.
pub fn cancelled(id: u32) -> Said {
    Said::new(format!("JobId={id}: cancelled: ..."), move |l| matches!(l, LogLine::Cancelled { .. }) && about(l, id))
}

/// Job `id`'s runtime bounded its adaptations beyond AdaptTimeout, and
/// they are given the bound.
pub fn adapt_bound(id: u32) -> Said {
    Said::new(format!("JobId={id}: its runtime bounds an adaptation at ..."), move |l| {
        matches!(l, LogLine::AdaptBound { .. }) && about(l, id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tests_kinds_match_the_agents_lines() {
        let log = "\
[2026-11-24T00:24:55.030] sched/malleable: JobId=1: expand onto n2,n3 (resize 17, through JobId=2); it now holds n[1-3] (mtct); waiting for its application to commit
[2026-11-24T00:24:55.282] sched/malleable: JobId=1: expand onto n2,n3 committed 0.25 s after the decision
[2026-11-24T00:24:56.184] sched/malleable: JobId=1: shrink off n3 committed 0.15 s after the decision; it now holds n[1-2]
";
        assert!(expanding(1, "n2,n3").in_log(log) && expanding(1, "").in_log(log));
        assert!(!expanding(1, "n2").in_log(log) && !expanding(11, "").in_log(log));
        assert_eq!(expand_committed(1, "n2,n3").find(log), Some(log.find("[2026-11-24T00:24:55.282]").unwrap()));
        let shrunk = shrink_committed(1, "n3").first(log).unwrap();
        assert_eq!((nodes(shrunk), holds(shrunk)), (vec!["n3".to_string()], Some("n[1-2]".to_string())));
        assert!(!rolled_back(1, "").in_log(log));
    }
}
