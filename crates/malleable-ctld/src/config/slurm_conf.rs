//! What malleable.conf's settings need of slurm.conf, checked at the
//! plugin's init (a mismatch stops it, with the line to set): the
//! scheduler's SchedulerParameters, and the select and task plugins that
//! placing or sharing cores needs.

/// What slurm.conf's SchedulerParameters must hold, and why.
const REQUIRED_PARAMETERS: &[(&str, &str)] = &[
    ("sched_interval=-1", "slurmctld's periodic scheduler would start jobs too"),
    ("permit_job_expansion", "slurmctld refuses to grow a running job without it"),
];

/// What a power corridor needs on top: without `defer`, slurmctld starts
/// an srun or salloc job at submit when it is first in its partition's
/// queue and fits, which every strategy would do too, except that a power
/// strategy may hold that job for the budget.
const POWER_PARAMETER: (&str, &str) =
    ("defer", "slurmctld would start srun and salloc jobs at submit without asking the power budget");

/// What a strategy that shares cores needs on top (see [`check_core_sharing`]).
const SHARING_PARAMETER: (&str, &str) =
    ("defer", "slurmctld would start srun and salloc jobs at submit on cores that running jobs allow to share");

/// slurmctld must leave job starts to us (its periodic pass off with
/// `sched_interval=-1`; with a power corridor, no starts at submit either,
/// `defer`) and let running jobs grow (`permit_job_expansion`) and shrink
/// (no `disable_job_shrink`). Without a corridor, `defer` is allowed but not
/// needed: slurmctld's start at submit of an interactive job that heads its
/// queue is the start any strategy makes, and without it srun and salloc
/// wait for a pass and say "queued and waiting for resources".
/// Returns what is wrong, said as the fix.
pub fn check_scheduler_parameters(params: Option<&str>, power: bool) -> Result<(), String> {
    let required: Vec<(&str, &str)> =
        REQUIRED_PARAMETERS.iter().copied().chain(power.then_some(POWER_PARAMETER)).collect();
    check_parameters(params, &required)
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
) -> Result<(), String> {
    if !strategy.shares_cores {
        return Ok(());
    }
    check_parameters(params, &[SHARING_PARAMETER])?;
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
    Ok(())
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
/// `disable_job_shrink`); starting jobs is the other scheduler's.
pub fn check_answerer_parameters(params: Option<&str>) -> Result<(), String> {
    check_parameters(params, &REQUIRED_PARAMETERS[1..])
}

/// What `params` lacks of `required`, or has that stops a shrink, said as the fix.
fn check_parameters(params: Option<&str>, required: &[(&str, &str)]) -> Result<(), String> {
    let tokens: Vec<&str> = params.unwrap_or("").split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    let has = |want: &str| tokens.iter().any(|t| t.eq_ignore_ascii_case(want));
    let required = required.iter().copied();
    let missing: Vec<(&str, &str)> = required.filter(|(want, _)| !has(want)).collect();
    let refused: Vec<&str> = tokens.iter().copied().filter(|t| t.eq_ignore_ascii_case("disable_job_shrink")).collect();
    if missing.is_empty() && refused.is_empty() {
        return Ok(());
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|(w, _)| *w).collect();
        let reasons: Vec<String> = missing.iter().map(|(w, r)| format!("without {w} {r}")).collect();
        let with_power =
            if missing.contains(&POWER_PARAMETER) { " with a PowerCorridor in malleable.conf" } else { "" };
        why.push(format!("must contain {}{with_power} ({})", names.join(" and "), reasons.join("; ")));
    }
    if !refused.is_empty() {
        why.push("must not contain disable_job_shrink (the plugin shrinks running jobs)".to_string());
    }
    let fixed: Vec<&str> = tokens
        .iter()
        .copied()
        .filter(|t| !t.eq_ignore_ascii_case("disable_job_shrink"))
        .chain(missing.iter().map(|(w, _)| *w))
        .collect();
    Err(format!(
        "SchedulerParameters in slurm.conf {} (it is '{}'). Set: SchedulerParameters={}",
        why.join(", and "),
        params.unwrap_or(""),
        fixed.join(",")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry's entry for strategy `name`.
    fn info(name: &str) -> &'static malleable_core::StrategyInfo {
        malleable_core::REGISTRY.iter().copied().find(|s| s.name == name).unwrap()
    }

    #[test]
    fn a_strategy_that_shares_cores_needs_cons_tres_and_task_drom() {
        let sd = info("sd-policy");
        let params = Some("sched_interval=-1,defer,permit_job_expansion");
        assert!(check_core_sharing(sd, Some("select/cons_tres"), Some("task/affinity,task/drom"), params).is_ok());
        assert!(check_core_sharing(sd, Some("select/cons_tres"), Some("drom"), params).is_ok());
        let e = check_core_sharing(sd, Some("select/cons_tres"), Some("drom"), Some("sched_interval=-1")).unwrap_err();
        assert!(e.contains("defer"), "{e}");
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
        assert!(check_core_sharing(easy, Some("select/linear"), None, None).is_ok());
    }

    #[test]
    fn scheduler_parameters_must_hand_over_scheduling_and_permit_resizing() {
        let check = |p: Option<&str>| check_scheduler_parameters(p, false);
        assert!(check(Some("sched_interval=-1,permit_job_expansion")).is_ok());
        assert!(check(Some("defer,sched_interval=-1,permit_job_expansion")).is_ok());
        assert!(check(Some("bf_interval=30, sched_interval=-1 ,defer,permit_job_expansion")).is_ok());
        let e = check(Some("defer")).unwrap_err();
        assert!(
            e.contains("must contain sched_interval=-1 and permit_job_expansion")
                && e.contains("Set: SchedulerParameters=defer,sched_interval=-1,permit_job_expansion"),
            "{e}"
        );
        assert!(e.contains("without permit_job_expansion slurmctld refuses to grow a running job"), "{e}");
        let e = check(None).unwrap_err();
        assert!(e.contains("must contain sched_interval=-1 and permit_job_expansion ("), "{e}");
        assert!(check(Some("sched_interval=-10,permit_job_expansion")).is_err());
        let e = check(Some("sched_interval=-1,permit_job_expansion,disable_job_shrink")).unwrap_err();
        assert!(e.contains("must not contain disable_job_shrink"), "{e}");
        assert!(e.ends_with("Set: SchedulerParameters=sched_interval=-1,permit_job_expansion"), "{e}");
    }

    #[test]
    fn a_power_corridor_needs_defer() {
        let check = |p: Option<&str>| check_scheduler_parameters(p, true);
        assert!(check(Some("defer,sched_interval=-1,permit_job_expansion")).is_ok());
        let e = check(Some("sched_interval=-1,permit_job_expansion")).unwrap_err();
        assert!(e.contains("must contain defer with a PowerCorridor in malleable.conf"), "{e}");
        assert!(e.contains("at submit without asking the power budget"), "{e}");
        assert!(e.ends_with("Set: SchedulerParameters=sched_interval=-1,permit_job_expansion,defer"), "{e}");
        // "defer" must be its own option, not part of another one.
        let e = check(Some("sched_interval=-1,nodeferral,permit_job_expansion")).unwrap_err();
        assert!(e.contains("must contain defer"), "{e}");
    }
}
