//! Where our plugins and commands are staged for Slurm to load and jobs
//! to run: which are built, the names Slurm looks for, the folders per
//! release, and the copy that never disturbs a daemon using the old file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Result;

/// Our plugins: cargo package, the library cargo builds, and the file name
/// Slurm loads (sched/malleable -> sched_malleable.so).
pub const PLUGINS: &[(&str, &str, &str)] = &[
    ("sched-malleable", "libsched_malleable.so", "sched_malleable.so"),
    ("spank-malleable", "libspank_malleable.so", "spank_malleable.so"),
    ("job-submit-malleable", "libjob_submit_malleable.so", "job_submit_malleable.so"),
    ("select-natural", "libselect_natural.so", "select_natural.so"),
    ("task-drom", "libtask_drom.so", "task_drom.so"),
];

/// Our commands for a job's batch script: cargo package and binary.
pub const TOOLS: &[(&str, &str)] = &[("mall-run", "mall-run"), ("mall-example", "mall-example")];

/// Where the staged plugins go: the PluginDir our clusters search first.
pub fn plugin_dir(root: &Path) -> PathBuf {
    root.join("target/plugins")
}

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

/// Copy to a temporary name and rename, so that a running slurmctld that
/// has the old file mapped, or a job running the old command, is not
/// disturbed. The temporary name is this process's own: two commands that
/// stage at once (CI's fault campaign beside its evaluations) each rename
/// their own copy.
pub fn stage(from: &Path, to: &Path) -> Result<()> {
    let tmp = temporary(to);
    std::fs::copy(from, &tmp).map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), tmp.display()))?;
    std::fs::rename(&tmp, to).map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), to.display()))
}

/// A name beside `to` for one copy of it before the rename, of this
/// process and this call (threads of one process stage at once too).
pub fn temporary(to: &Path) -> PathBuf {
    static COPIES: AtomicU64 = AtomicU64::new(0);
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let copy = COPIES.fetch_add(1, Ordering::Relaxed);
    to.with_file_name(format!(".{name}.{}-{copy}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI's fault campaign staged the plugins while its evaluations did:
    /// one rename found the other's copy gone ("No such file or
    /// directory"). Many at once, each finds its own.
    #[test]
    fn stagings_of_one_file_at_once_each_land_whole() {
        let dir = std::env::temp_dir().join(format!("malleable-stage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let from = dir.join("from.so");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        std::fs::write(&from, &bytes).unwrap();
        let to = dir.join("to.so");
        let results: Vec<Result<()>> = std::thread::scope(|s| {
            let runs: Vec<_> =
                (0..8).map(|_| s.spawn(|| (0..50).map(|_| stage(&from, &to)).collect::<Result<Vec<()>>>())).collect();
            runs.into_iter().map(|r| r.join().unwrap().map(|_| ())).collect()
        });
        let left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        let whole = std::fs::read(&to).unwrap() == bytes;
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        assert!(whole, "the staged file is not the copied one");
        assert!(left.is_empty(), "copies left behind: {left:?}");
    }
}
