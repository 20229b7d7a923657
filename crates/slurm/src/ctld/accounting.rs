//! Whether slurmctld's accounting in slurmdbd is keeping up, so that the
//! controller resizes no job while it is not: a resize makes Slurm ask
//! slurmdbd for the job's new record (job_post_resize_acctg), and without
//! an answer the job keeps no record index and refuses every update.

use slurm_sys as sys;

use crate::ctld::locks::{LockGuard, LockSet};
use crate::ctld::slurmdbd::slurmdbd_in_use;

/// Where slurmctld reaches slurmdbd, as slurm.conf names it:
/// AccountingStorageHost, then AccountingStorageBackupHost when set, at
/// AccountingStoragePort; and the ClusterName it says it is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmdbdAddress {
    pub hosts: Vec<String>,
    pub port: u16,
    pub cluster: String,
}

/// slurmdbd's port when slurm.conf sets none (Slurm's SLURMDBD_PORT).
const SLURMDBD_PORT: u16 = 6819;

impl<L: LockSet> LockGuard<L> {
    /// With slurmdbd: where slurmctld reaches it. Without, or with no
    /// AccountingStorageHost, `None`.
    pub fn slurmdbd_address(&self) -> Option<SlurmdbdAddress> {
        if !slurmdbd_in_use() {
            return None;
        }
        // SAFETY: as in slurmdbd_in_use, and the guard holds the config
        // read lock besides: the strings are NULL or NUL-terminated and
        // live while it does; they are copied.
        let (host, backup, port, cluster) = unsafe {
            let text = |p: *const libc::c_char| {
                (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
            };
            (
                text(std::ptr::addr_of!(sys::slurm_conf.accounting_storage_host).read()),
                text(std::ptr::addr_of!(sys::slurm_conf.accounting_storage_backup_host).read()),
                std::ptr::addr_of!(sys::slurm_conf.accounting_storage_port).read(),
                text(std::ptr::addr_of!(sys::slurm_conf.cluster_name).read()),
            )
        };
        let hosts: Vec<String> = host.into_iter().chain(backup).filter(|h| !h.is_empty()).collect();
        let port = if port == 0 { SLURMDBD_PORT } else { port };
        let cluster = cluster.unwrap_or_default();
        (!hosts.is_empty()).then_some(SlurmdbdAddress { hosts, port, cluster })
    }

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

    /// For a resize: have slurmctld's connection to slurmdbd send each
    /// message at once and acknowledge each answer at once, until the
    /// returned guard is dropped. A resize waits, under the write locks,
    /// for slurmdbd's answers (the helper's start, then each job's new
    /// record in job_post_resize_acctg), and Slurm writes each message as
    /// two writes, its length then its body: with Nagle's algorithm the body
    /// waits for the length's acknowledgement, which the receiver delays
    /// (at least 40 ms on Linux), both ways. TCP_NODELAY ends that on our
    /// side; slurmdbd's side stays, so our acknowledgements go out at once
    /// instead: TCP_QUICKACK sends a delayed one when set, but does not
    /// stay set, so a thread sets it again every 200 us while the guard
    /// lives. Without slurmdbd, or with its connection closed, nothing.
    /// 24.11 sends a resize's records to slurmdbd through its agent, not
    /// under the locks: nothing to hasten there.
    pub(crate) fn slurmdbd_quick(&self) -> QuickAcks {
        // 25.05 took the fd out of the persistent connection; from 24.11
        // there is nothing to hasten anyway.
        #[cfg(slurm_since_24_11)]
        return QuickAcks(None);
        #[cfg(not(slurm_since_24_11))]
        self.slurmdbd_quick_22_05()
    }

    #[cfg(not(slurm_since_24_11))]
    fn slurmdbd_quick_22_05(&self) -> QuickAcks {
        if !slurmdbd_in_use() {
            return QuickAcks(None);
        }
        // SAFETY: under slurmdbd, acct_db_conn is slurmctld's persistent
        // connection (slurm_persist_conn_t, its fd -1 while closed), read
        // under our locks as slurmctld's callers read it.
        let fd = unsafe {
            let conn = (*self.ctld.acct_db_conn).cast::<sys::slurm_persist_conn_t>();
            if conn.is_null() {
                return QuickAcks(None);
            }
            (*conn).fd
        };
        if fd < 0 {
            return QuickAcks(None);
        }
        set_tcp(fd, libc::TCP_NODELAY);
        set_tcp(fd, libc::TCP_QUICKACK);
        let run = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let running = run.clone();
        let acks = std::thread::Builder::new().name("dbd-quickack".into()).spawn(move || {
            while running.load(std::sync::atomic::Ordering::Relaxed) {
                set_tcp(fd, libc::TCP_QUICKACK);
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        });
        QuickAcks(acks.ok().map(|t| (run, t)))
    }
}

/// Set a TCP option to 1 on `fd`. On a socket slurmctld has closed and
/// reused meanwhile (it reconnects only on this thread, or the agent's),
/// at worst another TCP socket acknowledges at once; on anything else,
/// setsockopt fails and nothing changes.
#[cfg(not(slurm_since_24_11))]
fn set_tcp(fd: libc::c_int, opt: libc::c_int) {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt only reads the int it is given.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            opt,
            std::ptr::addr_of!(on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// While alive, slurmctld acknowledges slurmdbd's answers at once
/// ([`LockGuard::slurmdbd_quick`]).
pub(crate) struct QuickAcks(Option<(std::sync::Arc<std::sync::atomic::AtomicBool>, std::thread::JoinHandle<()>)>);

impl Drop for QuickAcks {
    fn drop(&mut self) {
        if let Some((run, thread)) = self.0.take() {
            run.store(false, std::sync::atomic::Ordering::Relaxed);
            let _ = thread.join();
        }
    }
}
