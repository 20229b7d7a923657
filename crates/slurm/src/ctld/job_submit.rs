//! job_submit plugins: slurmctld asks each one about every job submitted
//! (`job_submit`) and every update of a job (`job_modify`), and refuses
//! what one refuses. A plugin crate implements [`JobSubmitPlugin`] and
//! writes one `job_submit_plugin!` line.
//!
//! Locks: `job_submit` runs with the config, job, node and partition read
//! locks held (job_submit.c asserts them), `job_modify` inside the update
//! with the job write lock (slurmctld's update RPC takes it, in every
//! release); both may read partitions. Neither may take a lock itself.
//!
//! Who asks: slurmctld checks that the update's sender owns the job (or
//! is an operator, or coordinates its account) after `job_modify` in
//! 22.05 and before it since 24.11; so a plugin that acts on an update
//! itself checks the sender first ([`UpdatedJob::may_be_acted_on_by`]).

use std::marker::PhantomData;

use parking_lot::Mutex;
use slurm_sys as sys;

use crate::common::cstr::{c_text, cstr_to_string};
use crate::common::ffi_guard::guard;
use crate::common::refusal::Refusal;
use crate::ctld::job::JobView;
use crate::ctld::symbols::Slurmctld;
use crate::{SLURM_ERROR, SLURM_SUCCESS};

/// A job as submitted, or an update of one: what its request says.
pub struct JobDesc<'a> {
    raw: *mut sys::job_desc_msg_t,
    _call: PhantomData<&'a mut sys::job_desc_msg_t>,
}

fn given(v: u32) -> Option<u32> {
    (v != sys::NO_VAL).then_some(v)
}

impl JobDesc<'_> {
    fn rec(&self) -> &sys::job_desc_msg_t {
        // SAFETY: the request slurmctld passed for this call (constructor).
        unsafe { &*self.raw }
    }

    /// The SPANK environment (NAME=value) the client set.
    pub fn spank_job_env(&self) -> Vec<String> {
        let r = self.rec();
        if r.spank_job_env.is_null() {
            return Vec::new();
        }
        (0..r.spank_job_env_size as usize)
            // SAFETY: spank_job_env has spank_job_env_size entries, each
            // NULL or a NUL-terminated string owned by the request.
            .filter_map(|i| unsafe { cstr_to_string(*r.spank_job_env.add(i)) })
            .collect()
    }

    /// Set `name=value` in the job's SPANK environment (replacing what the
    /// client set under that name), where slurmctld keeps it with the job
    /// across restarts and the plugin reads it back ([`JobView::spank_job_env_with`]).
    pub fn set_spank_env(&mut self, name: &str, value: &str) -> Result<(), String> {
        let (n, v) = (c_text(name), c_text(value));
        // SAFETY: the request is ours to change for this call; its
        // spank_job_env is NULL or an xmalloc'd NULL-terminated array of
        // xmalloc'd strings (what slurmctld frees with the request or moves
        // into the job), which env_array_overwrite grows with xrealloc and
        // fills with an xstrdup'd entry; envcount counts its entries.
        let ok = unsafe {
            let r = &mut *self.raw;
            let ok = sys::env_array_overwrite(&mut r.spank_job_env, n.as_ptr(), v.as_ptr()) == 1;
            r.spank_job_env_size = u32::try_from(sys::envcount(r.spank_job_env)).unwrap_or(0);
            ok
        };
        if ok {
            Ok(())
        } else {
            Err(format!("could not set {name}={value} in the job's SPANK environment"))
        }
    }

    /// `--nodes` (its lower bound), when the request gives one.
    pub fn min_nodes(&self) -> Option<u32> {
        given(self.rec().min_nodes)
    }

    /// The upper bound of `--nodes=MIN-MAX`, when the request gives one.
    pub fn max_nodes(&self) -> Option<u32> {
        given(self.rec().max_nodes)
    }

    /// Whether it asks for contiguous nodes (`--contiguous`, or
    /// `Contiguous=1` in an update).
    pub fn contiguous(&self) -> bool {
        self.rec().contiguous == 1
    }

    /// Ask for exactly `n` nodes.
    pub fn set_nodes(&mut self, n: u32) {
        // SAFETY: the request is ours to change for this call; these are
        // plain integers.
        unsafe {
            (*self.raw).min_nodes = n;
            (*self.raw).max_nodes = n;
        }
    }

    /// Whether it asks for its nodes to itself (`--exclusive`, or
    /// `--exclusive=user|mcs`).
    pub fn exclusive(&self) -> bool {
        // NO_VAL16 (0xfffe, a macro bindgen does not carry): not given.
        let shared = self.rec().shared;
        shared != u16::MAX - 1 && shared != sys::JOB_SHARED_OK as u16
    }

    /// Let its cores be shared with other such jobs (`--oversubscribe`),
    /// as far as its partition's OverSubscribe allows.
    pub fn set_oversubscribe(&mut self) {
        // SAFETY: the request is ours to change for this call; a plain integer.
        unsafe { (*self.raw).shared = sys::JOB_SHARED_OK as u16 }
    }

    /// The partition asked for, if any.
    pub fn partition(&self) -> Option<String> {
        // SAFETY: NULL or a NUL-terminated string owned by the request.
        unsafe { cstr_to_string(self.rec().partition) }
    }

    /// The comment the request sets (`--comment`, `Comment=`), if any.
    pub fn comment(&self) -> Option<String> {
        // SAFETY: NULL or a NUL-terminated string owned by the request.
        unsafe { cstr_to_string(self.rec().comment) }
    }

    /// Take the comment off the request: slurmctld then changes no
    /// comment, the rest of the request as it was.
    pub fn take_comment(&mut self) -> Option<String> {
        let text = self.comment();
        // SAFETY: the request is ours to change for this call; its comment
        // is NULL or xmalloc'd (slurmctld unpacked it so, and frees it with
        // the request), freed here with xfree, which sets it NULL.
        unsafe { sys::slurm_xfree(std::ptr::addr_of_mut!((*self.raw).comment).cast()) };
        text
    }
}

/// The job an update is for, as `job_modify` gets it: readable as any
/// [`JobView`], and its SystemComment writable, since slurmctld holds its
/// job write lock for the update.
pub struct UpdatedJob<'a> {
    view: JobView<'a>,
}

impl<'a> std::ops::Deref for UpdatedJob<'a> {
    type Target = JobView<'a>;
    fn deref(&self) -> &JobView<'a> {
        &self.view
    }
}

impl UpdatedJob<'_> {
    /// Set its `SystemComment=` (users cannot; slurmctld keeps it in its
    /// state). Whether it changed.
    pub fn set_system_comment(&mut self, text: &str) -> bool {
        // SAFETY: the record being updated, under the job write lock
        // slurmctld holds for the update.
        unsafe { crate::ctld::job::write_system_comment(self.view.as_ptr(), text) }
    }

    /// Whether `uid` may act on this job on its own: its owner, root, or
    /// SlurmUser (operators and account coordinators are slurmctld's to
    /// allow in its own update, not a plugin's).
    pub fn may_be_acted_on_by(&self, uid: u32) -> bool {
        // SAFETY: slurm_conf is set up before any plugin runs; a u32 is read whole.
        let slurm_user = unsafe { std::ptr::addr_of!(sys::slurm_conf.slurm_user_id).read() };
        uid == self.view.user_id() || uid == 0 || uid == slurm_user
    }
}

/// What a job_submit plugin may look up during the call (the partition
/// read lock is held by slurmctld).
pub struct SubmitContext {
    ctld: &'static Slurmctld,
}

impl SubmitContext {
    /// The partition `name` (or the default one for `None`; the first of a
    /// comma-separated list, where the job would go first): its name, how
    /// many nodes it has, and its OverSubscribe setting as slurmctld keeps
    /// it (max_share: 0 EXCLUSIVE, 1 NO, N for YES:N, SHARED_FORCE | N for
    /// FORCE:N). `None` when there is no such partition.
    fn partition(&self, name: Option<&str>) -> Option<(String, u32, u16)> {
        // SAFETY: with the partition read lock held (module docs), the
        // partition list and default_part_loc are stable; find_part_record
        // only reads them; a non-null result is a live record.
        unsafe {
            let part = match name {
                Some(n) => {
                    let first = c_text(n.split(',').next().unwrap_or(n));
                    (self.ctld.find_part_record)(first.as_ptr().cast_mut())
                }
                None => *self.ctld.default_part_loc,
            };
            let part = part.as_ref()?;
            Some((cstr_to_string(part.name).unwrap_or_default(), part.total_nodes, part.max_share))
        }
    }

    /// The partition `name` (or the default one) and how many nodes it has.
    pub fn partition_nodes(&self, name: Option<&str>) -> Option<(String, u32)> {
        self.partition(name).map(|(n, nodes, _)| (n, nodes))
    }

    /// The partition `name` (or the default one) and its max_share.
    pub fn partition_max_share(&self, name: Option<&str>) -> Option<(String, u16)> {
        self.partition(name).map(|(n, _, share)| (n, share))
    }
}

/// A job_submit plugin.
pub trait JobSubmitPlugin: Send + Sized + 'static {
    fn init() -> Result<Self, String>;
    /// A job is submitted: change its request, or refuse it with a message
    /// for the user.
    fn submit(&self, ctx: &SubmitContext, job: &mut JobDesc<'_>, uid: u32) -> Result<(), String>;
    /// An update of `job` is asked for by `uid` (before or after slurmctld
    /// checks who asks, by release: see the module's head): change the
    /// update or the job's SystemComment, or refuse it.
    fn modify(
        &self,
        ctx: &SubmitContext,
        update: &mut JobDesc<'_>,
        job: &mut UpdatedJob<'_>,
        uid: u32,
    ) -> Result<(), String>;
}

/// The loaded plugin, kept by the macro's statics.
pub struct Instance<P>(Mutex<Option<P>>);

impl<P: JobSubmitPlugin> Instance<P> {
    pub const fn new() -> Self {
        Instance(Mutex::new(None))
    }

    pub fn init(&self, plugin_type: &'static str) -> i32 {
        crate::common::logger::init(plugin_type);
        guard("init", SLURM_ERROR, || match P::init() {
            Ok(p) => {
                *self.0.lock() = Some(p);
                SLURM_SUCCESS
            }
            Err(e) => {
                log::error!("{}", Refusal::Load(e.to_string()));
                SLURM_ERROR
            }
        })
    }

    pub fn fini(&self) {
        guard("fini", (), || {
            self.0.lock().take();
        })
    }

    /// # Safety
    /// The arguments are those slurmctld passes to `job_submit`.
    pub unsafe fn submit(&self, raw: *mut sys::job_desc_msg_t, uid: u32, err_msg: *mut *mut libc::c_char) -> i32 {
        guard("job_submit", SLURM_ERROR, || {
            // 22.05 calls its job_submit plugins one at a time (under its
            // g_context_lock), so holding ours blocks nobody; 24.11 holds a
            // read lock there, and several RPC threads may be here at once:
            // ours makes them take turns, as before.
            let plugin = self.0.lock();
            let (Ok(ctld), Some(p)) = (Slurmctld::get(), plugin.as_ref()) else {
                return SLURM_ERROR;
            };
            let mut job = JobDesc { raw, _call: PhantomData };
            let result = p.submit(&SubmitContext { ctld }, &mut job, uid);
            // SAFETY: err_msg is slurmctld's out parameter for this call.
            unsafe { refused(Refusal::Submission, result, err_msg) }
        })
    }

    /// # Safety
    /// The arguments are those slurmctld passes to `job_modify`; `err_msg`
    /// is NULL before 24.11, which added it.
    pub unsafe fn modify(
        &self,
        raw: *mut sys::job_desc_msg_t,
        job: *mut sys::job_record_t,
        uid: u32,
        err_msg: *mut *mut libc::c_char,
    ) -> i32 {
        guard("job_modify", SLURM_ERROR, || {
            let plugin = self.0.lock();
            let (Ok(ctld), Some(p)) = (Slurmctld::get(), plugin.as_ref()) else {
                return SLURM_ERROR;
            };
            let mut update = JobDesc { raw, _call: PhantomData };
            // SAFETY: the job record being updated, under the job write lock.
            let result = match unsafe { JobView::from_ptr(job) } {
                Some(view) => p.modify(&SubmitContext { ctld }, &mut update, &mut UpdatedJob { view }, uid),
                None => Ok(()),
            };
            // SAFETY: err_msg is NULL or slurmctld's out parameter for this call.
            unsafe { refused(Refusal::Update, result, err_msg) }
        })
    }
}

impl<P: JobSubmitPlugin> Default for Instance<P> {
    fn default() -> Self {
        Self::new()
    }
}

/// SLURM_SUCCESS, or SLURM_ERROR with the message put where slurmctld sends
/// it to the user.
///
/// # Safety
/// `err_msg` is NULL or slurmctld's `char **` out parameter, whose old value
/// (NULL or xmalloc'd) slurmctld owns.
unsafe fn refused(what: fn(String) -> Refusal, result: Result<(), String>, err_msg: *mut *mut libc::c_char) -> i32 {
    match result {
        Ok(()) => SLURM_SUCCESS,
        Err(e) => {
            log::info!("{}", what(e.clone()));
            if !err_msg.is_null() {
                let text = c_text(&e);
                // SAFETY: xstrdup copies into xmalloc'd memory, which
                // slurmctld frees with xfree as it does every err_msg; an
                // earlier message is freed first.
                unsafe {
                    sys::slurm_xfree(err_msg.cast());
                    *err_msg = sys::xstrdup(text.as_ptr());
                }
            }
            SLURM_ERROR
        }
    }
}

/// Emit the symbols of a `job_submit/...` plugin for type `$plugin`.
///
/// ```ignore
/// slurm::job_submit_plugin!(Malleable, name: "Malleable jobs", type: "job_submit/malleable");
/// ```
#[macro_export]
macro_rules! job_submit_plugin {
    ($plugin:ty, name: $name:literal, type: $ptype:literal) => {
        const _: () = {
    $crate::plugin_header!(name: $name, type: $ptype);

            static INSTANCE: $crate::ctld::job_submit::Instance<$plugin> = $crate::ctld::job_submit::Instance::new();

            #[no_mangle]
            pub extern "C" fn init() -> ::std::os::raw::c_int {
                INSTANCE.init($ptype)
            }

            #[no_mangle]
            pub extern "C" fn fini() -> ::std::os::raw::c_int {
                INSTANCE.fini();
                0
            }

            /// # Safety
            /// Called by slurmctld only, as its job_submit plugin interface says.
            #[no_mangle]
            pub unsafe extern "C" fn job_submit(
                job_desc: *mut $crate::ctld::job_submit::RawJobDesc,
                submit_uid: u32,
                err_msg: *mut *mut ::std::os::raw::c_char,
            ) -> ::std::os::raw::c_int {
                // SAFETY: slurmctld's own arguments, passed on.
                unsafe { INSTANCE.submit(job_desc, submit_uid, err_msg) }
            }

            $crate::__job_modify_export!(INSTANCE);
        };
    };
}

/// `job_modify` as this Slurm calls it: 22.05 passes no err_msg.
#[cfg(not(slurm_since_24_11))]
#[macro_export]
#[doc(hidden)]
macro_rules! __job_modify_export {
    ($instance:ident) => {
        /// # Safety
        /// Called by slurmctld only, as its job_submit plugin interface says.
        #[no_mangle]
        pub unsafe extern "C" fn job_modify(
            job_desc: *mut $crate::ctld::job_submit::RawJobDesc,
            job_ptr: *mut $crate::ctld::job_submit::RawJobRecord,
            submit_uid: u32,
        ) -> ::std::os::raw::c_int {
            // SAFETY: slurmctld's own arguments, passed on.
            unsafe { $instance.modify(job_desc, job_ptr, submit_uid, ::std::ptr::null_mut()) }
        }
    };
}

/// 24.11's job_modify tells the user why, as job_submit does.
#[cfg(slurm_since_24_11)]
#[macro_export]
#[doc(hidden)]
macro_rules! __job_modify_export {
    ($instance:ident) => {
        /// # Safety
        /// Called by slurmctld only, as its job_submit plugin interface says.
        #[no_mangle]
        pub unsafe extern "C" fn job_modify(
            job_desc: *mut $crate::ctld::job_submit::RawJobDesc,
            job_ptr: *mut $crate::ctld::job_submit::RawJobRecord,
            submit_uid: u32,
            err_msg: *mut *mut ::std::os::raw::c_char,
        ) -> ::std::os::raw::c_int {
            // SAFETY: slurmctld's own arguments, passed on.
            unsafe { $instance.modify(job_desc, job_ptr, submit_uid, err_msg) }
        }
    };
}

/// The types the exported functions receive.
pub type RawJobDesc = sys::job_desc_msg_t;
pub type RawJobRecord = sys::job_record_t;
