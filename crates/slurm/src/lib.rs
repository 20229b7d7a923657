//! The safe layer over `slurm-sys`: the only crate besides the bindings that
//! may use `unsafe`. Plugin crates see locks as guards, job and node records
//! as read-only views, Slurm's log as a `log` backend, and declare themselves
//! with one macro line.

pub mod bitmap;
pub mod ctld;
pub mod ffi_guard;
pub mod job;
pub mod loader;
pub mod locks;
pub mod logger;
pub mod node;
pub mod plugin;

pub use ctld::{Slurmctld, UpdateCounters};
pub use job::{JobState, JobView};
pub use locks::{LockGuard, LockLevel, Locks, StartError};
pub use node::NodeView;
pub use plugin::{PluginContext, SchedPlugin};

/// `SLURM_SUCCESS` / `SLURM_ERROR` as the C entry points return them.
pub const SLURM_SUCCESS: i32 = slurm_sys::SLURM_SUCCESS as i32;
pub const SLURM_ERROR: i32 = slurm_sys::SLURM_ERROR;

/// The Slurm version the bindings were generated from; `plugin_version` of
/// every plugin must equal it (src/common/plugin.c compares all 24 bits).
pub const SLURM_VERSION_NUMBER: u32 = slurm_sys::SLURM_VERSION_NUMBER;

/// Text of a Slurm error code, as `slurm_strerror` gives it.
pub fn strerror(code: i32) -> String {
    // SAFETY: slurm_strerror returns a pointer to a static string (or to a
    // thread-local buffer for unknown codes) that stays valid while we copy.
    unsafe { cstr_to_string(slurm_sys::slurm_strerror(code)) }.unwrap_or_else(|| format!("error {code}"))
}

/// Copy a C string that may be NULL.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string valid for the call.
pub(crate) unsafe fn cstr_to_string(p: *const libc::c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-null and NUL-terminated by the caller's contract.
        Some(unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}
