//! What `cargo xtask test` does beside the host's tiers: the other
//! releases built one after the other (`cargo xtask test --slurm V
//! --no-run`, niced), and a release's compose tests run as soon as it is
//! built, while the next builds (they wait on the site's daemons, mostly).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::release_tests::{site_command, TIERS};
use crate::test::TestCounts;

/// A release's compose tests, run beside.
struct SiteRun {
    version: &'static str,
    log: PathBuf,
    child: Child,
    started: Instant,
}

/// What the thread beside did: whether every build went through, and the
/// compose tests it started.
struct Done {
    built: bool,
    sites: Vec<SiteRun>,
}

pub struct OtherReleases {
    thread: Option<JoinHandle<Done>>,
    log: PathBuf,
    started: Instant,
}

impl OtherReleases {
    /// Start building the other releases (in [`TIERS`]' order), each
    /// one's compose tests started once it is built.
    pub fn start(root: &Path) -> OtherReleases {
        let log = root.join("target/xtask-compile-releases.log");
        let (root, out) = (root.to_path_buf(), log.clone());
        let thread =
            std::thread::Builder::new().name("beside".into()).spawn(move || build_and_start_sites(&root, &out));
        let thread = thread.map_err(|e| eprintln!("xtask: cannot build the other releases beside: {e}")).ok();
        OtherReleases { thread, log, started: Instant::now() }
    }

    /// Wait for the builds and the compose tests started beside; print
    /// each one's output, add its counts to `total`. The releases whose
    /// compose tests ran (their tier's run skips them); a build that failed
    /// is said with its log, and its tier's own run builds it again in the
    /// foreground, to stop on the same error.
    pub fn wait(self, total: &mut TestCounts) -> Vec<&'static str> {
        let Some(Ok(done)) = self.thread.map(JoinHandle::join) else {
            eprintln!("xtask: the other releases' builds beside stopped; see {}", self.log.display());
            return Vec::new();
        };
        if done.built {
            eprintln!("xtask: the other releases' builds, beside them, took {:.1?}", self.started.elapsed());
        } else {
            eprintln!("xtask: the other releases' builds beside them failed; see {}", self.log.display());
        }
        let mut ran = Vec::new();
        for mut site in done.sites {
            let status = site.child.wait();
            let text = std::fs::read_to_string(&site.log).unwrap_or_default();
            println!("xtask: Slurm {}'s compose site tests, run beside (log: {}):", site.version, site.log.display());
            let mut counts = TestCounts::default();
            for line in text.lines() {
                println!("{line}");
                counts.count(line);
            }
            match status {
                Ok(s) if s.success() => {}
                // One failure at least, even if cargo stopped before counting.
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
            ran.push(site.version);
        }
        ran
    }
}

/// Build each release in turn; start its compose tests once it is built.
fn build_and_start_sites(root: &Path, log: &Path) -> Done {
    let mut done = Done { built: true, sites: Vec::new() };
    // This run's builds only, each appended.
    let _ = File::create(log);
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("xtask: cannot build the other releases beside: {e}");
            done.built = false;
            return done;
        }
    };
    for tier in TIERS {
        let built = File::options().create(true).append(true).open(log).and_then(|out| {
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
        match built {
            Ok(s) if s.success() => {}
            Ok(_) => {
                done.built = false;
                continue;
            }
            Err(e) => {
                eprintln!("xtask: cannot build Slurm {} beside: {e}", tier.version);
                done.built = false;
                continue;
            }
        }
        match start_site(root, tier.version) {
            Ok(Some(site)) => done.sites.push(site),
            Ok(None) => {}
            Err(e) => eprintln!("xtask: cannot start Slurm {}'s compose tests beside: {e}", tier.version),
        }
    }
    done
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
