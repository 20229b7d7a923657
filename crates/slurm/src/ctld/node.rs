//! Read-only views of slurmctld's node records.

use std::marker::PhantomData;

use slurm_sys as sys;

#[derive(Copy, Clone)]
pub struct NodeView<'g> {
    index: usize,
    rec: &'g sys::node_record_t,
}

/// Flags that keep a node from taking a new job even when its base state is idle.
const UNAVAILABLE: u32 = sys::NODE_STATE_DRAIN
    | sys::NODE_STATE_COMPLETING
    | sys::NODE_STATE_NO_RESPOND
    | sys::NODE_STATE_POWERED_DOWN
    | sys::NODE_STATE_POWERING_UP
    | sys::NODE_STATE_FAIL
    | sys::NODE_STATE_MAINT
    | sys::NODE_STATE_REBOOT_REQUESTED;

impl<'g> NodeView<'g> {
    /// The record at `index` of the node table, if the slot holds one; for
    /// the lifetime of a guard holding a node lock.
    pub(crate) fn at(index: usize) -> Option<NodeView<'g>> {
        // SAFETY: the node table and its count change only under the node
        // write lock, and the caller's guard holds a node lock for 'g; the
        // slot is read only below the count.
        unsafe {
            let count = sys::node_record_count.max(0) as usize;
            if index >= count {
                return None;
            }
            (*sys::node_record_table_ptr.add(index)).as_ref().map(|rec| NodeView { index, rec })
        }
    }

    /// Position in slurmctld's node table.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Where its record lies: a record made anew (a reconfigure, a node
    /// created) lies elsewhere, so what was read of the old one can be kept
    /// while this stays the same, without touching the record.
    pub fn record_address(&self) -> usize {
        std::ptr::from_ref(self.rec) as usize
    }

    pub fn name(&self) -> String {
        // SAFETY: NULL or a NUL-terminated string owned by the record.
        unsafe { crate::common::cstr::cstr_to_string(self.rec.name) }.unwrap_or_default()
    }

    /// Whether its name is `name`, read where it lies (no copy).
    pub fn name_is(&self, name: &str) -> bool {
        // SAFETY: NULL or a NUL-terminated string owned by the record, which
        // outlives this borrow (read under the caller's node lock).
        let own = unsafe { crate::common::cstr::cstr_borrow(self.rec.name) };
        own == name
    }

    /// Its CPUs, as slurm.conf gives them.
    pub fn cpus(&self) -> u32 {
        u32::from(self.rec.cpus)
    }

    /// Its memory for jobs, in MB (`RealMemory=`, less `MemSpecLimit=`).
    pub fn memory_mb(&self) -> u64 {
        self.rec.real_memory.saturating_sub(self.rec.mem_spec_limit)
    }

    /// Its GPUs, as its `Gres=` gives them (0 without, or when it does not read).
    pub fn gpus(&self) -> u32 {
        // SAFETY: NULL or a NUL-terminated string owned by the record, which
        // outlives this borrow (read under the caller's node lock); every
        // node is read at every pass, so it is parsed where it lies.
        let gres = unsafe { crate::common::cstr::cstr_borrow(self.rec.gres) };
        super::gres::gpus_in(&gres).unwrap_or(0)
    }

    pub fn state_raw(&self) -> u32 {
        self.rec.node_state
    }

    /// Up, responding, not drained or failing: it can take work, now or
    /// once its jobs end.
    pub fn is_usable(&self) -> bool {
        let down = sys::macros::node_base_state(self.rec.node_state) == sys::node_states_NODE_STATE_DOWN;
        !down
            && self.rec.node_state
                & (sys::NODE_STATE_DRAIN
                    | sys::NODE_STATE_NO_RESPOND
                    | sys::NODE_STATE_FAIL
                    | sys::NODE_STATE_POWERED_DOWN)
                == 0
    }

    /// Idle, or running jobs on part or all of it (mixed, allocated), and
    /// responding, not drained or completing: a job may start on the cores
    /// no job holds.
    pub fn takes_more(&self) -> bool {
        let base = sys::macros::node_base_state(self.rec.node_state);
        [sys::node_states_NODE_STATE_IDLE, sys::node_states_NODE_STATE_MIXED, sys::node_states_NODE_STATE_ALLOCATED]
            .contains(&base)
            && self.rec.node_state & UNAVAILABLE == 0
    }

    /// Idle, responding, not drained or completing: a job can start here now.
    pub fn is_free(&self) -> bool {
        sys::macros::node_base_state(self.rec.node_state) == sys::node_states_NODE_STATE_IDLE
            && self.rec.node_state & UNAVAILABLE == 0
    }
}

/// How far ahead of the node walk a record's state is prefetched.
const NODE_AHEAD: usize = 8;

/// The non-empty slots of the node table (it may have holes since 22.05).
pub struct NodeIter<'g> {
    next: usize,
    _guard: PhantomData<&'g ()>,
}

impl NodeIter<'_> {
    pub(crate) fn new() -> Self {
        NodeIter { next: 0, _guard: PhantomData }
    }
}

impl<'g> Iterator for NodeIter<'g> {
    type Item = NodeView<'g>;
    fn next(&mut self) -> Option<NodeView<'g>> {
        // SAFETY: the node table and its count change only under the node
        // write lock, and the guard this iterator borrows holds a node lock;
        // the slot NODE_AHEAD on is read the same way, below the count, and
        // of its record only an address is taken (addr_of! reads nothing).
        unsafe {
            let count = sys::node_record_count.max(0) as usize;
            while self.next < count {
                let i = self.next;
                self.next += 1;
                // Ten thousand records, seldom in the cache by the next pass:
                // the state of the one NODE_AHEAD on is asked for now, so the
                // misses overlap (the walk reads little else of a record).
                if i + NODE_AHEAD < count {
                    let ahead = *sys::node_record_table_ptr.add(i + NODE_AHEAD);
                    if !ahead.is_null() {
                        let state = std::ptr::addr_of!((*ahead).node_state);
                        crate::ctld::job::prefetch_lines(state.cast(), 1);
                    }
                }
                if let Some(rec) = (*sys::node_record_table_ptr.add(i)).as_ref() {
                    return Some(NodeView { index: i, rec });
                }
            }
            None
        }
    }
}
