//! Slurm's clock: the second every Slurm daemon stamps its records with.
//!
//! Slurm reads it with time(2), which on Linux comes from the kernel's
//! coarse clock and can be up to a tick (a few milliseconds) behind
//! `SystemTime::now()` just after a second turns. A plugin that decides by
//! `SystemTime` in that window (a power corridor change due at 22:15:00,
//! say) starts a job that slurmctld then records as started at 22:14:59.
//! Deciding by this clock keeps our decisions and Slurm's records in step.

/// Seconds since the Unix epoch, as Slurm's time(NULL) reads them.
pub fn now() -> i64 {
    // SAFETY: time(2) with a NULL argument only returns the time; it writes
    // nothing and cannot fail on Linux.
    unsafe { libc::time(std::ptr::null_mut()) as i64 }
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    #[test]
    fn it_is_the_wall_clock_to_the_second() {
        let precise = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        let slurm = super::now();
        // Never ahead of the precise clock, and behind it by one second at most.
        assert!(slurm <= precise + 1 && slurm >= precise - 1, "{slurm} vs {precise}");
    }
}
