//! `cargo xtask slurm-tests [--short] [--only TEXT,...] [--slurm V]`: its
//! options, the set-up it needs (packages, source tree, plugins), then
//! cluster-tests' runner of Slurm's own suites (`slurm_suites`).

use std::path::{Path, PathBuf};

use cluster_tests::slurm_suites::{self, Host};
use testcluster::SlurmRelease;

use crate::{is_host, release_tests, repo_root, setup, slurm_src, Result};

/// `slurm-tests [--short] [--only TEXT,...] [--slurm V]`: here, or for a
/// release other than the host's in its build image (the same command
/// there, where that release is the installed one).
pub fn cmd(args: &[String]) -> Result<()> {
    let mut short = false;
    let mut only = Vec::new();
    let mut slurm = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--short" => short = true,
            "--only" => {
                let v = it.next().ok_or("--only needs TEXT (part of a test's name), or several with commas")?;
                only.extend(v.split(',').filter(|s| !s.is_empty()).map(str::to_string));
            }
            "--slurm" => slurm = Some(it.next().ok_or("--slurm needs a version, e.g. 24.11")?.clone()),
            other => {
                return Err(format!(
                    "slurm-tests: unknown option '{other}': expected --short, --only TEXT or --slurm VERSION"
                ))
            }
        }
    }
    match slurm {
        Some(v) if !is_host(&v) => release_tests::in_release(&repo_root(), &v, "slurm-tests", args),
        _ => run(short, &only),
    }
}

/// The installed release's suites, on this machine.
pub fn run(short: bool, only: &[String]) -> Result<()> {
    let root = repo_root();
    let source = source_tree(&root, SlurmRelease::installed()?)?;
    let staged = setup::staged_plugins(&root)?;
    let host = Host { root: &root, source: &source, staged: &staged, ensure: &|p: &[&str]| setup::ensure(p) };
    slurm_suites::run(&host, short, only)
}

/// Where `r`'s configured source tree is kept, made or not.
fn cached_tree(root: &Path, r: &SlurmRelease) -> PathBuf {
    match r.is_host() {
        true => setup::source_cache(root).join(setup::SLURM_SRC_NAME),
        false => slurm_src::release_tree(root, r),
    }
}

/// The configured source tree of `r` (its testsuite is run): the host's
/// fetched when missing; another release's must be made outside its build
/// image, where `--slurm` made it.
fn source_tree(root: &Path, r: &SlurmRelease) -> Result<PathBuf> {
    if r.is_host() {
        return setup::ensure_source_tree(root);
    }
    let tree = cached_tree(root, r);
    if !tree.join("config.h").is_file() {
        return Err(format!(
            "{} is not a configured source tree: `cargo xtask slurm-src --slurm {}` makes it",
            tree.display(),
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
        for r in testcluster::slurm_release::RELEASES.iter().filter(|r| r.unavailable.is_none()) {
            let source = cached_tree(&root, r);
            if !source.join("testsuite").is_dir() {
                // A machine that has not fetched that tree yet: `cargo
                // xtask slurm-tests` checks the same before it runs anything.
                continue;
            }
            let found = slurm_suites::check_listed(&root, r.version, &source).unwrap();
            assert!(found > 0, "{}", r.version);
        }
    }
}
