//! Whether slurmctld keeps its accounting in slurmdbd, and the value Slurm
//! gives a record index it is still asking slurmdbd for: read by the job
//! records' views and by the resizes alike, with no lock of their own.

use slurm_sys as sys;

/// slurm.h's NO_VAL64 (bindgen reads its macro as an int, -2, which is
/// this when widened).
pub(crate) const NO_VAL64: u64 = 0xffff_ffff_ffff_fffe;
const _: () = assert!(sys::NO_VAL64 as u64 == NO_VAL64);

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
