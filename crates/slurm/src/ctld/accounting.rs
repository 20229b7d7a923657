//! Whether slurmctld's accounting in slurmdbd is keeping up, so that the
//! controller resizes no job while it is not: a resize makes Slurm ask
//! slurmdbd for the job's new record (job_post_resize_acctg), and without
//! an answer the job keeps no record index and refuses every update.

use slurm_sys as sys;

use crate::ctld::locks::{LockGuard, LockSet};

/// Whether slurm.conf's AccountingStorageType is slurmdbd. Asked for each
/// job of each pass, so it reads the string in place, copying nothing.
pub fn slurmdbd_in_use() -> bool {
    // SAFETY: slurm_conf is set up before any plugin runs and changes only
    // on reconfigure, under the config write lock every guard excludes;
    // the string is NULL or NUL-terminated and outlives this call.
    unsafe {
        let storage = std::ptr::addr_of!(sys::slurm_conf.accounting_storage_type).read();
        !storage.is_null() && std::ffi::CStr::from_ptr(storage).to_bytes().ends_with(b"/slurmdbd")
    }
}

impl<L: LockSet> LockGuard<L> {
    /// With slurmdbd: whether slurmctld's connection to it is down, or
    /// messages wait in its agent's queue (slurmdbd down, or slow). `sdiag`
    /// shows the same queue ("DBD Agent queue size"). Without slurmdbd, false.
    pub fn slurmdbd_behind(&self) -> bool {
        if !slurmdbd_in_use() {
            return false;
        }
        let (mut active, mut queued): (libc::c_int, libc::c_int) = (0, 0);
        // SAFETY: acct_db_conn is slurmctld's connection handle; get_data
        // writes one int for these two requests and takes the agent's own
        // mutex to count its queue.
        let ok = unsafe {
            let conn = *self.ctld.acct_db_conn;
            let a = sys::acct_storage_g_get_data(
                conn,
                sys::acct_storage_info_t_ACCT_STORAGE_INFO_CONN_ACTIVE,
                std::ptr::addr_of_mut!(active).cast(),
            );
            let q = sys::acct_storage_g_get_data(
                conn,
                sys::acct_storage_info_t_ACCT_STORAGE_INFO_AGENT_COUNT,
                std::ptr::addr_of_mut!(queued).cast(),
            );
            a == sys::SLURM_SUCCESS as i32 && q == sys::SLURM_SUCCESS as i32
        };
        !ok || active == 0 || queued > 0
    }
}
