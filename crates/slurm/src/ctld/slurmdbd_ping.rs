//! Whether slurmdbd answers, asked as slurmctld itself asks it: a
//! persistent connection opened with its PersistInit message, answered by
//! slurmdbd, and closed. A TCP connection alone says too little: the kernel
//! takes it for a slurmdbd that is stopped (SIGSTOP, its container paused)
//! or hung on MariaDB, and such a slurmdbd makes a resize wait for it under
//! slurmctld's locks (22.05's job_post_resize_acctg, up to 900 s).

use std::ffi::CString;
use std::time::Duration;

use slurm_sys as sys;

/// persist_conn.h's flags: a connection to slurmdbd, and its failures said
/// at debug level only. The same bits in every release (25.11 writes them
/// as `SLURM_BIT(n)`, which bindgen does not read).
const PERSIST_FLAG_DBD: u16 = 0x0001;
const PERSIST_FLAG_SUPPRESS_ERR: u16 = 0x0010;

/// slurm_auth.h's SLURM_AUTH_UID_ANY: the credential is for whoever
/// answers, as slurmctld's own connection to slurmdbd asks.
const AUTH_UID_ANY: libc::uid_t = libc::uid_t::MAX;

/// One slurmdbd host to ask, again and again (on its own thread: an open
/// waits for the answer). Its connection record is kept across asks, so
/// that Slurm says a failure once every ten minutes, not at each ask.
pub struct SlurmdbdPing {
    conn: Box<sys::slurm_persist_conn_t>,
    // What conn's strings point into, alive as long as it.
    _host: CString,
    _cluster: CString,
    within: Duration,
}

// SAFETY: the record and the strings it points to are owned by this value
// and used by one thread at a time (`ask` takes `&mut self`); Slurm keeps
// no pointer to them once an open or a close has returned.
unsafe impl Send for SlurmdbdPing {}

impl SlurmdbdPing {
    /// For slurmdbd on `host`:`port`, for slurm.conf's ClusterName
    /// `cluster`, each answer awaited `within` at most.
    pub fn new(host: &str, port: u16, cluster: &str, within: Duration) -> Result<SlurmdbdPing, String> {
        let text = |s: &str| CString::new(s).map_err(|_| format!("{s:?} holds a NUL byte"));
        let (host, cluster) = (text(host)?, text(cluster)?);
        // SAFETY: an all-zero persist_conn_t is what xmalloc gives Slurm's
        // own callers before they set the fields they need (dbd_conn_open).
        let mut conn: Box<sys::slurm_persist_conn_t> = Box::new(unsafe { std::mem::zeroed() });
        conn.cluster_name = cluster.as_ptr().cast_mut();
        conn.rem_host = host.as_ptr().cast_mut();
        conn.rem_port = port;
        conn.persist_type = sys::persist_conn_type_t_PERSIST_TYPE_DBD;
        conn.r_uid = AUTH_UID_ANY;
        Ok(SlurmdbdPing { conn, _host: host, _cluster: cluster, within })
    }

    /// Open the connection (its PersistInit answered within the time
    /// given) and close it again. Err: slurmdbd refused, did not answer in
    /// time, or answered with an error.
    pub fn ask(&mut self) -> Result<(), String> {
        let c = &mut *self.conn;
        // An open sets these from slurmdbd's answer: the request's again.
        c.flags = PERSIST_FLAG_DBD | PERSIST_FLAG_SUPPRESS_ERR;
        c.version = sys::SLURM_PROTOCOL_VERSION as u16;
        c.timeout = i32::try_from(self.within.as_millis()).unwrap_or(i32::MAX);
        let asked = std::time::Instant::now();
        // SAFETY: `c` is a live record whose strings outlive the call; the
        // open either leaves a connection in it, closed just after, or
        // closes what it opened itself.
        let rc = unsafe { sys::slurm_persist_conn_open(c) };
        if rc != sys::SLURM_SUCCESS as i32 {
            // Waited out: errno then says only that the read would block.
            if asked.elapsed() >= self.within {
                return Err(format!("its PersistInit unanswered after {:.0?}", self.within));
            }
            // Slurm's code for the failure is in errno (a refusal, a name
            // that does not resolve, an error slurmdbd answered).
            let code = std::io::Error::last_os_error().raw_os_error().unwrap_or(rc);
            return Err(format!("its PersistInit failed: {}", crate::common::cstr::strerror(code)));
        }
        // SAFETY: the connection the open left in `c`; closed once.
        unsafe { sys::slurm_persist_conn_close(c) };
        Ok(())
    }
}
