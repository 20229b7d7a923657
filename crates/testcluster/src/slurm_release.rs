//! The Slurm releases this workspace knows, in one table: the Debian suite
//! that ships each, the exact package version, the runtime packages whose
//! names differ between suites, and whether its source can be had at all.

/// One Slurm release as Debian ships it.
#[derive(Debug, PartialEq, Eq)]
pub struct SlurmRelease {
    /// What `--slurm` takes: "24.11".
    pub version: &'static str,
    /// The Debian suite that ships it: "trixie".
    pub suite: &'static str,
    /// The exact Debian version of slurm-wlm (and of its binary packages).
    pub deb_version: &'static str,
    /// CBC's runtime library package (sched/malleable and select/natural
    /// link libCbcSolver; its soname and so the package name changed in trixie).
    pub cbc_runtime: &'static str,
    /// PMIx's runtime package (mpi/pmix loads it; trixie renamed it for time64).
    pub pmix_runtime: &'static str,
    /// Why this release cannot be built, when it cannot.
    pub unavailable: Option<&'static str>,
}

/// The release installed on the host (Debian bookworm): built and run
/// without containers.
pub const HOST_RELEASE: &str = "22.05";

pub const RELEASES: &[SlurmRelease] = &[
    SlurmRelease {
        version: "22.05",
        suite: "bookworm",
        deb_version: "22.05.8-4+deb12u3",
        cbc_runtime: "coinor-libcbc3",
        pmix_runtime: "libpmix2",
        unavailable: None,
    },
    // A trixie-security upload: the orig tarball is in the main mirror's
    // pool, the .debian.tar.xz in debian-security's (the .dsc in neither).
    SlurmRelease {
        version: "24.11",
        suite: "trixie",
        deb_version: "24.11.5-4+deb13u1",
        cbc_runtime: "coinor-libcbc3.1",
        pmix_runtime: "libpmix2t64",
        unavailable: None,
    },
    SlurmRelease {
        version: "26.05",
        suite: "sid",
        deb_version: "26.05.5-1",
        cbc_runtime: "coinor-libcbc3.1",
        pmix_runtime: "libpmix2t64",
        unavailable: Some(
            "its source cannot be had: sid's Sources index lists slurm-wlm 26.05.5-1, but \
             deb.debian.org answers 404 for its .dsc, .orig.tar.gz and .debian.tar.xz \
             (docs/slurm-versions.md, 26.05)",
        ),
    },
];

impl SlurmRelease {
    /// The release `version` names ("24.11"), or an error naming it and the known ones.
    pub fn find(version: &str) -> Result<&'static SlurmRelease, String> {
        RELEASES.iter().find(|r| r.version == version).ok_or_else(|| {
            let known: Vec<&str> = RELEASES.iter().map(|r| r.version).collect();
            format!("Slurm {version}: unknown release; expected one of {}", known.join(", "))
        })
    }

    /// As [`find`](Self::find), and refused with the reason when it cannot be built.
    pub fn buildable(version: &str) -> Result<&'static SlurmRelease, String> {
        let r = Self::find(version)?;
        match r.unavailable {
            Some(why) => Err(format!("Slurm {version} (Debian {} {}): {why}", r.suite, r.deb_version)),
            None => Ok(r),
        }
    }

    /// The release whose slurmctld is installed here (on the host, or in a
    /// release's build image), from `slurmctld -V` ("slurm-wlm 24.11.5").
    pub fn installed() -> Result<&'static SlurmRelease, String> {
        let out = std::process::Command::new("slurmctld")
            .arg("-V")
            .output()
            .map_err(|e| format!("cannot run slurmctld -V: {e}"))?;
        Self::of_version_line(&String::from_utf8_lossy(&out.stdout))
    }

    /// The release a `slurmctld -V` line names.
    fn of_version_line(line: &str) -> Result<&'static SlurmRelease, String> {
        let upstream = line.split_whitespace().nth(1).unwrap_or("");
        RELEASES
            .iter()
            .find(|r| r.upstream() == upstream)
            .ok_or_else(|| format!("slurmctld -V says {:?}: not a release of testcluster's table", line.trim()))
    }

    /// Built and run on this machine itself, not in a container.
    pub fn is_host(&self) -> bool {
        self.version == HOST_RELEASE
    }

    /// The upstream version: "24.11.5".
    pub fn upstream(&self) -> &'static str {
        self.deb_version.split_once('-').map_or(self.deb_version, |(u, _)| u)
    }

    /// The source tree's directory name, as `apt-get source` names it: "slurm-wlm-24.11.5".
    pub fn src_name(&self) -> String {
        format!("slurm-wlm-{}", self.upstream())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_found_by_version_and_sid_is_refused_with_the_reason() {
        let r = SlurmRelease::buildable("24.11").unwrap();
        assert_eq!((r.suite, r.upstream(), r.src_name()), ("trixie", "24.11.5", "slurm-wlm-24.11.5".to_string()));
        assert!(SlurmRelease::buildable("22.05").unwrap().is_host());
        let e = SlurmRelease::buildable("26.05").unwrap_err();
        assert!(e.starts_with("Slurm 26.05 (Debian sid 26.05.5-1): its source cannot be had"), "{e}");
        assert_eq!(SlurmRelease::of_version_line("slurm-wlm 24.11.5\n").unwrap().version, "24.11");
        assert_eq!(SlurmRelease::of_version_line("slurm 22.05.8").unwrap().version, "22.05");
        assert!(SlurmRelease::of_version_line("slurm 24.11.6").unwrap_err().contains("\"slurm 24.11.6\""));
        let e = SlurmRelease::find("23.02").unwrap_err();
        assert_eq!(e, "Slurm 23.02: unknown release; expected one of 22.05, 24.11, 26.05");
    }
}
