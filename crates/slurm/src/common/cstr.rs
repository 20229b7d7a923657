//! C strings both ways: Slurm's (maybe NULL) into Rust, and ours into C with
//! any NUL made visible rather than cutting the text short.

use std::ffi::CString;

/// Copy a C string that may be NULL.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string valid for the call.
pub(crate) unsafe fn cstr_to_string(p: *const libc::c_char) -> Option<String> {
    // SAFETY: NULL or NUL-terminated and valid for the call (caller's
    // contract), and the borrow ends within it.
    (!p.is_null()).then(|| unsafe { cstr_borrow(p) }.into_owned())
}

/// Borrow a C string that may be NULL, without copying it: what a pass reads
/// of every node and job under slurmctld's locks only to parse it ("" for
/// NULL; invalid UTF-8 copied and repaired, as [`cstr_to_string`] does).
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn cstr_borrow<'a>(p: *const libc::c_char) -> std::borrow::Cow<'a, str> {
    if p.is_null() {
        std::borrow::Cow::Borrowed("")
    } else {
        // SAFETY: non-null, NUL-terminated and outliving 'a by the caller's contract.
        unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy()
    }
}

/// The text as a C string, with any NUL bytes made visible instead of
/// cutting the line short.
pub(crate) fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).expect("NULs were replaced")
}

/// Text of a Slurm error code, as `slurm_strerror` gives it.
pub fn strerror(code: i32) -> String {
    // SAFETY: slurm_strerror returns a pointer to a static string (or to a
    // thread-local buffer for unknown codes) that stays valid while we copy.
    unsafe { cstr_to_string(slurm_sys::slurm_strerror(code)) }.unwrap_or_else(|| format!("error {code}"))
}

/// The error code the last Slurm call left in this thread's errno, where
/// Slurm's API leaves it (22.05's `slurm_get_errno()` only returned errno;
/// 24.11 dropped it).
#[cfg(any(feature = "client", feature = "spank"))]
pub(crate) fn last_slurm_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_bytes_are_shown_not_cut() {
        assert_eq!(c_text("a\0b").to_str().unwrap(), "a\\0b");
    }

    #[test]
    fn error_codes_read_as_slurm_says_them() {
        assert_eq!(strerror(0), "No error");
        assert_eq!(strerror(2016), "Requested nodes are busy");
    }
}
