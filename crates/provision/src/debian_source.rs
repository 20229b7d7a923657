//! The configured source tree of a Debian release other than the host's
//! (`cargo xtask slurm-src --slurm 24.11`): Debian's orig and debian
//! tarballs fetched and checked against the Sources index, Debian's patches
//! applied, `./configure` run in the release's build image.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::apt::PrivateApt;
use crate::build_image::build_image;
use crate::cmd::{output, run, sha256_of};
use crate::container::Container;
use crate::release::{Origin, SlurmRelease};
use crate::{cache_dir, Result};

/// `.cache/slurm-src-24.11`: the tarballs, configure.log and the tree.
pub fn release_cache(root: &Path, r: &SlurmRelease) -> PathBuf {
    cache_dir(root).join(format!("slurm-src-{}", r.version))
}

/// The source tree's directory name, as `apt-get source` names it: "slurm-wlm-24.11.5".
pub fn src_name(r: &SlurmRelease) -> String {
    format!("slurm-wlm-{}", r.upstream())
}

/// The tree `SLURM_SRC_DIR` names for `r`: `.cache/slurm-src-24.11/slurm-wlm-24.11.5`.
pub fn release_tree(root: &Path, r: &SlurmRelease) -> PathBuf {
    release_cache(root, r).join(src_name(r))
}

/// The exact Debian version of `r`'s slurm-wlm.
fn deb_version(r: &SlurmRelease) -> Result<&'static str> {
    match r.origin {
        Origin::Debian { deb_version } => Ok(deb_version),
        Origin::SchedMd { .. } => {
            Err(format!("Slurm {} is not Debian's: it is built from SchedMD's source", r.version))
        }
    }
}

/// Left in a tree while this code makes it; a tree without config.h and
/// without it was made by someone else and is not touched.
const INCOMPLETE: &str = ".xtask-incomplete";

/// One file of a source package as a Sources index lists it.
#[derive(Debug, PartialEq)]
struct SourceFile {
    name: String,
    sha256: String,
    /// The pool directories of every index that lists this version.
    directories: Vec<String>,
}

/// The files of `version` from `apt-cache showsrc` output (one stanza per
/// index that has the package): each with its SHA-256 and every pool
/// directory it may be under (a security upload lists the same files in
/// pool/main and pool/updates/main, and each mirror has only some).
fn files_of(showsrc: &str, version: &str) -> Vec<SourceFile> {
    let mut files: Vec<SourceFile> = Vec::new();
    for stanza in showsrc.split("\n\n") {
        if !stanza.lines().any(|l| l.strip_prefix("Version:").is_some_and(|v| v.trim() == version)) {
            continue;
        }
        let dir = stanza.lines().find_map(|l| l.strip_prefix("Directory:")).map(|d| d.trim().to_string());
        let sums = stanza.lines().skip_while(|l| !l.starts_with("Checksums-Sha256:")).skip(1);
        for line in sums.take_while(|l| l.starts_with(' ')) {
            let w: Vec<&str> = line.split_whitespace().collect();
            let [sha, _size, name] = w[..] else { continue };
            let f = match files.iter().position(|f| f.name == name) {
                Some(i) => &mut files[i],
                None => {
                    files.push(SourceFile { name: name.into(), sha256: sha.into(), directories: Vec::new() });
                    files.last_mut().expect("pushed")
                }
            };
            if let Some(d) = &dir {
                if !f.directories.contains(d) {
                    f.directories.push(d.clone());
                }
            }
        }
    }
    files
}

/// Fetch the orig and debian tarballs of `r` into `cache`, each checked
/// against its SHA-256 in the Sources index (apt-helper checks it and
/// refuses a mismatch); tried at every mirror and pool directory that may
/// have it. The .dsc is not needed: the tree is unpacked by hand.
fn fetch_tarballs(r: &SlurmRelease, cache: &Path) -> Result<(PathBuf, PathBuf)> {
    let deb_version = deb_version(r)?;
    let apt = PrivateApt::deb_src(&cache.join(format!("apt-{}", r.suite)), r.suite)?;
    apt.update()?;
    let showsrc = output(apt.command("apt-cache").args(["showsrc", "slurm-wlm"]))?;
    let files = files_of(&showsrc, deb_version);
    let mut mirrors: Vec<String> = Vec::new();
    for (uri, _) in crate::apt::suite_sources(r.suite)? {
        if !mirrors.contains(&uri) {
            mirrors.push(uri);
        }
    }
    let fetch = |kind: &str| -> Result<PathBuf> {
        let f = files.iter().find(|f| f.name.contains(kind)).ok_or_else(|| {
            format!(
                "slurm-wlm {}: no {kind} file in the Sources indexes of {} (see `apt-cache showsrc`)",
                deb_version, r.suite
            )
        })?;
        let dest = cache.join(&f.name);
        if dest.is_file() && sha256_of(&dest)? == f.sha256 {
            return Ok(dest);
        }
        let mut tried = Vec::new();
        for uri in &mirrors {
            for dir in &f.directories {
                let url = format!("{}/{dir}/{}", uri.trim_end_matches('/'), f.name);
                let got = Command::new("/usr/lib/apt/apt-helper")
                    .args(["download-file", &url])
                    .arg(&dest)
                    .arg(format!("SHA256:{}", f.sha256))
                    .output()
                    .map_err(|e| format!("cannot run apt-helper: {e}"))?;
                if got.status.success() {
                    eprintln!("provision: fetched {} from {url} (SHA-256 as in Sources)", f.name);
                    return Ok(dest);
                }
                tried.push(url);
            }
        }
        Err(format!(
            "slurm-wlm {}: {} could not be fetched with its SHA-256; tried {}",
            deb_version,
            f.name,
            tried.join(", ")
        ))
    };
    Ok((fetch(".orig.tar.")?, fetch(".debian.tar.")?))
}

/// The patch names of a quilt series file (comments and blank lines skipped).
fn series(text: &str) -> Vec<&str> {
    text.lines().filter_map(|l| l.split_whitespace().next()).filter(|p| !p.starts_with('#')).collect()
}

/// Unpack the orig tarball as `tree` (it unpacks as one directory of
/// upstream's naming, slurm-slurm-24-11-5-1/), put Debian's packaging
/// beside upstream's own debian/ as debian-debian/, apply its patches.
fn unpack(orig: &Path, debian: &Path, tree: &Path) -> Result<()> {
    let cache = tree.parent().expect("a tree is in its cache");
    let scratch = cache.join(".unpack");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join("debian-pkg"))
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    run(Command::new("tar").arg("-xzf").arg(orig).arg("-C").arg(&scratch))?;
    run(Command::new("tar").arg("-xJf").arg(debian).arg("-C").arg(scratch.join("debian-pkg")))?;
    let top: Vec<PathBuf> = std::fs::read_dir(&scratch)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n != "debian-pkg"))
        .collect();
    let [unpacked] = &top[..] else {
        return Err(format!("{}: expected one top directory, found {top:?}", orig.display()));
    };
    std::fs::write(unpacked.join(INCOMPLETE), "").map_err(|e| e.to_string())?;
    std::fs::rename(unpacked, tree)
        .map_err(|e| format!("cannot move {} to {}: {e}", unpacked.display(), tree.display()))?;
    std::fs::rename(scratch.join("debian-pkg/debian"), tree.join("debian-debian")).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&scratch);
    let patches = tree.join("debian-debian/patches");
    let list = std::fs::read_to_string(patches.join("series")).unwrap_or_default();
    let names = series(&list);
    for p in &names {
        run(Command::new("patch").args(["-p1", "-s", "-i"]).arg(patches.join(p)).current_dir(tree))
            .map_err(|e| format!("Debian's patch {p} does not apply to {}: {e}", tree.display()))?;
    }
    eprintln!("provision: {} unpacked, {} Debian patches applied", tree.display(), names.len());
    Ok(())
}

/// The configured source tree of `r` (not the host's release), made on
/// first use: a tree with config.h is ready as it is, whoever made it.
pub fn ensure_release_tree(root: &Path, r: &SlurmRelease) -> Result<PathBuf> {
    let tree = release_tree(root, r);
    if tree.join("config.h").is_file() {
        return Ok(tree);
    }
    if tree.exists() && !tree.join(INCOMPLETE).exists() {
        return Err(format!(
            "{} exists without config.h and was not made by cargo provision: configure it or remove it",
            tree.display()
        ));
    }
    let t = Instant::now();
    let cache = release_cache(root, r);
    std::fs::create_dir_all(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let _ = std::fs::remove_dir_all(&tree);
    eprintln!("provision: fetching the source of slurm-wlm {} ({})", deb_version(r)?, r.suite);
    let (orig, debian) = fetch_tarballs(r, &cache)?;
    unpack(&orig, &debian, &tree)?;
    // configure in the release's own build image: config.h then matches its
    // libraries (and libmunge-dev there is what 24.11's configure wants).
    let image = build_image(root, r)?;
    let log = cache.join("configure.log");
    eprintln!("provision: configuring {} in {image} (log: {})", tree.display(), log.display());
    let f = std::fs::File::create(&log).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let box_ = Container::claim(&format!("malleable-configure-{}", r.version))?;
    let mut cmd = box_.command(&image, root, &[&cache], &tree, &[]);
    cmd.arg("./configure").stdout(f.try_clone().map_err(|e| e.to_string())?).stderr(f);
    run(&mut cmd).map_err(|e| format!("./configure of {} failed: {e} (see {})", tree.display(), log.display()))?;
    std::fs::remove_file(tree.join(INCOMPLETE)).map_err(|e| e.to_string())?;
    eprintln!("provision: source tree of Slurm {} ready in {:.1?}", r.upstream(), t.elapsed());
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_security_uploads_files_are_looked_for_in_both_pools() {
        let showsrc = "Package: slurm-wlm\nVersion: 24.11.5-4+deb13u1\nChecksums-Sha256:\n \
                       aa 5075 s.dsc\n bb 99 s.orig.tar.gz\nDirectory: pool/main/s/slurm-wlm\n\n\
                       Package: slurm-wlm\nVersion: 24.11.5-4+deb13u1\nChecksums-Sha256:\n \
                       bb 99 s.orig.tar.gz\n cc 15 s.debian.tar.xz\nPackage-List:\n x\n\
                       Directory: pool/updates/main/s/slurm-wlm\n\n\
                       Package: slurm-wlm\nVersion: 24.11.4-1\nChecksums-Sha256:\n dd 1 old.orig.tar.gz\n\
                       Directory: pool/main/s/slurm-wlm\n";
        let f = files_of(showsrc, "24.11.5-4+deb13u1");
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["s.dsc", "s.orig.tar.gz", "s.debian.tar.xz"]);
        assert_eq!(f[1].directories, ["pool/main/s/slurm-wlm", "pool/updates/main/s/slurm-wlm"]);
        assert_eq!((f[2].sha256.as_str(), f[2].directories.len()), ("cc", 1));
        assert_eq!(series("# c\na.patch\n\nb.patch -p1\n"), ["a.patch", "b.patch"]);
    }
}
