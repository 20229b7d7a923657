//! What the runner of Slurm's own suites takes from its caller, and how it
//! says what went wrong: shared by the runner (mod.rs) and its rooms.

use std::path::Path;

/// A runner's error: what went wrong, said.
pub type Result<T> = std::result::Result<T, String>;

/// What the runner takes from its caller (xtask, which sets the host up).
pub struct Host<'a> {
    /// The workspace: the lists in `xtask/slurm-tests`, the results written
    /// under `target/slurm-tests`.
    pub root: &'a Path,
    /// The installed release's configured source tree (the tests compile
    /// against its headers).
    pub source: &'a Path,
    /// Where configure wrote config.h: `source` itself for Debian's trees,
    /// a directory inside it for SchedMD's packaging.
    pub build: &'a Path,
    /// The `testsuite/` directory whose expect and python suites run: the
    /// source tree's own, or (SchedMD's release sources carry none since
    /// 25.11) one from SchedMD's repository at the release's branch point.
    pub suites: &'a Path,
    /// Our plugins, staged for the installed release.
    pub staged: &'a Path,
    /// Installs whichever of these Debian packages is missing.
    pub ensure: &'a dyn Fn(&[&str]) -> Result<()>,
}
