//! Every entry point slurmctld calls runs inside this guard: a Rust panic
//! must never unwind into C. It becomes SLURM_ERROR and a line in the log.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run `f`; on panic log it (naming `entry`) and return `on_panic`.
///
/// Unwind safety is asserted rather than proven: what a panicking closure
/// leaves half-done is the plugin's own state (slurmctld's locks are released
/// by their guards while unwinding), and the caller learns of it through the
/// error value.
pub fn guard<T>(entry: &str, on_panic: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            log::error!("panic in {entry}: {}", panic_message(&payload));
            on_panic
        }
    }
}

/// The text of a panic payload (what `panic!` was given).
pub fn panic_message(payload: &Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-text panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_error_value() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let rc = guard("test", -1, || -> i32 { panic!("boom {}", 42) });
        std::panic::set_hook(prev);
        assert_eq!(rc, -1);
    }

    #[test]
    fn a_normal_return_passes_through() {
        assert_eq!(guard("test", -1, || 7), 7);
    }

    #[test]
    fn panic_messages_are_recovered() {
        let p = catch_unwind(|| panic!("left {}", "right")).unwrap_err();
        assert_eq!(panic_message(&p), "left right");
        let p = catch_unwind(|| panic!("static")).unwrap_err();
        assert_eq!(panic_message(&p), "static");
    }
}
