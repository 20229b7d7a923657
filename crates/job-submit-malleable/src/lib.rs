//! job_submit/malleable: slurmctld checks a malleable job's options when it
//! is submitted, by the same rules the SPANK plugin applies in sbatch
//! (malleable-model's `submit_options`), plus what only the controller
//! knows: the job's start size (`--nodes`) must lie in its range, and its
//! range must fit its partition. A client without the SPANK plugin, or one
//! that writes the job's SPANK environment by hand, cannot slip a bad spec
//! past it. An elastic job given no `--nodes` starts on the lowest count
//! its range and constraint allow. An elastic job may not be `--contiguous`:
//! it grows onto whatever nodes are free, which would not stay in a row.
//! The count an elastic job is submitted with is written into its SPANK
//! environment for the scheduler (`SubmitOptions::SUBMITTED_NODES_ENV`).
//! A job given `--malleable-cores` is made oversubscribable (`--oversubscribe`),
//! which is how select/cons_tres lets SD-Policy start another job on its
//! cores, and is refused where that cannot happen: with `--exclusive`, or
//! in a partition whose cores are never shared.
//!
//! It also keeps the channel between a malleable job's runtime (mall-run)
//! and the scheduler: the runtime sends each request as an update of its
//! job's comment, which Slurm authenticates as it authenticates the job's
//! owner; this plugin takes the request off the update (so the job's
//! Comment stays its owner's, as they wrote it) and keeps it in the job's
//! SystemComment, which only slurmctld writes and which it keeps across
//! restarts, where the scheduler reads it.

use malleable_model::log_lines::LogLine;
use malleable_model::runtime_msg::{with_kept_request, Envelope};
use malleable_model::submit_options::{SubmitOptions, MALLEABLE_CORES, MAX_NODES, MIN_NODES};
use malleable_model::{JobId, MalleableSpec};
use slurm::ctld::job_submit::{JobDesc, JobSubmitPlugin, SubmitContext, UpdatedJob};

struct Malleable;

/// Why an elastic job may not be `--contiguous`.
const CONTIGUOUS: &str = "--contiguous cannot be combined with --min-nodes-invasive/--max-nodes-invasive: an elastic \
                          job grows onto whichever nodes are free, so its nodes would not stay contiguous; submit it \
                          without --contiguous, or as a rigid job";

/// The checks of a submitted job's options, on what the request says: the
/// elastic spec, if any, and the start size to set when none was given.
pub fn check_submission(
    env: &[String],
    nodes: (Option<u32>, Option<u32>),
    partition: Option<(String, u32)>,
    contiguous: bool,
) -> Result<Option<(MalleableSpec, Option<u32>)>, String> {
    let given = SubmitOptions::from_env(env.iter().map(String::as_str))?;
    if given.is_empty() {
        return Ok(None);
    }
    let (min, max) = nodes;
    if let (Some(lo), Some(hi)) = (min, max) {
        if lo != hi && given.min_nodes.is_some() {
            return Err(format!(
                "--nodes={lo}-{hi} is a range: an elastic job starts on one node count, so give --nodes=N, and its \
                 range as --{}={} and --{}={}",
                given.name(&MIN_NODES),
                given.min_nodes.unwrap_or(lo),
                given.name(&MAX_NODES),
                given.max_nodes.unwrap_or(hi)
            ));
        }
    }
    let m = given.resolve(min)?;
    let Some(spec) = m.spec else {
        // Power estimates only: a rigid job.
        return Ok(None);
    };
    if contiguous {
        return Err(CONTIGUOUS.into());
    }
    if let Some((name, total)) = partition {
        if spec.max > total {
            return Err(format!(
                "--{}={} is above the {total} nodes of partition {name}: allowed up to {total}",
                given.name(&MAX_NODES),
                spec.max
            ));
        }
    }
    let start = match min {
        Some(_) => None,
        None => spec.lowest_valid(),
    };
    Ok(Some((spec, start)))
}

/// Whether a job that asks to share cores (`--malleable-cores`) may, and so
/// is to be made oversubscribable: `exclusive` is its `--exclusive`, and
/// `partition` its partition's name and OverSubscribe setting (Slurm's
/// max_share: 0 EXCLUSIVE, 1 NO, N for YES:N, with SHARED_FORCE for
/// FORCE:N). Sharing needs two jobs on a core, so N >= 2.
pub fn check_core_sharing(
    share_cores: bool,
    exclusive: bool,
    partition: Option<(String, u16)>,
) -> Result<bool, String> {
    if !share_cores {
        return Ok(false);
    }
    if exclusive {
        return Err(format!(
            "--{} cannot be combined with --exclusive: the one lets another job start on some of this job's \
             cores, the other keeps its nodes to itself; give one of them",
            MALLEABLE_CORES.name
        ));
    }
    if let Some((name, max_share)) = partition {
        let force = max_share & SHARED_FORCE != 0;
        let jobs = max_share & !SHARED_FORCE;
        if jobs < 2 {
            let setting = match (force, jobs) {
                (_, 0) => "OverSubscribe=EXCLUSIVE".to_string(),
                (false, _) => "OverSubscribe=NO".to_string(),
                (true, n) => format!("OverSubscribe=FORCE:{n}"),
            };
            return Err(format!(
                "--{} needs a partition whose cores two jobs may share, and partition {name} has {setting}: \
                 submit to another partition, or ask for OverSubscribe=YES:2 (or FORCE:2) on {name}",
                MALLEABLE_CORES.name
            ));
        }
    }
    Ok(true)
}

/// slurm.h's SHARED_FORCE bit of a partition's max_share.
const SHARED_FORCE: u16 = 0x8000;

/// What an update's `comment` is to a job: `None` when it is the owner's
/// own comment (the job is not malleable, or the text is not a request of
/// the runtime's), left to slurmctld; else the job's SystemComment with the
/// request kept in it, when `may_act` (the sender is the job's owner, root
/// or SlurmUser); a refusal naming who may otherwise.
pub fn take_request(
    comment: &str,
    malleable: bool,
    may_act: bool,
    job: JobId,
    uid: u32,
    system_comment: &str,
) -> Option<Result<String, String>> {
    if !malleable {
        return None;
    }
    let kept = Envelope::to_kept(comment)?;
    if !may_act {
        return Some(Err(format!(
            "JobId={job}: uid {uid} may not send requests to its scheduler: only its owner, root or SlurmUser may"
        )));
    }
    Some(Ok(with_kept_request(system_comment, Some(&kept))))
}

impl JobSubmitPlugin for Malleable {
    fn init() -> Result<Self, String> {
        Ok(Malleable)
    }

    fn submit(&self, ctx: &SubmitContext, job: &mut JobDesc<'_>, _uid: u32) -> Result<(), String> {
        let partition = ctx.partition_nodes(job.partition().as_deref());
        let nodes = (job.min_nodes(), job.max_nodes());
        let env = job.spank_job_env();
        let checked = check_submission(&env, nodes, partition, job.contiguous())?;
        let share = SubmitOptions::from_env(env.iter().map(String::as_str))?.share_cores;
        if check_core_sharing(share, job.exclusive(), ctx.partition_max_share(job.partition().as_deref()))? {
            job.set_oversubscribe();
        }
        if let Some((_, start)) = checked {
            if let Some(n) = start {
                job.set_nodes(n);
            }
            if let Some(n) = start.or(nodes.0) {
                job.set_spank_env(SubmitOptions::SUBMITTED_NODES_ENV, &n.to_string())?;
            }
        }
        Ok(())
    }

    fn modify(
        &self,
        _ctx: &SubmitContext,
        update: &mut JobDesc<'_>,
        job: &mut UpdatedJob<'_>,
        uid: u32,
    ) -> Result<(), String> {
        // sched/malleable reads under slurmctld's locks only the jobs that
        // changed: this hook is where an update (hold, release, Priority=,
        // nice, any field) is seen, and slurmctld marks no job as changed.
        slurm::ctld::changes::note_update(job.id());
        let env = job.spank_job_env_with(SubmitOptions::ENV_PREFIX);
        let given = SubmitOptions::from_env(env.iter().map(String::as_str))?;
        if let Some(comment) = update.comment() {
            let id = JobId(job.id());
            let may_act = job.may_be_acted_on_by(uid);
            if let Some(kept) = take_request(&comment, !given.is_empty(), may_act, id, uid, &job.system_comment()) {
                let kept = kept?;
                update.take_comment();
                job.set_system_comment(&kept);
                log::info!("{}", LogLine::RequestTaken { job: id, request: comment });
            }
        }
        if update.contiguous() && (given.min_nodes.is_some() || given.max_nodes.is_some()) {
            return Err(CONTIGUOUS.into());
        }
        // Only a waiting job's start size is ours to check; a running job's
        // node count is changed by resizes.
        let Some(n) = update.min_nodes().filter(|_| job.is_pending()) else {
            return Ok(());
        };
        given.resolve(Some(n)).map(|_| ())
    }
}

slurm::job_submit_plugin!(Malleable, name: "Malleable job options", type: "job_submit/malleable");
slurm::export_update_notes!();

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_model::NodeConstraint;

    fn env(pairs: &[(&str, &str)]) -> Vec<String> {
        pairs.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn a_runtime_request_is_kept_apart_from_the_owners_comment_and_only_its_owner_may_send_one() {
        let j = JobId(7);
        let status = "mall1 range=2..4 constraint=even state=steady ack=3 runtime=on";
        let request = "mall1 seq=4 COMMIT job=7 resize=2";
        let kept = take_request(request, true, true, j, 2001, status).unwrap().unwrap();
        assert_eq!(kept, format!("{status}\nmall1-req seq=4 COMMIT job=7 resize=2"));
        // The owner's own comment, or any comment of a rigid job, is theirs.
        assert_eq!(take_request("grant ABC-123", true, true, j, 2001, status), None);
        assert_eq!(take_request(request, false, true, j, 2001, status), None);
        // Another user may not speak for the job.
        let e = take_request(request, true, false, j, 2002, status).unwrap().unwrap_err();
        assert_eq!(
            e,
            "JobId=7: uid 2002 may not send requests to its scheduler: only its owner, root or SlurmUser may"
        );
    }

    #[test]
    fn only_an_elastic_job_is_refused_contiguous() {
        assert_eq!(check_submission(&[], (Some(3), Some(3)), None, true), Ok(None));
        let e = env(&[("MALLEABLE_MIN_NODES", "1"), ("MALLEABLE_MAX_NODES", "4")]);
        let err = check_submission(&e, (Some(2), Some(2)), None, true).unwrap_err();
        assert!(err.starts_with("--contiguous cannot be combined with --min-nodes-invasive"), "{err}");
    }

    #[test]
    fn rigid_jobs_pass_untouched() {
        assert_eq!(check_submission(&[], (Some(3), Some(3)), Some(("batch".into(), 8)), false), Ok(None));
        let power_only = env(&[("MALLEABLE_MIN_POWER", "170")]);
        assert_eq!(check_submission(&power_only, (None, None), None, false), Ok(None));
    }

    #[test]
    fn an_elastic_job_without_nodes_starts_on_its_lowest_valid_count() {
        let e =
            env(&[("MALLEABLE_MIN_NODES", "3"), ("MALLEABLE_MAX_NODES", "8"), ("MALLEABLE_NODE_CONSTRAINTS", "even")]);
        let (spec, start) = check_submission(&e, (None, None), Some(("batch".into(), 8)), false).unwrap().unwrap();
        assert_eq!((spec, start), (MalleableSpec { min: 3, max: 8, constraint: NodeConstraint::Even }, Some(4)));
        assert_eq!(check_submission(&e, (Some(6), Some(6)), None, false).unwrap().unwrap().1, None);
    }

    #[test]
    fn what_only_the_controller_knows_is_checked_too() {
        let e = env(&[("MALLEABLE_MIN_NODES", "2"), ("MALLEABLE_MAX_NODES", "9")]);
        let err = check_submission(&e, (Some(4), Some(4)), Some(("batch".into(), 8)), false).unwrap_err();
        assert_eq!(err, "--max-nodes-invasive=9 is above the 8 nodes of partition batch: allowed up to 8");
        let err = check_submission(&e, (Some(1), Some(1)), None, false).unwrap_err();
        assert!(err.starts_with("--nodes=1 is outside --min-nodes-invasive=2 .. --max-nodes-invasive=9"), "{err}");
        let err = check_submission(&e, (Some(2), Some(4)), None, false).unwrap_err();
        assert!(err.starts_with("--nodes=2-4 is a range"), "{err}");
        // A hand-made environment gets the same checks as sbatch's options.
        let bad = env(&[("MALLEABLE_MIN_NODES", "0"), ("MALLEABLE_MAX_NODES", "4")]);
        let err = check_submission(&bad, (None, None), None, false).unwrap_err();
        assert!(err.starts_with("MALLEABLE_MIN_NODES=0 in the job's environment: --min-nodes-invasive=0 is not valid"));
        let lonely = env(&[("MALLEABLE_MAX_NODES", "4")]);
        assert!(check_submission(&lonely, (None, None), None, false)
            .unwrap_err()
            .contains("given without --min-nodes-invasive"));
    }

    #[test]
    fn a_job_shares_cores_only_where_a_core_can_take_two_jobs_and_never_exclusive() {
        let part = |max_share: u16| Some(("batch".to_string(), max_share));
        assert_eq!(check_core_sharing(false, true, part(1)), Ok(false), "not asked: nothing to check");
        assert_eq!(check_core_sharing(true, false, part(2)), Ok(true));
        assert_eq!(check_core_sharing(true, false, part(SHARED_FORCE | 4)), Ok(true));
        assert_eq!(check_core_sharing(true, false, None), Ok(true), "no partition found: slurmctld refuses it itself");
        let err = check_core_sharing(true, true, part(2)).unwrap_err();
        assert!(err.starts_with("--malleable-cores cannot be combined with --exclusive"), "{err}");
        for (max_share, setting) in [(0, "EXCLUSIVE"), (1, "NO"), (SHARED_FORCE | 1, "FORCE:1")] {
            let err = check_core_sharing(true, false, part(max_share)).unwrap_err();
            assert!(
                err.starts_with(&format!(
                    "--malleable-cores needs a partition whose cores two jobs may share, and partition batch has \
                     OverSubscribe={setting}"
                )),
                "{err}"
            );
        }
    }
}
