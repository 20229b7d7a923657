//! `cargo xtask slurm-tests`: the set-up it needs (packages, source tree,
//! plugins), then cluster-tests' runner of Slurm's own suites
//! (`slurm_suites`), here or in another release's image.

use std::path::{Path, PathBuf};

use cluster_tests::slurm_suites::{self, Host, Setup};
use testcluster::SlurmRelease;

use test_tiers::release_tests;

use crate::{repo_root, Result};

/// `slurm-tests`, its options parsed (cli.rs) and `raw` as given: here,
/// or for `other`, a release other than the host's, in its build image (the same
/// command there, where that release is the installed one).
pub fn cmd(
    short: bool,
    only: &[String],
    pairs: &[Setup],
    other: Option<&str>,
    testsuite: Option<&Path>,
    raw: &[String],
) -> Result<()> {
    let testsuite = testsuite.map(suites_dir).transpose()?;
    match other {
        Some(v) => {
            let root = repo_root();
            let mut args = raw.to_vec();
            if let Some(dir) = &testsuite {
                // The build image sees the workspace only: the suites go there.
                let copy = copy_suites(&root, v, dir)?;
                let at = args.iter().position(|a| a == "--testsuite").map(|i| i + 1);
                args[at.ok_or("--testsuite lost")?] = copy.display().to_string();
            }
            release_tests::in_release(&root, v, "slurm-tests", &args)
        }
        None => run(short, only, pairs, testsuite.as_deref()),
    }
}

/// The installed release's suites, on this machine: the source tree's, or
/// those of `testsuite`.
pub fn run(short: bool, only: &[String], pairs: &[Setup], testsuite: Option<&Path>) -> Result<()> {
    let root = repo_root();
    let source = source_tree(&root, SlurmRelease::installed()?, testsuite.is_some())?;
    let build = std::env::var_os("SLURM_BUILD_DIR").map(PathBuf::from).unwrap_or_else(|| source.clone());
    let suites = testsuite.map(Path::to_path_buf).unwrap_or_else(|| source.join("testsuite"));
    let staged = provision::build::staged_plugins(&root)?;
    let host = Host {
        root: &root,
        source: &source,
        build: &build,
        suites: &suites,
        staged: &staged,
        ensure: &|p: &[&str]| provision::apt::ensure(p),
    };
    slurm_suites::run(&host, short, only, pairs)
}

/// `--testsuite DIR`, checked: a `testsuite/` directory holding the expect
/// and python suites (SchedMD's repository at the release's branch point;
/// `git archive <commit> testsuite | tar -x` makes one), made absolute.
fn suites_dir(dir: &Path) -> Result<PathBuf> {
    let abs = std::fs::canonicalize(dir).map_err(|e| format!("--testsuite {}: {e}", dir.display()))?;
    for part in ["expect/globals", "python/conftest.py"] {
        if !abs.join(part).is_file() {
            return Err(format!(
                "--testsuite {}: no {part} there; expected the testsuite/ directory of SchedMD's repository \
                 (e.g. `git -C slurm archive $(git -C slurm merge-base master slurm-26-05-3-1) testsuite | tar -x`)",
                dir.display()
            ));
        }
    }
    Ok(abs)
}

/// A copy of `dir`'s expect and python suites under the workspace's
/// `target/slurm-tests/VERSION/testsuite`, made afresh.
fn copy_suites(root: &Path, version: &str, dir: &Path) -> Result<PathBuf> {
    let copy = root.join("target/slurm-tests").join(version).join("testsuite");
    if copy != dir {
        let _ = std::fs::remove_dir_all(&copy);
        std::fs::create_dir_all(&copy).map_err(|e| format!("cannot create {}: {e}", copy.display()))?;
        for part in ["expect", "python"] {
            provision::cmd::run(std::process::Command::new("cp").arg("-a").arg(dir.join(part)).arg(&copy))?;
        }
    }
    Ok(copy)
}

/// Where `r`'s configured source tree is kept, made or not: inside a
/// release's build container, the one SLURM_SRC_DIR names (the build
/// container is given it); else the host's, or Debian's source package's.
/// A tree built from SchedMD's source is found by its source's hash, which
/// only provisioning outside the container knows.
fn cached_tree(root: &Path, r: &SlurmRelease) -> Option<PathBuf> {
    if r.is_host() {
        return Some(provision::host::source_tree(root));
    }
    // .cargo/config.toml names the host's tree: only a tree of r's series counts.
    if let Some(dir) = std::env::var_os("SLURM_SRC_DIR").map(PathBuf::from) {
        let meta = std::fs::read_to_string(dir.join("META")).unwrap_or_default();
        let version = meta.lines().find_map(|l| l.trim().strip_prefix("Version:")).map(str::trim);
        if version.and_then(provision::release::series_of) == Some(r.version) {
            return Some(dir);
        }
    }
    (!r.from_source()).then(|| provision::debian_source::release_tree(root, r))
}

/// The source tree of `r` (its testsuite is run unless `suites_given`):
/// the host's fetched when missing; another release's must be made outside
/// its build image, where `--slurm` made it.
fn source_tree(root: &Path, r: &SlurmRelease, suites_given: bool) -> Result<PathBuf> {
    if r.is_host() {
        return provision::host::ensure_source_tree(root);
    }
    let tree = cached_tree(root, r).ok_or_else(|| {
        format!("Slurm {}'s source tree: run this through `cargo xtask slurm-tests --slurm {}`", r.version, r.version)
    })?;
    if !tree.join("testsuite").is_dir() {
        return Err(format!(
            "{} is not a Slurm source tree: `cargo xtask slurm-src --slurm {}` makes it",
            tree.display(),
            r.version
        ));
    }
    if !suites_given && !tree.join("testsuite/expect").is_dir() {
        return Err(format!(
            "Slurm {}'s release source holds no expect or python suite (SchedMD keeps them on its master \
             branch since 25.11): pass --testsuite DIR, the testsuite/ of SchedMD's repository at the \
             release's branch point",
            r.version
        ));
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_of_each_cached_tree_is_listed() {
        let root = repo_root();
        for r in provision::release::RELEASES.iter() {
            let Some(source) = cached_tree(&root, r) else { continue };
            if !source.join("testsuite/expect").is_dir() {
                // A machine that has not fetched that tree yet: `cargo
                // xtask slurm-tests` checks the same before it runs anything.
                continue;
            }
            let found = slurm_suites::check_listed(&root, r.version, &source.join("testsuite")).unwrap();
            assert!(found > 0, "{}", r.version);
        }
    }
}
