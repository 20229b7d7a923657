//! The images every host of a release runs, made here from Debian's
//! packages (no registry is reached): a root of the release's suite by
//! debootstrap (kept as a tarball, so the next root is an untar), with
//! Slurm, MariaDB, munge and the MPIs in it, imported as
//! `malleable-site-base:HASH`. Slurm is Debian's own, or the .debs built
//! from SchedMD's source (`schedmd`). Each tag is a hash of its inputs, so
//! a second call with nothing changed builds nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::apt::suite_sources;
use crate::cmd::logged;
use crate::release::{Origin, SlurmRelease};
use crate::{cache_dir, Result};

/// The test users on every host: name, uid (also their group's gid), account.
pub const USERS: &[(&str, u32, &str)] = &[("alice", 2001, "physics"), ("bob", 2002, "chemistry")];

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

/// Scratch space for making images and roots: `target/compose/.image`
/// (the compose site's image is made there too).
pub fn image_work(root: &Path) -> PathBuf {
    root.join("target/compose/.image")
}

/// The first 6 bytes of a digest in hex: an image tag's.
pub fn hex(d: impl AsRef<[u8]>) -> String {
    d.as_ref().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

pub fn image_exists(tag: &str) -> bool {
    Command::new("docker")
        .args(["image", "inspect", tag])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `apt-get update` and install `packages` in the root at `root` (names,
/// or paths of .debs inside it), no service started meanwhile (each host
/// starts its own), lists and downloaded packages removed after.
pub(crate) fn chroot_install(root: &Path, packages: &[&str], log: &Path) -> Result<()> {
    let policy = root.join("usr/sbin/policy-rc.d");
    std::fs::write(&policy, "#!/bin/sh\nexit 101\n").map_err(|e| e.to_string())?;
    logged(log, Command::new("chmod").arg("755").arg(&policy))?;
    logged(log, Command::new("chroot").arg(root).args(["apt-get", "update", "-qq"]))?;
    logged(
        log,
        Command::new("chroot")
            .arg(root)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["apt-get", "install", "-y", "-qq", "--no-install-recommends"])
            .args(packages),
    )?;
    logged(log, Command::new("chroot").arg(root).args(["apt-get", "clean"]))?;
    for gone in ["var/lib/apt/lists", "usr/sbin/policy-rc.d"] {
        let p = root.join(gone);
        let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
    }
    Ok(())
}

/// `docker import` of the root at `root` as `tag`; the root is removed after.
pub(crate) fn import_root(root: &Path, tag: &str) -> Result<()> {
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(root)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    let stdout = tar.stdout.take().expect("piped");
    let imported = Command::new("docker")
        .args(["import", "--change", "ENV LANG=C.UTF-8", "-", tag])
        .stdin(stdout)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run docker import: {e}"))?;
    let tarred = tar.wait().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(root);
    if !imported.success() || !tarred.success() {
        return Err(format!("docker import of {} failed (tar: {tarred}, docker: {imported})", root.display()));
    }
    Ok(())
}

/// `docker export` of `image` unpacked at `root` (made empty first).
pub(crate) fn export_into(image: &str, root: &Path, log: &Path) -> Result<()> {
    fresh_dir(root)?;
    let container = format!("malleable-export-{}", std::process::id());
    logged(log, Command::new("docker").args(["create", "--name", &container, image, "true"]))?;
    let script = format!("docker export {container} | tar -x -C '{}'", root.display());
    let exported = logged(log, Command::new("bash").args(["-o", "pipefail", "-c", &script]));
    let _ = Command::new("docker").args(["rm", "-f", &container]).output();
    exported?;
    // The image has no resolver configuration of its own (docker gives a
    // running container one); apt in the chroot needs the host's.
    std::fs::copy("/etc/resolv.conf", root.join("etc/resolv.conf"))
        .map_err(|e| format!("cannot copy /etc/resolv.conf into {}: {e}", root.display()))?;
    Ok(())
}

/// An empty directory at `dir` (a leftover of a failed build removed).
pub(crate) fn fresh_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// A fresh minimal root of `suite` at `dest`, with the host's mirrors for
/// that suite as its apt sources: debootstrap's the first time, kept as
/// `.cache/debootstrap/SUITE-HASH.tar` (the hash of the mirrors), then
/// untarred (a second root costs seconds, not debootstrap's half minute).
pub(crate) fn minbase_root(root: &Path, suite: &str, dest: &Path, log: &Path) -> Result<()> {
    let sources = suite_sources(suite)?;
    let mut h = Sha256::new();
    for (uri, s) in &sources {
        h.update(format!("{uri} {s}\n"));
    }
    let cache = cache_dir(root).join("debootstrap");
    let tarball = cache.join(format!("{suite}-{}.tar", hex(h.finalize())));
    fresh_dir(dest)?;
    if !tarball.is_file() {
        let mirror = &sources.iter().find(|(_, s)| s == suite).expect("checked in suite_sources").0;
        logged(log, Command::new("debootstrap").args(["--variant=minbase", suite]).arg(dest).arg(mirror))?;
        let list: String = sources.iter().map(|(uri, suite)| format!("deb {uri} {suite} main\n")).collect();
        std::fs::write(dest.join("etc/apt/sources.list"), list).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
        let partial = tarball.with_extension("tar.partial");
        logged(log, Command::new("tar").arg("-C").arg(dest).arg("-cf").arg(&partial).arg("."))?;
        std::fs::rename(&partial, &tarball).map_err(|e| e.to_string())?;
    } else {
        logged(log, Command::new("tar").arg("-C").arg(dest).arg("-xf").arg(&tarball))?;
    }
    std::fs::copy("/etc/resolv.conf", dest.join("etc/resolv.conf"))
        .map_err(|e| format!("cannot copy /etc/resolv.conf into {}: {e}", dest.display()))?;
    Ok(())
}

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
    if crate::image::image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    let work = image_work(root);
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

/// Remove container `name` if there is one (a leftover of a run cut short).
pub(crate) fn docker_rm(name: &str) {
    let _ = Command::new("docker").args(["rm", "-f", name]).stdout(Stdio::null()).stderr(Stdio::null()).status();
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
