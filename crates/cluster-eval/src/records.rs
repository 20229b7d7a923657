//! Each job's life on the real cluster, read back from slurmctld's log with
//! its millisecond timestamps: submitted, started on which nodes (the
//! plugin's line), each node gained or given up (the plugin's resize lines),
//! done (slurmctld's `_job_complete`). `scontrol` times are whole seconds and
//! a resize resets a job's StartTime, so the log is the record.

use std::collections::HashMap;

use malleable_model::log_lines::LogLine;
use malleable_model::slurm_lines::SlurmLine;
use malleable_model::stamped::Stamped;
use testcluster::hostlist;

/// One node gained or given up.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Seconds since the epoch.
    pub at: f64,
    pub gained: bool,
    pub nodes: Vec<String>,
}

/// What slurmctld's log says of one job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoggedJob {
    pub submit: Option<f64>,
    pub start: Option<f64>,
    pub start_nodes: Vec<String>,
    pub end: Option<f64>,
    /// Nodes gained (from the expand's decision, when slurmctld gives them
    /// to the job) and given up (at the shrink's commit or force, a rollback,
    /// a loss), in order.
    pub changes: Vec<Change>,
    /// Committed expands and shrinks (forced shrinks count).
    pub expands: u32,
    pub shrinks: u32,
    /// Resizes that did not happen as decided: rolled back expands.
    pub rollbacks: u32,
}

impl LoggedJob {
    /// The nodes it held from when to when, up to `until` for a job still
    /// running: (node, from, to).
    pub fn occupancy(&self, until: f64) -> Vec<(String, f64, f64)> {
        let Some(start) = self.start else { return Vec::new() };
        let end = self.end.unwrap_or(until);
        let mut since: HashMap<String, f64> = self.start_nodes.iter().map(|n| (n.clone(), start)).collect();
        let mut out = Vec::new();
        for c in &self.changes {
            for n in &c.nodes {
                if c.gained {
                    since.entry(n.clone()).or_insert(c.at);
                } else if let Some(from) = since.remove(n) {
                    out.push((n.clone(), from, c.at.min(end)));
                }
            }
        }
        out.extend(since.into_iter().map(|(n, from)| (n, from, end)));
        out.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// Nodes held at the end.
    pub fn final_nodes(&self) -> usize {
        let mut n = self.start_nodes.len() as i64;
        for c in &self.changes {
            n += if c.gained { 1 } else { -1 } * c.nodes.len() as i64;
        }
        n.max(0) as usize
    }
}

/// A log line's time in seconds since the epoch (malleable-model's
/// `Stamped` reads it).
pub fn log_time(line: &str) -> Option<f64> {
    Stamped::parse(line).map(|s| s.secs())
}

/// The jobs of slurmctld's log, by job id.
pub fn read_log(log: &str) -> HashMap<u32, LoggedJob> {
    let mut jobs: HashMap<u32, LoggedJob> = HashMap::new();
    for line in log.lines() {
        let Some(at) = log_time(line) else { continue };
        // The agent's own lines (sched/malleable or select/natural), then Slurm's.
        if let Some(ours) = LogLine::parse(line) {
            plugin_line(&mut jobs, at, ours);
            continue;
        }
        // Slurm's own (for runs under stock sched/backfill, an srun's
        // allocation at submit, and slurmctld's main scheduler, which also
        // runs on job ends under stock Slurm).
        match SlurmLine::parse(line) {
            Some(SlurmLine::Submitted { job }) => jobs.entry(job).or_default().submit = Some(at),
            // `(null)`: deferred to the scheduler, not a start.
            Some(SlurmLine::Allocated { job, nodes, .. }) if nodes != "(null)" => {
                let j = jobs.entry(job).or_default();
                j.start = Some(at);
                j.start_nodes = hostlist::expand(&nodes).unwrap_or_default();
            }
            Some(SlurmLine::JobComplete { job, what }) if what == "done" => jobs.entry(job).or_default().end = Some(at),
            _ => {}
        }
    }
    jobs
}

/// One of the plugin's lines about a job: its start, or a resize.
fn plugin_line(jobs: &mut HashMap<u32, LoggedJob>, at: f64, line: LogLine) {
    let Some(id) = line.job() else { return };
    let ours = matches!(
        line,
        LogLine::Started { .. }
            | LogLine::Expanding { .. }
            | LogLine::ExpandCommitted { .. }
            | LogLine::Released { .. }
            | LogLine::Lost { .. }
    );
    if !ours {
        return;
    }
    let j = jobs.entry(id.0).or_default();
    match line {
        LogLine::Started { nodes, .. } => {
            j.start = Some(at);
            j.start_nodes = hostlist::expand(&nodes).unwrap_or_default();
        }
        // Gained at the expand's decision, when slurmctld gives them to the job.
        LogLine::Expanding { nodes, .. } => j.changes.push(Change { at, gained: true, nodes }),
        LogLine::ExpandCommitted { .. } => j.expands += 1,
        LogLine::Released { ending, .. } => {
            if ending.is_rollback() {
                j.rollbacks += 1;
            } else {
                j.shrinks += 1;
            }
            j.changes.push(Change { at, gained: false, nodes: ending.nodes().to_vec() });
        }
        LogLine::Lost { nodes, .. } => j.changes.push(Change { at, gained: false, nodes }),
        _ => {}
    }
}

/// The whole number `s` starts with.
pub(crate) fn number<T: std::str::FromStr>(s: &str) -> Option<T> {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
[2026-11-24T00:24:50.500] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=4294901759 usec=300
[2026-11-24T00:24:54.123] sched/malleable: started JobId=1 on n1 (mtct)
[2026-11-24T00:24:55.030] sched/malleable: JobId=1: expand onto n2,n3,n4 (resize 17, through JobId=2); it now holds n[1-4] (mtct); waiting for its application to commit
[2026-11-24T00:24:55.282] sched/malleable: JobId=1: expand onto n2,n3,n4 committed 0.25 s after the decision
[2026-11-24T00:24:56.033] sched/malleable: JobId=1: shrink off n3,n4 (resize 18, mtct); waiting for its application to leave them and commit
[2026-11-24T00:24:56.184] sched/malleable: JobId=1: shrink off n3,n4 committed 0.15 s after the decision; it now holds n[1-2]
[2026-11-24T00:24:57.000] sched/malleable: JobId=1: expand onto n3 (resize 19, through JobId=3); it now holds n[1-3] (mtct); waiting for its application to commit
[2026-11-24T00:25:27.000] sched/malleable: JobId=1: expand onto n3 not committed within 30 s: rolled back (not resized again for 30 s); it now holds n[1-2]
[2026-11-24T00:25:28.000] sched/malleable: JobId=1: lost n2; it goes on with 1 nodes
[2026-11-24T00:25:33.250] _job_complete: JobId=1 WEXITSTATUS 0
[2026-11-24T00:25:33.250] _job_complete: JobId=1 done
[2026-11-24T00:25:34.000] sched/malleable: started JobId=5 on n[2-4] (mtct)
";

    #[test]
    fn starts_by_slurms_own_schedulers_are_read_too() {
        let log = "\
[2026-11-24T00:24:50.500] sched: Allocate JobId=7 NodeList=n[1-2] #CPUs=2 Partition=batch
[2026-11-24T00:24:51.250] sched/backfill: _start_job: Started JobId=8 in batch on n3
[2026-11-24T00:24:52.000] sched: _slurm_rpc_allocate_resources JobId=9 NodeList=n4 usec=1129
";
        let jobs = read_log(log);
        assert_eq!(jobs[&7].start_nodes, ["n1", "n2"]);
        assert_eq!(jobs[&8].start_nodes, ["n3"]);
        assert_eq!(jobs[&9].start_nodes, ["n4"]);
        assert!((jobs[&8].start.unwrap() - jobs[&7].start.unwrap() - 0.75).abs() < 1e-6);
    }

    #[test]
    fn select_naturals_resizes_are_read_too() {
        let log = "\
[2026-11-24T14:14:58.008] select/natural: JobId=2: expand onto n2,n3,n4 (resize 17, through JobId=3); it now holds n[1-4] (natural); waiting for its application to commit
[2026-11-24T14:14:58.250] select/natural: JobId=2: expand onto n2,n3,n4 committed 0.24 s after the decision
[2026-11-24T14:14:58.351] select/natural: JobId=4: JobId=2, asking at its sync point, releases 2 nodes for it; it starts first
[2026-11-24T14:14:58.351] select/natural: JobId=4: priority raised to 4294967293: a job released nodes for it
[2026-11-24T14:14:58.597] select/natural: JobId=2: shrink off n4,n3 committed 0.25 s after the decision; it now holds n[1-2]
";
        let jobs = read_log(log);
        assert_eq!((jobs[&2].expands, jobs[&2].shrinks), (1, 1));
        assert_eq!(jobs[&2].changes.len(), 2);
        assert!(jobs.get(&4).is_none_or(|j| j.changes.is_empty() && j.expands == 0));
    }

    #[test]
    fn a_jobs_life_is_read_from_the_log() {
        let jobs = read_log(LOG);
        let j = &jobs[&1];
        let t0 = log_time("[2026-11-24T00:24:50.500]").unwrap();
        assert_eq!(j.submit, Some(t0));
        assert!((j.start.unwrap() - t0 - 3.623).abs() < 1e-6);
        assert!((j.end.unwrap() - t0 - 42.75).abs() < 1e-6);
        assert_eq!(j.start_nodes, ["n1"]);
        assert_eq!((j.expands, j.shrinks, j.rollbacks), (1, 1, 1));
        assert_eq!(j.final_nodes(), 1);
        assert_eq!(jobs[&5].start_nodes, ["n2", "n3", "n4"]);
        assert_eq!(jobs[&5].end, None);
    }

    #[test]
    fn occupancy_follows_the_resizes() {
        let jobs = read_log(LOG);
        let t = |s: &str| log_time(&format!("[2026-11-24T00:{s}]")).unwrap();
        let occ = jobs[&1].occupancy(0.0);
        let of = |n: &str| occ.iter().filter(|o| o.0 == n).map(|o| (o.1, o.2)).collect::<Vec<_>>();
        // n1 throughout; n2 from the expand's decision until lost; n4 until
        // the shrink's commit; n3 twice: until the shrink, then until the rollback.
        assert_eq!(of("n1"), [(t("24:54.123"), t("25:33.250"))]);
        assert_eq!(of("n2"), [(t("24:55.030"), t("25:28.000"))]);
        assert_eq!(of("n4"), [(t("24:55.030"), t("24:56.184"))]);
        assert_eq!(of("n3"), [(t("24:55.030"), t("24:56.184")), (t("24:57.000"), t("25:27.000"))]);
        // A running job's nodes are held up to `until`.
        let until = t("25:40.000");
        assert_eq!(jobs[&5].occupancy(until).len(), 3);
        assert!(jobs[&5].occupancy(until).iter().all(|o| o.2 == until));
    }
}
