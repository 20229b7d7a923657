//! The image our crates are built in for a Slurm release other than the
//! host's: that release's site base (its Slurm, CBC, glibc) plus the
//! compilers and -dev packages, tagged `malleable-build:HASH` of its inputs.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::compose::image::{base_image, chroot_install, fresh_dir, hex, image_exists, import_root, logged};
use crate::slurm_release::SlurmRelease;
use crate::Result;

/// What building our crates and configuring Slurm's source need beyond the
/// base: Slurm's and CBC's headers, libclang for bindgen (its own headers
/// come with libclang-dev; no clang binary is needed, as on the host), gcc
/// for the layout probe, the C example and the linker, libmunge-dev for
/// Slurm's configure (24.11 fails without munge), zlib1g-dev because
/// coin_cbc_sys links CBC with `pkg-config --static`'s list (-lz; trixie's
/// coinor-libcbc-dev does not pull it in), patch and xz for Debian's
/// patches, file for libtool's checks in configure, CA certificates for
/// cargo's registry; and what the release's own test suites need (`cargo
/// xtask slurm-tests --slurm 24.11` runs them in this image, which has no
/// network to install them then): expect, pytest with pexpect,
/// pytest-timeout and requests (24.11's atf imports it), sudo, tini (the
/// init of each auto-config test's PID namespace); slurmdbd and
/// MariaDB for the suites' tests that need accounting (`accounting::PACKAGES`);
/// Open MPI and MPICH, which the MPI example is built with and run by, and
/// mpi4py for the Python one.
pub const BUILD_PACKAGES: &[&str] = &[
    "libslurm-dev",
    "libclang-dev",
    "coinor-libcbc-dev",
    "zlib1g-dev",
    "gcc",
    "make",
    "libc6-dev",
    "pkg-config",
    "libmunge-dev",
    "patch",
    "xz-utils",
    "file",
    "ca-certificates",
    "expect",
    "python3-pytest",
    "python3-pexpect",
    "python3-pytest-timeout",
    "python3-requests",
    "sudo",
    "tini",
    "slurmdbd",
    "mariadb-server",
    "openmpi-bin",
    "libopenmpi-dev",
    "mpich",
    "libmpich-dev",
    "python3-mpi4py",
];

/// Bump to rebuild every build image (a change of how it is made).
const BUILD_RECIPE: &str = "build-1";

/// The build image's tag for `release`, made when missing: its base
/// exported, the build packages installed in it by chroot (as the base
/// was made: no registry and no network inside a container), imported.
/// `work` is scratch space (`target/compose/.image`).
pub fn build_image(work: &Path, release: &SlurmRelease) -> Result<String> {
    let base = base_image(work, release)?;
    let mut h = Sha256::new();
    h.update(BUILD_RECIPE);
    h.update(&base);
    for p in BUILD_PACKAGES {
        h.update(p);
    }
    let tag = format!("malleable-build:{}", hex(h.finalize()));
    if image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    let suite = release.suite;
    let root = work.join(format!("build-rootfs-{suite}"));
    fresh_dir(&root)?;
    let log = work.join(format!("build-image-{suite}.log"));
    eprintln!("xtask: making the build image {tag} for Slurm {} ({base} and compilers)", release.version);
    let container = format!("malleable-export-{suite}-{}", std::process::id());
    logged(&log, Command::new("docker").args(["create", "--name", &container, &base, "true"]))?;
    let exported = export_into(&container, &root, &log);
    let _ = Command::new("docker").args(["rm", "-f", &container]).output();
    exported?;
    // The base has no resolver configuration of its own (docker gives a
    // running container one); apt in the chroot needs the host's.
    std::fs::copy("/etc/resolv.conf", root.join("etc/resolv.conf"))
        .map_err(|e| format!("cannot copy /etc/resolv.conf into {}: {e}", root.display()))?;
    chroot_install(&root, BUILD_PACKAGES, &log)?;
    import_root(&root, &tag)?;
    eprintln!("xtask: build image {tag} made in {:.1?}", t.elapsed());
    Ok(tag)
}

/// `docker export` of `container` unpacked at `root`.
fn export_into(container: &str, root: &Path, log: &Path) -> Result<()> {
    let script = format!("docker export {container} | tar -x -C '{}'", root.display());
    logged(log, Command::new("bash").args(["-o", "pipefail", "-c", &script]))
}
