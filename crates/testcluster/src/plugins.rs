//! This workspace's plugins as a cluster loads them: which are built, the
//! names Slurm looks for, where `cargo xtask build` stages them (per Slurm
//! release too), and the settings a cluster needs to run sched/malleable.

use std::path::Path;

use crate::spec::ClusterSpec;

pub use provision::staged::{
    plugin_dir, plugin_dir_for, plugin_dir_override, tool_dir, tool_dir_for, PLUGINS, PLUGIN_DIR_VAR, TOOLS,
};

/// What sched/malleable needs in SchedulerParameters: slurmctld's periodic
/// pass off, running jobs allowed to grow. Without `defer`, slurmctld starts
/// an srun or salloc job at submit when it heads its queue and fits, as
/// under its own schedulers.
pub const SCHEDULER_PARAMETERS: &str = "sched_interval=-1,permit_job_expansion";

/// With a power corridor in malleable.conf, `defer` too: no start at submit
/// that the power budget has not seen.
pub const POWER_SCHEDULER_PARAMETERS: &str = "sched_interval=-1,defer,permit_job_expansion";

/// `spec` with our plugins (staged in `plugins`): sched/malleable as its
/// scheduler, slurmctld's own scheduling handed over to it, Strategy=easy
/// with a 5 s tick unless a test writes its own malleable.conf; the
/// malleable options in srun, sbatch and salloc (plugstack.conf) and their
/// check at submit (job_submit/malleable); select/cons_tres by cores
/// unless the spec chose another select plugin than the stock linear.
pub fn sched_malleable(spec: ClusterSpec, plugins: &Path) -> ClusterSpec {
    // select/cons_tres: after a job that grew through Slurm's own expand
    // (a merged helper job) is cancelled, select/linear of 22.05 keeps the
    // added nodes busy for minutes; cons_tres frees them at once.
    let select = |spec: ClusterSpec| {
        if spec.get("SelectType").is_some_and(|s| s != "select/linear") {
            spec
        } else {
            spec.set("SelectType", "select/cons_tres").set("SelectTypeParameters", "CR_Core")
        }
    };
    let spec = select(spec).set("SchedulerType", "sched/malleable").set("SchedulerParameters", SCHEDULER_PARAMETERS);
    with_options(spec, plugins, "Strategy=easy\nSchedulerTick=5\n")
}

/// `spec` searching `plugins` first, with the malleable options in srun,
/// sbatch and salloc (plugstack.conf), their check at submit
/// (job_submit/malleable), and `conf` as malleable.conf unless the spec
/// has one.
fn with_options(spec: ClusterSpec, plugins: &Path, conf: &str) -> ClusterSpec {
    let spec = spec
        .plugin_dir(plugins)
        .set("JobSubmitPlugins", "malleable")
        .file("plugstack.conf", &format!("required {}\n", plugins.join("spank_malleable.so").display()));
    if spec.file_contents("malleable.conf").is_some() {
        spec
    } else {
        spec.file("malleable.conf", conf)
    }
}

/// `spec` with select/natural (staged in `plugins`) beside Slurm's own
/// sched/backfill, Iserte et al. 2025's set-up: backfill starts the jobs
/// (every second here), and a job that asks at its sync point is resized
/// by NATURAL (malleable.conf's Strategy=natural unless a test writes its
/// own); the malleable options and their check at submit as under
/// sched/malleable.
pub fn select_natural(spec: ClusterSpec, plugins: &Path) -> ClusterSpec {
    let spec = spec
        .set("SelectType", "select/natural")
        .set("SchedulerType", "sched/backfill")
        .set("SchedulerParameters", "permit_job_expansion,bf_interval=1");
    with_options(spec, plugins, "Strategy=natural\nSchedulerTick=5\n")
}
