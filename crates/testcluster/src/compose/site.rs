//! A running compose site: brought up by its compose project name, commands
//! run on its hosts as a user, readiness awaited with a deadline, its hosts'
//! logs printed when something fails, and taken down (containers, network)
//! when dropped unless kept.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::spec::{SiteSpec, USERS};
use super::{files, image};
use crate::process::{output_within, run_within};
use crate::{wait, Result};

pub struct Site {
    pub spec: SiteSpec,
    /// `target/compose/NAME`: the compose file, configs, logs, homes.
    pub dir: PathBuf,
    /// Leave it running when dropped (`cargo xtask compose up`).
    pub keep: bool,
    /// Dropped with the site, which ends its watchdog ([`Site::watch`]).
    watchdog: Option<std::sync::mpsc::Sender<()>>,
}

/// `docker-compose -p NAME -f DIR/docker-compose.yml`.
fn compose(name: &str, dir: &Path) -> Command {
    let mut c = Command::new("docker-compose");
    c.arg("-p").arg(name).arg("-f").arg(dir.join("docker-compose.yml"));
    c
}

/// The longest a command on a site's host may take (`docker exec`): the
/// slowest a test runs answers within seconds (slurmdbd stopped as an
/// admin does, 90 s at most); one that takes longer hangs, on the Docker
/// daemon or a Slurm client with no timeout of its own, and fails.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// The longest `docker-compose up` or `down` of a site may take (a site's
/// containers start in seconds; its image is built before).
const COMPOSE_LIMIT: Duration = Duration::from_secs(300);

/// While this file exists on slurmdbd's host, its daemon is stopped and
/// not started again (site-init's `supervise`).
pub const SLURMDBD_HELD: &str = "/run/slurmdbd.held";

/// `docker exec` of `cmd` on `host` of site `name`, as `user` (root if
/// none), in the user's home.
pub fn exec_in(name: &str, user: Option<&str>, host: &str, cmd: &[impl AsRef<std::ffi::OsStr>]) -> Command {
    let mut c = Command::new("docker");
    c.arg("exec");
    if let Some(u) = user {
        c.args(["-u", u, "-w", &format!("/home/{u}")]);
    }
    c.arg(format!("{name}-{host}")).args(cmd);
    c
}

impl Site {
    /// Where site `name` keeps its files under `root` (`target/compose`).
    pub fn dir_of(root: &Path, name: &str) -> PathBuf {
        root.join(name)
    }

    /// Build the images if their inputs changed (the base of the spec's
    /// Slurm release; plugins staged in `staged`, which a stock spec does
    /// not read: `plugins::plugin_dir_for(workspace, &spec.slurm)`), write
    /// the site's files under the workspace's `target/compose`, start every
    /// host and wait until every compute node is idle in slurmctld. A site
    /// of that name already running is replaced.
    pub fn up(spec: SiteSpec, workspace: &Path, staged: &Path) -> Result<Site> {
        let t = Instant::now();
        let root = workspace.join("target/compose");
        let release = spec.release();
        let base = provision::base_image::base_image(workspace, release)?;
        let dir = Site::dir_of(&root, &spec.name);
        // The image's build context in the site's own directory: sites
        // started at once would clear each other's.
        let image = image::site_image(&base, spec.ours.then_some(staged), release.lib_dir, &dir)?;
        if dir.join("docker-compose.yml").exists() {
            Site::down_in(&spec.name, &dir);
        }
        // A fresh site each time: the logs and homes of the last are gone,
        // the munge key and database password kept.
        for old in ["log", "home"] {
            let _ = std::fs::remove_dir_all(dir.join(old));
        }
        // From picking a free /24 to docker making the network on it, one
        // site at a time: two sites started at once would pick the same.
        let lock = provision::lock::hold(&root.join(".subnets.lock"))?;
        let subnet = super::subnet::pick(&spec.name, &super::subnet::taken()?)?;
        files::write_all(&spec, &dir, &image, subnet)?;
        let site = Site { spec, dir, keep: false, watchdog: None };
        run_within(
            compose(&site.spec.name, &site.dir).args(["up", "-d", "--no-color", "--quiet-pull"]),
            COMPOSE_LIMIT,
        )?;
        drop(lock);
        if let Err(e) = site.wait_ready(Duration::from_secs(240)) {
            site.print_logs();
            return Err(e);
        }
        eprintln!("compose: site '{}' up in {:.1?} ({} compute hosts)", site.spec.name, t.elapsed(), site.spec.nodes);
        Ok(site)
    }

    /// Every compute node idle, as slurmctld sees them from the login host.
    pub fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let want = self.spec.nodes;
        wait::until(&format!("{want} idle nodes in site '{}'", self.spec.name), timeout, || {
            let states = self.output(None, "login", &["sinfo", "-h", "-N", "-o", "%N %t"])?;
            let idle = states.lines().filter(|l| l.ends_with(" idle")).count();
            if idle == want {
                Ok(Some(()))
            } else {
                Err(states.lines().collect::<Vec<_>>().join(", "))
            }
        })
    }

    /// The container of `host`.
    pub fn container(&self, host: &str) -> String {
        format!("{}-{host}", self.spec.name)
    }

    /// `docker exec` of `cmd` on `host`, as `user` (root if none), in the
    /// user's home.
    pub fn exec(&self, user: Option<&str>, host: &str, cmd: &[&str]) -> Command {
        exec_in(&self.spec.name, user, host, cmd)
    }

    /// What `cmd` on `host` as `user` prints; an error with its stderr if it fails.
    pub fn output(&self, user: Option<&str>, host: &str, cmd: &[&str]) -> Result<String> {
        output_within(&mut self.exec(user, host, cmd), COMMAND_LIMIT)
    }

    /// Stop slurmdbd as an admin does (`systemctl stop`): SIGTERM, waited
    /// for up to 90 s (systemd's default) and then killed; its host stays
    /// up, so its port refuses at once (removing [`SLURMDBD_HELD`] starts
    /// it again). Stopping its container instead leaves its address
    /// unreachable, connections timing out, as when slurmdbd's host is lost.
    pub fn stop_slurmdbd(&self) -> Result<()> {
        let stop = format!(
            "touch {SLURMDBD_HELD} && pkill -TERM -x slurmdbd; \
             for i in $(seq 450); do pgrep -x slurmdbd >/dev/null || exit 0; sleep 0.2; done; \
             pkill -KILL -x slurmdbd; true"
        );
        self.output(None, "slurmdbd", &["sh", "-c", &stop]).map(|_| ())
    }

    /// The jobs slurmdbd holds as running that slurmctld does not know,
    /// as `sacctmgr show runawayjobs` lists them; None when there are none.
    /// Its offer to fix them is answered no, as often as it asks: at the
    /// end of its input sacctmgr asks again for ever (its fix open in the
    /// database, locking the job table), and a `docker exec` of it never
    /// ends; `timeout` bounds it all the same.
    pub fn runaway_jobs(&self) -> Result<Option<String>> {
        let list = "yes N | timeout 120 sacctmgr -n show runawayjobs 2>&1; true";
        let out = self.output(None, "slurmctld", &["sh", "-c", list])?;
        Ok((!out.contains("No runaway jobs found")).then(|| out.trim().to_string()))
    }

    /// A host's Slurm log (`slurmctld.log`, `slurmd.log`, `slurmdbd.log`).
    pub fn log(&self, host: &str, file: &str) -> String {
        std::fs::read_to_string(self.dir.join("log").join(host).join(file)).unwrap_or_default()
    }

    /// The last lines of every host's logs and the containers' states, for a failure.
    pub fn print_logs(&self) {
        let _ = run_within(compose(&self.spec.name, &self.dir).arg("ps"), COMPOSE_LIMIT);
        for host in files::hosts(&self.spec) {
            let dir = self.dir.join("log").join(&host);
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let keep = if host == "slurmctld" { 150 } else { 25 };
                let from = lines.len().saturating_sub(keep);
                eprintln!(
                    "---- {} (last {} lines) ----\n{}",
                    e.path().display(),
                    lines.len() - from,
                    lines[from..].join("\n")
                );
            }
        }
        // What the users' jobs printed (`--output` files in their homes):
        // an application that stopped says where.
        for (user, _, _) in USERS {
            let Ok(entries) = std::fs::read_dir(self.dir.join("home").join(user)) else { continue };
            for e in entries.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "out")) {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let from = lines.len().saturating_sub(40);
                eprintln!(
                    "---- {} (last {} lines) ----\n{}",
                    e.path().display(),
                    lines.len() - from,
                    lines[from..].join("\n")
                );
            }
        }
        let _ = run_within(
            Command::new("docker").args(["logs", "--tail", "20"]).arg(self.container("slurmctld")),
            COMPOSE_LIMIT,
        );
    }

    /// Take the site down: its containers and network, by project name.
    pub fn down(mut self) {
        self.keep = false;
    }

    /// Give a test on this site `limit` to end: past it, the process prints
    /// what it still waits on (its child processes' command lines) and the
    /// site's logs, takes the site down (unless kept) and exits failing. A test waits on
    /// each condition with a deadline and each command with
    /// [`COMMAND_LIMIT`]; this catches the rest, with the site's state,
    /// where a runner's limit would kill the test silently and leave its
    /// containers up.
    pub fn watch(&mut self, limit: Duration) {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        self.watchdog = Some(tx);
        let (spec, dir, keep) = (self.spec.clone(), self.dir.clone(), self.keep);
        std::thread::spawn(move || {
            // Only a site dropped (the sender gone) ends the watch early.
            if rx.recv_timeout(limit) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            eprintln!("compose: the test on site '{}' has not ended {limit:?} after the site came up", spec.name);
            for (pid, cmd) in crate::process::children_of(std::process::id() as i32) {
                eprintln!("compose: it waits on pid {pid}: {cmd}");
            }
            eprintln!("compose: {} free on the disk", crate::process::free_disk(&dir));
            let site = Site { spec, dir, keep, watchdog: None };
            site.print_logs();
            drop(site);
            std::process::exit(101);
        });
    }

    /// Take down the site of this name whose files are in `dir`.
    /// Should docker-compose fail or hang at it, its containers and
    /// networks are removed by the project's label, Docker's own, each
    /// step said.
    pub fn down_in(name: &str, dir: &Path) {
        let Err(e) = output_within(compose(name, dir).args(["down", "--remove-orphans", "-t", "5"]), COMPOSE_LIMIT)
        else {
            return;
        };
        eprintln!("compose: taking site '{name}' down failed ({e}); removing its containers and networks by label");
        let label = format!("label=com.docker.compose.project={name}");
        // What to list, and how to remove what is listed.
        let kinds: [(&[&str], &[&str]); 2] = [(&["ps", "-a"], &["rm", "-f"]), (&["network", "ls"], &["network", "rm"])];
        for (list, remove) in kinds {
            let listed =
                output_within(Command::new("docker").args(list).args(["-q", "--filter", &label]), COMPOSE_LIMIT);
            let ids: Vec<String> = listed.unwrap_or_default().split_whitespace().map(str::to_string).collect();
            if ids.is_empty() {
                continue;
            }
            if let Err(e) = output_within(Command::new("docker").args(remove).args(&ids), COMPOSE_LIMIT) {
                eprintln!("compose: site '{name}': {e}");
            }
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        if !self.keep {
            Site::down_in(&self.spec.name, &self.dir);
        }
    }
}
