//! What malleable.conf's settings need of slurm.conf, checked at the
//! plugin's init: the scheduler's SchedulerParameters (what they lack,
//! sched/malleable adds with a warning; what contradicts it stops the
//! load), and the select and task plugins that placing or sharing cores needs.

use malleable_model::log_lines::LogLine;

/// slurm.conf's JobSubmitPlugins must load job_submit/malleable: it checks
/// the malleable options at submit and keeps each malleable job's runtime
/// requests apart from the job's Comment. Without it, every request would
/// overwrite the Comment its owner wrote, and never reach the scheduler.
pub fn check_job_submit(plugins: Option<&str>) -> Result<(), String> {
    let list = plugins.unwrap_or("").trim();
    let loaded = list.split(',').map(str::trim).any(|p| p == "malleable" || p == "job_submit/malleable");
    if loaded {
        return Ok(());
    }
    let fix = if list.is_empty() { "malleable".to_string() } else { format!("{list},malleable") };
    Err(format!(
        "JobSubmitPlugins={list} does not load job_submit/malleable, which checks the malleable options at submit \
         and takes each malleable job's runtime requests apart from its Comment (without it they would overwrite \
         the Comment its owner wrote, and never reach the scheduler): set JobSubmitPlugins={fix} in slurm.conf"
    ))
}

/// An option SchedulerParameters must hold, and why.
pub type Needed = (&'static str, &'static str);

/// What slurm.conf's SchedulerParameters must hold, and why.
const REQUIRED_PARAMETERS: &[Needed] = &[
    ("sched_interval=-1", "slurmctld's periodic scheduler would start jobs too"),
    ("permit_job_expansion", "slurmctld refuses to grow a running job without it"),
];

/// What a power corridor needs on top: without `defer`, slurmctld starts
/// an srun or salloc job at submit when it is first in its partition's
/// queue and fits, which every strategy would do too, except that a power
/// strategy may hold that job for the budget.
const POWER_PARAMETER: Needed =
    ("defer", "slurmctld would start srun and salloc jobs at submit without asking the power budget");

/// What a strategy that shares cores needs on top (see [`check_core_sharing`]).
const SHARING_PARAMETER: Needed =
    ("defer", "slurmctld would start srun and salloc jobs at submit on cores that running jobs allow to share");

/// slurmctld must leave job starts to us (its periodic pass off with
/// `sched_interval=-1`; with a power corridor, no starts at submit either,
/// `defer`) and let running jobs grow (`permit_job_expansion`) and shrink
/// (no `disable_job_shrink`). Without a corridor, `defer` is allowed but not
/// needed: slurmctld's start at submit of an interactive job that heads its
/// queue is the start any strategy makes, and without it srun and salloc
/// wait for a pass and say "queued and waiting for resources".
/// Returns what is missing, for sched/malleable to add
/// ([`parameters_added`]); an error, said as the fix, for what contradicts
/// it (`disable_job_shrink`, a `sched_interval` of its own).
pub fn check_scheduler_parameters(params: Option<&str>, power: bool) -> Result<Vec<Needed>, String> {
    let required: Vec<Needed> = REQUIRED_PARAMETERS.iter().copied().chain(power.then_some(POWER_PARAMETER)).collect();
    check_parameters(params, &required)
}

/// The warning sched/malleable logs when it added `missing` to `params`
/// (slurm.conf's), and SchedulerParameters is `now`. A site that edits
/// SchedulerParameters (Slurm's own test31.2 appends an option, and the
/// last line wins) keeps a working controller instead of one that will not
/// start, or, on a reconfigure, one whose own scheduler runs beside ours.
pub fn parameters_added(params: Option<&str>, missing: &[Needed], now: &str) -> String {
    let (_, reasons) = named(missing);
    LogLine::ParametersAdded {
        lacks: missing.iter().map(|(w, _)| w.to_string()).collect(),
        reasons,
        was: params.unwrap_or("").to_string(),
        now: now.to_string(),
    }
    .to_string()
}

/// `missing`'s options ("a and b") and why each is needed ("without a ...; without b ...").
fn named(missing: &[Needed]) -> (String, String) {
    let names: Vec<&str> = missing.iter().map(|(w, _)| *w).collect();
    let reasons: Vec<String> = missing.iter().map(|(w, r)| format!("without {w} {r}")).collect();
    (names.join(" and "), reasons.join("; "))
}

/// A strategy that starts jobs on cores taken from running jobs (SD-Policy)
/// needs slurmctld to put two jobs on a core, which select/cons_tres does
/// in a partition with OverSubscribe (job_submit/malleable checks that per
/// job), and the nodes to give each job its own cores, which task/drom
/// does. `strategy` is malleable.conf's Strategy, `select` and `task`
/// slurm.conf's SelectType, TaskPlugin and SchedulerParameters: the
/// last must have `defer`, or slurmctld would itself start an srun or
/// salloc job at submit on cores of running jobs that allow sharing,
/// where SD-Policy's rules were never asked and task/drom has no record.
pub fn check_core_sharing(
    strategy: &malleable_core::StrategyInfo,
    select: Option<&str>,
    task: Option<&str>,
    params: Option<&str>,
) -> Result<Vec<Needed>, String> {
    if !strategy.shares_cores {
        return Ok(Vec::new());
    }
    let missing = check_parameters(params, &[SHARING_PARAMETER])?;
    let name = strategy.name;
    let select = select.unwrap_or("select/linear");
    if select != "select/cons_tres" {
        return Err(format!(
            "Strategy={name} starts jobs on cores taken from running jobs, which needs SelectType=select/cons_tres \
             in slurm.conf (it has {select}): only cons_tres lets two jobs hold a node's cores"
        ));
    }
    let task = task.unwrap_or("task/none");
    if !task.split(',').map(str::trim).any(|t| t == "task/drom" || t == "drom") {
        return Err(format!(
            "Strategy={name} starts jobs on cores taken from running jobs, which needs task/drom in slurm.conf's \
             TaskPlugin (it has {task}), e.g. TaskPlugin=task/affinity,task/drom: it gives each job on a shared node \
             its own cores"
        ));
    }
    Ok(missing)
}

/// A strategy that starts jobs on part of nodes (IPSCHED: the cores and
/// GPUs of its choice) needs select/cons_tres, the select plugin that
/// lets jobs hold part of a node; under select/linear every job holds its
/// nodes whole. `select` is slurm.conf's SelectType.
pub fn check_core_placing(strategy: &malleable_core::StrategyInfo, select: Option<&str>) -> Result<(), String> {
    let select = select.unwrap_or("select/linear");
    if strategy.places_cores && select != "select/cons_tres" {
        return Err(format!(
            "Strategy={} starts jobs on part of nodes (the cores and GPUs it chooses), which needs \
             SelectType=select/cons_tres in slurm.conf (it has {select}): only cons_tres lets jobs hold part of a node",
            strategy.name
        ));
    }
    Ok(())
}

/// Beside another scheduler (select/natural under sched/backfill), slurmctld
/// must let running jobs grow (`permit_job_expansion`) and shrink (no
/// `disable_job_shrink`); starting jobs is the other scheduler's. A select
/// plugin is loaded before slurmctld reads slurm.conf for good (and again
/// on each reconfigure), so it cannot add what is missing: it refuses.
pub fn check_answerer_parameters(params: Option<&str>) -> Result<(), String> {
    let missing = check_parameters(params, &REQUIRED_PARAMETERS[1..])?;
    if missing.is_empty() {
        return Ok(());
    }
    let (names, reasons) = named(&missing);
    let fixed: Vec<&str> = tokens_of(params).into_iter().chain(missing.iter().map(|(w, _)| *w)).collect();
    Err(format!(
        "SchedulerParameters in slurm.conf must contain {names} ({reasons}) (it is '{}'). Set: SchedulerParameters={}",
        params.unwrap_or(""),
        fixed.join(",")
    ))
}

/// SchedulerParameters' options, trimmed.
fn tokens_of(params: Option<&str>) -> Vec<&str> {
    params.unwrap_or("").split(',').map(str::trim).filter(|t| !t.is_empty()).collect()
}

/// What `params` lacks of `required`; an error, said as the fix, when it
/// has what contradicts them: `disable_job_shrink` (the plugin shrinks
/// running jobs), or a `sched_interval` other than the -1 required (Slurm
/// reads the first, so adding ours after it would not do).
fn check_parameters(params: Option<&str>, required: &[Needed]) -> Result<Vec<Needed>, String> {
    let tokens = tokens_of(params);
    let has = |want: &str| tokens.iter().any(|t| t.eq_ignore_ascii_case(want));
    let key = |t: &str| t.split_once('=').map_or(t, |(k, _)| k).trim().to_ascii_lowercase();
    let mut refused: Vec<String> = Vec::new();
    if has("disable_job_shrink") {
        refused.push("must not contain disable_job_shrink (the plugin shrinks running jobs)".into());
    }
    for (want, why) in required.iter().filter(|(w, _)| w.contains('=')) {
        if let Some(t) = tokens.iter().find(|t| key(t) == key(want) && !t.eq_ignore_ascii_case(want)) {
            refused.push(format!("has {t} where {want} is needed (otherwise {why})"));
        }
    }
    if !refused.is_empty() {
        let fixed: Vec<&str> = tokens
            .iter()
            .copied()
            .filter(|t| !t.eq_ignore_ascii_case("disable_job_shrink"))
            .filter(|t| !required.iter().any(|(w, _)| w.contains('=') && key(t) == key(w)))
            .chain(required.iter().map(|(w, _)| *w).filter(|w| w.contains('=') || !has(w)))
            .collect();
        return Err(format!(
            "SchedulerParameters in slurm.conf {} (it is '{}'). Set: SchedulerParameters={}",
            refused.join(", and "),
            params.unwrap_or(""),
            fixed.join(",")
        ));
    }
    Ok(required.iter().copied().filter(|(want, _)| !has(want)).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn job_submit_malleable_is_required_and_the_error_says_the_line_to_write() {
        assert!(check_job_submit(Some("malleable")).is_ok());
        assert!(check_job_submit(Some("lua, job_submit/malleable")).is_ok());
        let e = check_job_submit(Some("lua")).unwrap_err();
        assert!(e.starts_with("JobSubmitPlugins=lua does not load job_submit/malleable"), "{e}");
        assert!(e.ends_with("set JobSubmitPlugins=lua,malleable in slurm.conf"), "{e}");
        assert!(check_job_submit(None).unwrap_err().ends_with("set JobSubmitPlugins=malleable in slurm.conf"));
    }

    use super::*;

    /// The registry's entry for strategy `name`.
    fn info(name: &str) -> &'static malleable_core::StrategyInfo {
        malleable_core::REGISTRY.iter().copied().find(|s| s.name == name).unwrap()
    }

    /// The options of `missing`, as the plugin adds them.
    fn names(missing: Vec<Needed>) -> Vec<&'static str> {
        missing.into_iter().map(|(w, _)| w).collect()
    }

    #[test]
    fn a_strategy_that_shares_cores_needs_cons_tres_and_task_drom() {
        let sd = info("sd-policy");
        let params = Some("sched_interval=-1,defer,permit_job_expansion");
        assert_eq!(
            check_core_sharing(sd, Some("select/cons_tres"), Some("task/affinity,task/drom"), params),
            Ok(vec![])
        );
        assert_eq!(check_core_sharing(sd, Some("select/cons_tres"), Some("drom"), params), Ok(vec![]));
        let missing =
            check_core_sharing(sd, Some("select/cons_tres"), Some("drom"), Some("sched_interval=-1")).unwrap();
        assert_eq!(names(missing), ["defer"]);
        let e = check_core_sharing(sd, Some("select/linear"), Some("task/drom"), params).unwrap_err();
        assert!(
            e.starts_with(
                "Strategy=sd-policy starts jobs on cores taken from running jobs, which needs \
             SelectType=select/cons_tres in slurm.conf (it has select/linear)"
            ),
            "{e}"
        );
        let e = check_core_sharing(sd, Some("select/cons_tres"), None, params).unwrap_err();
        assert!(e.contains("needs task/drom in slurm.conf's TaskPlugin (it has task/none)"), "{e}");
        // A strategy that shares nothing needs neither.
        let easy = info("easy");
        assert_eq!(check_core_sharing(easy, Some("select/linear"), None, None), Ok(vec![]));
    }

    #[test]
    fn what_scheduler_parameters_lack_is_added_and_what_contradicts_them_refused() {
        let check = |p: Option<&str>| check_scheduler_parameters(p, false);
        assert_eq!(check(Some("sched_interval=-1,permit_job_expansion")), Ok(vec![]));
        assert_eq!(check(Some("defer,sched_interval=-1,permit_job_expansion")), Ok(vec![]));
        assert_eq!(check(Some("bf_interval=30, sched_interval=-1 ,defer,permit_job_expansion")), Ok(vec![]));
        assert_eq!(names(check(Some("defer")).unwrap()), ["sched_interval=-1", "permit_job_expansion"]);
        assert_eq!(names(check(None).unwrap()), ["sched_interval=-1", "permit_job_expansion"]);
        assert_eq!(names(check(Some("SCHED_INTERVAL=-1")).unwrap()), ["permit_job_expansion"], "any case, as Slurm");
        let missing = check(Some("defer")).unwrap();
        let w = parameters_added(Some("defer"), &missing, "defer,sched_interval=-1,permit_job_expansion");
        let Some(LogLine::ParametersAdded { lacks, reasons, was, now }) = LogLine::parse(&w) else { panic!("{w}") };
        assert_eq!(lacks, ["sched_interval=-1", "permit_job_expansion"]);
        assert!(reasons.contains("without permit_job_expansion slurmctld refuses to grow a running job"), "{w}");
        assert_eq!((was.as_str(), now.as_str()), ("defer", "defer,sched_interval=-1,permit_job_expansion"));
        // A scheduler interval of its own: Slurm reads the first, so none is added.
        let e = check(Some("sched_interval=-10,permit_job_expansion")).unwrap_err();
        assert!(
            e.contains("has sched_interval=-10 where sched_interval=-1 is needed (otherwise slurmctld's periodic"),
            "{e}"
        );
        assert!(e.ends_with("Set: SchedulerParameters=permit_job_expansion,sched_interval=-1"), "{e}");
        let e = check(Some("sched_interval=-1,permit_job_expansion,disable_job_shrink")).unwrap_err();
        assert!(e.contains("must not contain disable_job_shrink"), "{e}");
        assert!(e.ends_with("Set: SchedulerParameters=permit_job_expansion,sched_interval=-1"), "{e}");
        let e = check(Some("disable_job_shrink")).unwrap_err();
        assert!(e.ends_with("Set: SchedulerParameters=sched_interval=-1,permit_job_expansion"), "{e}");
    }

    #[test]
    fn a_power_corridor_needs_defer() {
        let check = |p: Option<&str>| check_scheduler_parameters(p, true);
        assert_eq!(check(Some("defer,sched_interval=-1,permit_job_expansion")), Ok(vec![]));
        let missing = check(Some("sched_interval=-1,permit_job_expansion")).unwrap();
        assert_eq!(names(missing.clone()), ["defer"]);
        let w = parameters_added(None, &missing, "defer");
        let Some(LogLine::ParametersAdded { lacks, reasons, .. }) = LogLine::parse(&w) else { panic!("{w}") };
        assert_eq!(lacks, ["defer"]);
        assert!(
            reasons.starts_with("without defer slurmctld would start srun and salloc jobs at submit without asking"),
            "{w}"
        );
        // "defer" must be its own option, not part of another one.
        assert_eq!(names(check(Some("sched_interval=-1,nodeferral,permit_job_expansion")).unwrap()), ["defer"]);
    }
}
