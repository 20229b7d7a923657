//! What `cargo xtask test` does beside its other work: the other releases
//! built one after the other (`cargo xtask test --slurm V --no-run`,
//! niced) while the host's tiers run; then, once they are built, a
//! release's compose tests run beside the releases' tiers (both mostly
//! wait on daemons; beside the builds they would slow them as much as
//! they save: the builds keep both cores busy).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::release_tests::{site_command, TIERS};
use crate::test::TestCounts;

/// The other releases' builds, on a thread of their own.
pub struct OtherReleases {
    thread: Option<JoinHandle<bool>>,
    log: PathBuf,
    started: Instant,
}

impl OtherReleases {
    /// Start building the other releases, in [`TIERS`]' order.
    pub fn start(root: &Path) -> OtherReleases {
        let log = root.join("target/xtask-compile-releases.log");
        let (root, out) = (root.to_path_buf(), log.clone());
        let thread = std::thread::Builder::new().name("beside".into()).spawn(move || build_all(&root, &out));
        let thread = thread.map_err(|e| eprintln!("xtask: cannot build the other releases beside: {e}")).ok();
        OtherReleases { thread, log, started: Instant::now() }
    }

    /// Wait for the builds; whether every one went through. A build that
    /// failed is said with its log: its tier's own run builds it again in
    /// the foreground, to stop on the same error.
    pub fn wait(self) -> bool {
        let built = self.thread.map(JoinHandle::join).is_some_and(|r| r.unwrap_or(false));
        if built {
            eprintln!("xtask: the other releases' builds, beside them, took {:.1?}", self.started.elapsed());
        } else {
            eprintln!("xtask: the other releases' builds beside them failed; see {}", self.log.display());
        }
        built
    }
}

/// Build each release in turn, each to the end even if another failed.
fn build_all(root: &Path, log: &Path) -> bool {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("xtask: cannot build the other releases beside: {e}");
            return false;
        }
    };
    // This run's builds only, each appended.
    let _ = File::create(log);
    let mut built = true;
    for tier in TIERS {
        let status = File::options().append(true).open(log).and_then(|out| {
            let err = out.try_clone()?;
            Command::new("nice")
                .args(["-n", "10"])
                .arg(&exe)
                .args(["test", "--slurm", tier.version, "--no-run"])
                .current_dir(root)
                .stdout(out)
                .stderr(err)
                .status()
        });
        match status {
            Ok(s) if s.success() => {}
            Ok(_) => built = false,
            Err(e) => {
                eprintln!("xtask: cannot build Slurm {} beside: {e}", tier.version);
                built = false;
            }
        }
    }
    built
}

/// A release's compose tests, running beside, their output in a log.
struct SiteRun {
    version: &'static str,
    log: PathBuf,
    child: Child,
    started: Instant,
}

/// The compose tests of every built release that has some, running beside.
pub struct Sites(Vec<SiteRun>);

impl Sites {
    /// Start them (none if `built` is false: each tier's run then builds
    /// its release and runs its compose tests itself).
    pub fn start(root: &Path, built: bool) -> Sites {
        let mut runs = Vec::new();
        for tier in TIERS.iter().filter(|_| built) {
            match start_site(root, tier.version) {
                Ok(Some(run)) => runs.push(run),
                Ok(None) => {}
                Err(e) => eprintln!("xtask: cannot start Slurm {}'s compose tests beside: {e}", tier.version),
            }
        }
        Sites(runs)
    }

    /// Whether `version`'s compose tests run here (its tier's run skips them).
    pub fn has(&self, version: &str) -> bool {
        self.0.iter().any(|r| r.version == version)
    }

    /// Wait for each; print its output and add its counts to `total`.
    pub fn finish(self, total: &mut TestCounts) {
        for mut site in self.0 {
            let status = site.child.wait();
            let text = std::fs::read_to_string(&site.log).unwrap_or_default();
            println!("xtask: Slurm {}'s compose site tests, run beside (log: {}):", site.version, site.log.display());
            let mut counts = TestCounts::default();
            for line in text.lines() {
                println!("{line}");
                counts.count(line);
            }
            // One failure at least, even if cargo stopped before counting.
            match status {
                Ok(s) if s.success() => {}
                Ok(s) => {
                    println!("xtask: Slurm {}'s compose site tests failed ({s})", site.version);
                    counts.failed = counts.failed.max(1);
                }
                Err(e) => {
                    println!("xtask: cannot wait for Slurm {}'s compose site tests: {e}", site.version);
                    counts.failed = counts.failed.max(1);
                }
            }
            eprintln!(
                "xtask: Slurm {}'s compose site tests, beside, took {:.1?}",
                site.version,
                site.started.elapsed()
            );
            total.add(counts);
        }
    }
}

/// Start `version`'s compose tests, their output to a log of their own.
fn start_site(root: &Path, version: &'static str) -> crate::Result<Option<SiteRun>> {
    let Some(mut cmd) = site_command(root, version)? else { return Ok(None) };
    let log = root.join(format!("target/xtask-site-{version}.log"));
    let out = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let child = cmd.stdout(out).stderr(err).spawn().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    Ok(Some(SiteRun { version, log, child, started: Instant::now() }))
}
