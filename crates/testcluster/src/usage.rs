//! Fair-share usage against the accounting records: how near sshare's
//! RawUsage must be to the CPU-seconds sacct's records bill, for the
//! compose tests and the chaos campaign alike.

/// Whether a user's fair-share usage (sshare's RawUsage) matches what
/// their records billed (CPU-seconds), within `share` of it or one
/// second of each record's CPUs, whichever is more (slurmdbd keeps times
/// by the whole second). What was allowed, or what is wrong.
pub fn matches(raw_usage: f64, billed: f64, share: f64, per_record_slack: f64) -> Result<f64, String> {
    let allowed = (billed * share).max(per_record_slack);
    if (raw_usage - billed).abs() <= allowed {
        Ok(allowed)
    } else {
        Err(format!("RawUsage {raw_usage:.0} against {billed:.0} CPU-s in the records (allowed: {allowed:.0})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_near_enough_by_a_share_or_by_a_second_of_each_records_cpus() {
        assert_eq!(matches(1010.0, 1000.0, 0.02, 8.0), Ok(20.0));
        assert!(matches(1030.0, 1000.0, 0.02, 8.0).unwrap_err().contains("RawUsage 1030 against 1000"));
        // Short records: a second of each record's CPUs is the larger.
        assert_eq!(matches(46.0, 40.0, 0.02, 8.0), Ok(8.0));
        assert!(matches(49.0, 40.0, 0.02, 8.0).is_err());
        // The compose test's job before fairshare.rs took the second count back.
        assert!(matches(185.0, 128.0, 0.02, 8.0).is_err());
    }
}
