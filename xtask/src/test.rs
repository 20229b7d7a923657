//! `cargo xtask test`: everything, in order of cost, each step's time said:
//! set-up and plugin build, formatting and lints, the import rules, a
//! SPANK-only build without the Slurm source tree, unit and property tests,
//! then the symbol check and the real-cluster tests (marked #[ignore] so
//! that a plain `cargo test` never needs root or a cluster). It ends with
//! one line that counts every test.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use testcluster::process::run;

use crate::{architecture, setup, Result};

pub fn run_all(root: &Path) -> Result<()> {
    let t = Instant::now();
    setup::build_plugins(root)?;
    eprintln!("xtask: set-up and plugin build took {:.1?}", t.elapsed());
    let tree = setup::source_cache(root).join(setup::SLURM_SRC_NAME);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let cargo_in = |tree: &Path| {
        let mut c = Command::new(&cargo);
        c.current_dir(root).env("SLURM_SRC_DIR", tree);
        c
    };

    let t = Instant::now();
    run(Command::new(&cargo).current_dir(root).args(["fmt", "--all", "--check"]))
        .map_err(|e| format!("{e}: the tree is not formatted as rustfmt.toml says; run `cargo fmt --all`"))?;
    run(cargo_in(&tree).args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))
        .map_err(|e| format!("{e}: clippy has warnings (the workspace denies them)"))?;
    eprintln!("xtask: cargo fmt --check and clippy took {:.1?}", t.elapsed());

    let t = Instant::now();
    architecture::check(root).map_err(|broken| format!("the import rules are broken:\n  {}", broken.join("\n  ")))?;
    // The SPANK room needs the public headers only: prove it with a tree
    // that does not exist.
    run(cargo_in(Path::new("/nonexistent-slurm-source-tree")).args([
        "build",
        "-p",
        "slurm",
        "--no-default-features",
        "--features",
        "spank",
    ]))
    .map_err(|e| format!("{e}: a SPANK-only build must not need the Slurm source tree"))?;
    eprintln!("xtask: import rules and the SPANK-only build took {:.1?}", t.elapsed());

    let mut total = TestCounts::default();
    let t = Instant::now();
    let unit = run_tests(cargo_in(&tree).args(["test", "--workspace"]));
    eprintln!("xtask: unit and property tests took {:.1?}", t.elapsed());
    total.add(unit?);
    let t = Instant::now();
    let cluster =
        run_tests(cargo_in(&tree).args(["test", "-p", "cluster-tests", "--", "--ignored", "--test-threads=1"]));
    eprintln!("xtask: symbol check and cluster tests took {:.1?}", t.elapsed());
    total.add(cluster?);
    // One closing line for the whole run (cargo's last line is often a
    // doc-test block with nothing in it).
    println!("tests: {} passed, {} failed", total.passed, total.failed);
    Ok(())
}

#[derive(Default)]
struct TestCounts {
    passed: u64,
    failed: u64,
}

impl TestCounts {
    fn add(&mut self, other: TestCounts) {
        self.passed += other.passed;
        self.failed += other.failed;
    }
}

/// Run `cargo test`, echoing its output, and add up its "test result:" lines.
fn run_tests(cmd: &mut Command) -> Result<TestCounts> {
    use std::io::{BufRead, BufReader};
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let mut counts = TestCounts::default();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test result: ") {
            for part in rest.split([';', '.']) {
                let mut words = part.split_whitespace();
                if let (Some(n), Some(what)) = (words.next().and_then(|n| n.parse::<u64>().ok()), words.next()) {
                    match what {
                        "passed" => counts.passed += n,
                        "failed" => counts.failed += n,
                        _ => {}
                    }
                }
            }
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(counts)
    } else {
        println!("tests: {} passed, {} failed", counts.passed, counts.failed.max(1));
        Err(format!("{cmd:?} failed: {status}"))
    }
}
