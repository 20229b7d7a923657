//! One campaign on a compose site: the seed's job stream submitted and its
//! fault schedule played at their times, every fault undone, the queue
//! drained, then each invariant checked; the report.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use malleable_model::slurm_lines::{self, SlurmLine};
use testcluster::compose::spec::USERS;
use testcluster::compose::{Site, SiteSpec};
use testcluster::jobs::checksum_in;
use testcluster::wait;

use super::faults::{inject, undo_fault, Undo};
use super::invariants::{
    decayed_share, is_final, jobs_counted_apart, names, raw_usage, records, tiling, usage_trail, Record, SACCT_FIELDS,
};
use super::report::{Report, Violation};
use super::schedule::{schedule, Fault, Kind};
use super::stream::{stream, Planned};

/// Compute hosts of the campaign's site.
pub const HOSTS: usize = 6;

/// Run a `minutes`-long campaign from `seed` on a site of Slurm `slurm`,
/// the plugins staged in `staged`, the site's files under `target`; with
/// `keep`, the site is left up to be looked into (its database, its logs).
pub fn run(staged: &Path, target: &Path, slurm: &str, minutes: u32, seed: u64, keep: bool) -> Result<Report, String> {
    let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    // A host that stops answering is DOWN, and out of its jobs, in 20 s.
    // DebugFlags=Priority: the usage counted for each job, in the log, so
    // that a user's RawUsage against their records names its jobs.
    // WaitTime=120: srun ends a step's other tasks 120 s after its first
    // task ended (stock: never). A task's exit message that slurmstepd
    // could not send (its host paused, srun's cut off: chaos run 23's rigid
    // JobId=270) otherwise leaves srun waiting out the job's time limit,
    // Slurm's own behaviour with no plugin of ours in its path; a site
    // under such faults sets it (docs/faults.md). mall-run's steps are
    // untouched: elastic workers are a step each, and an MPI step's ranks
    // end together.
    // Named by release, so that campaigns on two releases run side by side.
    let name = format!("chaos-{}", slurm.replace('.', ""));
    let spec = SiteSpec::new(&name, HOSTS, cores)
        .slurm(slurm)?
        .set("SlurmdTimeout", "20")
        .set("DebugFlags", "Priority")
        .set("WaitTime", "120");
    let mut site = Site::up(spec, target.parent().ok_or("target/ has no parent")?, staged)?;
    site.keep = keep;
    let report = play(&site, minutes, seed);
    if report.is_err() {
        site.print_logs();
    }
    report
}

/// A job submitted: its plan and id, and the faults aimed at its own
/// processes (a hub or worker killed).
struct Submitted {
    plan: Planned,
    id: u32,
    struck: Vec<Kind>,
}

/// The site's PriorityDecayHalfLife (7 days), in seconds.
const DECAY_HALF_LIFE_S: f64 = 7.0 * 86400.0;

fn play(site: &Site, minutes: u32, seed: u64) -> Result<Report, String> {
    let jobs = stream(seed, minutes, HOSTS as u32);
    let faults = schedule(seed, minutes, HOSTS);
    // What each application computes alone, once a size.
    let mut alone: HashMap<Vec<&str>, String> = HashMap::new();
    for cmd in jobs.iter().filter_map(Planned::serial) {
        if let std::collections::hash_map::Entry::Vacant(e) = alone.entry(cmd) {
            let out = site.output(Some("alice"), "login", e.key())?;
            let sum = checksum_in(&out).ok_or_else(|| format!("{:?} printed no checksum: {out}", e.key()))?;
            e.insert(sum);
        }
    }
    let hosts = site.spec.node_names();
    let start = Instant::now();
    // The same moment on the clock sacct's times are read against (the
    // site's containers share the machine's).
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let mut submitted: Vec<Submitted> = Vec::new();
    let mut open: Vec<(Duration, Undo, &Fault)> = Vec::new();
    let mut report = Report::default();
    let mut problems: Vec<Violation> = Vec::new();
    let (mut next_job, mut next_fault) = (0, 0);
    let end = Duration::from_secs(u64::from(minutes) * 60);
    loop {
        let now = start.elapsed();
        // Faults whose hold is over are undone first.
        open.sort_by_key(|(at, ..)| *at);
        while open.first().is_some_and(|(at, ..)| *at <= now) {
            let (_, u, f) = open.remove(0);
            eprintln!("chaos: {:>5.0} s: {} undone", now.as_secs_f64(), f.kind.name());
            if let Err(e) = undo_fault(&u) {
                problems.push(violation("every fault can be undone", None, e, Some(f)));
            }
        }
        if let Some(plan) = jobs.get(next_job).filter(|j| j.at <= now) {
            next_job += 1;
            let (shape, user) = (plan.shape.name(), plan.user);
            match submit(site, plan, next_job) {
                Ok(id) => {
                    eprintln!("chaos: {:>5.0} s: JobId={id} submitted ({shape}, {user})", now.as_secs_f64());
                    submitted.push(Submitted { plan: plan.clone(), id, struck: Vec::new() })
                }
                Err(e) => {
                    // sbatch timed out waiting for slurmctld's answer, which
                    // may still take the job: as its user would, look for
                    // it; found, it is the campaign's (its records and usage
                    // count), and the user was told wrong all the same.
                    let e = match taken_all_the_same(site, plan, next_job) {
                        Some(id) => {
                            eprintln!("chaos: {:>5.0} s: JobId={id} taken though sbatch failed", now.as_secs_f64());
                            submitted.push(Submitted { plan: plan.clone(), id, struck: Vec::new() });
                            format!("{e}; the job was taken all the same, as JobId={id}")
                        }
                        None => e,
                    };
                    problems.push(violation("every job is taken", None, e, last_fault(&faults, now)));
                }
            }
            continue;
        }
        if let Some(f) = faults.get(next_fault).filter(|f| f.at <= now) {
            next_fault += 1;
            let host = f.host.map(|h| hosts[h].clone());
            let (target, job) = match f.kind {
                Kind::KillHub | Kind::KillWorker => match running_computing_host(site, &submitted) {
                    Some((job, host)) => (host, Some(job)),
                    None => continue,
                },
                _ => (host.unwrap_or_else(|| "c1".into()), None),
            };
            // Process names, which pkill takes of 15 characters at most
            // (as the kernel keeps them: mall-jacobi-ope).
            let pattern = if f.kind == Kind::KillHub { "^mall-run$" } else { "^mall-(ex|ja)" };
            let active = (f.kind == Kind::RestartCtld).then(|| active_jobs(site)).flatten();
            match inject(site, f.kind, &target, pattern) {
                Ok(undo) => {
                    let on = match job {
                        Some(j) => format!(" on {target} (JobId={})", submitted[j].id),
                        None if f.kind.on_a_host() => format!(" on {target}"),
                        None => String::new(),
                    };
                    eprintln!("chaos: {:>5.0} s: {}{on}", now.as_secs_f64(), f.kind.name());
                    *report.faults.entry(f.kind).or_default() += 1;
                    if let Some(j) = job {
                        submitted[j].struck.push(f.kind);
                    }
                    // pkill matches every hub on the host: the other jobs
                    // whose batch host it is lose theirs too.
                    if f.kind == Kind::KillHub {
                        for j in computing_on(site, &submitted, &target).into_iter().filter(|&j| Some(j) != job) {
                            submitted[j].struck.push(f.kind);
                        }
                    }
                    if let Some(before) = active {
                        if let Err(e) = came_back_with(site, &before) {
                            problems.push(violation("slurmctld comes back with every job", None, e, Some(f)));
                        }
                    }
                    if let Some(u) = undo {
                        open.push((f.undone_at(), u, f));
                    }
                }
                // A fault the site cannot take is no violation of the
                // scheduler's; it is said, and not counted.
                Err(e) => eprintln!("chaos: {} on {target} not injected: {e}", f.kind.name()),
            }
            continue;
        }
        if now >= end && open.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // Every job ends within its time limit from now, or is a violation.
    let limit = submitted.iter().map(|s| s.plan.time_limit_min).max().unwrap_or(0);
    // A batch job whose launch failed (its host cut, say) is requeued held
    // by stock slurmctld, for an admin to release: the campaign does.
    let mut released = std::collections::BTreeSet::new();
    let drained = wait::until("the queue to drain", Duration::from_secs(u64::from(limit) * 60 + 120), || {
        let q = site.output(None, "login", &["squeue", "-h", "-o", "%i %r"])?;
        // 22.05's squeue prints the reason with spaces, later ones with `_`.
        let held = |r: &str| r.trim().replace(' ', "_") == "launch_failed_requeued_held";
        for (id, _) in q.lines().filter_map(|l| l.split_once(' ')).filter(|(_, r)| held(r)) {
            if released.insert(id.to_string()) {
                eprintln!("chaos: JobId={id} was requeued held when its launch failed: released");
            }
            site.output(None, "slurmctld", &["scontrol", "release", id])?;
        }
        Ok(q.trim().is_empty().then_some(()))
    });
    report.released = released.len();
    // A host paused while Slurm ended a job's tasks there leaves them
    // unkillable until it thaws: stock drains the node ("Kill task
    // failed") for an admin to resume, which the campaign does. Any
    // other drain stays, for the check.
    match site.output(None, "slurmctld", &["sinfo", "-R", "-h", "-o", "%n|%E"]) {
        Ok(drained) => {
            for node in drained
                .lines()
                .filter_map(|l| l.split_once('|'))
                .filter(|(_, r)| r.starts_with("Kill task failed"))
                .map(|(n, _)| n.trim().to_string())
            {
                let resume = ["scontrol", "update", &format!("nodename={node}"), "state=resume"];
                match site.output(None, "slurmctld", &resume) {
                    Ok(_) => report.resumed.push(node),
                    Err(e) => problems.push(violation("a drained node can be resumed", None, e, None)),
                }
            }
        }
        Err(e) => problems.push(violation("drained nodes can be listed", None, e, None)),
    }
    if let Err(e) = drained {
        problems.push(violation("every job ends within its time limit", None, e, faults.last()));
        let _ = site.output(None, "login", &["scancel", "--user=alice,bob"]);
    }
    // A check that cannot run is a violation, with the report of the rest.
    if let Err(e) = check(site, &submitted, &alone, &faults, (start, wall), &mut report, &mut problems) {
        problems.push(violation("every invariant is checked", None, e, None));
    }
    report.violations = problems;
    Ok(report)
}

/// The invariants, once the queue has drained.
fn check(
    site: &Site,
    submitted: &[Submitted],
    alone: &HashMap<Vec<&str>, String>,
    faults: &[Fault],
    (start, wall): (Instant, i64),
    report: &mut Report,
    problems: &mut Vec<Violation>,
) -> Result<(), String> {
    let ids: Vec<String> = submitted.iter().map(|s| s.id.to_string()).collect();
    let read = || {
        let (ids, fmt) = (ids.join(","), SACCT_FIELDS);
        let out = site.output(None, "slurmctld", &["sacct", "-a", "-D", "-X", "-n", "-P", "-j", &ids, "-o", fmt])?;
        records(&out)
    };
    // slurmdbd takes the last records through slurmctld's queue; after a
    // minute and more, the records as they are (a runaway is a violation).
    let recs = wait::until("every record ended in the database", Duration::from_secs(120), || {
        let recs = read()?;
        Ok(recs.values().all(|r| r.iter().all(|x| x.end != "Unknown")).then_some(recs))
    })
    .or_else(|_| read())?;
    let elapsed = start.elapsed();
    for s in submitted {
        let mine: BTreeMap<&String, _> = records_of(&recs, s.id).collect();
        if mine.is_empty() {
            problems.push(violation("every job reaches the database", Some(s.id), "no record".into(), None));
        }
        // Its output, read once for all its records.
        let out = output_of(site, s);
        for (task, r) in mine {
            let state = r.last().map(|x| x.state.clone()).unwrap_or_default();
            *report.ends.entry(state.clone()).or_default() += 1;
            *report.by_shape.entry((s.plan.shape.name(), state.clone())).or_default() += 1;
            if let Err(e) = tiling(r) {
                let what = format!("{task}: {e}");
                problems.push(violation("records tile the job's life", Some(s.id), what, None));
            }
            if state == "FAILED" && s.plan.shape.computes() && !s.struck.contains(&Kind::KillHub) && !says_why(&out) {
                let what = "its output has no error line from mall-run, srun or slurmstepd".to_string();
                problems.push(violation("a failed job says why", Some(s.id), what, None));
            }
            if state == "COMPLETED" {
                if let Some(cmd) = s.plan.serial() {
                    if checksum_in(&out).as_ref() != alone.get(&cmd) {
                        let what = format!("checksum {:?}, alone {:?}", checksum_in(&out), alone.get(&cmd));
                        problems.push(violation(
                            "a completed job's result is its application's alone",
                            Some(s.id),
                            what,
                            None,
                        ));
                    }
                }
            } else if state == "TIMEOUT" {
                // Every job's limit is several times its work (stream.rs):
                // one that ran into it hung.
                let what = format!("it ran out its {} min limit", s.plan.time_limit_min);
                problems.push(violation("no job hangs", Some(s.id), what, None));
            } else if !is_final(&state) {
                problems.push(violation("every job reaches a final state", Some(s.id), state, None));
            }
        }
    }
    // Nodes: none left allocated or drained; no process of a job left.
    if let Err(e) = site.wait_ready(Duration::from_secs(180)) {
        problems.push(violation("no node is left allocated or drained", None, e, faults.last()));
    }
    for host in site.spec.node_names() {
        let left = site.output(None, &host, &["pgrep", "-a", "-f", "mall-run|mall-example|mall-jacobi|slurmstepd"]);
        if let Some(p) = left.ok().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()) {
            problems.push(violation("no process of a job is left", None, format!("{host}: {p}"), None));
        }
    }
    match site.runaway_jobs() {
        Ok(None) => {}
        Ok(Some(list)) => problems.push(violation("no record runs away", None, list, None)),
        Err(e) => problems.push(violation("no record runs away", None, format!("cannot tell: {e}"), None)),
    }
    // Usage is the user's, whichever of their jobs held the CPUs: the
    // records of the helper jobs the plugin submits for an expand too.
    // Each by its own id (JobIDRaw), as slurmctld's log names an array's
    // task.
    let fields = SACCT_FIELDS.replacen("JobID", "JobIDRaw", 1);
    let every = ["sacct", "-a", "-D", "-X", "-n", "-P", "-S", "2020-01-01", "-o", &fields];
    match site.output(None, "slurmctld", &every).and_then(|out| records(&out)) {
        Ok(all) => fair_share(site, &all, elapsed, problems),
        Err(e) => problems.push(violation("each user's RawUsage matches their records", None, e, None)),
    }
    never_crashed(site, report, problems);
    // Each violation about a job with the faults of its life, and its log
    // lines: slurmctld's about it, and its output's last.
    let ctld = site.log("slurmctld", "slurmctld.log");
    for v in problems.iter_mut() {
        let Some(job) = v.job else { continue };
        let mine = records_of(&recs, job).flat_map(|(_, r)| r);
        let times: Vec<(Option<i64>, Option<i64>)> =
            mine.map(|r| (testcluster::jobs::parse_time(&r.start), testcluster::jobs::parse_time(&r.end))).collect();
        let from = times.iter().filter_map(|t| t.0).min();
        let to = times.iter().map(|t| t.1.unwrap_or(i64::MAX)).max();
        if let (Some(from), Some(to)) = (from, to) {
            // Offsets from the campaign's start; a fault a little before
            // the job started may have shaped it too (a host still down).
            let (from, to) = ((from - wall - 30) as f64, to.saturating_sub(wall) as f64);
            let during: Vec<String> =
                faults.iter().filter(|f| (from..=to).contains(&f.at.as_secs_f64())).map(fault_words).collect();
            if !during.is_empty() {
                v.fault_before = Some(during.join(", "));
            }
        }
        let tag = format!("JobId={job}");
        // Not those a violation has already (the fair-share one's trail).
        let mine: Vec<&str> = ctld.lines().filter(|l| names(l, &tag) && !v.log.iter().any(|h| h == l)).collect();
        v.log.extend(mine[mine.len().saturating_sub(12)..].iter().map(|l| l.to_string()));
        if let Some(s) = submitted.iter().find(|s| s.id == job) {
            let out = output_of(site, s);
            let lines: Vec<&str> = out.lines().collect();
            v.log.extend(lines[lines.len().saturating_sub(6)..].iter().map(|l| format!("output: {l}")));
        }
    }
    Ok(())
}

/// Job `id`'s records (an array's tasks' each under its own key).
fn records_of(recs: &BTreeMap<String, Vec<Record>>, id: u32) -> impl Iterator<Item = (&String, &Vec<Record>)> {
    let id = id.to_string();
    recs.iter().filter(move |(k, _)| k.split('_').next() == Some(id.as_str()))
}

/// A job's output file (`chaos-<id>.out` in its user's home), or nothing.
fn output_of(site: &Site, s: &Submitted) -> String {
    std::fs::read_to_string(site.dir.join(format!("home/{}/chaos-{}.out", s.plan.user, s.id))).unwrap_or_default()
}

/// Whether a failed job's output says why: an error line of mall-run's,
/// srun's or slurmstepd's.
fn says_why(out: &str) -> bool {
    out.lines().any(|l| {
        ["mall-run: ", "srun: ", "slurmstepd: "].iter().any(|p| l.starts_with(p)) && l.to_lowercase().contains("error")
    })
}

/// Each user's fair-share usage against the CPU-seconds their records
/// billed, within 2% and the decay since the campaign began. slurmctld
/// adds usage once a PriorityCalcPeriod (a minute on the site), so it is
/// read until it matches, two periods at most.
fn fair_share(site: &Site, recs: &BTreeMap<String, Vec<Record>>, elapsed: Duration, problems: &mut Vec<Violation>) {
    let mut billed: BTreeMap<String, f64> = BTreeMap::new();
    for r in recs.values().flatten() {
        *billed.entry(r.user.clone()).or_default() += r.cpu_seconds();
    }
    let share = 0.02 + decayed_share(elapsed.as_secs_f64(), DECAY_HALF_LIFE_S);
    let compare = || -> Result<Vec<String>, String> {
        let usage =
            raw_usage(&site.output(None, "slurmctld", &["sshare", "-a", "-n", "-P", "-o", "User,RawUsage"])?)?;
        Ok(billed
            .iter()
            .filter_map(|(user, b)| {
                let records = recs.values().flatten().filter(|r| &r.user == user);
                // A second of each record's CPUs: slurmdbd keeps whole seconds.
                let slack: f64 = records.map(|r| f64::from(r.cpus)).sum();
                let raw = usage.get(user).copied().unwrap_or(0.0);
                testcluster::usage::matches(raw, *b, share, slack).err().map(|e| format!("{user}: {e}"))
            })
            .collect())
    };
    let matched = wait::until("RawUsage to match the records", Duration::from_secs(150), || {
        Ok(compare()?.is_empty().then_some(()))
    });
    if matched.is_err() {
        let what = compare().map_or_else(|e| e, |wrong| wrong.join("; "));
        let mut v = violation("each user's RawUsage matches their records", None, what, None);
        let log = site.log("slurmctld", "slurmctld.log");
        let apart = jobs_counted_apart(&log, recs);
        // The furthest job's records and usage as slurmctld told it: all
        // there is to read where the site is gone (CI).
        if let Some(&(job, _)) = apart.first() {
            v.job = Some(job);
        }
        v.log = apart.into_iter().map(|(_, line)| line).collect();
        if let Some(job) = v.job {
            v.log.extend(records_of(recs, job).flat_map(|(_, rs)| rs).map(|r| format!("record: {r:?}")));
            v.log.extend(usage_trail(&log, job, 80));
        }
        problems.push(v);
    }
}

/// slurmctld started once, and once again after each restart of the
/// campaign's; it never said it panicked, crashed or met a fatal error.
fn never_crashed(site: &Site, report: &Report, problems: &mut Vec<Violation>) {
    let log = site.log("slurmctld", "slurmctld.log");
    let started = |l: &&str| matches!(SlurmLine::parse(l), Some(SlurmLine::CtldStarted { .. }));
    let starts = log.lines().filter(started).count();
    let restarts = report.faults.get(&Kind::RestartCtld).copied().unwrap_or(0);
    if starts != 1 + restarts {
        let what = format!("it started {starts} times; the campaign restarted it {restarts} times");
        problems.push(violation("slurmctld never crashed", None, what, None));
    }
    let bad: Vec<String> = log.lines().filter(|l| slurm_lines::tells_a_crash(l)).map(str::to_string).collect();
    if !bad.is_empty() {
        let mut v = violation("slurmctld never crashed", None, format!("{} lines say it failed", bad.len()), None);
        v.log = bad.into_iter().take(12).collect();
        problems.push(v);
    }
}

/// The jobs slurmctld holds that have not ended (pending, running,
/// requeued...), or None when it does not answer.
fn active_jobs(site: &Site) -> Option<Vec<String>> {
    let q = site.output(None, "login", &["squeue", "-h", "-o", "%i"]).ok()?;
    Some(q.split_whitespace().map(str::to_string).collect())
}

/// After a restart: slurmctld answers within a minute and still knows
/// every job of `before` (ended meanwhile or not).
fn came_back_with(site: &Site, before: &[String]) -> Result<(), String> {
    let after = wait::until("slurmctld to answer after its restart", Duration::from_secs(60), || {
        Ok(site.output(None, "login", &["squeue", "-h", "-t", "all", "-o", "%i"]).ok())
    })?;
    // An array's pending tasks are one line before (36_[1-4]) and may be
    // one each after (36_1, ...): a job is known by its id before the `_`.
    let base = |id: &str| id.split('_').next().unwrap_or(id).to_string();
    let after: Vec<String> = after.split_whitespace().map(base).collect();
    let lost: Vec<&str> = before.iter().map(String::as_str).filter(|j| !after.contains(&base(j))).collect();
    if lost.is_empty() {
        Ok(())
    } else {
        Err(format!("it came back without jobs {}", lost.join(", ")))
    }
}

/// Submit the campaign's `n`th job (from 1), named `chaos-N`, its script
/// `chaos-N.sh` in its user's home.
fn submit(site: &Site, plan: &Planned, n: usize) -> Result<u32, String> {
    let (_, uid, _) = USERS.iter().find(|u| u.0 == plan.user).ok_or(format!("no user {} on the site", plan.user))?;
    let file = format!("chaos-{n}.sh");
    let path = site.dir.join("home").join(plan.user).join(&file);
    std::fs::write(&path, plan.script()).map_err(|e| format!("{}: {e}", path.display()))?;
    std::os::unix::fs::chown(&path, Some(*uid), Some(*uid)).map_err(|e| e.to_string())?;
    let name = format!("--job-name=chaos-{n}");
    let script = format!("/home/{}/{file}", plan.user);
    let out = site.output(Some(plan.user), "login", &["sbatch", "--parsable", &name, &script])?;
    let id = out.trim().split(';').next().unwrap_or("");
    id.parse().map_err(|_| format!("sbatch printed {out:?}"))
}

/// After a failed `submit` of the `n`th job: the job slurmctld took all the
/// same, if it did (its array's id for an array), looked for by its name
/// in squeue for a minute (slurmctld may answer squeue before it gets to
/// the submission: in run 12 it took the job 20 s after sbatch gave up),
/// then in sacct (it may have ended meanwhile).
fn taken_all_the_same(site: &Site, plan: &Planned, n: usize) -> Option<u32> {
    let name = format!("chaos-{n}");
    let id_in = |out: &str| out.split_whitespace().next().and_then(|id| id.parse().ok());
    let queued = wait::until("a job whose submission failed to show", Duration::from_secs(60), || {
        let out = site.output(None, "login", &["squeue", "-h", "-u", plan.user, "-n", &name, "-o", "%F"]);
        Ok(out.ok().as_deref().and_then(id_in))
    });
    if let Ok(id) = queued {
        return Some(id);
    }
    let args = ["sacct", "-n", "-X", "-P", "-u", plan.user, "--name", &name, "-S", "now-1day", "-o", "JobID"];
    site.output(None, "login", &args).ok().map(|out| out.replace('_', " ")).as_deref().and_then(id_in)
}

/// The running elastic and MPI jobs (their indices in `submitted`) whose
/// batch host is `host`.
fn computing_on(site: &Site, submitted: &[Submitted], host: &str) -> Vec<usize> {
    let running = site.output(None, "login", &["squeue", "-h", "-t", "R", "-o", "%i %B"]).unwrap_or_default();
    running
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, h)| h.trim() == host)
        .filter_map(|(id, _)| submitted.iter().position(|s| s.id.to_string() == id))
        .filter(|&j| submitted[j].plan.shape.computes())
        .collect()
}

/// A running elastic or MPI job (its index in `submitted`) and its batch
/// host, if any.
fn running_computing_host(site: &Site, submitted: &[Submitted]) -> Option<(usize, String)> {
    let running = site.output(None, "login", &["squeue", "-h", "-t", "R", "-o", "%i %B"]).ok()?;
    running.lines().find_map(|l| {
        let (id, host) = l.split_once(' ')?;
        let j = submitted.iter().position(|s| s.id.to_string() == id)?;
        submitted[j].plan.shape.computes().then(|| (j, host.trim().to_string()))
    })
}

/// The last fault injected before `t` from the start, as the report names it.
fn last_fault(faults: &[Fault], t: Duration) -> Option<&Fault> {
    faults.iter().rfind(|f| f.at <= t)
}

fn violation(invariant: &'static str, job: Option<u32>, what: String, before: Option<&Fault>) -> Violation {
    Violation { invariant, job, what, fault_before: before.map(fault_words), log: Vec::new() }
}

/// A fault of the schedule as the report names it.
fn fault_words(f: &Fault) -> String {
    let on = f.host.filter(|_| f.kind.on_a_host()).map_or(String::new(), |h| format!(" on c{}", h + 1));
    format!("{}{on} at {:.0} s", f.kind.name(), f.at.as_secs_f64())
}
