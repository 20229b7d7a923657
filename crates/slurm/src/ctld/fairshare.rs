//! Fair-share usage of resized jobs, counted once. priority/multifactor
//! counts a running job's usage from its last count (the last decay pass,
//! or the job's start) at its current size. A resize (ours, through
//! update_job) first counts the job up to the resize at its old size
//! (job_pre_resize_acctg, with AccountingStorageEnforce=limits), but the
//! next count starts again from the last decay pass or the start, not from
//! the resize: the window from there to the resize is counted a second time
//! at the new size (stock 22.05 does the same to `scontrol update` resizes).
//!
//! Each resize here is remembered, and the window's usage at the new size
//! taken back once the second count has happened: at the next decay pass,
//! at the job's next resize, or at its end, whichever comes first (earlier,
//! the association's usage would go below what it truly used).

use std::sync::Mutex;

use slurm_sys as sys;

use crate::common::cstr::cstr_to_string;
use crate::ctld::locks::{LockGuard, WritesJobs};

/// One resize whose window is yet to be taken back.
#[derive(Clone, Debug, PartialEq)]
struct Pending {
    job_id: u32,
    /// When the job started, and when it was resized.
    start: i64,
    resize: i64,
    /// Where the count after the resize begins: the last decay pass
    /// before the resize, or the job's start.
    since: i64,
    /// The job's billable TRES and TRES counts after the resize.
    billable: f64,
    tres: Vec<u64>,
}

static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());

/// The time of priority/multifactor's last decay pass, from the file it
/// writes after each pass in StateSaveLocation (pack_time: 8 bytes, big
/// endian). None when there is none yet.
fn last_decay_ran() -> Option<i64> {
    // SAFETY: slurm_conf is set up before any plugin runs; the string is
    // NULL or NUL-terminated and changes only on reconfigure, under the
    // config lock our guards exclude.
    let dir = unsafe { cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.state_save_location).read()) }?;
    let bytes = std::fs::read(std::path::Path::new(&dir).join("priority_last_decay_ran")).ok()?;
    Some(i64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
}

/// The per-second decay factor the decay pass applies (PriorityDecayHalfLife).
fn decay_factor() -> f64 {
    // SAFETY: as in last_decay_ran; a plain integer field.
    let half_life = unsafe { std::ptr::addr_of!(sys::slurm_conf.priority_decay_hl).read() } as f64;
    if half_life > 0.0 {
        1.0 - 0.693 / half_life
    } else {
        1.0
    }
}

impl<L: WritesJobs> LockGuard<L> {
    /// Whether the double count happens here: priority/multifactor keeps
    /// the usage, and the resize counts the old size (only with
    /// AccountingStorageEnforce=limits; without, the window's usage is
    /// counted once, at the new size).
    fn fairshare_counted_twice(&self) -> bool {
        // SAFETY: as in last_decay_ran; accounting_enforce is slurmctld's
        // global, set at start and on reconfigure, read under our locks.
        unsafe {
            let prio = cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.priority_type).read()).unwrap_or_default();
            let enforce = u32::from(*self.ctld.accounting_enforce);
            prio.ends_with("/multifactor") && enforce & sys::ACCOUNTING_ENFORCE_LIMITS != 0
        }
    }

    /// After job `job_id` was resized by update_job: take back what its
    /// earlier resize left pending (the resize counted it), and remember
    /// this one.
    pub(crate) fn fairshare_after_resize(&mut self, job_id: u32) {
        if !self.fairshare_counted_twice() {
            return;
        }
        let earlier: Vec<Pending> = {
            let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
            let (mine, rest) = pending.drain(..).partition(|p| p.job_id == job_id);
            *pending = rest;
            mine
        };
        for p in &earlier {
            self.take_back(p);
        }
        let Some(job) = self.find_job(job_id) else { return };
        let rec = job.as_ptr();
        // SAFETY: a live record under our job write lock; tres_alloc_cnt is
        // NULL or holds slurmctld_tres_cnt counts.
        let pending = unsafe {
            let start = (*rec).start_time;
            let resize = (*rec).resize_time;
            let since = last_decay_ran().unwrap_or(0).max(start);
            if resize <= since || (*rec).tres_alloc_cnt.is_null() {
                return;
            }
            let tres = std::slice::from_raw_parts((*rec).tres_alloc_cnt, *self.ctld.tres_cnt as usize).to_vec();
            let billable = (self.ctld.calc_job_billable_tres)(rec, since, false);
            Pending { job_id, start, resize, since, billable, tres }
        };
        PENDING.lock().unwrap_or_else(|p| p.into_inner()).push(pending);
    }

    /// Take back each pending window whose second count has happened: a
    /// decay pass since the resize, or the job's end. A decay pass that
    /// began before the resize but was recorded after it moves the window's
    /// start. Called every pass; reads a file only when something is pending.
    pub fn settle_fairshare(&mut self) {
        let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|p| p.into_inner()));
        if pending.is_empty() {
            return;
        }
        let last = last_decay_ran().unwrap_or(0);
        let mut left = Vec::new();
        for mut p in pending {
            let Some(job) = self.find_job(p.job_id) else {
                log::info!("JobId={}: gone before its fair-share usage was set right", p.job_id);
                continue;
            };
            // SAFETY: a live record under our job write lock.
            let ended = unsafe { (*job.as_ptr()).end_time_exp } == sys::NO_VAL as libc::time_t;
            if ended || last > p.resize {
                self.take_back(&p);
            } else {
                p.since = p.since.max(last);
                left.push(p);
            }
        }
        PENDING.lock().unwrap_or_else(|p| p.into_inner()).extend(left);
    }

    /// Take back `p`'s window from the job's QOS and associations.
    fn take_back(&mut self, p: &Pending) {
        let Some(job) = self.find_job(p.job_id) else { return };
        let seconds = (p.resize - p.since) as f64;
        // The job's limit was counted from its start at the new size; the
        // decay passes after the resize count down from `since`.
        let run_secs = (p.since - p.start).max(0) as u64;
        // SAFETY: a live record under our job write lock; `tres` outlives
        // the call; the helper takes the association manager's locks.
        unsafe {
            sys::malleable_fairshare_take_back(
                job.as_ptr(),
                seconds,
                decay_factor(),
                p.billable,
                p.tres.as_ptr(),
                p.tres.len() as u32,
                run_secs,
                1,
            );
        }
        log::info!(
            "JobId={}: fair-share usage of {:.0} billable TRES-s counted twice by Slurm at the resize taken back",
            p.job_id,
            seconds * p.billable
        );
    }
}
