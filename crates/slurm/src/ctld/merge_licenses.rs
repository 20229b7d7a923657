//! Since 25.05 slurmctld's expand merge (`update_job NumNodes=0` on a
//! helper) refuses OR'd licenses by looking through both jobs' license
//! lists, and looks through a NULL one too (`_valid_license_job_expansion`
//! calls list_find_first_ro, which does not check): a job without licenses
//! has no list, and slurmctld dies of a segfault (seen on 26.05.3; the same
//! in 25.11.7 and on SchedMD's master). Slurm's own `--dependency=expand`
//! meets it as well. Each job without one is given an empty list for the
//! merge, and it is taken back after: with no licenses to merge, the merge
//! leaves both lists as they were.

use slurm_sys as sys;

/// The empty license lists given for a merge, taken back on drop.
pub(crate) struct EmptyLicenseLists {
    given: Vec<*mut sys::job_record_t>,
}

impl EmptyLicenseLists {
    /// Give each of `jobs` that has no license list an empty one.
    ///
    /// # Safety
    /// Each of `jobs` is a live job record under the job write lock, held
    /// until this is dropped.
    pub(crate) unsafe fn give(jobs: &[*mut sys::job_record_t]) -> EmptyLicenseLists {
        let mut given = Vec::new();
        if !cfg!(slurm_since_25_11) {
            return EmptyLicenseLists { given };
        }
        for &job in jobs {
            // SAFETY: the caller's promise; list_create makes a list
            // slurmctld can free with the record (FREE_NULL_LIST) should
            // the merge keep it.
            unsafe {
                if (*job).license_list.is_null() && (*job).licenses.is_null() {
                    (*job).license_list = sys::list_create(None);
                    given.push(job);
                }
            }
        }
        EmptyLicenseLists { given }
    }
}

impl Drop for EmptyLicenseLists {
    fn drop(&mut self) {
        for &job in &self.given {
            // SAFETY: records still live under the job write lock (the
            // merge ends the helper but does not free its record); a list
            // still empty, on a job still without licenses, is the one
            // given above, which nothing else holds.
            unsafe {
                let list = (*job).license_list;
                if !list.is_null() && (*job).licenses.is_null() && sys::list_count(list) == 0 {
                    sys::list_destroy(list);
                    (*job).license_list = std::ptr::null_mut();
                }
            }
        }
    }
}
