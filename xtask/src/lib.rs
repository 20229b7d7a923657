//! What `cargo xtask` does, as a library so that the integration tests drive
//! the very same cluster code: installing Slurm, building the plugins,
//! running a whole cluster on this machine, and reading job records.

pub mod cluster;
pub mod jobs;
pub mod setup;
pub mod wait;

pub type Result<T> = std::result::Result<T, String>;

/// The workspace root (xtask sits one level below it).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask has a parent").to_path_buf()
}
