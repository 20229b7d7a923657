//! `cargo test` and `cargo nextest run` as xtask runs them: on this machine
//! against the host's Slurm source tree, their output echoed and their
//! closing lines counted, for the host's tests, the releases' tiers and the
//! lanes beside them.

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

#[derive(Default, Debug, PartialEq)]
pub(crate) struct TestCounts {
    pub(crate) passed: u64,
    pub(crate) failed: u64,
}

impl TestCounts {
    pub(crate) fn add(&mut self, other: TestCounts) {
        self.passed += other.passed;
        self.failed += other.failed;
    }

    /// Add what one of cargo test's "test result:" lines counts, or
    /// nextest's "Summary" line (`Summary [ 298.1s] 89 tests run: 87
    /// passed, 1 failed, 1 timed out, 0 skipped`: a test timed out failed).
    pub(crate) fn count(&mut self, line: &str) {
        let rest = match line.strip_prefix("test result: ") {
            Some(rest) => rest,
            None => match line.trim_start().strip_prefix("Summary [").and_then(|s| s.split_once(" run: ")) {
                Some((_, rest)) => rest,
                None => return,
            },
        };
        for part in rest.split([';', '.', ',']) {
            let mut words = part.split_whitespace();
            if let (Some(n), Some(what)) = (words.next().and_then(|n| n.parse::<u64>().ok()), words.next()) {
                match what {
                    "passed" => self.passed += n,
                    "failed" | "timed" => self.failed += n,
                    _ => {}
                }
            }
        }
    }
}

/// Run `cargo test`, echoing its output, and add up its "test result:" lines
/// (with `--no-fail-fast`, so that one run names every failing test).
pub(crate) fn run_tests(cmd: &mut Command) -> Result<TestCounts> {
    run_counted(cmd, Said::Stdout)
}

/// `cargo nextest run` of the real-cluster tests (`#[ignore]`d) that
/// `filter` selects (a nextest filterset), `jobs` at a time, each in a
/// process of its own: they mostly wait on daemons, and each cluster or
/// site takes ports, networks and names no other live one holds
/// (testcluster's leases). nextest says each test's time, and, unlike
/// cargo test, runs tests of several files at once.
pub(crate) fn nextest(mut cargo: Command, filter: &str, jobs: usize) -> Command {
    cargo.args(["nextest", "run", "-p", "cluster-tests", "--no-fail-fast", "--run-ignored", "only"]);
    cargo.args(["--test-threads", &jobs.to_string(), "-E", filter]);
    cargo
}

/// nextest's filterset of these tests, by exact name.
pub(crate) fn exact(names: &[&str]) -> String {
    names.iter().map(|n| format!("test(={n})")).collect::<Vec<_>>().join(" | ")
}

/// Run `cargo nextest run`, echoing what it says (on stderr), and count its
/// "Summary" line.
pub(crate) fn run_nextest(cmd: &mut Command) -> Result<TestCounts> {
    run_counted(cmd, Said::Stderr).map_err(|e| {
        format!("{e} (cargo-nextest comes with this kind of machine; if cargo says it has no such command: `cargo install cargo-nextest --locked`)")
    })
}

/// Where a test runner says its closing lines.
#[derive(Clone, Copy, PartialEq)]
enum Said {
    Stdout,
    Stderr,
}

fn run_counted(cmd: &mut Command, said: Said) -> Result<TestCounts> {
    use std::io::{BufRead, BufReader, Read};
    let piped = std::process::Stdio::piped;
    let mut child = match said {
        Said::Stdout => cmd.stdout(piped()),
        Said::Stderr => cmd.stderr(piped()),
    }
    .spawn()
    .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let out: Box<dyn Read> = match said {
        Said::Stdout => Box::new(child.stdout.take().expect("piped")),
        Said::Stderr => Box::new(child.stderr.take().expect("piped")),
    };
    let mut counts = TestCounts::default();
    for line in BufReader::new(out).lines() {
        let line = line.map_err(|e| e.to_string())?;
        match said {
            Said::Stdout => println!("{line}"),
            Said::Stderr => eprintln!("{line}"),
        }
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

#[cfg(test)]
mod tests {
    use super::TestCounts;

    fn counted(lines: &[&str]) -> TestCounts {
        let mut c = TestCounts::default();
        for l in lines {
            c.count(l);
        }
        c
    }

    #[test]
    fn cargo_tests_and_nextests_closing_lines_are_counted() {
        let cargo = "test result: FAILED. 12 passed; 2 failed; 3 ignored; 0 measured; 0 filtered out; finished in 1.2s";
        assert_eq!(counted(&[cargo]), TestCounts { passed: 12, failed: 2 });
        let nextest = "     Summary [ 298.143s] 89 tests run: 86 passed, 2 failed, 1 timed out, 0 skipped";
        assert_eq!(counted(&[nextest]), TestCounts { passed: 86, failed: 3 });
        assert_eq!(
            counted(&["     Summary [   5.020s] 1 test run: 1 passed, 88 skipped"]),
            TestCounts { passed: 1, failed: 0 }
        );
        // A test's own output naming a summary is not one.
        assert_eq!(counted(&["the Summary [of the run] said 3 passed", "PASS [ 5.0s] x"]), TestCounts::default());
    }
}
