//! A `log` backend that writes into the host daemon's own log (slurmctld.log,
//! slurmd's, or the user's terminal for sbatch), every line prefixed with the
//! plugin's type, always through a fixed "%s" format so no text of ours is
//! ever read as a printf format. It calls the log functions spank.h declares
//! (slurm_info, slurm_error, ...), which are the daemons' own info(), error()
//! and debug() and exist in every process that loads a plugin.

use log::{Level, LevelFilter, Log, Metadata, Record};
use once_cell::sync::OnceCell;
use slurm_sys as sys;

use crate::common::cstr::c_text;

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

/// Slurm's log levels this backend writes at.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlurmLevel {
    Error,
    Info,
    Debug,
    Debug2,
}

/// Write one line at a Slurm log level.
pub fn write(level: SlurmLevel, line: &str) {
    let text = c_text(line);
    let f = match level {
        SlurmLevel::Error => sys::slurm_error,
        SlurmLevel::Info => sys::slurm_info,
        SlurmLevel::Debug => sys::slurm_debug,
        SlurmLevel::Debug2 => sys::slurm_debug2,
    };
    // SAFETY: the log functions are variadic printf-likes; the format is the
    // constant "%s" and the single argument a NUL-terminated string alive
    // for the call.
    unsafe { f(c"%s".as_ptr(), text.as_ptr()) }
}

impl Log for SlurmLogger {
    fn enabled(&self, _: &Metadata) -> bool {
        true
    }

    fn log(&self, record: &Record) {
        let (level, tag) = match record.level() {
            Level::Error => (SlurmLevel::Error, ""),
            // 22.05 has no warning level: an info line that says so.
            Level::Warn => (SlurmLevel::Info, "warning: "),
            Level::Info => (SlurmLevel::Info, ""),
            Level::Debug => (SlurmLevel::Debug, ""),
            Level::Trace => (SlurmLevel::Debug2, ""),
        };
        write(level, &format!("{}: {tag}{}", self.prefix, record.args()));
    }

    fn flush(&self) {}
}
