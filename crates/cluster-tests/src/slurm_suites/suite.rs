//! One of Slurm's own tests against one cluster: each cluster gets a private
//! copy of the source tree's testsuite set up for local-config mode; a test
//! runs in its own process group under a time limit, and after it the
//! cluster's jobs are cancelled and any configuration file it changed
//! (expect tests append to slurm.conf and reconfigure) is put back.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testcluster::process::run;
use testcluster::{wait, Cluster, SlurmRelease};

use super::host::{Host, Result};
use super::list::Kind;

/// What the suites of every release need beyond Slurm: expect; pytest with
/// pexpect (eight test files), pytest-timeout and requests (24.11's atf
/// imports it); sudo (a test runs `sudo -u SlurmUser`); tini (see
/// `Side::run`). All Debian's, so the python is /usr/bin/python3 whatever
/// else is first in PATH. Another release's build image has them already
/// (`BUILD_PACKAGES`).
pub const PACKAGES: &[&str] =
    &["expect", "python3-pytest", "python3-pexpect", "python3-pytest-timeout", "python3-requests", "sudo", "tini"];

/// What 22.05's python suite needs besides: `py` (its conftest imports
/// `py.io`; trixie has no such package, and 24.11 does not use it).
const PACKAGES_22_05: &[&str] = &["python3-py"];

/// What the python suite of SchedMD's master (26.05's branch point)
/// imports besides: its atf diffs and patches JSON, and reads YAML and XML.
pub const PACKAGES_MASTER_SUITE: &[&str] =
    &["python3-jsondiff", "python3-jsonpatch", "python3-yaml", "python3-xmltodict"];

/// Where the tests find "Slurm's install": Debian's binaries, with its
/// libraries where a `make install` would put them (tests compile against
/// `<prefix>/lib/slurm/libslurmfull.so`).
const PREFIX: &str = "/tmp/malleable-slurm-tests/prefix";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed,
    Skipped,
    TimedOut,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
            Status::TimedOut => "TIMEOUT",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    pub secs: f64,
    /// The test's first error line, or its skip message.
    pub why: String,
}

/// The host's part, once: packages (slurmdbd and MariaDB too when tests
/// need `accounting`), the install prefix, and sudo keeping the variables
/// that point the clients at a test cluster.
pub fn prepare_host(host: &Host, release: &SlurmRelease, accounting: bool) -> Result<()> {
    (host.ensure)(PACKAGES)?;
    if accounting {
        let missing: Vec<&str> =
            testcluster::accounting::PACKAGES.iter().copied().filter(|p| !release_ships(release, p)).collect();
        (host.ensure)(&missing)?;
    }
    if release.version == "22.05" {
        (host.ensure)(PACKAGES_22_05)?;
    }
    if release.from_source() {
        (host.ensure)(PACKAGES_MASTER_SUITE)?;
    }
    let sudoers = Path::new("/etc/sudoers.d/malleable-slurm-tests");
    // 24.11's suite asks `sudo -ln` for "(ALL...) NOPASSWD: ALL" before it
    // runs anything as another user (root may anyway, but says it otherwise).
    let keep = "Defaults env_keep += \"SLURM_CONF SLURM_TESTSUITE_CONF SLURM_LOCAL_GLOBALS_FILE\"\n\
                root ALL=(ALL:ALL) NOPASSWD: ALL\n";
    if fs::read_to_string(sudoers).ok().as_deref() != Some(keep) {
        fs::write(sudoers, keep).map_err(|e| format!("cannot write {}: {e}", sudoers.display()))?;
        run(Command::new("chmod").args(["440", &sudoers.display().to_string()]))?;
    }
    let prefix = Path::new(PREFIX);
    fs::create_dir_all(prefix.join("lib")).map_err(|e| format!("cannot create {PREFIX}/lib: {e}"))?;
    for (link, target) in [
        ("bin", "/usr/bin"),
        ("include", "/usr/include"),
        ("lib/slurm", release.lib_dir),
        ("lib/libslurm.so", "/usr/lib/x86_64-linux-gnu/libslurm.so"),
    ] {
        let at = prefix.join(link);
        if fs::read_link(&at).ok().as_deref() != Some(Path::new(target)) {
            let _ = fs::remove_file(&at);
            std::os::unix::fs::symlink(target, &at).map_err(|e| format!("cannot link {}: {e}", at.display()))?;
        }
    }
    ensure_test_user()?;
    copy_daemons(&prefix.join("sbin"))
}

/// Whether Debian's package `p` is, for `release`, one of SchedMD's
/// packaging the release's images install (`slurmdbd`: slurm-smd-slurmdbd).
fn release_ships(release: &SlurmRelease, p: &str) -> bool {
    release.from_source() && provision::schedmd::SITE_PACKAGES.contains(&format!("slurm-smd-{p}").as_str())
}

/// The user, other than root, that the expect suite's tests of who may do
/// what act as (`testsuite_user`): a system account without a home, made
/// once.
const TEST_USER: &str = "malleable-atf";

fn ensure_test_user() -> Result<()> {
    if Command::new("id")
        .arg("-u")
        .arg(TEST_USER)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        return Ok(());
    }
    run(Command::new("useradd").args(["--system", "--no-create-home", "--shell", "/bin/sh", TEST_USER]))
}

/// Slurm's daemons the python suite starts in auto-config mode.
const DAEMONS: &[&str] = &["slurmctld", "slurmd", "slurmdbd", "slurmrestd", "sackd"];

/// Copies of the daemons Debian installed, in `sbin`: the python suite's
/// auto-config mode starts them from there and then knows them by
/// /proc/PID/exe, which names a link's target (Debian's are links through
/// /etc/alternatives), so with links it saw none running and started
/// Slurm again over one that was still stopping. A copy is made anew only
/// when Debian's differs (a running daemon's file cannot be rewritten).
fn copy_daemons(sbin: &Path) -> Result<()> {
    if fs::symlink_metadata(sbin).is_ok_and(|m| m.file_type().is_symlink()) {
        fs::remove_file(sbin).map_err(|e| format!("cannot remove the link {}: {e}", sbin.display()))?;
    }
    fs::create_dir_all(sbin).map_err(|e| format!("cannot create {}: {e}", sbin.display()))?;
    for daemon in DAEMONS {
        let installed = Path::new("/usr/sbin").join(daemon);
        let Ok(bytes) = fs::read(&installed) else { continue };
        let copy = sbin.join(daemon);
        if fs::read(&copy).ok().as_ref() != Some(&bytes) {
            let _ = fs::remove_file(&copy);
            fs::copy(&installed, &copy)
                .map_err(|e| format!("cannot copy {} to {}: {e}", installed.display(), copy.display()))?;
        }
    }
    Ok(())
}

/// Stop every process running a daemon copied under the prefix (what an
/// auto-config test started and left): SIGTERM, then SIGKILL after 15 s.
fn stop_prefix_daemons() {
    let sbin = Path::new(PREFIX).join("sbin");
    let running: Vec<i32> = fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| fs::read_link(e.path().join("exe")).is_ok_and(|exe| exe.starts_with(&sbin)))
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    testcluster::process::stop_processes(&running, "the auto-config test's daemons", Duration::from_secs(15));
}

/// One cluster and its copy of the testsuite.
pub struct Side {
    pub label: &'static str,
    /// Short name: its directory under the work and results directories.
    pub name: &'static str,
    pub cluster: Cluster,
    /// The copy of the source tree the tests run from (they write into it).
    tree: PathBuf,
    dir: PathBuf,
    /// The cluster's configuration directory.
    etc: PathBuf,
    /// Its configuration files as they were before any test.
    pristine: BTreeMap<PathBuf, Vec<u8>>,
}

impl Side {
    /// Set up `cluster`'s side under `work/<name>`, copying the host's
    /// configured source tree there the first time, with its suites (the
    /// tree's own, or those from SchedMD's repository put in its place).
    pub fn new(label: &'static str, name: &'static str, cluster: Cluster, host: &Host, work: &Path) -> Result<Side> {
        let dir = work.join(name);
        let tree = dir.join(host.source.file_name().ok_or("the source tree has no name")?);
        let suite = tree.join("testsuite");
        if !suite.join("expect").is_dir() {
            fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            run(Command::new("cp").arg("-a").arg(host.source).arg(&dir))?;
            if host.suites != host.source.join("testsuite") {
                for part in ["expect", "python"] {
                    let _ = fs::remove_dir_all(suite.join(part));
                    run(Command::new("cp").arg("-a").arg(host.suites.join(part)).arg(&suite))?;
                }
            }
        }
        // The copy's own build directory where the host's is inside its tree.
        let build =
            host.build.strip_prefix(host.source).map(|rel| tree.join(rel)).unwrap_or_else(|_| host.build.to_path_buf());
        let etc = cluster.conf_path().parent().ok_or("slurm.conf has no directory")?.to_path_buf();
        let conf = format!(
            "SlurmSourceDir={}\nSlurmBuildDir={}\nSlurmInstallDir={PREFIX}\nSlurmConfigDir={}\n",
            tree.display(),
            build.display(),
            etc.display(),
        );
        write(&dir.join("testsuite.conf"), conf.as_bytes())?;
        // Keep a failed test's files; no colours in the logs; the second
        // user the tests of permissions act as.
        let globals = format!(
            "set testsuite_colorize false\nset testsuite_cleanup_on_failure false\nset testsuite_user \"{TEST_USER}\"\n"
        );
        write(&dir.join("globals.local"), globals.as_bytes())?;
        let mut pristine = BTreeMap::new();
        for f in fs::read_dir(&etc).map_err(|e| format!("cannot read {}: {e}", etc.display()))? {
            let path = f.map_err(|e| e.to_string())?.path();
            if path.is_file() {
                let bytes = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                pristine.insert(path, bytes);
            }
        }
        Ok(Side { label, name, cluster, tree, dir, etc, pristine })
    }

    /// Run one test, its output in `log`, killed after `limit`; then tidy
    /// up. With `auto_config` (a python file only) the test starts Slurm
    /// itself on the cluster's configuration: the cluster's daemons are
    /// stopped before it, and whatever it leaves running after it.
    pub fn run(&self, kind: Kind, test: &str, auto_config: bool, limit: Duration, log: &Path) -> Result<Outcome> {
        let suite = self.tree.join("testsuite");
        if auto_config {
            self.cluster.stop_slurm();
            stop_prefix_daemons();
            // Each test starts with the database a new cluster has: a test
            // before it may have left it dropped (the suite's restore drops
            // it and, without a dump, makes none), and slurmdbd making it
            // itself dies on trixie's client library, which fails every
            // later test under both schedulers ("Slurmdbd is not running").
            if self.cluster.spec.accounting {
                testcluster::accounting::ensure_database(&self.cluster.dir)?;
            }
        }
        let mut cmd = match kind {
            Kind::Python => {
                // In auto-config mode the suite finds its daemons by
                // `pgrep -f 'slurmd -N n1'` and /proc/PID/exe, and waits for
                // every slurmctld and slurmd of the host to stop: any other
                // cluster on the host (the other side's, a cluster test's,
                // another release's container) fails it. In a PID namespace
                // of its own, with its own /proc, it sees only the daemons it
                // started, and they end with it. tini is the namespace's
                // init: it reaps what is orphaned there, as the host's init
                // would (node_features/helpers' test kills a slurmd and waits
                // for it to be gone, which a zombie never is).
                let mut c = if auto_config {
                    let mut c = Command::new("unshare");
                    c.args([
                        "--pid",
                        "--fork",
                        "--mount-proc",
                        "--kill-child",
                        "/usr/bin/tini",
                        "--",
                        "/usr/bin/python3",
                    ]);
                    c
                } else {
                    Command::new("/usr/bin/python3")
                };
                // Each side its own pytest temporary root: both sides' pytests
                // run as root at once, and each removes all but the newest
                // three of /tmp/pytest-of-root's numbered directories, the
                // other side's running test's among them (seen: a fixture's
                // FileNotFoundError under one side only).
                let basetemp = format!("--basetemp={}", self.dir.join("pytest").display());
                let mode = if auto_config { "--auto-config" } else { "--local-config" };
                c.current_dir(suite.join("python")).args([
                    "./run-tests-python",
                    mode,
                    "--timeout=300",
                    // The short summary of skips, failures and errors, each
                    // with its whole message (24.11's runner asks for none).
                    "-rsfE",
                    &basetemp,
                    test,
                ]);
                // 24.11's suite asks leave to change slurmdbd's own
                // configuration (22.05's has no such option).
                if auto_config && self.suite_takes("--allow-slurmdbd-modify") {
                    c.arg("--allow-slurmdbd-modify");
                }
                c
            }
            Kind::Expect => {
                let mut c = Command::new(suite.join("expect").join(test));
                c.current_dir(suite.join("expect"));
                c
            }
        };
        let out = fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        // What slurmctld says while the test runs goes into the test's log
        // when it fails: the daemons live in the command's container, gone
        // once the command is over.
        let ctld_log = self.cluster.log_dir().join("slurmctld.log");
        let ctld_from = fs::metadata(&ctld_log).map(|m| m.len()).unwrap_or(0);
        cmd.env("SLURM_CONF", self.cluster.conf_path())
            .env("SLURM_TESTSUITE_CONF", self.dir.join("testsuite.conf"))
            .env("SLURM_LOCAL_GLOBALS_FILE", self.dir.join("globals.local"))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own group, so that a timeout stops whatever it started.
            .process_group(0);
        let t = Instant::now();
        let mut child = cmd.spawn().map_err(|e| format!("cannot run {kind:?} {test}: {e}"))?;
        let code = loop {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                break Some(status.code().unwrap_or(1));
            }
            if t.elapsed() > limit {
                let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let secs = t.elapsed().as_secs_f64();
        let text = fs::read_to_string(log).unwrap_or_default();
        let (status, why) = match code {
            None => (Status::TimedOut, format!("killed after {} s", limit.as_secs())),
            Some(code) => match kind {
                Kind::Python => python_outcome(&text),
                Kind::Expect => expect_outcome(code, &text),
            },
        };
        if !matches!(status, Status::Passed | Status::Skipped) {
            append_log_since(log, &ctld_log, ctld_from);
        }
        let mut why = why;
        let tidied = if auto_config {
            stop_prefix_daemons();
            self.cluster.stop_slurm();
            self.put_back_files().then(|| "its configuration was put back".to_string())
        } else {
            self.tidy()
        };
        if let Some(note) = tidied {
            why = if why.is_empty() { note } else { format!("{why}; {note}") };
        }
        Ok(Outcome { status, secs, why })
    }

    /// Cancel every job, wait for the queue to empty, and put back any
    /// configuration file a test changed, removed or added (expect's
    /// `save_conf` leaves backups beside slurm.conf). What was done, if
    /// anything.
    fn tidy(&self) -> Option<String> {
        let _ = self.cluster.cmd("scancel").args(["--user", "root"]).stderr(Stdio::null()).status();
        let empty = wait::until("an empty queue", Duration::from_secs(60), || {
            let out = self.cluster.cmd("squeue").args(["-h", "-o", "%i"]).output().map_err(|e| e.to_string())?;
            Ok((out.status.success() && out.stdout.is_empty()).then_some(()))
        });
        let mut notes = Vec::new();
        if empty.is_err() {
            notes.push("jobs left in the queue after 60 s".to_string());
        }
        if let Some(found) = self.nodes_back() {
            notes.push(found);
        }
        if self.put_back_files() {
            let _ = self.cluster.cmd("scontrol").arg("reconfigure").status();
            notes.push("its configuration was put back".to_string());
        }
        (!notes.is_empty()).then(|| notes.join(", "))
    }

    /// Wait for every node to be idle again, and resume those a test left
    /// down, drained or failing: the next test would otherwise find no idle
    /// node and skip itself ("requires at least one idle node"), as 15 in a
    /// row did once under one side only. What was found, if anything, so
    /// the outcome says it.
    fn nodes_back(&self) -> Option<String> {
        let states = || -> Vec<(String, String, String)> {
            let out = self.cluster.cmd("sinfo").args(["-h", "-N", "-o", "%N|%T|%E"]).output();
            let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
            let mut nodes: Vec<(String, String, String)> = text
                .lines()
                .filter_map(|l| {
                    let mut f = l.splitn(3, '|');
                    Some((f.next()?.to_string(), f.next()?.to_string(), f.next().unwrap_or("").to_string()))
                })
                .collect();
            // sinfo -N lists a node once per partition it is in.
            nodes.sort();
            nodes.dedup();
            nodes
        };
        let idle = wait::until("every node idle", Duration::from_secs(60), || {
            let now = states();
            Ok((!now.is_empty() && now.iter().all(|(_, state, _)| state == "idle")).then_some(()))
        });
        if idle.is_ok() {
            return None;
        }
        let mut found = Vec::new();
        for (node, state, reason) in states().into_iter().filter(|(_, state, _)| state != "idle") {
            let stuck = ["down", "drain", "fail"].iter().any(|s| state.contains(s));
            let mut said = format!("{node} {state}");
            if !reason.is_empty() && reason != "none" {
                said.push_str(&format!(" ({reason})"));
            }
            if stuck {
                let resumed = self
                    .cluster
                    .cmd("scontrol")
                    .args(["update", &format!("nodename={node}"), "state=resume"])
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                said.push_str(if resumed { ": resumed" } else { ": could not be resumed" });
            }
            found.push(said);
        }
        (!found.is_empty()).then(|| format!("a node not idle 60 s after it: {}", found.join(", ")))
    }

    /// Put back the configuration files a test changed and remove those it
    /// added; whether any it changed.
    fn put_back_files(&self) -> bool {
        let mut changed = false;
        for (path, bytes) in &self.pristine {
            if fs::read(path).ok().as_ref() != Some(bytes) {
                let _ = fs::write(path, bytes);
                changed = true;
            }
        }
        for f in fs::read_dir(&self.etc).into_iter().flatten().flatten() {
            if f.path().is_file() && !self.pristine.contains_key(&f.path()) {
                let _ = fs::remove_file(f.path());
            }
        }
        changed
    }

    /// Whether the python suite's conftest defines `option`.
    fn suite_takes(&self, option: &str) -> bool {
        fs::read_to_string(self.tree.join("testsuite/python/conftest.py")).is_ok_and(|t| t.contains(option))
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Append to `log` what `daemon_log` gained past byte `from`, under a
/// header naming it (nothing when it gained nothing or cannot be read).
fn append_log_since(log: &Path, daemon_log: &Path, from: u64) {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut text = String::new();
    let read = fs::File::open(daemon_log).and_then(|mut f| {
        f.seek(SeekFrom::Start(from))?;
        f.read_to_string(&mut text)
    });
    if read.is_err() || text.is_empty() {
        return;
    }
    if let Ok(mut out) = fs::OpenOptions::new().append(true).open(log) {
        let _ = write!(out, "\n---- {} while the test ran ----\n{text}", daemon_log.display());
    }
}

/// A pytest run's outcome from its closing line ("== 1 passed, 4 skipped in
/// 0.1s =="): failed if anything failed or errored, else passed if anything
/// passed, else skipped; the first failure named by `-rfE` as why.
pub fn python_outcome(log: &str) -> (Status, String) {
    let last = log.lines().rev().find(|l| l.starts_with('=') && l.contains(" in ")).unwrap_or("");
    let count = |word: &str| {
        last.trim_matches('=')
            .split(',')
            .filter_map(|part| {
                let mut w = part.split_whitespace();
                let n = w.next()?.parse::<u32>().ok()?;
                w.next().is_some_and(|what| what.starts_with(word)).then_some(n)
            })
            .sum::<u32>()
    };
    let first = |prefixes: &[&str]| {
        log.lines().find(|l| prefixes.iter().any(|p| l.starts_with(p))).map(|l| l.chars().take(200).collect())
    };
    if count("failed") + count("error") > 0 {
        (Status::Failed, first(&["FAILED ", "ERROR "]).unwrap_or_default())
    } else if count("passed") > 0 {
        (Status::Passed, String::new())
    } else if count("skipped") > 0 {
        (Status::Skipped, first(&["SKIPPED "]).unwrap_or_default())
    } else {
        (Status::Failed, "no pytest summary line".into())
    }
}

/// An expect test's outcome from its exit code (0 passed, above 127
/// skipped, else failed) and its first Fatal or Error line (or the skip's
/// Warning).
pub fn expect_outcome(code: i32, log: &str) -> (Status, String) {
    let status = match code {
        0 => Status::Passed,
        c if !(1..=127).contains(&c) => Status::Skipped,
        _ => Status::Failed,
    };
    let words: &[&str] = match status {
        Status::Skipped => &["] Warning "],
        _ => &["] Fatal ", "] Error "],
    };
    let why = log
        .lines()
        .find_map(|l| words.iter().find_map(|w| l.find(w).map(|at| l[at + w.len()..].trim().to_string())))
        .map(|w| w.chars().take(200).collect())
        .unwrap_or_default();
    (status, if status == Status::Passed { String::new() } else { why })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn build_images_hold_what_the_suites_need() {
        for r in provision::release::RELEASES.iter().filter(|r| !r.is_host()) {
            let image = provision::build_image::build_packages(r);
            for p in PACKAGES.iter().chain(testcluster::accounting::PACKAGES) {
                // SchedMD's packaging's slurmdbd is in the release's base.
                assert!(image.contains(p) || release_ships(r, p), "{}: {p}", r.version);
            }
            for p in PACKAGES_MASTER_SUITE.iter().filter(|_| r.from_source()) {
                assert!(image.contains(p), "{}: {p}", r.version);
            }
        }
    }

    #[test]
    fn a_failed_tests_log_gets_what_the_daemon_said_while_it_ran_and_nothing_before() {
        let dir = std::env::temp_dir().join(format!("suite-log-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (log, daemon) = (dir.join("test.log"), dir.join("slurmctld.log"));
        fs::write(&daemon, "before the test\n").unwrap();
        let from = fs::metadata(&daemon).unwrap().len();
        fs::write(&log, "AssertionError\n").unwrap();
        fs::OpenOptions::new().append(true).open(&daemon).unwrap().write_all(b"during the test\n").unwrap();
        append_log_since(&log, &daemon, from);
        let text = fs::read_to_string(&log).unwrap();
        assert!(
            text.starts_with("AssertionError\n") && text.ends_with("while the test ran ----\nduring the test\n"),
            "{text}"
        );
        assert!(!text.contains("before the test"), "{text}");
        // Nothing more said: the log is left as it was.
        append_log_since(&log, &daemon, fs::metadata(&daemon).unwrap().len());
        assert_eq!(fs::read_to_string(&log).unwrap(), text);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pytest_closing_lines_read_as_outcomes() {
        let passed = "x\n========================= 1 passed, 4 skipped in 0.10s =========================\n";
        assert_eq!(python_outcome(passed), (Status::Passed, String::new()));
        let failed = "FAILED tests/commands/srun/test_--version.py::test_version - AssertionError: ...\n\
                      ============================== 1 failed in 0.02s ===============================\n";
        assert_eq!(python_outcome(failed).0, Status::Failed);
        assert!(python_outcome(failed).1.starts_with("FAILED tests/commands/srun/test_--version.py"));
        assert_eq!(python_outcome("== 2 skipped in 0.01s ==\n").0, Status::Skipped);
        assert_eq!(python_outcome("== 1 passed, 1 error in 3.1s ==\n").0, Status::Failed);
        assert_eq!(python_outcome("Traceback (most recent call last):\n").0, Status::Failed);
    }

    #[test]
    fn expect_exit_codes_and_lines_read_as_outcomes() {
        let log = "[2026-11-24 10:52:05.418] Fatal   Did not get hostname of task 0 (fail@globals:431)\n";
        assert_eq!(
            expect_outcome(1, log),
            (Status::Failed, "Did not get hostname of task 0 (fail@globals:431)".into())
        );
        assert_eq!(expect_outcome(0, log), (Status::Passed, String::new()));
        let skip = "[t] Warning This test requires that the nodes have memory (skip@globals:1)\n";
        assert_eq!(expect_outcome(255, skip).0, Status::Skipped);
        assert!(expect_outcome(255, skip).1.starts_with("This test requires"));
    }
}
