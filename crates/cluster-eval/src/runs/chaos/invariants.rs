//! The campaign's invariants that read what Slurm says (sacct's records,
//! sshare's usage) rather than the site itself: each a check of parsed
//! text, returning what is wrong in words.

use std::collections::BTreeMap;

/// One accounting record, as `sacct -a -D -X -n -P -o
/// JobID,Start,End,NNodes,State,NodeList` prints it (times as sacct says
/// them, `Unknown` for a record not ended).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub start: String,
    pub end: String,
    pub nodes: u32,
    pub state: String,
    pub node_list: String,
}

/// Every job's records, by job id (`12`, or `12_3` for an array task),
/// in the order sacct prints them (by start).
pub fn records(sacct: &str) -> Result<BTreeMap<String, Vec<Record>>, String> {
    let mut jobs: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    for line in sacct.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('|').collect();
        let [id, start, end, nodes, state, node_list] = f[..] else {
            return Err(format!("sacct line {line:?}: not JobID|Start|End|NNodes|State|NodeList"));
        };
        let nodes = nodes.parse().map_err(|_| format!("sacct line {line:?}: NNodes {nodes:?}"))?;
        let rec = Record {
            start: start.into(),
            end: end.into(),
            nodes,
            // "CANCELLED by 1000" is CANCELLED.
            state: state.split(' ').next().unwrap_or(state).into(),
            node_list: node_list.into(),
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

/// Whether a user's fair-share usage (sshare's RawUsage) matches what
/// their records billed (CPU-seconds), within `share` of it or one
/// second of each record's CPUs, whichever is more (slurmdbd keeps times
/// by the whole second).
pub fn usage_matches(raw_usage: f64, billed: f64, share: f64, per_record_slack: f64) -> Result<(), String> {
    let allowed = (billed * share).max(per_record_slack);
    if (raw_usage - billed).abs() <= allowed {
        Ok(())
    } else {
        Err(format!("RawUsage {raw_usage:.0} against {billed:.0} CPU-s in the records (allowed: {allowed:.0})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SACCT: &str = "\
7|2026-12-05T10:00:00|2026-12-05T10:00:20|2|RESIZING|c[1-2]
7|2026-12-05T10:00:20|2026-12-05T10:01:00|4|COMPLETED|c[1-4]
8_1|2026-12-05T10:00:05|2026-12-05T10:00:09|1|CANCELLED by 1001|c3
9|2026-12-05T10:00:00|2026-12-05T10:00:20|2|RESIZING|c[1-2]
9|2026-12-05T10:00:21|Unknown|1|RUNNING|c1
";

    #[test]
    fn records_are_read_by_job_and_a_runaway_or_a_gap_is_named() {
        let jobs = records(SACCT).unwrap();
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs["8_1"][0].state, "CANCELLED");
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
        assert!(tiling(&[]).is_err());
    }

    #[test]
    fn usage_is_allowed_its_share_or_the_records_rounding() {
        assert!(usage_matches(131.0, 134.0, 0.02, 8.0).is_ok());
        assert!(usage_matches(185.0, 128.0, 0.02, 8.0).is_err());
        assert!(usage_matches(1000.0, 1015.0, 0.02, 0.0).is_ok());
        assert!(usage_matches(1000.0, 1030.0, 0.02, 0.0).is_err());
    }
}
