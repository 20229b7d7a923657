//! apt with a configuration of its own: a sources list, lists and cache
//! in a folder of ours, so fetching another suite's sources never touches
//! the host's /etc/apt (no sources file written, no host lists updated).

use std::path::{Path, PathBuf};
use std::process::Command;

use testcluster::compose::image::suite_sources;
use testcluster::process::run;

use crate::Result;

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
