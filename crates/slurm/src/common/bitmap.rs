//! An owned Slurm bitstring (`bitstr_t`), freed on drop.

use slurm_sys as sys;

pub struct Bitmap(*mut sys::bitstr_t);

impl Bitmap {
    /// All bits clear.
    pub fn new(bits: usize) -> Bitmap {
        // SAFETY: bit_alloc returns a fresh zeroed bitstring (it aborts via
        // xmalloc rather than return NULL).
        Bitmap(unsafe { sys::bit_alloc(bits.max(1) as sys::bitoff_t) })
    }

    /// A copy of a bitstring owned by someone else, or None for NULL.
    ///
    /// # Safety
    /// `p` must be NULL or a valid bitstring.
    pub unsafe fn copy_of(p: *mut sys::bitstr_t) -> Option<Bitmap> {
        // SAFETY: valid by the caller's contract.
        (!p.is_null()).then(|| Bitmap(unsafe { sys::bit_copy(p) }))
    }

    /// Take ownership of a raw bitstring (NULL gives an empty owner).
    ///
    /// # Safety
    /// `p` must be NULL or a bitstring nobody else frees.
    pub unsafe fn from_raw(p: *mut sys::bitstr_t) -> Bitmap {
        Bitmap(p)
    }

    /// Give up ownership, for storing into a Slurm record.
    pub fn into_raw(self) -> *mut sys::bitstr_t {
        let p = self.0;
        std::mem::forget(self);
        p
    }

    /// The bitstring, still owned here, for a call that only reads it.
    pub fn as_raw(&self) -> *mut sys::bitstr_t {
        self.0
    }

    pub fn len(&self) -> usize {
        if self.0.is_null() {
            return 0;
        }
        // SAFETY: non-null bitstring we own.
        unsafe { sys::bit_size(self.0) as usize }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn set(&mut self, bit: usize) {
        assert!(bit < self.len(), "bit {bit} outside a bitmap of {}", self.len());
        // SAFETY: in range, checked above.
        unsafe { sys::bit_set(self.0, bit as sys::bitoff_t) }
    }

    pub fn not(&mut self) {
        if !self.0.is_null() {
            // SAFETY: non-null bitstring we own.
            unsafe { sys::bit_not(self.0) }
        }
    }

    /// self |= other (the two must be the same size, as node bitmaps are).
    pub fn or(&mut self, other: &Bitmap) {
        assert_eq!(self.len(), other.len(), "bitmaps of different sizes");
        if !self.0.is_null() {
            // SAFETY: both valid and of equal size.
            unsafe { sys::bit_or(self.0, other.0) }
        }
    }
}

impl Drop for Bitmap {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: we own it; slurm_bit_free frees and NULLs the pointer.
            unsafe { sys::slurm_bit_free(&mut self.0) }
        }
    }
}

/// Indices of the set bits of a bitstring owned by slurmctld.
///
/// # Safety
/// `p` must be NULL or a valid bitstring, not changed during the call.
pub unsafe fn set_bits(p: *mut sys::bitstr_t) -> Vec<usize> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: valid by the caller's contract.
    let n = unsafe { sys::bit_size(p) };
    // SAFETY: every index is below bit_size.
    (0..n).filter(|&i| unsafe { sys::bit_test(p, i) } != 0).map(|i| i as usize).collect()
}
