//! A grown job's prolog and extern step on the nodes it grew onto, under
//! PrologFlags=Alloc or Contain. slurmctld runs a job's prolog on its nodes
//! when it starts (and with Contain makes its extern step, the cgroup that
//! pam_slurm_adopt puts ssh sessions in); on the nodes an expand added, the
//! prolog that ran was the helper's: the job's own never ran there, it had
//! no extern step there, and slurmd held its first step there about a
//! second, waiting for the prolog's launch. And a merge refuses a helper
//! with a step: Contain gives it one.

use slurm_sys as sys;

use crate::ctld::locks::{LockGuard, WritesJobs, WritesNodes};

/// slurm.conf's PrologFlags.
fn prolog_flags() -> u32 {
    // SAFETY: slurm_conf is set up before any plugin runs and changes only
    // on reconfigure, under the config lock our guards exclude.
    u32::from(unsafe { std::ptr::addr_of!(sys::slurm_conf.prolog_flags).read() })
}

fn is_extern(step: *const sys::step_record_t) -> bool {
    // SAFETY: the caller passes a live step record.
    unsafe { (*step).step_id.step_id == sys::SLURM_EXTERN_CONT }
}

impl<L: WritesJobs + WritesNodes> LockGuard<L> {
    /// End the steps of an expand helper before its merge (with Contain,
    /// its extern step), as slurmctld ends a job's steps when the job is
    /// killed: each is closed in accounting and its record removed.
    ///
    /// # Safety
    /// `helper` is a live job record under our write locks.
    pub(crate) unsafe fn end_helper_steps(&mut self, helper: *mut sys::job_record_t) {
        // SAFETY: by the caller's contract; delete_step_records needs the
        // job write lock we hold.
        unsafe {
            if !(*helper).step_list.is_null() && sys::list_count((*helper).step_list) > 0 {
                (self.ctld.delete_step_records)(helper);
            }
        }
    }

    /// After a merge: run the job's prolog on the nodes it grew onto, as
    /// slurmctld runs it at a start (launch_prolog: the nodes the job was
    /// on already ran it for this job, so their slurmd only answers that
    /// it is done), and with Contain give the job one extern step over all
    /// its nodes in place of the one over the nodes it started on.
    ///
    /// # Safety
    /// `job_ptr` is a live, running job record under our write locks.
    pub(crate) unsafe fn prolog_on_added_nodes(&mut self, job_ptr: *mut sys::job_record_t) {
        if prolog_flags() & sys::PROLOG_FLAG_ALLOC == 0 {
            return;
        }
        // SAFETY: by the caller's contract; launch_prolog needs the job
        // write lock we hold and makes the new extern step (appended to
        // step_list, so the last extern step is the new one); each record
        // taken off the list with list_remove is then ours to free, and
        // free_step_record is how slurmctld frees one.
        unsafe {
            (self.ctld.launch_prolog)(job_ptr);
            let list = (*job_ptr).step_list;
            if prolog_flags() & sys::PROLOG_FLAG_CONTAIN == 0 || list.is_null() {
                return;
            }
            let mut newest: *mut sys::step_record_t = std::ptr::null_mut();
            let it = sys::list_iterator_create(list);
            loop {
                let step = sys::list_next(it).cast::<sys::step_record_t>();
                if step.is_null() {
                    break;
                }
                if is_extern(step) {
                    newest = step;
                }
            }
            sys::list_iterator_destroy(it);
            let it = sys::list_iterator_create(list);
            loop {
                let step = sys::list_next(it).cast::<sys::step_record_t>();
                if step.is_null() {
                    break;
                }
                if is_extern(step) && step != newest {
                    let removed = sys::list_remove(it);
                    (self.ctld.free_step_record)(removed);
                }
            }
            sys::list_iterator_destroy(it);
        }
    }
}
