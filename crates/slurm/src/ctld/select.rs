//! A select plugin built on select/linear, as Iserte et al. 2025 built
//! select/natural: Slurm's own `select_linear.so`, opened from PluginDir,
//! gets each of the node-selection calls unchanged (36 in 22.05, 31 in
//! 24.11, 12 in 25.11, 13 in 26.05: select_ops), and the plugin does
//! its own work beside them ([`select_plugin!`](crate::select_plugin)).
//!
//! Until 24.11 every process that sets up node selection loads every
//! select plugin in PluginDir (`select_g_init(false)`: slurmctld, slurmd,
//! srun, sbatch...), so the forwarding works outside slurmctld too, and is
//! all a plugin loaded there does; since 25.05 only slurmctld loads one,
//! the configured. In slurmctld its own work starts once slurmctld has read
//! its nodes and jobs (it loads select plugins before): at the first
//! `select_p_job_init` until 24.11, at the first `select_p_node_init` since
//! 25.05 (job_init is gone; both come inside read_slurm_conf, node_init
//! after the jobs are loaded), and is reconfigured at each later one
//! (`scontrol reconfigure`).

use std::ffi::{c_int, c_void, CString};
use std::path::{Path, PathBuf};

use once_cell::sync::OnceCell;
use slurm_sys as sys;

use crate::common::ffi_guard::guard;
use crate::common::refusal::Refusal;
use crate::ctld::PluginContext;

/// The file Slurm's select/linear is in, in one of PluginDir's folders.
pub const LINEAR_FILE: &str = "select_linear.so";

const SLURM_SUCCESS: c_int = 0;
const SLURM_ERROR: c_int = -1;

/// What a forwarded call returns when select/linear is not loaded (the
/// plugin's init failed then, so Slurm does not call it in practice).
pub trait Failed {
    fn failed() -> Self;
}

impl Failed for c_int {
    fn failed() -> Self {
        SLURM_ERROR
    }
}

impl<T> Failed for *mut T {
    fn failed() -> Self {
        std::ptr::null_mut()
    }
}

/// 26.05's job_mem_reduce returns nothing.
impl Failed for () {
    fn failed() -> Self {}
}

/// The operation at which the plugin starts and is reconfigured in
/// slurmctld, once its nodes and jobs are read (see the module's head).
#[cfg(not(slurm_since_25_11))]
const START_OP: &str = "job_init";
#[cfg(slurm_since_25_11)]
const START_OP: &str = "node_init";

/// The names of the operations, in `node_select_syms`' order.
macro_rules! __select_names {
    ($( $field:ident = $sym:ident ( $( $arg:ident : $ty:ty ),* ) -> $ret:ty ; )*) => {
        /// Every `select_p_*` symbol a select plugin of this Slurm exports.
        pub const SELECT_SYMBOLS: &[&str] = &[$( stringify!($sym) ),*];
    };
}
pub(crate) use __select_names;

/// select/linear's operations, resolved from its file.
macro_rules! __select_linear {
    ($( $field:ident = $sym:ident ( $( $arg:ident : $ty:ty ),* ) -> $ret:ty ; )*) => {
        /// select/linear, loaded: its operations, each callable as a method
        /// that passes its arguments through.
        pub struct Linear {
            $( $field: unsafe extern "C" fn($($ty),*) -> $ret, )*
        }

        impl Linear {
            fn resolve(handle: *mut c_void) -> Result<Linear, String> {
                Ok(Linear {
                    $( $field: {
                        let p = symbol(handle, stringify!($sym))?;
                        // SAFETY: select_linear.so defines this symbol as a
                        // function of exactly this C signature (Slurm's
                        // slurm_select_ops_t, checked against the release's select.c).
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) -> $ret>(p) }
                    }, )*
                })
            }

            $(
                /// select/linear's operation of that name.
                ///
                /// # Safety
                /// The arguments are what Slurm hands the operation: the
                /// caller passes on, unchanged, those Slurm gave its own
                /// symbol of the same name.
                #[allow(clippy::too_many_arguments)]
                pub unsafe fn $field(&self, $( $arg: $ty ),*) -> $ret {
                    // SAFETY: the caller's promise above; select/linear is
                    // loaded for the life of the process.
                    unsafe { (self.$field)($( $arg ),*) }
                }
            )*
        }
    };
}
pub(crate) use __select_linear;

crate::__select_ops!(__select_names_export);
crate::__select_ops!(__select_linear_export);

/// For `__select_ops!`'s callback, which names a macro at the crate root.
#[macro_export]
#[doc(hidden)]
macro_rules! __select_names_export {
    ($($t:tt)*) => { $crate::ctld::select::__select_names! { $($t)* } };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __select_linear_export {
    ($($t:tt)*) => { $crate::ctld::select::__select_linear! { $($t)* } };
}

/// `name` in the loaded object `handle`.
fn symbol(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    let c = CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: a live handle from dlopen and a NUL-terminated name.
    let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
    if p.is_null() {
        Err(format!("{LINEAR_FILE} has no {name}"))
    } else {
        Ok(p)
    }
}

static LINEAR: OnceCell<Result<Linear, String>> = OnceCell::new();

/// select/linear, loaded on first use; `None` if it could not be (said
/// once, in [`init`]).
pub fn linear() -> Option<&'static Linear> {
    LINEAR.get_or_init(load_linear).as_ref().ok()
}

/// PluginDir's folders, as slurm.conf gives them (colon-separated).
fn plugin_dirs() -> Vec<PathBuf> {
    // SAFETY: slurm_conf is libslurmfull's global, read by every process
    // that loads a select plugin before it does; plugindir is a string it
    // owns or NULL.
    let dirs = unsafe { crate::common::cstr::cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.plugindir).read()) };
    dirs.unwrap_or_default().split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect()
}

/// Where select/linear is: the first of PluginDir's folders that has it.
pub fn linear_path(dirs: &[PathBuf]) -> Result<PathBuf, String> {
    dirs.iter().map(|d| d.join(LINEAR_FILE)).find(|p| p.is_file()).ok_or_else(|| {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        format!("{LINEAR_FILE} is in none of PluginDir's folders ({})", shown.join(":"))
    })
}

fn load_linear() -> Result<Linear, String> {
    let path = linear_path(&plugin_dirs())?;
    let handle = open(&path)?;
    let linear = Linear::resolve(handle)?;
    // Its init reads slurm.conf's SelectTypeParameters and TopologyParam.
    // Slurm ran it already if it loaded select/linear itself (every select
    // plugin is loaded in most processes); running it again sets the same.
    let init = symbol(handle, "init")?;
    // SAFETY: select/linear's `int init(void)`, loaded above.
    let rc = unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(init)() };
    if rc != SLURM_SUCCESS {
        return Err(format!("{}: its init failed ({rc})", path.display()));
    }
    Ok(linear)
}

/// dlopen for good: the object stays loaded for the life of the process.
/// RTLD_LAZY, as Slurm loads its plugins: select/linear calls functions of
/// slurmctld's own (gres_ctld_*), which slurmd, srun and the others lack
/// and never make it call. RTLD_LOCAL, as Slurm too: with RTLD_GLOBAL, select/linear's
/// symbols would bind the plugins loaded after it, and select/cray_aries,
/// which writes its own `plugin_id`, would write into select/linear's
/// read-only one and crash slurmctld (seen: SIGSEGV in its init).
fn open(path: &Path) -> Result<*mut c_void, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: a valid path; select/linear is Slurm's own plugin, made to be
    // loaded into this process (Slurm loads it the same way).
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns NULL or a NUL-terminated message.
        let why = unsafe { crate::common::cstr::cstr_to_string(libc::dlerror()) };
        return Err(format!("dlopen {}: {}", path.display(), why.unwrap_or_default()));
    }
    Ok(handle)
}

/// Whether this process is slurmctld.
pub fn in_slurmctld() -> bool {
    // SAFETY: running_in_slurmctld is libslurmfull's, callable anywhere.
    unsafe { sys::running_in_slurmctld() }
}

/// Whether memory is a consumable resource (SelectTypeParameters with
/// CR_*_Memory): only then does node selection count a job's memory
/// against what a node has left.
pub fn memory_consumable() -> bool {
    // slurm.h's CR_MEMORY, the same in 22.05 and 24.11 (a define bindgen
    // does not carry).
    const CR_MEMORY: u16 = 0x0010;
    // SAFETY: slurm_conf is set up before any plugin runs and changes only
    // on reconfigure, under the config write lock every guard excludes; a
    // u16 is read whole.
    let params = unsafe { std::ptr::addr_of!(sys::slurm_conf.select_type_param).read() };
    params & CR_MEMORY != 0
}

/// A select plugin built on select/linear: what it does beside it, in
/// slurmctld only (select/linear does all the rest, in every process).
pub trait SelectPlugin: Send + Sized + 'static {
    /// At the first `select_p_job_init` (`select_p_node_init` since 25.05:
    /// slurmctld has read its nodes and jobs): start. An error stops slurmctld, with it in the log.
    fn start(ctx: &PluginContext) -> Result<Self, String>;
    /// At each later one (`scontrol reconfigure`). An error keeps the
    /// plugin running on its previous configuration.
    fn reconfigure(&mut self, ctx: &PluginContext) -> Result<(), String>;
    /// At `fini`: stop and join threads.
    fn stop(self);
}

/// The plugin's hooks with its type erased: there is one select plugin of
/// ours per library, and Rust has no generic statics.
struct Hooks {
    configure: fn(&PluginContext, bool) -> Result<(), String>,
    stop: fn(),
}

static HOOKS: OnceCell<Hooks> = OnceCell::new();

/// The running plugin, once started.
static INSTANCE: parking_lot::Mutex<Option<Box<dyn std::any::Any + Send>>> = parking_lot::Mutex::new(None);

fn configure_instance<P: SelectPlugin>(ctx: &PluginContext, first: bool) -> Result<(), String> {
    let mut slot = INSTANCE.lock();
    match slot.as_mut().and_then(|p| p.downcast_mut::<P>()) {
        Some(p) if !first => p.reconfigure(ctx),
        _ => {
            *slot = Some(Box::new(P::start(ctx)?));
            Ok(())
        }
    }
}

fn stop_instance<P: SelectPlugin>() {
    // Taken out first: stopping joins threads, not under the lock.
    let running = INSTANCE.lock().take();
    if let Some(p) = running.and_then(|p| p.downcast::<P>().ok()) {
        p.stop();
    }
}

/// Whether the plugin's work has started (its first configure succeeded).
static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The plugin's `init`: select/linear loaded (or the load refused, saying
/// why), and the plugin's hooks kept for slurmctld.
pub fn init<P: SelectPlugin>(plugin_type: &'static str) -> c_int {
    crate::common::logger::init(plugin_type);
    guard("init", SLURM_ERROR, || {
        if let Err(e) = LINEAR.get_or_init(load_linear) {
            log::error!("{}", Refusal::Load(e.to_string()));
            return SLURM_ERROR;
        }
        let _ = HOOKS.set(Hooks { configure: configure_instance::<P>, stop: stop_instance::<P> });
        SLURM_SUCCESS
    })
}

/// After a forwarded call: at [`START_OP`] in slurmctld, the plugin's
/// start or reconfiguration. `out` is select/linear's result; a
/// failed start turns it into a failure, which stops slurmctld with the
/// reason in its log.
pub fn after<T: Failed>(op: &str, out: T) -> T {
    if op != START_OP || !in_slurmctld() {
        return out;
    }
    let Some(hooks) = HOOKS.get() else {
        return out;
    };
    let first = !STARTED.load(std::sync::atomic::Ordering::SeqCst);
    let ok = guard(START_OP, false, || match (hooks.configure)(&PluginContext::new(), first) {
        Ok(()) => true,
        Err(e) if first => {
            log::error!("{}", Refusal::Start(e.to_string()));
            false
        }
        Err(e) => {
            log::error!("{}", Refusal::Reconfigure(e.to_string()));
            true
        }
    });
    if first && ok {
        STARTED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    if ok {
        out
    } else {
        T::failed()
    }
}

/// The plugin's `fini`: its own stop, in slurmctld, if it started.
/// select/linear stays loaded (Slurm finishes it itself when it loaded it).
pub fn fini() -> c_int {
    guard("fini", SLURM_ERROR, || {
        if let (true, Some(h)) = (STARTED.swap(false, std::sync::atomic::Ordering::SeqCst), HOOKS.get()) {
            (h.stop)();
        }
        SLURM_SUCCESS
    })
}

/// Emit a select plugin on select/linear for type `$plugin` (a
/// [`SelectPlugin`]): the plugin header, `plugin_id` (unique among select
/// plugins, 100 or more; Slurm's own use 101-110), `init` and `fini`, and
/// the `select_p_*` calls of this Slurm, passed to select/linear. In
/// slurmctld the plugin starts at the first `select_p_job_init`, is
/// reconfigured at each later one, and stops at `fini`.
///
/// ```ignore
/// slurm::select_plugin!(NaturalSelect, name: "Natural node selection", type: "select/natural", id: 130);
/// ```
#[macro_export]
macro_rules! select_plugin {
    ($plugin:ty, name: $name:literal, type: $ptype:literal, id: $id:literal) => {
        const _: () = {
    $crate::plugin_header!(name: $name, type: $ptype);

            #[no_mangle]
            #[used]
            pub static plugin_id: u32 = $id;

            #[no_mangle]
            pub extern "C" fn init() -> ::std::ffi::c_int {
                $crate::ctld::select::init::<$plugin>($ptype)
            }

            #[no_mangle]
            pub extern "C" fn fini() -> ::std::ffi::c_int {
                $crate::ctld::select::fini()
            }

            $crate::__select_ops!(__select_forward);
        };
    };
}

/// The exported `select_p_*` functions, each passing its call on. Their
/// one `unsafe` block is written here, in the safe layer, for every plugin
/// that uses [`select_plugin!`](crate::select_plugin).
#[macro_export]
#[doc(hidden)]
macro_rules! __select_forward {
    ($( $field:ident = $sym:ident ( $( $arg:ident : $ty:ty ),* ) -> $ret:ty ; )*) => {
        $(
            /// Slurm's select operation of that name, passed to select/linear.
            ///
            /// # Safety
            /// Called by Slurm, with the arguments its select API defines.
            #[no_mangle]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C" fn $sym($( $arg: $ty ),*) -> $ret {
                let out = match $crate::ctld::select::linear() {
                    // SAFETY: Slurm's own arguments for this operation,
                    // passed on unchanged (the method's contract).
                    Some(l) => unsafe { l.$field($( $arg ),*) },
                    None => <$ret as $crate::ctld::select::Failed>::failed(),
                };
                $crate::ctld::select::after(stringify!($field), out)
            }
        )*
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(not(slurm_since_24_11))]
    fn the_operations_are_slurm_22_05_s_36_in_order() {
        assert_eq!(SELECT_SYMBOLS.len(), 36);
        assert_eq!(SELECT_SYMBOLS[0], "select_p_state_save");
        assert_eq!(SELECT_SYMBOLS[4], "select_p_job_test");
        assert_eq!(SELECT_SYMBOLS[35], "select_p_resv_test");
    }

    #[test]
    #[cfg(all(slurm_since_24_11, not(slurm_since_25_11)))]
    fn the_operations_are_slurm_24_11_s_31_in_order() {
        assert_eq!(SELECT_SYMBOLS.len(), 31);
        assert_eq!(SELECT_SYMBOLS[0], "select_p_state_save");
        assert_eq!(SELECT_SYMBOLS[4], "select_p_job_test");
        assert_eq!(SELECT_SYMBOLS[30], "select_p_reconfigure");
        assert!(!SELECT_SYMBOLS.contains(&"select_p_resv_test"));
    }

    #[test]
    #[cfg(all(slurm_since_25_11, not(slurm_since_26_05)))]
    fn the_operations_are_slurm_25_11_s_12_in_order() {
        assert_eq!(SELECT_SYMBOLS.len(), 12);
        assert_eq!(SELECT_SYMBOLS[0], "select_p_node_init");
        assert_eq!(SELECT_SYMBOLS[1], "select_p_job_test");
        assert_eq!(SELECT_SYMBOLS[11], "select_p_reconfigure");
        assert!(!SELECT_SYMBOLS.contains(&"select_p_job_init"));
    }

    #[test]
    #[cfg(slurm_since_26_05)]
    fn the_operations_are_slurm_26_05_s_13_in_order() {
        assert_eq!(SELECT_SYMBOLS.len(), 13);
        assert_eq!(SELECT_SYMBOLS[1], "select_p_job_test");
        assert_eq!(SELECT_SYMBOLS[6], "select_p_job_mem_reduce");
        assert_eq!(SELECT_SYMBOLS[12], "select_p_reconfigure");
    }

    #[test]
    fn select_linear_is_found_in_plugin_dir_or_the_error_says_where_it_looked() {
        // Where the release's packages put Slurm's plugins (Debian's and
        // SchedMD's differ), as slurm-sys linked libslurmfull from there.
        let installed = PathBuf::from(env!("SLURM_PLUGIN_DIR"));
        let dirs = vec![PathBuf::from("/nonexistent"), installed.clone()];
        assert_eq!(linear_path(&dirs).unwrap(), installed.join(LINEAR_FILE));
        let e = linear_path(&[PathBuf::from("/nonexistent")]).unwrap_err();
        assert!(e.contains("select_linear.so") && e.contains("/nonexistent"), "{e}");
        // Each of its operations resolves in the real select/linear.
        let handle = open(&installed.join(LINEAR_FILE)).unwrap();
        assert!(Linear::resolve(handle).is_ok());
    }
}
