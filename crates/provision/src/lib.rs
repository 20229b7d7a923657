//! Provisioning, shared by `cargo xtask` and the tests: the Slurm releases
//! this workspace knows ([`release`]) and, for each, Debian's packages on
//! this machine ([`apt`], [`host`]), the configured source tree (Debian's
//! source package, [`debian_source`], or SchedMD's release source built
//! into .debs, [`schedmd`]), the images its hosts and builds run
//! ([`image`], [`build_image`]), commands run in them ([`container`]), and
//! our plugins built and staged for it ([`build`], [`staged`]); the lock
//! files that keep two of these from running at once ([`lock`]).

pub mod apt;
pub mod base_image;
pub mod build;
pub mod build_image;
pub mod c_example;
pub mod cmd;
pub mod container;
pub mod debian_source;
pub mod host;
pub mod image;
pub mod lock;
pub mod release;
pub mod schedmd;
pub mod staged;

use std::path::{Path, PathBuf};

pub use release::{SlurmRelease, HOST_RELEASE};

pub type Result<T> = std::result::Result<T, String>;

/// Where the source trees, built Slurms and private apt folders live:
/// `<repo>/.cache`, or `MALLEABLE_CACHE_DIR` (a scratch folder, so a test
/// of this code does not touch a tree someone prepared by hand).
pub fn cache_dir(root: &Path) -> PathBuf {
    std::env::var_os("MALLEABLE_CACHE_DIR").map_or_else(|| root.join(".cache"), PathBuf::from)
}
