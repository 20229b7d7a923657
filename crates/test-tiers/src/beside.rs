//! What `cargo xtask test` does beside its other work: the other releases
//! built one after the other (`cargo xtask test --slurm V --no-run`,
//! niced) while the host's tiers run; then, as soon as they are built, a
//! release's compose tests, beside the rest of the host's tiers and then
//! the releases' (all mostly wait on daemons; beside the builds they would
//! slow them as much as they save: the builds keep both cores busy). CI's
//! short fault campaign, on the host's release, starts once the host's
//! compose tests are done.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::cargo_tests::TestCounts;
use crate::release_tests::{site_command, TIERS};

/// The other releases' builds, on a thread of their own, which then
/// starts what runs beside the tiers ([`Sites`]).
pub struct OtherReleases {
    thread: Option<JoinHandle<(bool, Sites)>>,
    /// Cleared when the host's tiers stop early: then no site is started.
    go_on: Arc<AtomicBool>,
    log: PathBuf,
}

impl OtherReleases {
    /// Start building the other releases, in [`TIERS`]' order, and once
    /// they are built, their compose tests: the host's compose tests and
    /// evaluations still had about nine minutes to run when the builds were
    /// done, and the sites waited for them.
    pub fn start(root: &Path) -> OtherReleases {
        let log = root.join("target/xtask-compile-releases.log");
        let (root, out) = (root.to_path_buf(), log.clone());
        let go_on = Arc::new(AtomicBool::new(true));
        let going = Arc::clone(&go_on);
        let thread = std::thread::Builder::new().name("beside".into()).spawn(move || {
            let t = Instant::now();
            let built = build_all(&root, &out);
            if !going.load(Ordering::SeqCst) {
                return (built, Sites(Vec::new()));
            }
            eprintln!("xtask: the other releases' builds, beside, took {:.1?}; their sites start", t.elapsed());
            (built, Sites::start(&root, built))
        });
        let thread = thread.map_err(|e| eprintln!("xtask: cannot build the other releases beside: {e}")).ok();
        OtherReleases { thread, go_on, log }
    }

    /// Wait for the builds, and what was started beside once they were
    /// done (the builds' thread said when): nothing if a build failed or
    /// the thread could not run; each tier's own run then builds its
    /// release and runs its compose tests itself. A build that failed is
    /// said with its log: its tier's own run builds it again in the
    /// foreground, to stop on the same error.
    pub fn wait(mut self) -> Sites {
        let joined = self.thread.take().map(JoinHandle::join);
        let (built, sites) = match joined {
            Some(Ok(done)) => done,
            // No thread, or it panicked: no site was started.
            _ => (false, Sites(Vec::new())),
        };
        if !built {
            eprintln!("xtask: the other releases' builds beside them failed; see {}", self.log.display());
        }
        sites
    }
}

/// The host's tiers stopped early (an error returned past [`OtherReleases::wait`]):
/// no site is started any more, and what was started is waited for, its
/// output printed, so that nothing of this run is left running.
impl Drop for OtherReleases {
    fn drop(&mut self) {
        let Some(thread) = self.thread.take() else { return };
        self.go_on.store(false, Ordering::SeqCst);
        eprintln!("xtask: waiting for the other releases' builds beside to end");
        if let Ok((_, sites)) = thread.join() {
            sites.finish(&mut TestCounts::default());
        }
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

/// How a lane's output is counted: a test each of cargo's, or the whole
/// lane as one (a campaign: it passes with no violation).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counted {
    Tests,
    AsOne,
}

/// A command running beside, its output in a log.
struct Lane {
    what: String,
    /// The release whose compose tests it runs, if it runs some.
    release: Option<&'static str>,
    log: PathBuf,
    child: Child,
    started: Instant,
    counted: Counted,
}

/// What runs beside the releases' tiers: the compose tests of every built
/// release that has some; and CI's fault campaign, on the host's release,
/// from the end of the host's compose tests on ([`Sites::campaign`]).
pub struct Sites(Vec<Lane>);

/// CI's fault campaign (issue 57): short, on the host's release, its seed
/// fixed; `cargo xtask chaos` runs longer ones on demand.
pub const CI_CAMPAIGN: [&str; 5] = ["chaos", "--minutes", "4", "--seed", "3"];

impl Sites {
    /// Start them (none if `built` is false: each tier's run then builds
    /// its release and runs its compose tests itself).
    pub fn start(root: &Path, built: bool) -> Sites {
        let mut lanes = Vec::new();
        for tier in TIERS.iter().filter(|_| built) {
            match start_site(root, tier.version) {
                Ok(Some(lane)) => lanes.push(lane),
                Ok(None) => {}
                Err(e) => eprintln!("xtask: cannot start Slurm {}'s compose tests beside: {e}", tier.version),
            }
        }
        Sites(lanes)
    }

    /// Start CI's campaign: it needs the host's release only, so it runs
    /// beside the host's evaluations and the other releases' builds, and
    /// is no longer the tail of the run (it waited for those builds, about
    /// 35 minutes, and then took 14 more).
    pub fn campaign(root: &Path) -> Sites {
        match start_campaign(root) {
            Ok(lane) => Sites(vec![lane]),
            Err(e) => {
                eprintln!("xtask: cannot start the fault campaign beside: {e}");
                Sites(Vec::new())
            }
        }
    }

    /// Whether `version`'s compose tests run here (its tier's run skips them).
    pub fn has(&self, version: &str) -> bool {
        self.0.iter().any(|l| l.release == Some(version))
    }

    /// Wait for each; print its output and add its counts to `total`.
    pub fn finish(mut self, total: &mut TestCounts) {
        self.finish_lanes(total);
    }

    fn finish_lanes(&mut self, total: &mut TestCounts) {
        for mut lane in std::mem::take(&mut self.0) {
            let status = lane.child.wait();
            let text = std::fs::read_to_string(&lane.log).unwrap_or_default();
            println!("xtask: {}, run beside (log: {}):", lane.what, lane.log.display());
            let mut counts = TestCounts::default();
            for line in text.lines() {
                println!("{line}");
                if lane.counted == Counted::Tests {
                    counts.count(line);
                }
            }
            let passed = match status {
                Ok(s) if s.success() => true,
                Ok(s) => {
                    println!("xtask: {} failed ({s})", lane.what);
                    false
                }
                Err(e) => {
                    println!("xtask: cannot wait for {}: {e}", lane.what);
                    false
                }
            };
            match (lane.counted, passed) {
                // One failure at least, even if cargo stopped before counting.
                (Counted::Tests, false) => counts.failed = counts.failed.max(1),
                (Counted::Tests, true) => {}
                (Counted::AsOne, true) => counts.passed += 1,
                (Counted::AsOne, false) => counts.failed += 1,
            }
            eprintln!("xtask: {}, beside, took {:.1?}", lane.what, lane.started.elapsed());
            total.add(counts);
        }
    }
}

/// A run that stops early (an error returned past its sites) still waits
/// for what it started, its output printed: nothing of it is left running.
impl Drop for Sites {
    fn drop(&mut self) {
        self.finish_lanes(&mut TestCounts::default());
    }
}

/// Start `cmd` beside, its output to `log`.
fn start(
    mut cmd: Command,
    what: String,
    release: Option<&'static str>,
    log: PathBuf,
    counted: Counted,
) -> crate::Result<Lane> {
    let out = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let child = cmd.stdout(out).stderr(err).spawn().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    Ok(Lane { what, release, log, child, started: Instant::now(), counted })
}

/// Start `version`'s compose tests, their output to a log of their own.
fn start_site(root: &Path, version: &'static str) -> crate::Result<Option<Lane>> {
    let Some(cmd) = site_command(root, version)? else { return Ok(None) };
    let log = root.join(format!("target/xtask-site-{version}.log"));
    let what = format!("Slurm {version}'s compose site tests");
    start(cmd, what, Some(version), log, Counted::Tests).map(Some)
}

/// Start CI's campaign: this xtask's own `chaos` command.
fn start_campaign(root: &Path) -> crate::Result<Lane> {
    let exe = std::env::current_exe().map_err(|e| format!("this xtask's path: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(CI_CAMPAIGN).current_dir(root);
    let what = format!("the fault campaign `cargo xtask {}`", CI_CAMPAIGN.join(" "));
    start(cmd, what, None, root.join("target/xtask-chaos.log"), Counted::AsOne)
}
