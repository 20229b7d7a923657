//! What the compose-site tests share: a site of our plugins brought up
//! under target/compose (its hosts' logs printed if it does not come up),
//! files put in a test user's home, commands as that user on the login
//! host, and waiting on slurmctld's log.

use std::path::PathBuf;
use std::time::Duration;

use malleable_model::log_lines::LogLine;
use malleable_model::stamped::Stamped;
use malleable_model::JobId;
use testcluster::compose::site::COMMAND_LIMIT;
use testcluster::compose::{Site, SiteSpec};
use testcluster::wait;

use crate::said::{self, Said};
use crate::{plugin_dir, repo_root};

/// The README's example elastic job (README: "A site in docker-compose"),
/// word for word: the compose tests run exactly what a user is shown.
pub const README_ELASTIC_JOB: &str = "#!/bin/sh
#SBATCH --nodes=2 --min-nodes-invasive=2 --max-nodes-invasive=4 --node-constraints=even
#SBATCH --time=5 --output=elastic-%j.out
mall-run -- mall-example --cells 8192 --iterations 600 --unit-us 25
";

/// The example application's options in [`README_ELASTIC_JOB`].
pub const README_APP_ARGS: &str = "--cells 8192 --iterations 600 --unit-us 25";

/// Names the Slurm release the compose tests' sites run (24.11), with
/// `testcluster::plugins::PLUGIN_DIR_VAR` naming its plugins; unset, the
/// host's release.
pub const SITE_SLURM_VAR: &str = "MALLEABLE_SITE_SLURM";

/// Set, a compose test leaves its site up when it ends.
pub const KEEP_SITE_VAR: &str = "MALLEABLE_KEEP_SITE";

/// Bring up site `name` with `nodes` compute hosts (cores as this machine
/// has), as `spec` changes it, of the release [`SITE_SLURM_VAR`] names.
/// Another release's site is named after it too (`t-readme-2605`), so that
/// the host's tier and a release's may run at once (`cargo xtask test`).
pub fn up_site(name: &str, nodes: usize, spec: impl FnOnce(SiteSpec) -> SiteSpec) -> Site {
    let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let release = std::env::var_os(SITE_SLURM_VAR).map(|r| r.to_string_lossy().into_owned());
    let name = match &release {
        Some(r) => format!("{name}-{}", r.replace('.', "")),
        None => name.to_string(),
    };
    let mut base = SiteSpec::new(&name, nodes, cores);
    if let Some(release) = &release {
        base = base.slurm(release).unwrap_or_else(|e| panic!("{SITE_SLURM_VAR}: {e}"));
    }
    let spec = spec(base);
    let mut site =
        Site::up(spec, &repo_root(), &plugin_dir()).unwrap_or_else(|e| panic!("site {name} did not come up: {e}"));
    // For looking into a failure: the site is left up (`cargo xtask compose
    // down --name NAME` ends it).
    site.keep = std::env::var_os(KEEP_SITE_VAR).is_some();
    site.watch(TEST_LIMIT);
    site
}

/// Put `text` in `user`'s home on the site (shared by the login and
/// compute hosts) as `file`, owned by the user; its path there.
pub fn put_file(site: &Site, user: &str, file: &str, text: &str) -> String {
    let (_, uid, _) =
        testcluster::compose::spec::USERS.iter().find(|u| u.0 == user).unwrap_or_else(|| panic!("no test user {user}"));
    let path: PathBuf = site.dir.join("home").join(user).join(file);
    std::fs::write(&path, text).unwrap();
    std::os::unix::fs::chown(&path, Some(*uid), Some(*uid)).unwrap();
    format!("/home/{user}/{file}")
}

/// Run `docker` with `args` (stop, start, kill, pause a site's host);
/// panics if it fails, or has not ended within [`COMMAND_LIMIT`].
pub fn docker(args: &[&str]) {
    let mut cmd = std::process::Command::new("docker");
    testcluster::process::output_within(cmd.args(args), COMMAND_LIMIT).unwrap_or_else(|e| panic!("{e}"));
}

/// How long a compose test may run once its site is up ([`Site::watch`]):
/// the longest take about 8 minutes on 2 cores beside CI's builds.
pub const TEST_LIMIT: Duration = Duration::from_secs(20 * 60);

/// What `cmd` prints when `user` runs it on the login host; panics with its error.
pub fn as_user(site: &Site, user: &str, cmd: &[&str]) -> String {
    site.output(Some(user), "login", cmd).unwrap_or_else(|e| panic!("{user}: {cmd:?}: {e}"))
}

/// Submit with sbatch as `user` on the login host; the job's id.
pub fn sbatch_as(site: &Site, user: &str, args: &[&str]) -> u32 {
    let mut cmd = vec!["sbatch", "--parsable"];
    cmd.extend(args);
    let out = as_user(site, user, &cmd);
    out.trim().parse().unwrap_or_else(|_| panic!("sbatch printed {out:?}"))
}

/// Wait until slurmctld's log has a line of the agent's that says `said`; the line.
pub fn wait_ctld_said(site: &Site, said: &Said, timeout: Duration) -> String {
    wait_ctld_said_after(site, 0, said, timeout)
}

/// As [`wait_ctld_said`], in the log after its first `from` bytes.
pub fn wait_ctld_said_after(site: &Site, from: usize, said: &Said, timeout: Duration) -> String {
    let found = wait::until(&format!("a slurmctld log line saying {}", said.what), timeout, || {
        let log = site.log("slurmctld", "slurmctld.log");
        Ok(said.first(&log[from.min(log.len())..]).map(str::to_string))
    });
    found.unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    })
}

/// A job's field as `scontrol show job` prints it (`JobState`, `NodeList`,
/// `SystemComment`: [`crate::show_field`]).
pub fn job_field(site: &Site, id: u32, key: &str) -> String {
    crate::show_field(
        &site.output(None, "login", &["scontrol", "show", "job", &id.to_string()]).unwrap_or_default(),
        key,
    )
}

/// Wait until the job's field has the value `want` (`JobState`,
/// `RUNNING`), showing the site's logs if it never does.
pub fn wait_field(site: &Site, id: u32, key: &str, want: &str, timeout: Duration) {
    wait::until(&format!("JobId={id} {key}={want}"), timeout, || {
        let got = job_field(site, id, key);
        if got == want {
            Ok(Some(()))
        } else {
            Err(format!("{key}={got}"))
        }
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    })
}

/// Wait until the job has ended; its final state.
pub fn wait_finished(site: &Site, id: u32, timeout: Duration) -> String {
    let state = wait::until(&format!("JobId={id} to end"), timeout, || {
        let s = job_field(site, id, "JobState");
        if ["PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "RESIZING", ""].contains(&s.as_str()) {
            Err(s)
        } else {
            Ok(Some(s))
        }
    });
    state.unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    })
}

/// One accounting record of a job as `sacct -D -X` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub start: i64,
    pub end: i64,
    pub nodes: i64,
    pub state: String,
    pub node_list: String,
}

/// Every accounting record of the ended job `id` (`sacct -D -X`), in order
/// of start, once the database has them all ended and the last is the
/// job's end (not a resize's). slurmctld sends records through its slurmdbd
/// agent, after the job has ended in slurmctld (and after slurmctld's
/// restart, from its saved queue; after slurmdbd comes back, the ones it
/// queued meanwhile), so for a while after `wait_finished` sacct may still
/// show a record RUNNING, or not yet the last, as it would to a user under
/// stock Slurm; a record still missing or open after a minute is lost, and
/// fails the test with the site's logs.
pub fn records(site: &Site, id: u32) -> Vec<Record> {
    let ended =
        wait::until(&format!("every record of JobId={id} ended in the database"), Duration::from_secs(60), || {
            let out = site
                .output(
                    None,
                    "login",
                    &["sacct", "-D", "-X", "-n", "-P", "-j", &id.to_string(), "-o", "Start,End,NNodes,State,NodeList"],
                )
                .map_err(|e| format!("sacct: {e}"))?;
            let recs: Option<Vec<Record>> = out.lines().map(parse_record).collect();
            match recs {
                Some(r) if r.iter().max_by_key(|r| r.start).is_some_and(|last| last.state != "RESIZING") => Ok(Some(r)),
                Some(r) if !r.is_empty() => Err(format!("the last record is a resize's, not the job's end: {out:?}")),
                _ => Err(format!("sacct said {out:?}")),
            }
        });
    let mut recs = ended.unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    });
    recs.sort_by_key(|r| (r.start, r.end));
    recs
}

/// One line of `sacct -P -o Start,End,NNodes,State,NodeList`; None while
/// the record is open (End "Unknown") or the line is not one.
fn parse_record(line: &str) -> Option<Record> {
    let f: Vec<&str> = line.split('|').collect();
    if f.len() != 5 {
        return None;
    }
    let time = testcluster::jobs::parse_time;
    Some(Record {
        start: time(f[0])?,
        end: time(f[1])?,
        nodes: f[2].parse().ok()?,
        state: f[3].to_string(),
        node_list: f[4].to_string(),
    })
}

/// Records that tile a job's life: each starts where the one before ended.
pub fn assert_tiling(recs: &[Record]) {
    for pair in recs.windows(2) {
        assert_eq!(pair[1].start, pair[0].end, "records overlap or leave a gap: {recs:#?}");
    }
}

/// The time of a slurmctld log line (`[2026-11-27T11:17:02.123] ...`), in seconds.
pub fn log_time(line: &str) -> f64 {
    Stamped::parse(line).unwrap_or_else(|| panic!("no time on {line}")).secs()
}

/// Job `id`'s node counts over time as sched/malleable's log lines tell
/// them: (when, nodes held from then on), from its start to each resize.
pub fn timeline(site: &Site, id: u32) -> Vec<(f64, usize)> {
    let log = site.log("slurmctld", "slurmctld.log");
    let mut events = Vec::new();
    for line in log.lines() {
        let ours = LogLine::parse(line).is_some_and(|l| l.job() == Some(JobId(id)));
        if let Some(list) = said::holds(line).filter(|_| ours) {
            let n = testcluster::hostlist::expand(&list).unwrap_or_else(|e| panic!("{e}: {line}")).len();
            events.push((log_time(line), n));
        }
    }
    events
}

/// Assert that `user`'s job `id` (the README's script, output
/// `elastic-<id>.out`) printed the checksum `mall-example --serial` prints
/// for the same `args` on the login host: the application run alone.
pub fn assert_result_as_alone(site: &Site, user: &str, id: u32, args: &str) {
    let out = std::fs::read_to_string(site.dir.join(format!("home/{user}/elastic-{id}.out"))).unwrap();
    let mut serial = vec!["mall-example", "--serial"];
    serial.extend(args.split(' '));
    let alone = crate::malleable::checksum_in(&as_user(site, user, &serial));
    assert!(alone.is_some());
    assert_eq!(crate::malleable::checksum_in(&out), alone, "{out}");
}

/// Once every step of the ended job `id` is in the database (the last one's
/// end carries the job's TRES), each of its records is billed for the
/// nodes it held, at one CPU a node: its AllocTRES name as many nodes as
/// its NNodes, and its AllocCPUS is that count too. Within a deadline: the
/// plugin sets a first record right a pass after that step's end.
pub fn assert_each_record_billed_for_its_nodes(site: &Site, user: &str, id: u32) {
    let ids = id.to_string();
    wait::until("every step of the job ended in the database", Duration::from_secs(60), || {
        let steps = as_user(site, user, &["sacct", "-D", "-n", "-P", "-j", &ids, "-o", "JobID,State"]);
        let closed = steps.lines().any(|l| l.starts_with(&format!("{id}.batch|"))) && !steps.contains("|RUNNING");
        Ok(closed.then_some(()))
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    });
    let mut seen = String::new();
    let billed = wait::until("each record billed for the nodes it held", Duration::from_secs(30), || {
        seen = as_user(site, user, &["sacct", "-D", "-X", "-n", "-P", "-j", &ids, "-o", "NNodes,AllocCPUS,AllocTRES"]);
        let right = seen.lines().all(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let node = f.get(2).and_then(|t| t.split(',').find_map(|kv| kv.strip_prefix("node=")));
            f.len() == 3 && node == Some(f[0]) && f[1] == f[0]
        });
        Ok(right.then_some(()))
    });
    if let Err(e) = billed {
        panic!("{e}: sacct -D -X (NNodes, AllocCPUS, AllocTRES):\n{seen}");
    }
}

/// `user`'s fair-share usage (sshare's RawUsage, in account physics)
/// against the CPU-seconds job `id`'s records hold (its only job), within
/// 2% or within a second of each record's CPUs, whichever is more
/// (slurmdbd keeps a record's start and end by the whole second). The
/// records' CPU-seconds and what is allowed, or what is wrong.
pub fn usage_against_records(site: &Site, user: &str, id: u32) -> Result<(i64, f64), String> {
    let sacct = ["sacct", "-D", "-X", "-n", "-P", "-j", &id.to_string(), "-o", "AllocCPUS,ElapsedRaw"];
    let records: Vec<(i64, i64)> = as_user(site, user, &sacct)
        .lines()
        .map(|l| {
            let (cpus, secs) = l.split_once('|').ok_or_else(|| format!("sacct line {l:?}"))?;
            Ok((
                cpus.parse::<i64>().map_err(|e| format!("{l}: {e}"))?,
                secs.parse::<i64>().map_err(|e| format!("{l}: {e}"))?,
            ))
        })
        .collect::<Result<_, String>>()?;
    let held: i64 = records.iter().map(|(cpus, secs)| cpus * secs).sum();
    let rounding: i64 = records.iter().map(|(cpus, _)| cpus).sum();
    let raw = as_user(site, user, &["sshare", "-n", "-P", "-l", "-A", "physics", "-u", user, "-o", "RawUsage"]);
    let got: f64 = raw.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(-1.0);
    testcluster::usage::matches(got, held as f64, 0.02, rounding as f64)
        .map(|within| (held, within))
        .map_err(|e| format!("{user}: {e}; the job's records (CPUs, seconds): {records:?}"))
}
