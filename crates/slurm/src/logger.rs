//! A `log` backend that writes into the daemon's own log (slurmctld.log),
//! every line prefixed with the plugin's type, always through a fixed "%s"
//! format so no text of ours is ever read as a printf format.

use std::ffi::CString;

use log::{Level, LevelFilter, Log, Metadata, Record};
use once_cell::sync::OnceCell;
use slurm_sys as sys;

struct SlurmLogger {
    prefix: &'static str,
}

static LOGGER: OnceCell<SlurmLogger> = OnceCell::new();

/// Install the backend (once per loaded .so; later calls keep the first prefix).
pub fn init(prefix: &'static str) {
    let logger = LOGGER.get_or_init(|| SlurmLogger { prefix });
    // Fails only if already set, which is fine after a reconfigure.
    let _ = log::set_logger(logger);
    // Slurm filters by its own configured level; give it everything.
    log::set_max_level(LevelFilter::Trace);
}

/// The text as a C string, with any NUL bytes made visible instead of
/// cutting the line short.
pub(crate) fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).expect("NULs were replaced")
}

/// Write one line at a Slurm log level.
pub fn write(level: sys::log_level_t, line: &str) {
    let text = c_text(line);
    // SAFETY: log_var is variadic; the format is the constant "%s" and the
    // single argument a NUL-terminated string alive for the call.
    unsafe { sys::log_var(level, c"%s".as_ptr(), text.as_ptr()) }
}

impl Log for SlurmLogger {
    fn enabled(&self, _: &Metadata) -> bool {
        true
    }

    fn log(&self, record: &Record) {
        let (level, tag) = match record.level() {
            Level::Error => (sys::log_level_t_LOG_LEVEL_ERROR, ""),
            // 22.05 has no warning level: an info line that says so.
            Level::Warn => (sys::log_level_t_LOG_LEVEL_INFO, "warning: "),
            Level::Info => (sys::log_level_t_LOG_LEVEL_INFO, ""),
            Level::Debug => (sys::log_level_t_LOG_LEVEL_DEBUG, ""),
            Level::Trace => (sys::log_level_t_LOG_LEVEL_DEBUG2, ""),
        };
        write(level, &format!("{}: {tag}{}", self.prefix, record.args()));
    }

    fn flush(&self) {}
}
