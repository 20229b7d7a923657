//! What every plugin kind needs, in every daemon and command that loads one.

#[cfg(any(feature = "ctld", feature = "stepd"))]
pub mod bitmap;
pub mod clock;
pub mod cstr;
pub mod ffi_guard;
pub mod loader;
pub mod logger;
pub mod plugin_header;
pub mod refusal;
