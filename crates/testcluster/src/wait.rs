//! Waiting on a condition with a deadline, never sleeping and hoping.

use std::time::{Duration, Instant};

use crate::Result;

/// Poll `probe` until it returns Some, or fail after `timeout` with an error
/// that says what was awaited and what was last seen.
pub fn until<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl FnMut() -> std::result::Result<Option<T>, String>,
) -> Result<T> {
    let start = Instant::now();
    let mut last = String::new();
    loop {
        match probe() {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last = e,
        }
        if start.elapsed() >= timeout {
            let seen = if last.is_empty() { String::new() } else { format!(" (last: {last})") };
            return Err(format!("timed out after {:?} waiting for {what}{seen}", timeout));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
