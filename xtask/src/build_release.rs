//! `cargo xtask build --slurm 24.11`: our plugins, commands and the
//! runtime's C library built for a Slurm release other than the host's, in
//! that release's build image, staged in target/plugins/VERSION.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use testcluster::plugins::{plugin_dir_for, tool_dir_for, PLUGINS, TOOLS};
use testcluster::process::run;
use testcluster::SlurmRelease;

use crate::container::Container;
use crate::setup::{self, stage};
use crate::slurm_src::{ensure_release_tree, release_cache, release_image};
use crate::Result;

/// Cargo's target dir for `r`: `<repo>/target/slurm-24.11`, apart from the
/// host's, since the same crates are built against other headers there.
pub fn target_dir(root: &Path, r: &SlurmRelease) -> PathBuf {
    root.join("target").join(format!("slurm-{}", r.version))
}

/// Every package `setup::build_plugins` builds for the host: the plugins,
/// the commands, the runtime's C library.
fn packages() -> Vec<&'static str> {
    let mut p: Vec<&str> = PLUGINS.iter().map(|p| p.0).chain(TOOLS.iter().map(|t| t.0)).collect();
    p.push("malleable-rt");
    p
}

/// `cargo ARGS` in `r`'s build image (made when missing) with
/// SLURM_SRC_DIR = its configured source tree and its own target dir;
/// `packages` as `-p` arguments after `args`.
pub fn cargo_in(root: &Path, r: &SlurmRelease, args: &[&str], packages: &[&str]) -> Result<()> {
    let mut box_ = Container::claim(&format!("malleable-build-{}", r.version))?;
    let mut cargo = image_cargo(root, r, &mut box_, &[])?;
    cargo.args(args);
    for p in packages {
        cargo.args(["-p", p]);
    }
    let t = Instant::now();
    run(&mut cargo).map_err(|e| format!("cargo in the Slurm {} build image: {e}", r.version))?;
    eprintln!("xtask: cargo {} for Slurm {} in {:.1?}", args.join(" "), r.version, t.elapsed());
    Ok(())
}

/// `cargo` in `r`'s build image (made when missing), run as `box_`, with
/// SLURM_SRC_DIR = its configured source tree, its own target dir and
/// `env`; the caller adds cargo's arguments.
pub fn image_cargo(root: &Path, r: &SlurmRelease, box_: &mut Container, env: &[(&str, String)]) -> Result<Command> {
    let tree = ensure_release_tree(root, r)?;
    let image = release_image(root, r)?;
    fetch_on_host(root)?;
    box_.usr_from(root, &image)?;
    let mut all = vec![
        ("SLURM_SRC_DIR", tree.display().to_string()),
        ("CARGO_TARGET_DIR", target_dir(root, r).display().to_string()),
        ("CARGO_NET_OFFLINE", "true".to_string()),
    ];
    all.extend(env.iter().cloned());
    let mut cargo = box_.command(&image, root, &[&release_cache(root, r)], root, &all);
    cargo.arg("cargo");
    Ok(cargo)
}

/// The crates Cargo.lock names, fetched on the host into the CARGO_HOME the
/// image mounts: the image's cargo then builds offline. The host's trust
/// store is the one that knows the registry's certificate (behind a proxy
/// that signs its own, the image's cargo fails "self-signed certificate in
/// certificate chain" on a machine whose host has built nothing yet).
fn fetch_on_host(root: &Path) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo).current_dir(root).args(["fetch", "--locked"]))
        .map_err(|e| format!("cargo fetch on the host, for the build image: {e}"))
}

/// Build and stage everything for Slurm `version`: the plugins under their
/// Slurm names in target/plugins/VERSION, the commands, the runtime's
/// library and header and the C example (compiled in the same image) in
/// its bin/. The host's release builds on the host, as `cargo xtask build`.
pub fn build(root: &Path, version: &str) -> Result<PathBuf> {
    let r = SlurmRelease::buildable(version)?;
    if r.is_host() {
        setup::build_plugins(root)?;
        return Ok(plugin_dir_for(root, version));
    }
    cargo_in(root, r, &["build", "--release"], &packages())?;
    let release = target_dir(root, r).join("release");
    let dir = plugin_dir_for(root, version);
    let bin = tool_dir_for(root, version);
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    for (_, lib, slurm_name) in PLUGINS {
        stage(&release.join(lib), &dir.join(slurm_name))?;
    }
    for (_, name) in TOOLS {
        stage(&release.join(name), &bin.join(name))?;
    }
    let image = release_image(root, r)?;
    let box_ = Container::claim(&format!("malleable-cc-{}", r.version))?;
    let compiler = |name: &str| {
        let mut cc = box_.command(&image, root, &[], root, &[]);
        cc.arg(name);
        cc
    };
    crate::c_example::build_into(&release, &bin, root, compiler("cc"))?;
    crate::c_example::build_mpi_into(&bin, root, compiler)?;
    Ok(dir)
}
