//! The three symbols every Slurm plugin exports, whatever its kind:
//! `plugin_name`, `plugin_type` and `plugin_version`. Each kind's export
//! macro (`sched_plugin!`, and the SPANK and task plugins' to come) emits
//! them through [`plugin_header!`](crate::plugin_header), so the version is
//! always the one the bindings were generated from.

/// `s` followed by a NUL, as a fixed-size array for a `const char x[]` symbol.
pub const fn nul_terminated<const N: usize>(s: &str) -> [u8; N] {
    let b = s.as_bytes();
    assert!(b.len() + 1 == N, "array must be one longer than the string");
    let mut out = [0u8; N];
    let mut i = 0;
    while i < b.len() {
        assert!(b[i] != 0, "plugin strings may not contain NUL");
        out[i] = b[i];
        i += 1;
    }
    out
}

/// Emit `plugin_name`, `plugin_type` and `plugin_version`.
///
/// ```ignore
/// slurm::plugin_header!(name: "Malleable scheduler", type: "sched/malleable");
/// ```
#[macro_export]
macro_rules! plugin_header {
    (name: $name:literal, type: $ptype:literal) => {
        #[no_mangle]
        #[used]
        pub static plugin_name: [u8; $name.len() + 1] = $crate::common::plugin_header::nul_terminated($name);
        #[no_mangle]
        #[used]
        pub static plugin_type: [u8; $ptype.len() + 1] = $crate::common::plugin_header::nul_terminated($ptype);
        #[no_mangle]
        #[used]
        pub static plugin_version: u32 = $crate::SLURM_VERSION_NUMBER;
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_end_in_one_nul() {
        let a: [u8; 4] = super::nul_terminated("abc");
        assert_eq!(&a, b"abc\0");
    }
}
