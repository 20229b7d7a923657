//! The host's Slurm (Debian bookworm's 22.05.8): its packages installed
//! when missing, and the matching source tree, fetched through a private
//! apt configuration and configured once into `.cache/slurm-src`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::apt::{ensure, installed_version, PrivateApt};
use crate::cmd::run;
use crate::release::{Origin, SlurmRelease, HOST_RELEASE, RELEASES};
use crate::{cache_dir, Result};

/// The Slurm we build against on the host: exactly what Debian bookworm
/// ships (the first row of the release table).
pub const SLURM_DEB_VERSION: &str = match RELEASES[0].origin {
    Origin::Debian { deb_version } => deb_version,
    Origin::SchedMd { .. } => panic!("the host's release is Debian's"),
};
pub const SLURM_SRC_NAME: &str = "slurm-wlm-22.05.8";

const PACKAGES: &[&str] = &[
    "slurmctld",
    "slurmd",
    "slurm-client",
    "libslurm-dev",
    "munge",
    "libclang-dev",
    "dpkg-dev",
    // CBC, the solver behind the power-aware strategy's integer program.
    "coinor-libcbc-dev",
    // The MPIs the malleable MPI example is built and tested with: Open MPI
    // (with PMIx, srun --mpi=pmix) and MPICH (srun --mpi=pmi2).
    "openmpi-bin",
    "libopenmpi-dev",
    "mpich",
    "libmpich-dev",
    // mpi4py (built with Open MPI), for the Python example.
    "python3-mpi4py",
];

/// Install whatever of Slurm, munge and the build tools is missing.
pub fn ensure_packages() -> Result<()> {
    ensure(PACKAGES)?;
    match installed_version("slurmctld") {
        Some(v) if v == SLURM_DEB_VERSION => Ok(()),
        Some(v) => Err(format!("slurmctld {v} is installed; these plugins are built for {SLURM_DEB_VERSION}")),
        None => Err("slurmctld is not installed".into()),
    }
}

pub fn source_cache(root: &Path) -> PathBuf {
    cache_dir(root).join("slurm-src")
}

/// The configured source tree of the installed Slurm, fetched and configured
/// on first use (about 20 s), then cached under .cache/slurm-src. The
/// source comes through a private apt configuration (deb-src of bookworm
/// and its security suite, lists under .cache/slurm-src/apt-bookworm): the
/// host's /etc/apt is not touched.
pub fn ensure_source_tree(root: &Path) -> Result<PathBuf> {
    let cache = source_cache(root);
    let tree = cache.join(SLURM_SRC_NAME);
    if tree.join("config.h").is_file() {
        return Ok(tree);
    }
    let t = Instant::now();
    std::fs::create_dir_all(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let release = SlurmRelease::find(HOST_RELEASE)?;
    let apt = PrivateApt::deb_src(&cache.join(format!("apt-{}", release.suite)), release.suite)?;
    apt.update()?;
    if !tree.is_dir() {
        eprintln!("provision: fetching the source of slurm-wlm {SLURM_DEB_VERSION}");
        run(apt.command("apt-get").current_dir(&cache).args([
            "source",
            "-qq",
            &format!("slurm-wlm={SLURM_DEB_VERSION}"),
        ]))?;
    }
    eprintln!("provision: configuring {} (once)", tree.display());
    let log = cache.join("configure.log");
    let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    run(Command::new("./configure")
        .current_dir(&tree)
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file))
    .map_err(|e| format!("{e} (see {})", log.display()))?;
    eprintln!("provision: source tree ready in {:.1?}", t.elapsed());
    Ok(tree)
}

/// The host's configured source tree, as [`ensure_source_tree`] makes it.
pub fn source_tree(root: &Path) -> PathBuf {
    source_cache(root).join(SLURM_SRC_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_release_is_the_tables_first_row() {
        let r = SlurmRelease::find(HOST_RELEASE).unwrap();
        assert_eq!((r.upstream(), crate::debian_source::src_name(r)), ("22.05.8", SLURM_SRC_NAME.to_string()));
        assert!(SLURM_DEB_VERSION.starts_with("22.05.8-"));
    }
}
