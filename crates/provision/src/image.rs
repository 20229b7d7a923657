//! What the images are made with: a root of a release's suite by
//! debootstrap (kept as a tarball, so the next root is an untar), packages
//! installed in it, imported into Docker, and the names and hashes that tag
//! them (base_image.rs and build_image.rs make the images themselves).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::apt::suite_sources;
use crate::cmd::logged;
use crate::{cache_dir, Result};

/// The test users on every host: name, uid (also their group's gid), account.
pub const USERS: &[(&str, u32, &str)] = &[("alice", 2001, "physics"), ("bob", 2002, "chemistry")];

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

/// Remove container `name` if there is one (a leftover of a run cut short).
pub(crate) fn docker_rm(name: &str) {
    let _ = Command::new("docker").args(["rm", "-f", name]).stdout(Stdio::null()).stderr(Stdio::null()).status();
}
