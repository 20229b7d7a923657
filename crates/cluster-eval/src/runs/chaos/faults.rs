//! Each kind of fault of the schedule done to a compose site, and undone:
//! docker commands on the site's containers (and iptables in a container's
//! network namespace), each failure said with the command. Which job a hub
//! or worker kill strikes is the caller's choice.

use std::process::Command;

use testcluster::compose::Site;

use super::schedule::Kind;

/// What undoes a fault once its hold is over: a command and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undo {
    program: &'static str,
    args: Vec<String>,
}

impl Undo {
    fn docker(args: &[&str]) -> Undo {
        Undo { program: "docker", args: args.iter().map(|a| a.to_string()).collect() }
    }
}

/// iptables rules that drop every packet in and out of a host but its
/// loopback's: a cable pulled. The host keeps its address (docker's
/// `network disconnect` and `connect` gave it another, which slurmctld,
/// having resolved it once, never learnt: the host stayed down for good),
/// and its own names still resolve (docker's DNS is on the loopback).
const CUT: [[&str; 6]; 2] = [["INPUT", "!", "-i", "lo", "-j", "DROP"], ["OUTPUT", "!", "-o", "lo", "-j", "DROP"]];

/// `nsenter` into the network namespace of process `pid` (a container's
/// first), running iptables with `op` (`-I`, `-D`) on each rule of [`CUT`].
fn cut_args(pid: &str, op: &str, rule: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["-t", pid, "-n", "iptables", op].iter().map(|a| a.to_string()).collect();
    args.extend(rule.iter().map(|a| a.to_string()));
    args
}

fn nsenter(args: &[String]) -> Result<(), String> {
    let out = Command::new("nsenter").args(args).output().map_err(|e| format!("nsenter {args:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("nsenter {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
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
/// processes on `host` whose name matches `pattern` (a regular expression
/// of the process name, not its command line: mall-run's holds its
/// application's name). What undoes it
/// (None for the kinds that are over at once).
pub fn inject(site: &Site, kind: Kind, host: &str, pattern: &str) -> Result<Option<Undo>, String> {
    let c = site.container(host);
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
            let pid = docker(&["inspect", "-f", "{{.State.Pid}}", &c])?;
            let pid = pid.trim();
            for rule in CUT {
                nsenter(&cut_args(pid, "-I", &rule))?;
            }
            // One undo for both rules: a shell runs the two deletions.
            let undo: Vec<String> =
                CUT.iter().map(|r| format!("nsenter {}", cut_args(pid, "-D", r).join(" "))).collect();
            Ok(Some(Undo { program: "sh", args: vec!["-c".into(), undo.join(" && ")] }))
        }
        // As an admin restarts it (systemd waits 90 s): SIGTERM, and its
        // state saved before it exits. Killed after 1 s it often was not,
        // and lost the fair-share usage counted since its last periodic
        // save (stock), which no records can match.
        Kind::RestartCtld => docker(&["restart", "-t", "60", &site.container("slurmctld")]).map(|_| None),
        // The daemon, as an admin stops it, its host up: its port refuses
        // at once. Its container stopped (runs 11 to 13) took its name away,
        // and 22.05's node failure path (no plugin's) waited 10 s per lookup
        // under slurmctld's locks: sbatch timed out. A lost slurmdbd host is
        // compose_faults.rs's (its container stopped).
        Kind::StopDbd => {
            site.stop_slurmdbd().map_err(|e| e.to_string())?;
            let dbd = site.container("slurmdbd");
            Ok(Some(Undo::docker(&["exec", &dbd, "rm", "-f", testcluster::compose::site::SLURMDBD_HELD])))
        }
        Kind::StallMariadb => {
            // mariadbd is the container's first process (site-init.sh execs it).
            let db = site.container("mariadb");
            docker(&["kill", "--signal", "STOP", &db])?;
            Ok(Some(Undo::docker(&["kill", "--signal", "CONT", &db])))
        }
        Kind::KillHub | Kind::KillWorker => {
            // pkill's status is read from a shell (docker exec's own would
            // not tell "nothing matched" from "the container is paused").
            // A worker: one, the oldest.
            let one = if kind == Kind::KillWorker { "-o " } else { "" };
            let said = docker(&["exec", &c, "sh", "-c", &format!("pkill -KILL {one}'{pattern}'; echo $?")])?;
            match said.trim().lines().last() {
                Some("0") => Ok(None),
                Some("1") => Err(format!("{host}: no process named as {pattern} (it had ended)")),
                _ => Err(format!("{host}: pkill said {said:?}")),
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
    let out = Command::new(u.program).args(&u.args).output().map_err(|e| format!("{} {:?}: {e}", u.program, u.args))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{} {}: {}", u.program, u.args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
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
            let undo = match inject(&site, kind, "c1", "^no-such-proc$") {
                Ok(u) => u,
                // Nothing to kill is said, and not counted as injected.
                Err(e) if matches!(kind, Kind::KillHub | Kind::KillWorker) => {
                    assert!(e.contains("no process named as ^no-such-proc$"), "{e}");
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
