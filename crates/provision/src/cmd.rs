//! Running a command: for its status, for its output, or with its output
//! appended to a log that the error names (the long builds: images, Slurm).

use std::path::Path;
use std::process::Command;

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
