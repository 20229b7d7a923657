//! Running a command in a Slurm release's build image, as if on this
//! machine: the repository at its own path, the host's Rust toolchain,
//! cargo's registry shared; the container named and removed even on failure.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cmd::{output, run};

use crate::Result;

/// The toolchain's homes on the host, mounted at the same paths.
const CARGO_HOME: &str = "/root/.cargo";
const RUSTUP_HOME: &str = "/root/.rustup";

/// A test container's host name (see [`Container::claim_for_tests`]).
const TEST_HOST: &str = "malleable-test";

/// What a test container runs first (see [`Container::command`]).
const TEST_ADDRESS: &str = "ip link add mall0 type veth peer name mall1 && ip addr add 10.254.254.1/32 dev mall0 \
                            && ip link set mall0 up && ip link set mall1 up && exec \"$@\"";

/// A container by name, removed (`docker rm -f`) when dropped: after
/// `docker run --rm` it is gone already; when the run failed to start or
/// was cut short, this removes what is left.
pub struct Container {
    pub name: String,
    /// A test container: its own network (none outside it) and the
    /// capabilities a test cluster needs to give each slurmd a network
    /// namespace, instead of the host's network.
    tests: bool,
    /// A test container's /usr: a copy of its image's on the host's own
    /// file system (see [`Container::usr_from`]).
    usr: Option<PathBuf>,
}

impl Container {
    /// The container `name`; an error if one of that name is running
    /// (another build of the same release), a stopped one removed.
    pub fn claim(name: &str) -> Result<Container> {
        let state = Command::new("docker").args(["inspect", "-f", "{{.State.Running}}", name]).output();
        if let Ok(o) = state {
            if String::from_utf8_lossy(&o.stdout).trim() == "true" {
                return Err(format!("container {name} is running (another build?); `docker rm -f {name}` ends it"));
            }
        }
        let _ = Command::new("docker").args(["rm", "-f", name]).output();
        Ok(Container { name: name.to_string(), tests: false, usr: None })
    }

    /// As [`Container::claim`], for the real-cluster tests: the test
    /// clusters' bridges and namespaces are made inside the container's own
    /// network, which ends with it; no network outside, so cargo runs
    /// `--offline` (the host's build fetched every crate). Names must
    /// resolve at once, as on the host: in a namespace made inside a
    /// container on Docker's default network, a slurmd waited on Docker's
    /// resolver (unreachable there) past slurmctld's message timeout; and
    /// when munged cannot resolve its host's name, 24.11's auth/munge looks
    /// the credentials' origin 0.0.0.0 up in DNS on every message, 5 s each
    /// (seen: a step launched 5 to 15 s late, an expand committed after
    /// 21 s instead of 1). So the host's name is in /etc/hosts and the
    /// resolver is loopback's, which refuses at once.
    pub fn claim_for_tests(name: &str) -> Result<Container> {
        let mut c = Container::claim(name)?;
        c.tests = true;
        Ok(c)
    }

    /// A test container's /usr mounted (read-only) from a copy of `image`'s
    /// on the host, made once an image. Docker's storage here is
    /// fuse-overlayfs, whose one process keeps a file open for every
    /// mapping of every library by every process in the container, under
    /// the daemon's limit of open files (20,000 here): test9.8's 600 steps
    /// on each side at once took it past, and the next exec in the container
    /// failed "Too many open files" (24.11, 2026-12-01: slurmstepd and srun
    /// map about 15 libraries each). A bind mount has no such process.
    /// `/lib` and `/bin` are links into /usr in trixie's root.
    /// The copy is kept in `slot` (a release's version): one copy a slot,
    /// so that commands of two releases can run at once.
    pub fn usr_from(&mut self, root: &Path, image: &str, slot: &str) -> Result<()> {
        if self.tests {
            self.usr = Some(usr_copy(root, image, slot)?);
        }
        Ok(())
    }

    /// `docker run` of `args` in `image`, in `workdir`, with `env`:
    /// - the repository `root` (and `extra` paths, e.g. a cache outside it)
    ///   at their own paths, read-write: the target and source trees are there;
    /// - /root/.rustup read-only: the toolchain is only read;
    /// - /root/.cargo read-write: cargo keeps its registry index, its crate
    ///   cache and the lock on both (`.package-cache`) directly in
    ///   CARGO_HOME, so a read-only one fails, and sharing it means a crate
    ///   downloaded once serves both builds (the flock is honoured across the
    ///   bind mount, so a host cargo and this one never write it at once);
    /// - host networking: cargo reaches the registry as the host does (a
    ///   test container: see [`Container::claim_for_tests`]).
    pub fn command(
        &self,
        image: &str,
        root: &Path,
        extra: &[&Path],
        workdir: &Path,
        env: &[(&str, String)],
    ) -> Command {
        let mut c = Command::new("docker");
        c.args(["run", "--rm", "--name", &self.name]);
        if self.tests {
            c.args(["--network", "none", "--cap-add", "NET_ADMIN", "--cap-add", "SYS_ADMIN"]);
            c.args(["--hostname", TEST_HOST, "--add-host", &format!("{TEST_HOST}:127.0.1.1"), "--dns", "127.0.0.1"]);
            c.args(["--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined"]);
        } else {
            // A build yields to whatever else runs: `cargo xtask test`
            // builds 24.11's tier beside the host's cluster tests, whose
            // compose sites' containers have the default 1024 (with cgroup
            // v1's cpu controller the weights only count where the CPUs
            // are contended; alone, a build still gets all of them).
            c.args(["--network", "host", "--cpu-shares", "128"]);
        }
        let mut mount = |p: &Path, mode: &str| {
            c.arg("-v").arg(format!("{0}:{0}:{mode}", p.display()));
        };
        mount(root, "rw");
        for p in extra.iter().filter(|p| !p.starts_with(root)) {
            mount(p, "rw");
        }
        mount(Path::new(CARGO_HOME), "rw");
        mount(Path::new(RUSTUP_HOME), "ro");
        if let Some(usr) = &self.usr {
            c.arg("-v").arg(format!("{}:/usr:ro", usr.display()));
        }
        c.args(["-e", &format!("CARGO_HOME={CARGO_HOME}"), "-e", &format!("RUSTUP_HOME={RUSTUP_HOME}")]);
        c.args(["-e", &format!("PATH={CARGO_HOME}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")]);
        for (k, v) in env {
            c.arg("-e").arg(format!("{k}={v}"));
        }
        c.arg("-w").arg(workdir).arg(image);
        if self.tests {
            // An address besides loopback's: 24.11's slurmctld looks up its
            // listening address with AI_ADDRCONFIG, which finds none in a
            // container with no network ("Unable to resolve (null)", then it
            // exits), where a cluster on loopback (the demo's, the benches')
            // has nothing else. The caller's command runs after it, under
            // tini as the container's PID 1: `cargo run` execs the program
            // in its place, so that xtask was PID 1, and every slurmstepd
            // and srun orphaned in a test stayed a zombie (6,784 after 25
            // minutes of 24.11's suites, towards pid_max's 32,768).
            c.args(["/usr/bin/tini", "--", "sh", "-c", TEST_ADDRESS, "sh"]);
        }
        c
    }
}

/// `.cache/image-usr/SLOT/IMAGE/usr`, `image`'s /usr as `docker export`
/// gives it (owners and modes kept: tar runs as root), made when missing;
/// the slot's copies of other images are removed, so it holds one. (One
/// slot for all once removed a release's copy from under a command of
/// that release running beside another's.)
fn usr_copy(root: &Path, image: &str, slot: &str) -> Result<PathBuf> {
    let all = crate::cache_dir(root).join("image-usr").join(slot);
    let tag = image.replace([':', '/'], "_");
    let dir = all.join(&tag);
    let done = dir.join(".complete");
    if done.is_file() {
        return Ok(dir.join("usr"));
    }
    if let Ok(entries) = fs::read_dir(&all) {
        for e in entries.flatten() {
            let _ = fs::remove_dir_all(e.path());
        }
    }
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = format!("malleable-usr-export-{tag}");
    let name = name.as_str();
    let _ = output(Command::new("docker").args(["rm", "-f", name]));
    run(Command::new("docker").args(["create", "--name", name, image, "true"]).stdout(Stdio::null()))?;
    let copied = (|| {
        let mut export = Command::new("docker")
            .args(["export", name])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run docker export: {e}"))?;
        let tar = export.stdout.take().ok_or("docker export: no output")?;
        let untar = Command::new("tar").arg("-x").arg("-C").arg(&dir).arg("usr").stdin(tar).status();
        let exported = export.wait().map_err(|e| format!("docker export: {e}"))?;
        match untar {
            Ok(s) if s.success() && exported.success() => Ok(()),
            Ok(s) => Err(format!("docker export {name} | tar -x usr: {exported}, {s}")),
            Err(e) => Err(format!("cannot run tar: {e}")),
        }
    })();
    let _ = output(Command::new("docker").args(["rm", "-f", name]));
    copied?;
    fs::write(&done, image).map_err(|e| format!("cannot write {}: {e}", done.display()))?;
    Ok(dir.join("usr"))
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = output(Command::new("docker").args(["rm", "-f", &self.name]));
    }
}
