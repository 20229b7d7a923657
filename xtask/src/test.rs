//! `cargo xtask test`: everything, in order of cost, each step's time said:
//! set-up and plugin build, formatting and lints, the import rules, a
//! SPANK-only build without the Slurm source tree, unit and property tests,
//! then the symbol check, the real-cluster tests and the compose site's
//! (marked #[ignore] so that a plain `cargo test` never needs root, Docker
//! or a cluster), the other releases' tiers (release_tests), then the
//! evaluation commands' short forms. It ends with one line that counts every test.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use testcluster::process::run;

use crate::{architecture, Result};

/// cargo on this machine, in the workspace, built against the host's
/// Slurm source tree.
pub(crate) fn cargo_command(root: &Path) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root).env("SLURM_SRC_DIR", provision::host::source_tree(root));
    c
}

/// One of the evaluation commands' short forms, run as a test.
pub type Run = Box<dyn Fn() -> Result<()>>;

/// Every test; `evaluations` last, as main.rs lists them (the commands'
/// short forms, which this file does not import).
pub fn run_all(root: &Path, evaluations: Vec<(&'static str, Run)>) -> Result<()> {
    let t = Instant::now();
    provision::build::build_plugins(root)?;
    // The compose site's tests make its image with debootstrap.
    provision::apt::ensure(&["debootstrap", "docker-compose"])?;
    eprintln!("xtask: set-up and plugin build took {:.1?}", t.elapsed());
    let tree = provision::host::source_tree(root);
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
    let unit = run_tests(cargo_in(&tree).args(["test", "--workspace", "--no-fail-fast"]));
    eprintln!("xtask: unit and property tests took {:.1?}", t.elapsed());
    total.add(unit?);
    let t = Instant::now();
    // The other releases' Slurm, images, plugins and tests are built
    // meanwhile: the cluster tests mostly wait on daemons, and a build
    // container yields the CPUs to them (`Container::command`).
    let beside = OtherReleases::compile(root);
    let cluster = run_tests(cargo_in(&tree).args([
        "test",
        "-p",
        "cluster-tests",
        "--no-fail-fast",
        "--",
        "--ignored",
        "--test-threads=1",
    ]));
    eprintln!("xtask: symbol check and cluster tests took {:.1?}", t.elapsed());
    beside.wait();
    total.add(cluster?);
    // The other releases: each built and tested in its own root.
    for tier in crate::release_tests::TIERS {
        let t = Instant::now();
        let other = crate::release_tests::run(root, tier.version);
        eprintln!("xtask: Slurm {}'s tests took {:.1?}", tier.version, t.elapsed());
        total.add(other?);
    }
    let t = Instant::now();
    let evaluations = run_evaluations(evaluations);
    eprintln!("xtask: the evaluation commands' short forms took {:.1?}", t.elapsed());
    total.add(evaluations?);
    // One closing line for the whole run (cargo's last line is often a
    // doc-test block with nothing in it).
    println!("tests: {} passed, {} failed", total.passed, total.failed);
    Ok(())
}

/// `cargo xtask test --slurm V --no-run` of every other release, one after
/// the other, as a child process, its output in a log of its own (not
/// among the tests' lines).
struct OtherReleases {
    child: Option<std::process::Child>,
    log: std::path::PathBuf,
    started: Instant,
}

impl OtherReleases {
    fn compile(root: &Path) -> OtherReleases {
        let log = root.join("target/xtask-compile-releases.log");
        let versions: Vec<&str> = crate::release_tests::TIERS.iter().map(|t| t.version).collect();
        let spawned = std::env::current_exe().map_err(|e| e.to_string()).and_then(|exe| {
            let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
            let err = out.try_clone().map_err(|e| e.to_string())?;
            // One shell runs them in turn, each to the end even if another failed.
            let script: String = versions
                .iter()
                .map(|v| format!("'{}' test --slurm {v} --no-run || status=1; ", exe.display()))
                .collect();
            Command::new("nice")
                .args(["-n", "10", "sh", "-c", &format!("status=0; {script}exit $status")])
                .current_dir(root)
                .stdout(out)
                .stderr(err)
                .spawn()
                .map_err(|e| e.to_string())
        });
        let child = spawned
            .map_err(|e| eprintln!("xtask: cannot build Slurm {}'s tiers beside: {e}", versions.join(", ")))
            .ok();
        OtherReleases { child, log, started: Instant::now() }
    }

    /// Wait for it; when it failed, say where its log is: the tier's own
    /// run builds again in the foreground and stops on the same error.
    fn wait(self) {
        let Some(mut child) = self.child else { return };
        match child.wait() {
            Ok(s) if s.success() => {
                eprintln!("xtask: the other releases' builds, beside them, took {:.1?}", self.started.elapsed())
            }
            Ok(s) => {
                eprintln!("xtask: the other releases' builds beside them failed ({s}); see {}", self.log.display())
            }
            Err(e) => eprintln!("xtask: cannot wait for the other releases' builds: {e}"),
        }
    }
}

/// `cargo xtask test --slurm V`: release V's tier alone, after the host's
/// set-up (its compose test runs from the host).
pub fn run_release(root: &Path, version: &str) -> Result<()> {
    provision::build::build_plugins(root)?;
    provision::apt::ensure(&["debootstrap", "docker-compose"])?;
    let counts = crate::release_tests::run(root, version)?;
    println!("tests: {} passed, {} failed", counts.passed, counts.failed);
    Ok(())
}

/// The evaluation commands in their short forms, each a test, in order.
fn run_evaluations(runs: Vec<(&'static str, Run)>) -> Result<TestCounts> {
    let mut counts = TestCounts::default();
    let mut failed = Vec::new();
    for (name, f) in runs {
        println!("evaluation {name}:");
        match f() {
            Ok(()) => {
                println!("evaluation {name} ... ok");
                counts.passed += 1;
            }
            Err(e) => {
                println!("evaluation {name} ... FAILED: {e}");
                counts.failed += 1;
                failed.push(name);
            }
        }
    }
    if failed.is_empty() {
        Ok(counts)
    } else {
        println!("tests: {} passed, {} failed", counts.passed, counts.failed);
        Err(format!("evaluation commands failed: {}", failed.join(", ")))
    }
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
