//! Running a command: for its status, for its output (either killed at a
//! deadline if asked), or with its output appended to a log that the error
//! names (the long builds: images, Slurm).

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::Result;

pub fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("{cmd:?} failed: {}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// As [`output`], but `cmd` is killed if it has not ended within `limit`,
/// and the error says so: a test's `docker exec` or `docker stop` that
/// hangs (the Docker daemon; a client waiting on a daemon with no timeout
/// of its own) fails its test with the command, instead of holding it for
/// good (CI's run at stop 76: two compose tests waited 70 minutes, until
/// CI's own limit, and said nothing).
pub fn output_within(cmd: &mut Command, limit: Duration) -> Result<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    // Both pipes read as the child runs: one it filled would stop it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_within(&mut child, cmd, limit)?;
    let text = |h: JoinHandle<Vec<u8>>| String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned();
    let (out, err) = (text(stdout), text(stderr));
    if status.success() {
        Ok(out)
    } else {
        Err(format!("{cmd:?} failed: {status}: {}", err.trim()))
    }
}

/// As [`run`], but `cmd` is killed if it has not ended within `limit`.
pub fn run_within(cmd: &mut Command, limit: Duration) -> Result<()> {
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let status = wait_within(&mut child, cmd, limit)?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

/// The child's exit status, or, once `limit` has passed, the child killed
/// and reaped and an error naming `cmd` and the limit.
fn wait_within(child: &mut Child, cmd: &Command, limit: Duration) -> Result<std::process::ExitStatus> {
    let error = match child.wait_timeout(limit) {
        Ok(Some(status)) => return Ok(status),
        Ok(None) => format!("{cmd:?} had not ended after {limit:?}, and was killed"),
        Err(e) => format!("cannot wait for {cmd:?}: {e}"),
    };
    let _ = child.kill();
    let _ = child.wait();
    Err(error)
}

/// Process `pid`'s command line (`self` for this one), its arguments
/// spaced; empty when it cannot be read.
pub fn command_line(pid: &str) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', " ").trim().to_string()
}

/// All a pipe gives, read on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Run `cmd`, its output appended to `log`; the error names the log.
pub fn logged(log: &Path, cmd: &mut Command) -> Result<()> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let f = std::fs::File::options().create(true).append(true).open(log).map_err(|e| e.to_string())?;
    let f2 = f.try_clone().map_err(|e| e.to_string())?;
    run(cmd.stdout(f).stderr(f2)).map_err(|e| format!("{e} (see {})", log.display()))
}

/// The SHA-256 of a file, as sha256sum prints it.
pub fn sha256_of(file: &Path) -> Result<String> {
    let out = output(Command::new("sha256sum").arg(file))?;
    Ok(out.split_whitespace().next().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_command_past_its_limit_is_killed_and_named() {
        let t = Instant::now();
        let e = output_within(Command::new("sleep").arg("30"), Duration::from_millis(300)).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10), "waited {:?}", t.elapsed());
        assert!(e.contains("\"sleep\" \"30\"") && e.contains("had not ended after 300ms"), "{e}");
        let e = run_within(Command::new("sleep").arg("30"), Duration::from_millis(300)).unwrap_err();
        assert!(e.contains("had not ended"), "{e}");
    }

    #[test]
    fn a_command_within_its_limit_gives_its_output_or_its_error() {
        let limit = Duration::from_secs(30);
        // More than a pipe holds, on both pipes: neither may stop the child.
        let big = "head -c 200000 /dev/zero | tr '\\0' x; head -c 200000 /dev/zero >&2";
        let out = output_within(Command::new("sh").args(["-c", big]), limit).unwrap();
        assert_eq!(out.len(), 200_000);
        let e = output_within(Command::new("sh").args(["-c", "echo why >&2; exit 3"]), limit).unwrap_err();
        assert!(e.contains("exit status: 3") && e.ends_with("why"), "{e}");
        assert!(run_within(Command::new("true").stdout(Stdio::null()), limit).is_ok());
    }
}
