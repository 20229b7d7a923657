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

use std::collections::BTreeMap;
use std::sync::Mutex;

use slurm_sys as sys;

use crate::common::cstr::cstr_to_string;
use crate::ctld::job::JobView;
use crate::ctld::locks::{LockGuard, ReadsJobs, WritesJobs};

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
    /// When the locks the resize was made under were taken: a decay pass
    /// that began after it waited for them to count the job.
    locked_at: i64,
    /// The job's billable TRES and TRES counts after the resize.
    billable: f64,
    tres: Vec<u64>,
}

static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());

/// The resize time of each resized job when its window was last
/// remembered: a later one was Slurm's own (a `--no-kill` job that lost a
/// node goes through the same resize accounting, job_mgr.c), or one made
/// before slurmctld restarted, whose pending window went with it.
static SEEN: Mutex<Vec<(u32, i64)>> = Mutex::new(Vec::new());

/// The start of each running job that Slurm may resize itself (a
/// `--no-kill` job on more than one node), as last read: slurmctld clears a
/// job's start when it requeues it, and a resize of Slurm's own that no
/// pass saw (the job's nodes lost in one of slurmctld's passes, the last
/// requeuing it) is seen only after that.
static RUN_STARTS: Mutex<BTreeMap<u32, i64>> = Mutex::new(BTreeMap::new());

/// The decay passes the plugin's passes have read, the latest last, a few
/// (while a job is resizing or Slurm may resize one itself): a resize of
/// Slurm's own is seen only at the plugin's next pass, and a decay pass may
/// come between on a busy slurmctld; the window counted twice begins at the
/// last decay pass before the resize, not the one since.
static DECAYS: Mutex<Vec<i64>> = Mutex::new(Vec::new());

/// How many decay passes [`DECAYS`] keeps: minutes of them, more than a
/// resize waits to be seen.
const DECAYS_KEPT: usize = 8;

/// Note decay pass `last` in `decays` (once).
fn note_decay(decays: &mut Vec<i64>, last: i64) {
    if decays.last() != Some(&last) {
        decays.push(last);
        if decays.len() > DECAYS_KEPT {
            decays.remove(0);
        }
    }
}

/// The last decay pass known at or before `resize`, of those noted and
/// `last` (the latest); `last` when none is (the resize older than all).
fn decay_before(decays: &[i64], last: i64, resize: i64) -> i64 {
    decays.iter().copied().chain([last]).filter(|&d| d <= resize).max().unwrap_or(last)
}

/// The latest decay pass, noted in [`DECAYS`].
fn read_decay() -> Option<i64> {
    let last = last_decay_ran()?;
    note_decay(&mut DECAYS.lock().unwrap_or_else(|p| p.into_inner()), last);
    Some(last)
}

/// A window of a job's usage taken back: its job and billable TRES-seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TakenBack {
    pub job_id: u32,
    pub tres_s: f64,
}

/// What was taken back since the plugin last said it (its log line is the
/// plugin's contract: [`taken_back`]).
static TAKEN_BACK: Mutex<Vec<TakenBack>> = Mutex::new(Vec::new());

/// The windows taken back since the last call, to be said in the log.
pub fn taken_back() -> Vec<TakenBack> {
    std::mem::take(&mut *TAKEN_BACK.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The time of priority/multifactor's last decay pass, from the file it
/// writes after each pass in StateSaveLocation (pack_time: 8 bytes, big
/// endian). None when there is none yet.
fn last_decay_ran() -> Option<i64> {
    // SAFETY: slurm_conf is set up before any plugin runs; the string is
    // NULL or NUL-terminated and changes only on reconfigure, under the
    // config lock our guards exclude.
    let dir = unsafe { cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.state_save_location).read()) }?;
    decode_time(&std::fs::read(std::path::Path::new(&dir).join("priority_last_decay_ran")).ok()?)
}

/// When this slurmctld's plugin first asked (its first pass, just after
/// slurmctld started): what an earlier slurmctld settled ended before it.
fn plugin_started() -> i64 {
    static STARTED: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *STARTED.get_or_init(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
    })
}

/// Remember that job `job_id`'s resize at `resize` was seen.
fn seen(job_id: u32, resize: i64) {
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    match seen.iter_mut().find(|(j, _)| *j == job_id) {
        Some(entry) => entry.1 = entry.1.max(resize),
        None => seen.push((job_id, resize)),
    }
}

/// A time as Slurm's pack_time writes it: 8 bytes, big endian.
fn decode_time(bytes: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
}

impl Pending {
    /// Whether its second count has happened, given the last decay pass
    /// (`last`) and whether the job's usage was counted to its end. A pass
    /// recorded after the resize counted the window. So did one that began
    /// while the resize's locks were held: it counted the job from `since`
    /// once they were released, at the new size (chaos CI run of stop 70:
    /// a first resize waited under the locks for a stopped slurmdbd and
    /// bob's RawUsage kept that pass's minute twice). One that began
    /// before the locks were taken but was recorded only after the resize
    /// (this is read later) counted the job at its old size up to its own
    /// start, so the window starts there.
    fn counted_twice(&mut self, last: i64, ended: bool) -> bool {
        if ended || last > self.resize || last >= self.locked_at {
            return true;
        }
        self.since = self.since.max(last);
        false
    }

    /// The window to take back (seconds), and the seconds per TRES unit
    /// the job's running TRES-seconds hold too many: its limit was
    /// counted from its start at the new size, the passes after the
    /// resize count down from `since`.
    fn window(&self) -> (f64, u64) {
        ((self.resize - self.since).max(0) as f64, (self.since - self.start).max(0) as u64)
    }
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

impl<L: ReadsJobs> LockGuard<L> {
    /// Note a running job's start when Slurm may resize it itself (see
    /// [`RUN_STARTS`]).
    pub fn note_run_start(&self, job: &JobView<'_>) {
        // SAFETY: a live record under our job lock; plain fields.
        let (start, nodes, no_kill) = unsafe {
            let rec = job.as_ptr();
            ((*rec).start_time, (*rec).node_cnt, (*rec).kill_on_node_fail == 0)
        };
        if start != 0 && nodes > 1 && no_kill {
            RUN_STARTS.lock().unwrap_or_else(|p| p.into_inner()).insert(job.id(), start);
        }
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
    pub(crate) fn fairshare_after_resize(&self, job_id: u32) {
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
            // Requeued: slurmctld cleared its start.
            let requeued = (*rec).start_time == 0;
            let start = if requeued {
                RUN_STARTS.lock().unwrap_or_else(|p| p.into_inner()).get(&job_id).copied().unwrap_or(0)
            } else {
                (*rec).start_time
            };
            let resize = (*rec).resize_time;
            seen(job_id, resize);
            let since = read_decay()
                .map_or(0, |last| decay_before(&DECAYS.lock().unwrap_or_else(|p| p.into_inner()), last, resize))
                .max(start);
            if start == 0 || resize <= since || (*rec).tres_alloc_cnt.is_null() {
                return;
            }
            let tres = std::slice::from_raw_parts((*rec).tres_alloc_cnt, *self.ctld.tres_cnt as usize).to_vec();
            let billable = if requeued {
                // Its allocation's CPU count is cleared too, and
                // calc_job_billable_tres would count 0 and keep it for the
                // next run. What the requeue's end billed the run with
                // stays in billable_tres.
                let kept = (*rec).billable_tres;
                if kept.is_nan() || kept <= 0.0 || crate::ctld::job::billing_unset(kept) {
                    return;
                }
                kept
            } else {
                (self.ctld.calc_job_billable_tres)(rec, since, false)
            };
            Pending { job_id, start, resize, since, locked_at: self.taken_at, billable, tres }
        };
        PENDING.lock().unwrap_or_else(|p| p.into_inner()).push(pending);
    }

    /// After Slurm resized job `job_id` itself (or before a restart of
    /// slurmctld): its window remembered as one of ours. Called every pass
    /// for each running job that was resized; does nothing for a resize
    /// already remembered.
    ///
    /// A job that ended before this slurmctld started (read again, still
    /// completing or not yet purged) is left alone: its windows were the
    /// last slurmctld's, settled at its end, and the usage it saved holds
    /// that (taken back twice, the 30-minute campaign on 26.05 showed it).
    pub fn fairshare_after_slurms_resize(&self, job_id: u32) {
        let Some(job) = self.find_job(job_id) else { return };
        if job.has_ended() && job.end_time() < plugin_started() {
            return;
        }
        // SAFETY: a live record under our job write lock.
        let resize = unsafe { (*job.as_ptr()).resize_time };
        let known = SEEN.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|&(j, t)| j == job_id && t >= resize);
        if resize != 0 && !known {
            self.fairshare_after_resize(job_id);
            seen(job_id, resize);
        }
    }

    /// Take back each pending window whose second count has happened: a
    /// decay pass since the resize, or the job's end. A decay pass that
    /// began before the resize but was recorded after it moves the window's
    /// start. Called every pass; reads a file only when something is pending.
    pub fn settle_fairshare(&mut self) {
        // Its first call is the plugin's first pass: the time is kept then.
        plugin_started();
        SEEN.lock().unwrap_or_else(|p| p.into_inner()).retain(|&(j, _)| self.find_job(j).is_some());
        RUN_STARTS.lock().unwrap_or_else(|p| p.into_inner()).retain(|&j, _| self.find_job(j).is_some());
        let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|p| p.into_inner()));
        if pending.is_empty() && RUN_STARTS.lock().unwrap_or_else(|p| p.into_inner()).is_empty() {
            return;
        }
        // Read while Slurm may resize a job itself too (DECAYS).
        let last = read_decay().unwrap_or(0);
        if pending.is_empty() {
            return;
        }
        let mut left = Vec::new();
        for mut p in pending {
            let Some(job) = self.find_job(p.job_id) else {
                log::info!("JobId={}: gone before its fair-share usage was set right", p.job_id);
                continue;
            };
            // SAFETY: a live record under our job write lock.
            let ended = unsafe { (*job.as_ptr()).end_time_exp } == sys::NO_VAL as libc::time_t;
            if p.counted_twice(last, ended) {
                self.take_back(&p);
            } else {
                left.push(p);
            }
        }
        PENDING.lock().unwrap_or_else(|p| p.into_inner()).extend(left);
    }

    /// Take back `p`'s window from the job's QOS and associations.
    fn take_back(&self, p: &Pending) {
        let Some(job) = self.find_job(p.job_id) else { return };
        let (seconds, run_secs) = p.window();
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
            );
        }
        let taken = TakenBack { job_id: p.job_id, tres_s: seconds * p.billable };
        TAKEN_BACK.lock().unwrap_or_else(|p| p.into_inner()).push(taken);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(start: i64, since: i64, resize: i64) -> Pending {
        // The locks taken in the second of the resize.
        Pending { job_id: 7, start, resize, since, locked_at: resize, billable: 4.0, tres: vec![4, 2000] }
    }

    #[test]
    fn a_window_waits_for_a_decay_pass_after_the_resize_or_the_jobs_end() {
        // Started at 100, last pass at 160, resized at 190.
        let mut p = pending(100, 160, 190);
        assert!(!p.counted_twice(160, false));
        assert_eq!(p.window(), (30.0, 60));
        assert!(p.counted_twice(220, false), "a pass after the resize counted it");
        assert!(pending(100, 160, 190).counted_twice(160, true), "the job's end counted it");
    }

    #[test]
    fn a_pass_recorded_only_after_the_resize_moves_the_windows_start() {
        // The pass that began at 180 counted the job at its old size to
        // 180; it was recorded after the resize at 190 was seen.
        let mut p = pending(100, 160, 190);
        assert!(!p.counted_twice(180, false));
        assert_eq!(p.window(), (10.0, 80));
        // Never back.
        assert!(!p.counted_twice(170, false));
        assert_eq!(p.window(), (10.0, 80));
    }

    #[test]
    fn a_pass_that_began_while_the_resize_held_the_locks_counted_the_window_from_the_last() {
        // Started at 100, last pass at 160; the locks taken at 175, the
        // resize at 190 (slurmdbd away); the pass that began at 180 waited
        // for the locks and counted 160..180 at the new size.
        let mut p = Pending { locked_at: 175, ..pending(100, 160, 190) };
        assert!(p.counted_twice(180, false));
        assert_eq!(p.window(), (30.0, 60));
        // Begun before the locks were taken: it counted at the old size.
        let mut p = Pending { locked_at: 185, ..pending(100, 160, 190) };
        assert!(!p.counted_twice(180, false));
        assert_eq!(p.window(), (10.0, 80));
    }

    #[test]
    fn a_job_resized_before_any_pass_counts_from_its_start() {
        let p = pending(100, 100, 130);
        assert_eq!(p.window(), (30.0, 0));
    }

    #[test]
    fn a_resize_seen_after_a_decay_pass_counts_from_the_pass_before_it() {
        let mut decays = Vec::new();
        for d in [100, 160, 160, 220] {
            note_decay(&mut decays, d);
        }
        assert_eq!(decays, [100, 160, 220], "each pass once");
        // Slurm resized the job at 190; the plugin saw it after the pass at 220.
        assert_eq!(decay_before(&decays, 220, 190), 160);
        // Seen before the next pass: the latest.
        assert_eq!(decay_before(&decays, 220, 230), 220);
        // Older than every pass kept: the latest, and no window.
        assert_eq!(decay_before(&decays, 220, 50), 220);
        for d in (0..20).map(|i| 300 + 60 * i) {
            note_decay(&mut decays, d);
        }
        assert_eq!(decays.len(), DECAYS_KEPT);
        assert_eq!(decays.last(), Some(&1440));
    }

    #[test]
    fn the_last_pass_reads_as_slurm_packs_it() {
        let t: i64 = 1_795_788_039;
        let mut bytes = t.to_be_bytes().to_vec();
        bytes.extend(0i64.to_be_bytes()); // the last reset, after it
        assert_eq!(decode_time(&bytes), Some(t));
        assert_eq!(decode_time(&bytes[..5]), None);
    }
}
