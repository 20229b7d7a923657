//! Everything a fresh machine needs before the plugins can be built and run:
//! Debian's Slurm packages, the matching source tree (configured once and
//! cached), and the plugins built and staged under their Slurm names.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use testcluster::plugins::{plugin_dir, tool_dir, PLUGINS, TOOLS};
use testcluster::process::run;

use crate::Result;

/// The Slurm we build against: exactly what Debian bookworm ships.
pub const SLURM_DEB_VERSION: &str = "22.05.8-4+deb12u3";
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
];

fn installed_version(pkg: &str) -> Option<String> {
    let out = Command::new("dpkg-query").args(["-W", "-f", "${Status}|${Version}", pkg]).output().ok()?;
    version_if_installed(&String::from_utf8_lossy(&out.stdout))
}

/// The version from dpkg-query's `${Status}|${Version}` when the package is
/// really installed. A status is three words, "want flag status": only the
/// status `installed` with the flag `ok` counts. "unknown ok not-installed"
/// (dpkg knows the package, nothing is on disk) and "deinstall ok
/// config-files" (removed, its configuration kept) end in "installed" too,
/// which is how a missing libslurm-dev once went unnoticed. "hold ok
/// installed" (an admin pinned it) is installed.
fn version_if_installed(query: &str) -> Option<String> {
    let (status, version) = query.trim().split_once('|')?;
    let words: Vec<&str> = status.split_whitespace().collect();
    (words.len() == 3 && words[1] == "ok" && words[2] == "installed" && !version.is_empty())
        .then(|| version.to_string())
}

fn apt_get() -> Command {
    let mut c = Command::new("apt-get");
    c.env("DEBIAN_FRONTEND", "noninteractive");
    c
}

/// Install whichever of these Debian packages is missing.
pub fn ensure(packages: &[&str]) -> Result<()> {
    let missing: Vec<&str> = packages.iter().copied().filter(|p| installed_version(p).is_none()).collect();
    if !missing.is_empty() {
        let t = Instant::now();
        eprintln!("xtask: installing {}", missing.join(" "));
        run(apt_get().args(["update", "-qq"]))?;
        run(apt_get().args(["install", "-y", "-qq", "--no-install-recommends"]).args(&missing))?;
        eprintln!("xtask: installed in {:.1?}", t.elapsed());
    }
    Ok(())
}

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
    root.join(".cache/slurm-src")
}

/// The configured source tree of the installed Slurm, fetched and configured
/// on first use (about 20 s), then cached under .cache/slurm-src.
pub fn ensure_source_tree(root: &Path) -> Result<PathBuf> {
    let cache = source_cache(root);
    let tree = cache.join(SLURM_SRC_NAME);
    if tree.join("config.h").is_file() {
        return Ok(tree);
    }
    let t = Instant::now();
    std::fs::create_dir_all(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let sources = Path::new("/etc/apt/sources.list.d/malleable-slurm-src.sources");
    if !sources.exists() {
        std::fs::write(
            sources,
            "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n\
             Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n\
             Types: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n\
             Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
        )
        .map_err(|e| format!("cannot write {}: {e}", sources.display()))?;
    }
    run(apt_get().args(["update", "-qq"]))?;
    if !tree.is_dir() {
        eprintln!("xtask: fetching the source of slurm-wlm {SLURM_DEB_VERSION}");
        run(apt_get().current_dir(&cache).args(["source", "-qq", &format!("slurm-wlm={SLURM_DEB_VERSION}")]))?;
    }
    eprintln!("xtask: configuring {} (once)", tree.display());
    let log = cache.join("configure.log");
    let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    run(Command::new("./configure")
        .current_dir(&tree)
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file))
    .map_err(|e| format!("{e} (see {})", log.display()))?;
    eprintln!("xtask: source tree ready in {:.1?}", t.elapsed());
    Ok(tree)
}

/// Packages, source tree, release build, and each .so copied under the file
/// name Slurm looks for (sched/malleable -> sched_malleable.so).
pub fn build_plugins(root: &Path) -> Result<PathBuf> {
    ensure_packages()?;
    let tree = ensure_source_tree(root)?;
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.current_dir(root).env("SLURM_SRC_DIR", &tree).args(["build", "--release"]);
    for (pkg, _, _) in PLUGINS {
        cargo.args(["-p", pkg]);
    }
    for (pkg, _) in TOOLS {
        cargo.args(["-p", pkg]);
    }
    // The runtime's C library (libmalleable_rt.so), for the C example.
    cargo.args(["-p", "malleable-rt"]);
    run(&mut cargo)?;
    let dir = plugin_dir(root);
    let bin = tool_dir(root);
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    let release = root.join("target/release");
    for (_, lib, slurm_name) in PLUGINS {
        stage(&release.join(lib), &dir.join(slurm_name))?;
    }
    for (_, name) in TOOLS {
        stage(&release.join(name), &bin.join(name))?;
    }
    crate::c_example::build(root)?;
    Ok(dir)
}

/// Copy to a temporary name and rename, so that a running slurmctld that
/// has the old file mapped, or a job running the old command, is not
/// disturbed.
fn stage(from: &Path, to: &Path) -> Result<()> {
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = to.with_file_name(format!(".{name}.tmp"));
    std::fs::copy(from, &tmp).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    std::fs::rename(&tmp, to).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_installed_package_has_a_version() {
        let v = |q: &str| version_if_installed(q);
        assert_eq!(v("install ok installed|22.05.8-4+deb12u3"), Some("22.05.8-4+deb12u3".into()));
        assert_eq!(v("hold ok installed|1.2"), Some("1.2".into()));
        // Known to dpkg, not on disk: the case that broke a fresh machine.
        assert_eq!(v("unknown ok not-installed|"), None);
        assert_eq!(v("deinstall ok config-files|22.05.8-4+deb12u3"), None);
        assert_eq!(v("install ok unpacked|22.05.8-4+deb12u3"), None);
        assert_eq!(v("install ok half-configured|22.05.8-4+deb12u3"), None);
        assert_eq!(v("install reinstreq half-installed|22.05.8"), None);
        assert_eq!(v("purge ok not-installed|"), None);
        // dpkg-query printed nothing (no such package) or something else.
        assert_eq!(v(""), None);
        assert_eq!(v("installed"), None);
    }
}
