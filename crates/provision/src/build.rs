//! Our plugins, commands and the runtime's C library built and staged for
//! a Slurm release: the host's on this machine (target/plugins, and a copy
//! in target/plugins/22.05), another in that release's build image against
//! its configured source tree (target/plugins/VERSION).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::build_image::build_image;
use crate::cmd::run;
use crate::container::Container;
use crate::host::{ensure_packages, ensure_source_tree};
use crate::release::{Origin, SlurmRelease, HOST_RELEASE};
use crate::staged::{plugin_dir, plugin_dir_for, plugin_dir_override, stage, tool_dir, tool_dir_for, PLUGINS, TOOLS};
use crate::Result;

/// Where slurm-sys looks for libslurmfull unless told (Debian's packages).
const DEFAULT_LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu/slurm-wlm";

/// A release's configured source tree, as slurm-sys takes it: the source
/// (SLURM_SRC_DIR) and where configure wrote its headers (SLURM_BUILD_DIR:
/// the tree itself, or dh's build directory for SchedMD's packaging), and
/// where the release's libslurmfull is (SLURM_LIB_DIR).
pub struct Tree {
    pub src: PathBuf,
    pub build: PathBuf,
    pub lib_dir: &'static str,
    /// The paths a build container must mount beyond the workspace.
    pub mounts: Vec<PathBuf>,
}

impl Tree {
    /// The variables slurm-sys's build script reads, those that differ
    /// from its defaults only: every cargo run on a tree sets the same, so
    /// cargo never builds the bindings again for a variable set or unset.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = vec![("SLURM_SRC_DIR", self.src.display().to_string())];
        if self.build != self.src {
            env.push(("SLURM_BUILD_DIR", self.build.display().to_string()));
        }
        if self.lib_dir != DEFAULT_LIB_DIR {
            env.push(("SLURM_LIB_DIR", self.lib_dir.to_string()));
            // What .cargo/config.toml sets for Debian's folder: binaries
            // that link libslurmfull (mall-run, the tests) find it by runpath.
            env.push((
                "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS",
                format!("-C link-arg=-Wl,-rpath,{}", self.lib_dir),
            ));
        }
        env
    }
}

/// `r`'s configured source tree, made when missing: the host's, Debian's
/// source package configured in the build image, or SchedMD's source built
/// into .debs (the tree it was built in).
pub fn source_tree(root: &Path, r: &SlurmRelease) -> Result<Tree> {
    if r.is_host() {
        ensure_packages()?;
        let src = ensure_source_tree(root)?;
        return Ok(Tree { build: src.clone(), src, lib_dir: r.lib_dir, mounts: Vec::new() });
    }
    match r.origin {
        Origin::Debian { .. } => {
            let src = crate::debian_source::ensure_release_tree(root, r)?;
            let mounts = vec![crate::debian_source::release_cache(root, r)];
            Ok(Tree { build: src.clone(), src, lib_dir: r.lib_dir, mounts })
        }
        Origin::SchedMd { .. } => {
            let built = crate::schedmd::prepare(root, r)?;
            Ok(Tree { src: built.tree(), build: built.build_dir(), lib_dir: r.lib_dir, mounts: vec![built.dir] })
        }
    }
}

/// Cargo's target dir for `r`: `<repo>/target/slurm-24.11`, apart from the
/// host's, since the same crates are built against other headers there.
pub fn target_dir(root: &Path, r: &SlurmRelease) -> PathBuf {
    root.join("target").join(format!("slurm-{}", r.version))
}

/// Every package [`build_plugins`] builds for the host: the plugins,
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
    eprintln!("provision: cargo {} for Slurm {} in {:.1?}", args.join(" "), r.version, t.elapsed());
    Ok(())
}

/// `cargo` in `r`'s build image (made when missing), run as `box_`, with
/// SLURM_SRC_DIR = its configured source tree, its own target dir and
/// `env`; the caller adds cargo's arguments.
pub fn image_cargo(root: &Path, r: &SlurmRelease, box_: &mut Container, env: &[(&str, String)]) -> Result<Command> {
    let tree = source_tree(root, r)?;
    let image = build_image(root, r)?;
    fetch_on_host(root)?;
    box_.usr_from(root, &image, r.version)?;
    let mut all = tree.env();
    all.extend([
        ("CARGO_TARGET_DIR", target_dir(root, r).display().to_string()),
        ("CARGO_NET_OFFLINE", "true".to_string()),
    ]);
    all.extend(env.iter().cloned());
    let mounts: Vec<&Path> = tree.mounts.iter().map(PathBuf::as_path).collect();
    let mut cargo = box_.command(&image, root, &mounts, root, &all);
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
    let r = SlurmRelease::find(version)?;
    if r.is_host() {
        build_plugins(root)?;
        return Ok(plugin_dir_for(root, version));
    }
    let _lock = build_lock(root, version)?;
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
    let image = build_image(root, r)?;
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

/// The plugins a run takes: those `plugins::PLUGIN_DIR_VAR` names (another
/// release's, inside its build container), else the host's, built first.
pub fn staged_plugins(root: &Path) -> Result<PathBuf> {
    match plugin_dir_override() {
        Some(dir) => Ok(dir),
        None => build_plugins(root),
    }
}

/// Packages, source tree, release build, and each .so copied under the file
/// name Slurm looks for (sched/malleable -> sched_malleable.so), into
/// target/plugins and (a copy) target/plugins/22.05.
pub fn build_plugins(root: &Path) -> Result<PathBuf> {
    let _lock = build_lock(root, HOST_RELEASE)?;
    let tree = source_tree(root, SlurmRelease::find(HOST_RELEASE)?)?;
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.current_dir(root).envs(tree.env()).args(["build", "--release"]);
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

/// Held while a release's plugins are built and staged: two commands in
/// one checkout that build at once (CI's fault campaign beside its
/// evaluations) take turns, the second finding cargo's work done.
fn build_lock(root: &Path, version: &str) -> Result<std::fs::File> {
    crate::lock::hold(&plugin_dir(root).join(format!(".build-{version}.lock")))
}

/// The host's build also staged as target/plugins/22.05 (and its bin/), so
/// that every release's plugins are found the same way.
fn copy_for_release(dir: &Path, bin: &Path, to: &Path, to_bin: &Path) -> Result<()> {
    std::fs::create_dir_all(to_bin).map_err(|e| format!("cannot create {}: {e}", to_bin.display()))?;
    for (_, _, slurm_name) in PLUGINS {
        stage(&dir.join(slurm_name), &to.join(slurm_name))?;
    }
    for name in crate::c_example::staged_tools() {
        stage(&bin.join(name), &to_bin.join(name))?;
    }
    Ok(())
}
