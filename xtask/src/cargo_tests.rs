//! `cargo test` as xtask runs it: on this machine against the host's Slurm
//! source tree, its output echoed and its "test result:" lines counted, for
//! the host's tests, the releases' tiers and the lanes beside them.

use std::path::Path;
use std::process::Command;

use crate::Result;

/// cargo on this machine, in the workspace, built against the host's
/// Slurm source tree.
pub(crate) fn cargo_command(root: &Path) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root).env("SLURM_SRC_DIR", provision::host::source_tree(root));
    c
}

#[derive(Default)]
pub(crate) struct TestCounts {
    pub(crate) passed: u64,
    pub(crate) failed: u64,
}

impl TestCounts {
    pub(crate) fn add(&mut self, other: TestCounts) {
        self.passed += other.passed;
        self.failed += other.failed;
    }

    /// Add what one of cargo test's "test result:" lines counts.
    pub(crate) fn count(&mut self, line: &str) {
        let Some(rest) = line.strip_prefix("test result: ") else { return };
        for part in rest.split([';', '.']) {
            let mut words = part.split_whitespace();
            if let (Some(n), Some(what)) = (words.next().and_then(|n| n.parse::<u64>().ok()), words.next()) {
                match what {
                    "passed" => self.passed += n,
                    "failed" => self.failed += n,
                    _ => {}
                }
            }
        }
    }
}

/// Run `cargo test`, echoing its output, and add up its "test result:" lines
/// (with `--no-fail-fast`, so that one run names every failing test).
pub(crate) fn run_tests(cmd: &mut Command) -> Result<TestCounts> {
    use std::io::{BufRead, BufReader};
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let mut counts = TestCounts::default();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        counts.count(&line);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(counts)
    } else {
        println!("tests: {} passed, {} failed", counts.passed, counts.failed.max(1));
        Err(format!("{cmd:?} failed: {status}"))
    }
}
