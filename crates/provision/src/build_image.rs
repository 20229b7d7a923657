//! The image our crates are built in for a Slurm release other than the
//! host's: that release's site base (its Slurm, CBC, glibc) plus the
//! compilers and -dev packages, tagged `malleable-build:HASH` of its inputs.

use std::path::Path;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::base_image::base_image;
use crate::image::{chroot_install, export_into, hex, image_exists, image_work, import_root};
use crate::release::{Origin, SlurmRelease};
use crate::Result;

/// What building our crates and configuring Slurm's source need beyond the
/// base: CBC's headers (Slurm's public ones: Debian's libslurm-dev, or
/// SchedMD's slurm-smd-dev in the base already), libclang for bindgen (its own headers
/// come with libclang-dev; no clang binary is needed, as on the host), gcc
/// for the layout probe, the C example and the linker, libmunge-dev for
/// Slurm's configure (24.11 fails without munge), zlib1g-dev because
/// coin_cbc_sys links CBC with `pkg-config --static`'s list (-lz; trixie's
/// coinor-libcbc-dev does not pull it in), patch and xz for Debian's
/// patches, file for libtool's checks in configure, CA certificates for
/// cargo's registry; and what the release's own test suites need (`cargo
/// xtask slurm-tests --slurm 24.11` runs them in this image, which has no
/// network to install them then): expect, pytest with pexpect,
/// pytest-timeout and requests (24.11's atf imports it), jsondiff,
/// jsonpatch, yaml and xmltodict (the python suite at 26.05's branch
/// point imports them), sudo, tini (the
/// init of each auto-config test's PID namespace); slurmdbd and
/// MariaDB for the suites' tests that need accounting (`accounting::PACKAGES`);
/// Open MPI and MPICH, which the MPI example is built with and run by, and
/// mpi4py for the Python one.
pub const BUILD_PACKAGES: &[&str] = &[
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
    "python3-jsondiff",
    "python3-jsonpatch",
    "python3-yaml",
    "python3-xmltodict",
    "sudo",
    "tini",
    "mariadb-server",
    "openmpi-bin",
    "libopenmpi-dev",
    "mpich",
    "libmpich-dev",
    "python3-mpi4py",
];

/// What a Debian release's build image adds from Debian's Slurm: its
/// headers, and slurmdbd for the suites (SchedMD's are in the base).
const DEBIAN_SLURM_BUILD: &[&str] = &["libslurm-dev", "slurmdbd"];

/// The build packages for `release`.
pub fn build_packages(release: &SlurmRelease) -> Vec<&'static str> {
    let mut p = BUILD_PACKAGES.to_vec();
    if let Origin::Debian { .. } = release.origin {
        p.extend(DEBIAN_SLURM_BUILD);
    }
    p
}

/// Bump to rebuild every build image (a change of how it is made).
const BUILD_RECIPE: &str = "build-2";

/// The build image's tag for `release`, made when missing: its base
/// exported, the build packages installed in it by chroot (as the base
/// was made: no registry and no network inside a container), imported.
pub fn build_image(root: &Path, release: &SlurmRelease) -> Result<String> {
    let base = base_image(root, release)?;
    let packages = build_packages(release);
    let mut h = Sha256::new();
    h.update(BUILD_RECIPE);
    h.update(&base);
    for p in &packages {
        h.update(p);
    }
    let tag = format!("malleable-build:{}", hex(h.finalize()));
    if image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    let work = image_work(root);
    let rootfs = work.join(format!("build-rootfs-{}", release.version));
    let log = work.join(format!("build-image-{}.log", release.version));
    eprintln!("provision: making the build image {tag} for Slurm {} ({base} and compilers)", release.version);
    export_into(&base, &rootfs, &log)?;
    chroot_install(&rootfs, &packages, &log)?;
    import_root(&rootfs, &tag)?;
    eprintln!("provision: build image {tag} made in {:.1?}", t.elapsed());
    Ok(tag)
}
