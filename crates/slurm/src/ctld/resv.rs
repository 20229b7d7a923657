//! What Slurm's advanced reservations let a waiting job use, asked of
//! slurmctld's own job_test_resv (what its backfill asks): the nodes of the
//! job's reservation, or the nodes no reservation holds while it would run.

use slurm_sys as sys;

use crate::common::bitmap::{set_bits, Bitmap};
use crate::common::cstr::strerror;
use crate::ctld::job::JobView;
use crate::ctld::locks::{LockGuard, WritesJobs, WritesNodes};

/// What reservations leave a job that would start now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reserved {
    /// No reservation takes any node from it.
    Unrestricted,
    /// Only these nodes (node-table indices).
    Only(Vec<usize>),
    /// It cannot start now: its reservation has not begun or is not its to
    /// use, a maintenance reservation holds its partition, or one of its
    /// required nodes is reserved. Slurm's error code and text.
    NotNow(i32, String),
}

impl<L: WritesJobs + WritesNodes> LockGuard<L> {
    /// [`Reserved`] for `job` if it started at `now` and ran to its limit.
    pub fn reserved_for(&self, job: &JobView<'_>, now: i64) -> Reserved {
        if job.details().is_none() {
            // Not a job that can start (job_test_resv reads its details).
            return Reserved::NotNow(0, "the job has no details".into());
        }
        // With no reservation at all, job_test_resv would build a bitmap of
        // every active node for each job, the most of a pass on a big
        // machine with a long queue, to say what is known already.
        if !job.in_reservation() && !self.any_reservation() {
            return Reserved::Unrestricted;
        }
        let mut when: libc::time_t = now;
        let mut nodes: *mut sys::bitstr_t = std::ptr::null_mut();
        // SAFETY: a live record under our job write lock (job_test_resv may
        // set its resv_ptr) and the node lock it reads node bitmaps under;
        // the node bitmap is ours to free, taken into an owner at once.
        let rc = unsafe { self.test_resv(job.as_ptr(), &mut when, &mut nodes) };
        // SAFETY: NULL or a bitmap job_test_resv made for us.
        let nodes = unsafe { Bitmap::from_raw(nodes) };
        if rc != sys::SLURM_SUCCESS as i32 {
            return Reserved::NotNow(rc, strerror(rc));
        }
        if nodes.is_empty() {
            return Reserved::Unrestricted;
        }
        // SAFETY: a valid bitmap we own.
        let set = unsafe { sys::bit_set_count(nodes.as_raw()) } as usize;
        if set >= self.node_table_len() {
            Reserved::Unrestricted
        } else {
            // SAFETY: as above.
            Reserved::Only(unsafe { set_bits(nodes.as_raw()) })
        }
    }

    /// job_test_resv, freeing what it excludes within the nodes (cores;
    /// in 24.11 GRES too), which we do not use.
    ///
    /// # Safety
    /// As job_test_resv: a live record, the job write and node locks held.
    #[cfg(not(slurm_since_24_11))]
    unsafe fn test_resv(
        &self,
        job: *mut sys::job_record_t,
        when: &mut libc::time_t,
        nodes: &mut *mut sys::bitstr_t,
    ) -> i32 {
        let mut cores: *mut sys::bitstr_t = std::ptr::null_mut();
        let mut overlap = false;
        // SAFETY: by the caller's contract; `cores` is NULL or a bitmap
        // made for us.
        unsafe {
            let rc = (self.ctld.job_test_resv)(job, when, false, nodes, &mut cores, &mut overlap, false);
            drop(Bitmap::from_raw(cores));
            rc
        }
    }

    /// 24.11: the exclusions come in a resv_exc_t, freed by slurmctld's
    /// own function as its callers do.
    #[cfg(slurm_since_24_11)]
    unsafe fn test_resv(
        &self,
        job: *mut sys::job_record_t,
        when: &mut libc::time_t,
        nodes: &mut *mut sys::bitstr_t,
    ) -> i32 {
        let mut exc = sys::resv_exc_t::default();
        let mut overlap = false;
        // SAFETY: by the caller's contract; `exc` starts empty and lives
        // across both calls.
        unsafe {
            let rc = (self.ctld.job_test_resv)(job, when, false, nodes, &mut exc, &mut overlap, false);
            (self.ctld.delete_resv_exc_parts)(&mut exc);
            rc
        }
    }

    /// Whether slurmctld holds any reservation (active or future).
    pub fn any_reservation(&self) -> bool {
        // SAFETY: resv_list points to slurmctld's global list (NULL before
        // its reservations are read); list_count takes the list's own lock.
        unsafe {
            let list = *self.ctld.resv_list;
            !list.is_null() && sys::list_count(list) > 0
        }
    }

    /// The start times of the reservations still to begin after `now`,
    /// earliest first. What [`LockGuard::reserved_for`] leaves a waiting job
    /// changes as the clock brings its window (now to now + its limit) up to
    /// one of them, with no stamp moving: a scheduler that keeps its reads
    /// reads such a job again from then.
    pub fn reservation_starts_after(&self, now: i64) -> Vec<i64> {
        let mut starts: Vec<i64> = Vec::new();
        // SAFETY: resv_list points to slurmctld's global list (NULL before
        // its reservations are read), its records written under the node
        // write lock we hold; `collect_start` only pushes onto `starts`,
        // which outlives the walk.
        unsafe {
            let list = *self.ctld.resv_list;
            if !list.is_null() {
                sys::list_for_each(list, Some(collect_start), std::ptr::addr_of_mut!(starts).cast());
            }
        }
        starts.retain(|&t| t > now);
        starts.sort_unstable();
        starts
    }
}

/// slurm.h's RESERVE_FLAG_TIME_FLOAT (SLURM_BIT(17) in 22.05 and 24.11; a
/// macro bindgen cannot read).
const RESERVE_FLAG_TIME_FLOAT: u64 = 1 << 17;

/// list_for_each's callback: a reservation's start onto the Vec `arg` points to.
extern "C" fn collect_start(resv: *mut std::ffi::c_void, arg: *mut std::ffi::c_void) -> std::ffi::c_int {
    // A push that fails (memory) stops the walk rather than unwinding into C.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: a live slurmctld_resv_t of resv_list, read under the lock
        // its writers hold; `arg` is the Vec reservation_starts_after passes,
        // not otherwise borrowed during the walk.
        unsafe {
            let r = &*resv.cast::<sys::slurmctld_resv_t>();
            // As job_test_resv reads it (_get_rel_start_end): a floating
            // reservation begins a fixed time after now, whatever the
            // clock, so it is none of these; any other at start_time_first.
            if r.flags & RESERVE_FLAG_TIME_FLOAT == 0 {
                (*arg.cast::<Vec<i64>>()).push(r.start_time_first);
            }
        }
    }))
    .map_or(-1, |()| 0)
}
