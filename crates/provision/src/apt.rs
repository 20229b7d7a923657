//! Debian's packages: installed on this machine when missing, and the
//! host's own mirrors (its deb822 sources) for other suites, through a
//! private apt configuration that never touches the host's /etc/apt.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::cmd::run;
use crate::Result;

pub fn installed_version(pkg: &str) -> Option<String> {
    let out = Command::new("dpkg-query").args(["-W", "-f", "${Status}|${Version}", pkg]).output().ok()?;
    version_if_installed(&String::from_utf8_lossy(&out.stdout))
}

/// The version from dpkg-query's `${Status}|${Version}` when the package is
/// really installed. A status is three words, "want flag status": only the
/// status `installed` with the flag `ok` counts. "unknown ok not-installed"
/// (dpkg knows the package, nothing is on disk) and "deinstall ok
/// config-files" (removed, its configuration kept) end in "installed" too,
/// which is how a missing libslurm-dev once went unnoticed. "hold ok
/// installed" (an admin pinned it) is installed.
fn version_if_installed(query: &str) -> Option<String> {
    let (status, version) = query.trim().split_once('|')?;
    let words: Vec<&str> = status.split_whitespace().collect();
    (words.len() == 3 && words[1] == "ok" && words[2] == "installed" && !version.is_empty())
        .then(|| version.to_string())
}

fn apt_get() -> Command {
    let mut c = Command::new("apt-get");
    // Waits for another apt (unattended-upgrades, an admin's) instead of
    // failing at once on its lock.
    c.env("DEBIAN_FRONTEND", "noninteractive").args(["-o", "DPkg::Lock::Timeout=300"]);
    c
}

/// Held while packages are installed: two commands or tests that need
/// packages at once (cargo xtask test runs several) install them one after
/// the other, and the second finds them there. Our policy-rc.d is put and
/// removed under it too.
const LOCK: &str = "/run/lock/malleable-apt.lock";

/// Install whichever of these Debian packages is missing. No service is
/// started meanwhile (Debian's policy-rc.d, there only while apt runs,
/// unless an admin put one there): the clusters start their own daemons by
/// pid, and mariadb-server or slurmdbd would otherwise leave a system
/// daemon behind that nothing here stops.
pub fn ensure(packages: &[&str]) -> Result<()> {
    let missing = || -> Vec<&str> { packages.iter().copied().filter(|p| installed_version(p).is_none()).collect() };
    if missing().is_empty() {
        return Ok(());
    }
    let _lock = crate::lock::hold(Path::new(LOCK))?;
    let missing = missing();
    if !missing.is_empty() {
        let t = Instant::now();
        eprintln!("provision: installing {}", missing.join(" "));
        let policy = std::path::Path::new("/usr/sbin/policy-rc.d");
        let ours = !policy.exists();
        if ours {
            std::fs::write(policy, "#!/bin/sh\n# cargo xtask: no service starts while it installs\nexit 101\n")
                .map_err(|e| format!("cannot write {}: {e}", policy.display()))?;
            run(Command::new("chmod").arg("755").arg(policy))?;
        }
        let done = run(apt_get().args(["update", "-qq"]))
            .and_then(|()| run(apt_get().args(["install", "-y", "-qq", "--no-install-recommends"]).args(&missing)));
        if ours {
            let _ = std::fs::remove_file(policy);
        }
        done?;
        eprintln!("provision: installed in {:.1?}", t.elapsed());
    }
    Ok(())
}

/// The suite the host's apt sources name (this machine is Debian bookworm):
/// other releases' sources are the same mirrors with the suite renamed.
const HOST_SUITE: &str = "bookworm";

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

/// Debian's archive key, which signs every suite this machine's mirrors serve.
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// A private apt configuration in `dir`.
pub struct PrivateApt {
    dir: PathBuf,
}

impl PrivateApt {
    /// `deb-src` of `suite` and its -updates and -security suites, from the
    /// host's own mirrors (its `Types: deb` sources, suite renamed), in `dir`.
    pub fn deb_src(dir: &Path, suite: &str) -> Result<PrivateApt> {
        let list: String = suite_sources(suite)?
            .iter()
            .map(|(uri, s)| format!("deb-src [signed-by={KEYRING}] {uri} {s} main\n"))
            .collect();
        for d in ["lists/partial", "cache/archives/partial"] {
            std::fs::create_dir_all(dir.join(d))
                .map_err(|e| format!("cannot create {}: {e}", dir.join(d).display()))?;
        }
        let file = dir.join("sources.list");
        std::fs::write(&file, list).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        Ok(PrivateApt { dir: dir.to_path_buf() })
    }

    /// The options that point apt at this configuration only.
    fn options(&self) -> Vec<String> {
        let d = self.dir.display();
        vec![
            "-o".into(),
            format!("Dir::Etc::sourcelist={d}/sources.list"),
            "-o".into(),
            "Dir::Etc::sourceparts=-".into(),
            "-o".into(),
            format!("Dir::State::Lists={d}/lists"),
            "-o".into(),
            format!("Dir::Cache={d}/cache"),
        ]
    }

    /// `program` (apt-get, apt-cache) with this configuration.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("DEBIAN_FRONTEND", "noninteractive").args(self.options());
        c
    }

    /// `apt-get update` of this configuration's lists.
    pub fn update(&self) -> Result<()> {
        run(self.command("apt-get").args(["update", "-qq"]))
    }
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
    }

    #[test]
    fn only_an_installed_package_has_a_version() {
        let v = |q: &str| version_if_installed(q);
        assert_eq!(v("install ok installed|22.05.8-4+deb12u3"), Some("22.05.8-4+deb12u3".into()));
        assert_eq!(v("hold ok installed|1.2"), Some("1.2".into()));
        // Known to dpkg, not on disk: the case that broke a fresh machine.
        assert_eq!(v("unknown ok not-installed|"), None);
        assert_eq!(v("deinstall ok config-files|22.05.8-4+deb12u3"), None);
        assert_eq!(v("install ok unpacked|22.05.8-4+deb12u3"), None);
        assert_eq!(v("install ok half-configured|22.05.8-4+deb12u3"), None);
        assert_eq!(v("install reinstreq half-installed|22.05.8"), None);
        assert_eq!(v("purge ok not-installed|"), None);
        // dpkg-query printed nothing (no such package) or something else.
        assert_eq!(v(""), None);
        assert_eq!(v("installed"), None);
    }
}
