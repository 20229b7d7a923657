//! One campaign on a compose site: the seed's job stream submitted and its
//! fault schedule played at their times, every fault undone, the queue
//! drained, then each invariant checked; the report.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use testcluster::compose::spec::USERS;
use testcluster::compose::{Site, SiteSpec};
use testcluster::jobs::checksum_in;
use testcluster::wait;

use super::faults::{inject, undo_fault, Undo};
use super::invariants::{is_final, records, tiling};
use super::report::{Report, Violation};
use super::schedule::{schedule, Fault, Kind};
use super::stream::{stream, Planned};

/// Compute hosts of the campaign's site.
pub const HOSTS: usize = 6;

/// Run a `minutes`-long campaign from `seed` on a site of Slurm `slurm`,
/// the plugins staged in `staged`, the site's files under `target`.
pub fn run(staged: &Path, target: &Path, slurm: &str, minutes: u32, seed: u64) -> Result<Report, String> {
    let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    // A host that stops answering is DOWN, and out of its jobs, in 20 s.
    let spec = SiteSpec::new("chaos", HOSTS, cores).slurm(slurm)?.set("SlurmdTimeout", "20");
    let site = Site::up(spec, target.parent().ok_or("target/ has no parent")?, staged)?;
    let report = play(&site, minutes, seed);
    if report.is_err() {
        site.print_logs();
    }
    report
}

/// A job submitted: its plan and id.
struct Submitted {
    plan: Planned,
    id: u32,
}

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
            if let Err(e) = undo_fault(&u) {
                problems.push(violation("every fault can be undone", None, e, Some(f)));
            }
        }
        if let Some(plan) = jobs.get(next_job).filter(|j| j.at <= now) {
            next_job += 1;
            match submit(site, plan, submitted.len()) {
                Ok(id) => submitted.push(Submitted { plan: plan.clone(), id }),
                Err(e) => problems.push(violation("every job is taken", None, e, last_fault(&faults, now))),
            }
            continue;
        }
        if let Some(f) = faults.get(next_fault).filter(|f| f.at <= now) {
            next_fault += 1;
            let host = f.host.map(|h| hosts[h].clone());
            let target = match f.kind {
                Kind::KillHub | Kind::KillWorker => running_computing_host(site, &submitted),
                _ => host.clone().or_else(|| Some("c1".into())),
            };
            let Some(target) = target else { continue };
            let pattern = if f.kind == Kind::KillHub { "mall-run" } else { "mall-example|mall-jacobi" };
            match inject(site, f.kind, &target, pattern) {
                Ok(undo) => {
                    *report.faults.entry(f.kind).or_default() += 1;
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
    let drained = wait::until("the queue to drain", Duration::from_secs(u64::from(limit) * 60 + 120), || {
        let q = site.output(None, "login", &["squeue", "-h", "-o", "%i"])?;
        Ok(q.trim().is_empty().then_some(()))
    });
    if let Err(e) = drained {
        problems.push(violation("every job ends within its time limit", None, e, faults.last()));
        let _ = site.output(None, "login", &["scancel", "--user=alice,bob"]);
    }
    check(site, &submitted, &alone, &faults, start, &mut report, &mut problems)?;
    report.violations = problems;
    Ok(report)
}

/// The invariants, once the queue has drained.
fn check(
    site: &Site,
    submitted: &[Submitted],
    alone: &HashMap<Vec<&str>, String>,
    faults: &[Fault],
    start: Instant,
    report: &mut Report,
    problems: &mut Vec<Violation>,
) -> Result<(), String> {
    let ids: Vec<String> = submitted.iter().map(|s| s.id.to_string()).collect();
    let read = || {
        let fmt = "JobID,Start,End,NNodes,State,NodeList";
        let out =
            site.output(None, "slurmctld", &["sacct", "-a", "-D", "-X", "-n", "-P", "-j", &ids.join(","), "-o", fmt])?;
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
        let mine: BTreeMap<&String, _> =
            recs.iter().filter(|(k, _)| k.split('_').next() == Some(&s.id.to_string())).collect();
        if mine.is_empty() {
            problems.push(violation("every job reaches the database", Some(s.id), "no record".into(), None));
        }
        for (task, r) in mine {
            let state = r.last().map(|x| x.state.clone()).unwrap_or_default();
            *report.ends.entry(state.clone()).or_default() += 1;
            if let Err(e) = tiling(r) {
                let what = format!("{task}: {e}");
                problems.push(violation("records tile the job's life", Some(s.id), what, last_fault(faults, elapsed)));
            }
            if state == "COMPLETED" {
                if let Some(cmd) = s.plan.serial() {
                    let out =
                        std::fs::read_to_string(site.dir.join(format!("home/{}/chaos-{}.out", s.plan.user, s.id)))
                            .unwrap_or_default();
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
    let runaway = site.output(None, "slurmctld", &["sacctmgr", "-n", "show", "runawayjobs"])?;
    if !runaway.contains("No runaway jobs found") {
        problems.push(violation("no record runs away", None, runaway, None));
    }
    Ok(())
}

fn submit(site: &Site, plan: &Planned, n: usize) -> Result<u32, String> {
    let (_, uid, _) = USERS.iter().find(|u| u.0 == plan.user).ok_or(format!("no user {} on the site", plan.user))?;
    let file = format!("chaos-{n}.sh");
    let path = site.dir.join("home").join(plan.user).join(&file);
    std::fs::write(&path, plan.script()).map_err(|e| format!("{}: {e}", path.display()))?;
    std::os::unix::fs::chown(&path, Some(*uid), Some(*uid)).map_err(|e| e.to_string())?;
    let out =
        site.output(Some(plan.user), "login", &["sbatch", "--parsable", &format!("/home/{}/{file}", plan.user)])?;
    let id = out.trim().split(';').next().unwrap_or("");
    id.parse().map_err(|_| format!("sbatch printed {out:?}"))
}

/// The batch host of a running elastic or MPI job, if any.
fn running_computing_host(site: &Site, submitted: &[Submitted]) -> Option<String> {
    let running = site.output(None, "login", &["squeue", "-h", "-t", "R", "-o", "%i %B"]).ok()?;
    running.lines().find_map(|l| {
        let (id, host) = l.split_once(' ')?;
        let s = submitted.iter().find(|s| s.id.to_string() == id)?;
        s.plan.shape.computes().then(|| host.trim().to_string())
    })
}

/// The last fault injected before `t` from the start, as the report names it.
fn last_fault(faults: &[Fault], t: Duration) -> Option<&Fault> {
    faults.iter().rfind(|f| f.at <= t)
}

fn violation(invariant: &'static str, job: Option<u32>, what: String, before: Option<&Fault>) -> Violation {
    let fault_before = before.map(|f| {
        let on = f.host.map_or(String::new(), |h| format!(" on c{}", h + 1));
        format!("{}{on} at {:.0} s", f.kind.name(), f.at.as_secs_f64())
    });
    Violation { invariant, job, what, fault_before, log: Vec::new() }
}
