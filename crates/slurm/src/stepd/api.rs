//! The node's other steps, as slurmstepd reaches them: Slurm's stepd API
//! (src/common/stepd_api.h, in libslurmfull) over the unix sockets each
//! stepd listens on in the slurmd spool directory, named through
//! slurmstepd's own configuration (`conf`, a global of the slurmstepd
//! executable resolved at run time, so a plugin still loads elsewhere).

use std::ffi::CString;

use slurm_sys as sys;

use crate::common::cstr::cstr_to_string;
use crate::stepd::step::StepId;

/// Where this node's steps listen: slurmstepd's spool directory (its `%n`
/// expanded by slurmd) and node name, copied from its `conf`.
struct Place {
    dir: CString,
    node: CString,
}

/// Whether an executable's file name is slurmstepd's, as built or as
/// Debian names it.
fn is_slurmstepd_name(name: &str) -> bool {
    let name = name.strip_suffix(" (deleted)").unwrap_or(name);
    name == "slurmstepd" || name == "slurmstepd-wlm"
}

/// slurmstepd's `conf`, or an error saying why it cannot be had here.
fn place() -> Result<Place, String> {
    // `conf` is a common name: only in slurmstepd is it certainly the
    // `slurmd_conf_t *` of src/slurmd/slurmd/slurmd.h.
    // Debian installs it as slurmstepd-wlm (slurmstepd is a link to it); a
    // binary replaced by an upgrade while it runs reads as `... (deleted)`.
    let exe = std::fs::read_link("/proc/self/exe").map_err(|e| format!("cannot read /proc/self/exe: {e}"))?;
    if exe.file_name().is_none_or(|n| !is_slurmstepd_name(&n.to_string_lossy())) {
        return Err(format!("not in slurmstepd (this process is {})", exe.display()));
    }
    // SAFETY: dlsym with RTLD_DEFAULT searches the process's global scope
    // (the executable first); the name is NUL-terminated.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"conf".as_ptr()) };
    if sym.is_null() {
        return Err("slurmstepd's symbol conf not found".into());
    }
    let conf_ptr = sym.cast::<*const sys::slurmd_conf_t>();
    // SAFETY: in slurmstepd `conf` is `slurmd_conf_t *conf` (slurmd.h, the
    // declaration bindgen read); slurmstepd sets it at start-up, before
    // any plugin is loaded, fills it from slurmd, and frees it only at
    // exit. The two strings are NUL-terminated and owned by it; we copy
    // them at once.
    let (dir, node) = unsafe {
        let conf = conf_ptr.read().as_ref().ok_or("slurmstepd's conf is not set")?;
        (cstr_to_string(conf.spooldir), cstr_to_string(conf.node_name))
    };
    let text = |s: Option<String>, what: &str| {
        s.filter(|s| !s.is_empty())
            .and_then(|s| CString::new(s).ok())
            .ok_or_else(|| format!("slurmstepd's conf has no {what}"))
    };
    Ok(Place { dir: text(dir, "spooldir")?, node: text(node, "node_name")? })
}

/// The steps that have a slurmstepd on this node (each listening on its
/// socket; one that ended without removing its socket is listed too, and
/// fails to connect).
pub fn steps_here() -> Result<Vec<StepId>, String> {
    let place = place()?;
    let mut steps = Vec::new();
    // SAFETY: stepd_available reads the directory and returns a new List
    // of step_loc_t (NULL only when given no node name), which we walk
    // with an iterator and destroy once, with the items (its destructor
    // frees them); nothing of it is kept.
    unsafe {
        let list = sys::stepd_available(place.dir.as_ptr(), place.node.as_ptr());
        if list.is_null() {
            return Err(format!("cannot list the steps in {}", place.dir.to_string_lossy()));
        }
        let it = sys::list_iterator_create(list);
        loop {
            let item = sys::list_next(it).cast::<sys::step_loc_t>();
            let Some(loc) = item.as_ref() else { break };
            steps.push(StepId::from_raw(&loc.step_id));
        }
        sys::list_iterator_destroy(it);
        sys::list_destroy(list);
    }
    Ok(steps)
}

/// Where a step's slurmstepd is in its life (`slurmstepd_state_t`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StepState {
    /// Not answering (or gone).
    NotRunning,
    /// Setting up: from its start until all its tasks are forked (its
    /// task plugins' `pre_setuid` runs in it).
    Starting,
    /// Its tasks are forked and not all ended.
    Running,
    /// Its tasks have ended (its `post_step` runs in it), or are being
    /// killed.
    Ending,
}

impl StepState {
    fn from_raw(s: sys::slurmstepd_state_t) -> StepState {
        match s {
            sys::slurmstepd_state_t_SLURMSTEPD_STEP_STARTING => StepState::Starting,
            sys::slurmstepd_state_t_SLURMSTEPD_STEP_RUNNING => StepState::Running,
            sys::slurmstepd_state_t_SLURMSTEPD_STEP_ENDING => StepState::Ending,
            // 24.11 numbers a cancelled step's state apart: its tasks are
            // being killed.
            #[cfg(slurm_since_24_11)]
            sys::slurmstepd_state_t_SLURMSTEPD_STEP_CANCELLED => StepState::Ending,
            _ => StepState::NotRunning,
        }
    }
}

/// A connection to one step's slurmstepd, closed on drop.
struct Connection {
    fd: libc::c_int,
    version: u16,
    step: StepId,
}

impl Connection {
    fn open(step: StepId) -> Result<Connection, String> {
        let place = place()?;
        let mut raw_id = step.to_raw();
        let mut version: u16 = 0;
        // SAFETY: the strings are NUL-terminated and alive for the call;
        // stepd_connect only reads them and the step id, and writes the
        // protocol version.
        let fd = unsafe { sys::stepd_connect(place.dir.as_ptr(), place.node.as_ptr(), &mut raw_id, &mut version) };
        if fd < 0 {
            return Err(format!("cannot connect to the slurmstepd of {step}: {}", std::io::Error::last_os_error()));
        }
        // 22.05's stepd_connect closes the socket but still returns its
        // number when the stepd's greeting fails; the version it did not
        // read is then 0. That fd is not ours to use or close any more.
        if version == 0 {
            return Err(format!("the slurmstepd of {step} did not answer (it may be ending)"));
        }
        Ok(Connection { fd, version, step })
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: a socket stepd_connect opened for us, closed once here.
        unsafe {
            libc::close(self.fd);
        }
    }
}

/// Where `step`'s slurmstepd is in its life, as it says.
pub fn state_of(step: StepId) -> Result<StepState, String> {
    let c = Connection::open(step)?;
    // SAFETY: a connected socket and the version its stepd gave; the call
    // only writes the request and reads the answer.
    Ok(StepState::from_raw(unsafe { sys::stepd_state(c.fd, c.version) }))
}

/// The pids of `step`'s processes on this node, as its slurmstepd's
/// proctrack plugin lists them (`scontrol listpids` asks the same). Which
/// are listed is proctrack's choice: linuxproc leaves the stepd out,
/// others may not ([`is_slurmstepd`](crate::stepd::is_slurmstepd) tells);
/// and ask a step only once it is [`StepState::Running`]: before, its
/// container may not exist yet (proctrack/pgid's id is then 0, and it
/// would list the processes of process group 0, the kernel's threads).
pub fn pids_of(step: StepId) -> Result<Vec<i32>, String> {
    let c = Connection::open(step)?;
    let mut pids: *mut u32 = std::ptr::null_mut();
    let mut count: u32 = 0;
    // SAFETY: on success stepd_list_pids hands us an xcalloc'd array of
    // `count` pids (NULL when none), which we copy and free with xfree
    // (slurm_xfree, which NULLs our pointer); on failure it has freed it
    // and set it NULL.
    unsafe {
        let rc = sys::stepd_list_pids(c.fd, c.version, &mut pids, &mut count);
        let out = if rc == crate::SLURM_SUCCESS && !pids.is_null() {
            Ok(std::slice::from_raw_parts(pids, count as usize).iter().map(|&p| p as i32).collect())
        } else if rc == crate::SLURM_SUCCESS {
            Ok(Vec::new())
        } else {
            Err(format!("the slurmstepd of {} did not list its processes", c.step))
        };
        if !pids.is_null() {
            sys::slurm_xfree(std::ptr::addr_of_mut!(pids).cast());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_as_slurmstepd_numbers_them() {
        assert_eq!(StepState::from_raw(0), StepState::NotRunning);
        assert_eq!(StepState::from_raw(1), StepState::Starting);
        assert_eq!(StepState::from_raw(2), StepState::Running);
        // 22.05: 3 ending; 24.11: 3 cancelled, 4 ending.
        assert_eq!(StepState::from_raw(3), StepState::Ending);
        assert_eq!(
            StepState::from_raw(4),
            if cfg!(slurm_since_24_11) { StepState::Ending } else { StepState::NotRunning }
        );
        assert_eq!(StepState::from_raw(7), StepState::NotRunning);
    }

    #[test]
    fn slurmstepd_is_known_by_its_own_name_and_debians() {
        for name in ["slurmstepd", "slurmstepd-wlm", "slurmstepd-wlm (deleted)", "slurmstepd (deleted)"] {
            assert!(is_slurmstepd_name(name), "{name}");
        }
        for name in ["slurmd", "slurmstepdx", "my-slurmstepd", "cluster_tests"] {
            assert!(!is_slurmstepd_name(name), "{name}");
        }
    }

    #[test]
    fn outside_slurmstepd_the_api_says_so_rather_than_reading_a_stranger() {
        let e = steps_here().unwrap_err();
        assert!(e.starts_with("not in slurmstepd"), "{e}");
        let e = pids_of(StepId::new(1, 0)).unwrap_err();
        assert!(e.starts_with("not in slurmstepd"), "{e}");
        let e = state_of(StepId::new(1, 0)).unwrap_err();
        assert!(e.starts_with("not in slurmstepd"), "{e}");
    }
}
