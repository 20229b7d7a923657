//! What a task plugin's hook sees of its step: the step's id, its
//! environment, its tasks' pids and its node, copied out of slurmstepd's
//! `stepd_step_rec_t` for the length of the call.

use std::fmt;
use std::marker::PhantomData;

use slurm_sys as sys;

use crate::common::cstr::cstr_to_string;

/// A step of a job, as Slurm names it (`slurm_step_id_t`): the job, the
/// step number (or one of the special steps), and the component of a
/// heterogeneous step (`NO_VAL` for none).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct StepId {
    pub job: u32,
    pub step: u32,
    pub het_comp: u32,
}

impl StepId {
    /// The step that holds a job's processes outside its steps
    /// (PrologFlags=Contain): runs no task of the job's own.
    pub const EXTERN: u32 = sys::SLURM_EXTERN_CONT;
    /// The batch script's step.
    pub const BATCH: u32 = sys::SLURM_BATCH_SCRIPT;
    /// salloc's interactive step.
    pub const INTERACTIVE: u32 = sys::SLURM_INTERACTIVE_STEP;

    /// Step `step` of job `job`, not part of a heterogeneous step.
    pub const fn new(job: u32, step: u32) -> StepId {
        StepId { job, step, het_comp: sys::NO_VAL }
    }

    pub fn is_extern(&self) -> bool {
        self.step == Self::EXTERN
    }

    pub(crate) fn from_raw(id: &sys::slurm_step_id_t) -> StepId {
        StepId { job: id.job_id, step: id.step_id, het_comp: id.step_het_comp }
    }

    pub(crate) fn to_raw(self) -> sys::slurm_step_id_t {
        #[cfg(not(slurm_since_24_11))]
        let id = sys::slurm_step_id_t { job_id: self.job, step_id: self.step, step_het_comp: self.het_comp };
        // 24.11 added a sluid (a cluster-unique id), which 0 leaves unset.
        #[cfg(slurm_since_24_11)]
        let id = sys::slurm_step_id_t { job_id: self.job, step_id: self.step, step_het_comp: self.het_comp, sluid: 0 };
        id
    }
}

/// As slurmstepd's own log names a step (`%ps`): `StepId=17.0`,
/// `StepId=17.batch`, `StepId=17.extern`, `StepId=17.0+1`.
impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StepId={}.", self.job)?;
        match self.step {
            Self::EXTERN => write!(f, "extern")?,
            Self::BATCH => write!(f, "batch")?,
            Self::INTERACTIVE => write!(f, "interactive")?,
            s if s == sys::SLURM_PENDING_STEP => write!(f, "TBD")?,
            s => write!(f, "{s}")?,
        }
        if self.het_comp != sys::NO_VAL {
            write!(f, "+{}", self.het_comp)?;
        }
        Ok(())
    }
}

/// One task of a step on this node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TaskInfo {
    /// Its rank among the step's tasks on this node.
    pub local_id: i32,
    /// Its pid (0 before it is forked).
    pub pid: i32,
}

/// A step record slurmstepd passed to a hook, read-only, for that call.
///
/// slurmstepd's job-manager thread calls the task hooks with its one step
/// record, which lives as long as the stepd; the fields read here (id,
/// environment, node name, the task array and the tasks' pids) are set
/// before the first hook and are written afterwards only by that same
/// thread (a task's pid, when it is forked, before `set_affinity`).
pub struct StepView<'a> {
    raw: *const sys::stepd_step_rec_t,
    _call: PhantomData<&'a sys::stepd_step_rec_t>,
}

impl StepView<'_> {
    /// # Safety
    /// `p` must be NULL or the step record slurmstepd passed to the hook
    /// being run, and the view must not outlive that call.
    pub(crate) unsafe fn from_ptr<'a>(p: *const sys::stepd_step_rec_t) -> Option<StepView<'a>> {
        (!p.is_null()).then_some(StepView { raw: p, _call: PhantomData })
    }

    fn rec(&self) -> &sys::stepd_step_rec_t {
        // SAFETY: non-null and alive for the call (constructor's contract).
        unsafe { &*self.raw }
    }

    pub fn id(&self) -> StepId {
        StepId::from_raw(&self.rec().step_id)
    }

    pub fn job_id(&self) -> u32 {
        self.rec().step_id.job_id
    }

    /// The step's environment as `NAME=value` entries (empty for a step
    /// without one, such as the extern step).
    pub fn env(&self) -> Vec<String> {
        let mut out = Vec::new();
        let env = self.rec().env;
        if env.is_null() {
            return out;
        }
        for i in 0.. {
            // SAFETY: env is a NULL-terminated array of NUL-terminated
            // strings slurmstepd owns (env_array), alive for the call; we
            // stop at the NULL.
            let entry = unsafe { *env.add(i) };
            if entry.is_null() {
                break;
            }
            // SAFETY: a non-null entry of that array.
            out.extend(unsafe { cstr_to_string(entry) });
        }
        out
    }

    /// The name of the node the step runs on.
    pub fn node_name(&self) -> Option<String> {
        // SAFETY: NULL or a NUL-terminated string the record owns.
        unsafe { cstr_to_string(self.rec().node_name) }
    }

    /// The step's tasks on this node, in order of their local id.
    pub fn tasks(&self) -> Vec<TaskInfo> {
        let rec = self.rec();
        if rec.task.is_null() {
            return Vec::new();
        }
        (0..rec.node_tasks as usize)
            .filter_map(|i| {
                // SAFETY: `task` holds node_tasks pointers, each NULL or
                // a task record the step owns, alive for the call.
                let t = unsafe { (*rec.task.add(i)).as_ref() }?;
                Some(TaskInfo { local_id: t.id, pid: t.pid })
            })
            .collect()
    }

    /// The pid of the step's task `node_tid` on this node, once forked.
    pub fn task_pid(&self, node_tid: u32) -> Option<i32> {
        let rec = self.rec();
        if node_tid >= rec.node_tasks || rec.task.is_null() {
            return None;
        }
        // SAFETY: node_tid < node_tasks, the length of `task`; each entry
        // NULL or a live task record.
        let t = unsafe { (*rec.task.add(node_tid as usize)).as_ref() }?;
        (t.pid > 0).then_some(t.pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    #[test]
    fn steps_are_named_as_slurmstepd_names_them() {
        assert_eq!(StepId::new(17, 0).to_string(), "StepId=17.0");
        assert_eq!(StepId::new(17, StepId::BATCH).to_string(), "StepId=17.batch");
        assert_eq!(StepId::new(17, StepId::EXTERN).to_string(), "StepId=17.extern");
        assert_eq!(StepId { job: 5, step: 2, het_comp: 1 }.to_string(), "StepId=5.2+1");
        assert!(StepId::new(3, StepId::EXTERN).is_extern());
        assert!(!StepId::new(3, StepId::BATCH).is_extern());
        let id = StepId { job: 9, step: 4, het_comp: 1 };
        assert_eq!(StepId::from_raw(&id.to_raw()), id);
    }

    #[test]
    fn a_view_reads_the_record_it_is_given() {
        let entries = [CString::new("PATH=/bin").unwrap(), CString::new("SPANK_MALLEABLE_CORES=yes").unwrap()];
        let mut env: Vec<*mut libc::c_char> = entries.iter().map(|c| c.as_ptr().cast_mut()).collect();
        env.push(std::ptr::null_mut());
        let node = CString::new("n3").unwrap();
        // Task 1 is not forked yet: pid 0.
        let mut tasks: Vec<sys::stepd_step_task_info_t> = [(0, 4242), (1, 0)]
            .into_iter()
            .map(|(id, pid)| sys::stepd_step_task_info_t { id, pid, ..Default::default() })
            .collect();
        let mut task_ptrs: Vec<*mut sys::stepd_step_task_info_t> = tasks.iter_mut().map(|t| t as *mut _).collect();
        let rec = sys::stepd_step_rec_t {
            step_id: StepId::new(17, 0).to_raw(),
            env: env.as_mut_ptr(),
            node_name: node.as_ptr().cast_mut(),
            node_tasks: 2,
            task: task_ptrs.as_mut_ptr(),
            ..Default::default()
        };
        // SAFETY: a record built here, alive for the view's use below.
        let view = unsafe { StepView::from_ptr(&rec) }.unwrap();
        assert_eq!(view.id(), StepId::new(17, 0));
        assert_eq!(view.job_id(), 17);
        assert_eq!(view.env(), vec!["PATH=/bin".to_string(), "SPANK_MALLEABLE_CORES=yes".to_string()]);
        assert_eq!(view.node_name().as_deref(), Some("n3"));
        assert_eq!(view.tasks(), vec![TaskInfo { local_id: 0, pid: 4242 }, TaskInfo { local_id: 1, pid: 0 }]);
        assert_eq!(view.task_pid(0), Some(4242));
        assert_eq!(view.task_pid(1), None, "not forked yet");
        assert_eq!(view.task_pid(2), None, "no such task");

        let empty: sys::stepd_step_rec_t = Default::default();
        // SAFETY: as above.
        let view = unsafe { StepView::from_ptr(&empty) }.unwrap();
        assert!(view.env().is_empty() && view.tasks().is_empty() && view.node_name().is_none());
        // SAFETY: NULL is allowed.
        assert!(unsafe { StepView::from_ptr(std::ptr::null()) }.is_none());
    }
}
