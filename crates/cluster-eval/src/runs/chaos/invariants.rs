//! The campaign's invariants that read what Slurm says (sacct's records,
//! sshare's usage) rather than the site itself: each a check of parsed
//! text, returning what is wrong in words.

use std::collections::BTreeMap;

use malleable_model::log_lines::LogLine;

/// The fields [`records`] reads, as `sacct -o` takes them.
pub const SACCT_FIELDS: &str = "JobID,Start,End,NNodes,State,NodeList,User,AllocCPUS,ElapsedRaw";

/// One accounting record, as `sacct -a -D -X -n -P -o` [`SACCT_FIELDS`]
/// prints it (times as sacct says them, `Unknown` for a record not ended).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub start: String,
    pub end: String,
    pub nodes: u32,
    pub state: String,
    pub node_list: String,
    pub user: String,
    pub cpus: u32,
    /// How long it ran, in seconds (to now, for a record not ended).
    pub elapsed_s: u64,
}

impl Record {
    /// The CPU-seconds it bills (the site sets no TRES billing weights:
    /// a CPU-second is a unit of usage).
    pub fn cpu_seconds(&self) -> f64 {
        f64::from(self.cpus) * self.elapsed_s as f64
    }
}

/// Every job's records, by job id (`12`, or `12_3` for an array task),
/// in the order sacct prints them (by start).
pub fn records(sacct: &str) -> Result<BTreeMap<String, Vec<Record>>, String> {
    let mut jobs: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    for line in sacct.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('|').collect();
        let [id, start, end, nodes, state, node_list, user, cpus, elapsed] = f[..] else {
            return Err(format!("sacct line {line:?}: not {}, |-separated", SACCT_FIELDS));
        };
        let nodes = nodes.parse().map_err(|_| format!("sacct line {line:?}: NNodes {nodes:?}"))?;
        let cpus = cpus.parse().map_err(|_| format!("sacct line {line:?}: AllocCPUS {cpus:?}"))?;
        let elapsed_s = elapsed.parse().map_err(|_| format!("sacct line {line:?}: ElapsedRaw {elapsed:?}"))?;
        let rec = Record {
            start: start.into(),
            end: end.into(),
            nodes,
            // "CANCELLED by 1000" is CANCELLED.
            state: state.split(' ').next().unwrap_or(state).into(),
            node_list: node_list.into(),
            user: user.into(),
            cpus,
            elapsed_s,
        };
        jobs.entry(id.into()).or_default().push(rec);
    }
    Ok(jobs)
}

/// Whether a job's records tile its life once it ended: each begins when
/// the one before ended, every one ended, the last in a final state (the
/// others `RESIZING`, or `REQUEUED`/`NODE_FAIL`/`PREEMPTED` where the job
/// started again).
pub fn tiling(recs: &[Record]) -> Result<(), String> {
    let Some(last) = recs.last() else { return Err("no record in the database".into()) };
    if let Some(open) = recs.iter().find(|r| r.end == "Unknown") {
        return Err(format!("a record from {} never ended (a runaway): {open:?}", open.start));
    }
    for pair in recs.windows(2) {
        let started_again = ["REQUEUED", "NODE_FAIL", "PREEMPTED"].contains(&pair[0].state.as_str());
        if pair[0].state == "RESIZING" && pair[1].start != pair[0].end {
            return Err(format!("a gap or an overlap between {:?} and {:?}", pair[0], pair[1]));
        }
        if pair[0].state != "RESIZING" && !started_again {
            return Err(format!("a record in state {} before another: {:?}", pair[0].state, pair[1]));
        }
    }
    if !is_final(&last.state) {
        return Err(format!("its last record is {}, not a final state", last.state));
    }
    Ok(())
}

/// Whether a job in this state has ended for good.
pub fn is_final(state: &str) -> bool {
    ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"]
        .contains(&state)
}

/// Each user's RawUsage, as `sshare -a -n -P -o User,RawUsage` prints it
/// (the accounts' own lines, with no user, left out; a user's lines in
/// several accounts summed).
pub fn raw_usage(sshare: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut users: BTreeMap<String, f64> = BTreeMap::new();
    for line in sshare.lines().filter(|l| !l.trim().is_empty()) {
        let Some((user, raw)) = line.trim().split_once('|') else {
            return Err(format!("sshare line {line:?}: not User|RawUsage"));
        };
        if user.is_empty() {
            continue;
        }
        let raw: f64 = raw.parse().map_err(|_| format!("sshare line {line:?}: RawUsage {raw:?}"))?;
        *users.entry(user.to_string()).or_default() += raw;
    }
    Ok(users)
}

/// The share of usage decay takes off in `elapsed_s` seconds with a
/// half-life of `half_life_s` (PriorityDecayHalfLife): what RawUsage may
/// have lost of the records' CPU-seconds, at most.
pub fn decayed_share(elapsed_s: f64, half_life_s: f64) -> f64 {
    1.0 - 0.5f64.powf(elapsed_s / half_life_s)
}

/// The jobs whose usage, as priority/multifactor counted it (less what the
/// plugin took back), is furthest from their records' CPU-seconds, five at
/// most, each more than a second of its records' CPUs off, a job counted
/// without a record among them (`recs` by each job's own id), furthest
/// first.
pub fn jobs_counted_apart(log: &str, recs: &BTreeMap<String, Vec<Record>>) -> Vec<(u32, String)> {
    let mut counted = malleable_model::slurm_lines::usage_by_job(log);
    let mut taken: BTreeMap<u32, f64> = BTreeMap::new();
    for line in LogLine::all(log) {
        if let LogLine::UsageTakenBack { job, tres_s } = line {
            *taken.entry(job.0).or_default() += tres_s as f64;
        }
    }
    let mut apart: Vec<(f64, u32, String)> = recs
        .iter()
        .filter_map(|(key, rs)| {
            let job: u32 = key.parse().ok()?;
            let held: f64 = rs.iter().map(Record::cpu_seconds).sum();
            let slack: f64 = rs.iter().map(|r| f64::from(r.cpus)).sum();
            let (slurm, back) = (counted.remove(&job).unwrap_or(0.0), taken.get(&job).copied().unwrap_or(0.0));
            let off = slurm - back - held;
            (off.abs() > slack).then(|| {
                let user = rs.first().map_or("", |r| r.user.as_str());
                let line = format!(
                    "JobId={job} ({user}): counted {slurm:.0} - taken back {back:.0} = {:.0} CPU-s, records {held:.0}",
                    slurm - back
                );
                (off.abs(), job, line)
            })
        })
        .collect();
    // What is left was counted for jobs that have no record.
    apart.extend(counted.into_iter().filter(|&(_, c)| c.abs() >= 1.0).map(|(job, c)| {
        let back = taken.get(&job).copied().unwrap_or(0.0);
        (
            (c - back).abs(),
            job,
            format!("JobId={job}: counted {c:.0} - taken back {back:.0} = {:.0} CPU-s, no record", c - back),
        )
    }));
    apart.sort_by(|a, b| b.0.total_cmp(&a.0));
    apart.into_iter().take(5).map(|(_, job, line)| (job, line)).collect()
}

/// Whether a log line names the job `tag` (`JobId=12`) and not one whose id
/// only begins so (`JobId=123`).
pub fn names(line: &str, tag: &str) -> bool {
    line.find(tag).is_some_and(|i| !line[i + tag.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Job `job`'s usage as slurmctld's log tells it, for a report read where
/// the site is gone (CI): each count of priority/multifactor's as
/// `[time] counted S s at billing B`, and slurmctld's and the plugin's
/// lines about it, in order, the last `most`.
pub fn usage_trail(log: &str, job: u32, most: usize) -> Vec<String> {
    use malleable_model::slurm_lines::SlurmLine;
    let tag = format!("JobId={job}");
    let mut trail = Vec::new();
    let mut ran: Option<(&str, f64)> = None;
    for l in log.lines() {
        match SlurmLine::parse(l) {
            Some(SlurmLine::UsageRan { job: j, secs }) => {
                ran = (j == job).then(|| (l.split_inclusive(']').next().unwrap_or(""), secs));
            }
            Some(SlurmLine::TresCount { name, count }) if name == "billing" => {
                if let Some((at, secs)) = ran.take() {
                    trail.push(format!("{at} counted {secs} s at billing {count}"));
                }
            }
            // Every other line that names the job, Slurm's or not.
            _ if names(l, &tag) => trail.push(l.to_string()),
            _ => {}
        }
    }
    trail.split_off(trail.len().saturating_sub(most))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SACCT: &str = "\
7|2026-12-05T10:00:00|2026-12-05T10:00:20|2|RESIZING|c[1-2]|alice|4|20
7|2026-12-05T10:00:20|2026-12-05T10:01:00|4|COMPLETED|c[1-4]|alice|8|40
8_1|2026-12-05T10:00:05|2026-12-05T10:00:09|1|CANCELLED by 1001|c3|bob|2|4
9|2026-12-05T10:00:00|2026-12-05T10:00:20|2|RESIZING|c[1-2]|bob|4|20
9|2026-12-05T10:00:21|Unknown|1|RUNNING|c1|bob|2|9
";

    #[test]
    fn records_are_read_by_job_and_a_runaway_or_a_gap_is_named() {
        let jobs = records(SACCT).unwrap();
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs["8_1"][0].state, "CANCELLED");
        let alice: f64 = jobs["7"].iter().map(Record::cpu_seconds).sum();
        assert_eq!(alice, 4.0 * 20.0 + 8.0 * 40.0);
        assert_eq!(jobs["9"][1].user, "bob");
        assert_eq!(tiling(&jobs["7"]), Ok(()));
        assert_eq!(tiling(&jobs["8_1"]), Ok(()));
        let e = tiling(&jobs["9"]).unwrap_err();
        assert!(e.contains("never ended (a runaway)"), "{e}");
        let mut gap = jobs["9"].clone();
        gap[1].end = "2026-12-05T10:00:30".into();
        gap[1].state = "COMPLETED".into();
        let e = tiling(&gap).unwrap_err();
        assert!(e.contains("a gap or an overlap"), "{e}");
        assert!(records("7|x|y").is_err());
        assert!(records("7|a|b|1|COMPLETED|c1|alice|two|3").unwrap_err().contains("AllocCPUS \"two\""));
        assert!(tiling(&[]).is_err());
    }

    #[test]
    fn decay_takes_its_share_of_the_usage() {
        // A week's half-life takes a third of a per cent off in 40 minutes.
        let d = decayed_share(2400.0, 7.0 * 86400.0);
        assert!(d > 0.0027 && d < 0.0028, "{d}");
    }

    #[test]
    fn raw_usage_is_summed_by_user_and_the_accounts_lines_left_out() {
        let u = raw_usage("|5400\nalice|3000\nbob|2400\n|100\nalice|50\n").unwrap();
        assert_eq!(u.len(), 2);
        assert_eq!(u["alice"], 3050.0);
        assert_eq!(u["bob"], 2400.0);
        assert!(raw_usage("alice 30").is_err());
        assert!(raw_usage("alice|lots").unwrap_err().contains("RawUsage \"lots\""));
    }

    #[test]
    fn the_jobs_counted_apart_from_their_records_are_named_first() {
        let usage = |job: u32, secs: u32, billing: u32| {
            let ran = malleable_model::slurm_lines::SlurmLine::UsageRan { job, secs: f64::from(secs) };
            let tres =
                malleable_model::slurm_lines::SlurmLine::TresCount { name: "billing".into(), count: billing.into() };
            format!("[2026-12-05T10:01:00.000] {ran}\n[2026-12-05T10:01:00.000] {tres}\n")
        };
        // 7 as its records say; 9 twice its records less what was taken
        // back; 12 (an expansion job) with no record of the submitted jobs'.
        let taken = "[2026-12-05T10:01:00.000] sched/malleable: JobId=9: fair-share usage of 20 billable TRES-s counted twice by Slurm at the resize taken back\n";
        let log = usage(7, 20, 4) + &usage(7, 40, 8) + &usage(9, 40, 4) + taken + &usage(12, 60, 4);
        let jobs = records(SACCT).unwrap();
        let apart = jobs_counted_apart(&log, &jobs);
        assert_eq!(apart.len(), 2, "{apart:?}");
        assert_eq!(apart[0], (12, "JobId=12: counted 240 - taken back 0 = 240 CPU-s, no record".into()));
        assert_eq!(apart[1], (9, "JobId=9 (bob): counted 160 - taken back 20 = 140 CPU-s, records 98".into()));
    }

    #[test]
    fn a_jobs_usage_trail_has_its_counts_and_lines_and_no_other_jobs() {
        let log = "\
[2026-12-05T10:00:00.000] sched: Allocate JobId=9 NodeList=c1 #CPUs=2
[2026-12-05T10:00:30.000] sched/malleable: JobId=91: expanded
[2026-12-05T10:01:00.000] priority/multifactor: _apply_new_usage: job 9 ran for 60 seconds with TRES counts of
[2026-12-05T10:01:00.000] priority/multifactor: _apply_new_usage: TRES billing: 2
[2026-12-05T10:01:00.000] priority/multifactor: _apply_new_usage: job 91 ran for 60 seconds with TRES counts of
[2026-12-05T10:01:00.000] priority/multifactor: _apply_new_usage: TRES billing: 8
[2026-12-05T10:01:05.000] _job_complete: JobId=9 done
";
        let trail = usage_trail(log, 9, 10);
        assert_eq!(
            trail,
            [
                "[2026-12-05T10:00:00.000] sched: Allocate JobId=9 NodeList=c1 #CPUs=2",
                "[2026-12-05T10:01:00.000] counted 60 s at billing 2",
                "[2026-12-05T10:01:05.000] _job_complete: JobId=9 done",
            ]
        );
        assert_eq!(usage_trail(log, 9, 1), ["[2026-12-05T10:01:05.000] _job_complete: JobId=9 done"]);
    }
}
