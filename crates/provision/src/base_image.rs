//! The base image every host of a release runs, made here from Debian's
//! packages (no registry is reached): a root of the release's suite (image.rs),
//! with Slurm, MariaDB, munge and the MPIs in it, imported as
//! `malleable-site-base:HASH`. Slurm is Debian's own, or the .debs built from
//! SchedMD's source (`schedmd`). The tag is a hash of its inputs, so a second
//! call with nothing changed builds nothing.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::apt::suite_sources;
use crate::cmd::logged;
use crate::image::{chroot_install, hex, image_exists, image_work, import_root, minbase_root, USERS};
use crate::release::{Origin, SlurmRelease};
use crate::Result;

/// Debian's packages in every base image: munge, MariaDB, the tools a
/// site's hosts have (ps, ip, ping), and the MPIs a site's users run
/// (Open MPI, MPICH, mpi4py); beside them each release's Slurm, CBC's and
/// PMIx's runtimes (see [`base_packages`]).
const COMMON_BASE_PACKAGES: &[&str] = &[
    "munge",
    "mariadb-server",
    "procps",
    "iproute2",
    "iputils-ping",
    "less",
    // A site's REST clients (slurmrestd, where it runs).
    "curl",
    "openmpi-bin",
    "mpich",
    "python3-mpi4py",
    // Debian's mpi/pmix opens libpmix.so, the name only the -dev package
    // installs ("pmi/pmix: can not load PMIx library" without it).
    "libpmix-dev",
];

/// Debian's own Slurm: every daemon of a site and the clients.
const DEBIAN_SLURM: &[&str] = &["slurmctld", "slurmd", "slurmdbd", "slurm-client"];

/// The base image's packages from the suite for `release`: the common
/// ones, Debian's Slurm when the release is Debian's, CBC's runtime
/// (sched/malleable links it) and PMIx's (Slurm's mpi/pmix plugin loads
/// it, else every daemon logs an error).
pub fn base_packages(release: &SlurmRelease) -> Vec<&'static str> {
    let mut p = COMMON_BASE_PACKAGES.to_vec();
    if let Origin::Debian { .. } = release.origin {
        p.extend(DEBIAN_SLURM);
    }
    p.extend([release.cbc_runtime, release.pmix_runtime]);
    p
}

/// Bump to rebuild every base image (a change of how it is made).
const BASE_RECIPE: &str = "base-2";

/// Add the test users (and their groups) to the root at `root`.
fn add_users(root: &Path, log: &Path) -> Result<()> {
    for (user, uid, _) in USERS {
        let id = uid.to_string();
        logged(log, Command::new("chroot").arg(root).args(["groupadd", "-g", &id, user]))?;
        logged(
            log,
            Command::new("chroot").arg(root).args([
                "useradd",
                "-u",
                &id,
                "-g",
                user,
                "-d",
                &format!("/home/{user}"),
                "-s",
                "/bin/bash",
                user,
            ]),
        )?;
    }
    Ok(())
}

/// The base image's tag for `release` (its Slurm, MariaDB, munge, the
/// MPIs), building it first when missing (about a minute; a release built
/// from SchedMD's source has its .debs built first, see `schedmd`).
pub fn base_image(root: &Path, release: &SlurmRelease) -> Result<String> {
    crate::apt::ensure(&["debootstrap"])?;
    let suite = release.suite;
    let sources = suite_sources(suite)?;
    let packages = base_packages(release);
    let debs = match release.origin {
        Origin::SchedMd { .. } => Some(crate::schedmd::prepare(root, release)?),
        Origin::Debian { .. } => None,
    };
    let mut h = Sha256::new();
    h.update(BASE_RECIPE);
    h.update(suite);
    for p in &packages {
        h.update(p);
    }
    for (uri, suite) in &sources {
        h.update(format!("{uri} {suite}"));
    }
    for (user, uid, _) in USERS {
        h.update(format!("{user}:{uid}"));
    }
    if let Some(built) = &debs {
        h.update(&built.key);
    }
    let tag = format!("malleable-site-base:{}", hex(h.finalize()));
    if image_exists(&tag) {
        return Ok(tag);
    }
    let work = image_work(root);
    // Sites started at once (cargo xtask test runs two) make it once: the
    // second waits for the first and finds it made.
    let _lock = crate::lock::hold(&work.join(format!(".base-{}.lock", release.version)))?;
    if image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    // Per release: two bases may be made at once without sharing a root.
    let rootfs = work.join(format!("rootfs-{}", release.version));
    let log = work.join(format!("base-image-{}.log", release.version));
    let slurm = match &debs {
        Some(b) => format!("Slurm {} built from source", b.upstream),
        None => format!("Debian's Slurm {}", release.upstream()),
    };
    eprintln!("provision: making the base image {tag} (debootstrap {suite}, then {slurm}, MariaDB, munge)");
    minbase_root(root, suite, &rootfs, &log)?;
    let mut all: Vec<String> = packages.iter().map(|p| p.to_string()).collect();
    if let Some(built) = &debs {
        // SchedMD's packaging makes no service user (Debian's does): the
        // daemons' SlurmUser, as a site adds it.
        logged(&log, Command::new("chroot").arg(&rootfs).args(["useradd", "--system", "-U", "-M", "slurm"]))?;
        let inside = rootfs.join("tmp/slurm-debs");
        std::fs::create_dir_all(&inside).map_err(|e| e.to_string())?;
        for deb in built.site_debs()? {
            let name = deb.file_name().expect("a file").to_string_lossy().into_owned();
            std::fs::copy(&deb, inside.join(&name)).map_err(|e| format!("cannot copy {}: {e}", deb.display()))?;
            all.push(format!("/tmp/slurm-debs/{name}"));
        }
    }
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    chroot_install(&rootfs, &all, &log)?;
    let _ = std::fs::remove_dir_all(rootfs.join("tmp/slurm-debs"));
    add_users(&rootfs, &log)?;
    import_root(&rootfs, &tag)?;
    eprintln!("provision: base image {tag} made in {:.1?}", t.elapsed());
    Ok(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_takes_debians_slurm_only_for_debians_releases() {
        let p = base_packages(SlurmRelease::find("24.11").unwrap());
        assert!(p.contains(&"coinor-libcbc3.1") && p.contains(&"libpmix2t64") && !p.contains(&"coinor-libcbc3"));
        assert!(p.contains(&"slurmctld"));
        let n = base_packages(SlurmRelease::find("26.05").unwrap());
        assert!(n.contains(&"coinor-libcbc3.1") && n.contains(&"munge"));
        assert!(!n.iter().any(|p| DEBIAN_SLURM.contains(p)), "{n:?}");
    }
}
