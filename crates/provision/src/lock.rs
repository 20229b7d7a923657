//! A lock file shared by every process that makes or takes the same thing
//! (a base image, Slurm built from source, Debian's packages, a /24, a
//! block of ports): held until the returned file is dropped, so two
//! commands or tests at once do it one after the other.

use std::fs::File;
use std::path::Path;

use crate::Result;

/// Wait for, and hold, the lock at `path` (made, with its folder, if
/// missing).
pub fn hold(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // Not truncated: a lock file holds nothing, and another may hold it.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    file.lock().map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(file)
}
