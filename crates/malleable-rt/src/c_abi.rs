//! The runtime's C ABI: `extern "C"` functions over [`Runtime`], for C
//! (and Fortran, C++, ...) applications linking `libmalleable_rt.so`. The
//! header `include/malleable_rt.h` is cbindgen's reading of this file.
//!
//! Conventions: every `int` function returns 0 on success and -1 on error,
//! with the reason in `mall_last_error()` (`MALL_LOST`, -2, when the job
//! lost workers with their nodes: the worker drops what it was doing and
//! calls `mall_probe`, which answers `MALL_RECOVER`); a NULL pointer argument is an
//! error, not a crash; no Rust panic crosses into C (each body runs under
//! `catch_unwind`). Memory the runtime hands to C comes from C's `malloc`
//! and goes back with `mall_free`. What the `unsafe` blocks rely on is in
//! docs/SAFETY.md ("The runtime's C ABI").

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::worker::{Adaptation, Error, Result, Runtime};

/// The probe found nothing to do (`mall_probe`'s action).
pub const MALL_NONE: c_int = 0;
/// The job grew: the workers, and those started on the new nodes, adapt.
pub const MALL_EXPAND: c_int = 1;
/// The job is to leave some nodes: every worker adapts, those there leave.
pub const MALL_SHRINK: c_int = 2;
/// The job lost nodes (they failed; it was submitted with --no-kill): the
/// workers there are gone; the others adapt, and `mall_redistribute` hands
/// out the last checkpoint (`mall_checkpoint`), whose iteration
/// `mall_restart_iteration` gives.
pub const MALL_RECOVER: c_int = 3;
/// What a call returns when the job lost workers meanwhile: the call was
/// abandoned; the worker is to call `mall_probe`.
pub const MALL_LOST: c_int = -2;

/// One worker's runtime: its connection to mall-run's hub. Opaque to C:
/// made by `mall_init`, ended (and freed) by `mall_finish`; used from one
/// thread at a time.
#[allow(non_camel_case_types)]
pub struct mall_rt {
    rt: Runtime,
}

thread_local! {
    /// This thread's last error, as `mall_last_error` hands it out.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(message: &str) {
    // A NUL inside the text would cut it short in C: show it instead.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // Only fails while the thread is being torn down; then nobody can ask.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
}

fn clear_error() {
    let _ = LAST_ERROR.try_with(|e| {
        if !e.borrow().is_empty() {
            *e.borrow_mut() = CString::default();
        }
    });
}

/// The text of a panic's payload (`panic!` with a literal or a format).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// Run one C call's body: its error, or a panic, becomes -1 and this
/// thread's last error; success is 0 and clears it.
fn guard(function: &str, body: impl FnOnce() -> Result<()>) -> c_int {
    clear_error();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            set_error(&e.0);
            if e.is_lost() {
                MALL_LOST
            } else {
                -1
            }
        }
        Err(payload) => {
            set_error(&format!("{function}: malleable-rt panicked (a bug): {}", panic_text(payload.as_ref())));
            -1
        }
    }
}

/// `p`, or an error naming the argument when it is NULL.
fn non_null<T>(p: *mut T, function: &str, arg: &str) -> Result<*mut T> {
    if p.is_null() {
        Err(Error(format!("{function}: {arg} is NULL")))
    } else {
        Ok(p)
    }
}

/// The handle behind `rt`, or an error when it is NULL.
///
/// # Safety
/// `rt` is NULL or a handle from `mall_init` not yet given to
/// `mall_finish`, used by no other thread meanwhile.
unsafe fn handle<'a>(rt: *mut mall_rt, function: &str) -> Result<&'a mut Runtime> {
    let rt = non_null(rt, function, "rt")?;
    // SAFETY: non-NULL, and by the caller's contract a live, exclusively
    // used Box<mall_rt> from mall_init (docs/SAFETY.md, "handles").
    Ok(unsafe { &mut (*rt).rt })
}

/// Store `value` where `out` points, or an error when `out` is NULL.
///
/// # Safety
/// `out` is NULL or valid for a write of a `T` and aligned for it.
unsafe fn put<T>(out: *mut T, value: T, function: &str, arg: &str) -> Result<()> {
    let out = non_null(out, function, arg)?;
    // SAFETY: non-NULL; valid and aligned by the caller's contract. `T` is
    // a plain C value (integer, pointer), so nothing is dropped.
    unsafe { out.write(value) };
    Ok(())
}

/// The `len` bytes at `data` (NULL allowed when `len` is 0).
///
/// # Safety
/// When `len` > 0, `data` is NULL or valid for reads of `len` bytes that
/// nothing writes during the call.
unsafe fn bytes_in<'a>(data: *const c_void, len: usize, function: &str, arg: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    let data = non_null(data.cast_mut(), function, arg)?;
    if len > isize::MAX as usize {
        return Err(Error(format!("{function}: {len} bytes are more than a buffer can hold")));
    }
    // SAFETY: non-NULL, `len` readable bytes by the caller's contract, and
    // `len` is at most isize::MAX; u8 needs no alignment.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// `bytes` copied into memory from C's `malloc`, for C to give back with
/// `mall_free`: never NULL (an empty buffer is a 1-byte allocation).
fn to_c(bytes: &[u8], function: &str) -> Result<*mut c_void> {
    // SAFETY: malloc may be called with any size; its result is checked.
    let p = unsafe { libc::malloc(bytes.len().max(1)) };
    if p.is_null() {
        return Err(Error(format!("{function}: out of memory for {} bytes", bytes.len())));
    }
    // SAFETY: `p` is a fresh allocation of at least `bytes.len()` bytes,
    // so it is valid for the writes and overlaps nothing.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.cast::<u8>(), bytes.len()) };
    Ok(p)
}

/// Hand `bytes` (items of `item_size`) to C: the buffer through `out`,
/// the number of items through `count`.
///
/// # Safety
/// `out` and `count` are NULL or valid, aligned places to write.
unsafe fn hand_out(
    bytes: &[u8],
    item_size: usize,
    (out, out_arg): (*mut *mut c_void, &str),
    (count, count_arg): (*mut usize, &str),
    function: &str,
) -> Result<()> {
    let out = non_null(out, function, out_arg)?;
    let count = non_null(count, function, count_arg)?;
    let p = to_c(bytes, function)?;
    // SAFETY: both non-NULL, valid and aligned by the caller's contract.
    unsafe {
        out.write(p);
        count.write(bytes.len() / item_size);
    }
    Ok(())
}

fn c_u32(n: usize, function: &str, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error(format!("{function}: {what} {n} does not fit in 32 bits")))
}

/// Connect this worker to mall-run's hub (the address and token are in
/// the environment mall-run starts it with); as `MPI_Init_adapt` in iMPI.
/// `*out` receives the handle (NULL on error). `*joining` receives the
/// adaptation this worker was started for, or 0: a joining worker calls
/// `mall_begin`, `mall_redistribute` and `mall_commit` before anything else.
///
/// # Safety
/// `out` and `joining` are NULL or valid, aligned places to write.
#[no_mangle]
pub unsafe extern "C" fn mall_init(out: *mut *mut mall_rt, joining: *mut u64) -> c_int {
    guard("mall_init", || {
        let out = non_null(out, "mall_init", "out")?;
        let joining = non_null(joining, "mall_init", "joining")?;
        // SAFETY: checked non-NULL; valid and aligned by the contract.
        unsafe { out.write(std::ptr::null_mut()) };
        let rt = Runtime::init()?;
        // SAFETY: as above.
        unsafe { joining.write(rt.joining().unwrap_or(0)) };
        let handle = Box::into_raw(Box::new(mall_rt { rt }));
        // SAFETY: as above.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// This worker's rank among the job's workers, from 0.
///
/// # Safety
/// `rt` is NULL or a live handle (see `mall_init`); `rank` is NULL or a
/// valid, aligned place to write.
#[no_mangle]
pub unsafe extern "C" fn mall_rank(rt: *mut mall_rt, rank: *mut u32) -> c_int {
    guard("mall_rank", || {
        // SAFETY: as this function's contract says.
        let r = unsafe { handle(rt, "mall_rank") }?.rank();
        // SAFETY: as this function's contract says.
        unsafe { put(rank, c_u32(r, "mall_rank", "rank")?, "mall_rank", "rank") }
    })
}

/// How many workers the job has.
///
/// # Safety
/// As `mall_rank`.
#[no_mangle]
pub unsafe extern "C" fn mall_size(rt: *mut mall_rt, size: *mut u32) -> c_int {
    guard("mall_size", || {
        // SAFETY: as this function's contract says.
        let s = unsafe { handle(rt, "mall_size") }?.size();
        // SAFETY: as this function's contract says.
        unsafe { put(size, c_u32(s, "mall_size", "size")?, "mall_size", "size") }
    })
}

/// Whether mall-run runs the application in restart mode (`mall-run --mpi
/// restart`, an MPI application's): `*restarts` receives 1 or 0. In restart
/// mode, at a resize every worker saves its data with `mall_checkpoint` and
/// calls `mall_finish` (then `MPI_Finalize` and exit); the step started on
/// the new nodes is joining (`mall_init`'s `*joining` is not 0): its workers
/// call `mall_begin`, `mall_redistribute` (which hands each its share of
/// the checkpoint, and `mall_restart_iteration` its iteration) and
/// `mall_commit`.
///
/// # Safety
/// `rt` is NULL or a live handle; `restarts` is NULL or a valid, aligned
/// place to write.
#[no_mangle]
pub unsafe extern "C" fn mall_restarts(rt: *mut mall_rt, restarts: *mut c_int) -> c_int {
    const F: &str = "mall_restarts";
    guard(F, || {
        // SAFETY: as this function's contract says.
        let r = unsafe { handle(rt, F) }?.restarts();
        // SAFETY: as this function's contract says.
        unsafe { put(restarts, c_int::from(r), F, "restarts") }
    })
}

/// At a safe point (collective): should the job adapt now? As
/// `MPI_Probe_adapt` in iMPI. `*action` receives `MALL_NONE`, `MALL_EXPAND`
/// or `MALL_SHRINK`, `*new_size` the number of workers after it (the
/// current number for `MALL_NONE`). After an expand or shrink, every worker
/// calls `mall_begin`, `mall_redistribute`, then `mall_commit` (or
/// `mall_finish` when leaving).
///
/// # Safety
/// `rt` is NULL or a live handle; `action` and `new_size` are NULL or
/// valid, aligned places to write.
#[no_mangle]
pub unsafe extern "C" fn mall_probe(rt: *mut mall_rt, action: *mut c_int, new_size: *mut u32) -> c_int {
    const F: &str = "mall_probe";
    guard(F, || {
        non_null(action, F, "action")?;
        non_null(new_size, F, "new_size")?;
        // SAFETY: as this function's contract says.
        let rt = unsafe { handle(rt, F) }?;
        let (a, size) = match rt.probe()? {
            Adaptation::None => (MALL_NONE, rt.size()),
            Adaptation::Expand { size, .. } => (MALL_EXPAND, size),
            Adaptation::Shrink { size, lost: false, .. } => (MALL_SHRINK, size),
            Adaptation::Shrink { size, lost: true, .. } => (MALL_RECOVER, size),
        };
        // SAFETY: as this function's contract says.
        unsafe { put(action, a, F, "action") }?;
        // SAFETY: as this function's contract says.
        unsafe { put(new_size, c_u32(size, F, "size")?, F, "new_size") }
    })
}

/// Begin the adaptation the last probe (or `mall_init`, when joining)
/// found (collective, joining workers included); as
/// `MPI_Comm_adapt_begin` in iMPI. `*rank` and `*size` receive this
/// worker's rank and the number of workers after the adaptation, `*leaving`
/// 1 when this worker leaves (it still redistributes, then finishes).
///
/// # Safety
/// `rt` is NULL or a live handle; `rank`, `size` and `leaving` are NULL or
/// valid, aligned places to write.
#[no_mangle]
pub unsafe extern "C" fn mall_begin(rt: *mut mall_rt, rank: *mut u32, size: *mut u32, leaving: *mut c_int) -> c_int {
    const F: &str = "mall_begin";
    guard(F, || {
        non_null(rank, F, "rank")?;
        non_null(size, F, "size")?;
        non_null(leaving, F, "leaving")?;
        // SAFETY: as this function's contract says.
        let b = unsafe { handle(rt, F) }?.begin()?;
        // SAFETY: as this function's contract says (the three writes).
        unsafe {
            put(rank, c_u32(b.rank, F, "rank")?, F, "rank")?;
            put(size, c_u32(b.size, F, "size")?, F, "size")?;
            put(leaving, c_int::from(b.leaving), F, "leaving")
        }
    })
}

/// Move the data to the workers after the adaptation (collective, joining
/// workers included), as DMR's send and receive steps of
/// `DMR_RECONFIGURATION` do: this worker gives its `count` items of
/// `item_size` bytes each (its block, in global order; `data` may be NULL
/// when `count` is 0, as for a joining worker) and receives its block after
/// the adaptation: the items of all workers in rank order, split into equal
/// blocks over the workers that stay and join, the first ones one item more
/// when it does not divide. `*out` receives the block (never NULL, free it
/// with `mall_free`), `*out_count` its number of items (0 for a leaving
/// worker). The bytes travel as they are: every worker runs on the same
/// kind of machine.
///
/// # Safety
/// `rt` is NULL or a live handle; `data` is NULL or valid for reads of
/// `item_size * count` bytes; `out` and `out_count` are NULL or valid,
/// aligned places to write.
#[no_mangle]
pub unsafe extern "C" fn mall_redistribute(
    rt: *mut mall_rt,
    data: *const c_void,
    item_size: usize,
    count: usize,
    out: *mut *mut c_void,
    out_count: *mut usize,
) -> c_int {
    const F: &str = "mall_redistribute";
    guard(F, || {
        non_null(out, F, "out")?;
        non_null(out_count, F, "out_count")?;
        let len = item_size
            .checked_mul(count)
            .ok_or_else(|| Error(format!("{F}: {count} items of {item_size} bytes are too many bytes")))?;
        // SAFETY: as this function's contract says.
        let rt = unsafe { handle(rt, F) }?;
        // SAFETY: as this function's contract says.
        let mine = unsafe { bytes_in(data, len, F, "data") }?;
        let moved = rt.redistribute(mine, item_size)?;
        if !moved.len().is_multiple_of(item_size) {
            return Err(Error(format!(
                "{F}: mall-run's hub sent {} bytes, not a whole number of items of {item_size}",
                moved.len()
            )));
        }
        // SAFETY: as this function's contract says.
        unsafe { hand_out(&moved, item_size, (out, "out"), (out_count, "out_count"), F) }
    })
}

/// Save this worker's `count` items of `item_size` bytes at `iteration`
/// with mall-run (collective): if the job loses workers, the others go on
/// from the last checkpoint every worker saved.
///
/// # Safety
/// `rt` is NULL or a live handle; `data` is NULL or valid for reads of
/// `item_size * count` bytes.
#[no_mangle]
pub unsafe extern "C" fn mall_checkpoint(
    rt: *mut mall_rt,
    iteration: u64,
    data: *const c_void,
    item_size: usize,
    count: usize,
) -> c_int {
    const F: &str = "mall_checkpoint";
    guard(F, || {
        let len = item_size
            .checked_mul(count)
            .ok_or_else(|| Error(format!("{F}: {count} items of {item_size} bytes are too many bytes")))?;
        // SAFETY: as this function's contract says.
        let rt = unsafe { handle(rt, F) }?;
        // SAFETY: as this function's contract says.
        let mine = unsafe { bytes_in(data, len, F, "data") }?;
        rt.checkpoint(iteration, mine, item_size)
    })
}

/// After a redistribution that handed out the checkpoint (after lost
/// workers, or a restart-mode joiner's): `*iteration` receives the
/// checkpoint's iteration and `*restarted` 1; after any other
/// redistribution, `*restarted` receives 0.
///
/// # Safety
/// `rt` is NULL or a live handle; `iteration` and `restarted` are NULL or
/// valid, aligned places to write.
#[no_mangle]
pub unsafe extern "C" fn mall_restart_iteration(rt: *mut mall_rt, iteration: *mut u64, restarted: *mut c_int) -> c_int {
    const F: &str = "mall_restart_iteration";
    guard(F, || {
        non_null(iteration, F, "iteration")?;
        non_null(restarted, F, "restarted")?;
        // SAFETY: as this function's contract says.
        let from = unsafe { handle(rt, F) }?.restart_iteration();
        // SAFETY: as this function's contract says.
        unsafe {
            put(iteration, from.unwrap_or(0), F, "iteration")?;
            put(restarted, c_int::from(from.is_some()), F, "restarted")
        }
    })
}

/// The adaptation is done on this worker's side: it runs on with its new
/// rank (as `MPI_Comm_adapt_commit` in iMPI). mall-run commits the
/// adaptation to the scheduler once every worker has, and every leaving
/// one has finished. A leaving worker calls `mall_finish` instead.
///
/// # Safety
/// `rt` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mall_commit(rt: *mut mall_rt) -> c_int {
    // SAFETY: as this function's contract says.
    guard("mall_commit", || unsafe { handle(rt, "mall_commit") }?.commit())
}

/// Tell the scheduler what the last `iterations` iterations cost: seconds
/// computing and seconds communicating (their ratio is the MTCT ratio of
/// Chadha et al. 2020). The node's measured draw goes with it, when RAPL
/// is readable.
///
/// # Safety
/// `rt` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mall_report(rt: *mut mall_rt, iterations: u32, compute_s: f64, comm_s: f64) -> c_int {
    guard("mall_report", || {
        // SAFETY: as this function's contract says.
        unsafe { handle(rt, "mall_report") }?.report(iterations, compute_s, comm_s)
    })
}

/// `mall_report` with the times the runtime measured since the last
/// report: communication is the time spent in its calls, computation the
/// rest.
///
/// # Safety
/// `rt` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mall_report_measured(rt: *mut mall_rt, iterations: u32) -> c_int {
    guard("mall_report_measured", || {
        // SAFETY: as this function's contract says.
        unsafe { handle(rt, "mall_report_measured") }?.report_measured(iterations)
    })
}

/// Ask, at the application's own sync point, whether the scheduler has an
/// adaptation for the job (DMR's question to Slurm); `*yes` receives 1 or
/// 0. The next `mall_probe` carries the adaptation out.
///
/// # Safety
/// `rt` is NULL or a live handle; `yes` is NULL or a valid, aligned place
/// to write.
#[no_mangle]
pub unsafe extern "C" fn mall_should_reconfigure(rt: *mut mall_rt, yes: *mut c_int) -> c_int {
    const F: &str = "mall_should_reconfigure";
    guard(F, || {
        non_null(yes, F, "yes")?;
        // SAFETY: as this function's contract says.
        let answer = unsafe { handle(rt, F) }?.should_reconfigure()?;
        // SAFETY: as this function's contract says.
        unsafe { put(yes, c_int::from(answer), F, "yes") }
    })
}

/// The element-wise sum of `n` doubles over all workers (collective), as
/// `MPI_Allreduce` with `MPI_SUM`: `out[i]` receives the sum of every
/// worker's `in[i]`. `in` and `out` may be the same array; both may be NULL
/// when `n` is 0.
///
/// # Safety
/// `rt` is NULL or a live handle; `in` is NULL or valid for reads of `n`
/// doubles, `out` NULL or valid for writes of `n` doubles, both aligned.
#[no_mangle]
pub unsafe extern "C" fn mall_allreduce_sum(rt: *mut mall_rt, r#in: *const f64, out: *mut f64, n: usize) -> c_int {
    const F: &str = "mall_allreduce_sum";
    guard(F, || {
        if n > 0 {
            non_null(r#in.cast_mut(), F, "in")?;
            non_null(out, F, "out")?;
        }
        if n > isize::MAX as usize / 8 {
            return Err(Error(format!("{F}: {n} doubles are more than a buffer can hold")));
        }
        let mine: Vec<f64> = if n == 0 {
            Vec::new()
        } else {
            // SAFETY: non-NULL, `n` aligned doubles readable by the
            // contract; copied out before `out` (maybe the same) is written.
            unsafe { std::slice::from_raw_parts(r#in, n) }.to_vec()
        };
        // SAFETY: as this function's contract says.
        let sums = unsafe { handle(rt, F) }?.allreduce_sum(&mine)?;
        if sums.len() != n {
            return Err(Error(format!("{F}: mall-run's hub sent {} sums for {n} values", sums.len())));
        }
        if n > 0 {
            // SAFETY: `out` is non-NULL and valid for `n` aligned doubles by
            // the contract; `sums` is our own vector of exactly `n`.
            unsafe { std::ptr::copy_nonoverlapping(sums.as_ptr(), out, n) };
        }
        Ok(())
    })
}

/// Wait for every worker (collective), as `MPI_Barrier`.
///
/// # Safety
/// `rt` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mall_barrier(rt: *mut mall_rt) -> c_int {
    // SAFETY: as this function's contract says.
    guard("mall_barrier", || unsafe { handle(rt, "mall_barrier") }?.barrier())
}

/// Send `len` bytes to worker `to`; it does not wait for the receiver.
/// `bytes` may be NULL when `len` is 0.
///
/// # Safety
/// `rt` is NULL or a live handle; `bytes` is NULL or valid for reads of
/// `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mall_send(rt: *mut mall_rt, to: u32, bytes: *const c_void, len: usize) -> c_int {
    const F: &str = "mall_send";
    guard(F, || {
        // SAFETY: as this function's contract says.
        let rt = unsafe { handle(rt, F) }?;
        // SAFETY: as this function's contract says.
        let msg = unsafe { bytes_in(bytes, len, F, "bytes") }?;
        rt.send(to as usize, msg)
    })
}

/// The next message from worker `from`, waiting for it: `*out` receives
/// its bytes (never NULL, free them with `mall_free`), `*len` how many.
///
/// # Safety
/// `rt` is NULL or a live handle; `out` and `len` are NULL or valid,
/// aligned places to write.
#[no_mangle]
pub unsafe extern "C" fn mall_recv(rt: *mut mall_rt, from: u32, out: *mut *mut c_void, len: *mut usize) -> c_int {
    const F: &str = "mall_recv";
    guard(F, || {
        non_null(out, F, "out")?;
        non_null(len, F, "len")?;
        // SAFETY: as this function's contract says.
        let msg = unsafe { handle(rt, F) }?.recv(from as usize)?;
        // SAFETY: as this function's contract says.
        unsafe { hand_out(&msg, 1, (out, "out"), (len, "len"), F) }
    })
}

/// This worker is done: it has finished its work, or it leaves the job
/// after a shrink. Frees the handle, also when it returns -1 (the goodbye
/// did not reach mall-run): `rt` is not to be used again.
///
/// # Safety
/// `rt` is NULL or a live handle, which this call takes.
#[no_mangle]
pub unsafe extern "C" fn mall_finish(rt: *mut mall_rt) -> c_int {
    guard("mall_finish", || {
        let rt = non_null(rt, "mall_finish", "rt")?;
        // SAFETY: a live handle from mall_init's Box::into_raw, which the
        // caller gives up here (docs/SAFETY.md, "handles").
        let handle = unsafe { Box::from_raw(rt) };
        handle.rt.finish()
    })
}

/// Free what the runtime handed out (`mall_redistribute`'s and
/// `mall_recv`'s buffers). NULL is allowed and does nothing. Leaves
/// `mall_last_error` as it is.
///
/// # Safety
/// `p` is NULL or a buffer from this runtime not yet freed.
#[no_mangle]
pub unsafe extern "C" fn mall_free(p: *mut c_void) {
    // Nothing here can panic; the guard is for the rule's sake.
    let _ = catch_unwind(|| {
        // SAFETY: `p` is NULL (free does nothing) or came from libc::malloc
        // in `to_c` and is freed once, by the caller's contract.
        unsafe { libc::free(p) }
    });
}

/// How many CPUs the calling thread may run on now: task/drom changes it
/// when SD-Policy starts a job on some of this job's cores, or gives them
/// back; a threaded application asks at its safe points and resizes its
/// pool. -1 (with `mall_last_error`) when it cannot be read. Needs no handle.
#[no_mangle]
pub extern "C" fn mall_cores() -> c_int {
    let mut n = 0;
    let rc = guard("mall_cores", || {
        n = crate::cores::cores().map_err(|e| crate::Error(format!("mall_cores: {e}")))?;
        Ok(())
    });
    if rc == 0 {
        c_int::try_from(n).unwrap_or(c_int::MAX)
    } else {
        rc
    }
}

/// The reason of this thread's last failed call, or "" when its last call
/// succeeded. Never NULL; valid until this thread's next call of a `mall_`
/// function (`mall_free` and `mall_last_error` leave it).
#[no_mangle]
pub extern "C" fn mall_last_error() -> *const c_char {
    const EMPTY: &CStr = c"";
    catch_unwind(|| LAST_ERROR.try_with(|e| e.borrow().as_ptr()).unwrap_or(EMPTY.as_ptr())).unwrap_or(EMPTY.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Frame;
    use std::io::{BufReader, BufWriter};
    use std::net::TcpListener;
    use std::ptr::{null, null_mut};

    fn last_error() -> String {
        // SAFETY: mall_last_error returns a NUL-terminated string valid
        // until this thread's next call; it is copied at once.
        unsafe { CStr::from_ptr(mall_last_error()) }.to_string_lossy().into_owned()
    }

    /// The call failed with `want` as its reason.
    fn fails(rc: c_int, want: &str) {
        assert_eq!((rc, last_error()), (-1, want.to_string()));
    }

    #[test]
    fn null_arguments_are_errors_that_say_which() {
        let (mut rank, mut action, mut joining) = (0u32, 0, 0u64);
        let mut p: *mut c_void = null_mut();
        let mut n = 0usize;
        let mut rt: *mut mall_rt = null_mut();
        // SAFETY: every argument is NULL or a valid local.
        unsafe {
            fails(mall_init(null_mut(), &mut joining), "mall_init: out is NULL");
            fails(mall_init(&mut rt, null_mut()), "mall_init: joining is NULL");
            fails(mall_rank(null_mut(), &mut rank), "mall_rank: rt is NULL");
            fails(mall_size(null_mut(), &mut rank), "mall_size: rt is NULL");
            fails(mall_probe(null_mut(), &mut action, null_mut()), "mall_probe: new_size is NULL");
            fails(mall_probe(null_mut(), &mut action, &mut rank), "mall_probe: rt is NULL");
            fails(mall_begin(null_mut(), &mut rank, &mut rank, null_mut()), "mall_begin: leaving is NULL");
            fails(mall_redistribute(null_mut(), null(), 8, 0, &mut p, &mut n), "mall_redistribute: rt is NULL");
            fails(mall_redistribute(null_mut(), null(), 8, 1, null_mut(), &mut n), "mall_redistribute: out is NULL");
            fails(mall_commit(null_mut()), "mall_commit: rt is NULL");
            fails(mall_report(null_mut(), 1, 0.0, 0.0), "mall_report: rt is NULL");
            fails(mall_report_measured(null_mut(), 1), "mall_report_measured: rt is NULL");
            fails(mall_should_reconfigure(null_mut(), null_mut()), "mall_should_reconfigure: yes is NULL");
            fails(mall_allreduce_sum(null_mut(), null(), null_mut(), 1), "mall_allreduce_sum: in is NULL");
            fails(mall_barrier(null_mut()), "mall_barrier: rt is NULL");
            fails(mall_send(null_mut(), 0, null(), 0), "mall_send: rt is NULL");
            fails(mall_recv(null_mut(), 0, &mut p, null_mut()), "mall_recv: len is NULL");
            fails(mall_finish(null_mut()), "mall_finish: rt is NULL");
        }
        assert!(p.is_null() && n == 0 && rt.is_null(), "nothing was handed out");
    }

    #[test]
    fn init_without_the_environment_fails_with_the_runtimes_message() {
        let mut rt: *mut mall_rt = std::ptr::dangling_mut();
        let mut joining = 0u64;
        // SAFETY: both arguments are valid locals.
        assert_eq!(unsafe { mall_init(&mut rt, &mut joining) }, -1);
        assert!(rt.is_null(), "no handle on error");
        let want = Runtime::init().err().expect("no MALL_HUB in a test").0;
        assert_eq!(last_error(), want);
        assert!(want.contains("mall-run"), "{want}");
        // mall_free leaves the error; a successful call clears it.
        // SAFETY: NULL is allowed.
        unsafe { mall_free(null_mut()) };
        assert_eq!(last_error(), want);
        assert_eq!(guard("t", || Ok(())), 0);
        assert_eq!(last_error(), "");
    }

    #[test]
    fn a_panic_becomes_an_error_and_a_nul_is_shown() {
        assert_eq!(guard("mall_x", || panic!("boom {}", 1)), -1);
        assert_eq!(last_error(), "mall_x: malleable-rt panicked (a bug): boom 1");
        assert_eq!(guard("mall_x", || Err(Error("a\0b".into()))), -1);
        assert_eq!(last_error(), "a\\0b");
        // The error is per thread.
        std::thread::spawn(|| assert_eq!(last_error(), "")).join().unwrap();
        assert_eq!(last_error(), "a\\0b");
    }

    /// A hub for one worker: each request gets the answer a one-worker job
    /// expanding to two would give.
    fn fake_hub() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut w = BufWriter::new(stream);
            while let Ok(Some(f)) = Frame::read_from(&mut r) {
                let reply = match f.verb.as_str() {
                    "HELLO" => Frame::new("WELCOME").with("rank", 0).with("size", 1).with("joining", 0),
                    "PROBE" => Frame::new("EXPAND").with("resize", 7).with("nodes", "n2").with("size", 2),
                    "BEGIN" => Frame::new("BEGUN").with("rank", 0).with("size", 2).with("leaving", 0),
                    // The first half of the items stays.
                    "REDIST" => Frame::new("DATA").with_payload(f.payload[..f.payload.len() / 2].to_vec()),
                    "COMMIT" => Frame::new("COMMITTED").with("rank", 0).with("size", 2),
                    "ALLREDUCE" => {
                        let doubled: Vec<f64> =
                            crate::wire::bytes_to_f64s(&f.payload).unwrap().iter().map(|x| 2.0 * x).collect();
                        Frame::new("RESULT").with_payload(crate::wire::f64s_to_bytes(&doubled))
                    }
                    "RECV" => Frame::new("MSG").with_payload(b"hello".to_vec()),
                    "SHOULD" => Frame::new("ANSWER").with("yes", 1),
                    "BYE" => Frame::new("OK"),
                    _ => Frame::new("OK"),
                };
                reply.write_to(&mut w).unwrap();
            }
        });
        addr
    }

    #[test]
    fn a_whole_adaptation_through_the_c_calls() {
        let rt = Runtime::connect(&fake_hub(), "token", "0").unwrap();
        let rt = Box::into_raw(Box::new(mall_rt { rt }));
        let (mut rank, mut size, mut action, mut leaving, mut yes) = (9u32, 9u32, -1, -1, -1);
        let mut p: *mut c_void = null_mut();
        let mut n = 0usize;
        let block = [1.0f64, 2.0, 3.0, 4.0];
        let mut sums = [1.5f64, -2.0];
        // SAFETY: `rt` is a live handle until mall_finish; every other
        // argument is a valid local; `p` comes from the runtime.
        unsafe {
            assert_eq!(mall_rank(rt, &mut rank), 0);
            assert_eq!(mall_size(rt, &mut size), 0);
            assert_eq!((rank, size), (0, 1));
            assert_eq!(mall_probe(rt, &mut action, &mut size), 0);
            assert_eq!((action, size), (MALL_EXPAND, 2));
            // Out of order: the runtime's own message comes through.
            assert_eq!(mall_probe(rt, &mut action, &mut size), -1);
            assert!(last_error().starts_with("probe: an adaptation is under way"), "{}", last_error());
            assert_eq!(mall_begin(rt, &mut rank, &mut size, &mut leaving), 0);
            assert_eq!((rank, size, leaving), (0, 2, 0));
            assert_eq!(mall_redistribute(rt, block.as_ptr().cast(), 8, 4, &mut p, &mut n), 0);
            assert_eq!(std::slice::from_raw_parts(p.cast::<f64>(), n), &[1.0, 2.0]);
            mall_free(p);
            assert_eq!(mall_redistribute(rt, block.as_ptr().cast(), 0, 4, &mut p, &mut n), -1);
            assert!(last_error().contains("not a whole number of items of 0 bytes"), "{}", last_error());
            assert_eq!(mall_commit(rt), 0);
            assert_eq!(mall_size(rt, &mut size), 0);
            assert_eq!(size, 2);
            // In place.
            assert_eq!(mall_allreduce_sum(rt, sums.as_ptr(), sums.as_mut_ptr(), 2), 0);
            assert_eq!(sums, [3.0, -4.0]);
            assert_eq!(mall_allreduce_sum(rt, null(), null_mut(), 0), 0);
            assert_eq!(mall_send(rt, 1, b"hi".as_ptr().cast(), 2), 0);
            assert_eq!(mall_send(rt, 1, null(), 2), -1);
            assert_eq!(last_error(), "mall_send: bytes is NULL");
            assert_eq!(mall_recv(rt, 1, &mut p, &mut n), 0);
            assert_eq!(std::slice::from_raw_parts(p.cast::<u8>(), n), b"hello");
            mall_free(p);
            assert_eq!(mall_should_reconfigure(rt, &mut yes), 0);
            assert_eq!(yes, 1);
            assert_eq!(mall_report(rt, 10, -1.0, 0.0), -1);
            assert!(last_error().starts_with("report: compute_s=-1"), "{}", last_error());
            assert_eq!(mall_report(rt, 10, 1.0, 0.5), 0);
            assert_eq!(mall_report_measured(rt, 10), 0);
            assert_eq!(mall_barrier(rt), 0);
            assert_eq!(last_error(), "");
            assert_eq!(mall_finish(rt), 0);
        }
    }

    #[test]
    fn the_core_count_is_the_threads_mask_and_needs_no_handle() {
        let n = mall_cores();
        assert_eq!(last_error(), "");
        assert_eq!(usize::try_from(n).ok(), crate::cores::cores().ok());
    }

    #[test]
    fn the_committed_header_is_the_generated_one() {
        let generated = include_str!(concat!(env!("OUT_DIR"), "/malleable_rt.h"));
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include/malleable_rt.h");
        if std::env::var_os("MALL_UPDATE_HEADER").is_some_and(|v| v == "1") {
            std::fs::write(&path, generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is not what cbindgen generates from src/c_abi.rs; update it with \
             MALL_UPDATE_HEADER=1 cargo test -p malleable-rt, and commit it",
            path.display()
        );
    }

    #[test]
    fn the_header_compiles_as_c99_without_warnings() {
        // The generated one: the test above holds the committed one to it.
        let out = std::process::Command::new("cc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only", "-x", "c"])
            .arg(concat!(env!("OUT_DIR"), "/malleable_rt.h"))
            .output()
            .expect("cc runs (it links every Rust program here)");
        assert!(out.status.success(), "cc: {}", String::from_utf8_lossy(&out.stderr));
    }
}
