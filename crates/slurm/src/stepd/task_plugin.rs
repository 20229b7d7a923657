//! What a task plugin is to Slurm: the plugin header, `init`, `fini` and
//! the twelve `task_p_*` hooks of 22.05 (`syms[]` in
//! src/slurmd/common/task_plugin.c), 24.11's `pre_launch_priv`, which
//! replaced the three affinity hooks (24.11 no longer calls those three
//! nor the suspend and resume ones), and 26.05's `update_mem_limit`; each
//! release calls only its own. A plugin crate implements
//! [`TaskPlugin`] (every hook has a do-nothing default) and writes one
//! `task_plugin!` line; the macro emits every symbol, each entry point
//! behind the panic guard.
//!
//! Where each hook runs (slurmd loads the plugin too):
//! - slurmd: `slurmd_batch_request`, `slurmd_launch_request`,
//!   `slurmd_suspend_job`, `slurmd_resume_job`;
//! - slurmstepd's job-manager thread, as root: `pre_setuid` (before the
//!   tasks are forked), `pre_set_affinity`, `set_affinity`,
//!   `post_set_affinity` (after each task is forked, before it execs),
//!   `post_term` (each task ended), `post_step` (all ended);
//! - the forked task itself, before exec: `pre_launch`;
//! - slurmstepd's message thread: `add_pid` (a process adopted into the
//!   extern step), `update_mem_limit` (26.05).
//!
//! Slurm calls a plugin's hooks one at a time (under its
//! g_task_context_lock), in TaskPlugin's order; one failing stops the
//! later plugins' and, for the stepd hooks, fails the step's launch.

use std::ffi::c_int;

use once_cell::sync::OnceCell;
use slurm_sys as sys;

use crate::common::cstr::c_text;
use crate::common::ffi_guard::guard;
use crate::common::refusal::Refusal;
use crate::stepd::step::{StepId, StepView, TaskInfo};
use crate::{SLURM_ERROR, SLURM_SUCCESS};

/// A `task/...` plugin. An `Err` from a hook is logged and returned to
/// Slurm as SLURM_ERROR, which fails what the hook was for (for the stepd
/// hooks, the step's launch): a hook that should only warn logs and
/// returns `Ok`.
pub trait TaskPlugin: Send + Sync + Sized + 'static {
    /// Load (in slurmd and in every slurmstepd). An error refuses it.
    fn init() -> Result<Self, String>;
    /// Unload.
    fn fini(&self) {}

    /// slurmd: a batch job's launch request arrived.
    fn slurmd_batch_request(&self, _job_id: u32) -> Result<(), String> {
        Ok(())
    }
    /// slurmd: a step's launch request arrived for this node (the
    /// `node_id`-th of the step). An error refuses the launch, with the
    /// text sent back to srun.
    fn slurmd_launch_request(&self, _step: StepId, _node_id: u32) -> Result<(), String> {
        Ok(())
    }
    /// slurmd: the job is being suspended.
    fn slurmd_suspend_job(&self, _job_id: u32) -> Result<(), String> {
        Ok(())
    }
    /// slurmd: the job is being resumed.
    fn slurmd_resume_job(&self, _job_id: u32) -> Result<(), String> {
        Ok(())
    }
    /// slurmstepd, as root, before the step's tasks are forked.
    fn pre_setuid(&self, _step: &StepView<'_>) -> Result<(), String> {
        Ok(())
    }
    /// slurmstepd, as root, task `node_tid` forked and not yet exec'd.
    fn pre_set_affinity(&self, _step: &StepView<'_>, _node_tid: u32) -> Result<(), String> {
        Ok(())
    }
    /// As `pre_set_affinity`, after it: where affinity is set.
    fn set_affinity(&self, _step: &StepView<'_>, _node_tid: u32) -> Result<(), String> {
        Ok(())
    }
    /// As `set_affinity`, after it.
    fn post_set_affinity(&self, _step: &StepView<'_>, _node_tid: u32) -> Result<(), String> {
        Ok(())
    }
    /// In the forked task, as the user, just before exec. The task is a
    /// fork of a threaded process: take no lock another thread may hold.
    fn pre_launch(&self, _step: &StepView<'_>) -> Result<(), String> {
        Ok(())
    }
    /// slurmstepd: one of the step's tasks has ended.
    fn post_term(&self, _step: &StepView<'_>, _task: TaskInfo) -> Result<(), String> {
        Ok(())
    }
    /// slurmstepd, as root: all the step's tasks have ended.
    fn post_step(&self, _step: &StepView<'_>) -> Result<(), String> {
        Ok(())
    }
    /// slurmstepd's message thread: `pid` was adopted into the extern step.
    /// slurmstepd's message thread, 26.05: a running job's memory limits
    /// changed (Dynamic Memory Resizing: `scontrol update` of its memory),
    /// to `job_mem` for the job and `step_mem` for the step, in MB.
    fn update_mem_limit(&self, _step: &StepView<'_>, _job_mem: u64, _step_mem: u64) -> Result<(), String> {
        Ok(())
    }
    fn add_pid(&self, _pid: i32) -> Result<(), String> {
        Ok(())
    }
}

/// The loaded plugin, kept by the macro's static. Set once by `init` and
/// never taken back, so a hook reaches it without a lock (`pre_launch`
/// runs in a forked child, where a lock held by another thread of the
/// stepd at the fork would never be released).
pub struct Instance<P>(OnceCell<P>);

/// The types the exported functions receive.
pub type RawStep = sys::stepd_step_rec_t;
pub type RawTask = sys::stepd_step_task_info_t;
pub type RawBatchRequest = sys::batch_job_launch_msg_t;
pub type RawLaunchRequest = sys::launch_tasks_request_msg_t;
pub type Pid = libc::pid_t;

/// A hook's result as Slurm wants it, the error logged first.
fn code(hook: &str, what: &dyn std::fmt::Display, r: Result<(), String>) -> c_int {
    match r {
        Ok(()) => SLURM_SUCCESS,
        Err(e) => {
            log::error!("{hook} for {what}: {e}");
            SLURM_ERROR
        }
    }
}

impl<P: TaskPlugin> Instance<P> {
    pub const fn new() -> Self {
        Instance(OnceCell::new())
    }

    pub fn init(&self, plugin_type: &'static str) -> c_int {
        crate::common::logger::init(plugin_type);
        guard("init", SLURM_ERROR, || {
            if self.0.get().is_some() {
                return SLURM_SUCCESS;
            }
            match P::init() {
                Ok(p) => {
                    // Slurm loads a plugin once per process and calls init
                    // once; a lost race would leave the first one in place.
                    let _ = self.0.set(p);
                    SLURM_SUCCESS
                }
                Err(e) => {
                    log::error!("{}", Refusal::Load(e.to_string()));
                    SLURM_ERROR
                }
            }
        })
    }

    pub fn fini(&self) -> c_int {
        guard("fini", SLURM_ERROR, || {
            if let Some(p) = self.0.get() {
                p.fini();
            }
            SLURM_SUCCESS
        })
    }

    /// Run `f` on the plugin, inside the panic guard.
    fn with(&self, hook: &'static str, f: impl FnOnce(&P) -> c_int) -> c_int {
        guard(hook, SLURM_ERROR, || match self.0.get() {
            Some(p) => f(p),
            None => {
                log::error!("{hook} called before init");
                SLURM_ERROR
            }
        })
    }

    /// A hook on a step record.
    ///
    /// # Safety
    /// `step` is NULL or the step record slurmstepd passed to this hook.
    unsafe fn on_step(
        &self,
        hook: &'static str,
        step: *mut RawStep,
        f: impl FnOnce(&P, &StepView<'_>) -> Result<(), String>,
    ) -> c_int {
        self.with(hook, |p| {
            // SAFETY: the caller's contract; the view lives for this call.
            match unsafe { StepView::from_ptr(step) } {
                Some(view) => code(hook, &view.id(), f(p, &view)),
                None => {
                    log::error!("{hook} without a step record");
                    SLURM_ERROR
                }
            }
        })
    }

    /// # Safety
    /// `req` is NULL or the request slurmd passed to this hook.
    pub unsafe fn slurmd_batch_request(&self, req: *mut RawBatchRequest) -> c_int {
        self.with("task_p_slurmd_batch_request", |p| {
            // SAFETY: NULL or slurmd's request, alive for the call.
            let job = unsafe { req.as_ref() }.map_or(sys::NO_VAL, batch_job_id);
            code("task_p_slurmd_batch_request", &format!("JobId={job}"), p.slurmd_batch_request(job))
        })
    }

    /// # Safety
    /// `req` is NULL or the request slurmd passed to this hook; `err_msg`
    /// NULL or its `char **` for a message back to srun (NULL or xmalloc'd).
    pub unsafe fn slurmd_launch_request(
        &self,
        req: *mut RawLaunchRequest,
        node_id: u32,
        err_msg: *mut *mut libc::c_char,
    ) -> c_int {
        self.with("task_p_slurmd_launch_request", |p| {
            // SAFETY: NULL or slurmd's request, alive for the call.
            let Some(req) = (unsafe { req.as_ref() }) else {
                return SLURM_SUCCESS;
            };
            let step = StepId::from_raw(&req.step_id);
            match p.slurmd_launch_request(step, node_id) {
                Ok(()) => SLURM_SUCCESS,
                Err(e) => {
                    log::error!("task_p_slurmd_launch_request for {step}: {e}");
                    // SAFETY: err_msg is slurmd's out parameter; a message
                    // already there (another plugin's) is kept; ours is
                    // xstrdup'd, as slurmd frees it with xfree.
                    unsafe {
                        if !err_msg.is_null() && (*err_msg).is_null() {
                            *err_msg = sys::xstrdup(c_text(&e).as_ptr());
                        }
                    }
                    SLURM_ERROR
                }
            }
        })
    }

    pub fn slurmd_suspend_job(&self, job_id: u32) -> c_int {
        self.with("task_p_slurmd_suspend_job", |p| {
            code("task_p_slurmd_suspend_job", &format!("JobId={job_id}"), p.slurmd_suspend_job(job_id))
        })
    }

    pub fn slurmd_resume_job(&self, job_id: u32) -> c_int {
        self.with("task_p_slurmd_resume_job", |p| {
            code("task_p_slurmd_resume_job", &format!("JobId={job_id}"), p.slurmd_resume_job(job_id))
        })
    }

    /// # Safety
    /// As for every step hook: `step` is slurmstepd's record for the call.
    pub unsafe fn pre_setuid(&self, step: *mut RawStep) -> c_int {
        // SAFETY: passed on under the same contract.
        unsafe { self.on_step("task_p_pre_setuid", step, |p, s| p.pre_setuid(s)) }
    }

    /// # Safety
    /// As for `pre_setuid`.
    pub unsafe fn pre_set_affinity(&self, step: *mut RawStep, node_tid: u32) -> c_int {
        // SAFETY: passed on under the same contract.
        unsafe { self.on_step("task_p_pre_set_affinity", step, |p, s| p.pre_set_affinity(s, node_tid)) }
    }

    /// # Safety
    /// As for `pre_setuid`.
    pub unsafe fn set_affinity(&self, step: *mut RawStep, node_tid: u32) -> c_int {
        // SAFETY: passed on under the same contract.
        unsafe { self.on_step("task_p_set_affinity", step, |p, s| p.set_affinity(s, node_tid)) }
    }

    /// # Safety
    /// As for `pre_setuid`.
    pub unsafe fn post_set_affinity(&self, step: *mut RawStep, node_tid: u32) -> c_int {
        // SAFETY: passed on under the same contract.
        unsafe { self.on_step("task_p_post_set_affinity", step, |p, s| p.post_set_affinity(s, node_tid)) }
    }

    /// 24.11's `task_p_pre_launch_priv`: the three affinity hooks in
    /// 22.05's order, each stopping the rest on failure as slurmstepd did.
    ///
    /// # Safety
    /// As [`Self::set_affinity`].
    pub unsafe fn pre_launch_priv(&self, step: *mut RawStep, node_tid: u32) -> c_int {
        // SAFETY: slurmstepd's own arguments, passed on.
        unsafe {
            for hook in [Self::pre_set_affinity, Self::set_affinity, Self::post_set_affinity] {
                let rc = hook(self, step, node_tid);
                if rc != SLURM_SUCCESS {
                    return rc;
                }
            }
        }
        SLURM_SUCCESS
    }

    /// # Safety
    /// As for `pre_setuid` (in the forked task, the stepd's copy).
    pub unsafe fn pre_launch(&self, step: *mut RawStep) -> c_int {
        // SAFETY: passed on under the same contract.
        unsafe { self.on_step("task_p_pre_launch", step, |p, s| p.pre_launch(s)) }
    }

    /// # Safety
    /// As for `pre_setuid`; `task` is NULL or one of the step's task records.
    pub unsafe fn post_term(&self, step: *mut RawStep, task: *mut RawTask) -> c_int {
        // SAFETY: NULL or a task record of the step, alive for the call.
        let task = unsafe { task.as_ref() }.map(|t| TaskInfo { local_id: t.id, pid: t.pid });
        // SAFETY: passed on under the same contract.
        unsafe {
            self.on_step("task_p_post_term", step, |p, s| match task {
                Some(t) => p.post_term(s, t),
                None => Ok(()),
            })
        }
    }

    /// # Safety
    /// As for `pre_setuid`.
    pub unsafe fn post_step(&self, step: *mut RawStep) -> c_int {
        // SAFETY: passed on under the same contract.
        unsafe { self.on_step("task_p_post_step", step, |p, s| p.post_step(s)) }
    }

    /// # Safety
    /// As for `pre_setuid`.
    pub unsafe fn update_mem_limit(&self, step: *mut RawStep, job_mem: u64, step_mem: u64) -> c_int {
        // SAFETY: passed on under the same contract.
        unsafe { self.on_step("task_p_update_mem_limit", step, |p, s| p.update_mem_limit(s, job_mem, step_mem)) }
    }

    pub fn add_pid(&self, pid: libc::pid_t) -> c_int {
        self.with("task_p_add_pid", |p| code("task_p_add_pid", &format!("pid {pid}"), p.add_pid(pid)))
    }
}

impl<P: TaskPlugin> Default for Instance<P> {
    fn default() -> Self {
        Self::new()
    }
}

/// Emit the symbols of a `task/...` plugin for type `$plugin`: the plugin
/// header, `init`, `fini` and every `task_p_*` hook of Slurm 22.05 and 24.11.
///
/// ```ignore
/// slurm::task_plugin!(Drom, name: "task DROM", type: "task/drom");
/// ```
#[macro_export]
macro_rules! task_plugin {
    ($plugin:ty, name: $name:literal, type: $ptype:literal) => {
        const _: () = {
    $crate::plugin_header!(name: $name, type: $ptype);

            static INSTANCE: $crate::stepd::task_plugin::Instance<$plugin> =
                $crate::stepd::task_plugin::Instance::new();

            #[no_mangle]
            pub extern "C" fn init() -> ::std::os::raw::c_int {
                INSTANCE.init($ptype)
            }

            #[no_mangle]
            pub extern "C" fn fini() -> ::std::os::raw::c_int {
                INSTANCE.fini()
            }

            /// # Safety
            /// Called by slurmd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_slurmd_batch_request(
                req: *mut $crate::stepd::task_plugin::RawBatchRequest,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmd's own argument, passed on.
                unsafe { INSTANCE.slurmd_batch_request(req) }
            }

            /// # Safety
            /// Called by slurmd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_slurmd_launch_request(
                req: *mut $crate::stepd::task_plugin::RawLaunchRequest,
                node_id: u32,
                err_msg: *mut *mut ::std::os::raw::c_char,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmd's own arguments, passed on.
                unsafe { INSTANCE.slurmd_launch_request(req, node_id, err_msg) }
            }

            #[no_mangle]
            pub extern "C" fn task_p_slurmd_suspend_job(job_id: u32) -> ::std::os::raw::c_int {
                INSTANCE.slurmd_suspend_job(job_id)
            }

            #[no_mangle]
            pub extern "C" fn task_p_slurmd_resume_job(job_id: u32) -> ::std::os::raw::c_int {
                INSTANCE.slurmd_resume_job(job_id)
            }

            /// # Safety
            /// Called by slurmstepd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_pre_setuid(
                step: *mut $crate::stepd::task_plugin::RawStep,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own argument, passed on.
                unsafe { INSTANCE.pre_setuid(step) }
            }

            /// # Safety
            /// Called by slurmstepd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_pre_set_affinity(
                step: *mut $crate::stepd::task_plugin::RawStep,
                node_tid: u32,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own arguments, passed on.
                unsafe { INSTANCE.pre_set_affinity(step, node_tid) }
            }

            /// # Safety
            /// Called by slurmstepd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_set_affinity(
                step: *mut $crate::stepd::task_plugin::RawStep,
                node_tid: u32,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own arguments, passed on.
                unsafe { INSTANCE.set_affinity(step, node_tid) }
            }

            /// # Safety
            /// Called by slurmstepd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_post_set_affinity(
                step: *mut $crate::stepd::task_plugin::RawStep,
                node_tid: u32,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own arguments, passed on.
                unsafe { INSTANCE.post_set_affinity(step, node_tid) }
            }

            /// 24.11's one hook where 22.05 had the three affinity hooks,
            /// called at the same point (after proctrack and jobacct took the
            /// task); 22.05 never calls it, 24.11 none of those three.
            ///
            /// # Safety
            /// Called by slurmstepd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_pre_launch_priv(
                step: *mut $crate::stepd::task_plugin::RawStep,
                node_tid: u32,
                _global_tid: u32,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own arguments, passed on.
                unsafe { INSTANCE.pre_launch_priv(step, node_tid) }
            }

            /// # Safety
            /// Called by slurmstepd's forked task only, as the interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_pre_launch(
                step: *mut $crate::stepd::task_plugin::RawStep,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own argument, passed on.
                unsafe { INSTANCE.pre_launch(step) }
            }

            /// # Safety
            /// Called by slurmstepd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_post_term(
                step: *mut $crate::stepd::task_plugin::RawStep,
                task: *mut $crate::stepd::task_plugin::RawTask,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own arguments, passed on.
                unsafe { INSTANCE.post_term(step, task) }
            }

            /// # Safety
            /// Called by slurmstepd only, as its task plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_post_step(
                step: *mut $crate::stepd::task_plugin::RawStep,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own argument, passed on.
                unsafe { INSTANCE.post_step(step) }
            }

            /// # Safety
            /// Called by slurmstepd only (26.05), as its task plugin
            /// interface says.
            #[no_mangle]
            pub unsafe extern "C" fn task_p_update_mem_limit(
                step: *mut $crate::stepd::task_plugin::RawStep,
                new_job_mem: u64,
                new_step_mem: u64,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmstepd's own arguments, passed on.
                unsafe { INSTANCE.update_mem_limit(step, new_job_mem, new_step_mem) }
            }

            #[no_mangle]
            pub extern "C" fn task_p_add_pid(pid: $crate::stepd::task_plugin::Pid) -> ::std::os::raw::c_int {
                INSTANCE.add_pid(pid)
            }
        };
    };
}

/// A batch launch's job id: its own field until 25.11, which takes it from
/// the credential into its step id.
fn batch_job_id(r: &RawBatchRequest) -> u32 {
    #[cfg(slurm_since_25_11)]
    return r.step_id.job_id;
    #[cfg(not(slurm_since_25_11))]
    return r.job_id;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Changes three hooks: set_affinity fails on task 1 and panics on
    /// task 2; the launch request is refused on the step's node 3.
    struct Toy;

    impl TaskPlugin for Toy {
        fn init() -> Result<Self, String> {
            Ok(Toy)
        }
        fn set_affinity(&self, _step: &StepView<'_>, node_tid: u32) -> Result<(), String> {
            match node_tid {
                1 => Err("no CPUs for task 1".into()),
                2 => panic!("a bug in the plugin"),
                _ => Ok(()),
            }
        }
        fn slurmd_launch_request(&self, _step: StepId, node_id: u32) -> Result<(), String> {
            if node_id == 3 {
                Err("not on this node".into())
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn hooks_default_to_success_and_errors_and_panics_become_slurm_error() {
        let plugin: Instance<Toy> = Instance::new();
        assert_eq!(plugin.slurmd_suspend_job(5), SLURM_ERROR, "no hook runs before init");
        assert_eq!(plugin.init("task/toy"), SLURM_SUCCESS);
        let mut rec = RawStep { step_id: StepId::new(5, 0).to_raw(), ..Default::default() };
        let step: *mut RawStep = &mut rec;
        // SAFETY: a record built here, alive across the calls.
        unsafe {
            assert_eq!(plugin.pre_setuid(step), SLURM_SUCCESS);
            assert_eq!(plugin.post_step(step), SLURM_SUCCESS);
            assert_eq!(plugin.post_term(step, std::ptr::null_mut()), SLURM_SUCCESS);
            assert_eq!(plugin.set_affinity(step, 0), SLURM_SUCCESS);
            assert_eq!(plugin.set_affinity(step, 1), SLURM_ERROR);
            // 24.11's hook runs the same three, and fails as set_affinity does.
            assert_eq!(plugin.pre_launch_priv(step, 0), SLURM_SUCCESS);
            assert_eq!(plugin.pre_launch_priv(step, 1), SLURM_ERROR);
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(|_| {}));
            let rc = plugin.set_affinity(step, 2);
            std::panic::set_hook(prev);
            assert_eq!(rc, SLURM_ERROR, "a panic must not cross into C");
            assert_eq!(plugin.pre_setuid(std::ptr::null_mut()), SLURM_ERROR);
        }
        assert_eq!(plugin.add_pid(42), SLURM_SUCCESS);
        assert_eq!(plugin.slurmd_resume_job(5), SLURM_SUCCESS);
        assert_eq!(plugin.fini(), SLURM_SUCCESS);
    }

    #[test]
    fn a_refused_launch_says_why_to_srun() {
        let plugin: Instance<Toy> = Instance::new();
        assert_eq!(plugin.init("task/toy"), SLURM_SUCCESS);
        let mut req = RawLaunchRequest { step_id: StepId::new(8, 1).to_raw(), ..Default::default() };
        let mut msg: *mut libc::c_char = std::ptr::null_mut();
        // SAFETY: a request built here and an out parameter we free below
        // with xfree, as slurmd does.
        unsafe {
            assert_eq!(plugin.slurmd_launch_request(&mut req, 0, &mut msg), SLURM_SUCCESS);
            assert!(msg.is_null());
            assert_eq!(plugin.slurmd_launch_request(&mut req, 3, &mut msg), SLURM_ERROR);
            assert_eq!(crate::common::cstr::cstr_to_string(msg).as_deref(), Some("not on this node"));
            sys::slurm_xfree(std::ptr::addr_of_mut!(msg).cast());
        }
    }
}
