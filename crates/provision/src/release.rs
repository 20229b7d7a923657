//! The Slurm releases this workspace knows, in one table: where each comes
//! from (Debian's packages, or SchedMD's release source built here), the
//! Debian suite its hosts run, and the paths and runtime packages that
//! differ between them.

/// Where a release's Slurm comes from.
#[derive(Debug, PartialEq, Eq)]
pub enum Origin {
    /// Debian's own packages of the suite (binaries from its mirrors, the
    /// source from its deb-src, Debian's patches applied), at this exact
    /// version of slurm-wlm.
    Debian { deb_version: &'static str },
    /// SchedMD's release source (a tarball or tree with its own `debian/`
    /// packaging), built here into .debs as a site builds it; this release
    /// unless `--slurm-source` names another of the same series.
    SchedMd { upstream: &'static str },
}

/// One Slurm release series as this workspace builds and runs it.
#[derive(Debug, PartialEq, Eq)]
pub struct SlurmRelease {
    /// What `--slurm` takes: "24.11".
    pub version: &'static str,
    /// The Debian suite its hosts and build images run: "trixie".
    pub suite: &'static str,
    pub origin: Origin,
    /// Where its packages install Slurm's plugins and libslurmfull
    /// (Debian: `slurm-wlm`; SchedMD's packaging: `slurm`).
    pub lib_dir: &'static str,
    /// CBC's runtime library package (sched/malleable and select/natural
    /// link libCbcSolver; its soname and so the package name changed in trixie).
    pub cbc_runtime: &'static str,
    /// PMIx's runtime package (mpi/pmix loads it; trixie renamed it for time64).
    pub pmix_runtime: &'static str,
}

/// The release installed on the host (Debian bookworm): built and run
/// without containers.
pub const HOST_RELEASE: &str = "22.05";

const DEBIAN_LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu/slurm-wlm";
const SCHEDMD_LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu/slurm";

pub const RELEASES: &[SlurmRelease] = &[
    SlurmRelease {
        version: "22.05",
        suite: "bookworm",
        origin: Origin::Debian { deb_version: "22.05.8-4+deb12u3" },
        lib_dir: DEBIAN_LIB_DIR,
        cbc_runtime: "coinor-libcbc3",
        pmix_runtime: "libpmix2",
    },
    // A trixie-security upload: the orig tarball is in the main mirror's
    // pool, the .debian.tar.xz in debian-security's (the .dsc in neither).
    SlurmRelease {
        version: "24.11",
        suite: "trixie",
        origin: Origin::Debian { deb_version: "24.11.5-4+deb13u1" },
        lib_dir: DEBIAN_LIB_DIR,
        cbc_runtime: "coinor-libcbc3.1",
        pmix_runtime: "libpmix2t64",
    },
    // The two SchedMD supports (docs/slurm-versions.md): Debian has no
    // source of either that can be had, so they are built from SchedMD's
    // release source, on trixie, the Debian its packaging builds on.
    SlurmRelease {
        version: "25.11",
        suite: "trixie",
        origin: Origin::SchedMd { upstream: "25.11.7" },
        lib_dir: SCHEDMD_LIB_DIR,
        cbc_runtime: "coinor-libcbc3.1",
        pmix_runtime: "libpmix2t64",
    },
    SlurmRelease {
        version: "26.05",
        suite: "trixie",
        origin: Origin::SchedMd { upstream: "26.05.3" },
        lib_dir: SCHEDMD_LIB_DIR,
        cbc_runtime: "coinor-libcbc3.1",
        pmix_runtime: "libpmix2t64",
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

    /// The release whose slurmctld is installed here (on the host, or in a
    /// release's build image), from `slurmctld -V` ("slurm-wlm 24.11.5",
    /// "slurm 26.05.3").
    pub fn installed() -> Result<&'static SlurmRelease, String> {
        let out = std::process::Command::new("slurmctld")
            .arg("-V")
            .output()
            .map_err(|e| format!("cannot run slurmctld -V: {e}"))?;
        Self::of_version_line(&String::from_utf8_lossy(&out.stdout))
    }

    /// The release a `slurmctld -V` line names: Debian's exactly, a SchedMD
    /// series by its major and minor (a site may build any of its patch
    /// releases with `--slurm-source`).
    pub fn of_version_line(line: &str) -> Result<&'static SlurmRelease, String> {
        let upstream = line.split_whitespace().nth(1).unwrap_or("");
        RELEASES
            .iter()
            .find(|r| match r.origin {
                Origin::Debian { .. } => r.upstream() == upstream,
                Origin::SchedMd { .. } => series_of(upstream) == Some(r.version),
            })
            .ok_or_else(|| format!("slurmctld -V says {:?}: not a release of provision's table", line.trim()))
    }

    /// Built and run on this machine itself, not in a container.
    pub fn is_host(&self) -> bool {
        self.version == HOST_RELEASE
    }

    /// Built here from SchedMD's source.
    pub fn from_source(&self) -> bool {
        matches!(self.origin, Origin::SchedMd { .. })
    }

    /// The upstream version the table names: "24.11.5", "26.05.3".
    pub fn upstream(&self) -> &'static str {
        match self.origin {
            Origin::Debian { deb_version } => deb_version.split_once('-').map_or(deb_version, |(u, _)| u),
            Origin::SchedMd { upstream } => upstream,
        }
    }
}

/// The series ("26.05") of an upstream version ("26.05.3"), if it has one.
pub fn series_of(upstream: &str) -> Option<&str> {
    let mut parts = upstream.splitn(3, '.');
    let (major, minor) = (parts.next()?, parts.next()?);
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(major) && numeric(minor) && parts.next().is_some_and(|p| p.starts_with(|c: char| c.is_ascii_digit())))
        .then(|| &upstream[..major.len() + 1 + minor.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_found_by_version_and_by_what_their_slurmctld_says() {
        let r = SlurmRelease::find("24.11").unwrap();
        assert_eq!((r.suite, r.upstream(), r.from_source()), ("trixie", "24.11.5", false));
        assert!(SlurmRelease::find("22.05").unwrap().is_host());
        let n = SlurmRelease::find("26.05").unwrap();
        assert_eq!((n.suite, n.upstream(), n.from_source()), ("trixie", "26.05.3", true));
        assert_eq!(n.lib_dir, "/usr/lib/x86_64-linux-gnu/slurm");
        assert_eq!(SlurmRelease::of_version_line("slurm-wlm 24.11.5\n").unwrap().version, "24.11");
        assert_eq!(SlurmRelease::of_version_line("slurm 22.05.8").unwrap().version, "22.05");
        // Debian's releases exactly; SchedMD's series whatever its patch release.
        assert!(SlurmRelease::of_version_line("slurm 24.11.6").unwrap_err().contains("\"slurm 24.11.6\""));
        assert_eq!(SlurmRelease::of_version_line("slurm 26.05.5").unwrap().version, "26.05");
        assert_eq!(SlurmRelease::of_version_line("slurm 25.11.7\n").unwrap().version, "25.11");
        let e = SlurmRelease::find("23.02").unwrap_err();
        assert_eq!(e, "Slurm 23.02: unknown release; expected one of 22.05, 24.11, 25.11, 26.05");
    }

    #[test]
    fn a_series_is_major_dot_minor_of_a_release() {
        assert_eq!(series_of("26.05.3"), Some("26.05"));
        assert_eq!(series_of("25.11.0rc1"), Some("25.11"));
        assert_eq!(series_of("26.05"), None);
        assert_eq!(series_of("x.05.3"), None);
        assert_eq!(series_of(""), None);
    }
}
