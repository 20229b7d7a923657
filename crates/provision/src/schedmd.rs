//! A Slurm release built from SchedMD's release source, as a site builds
//! it: the tarball's (or tree's) own `debian/` packaging run by
//! `dpkg-buildpackage -b` in a builder image of the release's Debian suite
//! with the packaging's Build-Depends, into .debs that the release's images
//! install; the tree it was built in, with its generated headers, is the
//! configured source tree our bindings are built against. All of it is kept
//! under `.cache/slurm-VERSION/KEY`, KEY a hash of the source and how it was
//! built, so only a machine that has not built that source pays for it.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::cmd::{logged, output, run};
use crate::image::{chroot_install, docker_rm, fresh_dir, hex, image_exists, image_work, import_root, minbase_root};
use crate::release::{series_of, Origin, SlurmRelease};
use crate::{cache_dir, Result};

/// Bump to build every source again (a change of how it is built).
const RECIPE: &str = "schedmd-2";

/// Where dh builds (`dh --builddirectory`, SchedMD's debian/rules): the
/// generated config.h and slurm/slurm_version.h are there.
pub const BUILD_SUBDIR: &str = "obj-x86_64-linux-gnu";

/// The packages of SchedMD's packaging a site's hosts install: every
/// daemon (slurmrestd too), the clients, and the public headers (for
/// building plugins; the build image is the base plus compilers).
pub const SITE_PACKAGES: &[&str] = &[
    "slurm-smd",
    "slurm-smd-client",
    "slurm-smd-slurmctld",
    "slurm-smd-slurmd",
    "slurm-smd-slurmdbd",
    "slurm-smd-slurmrestd",
    "slurm-smd-dev",
];

/// A release's source, as found: where, which release it is, its hash.
#[derive(Debug)]
pub struct Source {
    pub path: PathBuf,
    /// From its META: "26.05.3".
    pub upstream: String,
    /// SHA-256 of the tarball, or of every file of the tree.
    pub sha256: String,
}

/// A source built: its .debs and the tree it was built in.
#[derive(Debug)]
pub struct Built {
    pub upstream: String,
    /// What the base image's tag hashes: the source and how it was built.
    pub key: String,
    pub dir: PathBuf,
}

impl Built {
    /// The configured source tree (SLURM_SRC_DIR).
    pub fn tree(&self) -> PathBuf {
        self.dir.join(format!("slurm-{}", self.upstream))
    }

    /// Where configure's headers are (SLURM_BUILD_DIR).
    pub fn build_dir(&self) -> PathBuf {
        self.tree().join(BUILD_SUBDIR)
    }

    /// The .debs a site's hosts install ([`SITE_PACKAGES`]).
    pub fn site_debs(&self) -> Result<Vec<PathBuf>> {
        SITE_PACKAGES
            .iter()
            .map(|p| {
                let deb = self.dir.join(format!("{p}_{}-1_amd64.deb", self.upstream));
                deb.is_file().then_some(deb.clone()).ok_or_else(|| {
                    format!("{} is missing: the build in {} did not make it", deb.display(), self.dir.display())
                })
            })
            .collect()
    }
}

/// `.cache/slurm-26.05`: each built source, and which source to build.
fn release_cache(root: &Path, r: &SlurmRelease) -> PathBuf {
    cache_dir(root).join(format!("slurm-{}", r.version))
}

/// The file that names the source `--slurm-source` last gave for `r`.
fn choice_file(root: &Path, r: &SlurmRelease) -> PathBuf {
    release_cache(root, r).join("source")
}

/// The release source the workspace carries beside it (`../shared/slurm-src`).
fn shared_tarball(root: &Path, upstream: &str) -> PathBuf {
    root.join("..").join("shared/slurm-src").join(format!("slurm-{upstream}.tar.bz2"))
}

/// `--slurm-source PATH` for `r`: checked (a tarball or tree of a release
/// of r's series), then remembered, so the commands that follow without
/// the option build and run that one.
pub fn choose_source(root: &Path, r: &SlurmRelease, given: &Path) -> Result<Source> {
    if !r.from_source() {
        return Err(format!(
            "--slurm-source: Slurm {} is Debian's own ({}); only 25.11 and 26.05 are built from SchedMD's source",
            r.version,
            r.upstream()
        ));
    }
    let path = fs::canonicalize(given).map_err(|e| format!("--slurm-source {}: {e}", given.display()))?;
    let source = inspect(&path, r).map_err(|e| format!("--slurm-source {}: {e}", given.display()))?;
    let file = choice_file(root, r);
    fs::create_dir_all(release_cache(root, r)).map_err(|e| e.to_string())?;
    fs::write(&file, format!("{}\n", path.display())).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(source)
}

/// The source to build for `r`: the one `--slurm-source` last named, else
/// the release the table names in `../shared/slurm-src`; else an error that
/// says what to download and pass.
pub fn locate(root: &Path, r: &SlurmRelease) -> Result<Source> {
    let Origin::SchedMd { upstream } = r.origin else {
        return Err(format!("Slurm {} is Debian's, not built from SchedMD's source", r.version));
    };
    if let Ok(chosen) = fs::read_to_string(choice_file(root, r)) {
        let path = PathBuf::from(chosen.trim());
        return inspect(&path, r).map_err(|e| {
            format!(
                "{e} (named by --slurm-source earlier, remembered in {}; give --slurm-source again)",
                choice_file(root, r).display()
            )
        });
    }
    let shared = shared_tarball(root, upstream);
    if shared.is_file() {
        return inspect(&fs::canonicalize(&shared).map_err(|e| e.to_string())?, r);
    }
    Err(format!(
        "Slurm {v} is built here from SchedMD's release source, and none was found: {} is missing. Download \
         slurm-{upstream}.tar.bz2 (or any {v}.x) from https://download.schedmd.com/slurm/ and pass it: \
         `cargo xtask build --slurm {v} --slurm-source PATH` (a tarball, or an unpacked tree)",
        shared.display(),
        v = r.version
    ))
}

/// What `path` holds: a release of `r`'s series, its checksum matching a
/// SHA256SUMS beside it when one lists it.
fn inspect(path: &Path, r: &SlurmRelease) -> Result<Source> {
    let meta = if path.is_dir() {
        fs::read_to_string(path.join("META"))
            .map_err(|e| format!("not a Slurm source tree ({}: {e})", path.join("META").display()))?
    } else if path.is_file() {
        output(Command::new("tar").arg("-xOf").arg(path).args(["--wildcards", "--no-anchored", "*/META"]))
            .map_err(|_| "not a Slurm release tarball (no META file in it)".to_string())?
    } else {
        return Err("no such file or directory".into());
    };
    let upstream = meta_version(&meta).ok_or("its META names no Version")?;
    if series_of(&upstream) != Some(r.version) {
        return Err(format!(
            "it holds Slurm {upstream}, not a release of {v} (--slurm {v} takes {v}.x)",
            v = r.version
        ));
    }
    let sha256 = if path.is_dir() { tree_sha256(path)? } else { file_sha256(path)? };
    if let Some(listed) = listed_sha256(path) {
        if listed != sha256 {
            return Err(format!("its SHA-256 is {sha256}, but the SHA256SUMS beside it says {listed}"));
        }
    }
    Ok(Source { path: path.to_path_buf(), upstream, sha256 })
}

/// The version a META file names (a line "Version:", then the release).
fn meta_version(meta: &str) -> Option<String> {
    meta.lines().find_map(|l| l.trim().strip_prefix("Version:")).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// The SHA-256 that a SHA256SUMS file beside `file` lists for it.
fn listed_sha256(file: &Path) -> Option<String> {
    let sums = fs::read_to_string(file.parent()?.join("SHA256SUMS")).ok()?;
    let name = file.file_name()?.to_string_lossy().into_owned();
    sums.lines().find_map(|l| {
        let (sha, listed) = l.split_once(char::is_whitespace)?;
        (listed.trim().trim_start_matches('*') == name).then(|| sha.to_string())
    })
}

fn file_sha256(path: &Path) -> Result<String> {
    let mut f = fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Every regular file's path (from the tree) and contents, in order; a
/// `.git` directory and a build directory left in it are not the source.
fn tree_sha256(tree: &Path) -> Result<String> {
    let mut files = Vec::new();
    let mut dirs = vec![tree.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?.flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == ".git" || name == BUILD_SUBDIR {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(p),
                Ok(t) if t.is_file() => files.push(p),
                _ => {}
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.strip_prefix(tree).unwrap_or(&f).to_string_lossy().as_bytes());
        h.update(fs::read(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The packaging's control file, from the tarball or tree.
fn control_of(source: &Source) -> Result<String> {
    if source.path.is_dir() {
        return fs::read_to_string(source.path.join("debian/control")).map_err(|e| format!("no debian/control: {e}"));
    }
    output(Command::new("tar").arg("-xOf").arg(&source.path).args(["--wildcards", "--no-anchored", "*/debian/control"]))
        .map_err(|e| format!("{}: no debian/control in it: {e}", source.path.display()))
}

/// Bump to rebuild every builder image.
const BUILDER_RECIPE: &str = "builder-1";

/// The builder image of `r`'s suite for this packaging: the suite's
/// minimal root, build-essential, and the Build-Depends of `control`
/// (`apt-get build-dep` of it), tagged by a hash of those.
fn builder_image(root: &Path, r: &SlurmRelease, control: &str) -> Result<String> {
    crate::apt::ensure(&["debootstrap"])?;
    let mut h = Sha256::new();
    h.update(BUILDER_RECIPE);
    h.update(r.suite);
    for (uri, s) in crate::apt::suite_sources(r.suite)? {
        h.update(format!("{uri} {s}\n"));
    }
    h.update(control);
    let tag = format!("malleable-slurm-builder:{}", hex(h.finalize()));
    if image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    let work = image_work(root);
    let rootfs = work.join(format!("builder-rootfs-{}", r.version));
    let log = work.join(format!("builder-image-{}.log", r.version));
    eprintln!("provision: making the builder image {tag} ({} and the Build-Depends of Slurm's packaging)", r.suite);
    minbase_root(root, r.suite, &rootfs, &log)?;
    chroot_install(&rootfs, &["build-essential", "fakeroot", "debhelper"], &log)?;
    let ctl = rootfs.join("tmp/slurm-control/debian");
    fs::create_dir_all(&ctl).map_err(|e| e.to_string())?;
    fs::write(ctl.join("control"), control).map_err(|e| e.to_string())?;
    logged(&log, Command::new("chroot").arg(&rootfs).args(["apt-get", "update", "-qq"]))?;
    logged(
        &log,
        Command::new("chroot").arg(&rootfs).env("DEBIAN_FRONTEND", "noninteractive").args([
            "apt-get",
            "build-dep",
            "-y",
            "-qq",
            "--no-install-recommends",
            "/tmp/slurm-control",
        ]),
    )?;
    logged(&log, Command::new("chroot").arg(&rootfs).args(["apt-get", "clean"]))?;
    let _ = fs::remove_dir_all(rootfs.join("var/lib/apt/lists"));
    let _ = fs::remove_dir_all(rootfs.join("tmp/slurm-control"));
    import_root(&rootfs, &tag)?;
    eprintln!("provision: builder image {tag} made in {:.1?}", t.elapsed());
    Ok(tag)
}

/// What the build runs in the builder, in the tree: the packaging's own
/// binary build, with one change a site makes in its copy of debian/rules,
/// then everything but the .debs and the tree's generated headers removed
/// (the objects are half a gigabyte).
///
/// The change: `--enable-multiple-slurmd`, as Debian's own packaging
/// configures Slurm. Our real-cluster tests run several slurmd on one
/// machine (each in a network namespace of its own); without it, each
/// slurmd's node after the first is left out of slurm.conf's address table
/// ("Duplicated NodeHostName"), and slurmctld cannot reach it, and the
/// daemons' cgroups and spool files are not kept apart by node. A host
/// running one slurmd, as a compose site's, behaves the same either way.
const BUILD_SCRIPT: &str = r#"set -e
sed -i 's/dh_auto_configure -- /dh_auto_configure -- --enable-multiple-slurmd /' debian/rules
grep -q -- '--enable-multiple-slurmd' debian/rules || { echo "debian/rules: no dh_auto_configure line to add --enable-multiple-slurmd to" >&2; exit 1; }
DEB_BUILD_OPTIONS="nocheck noddebs parallel=$(nproc)" dpkg-buildpackage -b -uc -us
find "$1" -type f ! -name config.h ! -path "*/slurm/slurm_version.h" -delete
rm -rf debian/tmp debian/slurm-smd debian/slurm-smd-*/
"#;

/// `r` built from its source (see [`locate`]), when not built already:
/// its .debs and its configured tree. Held under a lock, so two commands
/// that need it at once build it once.
pub fn prepare(root: &Path, r: &SlurmRelease) -> Result<Built> {
    let source = locate(root, r)?;
    let cache = release_cache(root, r);
    let _lock = crate::lock::hold(&cache.join(".lock"))?;
    let control = control_of(&source)?;
    let builder = builder_image(root, r, &control)?;
    let mut h = Sha256::new();
    h.update(RECIPE);
    h.update(&source.sha256);
    h.update(&builder);
    let key = hex(h.finalize());
    let built = Built { upstream: source.upstream.clone(), key: key.clone(), dir: cache.join(&key) };
    if built.dir.join(".complete").is_file() {
        return Ok(built);
    }
    let t = Instant::now();
    fresh_dir(&built.dir)?;
    let tree = built.tree();
    unpack(&source, &built.dir, &tree)?;
    let log = built.dir.join("build.log");
    eprintln!(
        "provision: building Slurm {} from {} into .debs in {builder} (log: {})",
        source.upstream,
        source.path.display(),
        log.display()
    );
    let name = format!("malleable-slurm-build-{}", r.version);
    docker_rm(&name);
    let mount = format!("{0}:{0}", built.dir.display());
    let built_ok = logged(
        &log,
        Command::new("docker")
            .args(["run", "--rm", "--name", &name, "--network", "none", "-v", &mount, "-w"])
            .arg(&tree)
            .args([&builder, "bash", "-c", BUILD_SCRIPT, "build", BUILD_SUBDIR]),
    );
    docker_rm(&name);
    built_ok.map_err(|e| format!("Slurm {}'s packaging did not build: {e}", source.upstream))?;
    built.site_debs()?;
    if !built.build_dir().join("config.h").is_file() {
        return Err(format!("{}: no config.h after the build", built.build_dir().display()));
    }
    fs::write(built.dir.join(".complete"), format!("{}\n", source.path.display())).map_err(|e| e.to_string())?;
    eprintln!("provision: Slurm {} built in {:.1?}", source.upstream, t.elapsed());
    // The release's other builds (another source, or an older recipe) go:
    // the cache holds the one in use.
    for e in fs::read_dir(&cache).map_err(|e| e.to_string())?.flatten() {
        if e.path() != built.dir && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
    Ok(built)
}

/// The source unpacked (or copied) as `tree` under `dir`.
fn unpack(source: &Source, dir: &Path, tree: &Path) -> Result<()> {
    if source.path.is_dir() {
        return run(Command::new("cp").arg("-a").arg(&source.path).arg(tree));
    }
    let scratch = dir.join(".unpack");
    fresh_dir(&scratch)?;
    run(Command::new("tar").arg("-xf").arg(&source.path).arg("-C").arg(&scratch))?;
    let top: Vec<PathBuf> = fs::read_dir(&scratch).map_err(|e| e.to_string())?.flatten().map(|e| e.path()).collect();
    let [unpacked] = &top[..] else {
        return Err(format!("{}: expected one top directory, found {top:?}", source.path.display()));
    };
    fs::rename(unpacked, tree).map_err(|e| format!("cannot move {} to {}: {e}", unpacked.display(), tree.display()))?;
    let _ = fs::remove_dir_all(&scratch);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meta_file_names_the_release() {
        let meta =
            "##\n# Metadata\n##\n  Meta:\t\t1\n  Name:\t\tslurm\n  Major:\t26\n  Version:\t26.05.3\n  Release:\t1\n";
        assert_eq!(meta_version(meta).as_deref(), Some("26.05.3"));
        assert_eq!(meta_version("  Name: slurm\n"), None);
    }

    #[test]
    fn a_source_of_another_series_or_a_bad_checksum_is_refused_with_what_it_holds() {
        let dir = std::env::temp_dir().join(format!("provision-schedmd-{}", std::process::id()));
        let tree = dir.join("slurm-26.05.9");
        fs::create_dir_all(tree.join("debian")).unwrap();
        fs::write(tree.join("META"), "  Version:\t26.05.9\n").unwrap();
        let r = SlurmRelease::find("26.05").unwrap();
        let s = inspect(&tree, r).unwrap();
        assert_eq!(s.upstream, "26.05.9");
        // The same files hash the same; another byte does not.
        assert_eq!(tree_sha256(&tree).unwrap(), s.sha256);
        fs::write(tree.join("debian/control"), "x").unwrap();
        assert_ne!(tree_sha256(&tree).unwrap(), s.sha256);
        let e = inspect(&tree, SlurmRelease::find("25.11").unwrap()).unwrap_err();
        assert_eq!(e, "it holds Slurm 26.05.9, not a release of 25.11 (--slurm 25.11 takes 25.11.x)");
        assert_eq!(inspect(&dir.join("nothing"), r).unwrap_err(), "no such file or directory");
        // A tarball whose SHA256SUMS disagrees.
        let tarball = dir.join("slurm-26.05.9.tar.bz2");
        run(Command::new("tar").arg("-cjf").arg(&tarball).arg("-C").arg(&dir).arg("slurm-26.05.9")).unwrap();
        assert_eq!(inspect(&tarball, r).unwrap().upstream, "26.05.9");
        fs::write(dir.join("SHA256SUMS"), "00ff  slurm-26.05.9.tar.bz2\n").unwrap();
        let e = inspect(&tarball, r).unwrap_err();
        assert!(e.ends_with("but the SHA256SUMS beside it says 00ff"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_a_source_the_error_says_what_to_download_and_pass() {
        let root = std::env::temp_dir().join(format!("provision-nosource-{}/ws", std::process::id()));
        fs::create_dir_all(&root).unwrap();
        let e = locate(&root, SlurmRelease::find("25.11").unwrap()).unwrap_err();
        assert!(e.contains("slurm-25.11.7.tar.bz2 (or any 25.11.x) from https://download.schedmd.com/slurm/"), "{e}");
        assert!(e.contains("cargo xtask build --slurm 25.11 --slurm-source PATH"), "{e}");
        let _ = fs::remove_dir_all(root.parent().unwrap());
    }
}
