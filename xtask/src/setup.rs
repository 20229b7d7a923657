//! Everything a fresh machine needs before the plugins can be built and run:
//! Debian's Slurm packages, the matching source tree (configured once and
//! cached), and the plugins built and staged under their Slurm names.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use testcluster::plugins::{plugin_dir, plugin_dir_for, tool_dir, tool_dir_for, PLUGINS, TOOLS};
use testcluster::process::run;
use testcluster::slurm_release::HOST_RELEASE;

use crate::apt_private::PrivateApt;
use crate::Result;

/// The Slurm we build against on the host: exactly what Debian bookworm
/// ships (the first row of testcluster's release table).
pub const SLURM_DEB_VERSION: &str = testcluster::slurm_release::RELEASES[0].deb_version;
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

/// Install whichever of these Debian packages is missing. No service is
/// started meanwhile (Debian's policy-rc.d, there only while apt runs,
/// unless an admin put one there): the clusters start their own daemons by
/// pid, and mariadb-server or slurmdbd would otherwise leave a system
/// daemon behind that nothing here stops.
pub fn ensure(packages: &[&str]) -> Result<()> {
    let missing: Vec<&str> = packages.iter().copied().filter(|p| installed_version(p).is_none()).collect();
    if !missing.is_empty() {
        let t = Instant::now();
        eprintln!("xtask: installing {}", missing.join(" "));
        let policy = std::path::Path::new("/usr/sbin/policy-rc.d");
        let ours = !policy.exists();
        if ours {
            std::fs::write(policy, "#!/bin/sh\n# cargo xtask: no service starts while it installs\nexit 101\n")
                .map_err(|e| format!("cannot write {}: {e}", policy.display()))?;
            run(Command::new("chmod").arg("755").arg(policy))?;
        }
        let done = run(apt_get().args(["update", "-qq"]))
            .and_then(|()| run(apt_get().args(["install", "-y", "-qq", "--no-install-recommends"]).args(&missing)));
        if ours {
            let _ = std::fs::remove_file(policy);
        }
        done?;
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

/// The plugins a run takes: those `plugins::PLUGIN_DIR_VAR` names (another
/// release's, inside its build container), else the host's, built first.
pub fn staged_plugins(root: &Path) -> Result<PathBuf> {
    match testcluster::plugins::plugin_dir_override() {
        Some(dir) => Ok(dir),
        None => build_plugins(root),
    }
}

pub fn source_cache(root: &Path) -> PathBuf {
    crate::slurm_src::cache_dir(root).join("slurm-src")
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
    let release = testcluster::SlurmRelease::find(HOST_RELEASE)?;
    let apt = PrivateApt::deb_src(&cache.join(format!("apt-{}", release.suite)), release.suite)?;
    apt.update()?;
    if !tree.is_dir() {
        eprintln!("xtask: fetching the source of slurm-wlm {SLURM_DEB_VERSION}");
        run(apt.command("apt-get").current_dir(&cache).args([
            "source",
            "-qq",
            &format!("slurm-wlm={SLURM_DEB_VERSION}"),
        ]))?;
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
/// name Slurm looks for (sched/malleable -> sched_malleable.so), into
/// target/plugins and (a copy) target/plugins/22.05.
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
    copy_for_release(&dir, &bin, &plugin_dir_for(root, HOST_RELEASE), &tool_dir_for(root, HOST_RELEASE))?;
    Ok(dir)
}

/// The host's build also staged as target/plugins/22.05 (and its bin/), so
/// that every release's plugins are found the same way.
fn copy_for_release(dir: &Path, bin: &Path, to: &Path, to_bin: &Path) -> Result<()> {
    std::fs::create_dir_all(to_bin).map_err(|e| format!("cannot create {}: {e}", to_bin.display()))?;
    for (_, _, slurm_name) in PLUGINS {
        stage(&dir.join(slurm_name), &to.join(slurm_name))?;
    }
    for name in staged_tools() {
        stage(&bin.join(name), &to_bin.join(name))?;
    }
    Ok(())
}

/// What the host's bin/ holds: our commands, the runtime's C library and
/// headers, and the C examples.
fn staged_tools() -> Vec<&'static str> {
    let mut t: Vec<&str> = TOOLS.iter().map(|t| t.1).collect();
    t.extend(["libmalleable_rt.so", "malleable_rt.h", "malleable_rt_mpi.h", "mall-stencil-c"]);
    t.extend(crate::c_example::MPI_EXAMPLES.iter().map(|e| e.0));
    t.extend(crate::c_example::PYTHON_EXAMPLE);
    t
}

/// Copy to a temporary name and rename, so that a running slurmctld that
/// has the old file mapped, or a job running the old command, is not
/// disturbed.
pub fn stage(from: &Path, to: &Path) -> Result<()> {
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = to.with_file_name(format!(".{name}.tmp"));
    std::fs::copy(from, &tmp).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    std::fs::rename(&tmp, to).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_release_is_the_tables_first_row() {
        let r = testcluster::SlurmRelease::find(HOST_RELEASE).unwrap();
        assert_eq!((r.deb_version, r.src_name()), (SLURM_DEB_VERSION, SLURM_SRC_NAME.to_string()));
    }

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
