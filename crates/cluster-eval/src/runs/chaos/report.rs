//! The campaign's report: the faults injected of each kind, the jobs by end
//! state, and each violation with the job, the fault before it and the log
//! lines that show it; its last line is `chaos: F faults (K kinds), J jobs,
//! V violations`.

use std::collections::BTreeMap;
use std::fmt;

use super::schedule::Kind;

/// An invariant found broken.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Which (e.g. "records tile the job's life").
    pub invariant: &'static str,
    /// The job it is about, if one.
    pub job: Option<u32>,
    pub what: String,
    /// The last fault injected before it was seen, as the table names it.
    pub fault_before: Option<String>,
    /// The log lines that show it.
    pub log: Vec<String>,
}

/// What a campaign did and found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub faults: BTreeMap<Kind, usize>,
    /// Jobs by end state (`COMPLETED`, `FAILED`, ...), as sacct says it
    /// (an array's tasks each one).
    pub ends: BTreeMap<String, usize>,
    /// The same by what the jobs ran (the stream's shape's name) too.
    pub by_shape: BTreeMap<(&'static str, String), usize>,
    pub violations: Vec<Violation>,
    /// Jobs stock requeued held when their launch failed, released by
    /// the campaign as an admin would.
    pub released: usize,
    /// Nodes Slurm drained when it could not kill a job's tasks there
    /// (the host was paused), resumed by the campaign as an admin would.
    pub resumed: Vec<String>,
}

impl Report {
    pub fn fault_count(&self) -> usize {
        self.faults.values().sum()
    }

    pub fn job_count(&self) -> usize {
        self.ends.values().sum()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:<28} {:>6}", "fault", "count")?;
        for (kind, n) in &self.faults {
            writeln!(f, "{:<28} {n:>6}", kind.name())?;
        }
        writeln!(f)?;
        writeln!(f, "{:<28} {:>6}", "jobs ended", "count")?;
        for (state, n) in &self.ends {
            writeln!(f, "{state:<28} {n:>6}")?;
        }
        if !self.by_shape.is_empty() {
            writeln!(f)?;
            writeln!(f, "{:<12} {:<15} {:>6}", "job", "ended", "count")?;
            for ((shape, state), n) in &self.by_shape {
                writeln!(f, "{shape:<12} {state:<15} {n:>6}")?;
            }
        }
        if !self.resumed.is_empty() {
            let nodes = self.resumed.join(",");
            writeln!(f, "\nnodes Slurm drained as it could not kill a job's tasks there, resumed: {nodes}")?;
        }
        if self.released > 0 {
            writeln!(f, "\n{} jobs requeued held when their launch failed, released", self.released)?;
        }
        for v in &self.violations {
            let job = v.job.map_or(String::new(), |j| format!(" JobId={j}"));
            let before = v.fault_before.as_deref().unwrap_or("no fault before it");
            writeln!(f, "\nviolation:{job}: {}: {} (after: {before})", v.invariant, v.what)?;
            for line in &v.log {
                writeln!(f, "    {line}")?;
            }
        }
        write!(
            f,
            "chaos: {} faults ({} kinds), {} jobs, {} violations",
            self.fault_count(),
            self.faults.len(),
            self.job_count(),
            self.violations.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_each_violation_and_ends_with_the_counts() {
        let mut r = Report::default();
        r.faults.insert(Kind::KillHost, 3);
        r.faults.insert(Kind::StopDbd, 2);
        r.ends.insert("COMPLETED".into(), 10);
        r.ends.insert("FAILED".into(), 1);
        r.by_shape.insert(("elastic", "COMPLETED".into()), 10);
        r.by_shape.insert(("rigid", "FAILED".into()), 1);
        r.violations.push(Violation {
            invariant: "records tile the job's life",
            job: Some(12),
            what: "a gap from 10:00:05 to 10:00:09".into(),
            fault_before: Some("slurmdbd stopped at 4:10".into()),
            log: vec!["[10:00:05] sched/malleable: JobId=12: ...".into()],
        });
        let text = r.to_string();
        assert!(text.contains("host killed"), "{text}");
        assert!(text.contains("elastic      COMPLETED           10"), "{text}");
        assert!(
            text.contains(
                "violation: JobId=12: records tile the job's life: a gap from 10:00:05 to 10:00:09 \
                 (after: slurmdbd stopped at 4:10)"
            ),
            "{text}"
        );
        assert!(text.contains("    [10:00:05] sched/malleable"), "{text}");
        assert_eq!(text.lines().last(), Some("chaos: 5 faults (2 kinds), 11 jobs, 1 violations"));
    }
}
