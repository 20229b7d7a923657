//! Each kind of fault of the schedule done to a compose site, and undone:
//! docker commands on the site's containers, each failure said with the
//! command. Which job a hub or worker kill strikes is the caller's choice.

use std::process::Command;

use testcluster::compose::Site;

use super::schedule::Kind;

/// What undoes a fault once its hold is over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undo {
    args: Vec<String>,
}

impl Undo {
    fn docker(args: &[&str]) -> Undo {
        Undo { args: args.iter().map(|a| a.to_string()).collect() }
    }
}

/// The most a /tmp may hold for the campaign to fill it: a container's
/// /tmp on the machine's own disk is refused, not filled.
const TMP_AT_MOST: u64 = 1 << 30;

fn docker(args: &[&str]) -> Result<String, String> {
    let out = Command::new("docker").args(args).output().map_err(|e| format!("docker {args:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("docker {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Do `kind` to `site`: to compute host `host` for the kinds that strike
/// one ([`Kind::on_a_host`]), and for a hub or worker kill, to the
/// processes on `host` whose command line holds `pattern`. What undoes it
/// (None for the kinds that are over at once).
pub fn inject(site: &Site, kind: Kind, host: &str, pattern: &str) -> Result<Option<Undo>, String> {
    let c = site.container(host);
    let name = &site.spec.name;
    match kind {
        Kind::KillHost => {
            docker(&["kill", &c])?;
            Ok(Some(Undo::docker(&["start", &c])))
        }
        Kind::PauseHost => {
            docker(&["pause", &c])?;
            Ok(Some(Undo::docker(&["unpause", &c])))
        }
        Kind::CutHost => {
            let net = format!("{name}_site");
            docker(&["network", "disconnect", &net, &c])?;
            // Back under its own name, which the others resolve it by.
            Ok(Some(Undo::docker(&["network", "connect", "--alias", host, &net, &c])))
        }
        Kind::RestartCtld => docker(&["restart", "-t", "1", &site.container("slurmctld")]).map(|_| None),
        Kind::StopDbd => {
            let dbd = site.container("slurmdbd");
            docker(&["stop", "-t", "1", &dbd])?;
            Ok(Some(Undo::docker(&["start", &dbd])))
        }
        Kind::StallMariadb => {
            // mariadbd is the container's first process (site-init.sh execs it).
            let db = site.container("mariadb");
            docker(&["kill", "--signal", "STOP", &db])?;
            Ok(Some(Undo::docker(&["kill", "--signal", "CONT", &db])))
        }
        Kind::KillHub | Kind::KillWorker => {
            // pkill says 1 when nothing matched (the process had ended): no
            // failure of the campaign's. (Run without a shell, whose own
            // command line would hold the pattern.)
            let args = ["exec", &c, "pkill", "-KILL", "-f", pattern];
            let st = Command::new("docker").args(args).status().map_err(|e| format!("docker {args:?}: {e}"))?;
            match st.code() {
                Some(0 | 1) => Ok(None),
                _ => Err(format!("docker {}: {st}", args.join(" "))),
            }
        }
        Kind::FillTmp => {
            let avail = docker(&["exec", &c, "df", "--output=size,avail", "-B1", "/tmp"])?;
            let nums: Vec<u64> = avail.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            let [size, free] = nums[..] else { return Err(format!("{host}: df of /tmp said {avail:?}")) };
            if size > TMP_AT_MOST {
                return Err(format!(
                    "{host}: /tmp holds {size} bytes, more than the {TMP_AT_MOST} the campaign fills (it would fill \
                     the machine's disk)"
                ));
            }
            docker(&["exec", &c, "fallocate", "-l", &free.to_string(), "/tmp/chaos-fill"])?;
            Ok(Some(Undo::docker(&["exec", &c, "rm", "-f", "/tmp/chaos-fill"])))
        }
    }
}

/// Undo a fault.
pub fn undo_fault(u: &Undo) -> Result<(), String> {
    let args: Vec<&str> = u.args.iter().map(String::as_str).collect();
    docker(&args).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Duration;
    use testcluster::compose::SiteSpec;

    /// Each kind done to a 2-host site and undone leaves the site as it
    /// was: every node idle again, slurmdbd answering. By hand
    /// (`cargo test -p cluster-eval --lib chaos::faults -- --ignored`),
    /// after `cargo xtask build`.
    #[test]
    #[ignore = "needs Docker and the host's staged plugins"]
    fn every_fault_done_and_undone_leaves_the_site_whole() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let staged = root.join("target/plugins");
        let site = Site::up(SiteSpec::new("chaos-smoke", 2, 2), &root, &staged).unwrap();
        for kind in Kind::ALL {
            let undo = match inject(&site, kind, "c1", "no-such-process-anywhere") {
                Ok(u) => u,
                // The site's /tmp is the machine's disk: refused, said why.
                Err(e) if kind == Kind::FillTmp => {
                    assert!(e.contains("would fill the machine's disk"), "{e}");
                    None
                }
                Err(e) => panic!("{kind:?}: {e}"),
            };
            std::thread::sleep(Duration::from_secs(2));
            if let Some(u) = undo {
                undo_fault(&u).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
            }
            site.wait_ready(Duration::from_secs(180)).unwrap_or_else(|e| panic!("after {kind:?}: {e}"));
            testcluster::wait::until("sacctmgr to answer", Duration::from_secs(120), || {
                Ok(site.output(None, "slurmctld", &["sacctmgr", "-n", "list", "cluster"]).ok().map(|_| ()))
            })
            .unwrap_or_else(|e| panic!("after {kind:?}: {e}"));
        }
        site.down();
    }
}
