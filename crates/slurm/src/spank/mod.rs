//! SPANK plugins: loaded by srun, sbatch and salloc (local and allocator
//! contexts), slurmstepd (remote) and slurmd, through plugstack.conf. A
//! plugin crate implements [`SpankPlugin`] and writes one `spank_plugin!`
//! line; the macro emits the plugin header and the callbacks, each behind
//! the panic guard. Only Slurm's public headers are needed (slurm-sys's
//! `spank` feature), so a SPANK plugin builds without a source tree.
//!
//! Options: Slurm keeps a pointer to each registered `struct spank_option`
//! for as long as the process runs, so the table is built once and never
//! freed. Every option calls one trampoline with the option's index as
//! `val`; the trampoline hands it to the plugin.

use std::ffi::CString;
use std::sync::OnceLock;

use slurm_sys as sys;

use crate::common::cstr::{c_text, cstr_to_string};
use crate::common::ffi_guard::guard;
use crate::{SLURM_ERROR, SLURM_SUCCESS};

/// The cluster's `SchedulerType`, asked of slurmctld (an RPC, as `scontrol
/// show config` does; the command that loaded the plugin reads no
/// slurm.conf field of it). For a submitting command only: it waits on the
/// controller.
pub fn controller_scheduler_type() -> Result<String, String> {
    let mut conf: *mut sys::slurm_conf_t = std::ptr::null_mut();
    // SAFETY: slurm_load_ctl_conf fills `conf` with a message it allocates
    // (or leaves it NULL on failure) and sets errno.
    let rc = unsafe { sys::slurm_load_ctl_conf(0, &mut conf) };
    if rc != SLURM_SUCCESS || conf.is_null() {
        let code = crate::common::cstr::last_slurm_errno();
        return Err(format!("asking slurmctld for its configuration: {}", crate::strerror(code)));
    }
    // SAFETY: a message slurm_load_ctl_conf returned: schedtype is NULL or
    // a NUL-terminated string it owns; freed once, by Slurm's own call.
    unsafe {
        let schedtype = cstr_to_string((*conf).schedtype);
        sys::slurm_free_ctl_conf(conf);
        schedtype.ok_or_else(|| "slurmctld names no SchedulerType".to_string())
    }
}

/// Where a SPANK plugin is running.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Context {
    /// srun, before the job or step runs.
    Local,
    /// slurmstepd, with the job's tasks.
    Remote,
    /// sbatch or salloc, before the job is submitted.
    Allocator,
    Slurmd,
    JobScript,
    Unknown,
}

impl Context {
    /// The context of this process.
    pub fn current() -> Context {
        // SAFETY: spank_context reads a global of libslurmfull that the
        // plugin stack sets before any plugin is loaded.
        match unsafe { sys::spank_context() } {
            sys::spank_context_S_CTX_LOCAL => Context::Local,
            sys::spank_context_S_CTX_REMOTE => Context::Remote,
            sys::spank_context_S_CTX_ALLOCATOR => Context::Allocator,
            sys::spank_context_S_CTX_SLURMD => Context::Slurmd,
            sys::spank_context_S_CTX_JOB_SCRIPT => Context::JobScript,
            _ => Context::Unknown,
        }
    }

    /// Before a job exists: where its options can still refuse it and
    /// set its job-control environment.
    pub fn is_submitting(self) -> bool {
        matches!(self, Context::Local | Context::Allocator)
    }
}

/// An option the plugin adds to srun, sbatch and salloc.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SpankOption {
    /// Without the leading dashes.
    pub name: &'static str,
    /// What it takes, for --help (e.g. "N"); empty for a flag.
    pub arg: &'static str,
    pub usage: &'static str,
}

/// The handle Slurm passes to a callback, valid for that call.
pub struct Spank {
    raw: sys::spank_t,
}

impl Spank {
    /// Put `name=value` into the job's control environment: slurmctld keeps
    /// it with the job (`spank_job_env`). Only in local and allocator context.
    pub fn job_control_setenv(&self, name: &str, value: &str) -> Result<(), String> {
        let (n, v) = (c_text(name), c_text(value));
        // SAFETY: a live handle for this callback; Slurm copies both strings.
        let rc = unsafe { sys::spank_job_control_setenv(self.raw, n.as_ptr(), v.as_ptr(), 1) };
        spank_result(rc, &format!("setting {name} in the job's environment"))
    }
}

fn spank_result(rc: sys::spank_err_t, what: &str) -> Result<(), String> {
    if rc == sys::ESPANK_SUCCESS as sys::spank_err_t {
        return Ok(());
    }
    // SAFETY: spank_strerror returns a static string for any code.
    let text = unsafe { cstr_to_string(sys::spank_strerror(rc)) }.unwrap_or_default();
    Err(format!("{what}: {text} ({rc})"))
}

/// A SPANK plugin. Callbacks it does not implement succeed.
pub trait SpankPlugin: Send + Sync + Sized + 'static {
    /// The plugin, made once per process before its first callback.
    fn new() -> Self;
    /// Its options, registered in every context.
    fn options() -> &'static [SpankOption];
    /// An option was given: `index` into [`SpankPlugin::options`], its
    /// value, and whether this is slurmstepd replaying it (remote). An error
    /// refuses the command line; its text is said to the user.
    fn option(&self, index: usize, value: Option<&str>, remote: bool) -> Result<(), String>;
    /// After all options are read (slurm_spank_init_post_opt). An error
    /// stops srun, sbatch or salloc before anything is submitted.
    fn init_post_opt(&self, _spank: &Spank, _context: Context) -> Result<(), String> {
        Ok(())
    }
}

/// The loaded plugin and its option table, kept by the macro's statics.
pub struct Instance<P> {
    plugin: OnceLock<P>,
    table: OnceLock<Vec<usize>>,
}

impl<P: SpankPlugin> Instance<P> {
    pub const fn new() -> Self {
        Instance { plugin: OnceLock::new(), table: OnceLock::new() }
    }

    fn plugin(&self) -> &P {
        self.plugin.get_or_init(P::new)
    }

    /// slurm_spank_init: register every option.
    ///
    /// # Safety
    /// `raw` is the handle Slurm passed to this slurm_spank_init call.
    pub unsafe fn init(&self, prefix: &'static str, raw: sys::spank_t, callback: sys::spank_opt_cb_f) -> i32 {
        crate::common::logger::init(prefix);
        guard("slurm_spank_init", SLURM_ERROR, || {
            self.plugin();
            // Built once: Slurm keeps pointers into it.
            let table = self.table.get_or_init(|| {
                P::options()
                    .iter()
                    .enumerate()
                    .map(|(i, o)| {
                        let leak = |s: &str| CString::new(s).expect("no NUL in option texts").into_raw();
                        let opt = sys::spank_option {
                            name: leak(o.name),
                            arginfo: if o.arg.is_empty() { std::ptr::null_mut() } else { leak(o.arg) },
                            usage: leak(o.usage),
                            has_arg: i32::from(!o.arg.is_empty()),
                            val: i as i32,
                            cb: callback,
                        };
                        Box::into_raw(Box::new(opt)) as usize
                    })
                    .collect()
            });
            for (&opt, o) in table.iter().zip(P::options()) {
                // SAFETY: `opt` points to a leaked spank_option that lives
                // as long as the process, as Slurm requires; `raw` is the
                // handle of this slurm_spank_init call.
                let rc = unsafe { sys::spank_option_register(raw, opt as *mut sys::spank_option) };
                if let Err(e) = spank_result(rc, &format!("registering --{}", o.name)) {
                    log::error!("{e}");
                    return SLURM_ERROR;
                }
            }
            SLURM_SUCCESS
        })
    }

    /// The options' callback: `val` is the option's index.
    ///
    /// # Safety
    /// `optarg` is NULL or the NUL-terminated value Slurm passed to the callback.
    pub unsafe fn option(&self, val: i32, optarg: *const libc::c_char, remote: i32) -> i32 {
        guard("spank option", SLURM_ERROR, || {
            let Some(index) = usize::try_from(val).ok().filter(|&i| i < P::options().len()) else {
                log::error!("option callback for unknown option {val}");
                return SLURM_ERROR;
            };
            // SAFETY: Slurm passes NULL or the option's value, a string it
            // owns for the call.
            let value = unsafe { cstr_to_string(optarg) };
            match self.plugin().option(index, value.as_deref(), remote != 0) {
                Ok(()) => SLURM_SUCCESS,
                Err(e) => {
                    log::error!("{e}");
                    SLURM_ERROR
                }
            }
        })
    }

    /// slurm_spank_init_post_opt.
    ///
    /// # Safety
    /// `raw` is the handle Slurm passed to this callback.
    pub unsafe fn init_post_opt(&self, raw: sys::spank_t) -> i32 {
        guard("slurm_spank_init_post_opt", SLURM_ERROR, || {
            let spank = Spank { raw };
            match self.plugin().init_post_opt(&spank, Context::current()) {
                Ok(()) => SLURM_SUCCESS,
                Err(e) => {
                    log::error!("{e}");
                    SLURM_ERROR
                }
            }
        })
    }
}

impl<P: SpankPlugin> Default for Instance<P> {
    fn default() -> Self {
        Self::new()
    }
}

/// Emit the symbols of a SPANK plugin for type `$plugin`. `$name` is the
/// plugin's name in plugstack.conf's messages and the prefix of its log lines.
///
/// ```ignore
/// slurm::spank_plugin!(Malleable, name: "malleable");
/// ```
#[macro_export]
macro_rules! spank_plugin {
    ($plugin:ty, name: $name:literal) => {
        const _: () = {
    $crate::plugin_header!(name: $name, type: "spank");

            static INSTANCE: $crate::spank::Instance<$plugin> = $crate::spank::Instance::new();

            unsafe extern "C" fn option_callback(
                val: ::std::os::raw::c_int,
                optarg: *const ::std::os::raw::c_char,
                remote: ::std::os::raw::c_int,
            ) -> ::std::os::raw::c_int {
                // SAFETY: Slurm's own arguments to the option callback.
                unsafe { INSTANCE.option(val, optarg, remote) }
            }

            /// # Safety
            /// Called by Slurm's plugin stack only.
            #[no_mangle]
            pub unsafe extern "C" fn slurm_spank_init(
                sp: $crate::spank::RawSpank,
                _ac: ::std::os::raw::c_int,
                _av: *mut *mut ::std::os::raw::c_char,
            ) -> ::std::os::raw::c_int {
                // SAFETY: the handle of this slurm_spank_init call.
                unsafe { INSTANCE.init($name, sp, Some(option_callback)) }
            }

            /// # Safety
            /// Called by Slurm's plugin stack only.
            #[no_mangle]
            pub unsafe extern "C" fn slurm_spank_init_post_opt(
                sp: $crate::spank::RawSpank,
                _ac: ::std::os::raw::c_int,
                _av: *mut *mut ::std::os::raw::c_char,
            ) -> ::std::os::raw::c_int {
                // SAFETY: the handle of this callback.
                unsafe { INSTANCE.init_post_opt(sp) }
            }
        };
    };
}

/// The handle type the exported callbacks receive.
pub type RawSpank = sys::spank_t;
