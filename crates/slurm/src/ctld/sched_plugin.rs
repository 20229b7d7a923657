//! What a scheduler plugin is to slurmctld: a few exported symbols. A plugin
//! crate implements [`SchedPlugin`] and writes one `sched_plugin!` line; the
//! macro emits the plugin header and every symbol slurmctld requires, each
//! entry point behind the panic guard, so no plugin can forget a symbol or
//! let a panic reach C.

use std::path::PathBuf;

use parking_lot::Mutex;
use slurm_sys as sys;

use crate::common::ffi_guard::guard;
use crate::common::refusal::Refusal;
use crate::{SLURM_ERROR, SLURM_SUCCESS};

/// What slurmctld lets a plugin see while it calls `init` or `reconfig`
/// (both run inside read_slurm_conf, under slurmctld's config lock).
pub struct PluginContext {
    _private: (),
}

impl PluginContext {
    pub(crate) fn new() -> PluginContext {
        PluginContext { _private: () }
    }

    /// `SchedulerType` from slurm.conf (`sched/backfill`, ...).
    pub fn scheduler_type(&self) -> Option<String> {
        // SAFETY: as for sched_params; schedtype is NULL or a string it owns.
        unsafe { crate::common::cstr::cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.schedtype).read()) }
    }

    /// `SelectType` from slurm.conf.
    pub fn select_type(&self) -> Option<String> {
        // SAFETY: as for sched_params; select_type is NULL or a string it owns.
        unsafe { crate::common::cstr::cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.select_type).read()) }
    }

    /// `JobSubmitPlugins` from slurm.conf.
    pub fn job_submit_plugins(&self) -> Option<String> {
        // SAFETY: as for sched_params; job_submit_plugins is NULL or a string it owns.
        unsafe { crate::common::cstr::cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.job_submit_plugins).read()) }
    }

    /// `TaskPlugin` from slurm.conf.
    pub fn task_plugin(&self) -> Option<String> {
        // SAFETY: as for sched_params; task_plugin is NULL or a string it owns.
        unsafe { crate::common::cstr::cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.task_plugin).read()) }
    }

    /// `SchedulerParameters` from slurm.conf.
    pub fn scheduler_parameters(&self) -> Option<String> {
        // SAFETY: slurm_conf is libslurmfull's global, stable under the
        // config lock our caller holds; sched_params is NULL or a
        // NUL-terminated string it owns.
        unsafe { crate::common::cstr::cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.sched_params).read()) }
    }

    /// Append `options` to `SchedulerParameters`, as if slurm.conf had
    /// them, and return what it is now. slurmctld reads its scheduler's
    /// options from this string again whenever `last_update` moves, which
    /// this moves; `scontrol show config` shows the string. Only for a
    /// scheduler plugin: its init runs inside read_slurm_conf after
    /// slurm.conf is read (a select plugin's runs before, and would lose it).
    pub fn add_scheduler_parameters(&self, options: &[&str]) -> String {
        let old = self.scheduler_parameters().filter(|p| !p.trim().is_empty());
        let now = old.into_iter().chain(options.iter().map(|o| o.to_string())).collect::<Vec<_>>().join(",");
        let text = crate::common::cstr::c_text(&now);
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        // SAFETY: init and reconfig run inside read_slurm_conf, which holds
        // slurmctld's config write lock (at startup, before any thread that
        // reads slurm_conf); sched_params is NULL or xmalloc'd (xfree takes
        // both and NULLs it), and xstrdup gives the xmalloc'd copy
        // slurmctld frees when it next reads slurm.conf.
        unsafe {
            sys::slurm_xfree(std::ptr::addr_of_mut!(sys::slurm_conf.sched_params).cast());
            std::ptr::addr_of_mut!(sys::slurm_conf.sched_params).write(sys::xstrdup(text.as_ptr()));
            std::ptr::addr_of_mut!(sys::slurm_conf.last_update).write(stamp as sys::time_t);
        }
        now
    }

    /// The path of a configuration file that sits beside slurm.conf.
    pub fn conf_path(&self, file: &str) -> PathBuf {
        let name = crate::common::cstr::c_text(file);
        // SAFETY: get_extra_conf_path reads slurm_conf's path (config lock
        // held by our caller) and returns an xmalloc'd string we free.
        unsafe {
            let mut p = sys::get_extra_conf_path(name.as_ptr().cast_mut());
            let path = crate::common::cstr::cstr_to_string(p).unwrap_or_else(|| file.to_string());
            sys::slurm_xfree(std::ptr::addr_of_mut!(p).cast());
            PathBuf::from(path)
        }
    }
}

/// A `sched/...` plugin.
pub trait SchedPlugin: Send + Sized + 'static {
    /// Load: read configuration, check slurm.conf, start threads. An error
    /// refuses the load; its text goes into slurmctld's log.
    fn init(ctx: &PluginContext) -> Result<Self, String>;
    /// `scontrol reconfigure` (and slurmctld's own re-reads of slurm.conf).
    /// An error keeps the plugin running on its previous configuration.
    fn reconfig(&mut self, ctx: &PluginContext) -> Result<(), String>;
    /// Unload: stop and join threads.
    fn fini(self);
}

/// The loaded plugin's state, kept by the macro's statics.
pub struct Instance<P>(Mutex<Option<P>>);

impl<P: SchedPlugin> Instance<P> {
    pub const fn new() -> Self {
        Instance(Mutex::new(None))
    }

    pub fn init(&self, plugin_type: &'static str) -> i32 {
        crate::common::logger::init(plugin_type);
        guard("init", SLURM_ERROR, || {
            let ctx = PluginContext { _private: () };
            let mut slot = self.0.lock();
            if slot.is_some() {
                log::error!("init called twice; keeping the running instance");
                return SLURM_ERROR;
            }
            match P::init(&ctx) {
                Ok(p) => {
                    *slot = Some(p);
                    SLURM_SUCCESS
                }
                Err(e) => {
                    log::error!("{}", Refusal::Load(e.to_string()));
                    SLURM_ERROR
                }
            }
        })
    }

    pub fn reconfig(&self) -> i32 {
        guard("sched_p_reconfig", SLURM_ERROR, || {
            let ctx = PluginContext { _private: () };
            match self.0.lock().as_mut() {
                Some(p) => match p.reconfig(&ctx) {
                    Ok(()) => SLURM_SUCCESS,
                    Err(e) => {
                        log::error!("{}", Refusal::Reconfigure(e.to_string()));
                        SLURM_ERROR
                    }
                },
                None => SLURM_ERROR,
            }
        })
    }

    pub fn fini(&self) {
        guard("fini", (), || {
            if let Some(p) = self.0.lock().take() {
                p.fini();
            }
        })
    }
}

impl<P: SchedPlugin> Default for Instance<P> {
    fn default() -> Self {
        Self::new()
    }
}

/// Emit the symbols of a `sched/...` plugin for type `$plugin`.
///
/// ```ignore
/// slurm::sched_plugin!(Malleable, name: "Malleable scheduler", type: "sched/malleable");
/// ```
#[macro_export]
macro_rules! sched_plugin {
    ($plugin:ty, name: $name:literal, type: $ptype:literal) => {
        const _: () = {
    $crate::plugin_header!(name: $name, type: $ptype);

            static INSTANCE: $crate::ctld::sched_plugin::Instance<$plugin> =
                $crate::ctld::sched_plugin::Instance::new();

            #[no_mangle]
            pub extern "C" fn init() -> ::std::os::raw::c_int {
                INSTANCE.init($ptype)
            }

            #[no_mangle]
            pub extern "C" fn fini() {
                INSTANCE.fini()
            }

            #[no_mangle]
            pub extern "C" fn sched_p_reconfig() -> ::std::os::raw::c_int {
                INSTANCE.reconfig()
            }
        };
    };
}
