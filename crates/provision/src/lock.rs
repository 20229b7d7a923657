//! A lock file shared by every process that makes or takes the same thing
//! (a base image, Slurm built from source, Debian's packages, a /24, a
//! block of ports): held until the returned file is dropped, so two
//! commands or tests at once do it one after the other.

use std::fs::{File, TryLockError};
use std::io::{Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::Result;

/// How long [`hold`] waits: longer than any one holder's work (a Slurm
/// build from source on 2 cores, about 15 minutes), shorter than CI's run.
pub const LOCK_WAIT: Duration = Duration::from_secs(45 * 60);

/// Wait for, and hold, the lock at `path` (made, with its folder, if
/// missing), for at most [`LOCK_WAIT`].
pub fn hold(path: &Path) -> Result<File> {
    hold_within(path, LOCK_WAIT)
}

/// As [`hold`], waiting at most `limit`: then an error that names the
/// process holding it (its pid and command line, which the holder writes
/// in the file), so that a wait never hangs a command or a test unsaid.
pub fn hold_within(path: &Path, limit: Duration) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // Not truncated on opening: another may hold it, its name written in it.
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let since = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if since.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(path).unwrap_or_default();
                return Err(format!(
                    "waited {limit:?} for the lock {} and it is still held, by {}",
                    path.display(),
                    if holder.trim().is_empty() { "a process that did not say" } else { holder.trim() }
                ));
            }
            Err(TryLockError::Error(e)) => return Err(format!("cannot lock {}: {e}", path.display())),
        }
    }
    // Who holds it now, for one that waits too long.
    let me = crate::cmd::command_line("self");
    let _ =
        file.set_len(0).and_then(|_| file.rewind()).and_then(|_| writeln!(file, "pid {}: {me}", std::process::id()));
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_held_past_the_wait_names_its_holder() {
        let dir = std::env::temp_dir().join(format!("lock-test-{}", std::process::id()));
        let path = dir.join("x.lock");
        let held = hold(&path).unwrap();
        // Another open file description: flock does not share the lock.
        let e = hold_within(&path, Duration::from_millis(600)).unwrap_err();
        assert!(e.contains(&format!("still held, by pid {}", std::process::id())), "{e}");
        drop(held);
        assert!(hold_within(&path, Duration::from_millis(600)).is_ok());
        let _ = std::fs::remove_dir_all(dir);
    }
}
