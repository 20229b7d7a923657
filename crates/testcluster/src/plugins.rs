//! This workspace's plugins as a cluster loads them: which are built, the
//! names Slurm looks for, where `cargo xtask build` stages them (per Slurm
//! release too), and the settings a cluster needs to run sched/malleable.

use std::path::{Path, PathBuf};

use crate::spec::ClusterSpec;

/// Our plugins: cargo package, the library cargo builds, and the file name
/// Slurm loads (sched/malleable -> sched_malleable.so).
pub const PLUGINS: &[(&str, &str, &str)] = &[
    ("sched-malleable", "libsched_malleable.so", "sched_malleable.so"),
    ("spank-malleable", "libspank_malleable.so", "spank_malleable.so"),
    ("job-submit-malleable", "libjob_submit_malleable.so", "job_submit_malleable.so"),
    ("select-natural", "libselect_natural.so", "select_natural.so"),
    ("task-drom", "libtask_drom.so", "task_drom.so"),
];

/// Where the staged plugins go: the PluginDir our clusters search first.
pub fn plugin_dir(root: &Path) -> PathBuf {
    root.join("target/plugins")
}

/// Our commands for a job's batch script: cargo package and binary.
pub const TOOLS: &[(&str, &str)] = &[("mall-run", "mall-run"), ("mall-example", "mall-example")];

/// Where the staged commands go (and the runtime's C library and header,
/// and the C example built against them).
pub fn tool_dir(root: &Path) -> PathBuf {
    root.join("target/plugins/bin")
}

/// Names the staged plugins to use instead of the host's (a release's
/// target/plugins/VERSION), for what runs inside that release's build
/// container: the tests, the demo. Their commands are in its `bin/`.
pub const PLUGIN_DIR_VAR: &str = "MALLEABLE_PLUGIN_DIR";

/// The plugin directory [`PLUGIN_DIR_VAR`] names, if set.
pub fn plugin_dir_override() -> Option<PathBuf> {
    std::env::var_os(PLUGIN_DIR_VAR).map(PathBuf::from)
}

/// Where `cargo xtask build --slurm VERSION` stages the plugins built for
/// that release: target/plugins/VERSION (the host's 22.05 build keeps
/// [`plugin_dir`] as well and copies itself here).
pub fn plugin_dir_for(root: &Path, version: &str) -> PathBuf {
    plugin_dir(root).join(version)
}

/// Where the commands built for `version` go: `bin/` in its plugin dir,
/// as [`tool_dir`] is in [`plugin_dir`] (the compose site image takes
/// them from there).
pub fn tool_dir_for(root: &Path, version: &str) -> PathBuf {
    plugin_dir_for(root, version).join("bin")
}

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
