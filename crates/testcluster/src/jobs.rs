//! Job records as `scontrol show job -o` prints them, the summary
//! metrics of a finished workload, and the checksum an example
//! application's output reports.

use std::collections::HashMap;

/// The fields of a job record we use; times are seconds since the epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobInfo {
    pub id: u32,
    pub name: String,
    pub state: String,
    pub num_nodes: u32,
    pub node_list: String,
    pub time_limit: String,
    pub submit: Option<i64>,
    pub start: Option<i64>,
    pub end: Option<i64>,
}

impl JobInfo {
    pub fn is_pending(&self) -> bool {
        self.state == "PENDING"
    }
    pub fn is_finished(&self) -> bool {
        !matches!(self.state.as_str(), "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING" | "SUSPENDED")
    }
    pub fn has_started(&self) -> bool {
        !self.is_pending() && self.start.is_some()
    }
}

/// Parse `scontrol show job -o` output: one job a line, `Key=Value` fields
/// separated by spaces. Only the fields we read are kept; values with spaces
/// (Command, WorkDir, Reason text) are not among them.
pub fn parse_show_job(text: &str) -> Vec<JobInfo> {
    text.lines()
        .filter(|l| l.starts_with("JobId="))
        .filter_map(|line| {
            let fields: HashMap<&str, &str> = line.split(' ').filter_map(|t| t.split_once('=')).collect();
            let get = |k: &str| fields.get(k).copied().unwrap_or("").to_string();
            Some(JobInfo {
                id: get("JobId").parse().ok()?,
                name: get("JobName"),
                state: get("JobState"),
                num_nodes: get("NumNodes").split('-').next().unwrap_or("0").parse().unwrap_or(0),
                node_list: get("NodeList"),
                time_limit: get("TimeLimit"),
                submit: parse_time(&get("SubmitTime")),
                start: parse_time(&get("StartTime")),
                end: parse_time(&get("EndTime")),
            })
        })
        .collect()
}

/// `2026-11-21T08:40:01` as seconds since the epoch, reading it as UTC: we
/// only ever subtract these, so the zone cancels out. "Unknown" and "None"
/// give None.
pub fn parse_time(s: &str) -> Option<i64> {
    let (date, time) = s.split_once('T')?;
    let d: Vec<i64> = date.split('-').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let t: Vec<i64> = time.split(':').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    if d.len() != 3 || t.len() != 3 {
        return None;
    }
    Some(malleable_model::stamped::days_from_civil(d[0], d[1], d[2]) * 86_400 + t[0] * 3600 + t[1] * 60 + t[2])
}

/// Summary of a finished workload, over jobs that ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub jobs: usize,
    pub mean_wait_s: f64,
    pub makespan_s: i64,
    pub utilization: f64,
}

/// Mean wait (start - submit), makespan (first submit to last end) and
/// utilization (node-seconds used over nodes x makespan).
pub fn summarize(jobs: &[JobInfo], cluster_nodes: u32) -> Option<Summary> {
    let ran: Vec<(&JobInfo, i64, i64, i64)> =
        jobs.iter().filter_map(|j| Some((j, j.submit?, j.start?, j.end?))).collect();
    if ran.is_empty() {
        return None;
    }
    let first = ran.iter().map(|r| r.1).min()?;
    let last = ran.iter().map(|r| r.3).max()?;
    let makespan = (last - first).max(1);
    let wait: i64 = ran.iter().map(|r| r.2 - r.1).sum();
    let used: i64 = ran.iter().map(|r| i64::from(r.0.num_nodes) * (r.3 - r.2)).sum();
    Some(Summary {
        jobs: ran.len(),
        mean_wait_s: wait as f64 / ran.len() as f64,
        makespan_s: makespan,
        utilization: used as f64 / (f64::from(cluster_nodes) * makespan as f64),
    })
}

/// The checksum an example application's output reports (mall-example's
/// and the Jacobis' `...: done iterations=... checksum=X ...` line), run
/// under Slurm or alone (`--serial`).
pub fn checksum_in(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.contains(": done iterations="))?
        .split(' ')
        .find_map(|w| w.strip_prefix("checksum="))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "JobId=12 JobName=big UserId=root(0) Priority=4294901748 JobState=COMPLETED Reason=None \
        RunTime=00:00:05 TimeLimit=00:02:00 SubmitTime=2026-11-21T08:40:01 EligibleTime=2026-11-21T08:40:01 \
        StartTime=2026-11-21T08:40:03 EndTime=2026-11-21T08:40:08 Partition=batch NodeList=n[1-3] \
        NumNodes=3 NumCPUs=3 Command=/bin/sleep 5";

    #[test]
    fn parses_the_fields_we_use() {
        let j = &parse_show_job(LINE)[0];
        assert_eq!(j.id, 12);
        assert_eq!(j.name, "big");
        assert_eq!(j.state, "COMPLETED");
        assert_eq!(j.node_list, "n[1-3]");
        assert_eq!(j.num_nodes, 3);
        assert_eq!(j.start.unwrap() - j.submit.unwrap(), 2);
        assert_eq!(j.end.unwrap() - j.start.unwrap(), 5);
        assert!(j.is_finished() && j.has_started());
    }

    #[test]
    fn times_match_the_epoch() {
        assert_eq!(parse_time("1970-01-01T00:00:00"), Some(0));
        assert_eq!(parse_time("2000-03-01T00:00:01"), Some(951_868_801));
        assert_eq!(parse_time("Unknown"), None);
        assert_eq!(parse_time("None"), None);
    }

    #[test]
    fn summary_of_two_jobs() {
        let mut a = parse_show_job(LINE)[0].clone(); // 3 nodes, submit 0, start 2, end 7 (relative)
        let mut b = a.clone();
        b.num_nodes = 1;
        b.start = Some(a.submit.unwrap() + 4);
        b.end = Some(a.submit.unwrap() + 10);
        a.id = 1;
        let s = summarize(&[a, b], 4).unwrap();
        assert_eq!(s.jobs, 2);
        assert_eq!(s.makespan_s, 10);
        assert!((s.mean_wait_s - 3.0).abs() < 1e-9);
        assert!((s.utilization - (15.0 + 6.0) / 40.0).abs() < 1e-9);
    }
}
