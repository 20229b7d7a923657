//! Open a built plugin the way slurmctld does (dlopen) and read its symbols,
//! for the symbol check that runs on every .so before any cluster test.

use std::ffi::{CStr, CString};

/// A dlopen'ed shared object, closed on drop.
pub struct LoadedObject {
    handle: *mut libc::c_void,
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libdl.
    unsafe { crate::common::cstr::cstr_to_string(libc::dlerror()) }.unwrap_or_else(|| "unknown dlopen error".into())
}

impl LoadedObject {
    /// dlopen with RTLD_NOW, so any symbol the object needs and nothing
    /// provides is an error here rather than a crash in slurmctld.
    pub fn open(path: &std::path::Path) -> Result<LoadedObject, String> {
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: a valid path string; running the object's initialisers is
        // what loading it means (ours have none beyond Rust's runtime).
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            Err(format!("dlopen {}: {}", path.display(), dl_error()))
        } else {
            Ok(LoadedObject { handle })
        }
    }

    fn sym(&self, name: &str) -> Option<*mut libc::c_void> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        (!p.is_null()).then_some(p)
    }

    /// Whether the object defines `name`.
    pub fn has(&self, name: &str) -> bool {
        self.sym(name).is_some()
    }

    /// A `const char name[]` symbol's text.
    pub fn string(&self, name: &str) -> Option<String> {
        // SAFETY: the caller names a NUL-terminated char array symbol; the
        // object stays loaded while we copy it.
        self.sym(name).map(|p| unsafe { CStr::from_ptr(p.cast()) }.to_string_lossy().into_owned())
    }

    /// A `const uint32_t name` symbol's value.
    pub fn u32(&self, name: &str) -> Option<u32> {
        // SAFETY: the caller names a uint32_t symbol; aligned by the compiler.
        self.sym(name).map(|p| unsafe { *(p as *const u32) })
    }
}

impl Drop for LoadedObject {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and is closed once.
        unsafe {
            libc::dlclose(self.handle);
        }
    }
}
