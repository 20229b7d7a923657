//! What changed in slurmctld since a scheduler last looked, for a pass that
//! reads only that: the next job id (new jobs take the ids before it), the
//! partition and reservation stamps, the job counts of sdiag, and the jobs
//! job_submit/malleable was asked to update (its `job_modify` notes them,
//! sched/malleable takes the notes; slurmctld has no per-job change stamp).

use std::ffi::CStr;

use parking_lot::Mutex;
use slurm_sys as sys;

use crate::ctld::job::JobView;
use crate::ctld::locks::{LockGuard, Scheduling, WritesJobs};

/// slurmctld's stamps and counts as a pass reads them, under its locks.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stamps {
    /// The id the next job will get (`get_next_job_id(test_only)`): every
    /// job made since the last read has an id from the last read's value up
    /// to this one (wrapping from MaxJobId to FirstJobId).
    pub next_job_id: u32,
    pub first_job_id: u32,
    pub max_job_id: u32,
    /// The second of the last change to any partition, and to any reservation.
    pub partitions: i64,
    pub reservations: i64,
    /// The second of the last change slurmctld stamped on a node (a job
    /// started or ended on it, its state set by an admin or by its slurmd
    /// not answering; power saving's own moves are not stamped).
    pub nodes: i64,
    /// sdiag's counts since slurmctld started: jobs submitted (an array's
    /// tasks each), started, and cancel requests that succeeded.
    pub submitted: u64,
    pub started: u64,
    pub cancelled: u64,
}

impl LockGuard<Scheduling> {
    /// The stamps and counts now. get_next_job_id needs the job and
    /// federation read locks, which `Scheduling` holds (and more).
    pub fn stamps(&self) -> Stamps {
        let c = self.ctld;
        // SAFETY: get_next_job_id(true) only reads the job hash and the
        // sequence (and stats a state file) under our job and fed locks;
        // the stamps are time_t globals and the counts u32 fields of a
        // live global, written by slurmctld under the locks we hold (the
        // cancel count after them: one word, read as the counters are);
        // slurm_conf is read under the config read lock.
        unsafe {
            let d = c.diag_stats;
            Stamps {
                next_job_id: (c.get_next_job_id)(true),
                first_job_id: sys::slurm_conf.first_job_id,
                max_job_id: sys::slurm_conf.max_job_id,
                partitions: std::ptr::read_volatile(c.last_part_update) as i64,
                reservations: std::ptr::read_volatile(c.last_resv_update) as i64,
                nodes: std::ptr::read_volatile(std::ptr::addr_of!(sys::last_node_update)) as i64,
                submitted: u64::from(std::ptr::read_volatile(std::ptr::addr_of!((*d).jobs_submitted))),
                started: u64::from(std::ptr::read_volatile(std::ptr::addr_of!((*d).jobs_started))),
                cancelled: u64::from(std::ptr::read_volatile(std::ptr::addr_of!((*d).jobs_canceled))),
            }
        }
    }
}

impl<L: WritesJobs> LockGuard<L> {
    /// Whether [`LockGuard::tend_waiting`] may still have work for this
    /// waiting job at a later pass: its QOS or association lost (Reason
    /// InvalidQOS, InvalidAccount), or accrue time not yet given where
    /// accrue limits are enforced, or a job array (whose accrue counts move
    /// as its tasks are split off). Such a job is read at every pass.
    pub fn needs_tending(&self, job: &JobView<'_>) -> bool {
        let rec = job.record();
        if rec.state_reason == sys::job_state_reason_FAIL_QOS || rec.state_reason == sys::job_state_reason_FAIL_ACCOUNT
        {
            return true;
        }
        // SAFETY: accounting_enforce is a live u16 global read under our locks.
        let enforced = u32::from(unsafe { *self.ctld.accounting_enforce }) & sys::ACCOUNTING_ENFORCE_LIMITS != 0;
        // SAFETY: array_recs is NULL or owned by the record.
        let array = unsafe { rec.array_recs.as_ref() }.is_some_and(|a| a.task_cnt > 0);
        enforced && (job.details().is_none_or(|d| d.accrue_time == 0) || array)
    }
}

impl JobView<'_> {
    /// How many jobs its submission counted in sdiag: a waiting array's
    /// record its tasks not yet split off, any other record one.
    pub fn submitted_weight(&self) -> u64 {
        // SAFETY: array_recs is NULL or owned by the record.
        let tasks = unsafe { self.record().array_recs.as_ref() }.map_or(0, |a| a.task_cnt);
        u64::from(tasks.max(1))
    }

    /// Its `--deadline`, if it has one (slurmctld ends it once it can no
    /// longer be met, which time alone decides).
    pub fn deadline(&self) -> Option<i64> {
        let d = self.record().deadline;
        (d != 0 && d != sys::NO_VAL as libc::time_t).then_some(d)
    }

    /// Whether it asks for licenses (`-L`), which other jobs' starts and
    /// ends make free or not.
    pub fn asks_licenses(&self) -> bool {
        !self.record().license_list.is_null()
    }

    /// Its `--begin` time, when that is still to come.
    pub fn begins_after(&self, now: i64) -> Option<i64> {
        self.details().map(|d| d.begin_time).filter(|&t| t > now)
    }

    /// The fields of a queued job's record that can move with no sign the
    /// feed sees (`scontrol top`, multifactor's recalculated priorities, a
    /// job ended by slurmctld itself), as one number: a job read in turn
    /// whose number has not moved need not be read whole. Neither its
    /// Reason nor its expected start counts: the scheduler writes those.
    pub fn fingerprint(&self) -> u64 {
        let r = self.record();
        let words = [
            u64::from(r.job_state),
            u64::from(r.priority),
            u64::from(r.time_limit),
            u64::from(r.time_min),
            r.part_ptr as u64,
            r.qos_ptr as u64,
            r.resv_ptr as u64,
            r.bit_flags,
            u64::from(r.het_job_id),
        ];
        // FNV-1a over the words: no hash crate here, and collisions only
        // cost a job read a turn later.
        words.iter().fold(0xcbf2_9ce4_8422_2325, |h, w| (h ^ w).wrapping_mul(0x0000_0100_0000_01b3))
    }

    /// Whether its `--constraint` names node features.
    pub fn asks_features(&self) -> bool {
        self.details().is_some_and(|d| !d.feature_list.is_null() || !d.feature_list_use.is_null())
    }
}

/// How many updates are noted between two takes; more, and the notes say
/// some were lost (the scheduler then reads every job).
const NOTES_HELD: usize = 4096;

struct Notes {
    ids: Vec<u32>,
    lost: bool,
}

/// The notes, in the job_submit plugin's copy of this crate.
static NOTES: Mutex<Notes> = Mutex::new(Notes { ids: Vec::new(), lost: false });

/// Note that job `id` is being updated (from job_modify, under the job
/// write lock, so the update is whole before a pass can read the job).
pub fn note_update(id: u32) {
    let mut n = NOTES.lock();
    if n.ids.len() < NOTES_HELD {
        n.ids.push(id);
    } else {
        n.lost = true;
    }
}

/// The name job_submit/malleable exports its notes under.
pub const TAKE_NOTES_SYMBOL: &CStr = c"malleable_take_update_notes";

/// The C signature of [`TAKE_NOTES_SYMBOL`]: copies at most `cap` ids to
/// `out`, returns how many, sets `*lost` when some were dropped since the
/// last take (more than it holds, or more than `cap`), and forgets them.
pub type TakeNotesFn = unsafe extern "C" fn(out: *mut u32, cap: usize, lost: *mut bool) -> usize;

/// [`TakeNotesFn`]'s body, for the export in job_submit/malleable.
///
/// # Safety
/// `out` points to `cap` writable u32s and `lost` to a writable bool.
pub unsafe fn take_notes_into(out: *mut u32, cap: usize, lost: *mut bool) -> usize {
    let mut n = NOTES.lock();
    let count = n.ids.len().min(cap);
    // SAFETY: the caller's buffers, of the sizes it says.
    unsafe {
        std::ptr::copy_nonoverlapping(n.ids.as_ptr(), out, count);
        *lost = n.lost || n.ids.len() > cap;
    }
    n.ids.clear();
    n.lost = false;
    count
}

/// Export [`TAKE_NOTES_SYMBOL`] from a job_submit plugin that calls
/// [`note_update`] in its `job_modify`.
#[macro_export]
macro_rules! export_update_notes {
    () => {
        /// # Safety
        /// Called by sched/malleable's agent only, with buffers of the sizes it gives.
        #[no_mangle]
        pub unsafe extern "C" fn malleable_take_update_notes(out: *mut u32, cap: usize, lost: *mut bool) -> usize {
            // SAFETY: the caller's buffers, passed on.
            unsafe { $crate::ctld::changes::take_notes_into(out, cap, lost) }
        }
    };
}

/// What the update notes said at a take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Updates {
    /// These jobs were updated (each may appear more than once).
    Jobs(Vec<u32>),
    /// Some updates were not noted: every job may have changed.
    Lost,
    /// No job_submit plugin in this slurmctld notes updates.
    NotNoted,
}

/// job_submit/malleable's notes, as sched/malleable reaches them: the
/// plugin's object held open (so its code stays mapped while we hold its
/// entry point, whatever slurmctld does with its own reference) and the
/// buffer the notes are copied into. Found again after each reconfigure
/// (which may reload job_submit plugins), by [`UpdateNotes::find`].
pub struct UpdateNotes {
    handle: *mut libc::c_void,
    take: TakeNotesFn,
    ids: Vec<u32>,
}

// SAFETY: a dlopen handle and a function pointer, usable from any thread;
// the notes behind them are behind the plugin's own mutex.
unsafe impl Send for UpdateNotes {}

impl UpdateNotes {
    /// The loaded object whose file name is `plugin_file`, if it exports
    /// the notes. Looking it up takes the loader's lock and walks every
    /// loaded object (up to a few hundred microseconds in slurmctld), so it
    /// is done at a reconfigure, not at every read.
    pub fn find(plugin_file: &str) -> Option<UpdateNotes> {
        let path = loaded_object_ending(plugin_file)?;
        // SAFETY: RTLD_NOLOAD only opens an object already loaded (the path
        // is the loader's own name for it), adding a reference that Drop
        // gives back; the symbol, when there, has TakeNotesFn's signature
        // (our macro).
        unsafe {
            let handle = libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            if handle.is_null() {
                return None;
            }
            let f = libc::dlsym(handle, TAKE_NOTES_SYMBOL.as_ptr());
            if f.is_null() {
                libc::dlclose(handle);
                return None;
            }
            let take = std::mem::transmute::<*mut libc::c_void, TakeNotesFn>(f);
            Some(UpdateNotes { handle, take, ids: vec![0; NOTES_HELD] })
        }
    }

    /// The updates noted since the last take.
    pub fn take(&mut self) -> Updates {
        let mut lost = false;
        // SAFETY: the object is held open by our handle; the buffer has the
        // length given.
        let n = unsafe { (self.take)(self.ids.as_mut_ptr(), self.ids.len(), &mut lost) };
        if lost {
            Updates::Lost
        } else {
            Updates::Jobs(self.ids[..n].to_vec())
        }
    }
}

impl Drop for UpdateNotes {
    fn drop(&mut self) {
        // SAFETY: the reference find() took, given back once.
        unsafe {
            libc::dlclose(self.handle);
        }
    }
}

/// The loader's name of the loaded object whose file name is `file`.
fn loaded_object_ending(file: &str) -> Option<std::ffi::CString> {
    struct Search<'a> {
        file: &'a [u8],
        found: Option<std::ffi::CString>,
    }
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: usize, data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a live info for the object and our
        // own `data`; dlpi_name is NULL or a NUL-terminated path.
        unsafe {
            let search = &mut *data.cast::<Search<'_>>();
            let name = (*info).dlpi_name;
            if name.is_null() {
                return 0;
            }
            let name = CStr::from_ptr(name);
            let bytes = name.to_bytes();
            let base = bytes.rsplit(|&b| b == b'/').next().unwrap_or(bytes);
            if base == search.file {
                search.found = Some(name.to_owned());
                return 1;
            }
            0
        }
    }
    let mut search = Search { file: file.as_bytes(), found: None };
    // SAFETY: the callback only reads what the loader passes and writes
    // `search`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), std::ptr::addr_of_mut!(search).cast()) };
    search.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_taken_once_and_an_overflow_says_lost() {
        let mut out = vec![0u32; 8];
        let mut lost = false;
        // SAFETY: buffers of the sizes given.
        let take = |out: &mut Vec<u32>, lost: &mut bool| unsafe { take_notes_into(out.as_mut_ptr(), 8, lost) };
        take(&mut out, &mut lost);
        note_update(7);
        note_update(9);
        assert_eq!((take(&mut out, &mut lost), &out[..2], lost), (2, &[7, 9][..], false));
        assert_eq!(take(&mut out, &mut lost), 0, "taken once");
        for i in 0..10 {
            note_update(i);
        }
        assert_eq!((take(&mut out, &mut lost), lost), (8, true), "more than the taker holds: lost");
        assert_eq!((take(&mut out, &mut lost), lost), (0, false));
    }

    #[test]
    fn without_the_plugin_loaded_there_are_no_notes_to_take() {
        assert!(UpdateNotes::find("job_submit_no_such_plugin.so").is_none());
    }
}
