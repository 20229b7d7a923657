//! The image every host of a compose site runs, made here from Debian's
//! packages (no registry is reached): a root of the release's suite
//! (bookworm for 22.05, trixie for 24.11) by debootstrap with Slurm,
//! MariaDB and munge in it, imported as `malleable-site-base:HASH`,
//! then our plugins and commands added by `docker build` as
//! `malleable-site:HASH`. Each tag is a hash of its inputs, so a second
//! `up` with nothing changed builds nothing.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::files::PLUGIN_DIR;
use super::spec::USERS;
use crate::plugins::{PLUGINS, TOOLS};
use crate::process::{output, run};
use crate::slurm_release::SlurmRelease;
use crate::Result;

/// Debian's packages in the base image: every daemon of the site, the
/// clients, CBC's and PMIx's runtimes (named per release, see
/// [`base_packages`]), the tools a site's hosts have (ps, ip, ping), and
/// the MPIs a site's users run (Open MPI, MPICH, mpi4py).
const COMMON_BASE_PACKAGES: &[&str] = &[
    "slurmctld",
    "slurmd",
    "slurmdbd",
    "slurm-client",
    "munge",
    "mariadb-server",
    "procps",
    "iproute2",
    "iputils-ping",
    "less",
    "openmpi-bin",
    "mpich",
    "python3-mpi4py",
    // Debian's mpi/pmix opens libpmix.so, the name only the -dev package
    // installs ("pmi/pmix: can not load PMIx library" without it).
    "libpmix-dev",
];

/// The base image's packages for `release`: the common ones, CBC's runtime
/// (sched/malleable links it) and PMIx's (Slurm's mpi/pmix plugin loads it,
/// else every daemon logs an error).
pub fn base_packages(release: &SlurmRelease) -> Vec<&'static str> {
    let mut p = COMMON_BASE_PACKAGES.to_vec();
    p.extend([release.cbc_runtime, release.pmix_runtime]);
    p
}

/// The suite the host's apt sources name (this machine is Debian bookworm):
/// other releases' sources are the same mirrors with the suite renamed.
const HOST_SUITE: &str = "bookworm";

/// Bump to rebuild every base image (a change of how it is made).
const BASE_RECIPE: &str = "base-1";

/// The site-init script (the entrypoint of every host).
pub const SITE_INIT: &str = include_str!("site-init.sh");

pub(crate) fn hex(d: impl AsRef<[u8]>) -> String {
    d.as_ref().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn image_exists(tag: &str) -> bool {
    Command::new("docker")
        .args(["image", "inspect", tag])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The host's own apt sources (deb822 `Types: deb` stanzas) for `suite`
/// and its updates and security suites: the base image gets its packages
/// from where this machine gets its own.
pub fn apt_sources_for(deb822: &str, suite: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for stanza in deb822.split("\n\n") {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
                .map(|v| v.trim().to_string())
        };
        let (Some(types), Some(uris), Some(suites)) = (field("Types"), field("URIs"), field("Suites")) else {
            continue;
        };
        if !types.split_whitespace().any(|t| t == "deb") {
            continue;
        }
        for s in suites.split_whitespace().filter(|s| *s == suite || s.starts_with(&format!("{suite}-"))) {
            for uri in uris.split_whitespace() {
                found.push((uri.to_string(), s.to_string()));
            }
        }
    }
    found
}

/// `sources` (the host's, for `from`) with each suite renamed for `to`:
/// bookworm -> trixie, bookworm-updates -> trixie-updates,
/// bookworm-security -> trixie-security. The same mirrors serve every suite.
pub fn renamed_suites(sources: &[(String, String)], from: &str, to: &str) -> Vec<(String, String)> {
    sources
        .iter()
        .filter_map(|(uri, s)| s.strip_prefix(from).map(|rest| (uri.clone(), format!("{to}{rest}"))))
        .collect()
}

/// The host's `Types: deb` sources for its own suite, renamed for `suite`.
pub fn suite_sources(suite: &str) -> Result<Vec<(String, String)>> {
    let mut text = String::new();
    let dir = Path::new("/etc/apt/sources.list.d");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sources"))
        .collect();
    files.sort();
    for f in files {
        text.push_str(&std::fs::read_to_string(&f).unwrap_or_default());
        text.push_str("\n\n");
    }
    let sources = renamed_suites(&apt_sources_for(&text, HOST_SUITE), HOST_SUITE, suite);
    if !sources.iter().any(|(_, s)| s == suite) {
        return Err(format!(
            "no `Types: deb` source for {HOST_SUITE} in {}/*.sources: images and source trees take their \
             packages from this machine's own apt mirrors (with the suite renamed to {suite})",
            dir.display()
        ));
    }
    Ok(sources)
}

/// Run `cmd`, its output appended to `log`; the error names the log.
pub(crate) fn logged(log: &Path, cmd: &mut Command) -> Result<()> {
    let f = std::fs::File::options().create(true).append(true).open(log).map_err(|e| e.to_string())?;
    let f2 = f.try_clone().map_err(|e| e.to_string())?;
    run(cmd.stdout(f).stderr(f2)).map_err(|e| format!("{e} (see {})", log.display()))
}

/// `apt-get update` and install `packages` in the root at `root`, no
/// service started meanwhile (each host starts its own), lists and
/// downloaded packages removed after.
pub(crate) fn chroot_install(root: &Path, packages: &[&str], log: &Path) -> Result<()> {
    let policy = root.join("usr/sbin/policy-rc.d");
    std::fs::write(&policy, "#!/bin/sh\nexit 101\n").map_err(|e| e.to_string())?;
    logged(log, Command::new("chmod").arg("755").arg(&policy))?;
    logged(log, Command::new("chroot").arg(root).args(["apt-get", "update", "-qq"]))?;
    logged(
        log,
        Command::new("chroot")
            .arg(root)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["apt-get", "install", "-y", "-qq", "--no-install-recommends"])
            .args(packages),
    )?;
    logged(log, Command::new("chroot").arg(root).args(["apt-get", "clean"]))?;
    for gone in ["var/lib/apt/lists", "usr/sbin/policy-rc.d"] {
        let p = root.join(gone);
        let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
    }
    Ok(())
}

/// `docker import` of the root at `root` as `tag`; the root is removed after.
pub(crate) fn import_root(root: &Path, tag: &str) -> Result<()> {
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(root)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    let stdout = tar.stdout.take().expect("piped");
    let imported = Command::new("docker")
        .args(["import", "--change", "ENV LANG=C.UTF-8", "-", tag])
        .stdin(stdout)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run docker import: {e}"))?;
    let tarred = tar.wait().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(root);
    if !imported.success() || !tarred.success() {
        return Err(format!("docker import of {} failed (tar: {tarred}, docker: {imported})", root.display()));
    }
    Ok(())
}

/// An empty directory at `dir` (a leftover of a failed build removed).
pub(crate) fn fresh_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// The base image's tag for `release` (its suite's Slurm, MariaDB, munge),
/// building it first when missing (about 2 minutes).
pub fn base_image(work: &Path, release: &SlurmRelease) -> Result<String> {
    let suite = release.suite;
    let sources = suite_sources(suite)?;
    let packages = base_packages(release);
    let mut h = Sha256::new();
    h.update(BASE_RECIPE);
    h.update(suite);
    for p in &packages {
        h.update(p);
    }
    for (uri, suite) in &sources {
        h.update(format!("{uri} {suite}"));
    }
    for (user, uid, _) in USERS {
        h.update(format!("{user}:{uid}"));
    }
    let tag = format!("malleable-site-base:{}", hex(h.finalize()));
    if image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    // Per suite: two bases may be made at once without sharing a root.
    let root = work.join(format!("rootfs-{suite}"));
    fresh_dir(&root)?;
    let mirror = &sources.iter().find(|(_, s)| s == suite).expect("checked in suite_sources").0;
    eprintln!(
        "compose: making the base image {tag} (debootstrap {suite}, then Slurm {}, MariaDB, munge)",
        release.version
    );
    let log = work.join(format!("base-image-{suite}.log"));
    logged(&log, Command::new("debootstrap").args(["--variant=minbase", suite]).arg(&root).arg(mirror))?;
    let list: String = sources.iter().map(|(uri, suite)| format!("deb {uri} {suite} main\n")).collect();
    std::fs::write(root.join("etc/apt/sources.list"), list).map_err(|e| e.to_string())?;
    chroot_install(&root, &packages, &log)?;
    for (user, uid, _) in USERS {
        let id = uid.to_string();
        logged(&log, Command::new("chroot").arg(&root).args(["groupadd", "-g", &id, user]))?;
        logged(
            &log,
            Command::new("chroot").arg(&root).args([
                "useradd",
                "-u",
                &id,
                "-g",
                user,
                "-d",
                &format!("/home/{user}"),
                "-s",
                "/bin/bash",
                user,
            ]),
        )?;
    }
    import_root(&root, &tag)?;
    eprintln!("compose: base image {tag} made in {:.1?}", t.elapsed());
    Ok(tag)
}

/// The site image: `base` with the staged plugins (in `staged`, with
/// `bin/` beside them: mall-run, mall-example, the C examples, the Python
/// one with its module, and the runtime's library) and site-init; with `staged` None (a stock site),
/// site-init only. Built when its tag is missing.
pub fn site_image(base: &str, staged: Option<&Path>, work: &Path) -> Result<String> {
    let ctx = work.join("image");
    if ctx.exists() {
        std::fs::remove_dir_all(&ctx).map_err(|e| format!("cannot clear {}: {e}", ctx.display()))?;
    }
    // What the image adds, laid out as its root: one COPY, one layer.
    let root = ctx.join("root");
    let mut files: Vec<(PathBuf, String, u32)> = Vec::new();
    if let Some(staged) = staged {
        for (_, _, so) in PLUGINS {
            files.push((staged.join(so), format!("{PLUGIN_DIR}/{so}"), 0o644));
        }
        let examples = ["mall-stencil-c", "mall-jacobi-openmpi", "mall-jacobi-mpich", "mall_jacobi_mpi4py.py"];
        for tool in TOOLS.iter().map(|t| t.1).chain(examples) {
            files.push((staged.join("bin").join(tool), format!("/usr/local/bin/{tool}"), 0o755));
        }
        // The Python module beside the mpi4py example, which imports it.
        let module = "malleable_rt.py";
        files.push((staged.join("bin").join(module), format!("/usr/local/bin/{module}"), 0o644));
        // The runtime's library where the loader looks without ldconfig.
        let rt = "/usr/lib/x86_64-linux-gnu/libmalleable_rt.so";
        files.push((staged.join("bin/libmalleable_rt.so"), rt.into(), 0o644));
        files.push((staged.join("bin/malleable_rt.h"), "/usr/local/include/malleable_rt.h".into(), 0o644));
    }
    let mut h = Sha256::new();
    h.update(base);
    for (from, to, mode) in &files {
        let bytes =
            std::fs::read(from).map_err(|e| format!("cannot read {}: {e} (run cargo xtask build)", from.display()))?;
        h.update(format!("{to} {mode:o}"));
        h.update(&bytes);
        put(&root, to, &bytes, *mode)?;
    }
    put(&root, "/usr/local/sbin/site-init", SITE_INIT.as_bytes(), 0o755)?;
    h.update(SITE_INIT);
    let dockerfile = format!("FROM {base}\nCOPY root/ /\n");
    h.update(&dockerfile);
    put(&ctx, "Dockerfile", dockerfile.as_bytes(), 0o644)?;
    let tag = format!("malleable-site:{}", hex(h.finalize()));
    if image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    output(Command::new("docker").args(["build", "-q", "-t", &tag]).arg(&ctx))?;
    eprintln!("compose: site image {tag} built in {:.1?}", t.elapsed());
    Ok(tag)
}

/// Write `bytes` at `path` under `root` with `mode` (COPY keeps it).
fn put(root: &Path, path: &str, bytes: &[u8], mode: u32) -> Result<()> {
    let to = root.join(path.trim_start_matches('/'));
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut f = std::fs::File::create(&to).map_err(|e| format!("cannot write {}: {e}", to.display()))?;
    f.write_all(bytes).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_takes_the_hosts_deb_sources_for_its_suite_only() {
        let host = "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n\
                    Components: main\n\nTypes: deb-src\nURIs: http://mirror.example/debian\nSuites: bookworm\n\n\
                    Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\n\n\
                    Types: deb\nURIs: http://other.example/\nSuites: trixie\n";
        let s = apt_sources_for(host, "bookworm");
        let want = [
            ("http://mirror.example/debian", "bookworm"),
            ("http://mirror.example/debian", "bookworm-updates"),
            ("http://sec.example/debian-security", "bookworm-security"),
        ];
        assert_eq!(s, want.map(|(u, s)| (u.to_string(), s.to_string())));
        assert!(apt_sources_for("Types: deb-src\nURIs: x\nSuites: bookworm\n", "bookworm").is_empty());
    }

    #[test]
    fn trixie_takes_the_same_mirrors_with_the_suites_renamed() {
        let host: Vec<(String, String)> = [
            ("http://m/debian", "bookworm"),
            ("http://m/debian", "bookworm-updates"),
            ("http://s/ds", "bookworm-security"),
        ]
        .map(|(u, s)| (u.to_string(), s.to_string()))
        .into();
        let t = renamed_suites(&host, "bookworm", "trixie");
        let want =
            [("http://m/debian", "trixie"), ("http://m/debian", "trixie-updates"), ("http://s/ds", "trixie-security")];
        assert_eq!(t, want.map(|(u, s)| (u.to_string(), s.to_string())));
        let p = base_packages(SlurmRelease::find("24.11").unwrap());
        assert!(p.contains(&"coinor-libcbc3.1") && p.contains(&"libpmix2t64") && !p.contains(&"coinor-libcbc3"));
    }
}
