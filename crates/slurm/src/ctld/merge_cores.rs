//! The cores of a job that grew, put right. Slurm 22.05's expand merge
//! (select/cons_tres's `select_p_job_expand`) copies each job's cores into
//! the merged allocation with `job_resources_bits_copy`, which ORs the whole
//! core bitmaps by position instead of node by node: the added nodes' cores
//! land on the job's first nodes and the added nodes get none, so a step
//! there is given an empty cpuset under task/cgroup and cannot start (and
//! cons_tres thinks those cores free). We read each job's cores by node
//! before the merge and lay them out again after it.

use slurm_sys as sys;

use crate::common::bitmap::set_bits;

/// A job's cores by node: (node-table index, cores held, cores its steps
/// use), the cores numbered from 0 within their node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoresByNode(pub Vec<(usize, Vec<usize>, Vec<usize>)>);

/// Each of the allocation's nodes: (node-table index, its first bit in the
/// core bitmaps, its core count), from the sockets and cores per node and
/// their repetition counts (job_resources.h).
///
/// # Safety
/// `res` must be a valid job_resources of a live job, not changed during the call.
unsafe fn layout(res: &sys::job_resources_t) -> Vec<(usize, usize, usize)> {
    // SAFETY: by the caller's contract; node_bitmap is NULL or valid.
    let nodes = unsafe { set_bits(res.node_bitmap) };
    let hosts = (res.nhosts as usize).min(nodes.len());
    let mut per_host = Vec::with_capacity(hosts);
    if res.sock_core_rep_count.is_null() || res.sockets_per_node.is_null() || res.cores_per_socket.is_null() {
        return Vec::new();
    }
    let mut k = 0;
    while per_host.len() < hosts {
        // SAFETY: the three arrays have an entry for each run of hosts of
        // one shape, and the runs' repetition counts add up to nhosts, so
        // k stays within them while hosts remain.
        let (reps, cores) = unsafe {
            (
                *res.sock_core_rep_count.add(k) as usize,
                usize::from(*res.sockets_per_node.add(k)) * usize::from(*res.cores_per_socket.add(k)),
            )
        };
        if reps == 0 {
            break;
        }
        per_host.extend(std::iter::repeat_n(cores, reps.min(hosts - per_host.len())));
        k += 1;
    }
    let mut first = 0;
    nodes
        .into_iter()
        .zip(per_host)
        .map(|(node, cores)| {
            let at = first;
            first += cores;
            (node, at, cores)
        })
        .collect()
}

/// The cores a job holds, by node; empty without an allocation.
///
/// # Safety
/// `job_ptr` must be a live job record under the job read or write lock.
pub unsafe fn read(job_ptr: *const sys::job_record_t) -> CoresByNode {
    // SAFETY: by the caller's contract; job_resrcs is NULL or owned by it.
    let Some(res) = (unsafe { (*job_ptr).job_resrcs.as_ref() }) else { return CoresByNode::default() };
    if res.core_bitmap.is_null() {
        return CoresByNode::default();
    }
    let bits = |p: *mut sys::bitstr_t, at: usize, n: usize| -> Vec<usize> {
        if p.is_null() {
            return Vec::new();
        }
        // SAFETY: p is the allocation's core bitmap, at least as long as
        // the cores its layout counts.
        (0..n).filter(|&c| unsafe { sys::bit_test(p, (at + c) as sys::bitoff_t) } != 0).collect()
    };
    // SAFETY: res is valid by the caller's contract.
    let nodes = unsafe { layout(res) };
    CoresByNode(
        nodes
            .into_iter()
            .map(|(node, at, n)| (node, bits(res.core_bitmap, at, n), bits(res.core_bitmap_used, at, n)))
            .collect(),
    )
}

/// Lay out the cores `before` (each merged job's, read before the merge)
/// in the merged job's core bitmaps, where the merge put them elsewhere.
/// The select plugin's rows are taken out and put back around the change
/// (`select_g_job_suspend`/`resume` with indefinite suspension move cores
/// only, not memory or GRES), so cons_tres sees the cores the job really
/// holds. Returns whether anything had to be put right.
///
/// # Safety
/// `job_ptr` must be a live running job record; the caller holds the job
/// and node write locks.
pub unsafe fn restore(job_ptr: *mut sys::job_record_t, before: &[CoresByNode]) -> bool {
    // SAFETY: by the caller's contract.
    let now = unsafe { read(job_ptr) };
    let want: Vec<(usize, Vec<usize>, Vec<usize>)> = now
        .0
        .iter()
        .map(|(node, _, _)| {
            let mut held: Vec<usize> = Vec::new();
            let mut used: Vec<usize> = Vec::new();
            for (n, h, u) in before.iter().flat_map(|b| b.0.iter()) {
                if n == node {
                    held.extend(h);
                    used.extend(u);
                }
            }
            held.sort_unstable();
            held.dedup();
            used.sort_unstable();
            used.dedup();
            (*node, held, used)
        })
        .collect();
    if want == now.0 {
        return false;
    }
    // SAFETY: a running job under the write locks; the rows are rebuilt
    // from the other jobs on suspend and this job's cores added on resume.
    unsafe {
        sys::select_g_job_suspend(job_ptr, true);
        let res = &*(*job_ptr).job_resrcs;
        for (node, at, n) in layout(res) {
            let Some((_, held, used)) = want.iter().find(|w| w.0 == node) else { continue };
            for c in 0..n {
                let bit = (at + c) as sys::bitoff_t;
                sys::bit_clear(res.core_bitmap, bit);
                if held.contains(&c) {
                    sys::bit_set(res.core_bitmap, bit);
                }
                if !res.core_bitmap_used.is_null() {
                    sys::bit_clear(res.core_bitmap_used, bit);
                    if used.contains(&c) {
                        sys::bit_set(res.core_bitmap_used, bit);
                    }
                }
            }
        }
        sys::select_g_job_resume(job_ptr, true);
    }
    true
}
