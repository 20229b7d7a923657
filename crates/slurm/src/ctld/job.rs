//! Read-only views of slurmctld's job records, valid while the lock guard
//! they were borrowed from is alive.

use std::marker::PhantomData;

use slurm_sys as sys;

use crate::common::bitmap::set_bits;

/// A job's base state (job_states in slurm.h).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    Pending,
    Running,
    Suspended,
    Complete,
    Cancelled,
    Failed,
    Timeout,
    NodeFail,
    Preempted,
    BootFail,
    Deadline,
    OutOfMemory,
    Unknown(u32),
}

impl JobState {
    fn from_raw(state: u32) -> JobState {
        match state & sys::JOB_STATE_BASE {
            sys::job_states_JOB_PENDING => JobState::Pending,
            sys::job_states_JOB_RUNNING => JobState::Running,
            sys::job_states_JOB_SUSPENDED => JobState::Suspended,
            sys::job_states_JOB_COMPLETE => JobState::Complete,
            sys::job_states_JOB_CANCELLED => JobState::Cancelled,
            sys::job_states_JOB_FAILED => JobState::Failed,
            sys::job_states_JOB_TIMEOUT => JobState::Timeout,
            sys::job_states_JOB_NODE_FAIL => JobState::NodeFail,
            sys::job_states_JOB_PREEMPTED => JobState::Preempted,
            sys::job_states_JOB_BOOT_FAIL => JobState::BootFail,
            sys::job_states_JOB_DEADLINE => JobState::Deadline,
            sys::job_states_JOB_OOM => JobState::OutOfMemory,
            other => JobState::Unknown(other),
        }
    }
}

/// What a waiting job shows of its wait ([`JobView::shown_wait`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownWait {
    pub(crate) reason: u32,
    pub(crate) text: Option<String>,
    pub(crate) start: i64,
}

/// Set a job's `SystemComment=` to `text`, if it says something else;
/// whether it changed.
///
/// # Safety
/// `ptr` is a live job record under slurmctld's job write lock.
pub(crate) unsafe fn write_system_comment(ptr: *mut sys::job_record_t, text: &str) -> bool {
    // SAFETY: the caller's promise; its old comment is NULL or xmalloc'd by
    // slurmctld, freed with xfree; the new one is xmalloc'd by xstrdup, as
    // slurmctld frees it with the record.
    unsafe {
        if crate::common::cstr::cstr_to_string((*ptr).system_comment).unwrap_or_default() == text {
            return false;
        }
        let new = crate::common::cstr::c_text(text);
        sys::slurm_xfree(std::ptr::addr_of_mut!((*ptr).system_comment).cast());
        (*ptr).system_comment = sys::xstrdup(new.as_ptr());
    }
    true
}

/// On what a running job's node resize must wait ([`JobView::resize_hold`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ResizeHold {
    /// slurmdbd to name the job's last record.
    Accounting,
    /// 26.05's lowering of the job's memory on its nodes.
    MemoryResize,
}

/// One job record.
#[derive(Copy, Clone)]
pub struct JobView<'g> {
    ptr: *mut sys::job_record_t,
    _guard: PhantomData<&'g sys::job_record_t>,
}

/// slurm.h's SHARED_FORCE: the FORCE bit of a partition's max_share (a
/// macro bindgen cannot read).
const SHARED_FORCE: u16 = 0x8000;

impl<'g> JobView<'g> {
    /// # Safety
    /// `ptr` must be NULL or a live job record protected by a job lock that
    /// outlives `'g`.
    pub(crate) unsafe fn from_ptr(ptr: *mut sys::job_record_t) -> Option<JobView<'g>> {
        (!ptr.is_null()).then_some(JobView { ptr, _guard: PhantomData })
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::job_record_t {
        self.ptr
    }

    /// The record itself, for the safe layer's other rooms.
    pub(crate) fn record(&self) -> &'g sys::job_record_t {
        self.rec()
    }

    fn rec(&self) -> &'g sys::job_record_t {
        // SAFETY: live and locked for 'g (constructor contract).
        unsafe { &*self.ptr }
    }

    pub(crate) fn details(&self) -> Option<&'g sys::job_details> {
        // SAFETY: details is NULL or owned by the record, alive with it.
        unsafe { self.rec().details.as_ref() }
    }

    pub fn id(&self) -> u32 {
        self.rec().job_id
    }

    /// The uid of its owner.
    pub fn user_id(&self) -> u32 {
        self.rec().user_id
    }

    pub fn name(&self) -> String {
        // SAFETY: NULL or a NUL-terminated string owned by the record.
        unsafe { crate::common::cstr::cstr_to_string(self.rec().name) }.unwrap_or_default()
    }

    pub fn state(&self) -> JobState {
        JobState::from_raw(self.rec().job_state)
    }

    /// Pending and not revoked by a federation sibling.
    pub fn is_pending(&self) -> bool {
        self.state() == JobState::Pending && self.rec().job_state & sys::JOB_REVOKED == 0
    }

    /// Still finishing a run it was requeued from: completing on its old
    /// nodes, its prolog running, or steps of that run not yet purged. Stock
    /// Slurm's queue (`_job_runnable_test1`) leaves such a job out until
    /// that ends, when the requeue is finished (and the job given its
    /// BeginTime); a start meanwhile runs it twice at once.
    pub fn finishing_last_run(&self) -> bool {
        let prolog = self.details().is_some_and(|d| d.prolog_running != 0);
        self.is_completing() || prolog || self.has_steps()
    }

    /// Whether any step record of it is left.
    pub fn has_steps(&self) -> bool {
        let rec = self.rec();
        // SAFETY: step_list is NULL or a live list owned by the record;
        // list_count takes the list's own lock.
        !rec.step_list.is_null() && unsafe { sys::list_count(rec.step_list) } > 0
    }

    /// Whether its run is over for good (its base state a final one),
    /// completing or not.
    pub fn has_ended(&self) -> bool {
        !matches!(self.state(), JobState::Pending | JobState::Running | JobState::Suspended)
    }

    /// A waiting batch job, not completing, that still holds its last
    /// run's nodes and resources: its requeue was left undone (slurmctld
    /// before 25.11 ends a requeue's last run without batch_requeue_fini
    /// when a node of the job goes down meanwhile). No other waiting job
    /// has both: the requeue's end frees them, and a start that fails
    /// frees the nodes it took (select_nodes).
    pub fn requeue_left_undone(&self) -> bool {
        let rec = self.rec();
        self.is_pending()
            && !self.is_completing()
            && rec.batch_flag != 0
            && !rec.node_bitmap.is_null()
            && !rec.job_resrcs.is_null()
    }

    /// Waiting and not held (a held job's priority is 0).
    pub fn waits_unheld(&self) -> bool {
        self.is_pending() && self.rec().priority != 0
    }

    /// Holding nodes: running, suspended, or completing after its end.
    pub fn holds_nodes(&self) -> bool {
        matches!(self.state(), JobState::Running | JobState::Suspended)
            || self.rec().job_state & sys::JOB_COMPLETING != 0
    }

    /// Its nodes are being given back (it ended, or was requeued).
    pub fn is_completing(&self) -> bool {
        self.rec().job_state & sys::JOB_COMPLETING != 0
    }

    /// Scheduling priority; 0 means held.
    pub fn priority(&self) -> u32 {
        self.rec().priority
    }

    /// Part of a heterogeneous job (not scheduled by this plugin yet).
    pub fn is_het_job(&self) -> bool {
        self.rec().het_job_id != 0
    }

    /// A batch script (as opposed to an srun/salloc allocation).
    pub fn is_batch(&self) -> bool {
        self.rec().batch_flag != 0
    }

    /// The job this one is to be merged into (`--dependency=expand:<job>`),
    /// if any: a helper for growing that job.
    pub fn expanding_job(&self) -> Option<u32> {
        self.details().map(|d| d.expanding_jobid).filter(|&j| j != 0)
    }

    /// Nodes the job asked for (its minimum node count).
    pub fn min_nodes(&self) -> u32 {
        self.details().map_or(1, |d| d.min_nodes.max(1))
    }

    /// The fewest nodes it can run on, the largest node having
    /// `largest_cpus` CPUs and, when memory is consumable,
    /// `largest_memory_mb`: what it asked for, or more when its CPUs
    /// (`--ntasks=8` without `--nodes`, say) fit on no fewer, as slurmctld
    /// counts a pending job's NumNodes, or when its `--mem-per-cpu` lets a
    /// node hold fewer of its CPUs than the node has.
    pub fn nodes_needed(&self, largest_cpus: u32, largest_memory_mb: Option<u64>) -> u32 {
        let mut per_node = largest_cpus.max(1);
        if let (Some(memory), Some(per_cpu)) = (largest_memory_mb, self.memory_per_cpu_mb()) {
            let held = u32::try_from(memory / per_cpu.max(1)).unwrap_or(u32::MAX);
            // A node that holds none of them is left out elsewhere (Room).
            per_node = per_node.min(held.max(1));
        }
        self.min_nodes().max(self.min_cpus().div_ceil(per_node))
    }

    /// CPUs it needs at least (`--ntasks`, `--cpus-per-task`, ...).
    pub fn min_cpus(&self) -> u32 {
        self.details().map_or(1, |d| d.min_cpus.max(1))
    }

    /// Its time limit in minutes, taking the partition's MaxTime when the
    /// job set none; None when unlimited.
    pub fn time_limit_minutes(&self) -> Option<u32> {
        let mut limit = self.rec().time_limit;
        if limit == sys::NO_VAL {
            // SAFETY: part_ptr is NULL or a live partition record (partition
            // records outlive the jobs that point to them).
            limit = unsafe { self.rec().part_ptr.as_ref() }.map_or(sys::INFINITE, |p| p.max_time);
        }
        (limit != sys::INFINITE && limit != sys::NO_VAL).then_some(limit)
    }

    /// How long job_test_resv takes it to run from a start, in seconds
    /// (its `_get_job_duration`, the same in 22.05 and 24.11): its time
    /// limit, else its partition's MaxTime, else a year; times the
    /// partition's OverSubscribe count when gang scheduling is on. A
    /// reservation it does not yet reach is one beginning that long or
    /// more after the start.
    pub fn reservation_duration_secs(&self) -> i64 {
        // slurm_protocol_defs.h's YEAR_SECONDS and slurm.h's PREEMPT_MODE_GANG
        // (internal or macro constants bindgen leaves out).
        const YEAR_SECONDS: i64 = 365 * 24 * 60 * 60;
        const PREEMPT_MODE_GANG: u16 = 0x8000;
        let Some(minutes) = self.time_limit_minutes() else { return YEAR_SECONDS };
        // SAFETY: part_ptr is NULL or a live partition record; slurm_conf
        // is read under the config read lock a job view is taken under.
        let (slices, gang) = unsafe {
            let slices = self.rec().part_ptr.as_ref().map_or(1, |p| p.max_share & !SHARED_FORCE);
            (slices, sys::slurm_conf.preempt_mode & PREEMPT_MODE_GANG != 0)
        };
        let duration = i64::from(minutes) * 60;
        if slices > 1 && gang {
            duration * i64::from(slices)
        } else {
            duration
        }
    }

    /// Its `--time-min` in minutes, if it has one.
    pub fn time_min_minutes(&self) -> Option<u32> {
        let min = self.rec().time_min;
        (min != 0 && min != sys::NO_VAL && min != sys::INFINITE).then_some(min)
    }

    /// Whether its nodes must be consecutive in the node table (`--contiguous`).
    pub fn contiguous(&self) -> bool {
        self.details().is_some_and(|d| d.contiguous != 0)
    }

    pub fn submit_time(&self) -> i64 {
        self.details().map_or(0, |d| d.submit_time)
    }

    pub fn start_time(&self) -> i64 {
        self.rec().start_time
    }

    /// Whether a resize now would spoil the job's accounting in slurmdbd
    /// (never without slurmdbd): while slurmctld waits for slurmdbd to name
    /// the job's database record (its `db_index` unset, or "being set"
    /// after a resize), a resize would ask slurmdbd for it holding
    /// slurmctld's locks, and with slurmdbd away, leave the job refusing
    /// every update; in the second its current record began
    /// ([`Self::record_time`]), slurmdbd would fold the new record into it.
    pub fn accounting_holds_resize(&self, now: i64) -> bool {
        let index = self.rec().db_index;
        crate::ctld::slurmdbd::slurmdbd_in_use()
            && (index == 0 || index == crate::ctld::slurmdbd::NO_VAL64 || self.record_time() >= now)
    }

    /// Whether slurmctld is lowering the job's memory on its nodes (26.05's
    /// Dynamic Memory Resizing: `scontrol update MinMemoryNode=` of a
    /// running job), until every node has answered. Slurm stops no node
    /// resize meanwhile, but one would spoil it: nodes added would never
    /// get the new limit, nodes freed could answer with an error and abort
    /// it, and a resize's end clears the RESIZING mark it set.
    pub fn memory_resize_under_way(&self) -> bool {
        #[cfg(slurm_since_26_05)]
        return !self.rec().node_bitmap_rs.is_null();
        #[cfg(not(slurm_since_26_05))]
        return false;
    }

    /// On what a node resize of the job must wait, if on anything: a
    /// memory resize under way ([`Self::memory_resize_under_way`]) or its
    /// accounting ([`Self::accounting_holds_resize`]).
    pub fn resize_hold(&self, now: i64) -> Option<ResizeHold> {
        if self.memory_resize_under_way() {
            Some(ResizeHold::MemoryResize)
        } else if self.accounting_holds_resize(now) {
            Some(ResizeHold::Accounting)
        } else {
            None
        }
    }

    /// Whether a node resize of the job must wait ([`Self::resize_hold`]).
    pub fn resize_held(&self, now: i64) -> bool {
        self.resize_hold(now).is_some()
    }

    /// Whether it was ever resized (its accounting record begins then).
    pub fn resized(&self) -> bool {
        self.rec().resize_time != 0
    }

    /// When its current accounting record began: its last resize, else its
    /// submission. slurmdbd keys a job's records by (job id, this second),
    /// so a record made in the same second replaces that one instead of
    /// following it.
    pub fn record_time(&self) -> i64 {
        match self.rec().resize_time {
            0 => self.submit_time(),
            t => t,
        }
    }

    /// For a running job, when its time limit expires.
    pub fn end_time(&self) -> i64 {
        self.rec().end_time
    }

    /// Indices (in the node table) of the nodes allocated to it.
    pub fn node_indices(&self) -> Vec<usize> {
        // SAFETY: node_bitmap is NULL or a bitmap owned by the record.
        unsafe { set_bits(self.rec().node_bitmap) }
    }

    /// The CPUs it holds on each of its nodes, as (node-table index, CPUs),
    /// from its allocation as the select plugin made it (`job_resrcs`);
    /// empty for a job that holds none.
    pub fn cpus_by_node(&self) -> Vec<(usize, u32)> {
        // SAFETY: job_resrcs is NULL or owned by the record; its cpus array
        // has nhosts entries, one per set bit of its node_bitmap, in order
        // (job_resources.h).
        unsafe {
            let Some(res) = self.rec().job_resrcs.as_ref() else { return Vec::new() };
            if res.cpus.is_null() {
                return Vec::new();
            }
            let nodes = set_bits(res.node_bitmap);
            let n = (res.nhosts as usize).min(nodes.len());
            nodes.into_iter().take(n).enumerate().map(|(k, i)| (i, u32::from(*res.cpus.add(k)))).collect()
        }
    }

    /// The most nodes it allows (`--nodes=a-b`'s b); `None` when it set no
    /// bound.
    pub fn max_nodes(&self) -> Option<u32> {
        self.details().map(|d| d.max_nodes).filter(|&m| m != 0 && m != sys::NO_VAL)
    }

    /// Whether it takes its nodes whole: `--exclusive`, or its partition's
    /// `OverSubscribe=EXCLUSIVE` (cons_tres then gives it every core).
    pub fn takes_whole_nodes(&self) -> bool {
        let exclusive = self.details().is_some_and(|d| u32::from(d.whole_node) == sys::WHOLE_NODE_REQUIRED);
        // SAFETY: part_ptr is NULL or a live partition record.
        let part = unsafe { self.rec().part_ptr.as_ref() };
        exclusive || part.is_some_and(|p| p.max_share == 0)
    }

    /// Whether it may share cores with other jobs: its partition's
    /// `OverSubscribe=FORCE`, or `YES` and its own `--oversubscribe`.
    pub fn may_oversubscribe(&self) -> bool {
        // SAFETY: part_ptr is NULL or a live partition record.
        let Some(part) = (unsafe { self.rec().part_ptr.as_ref() }) else { return false };
        let force = part.max_share & SHARED_FORCE != 0;
        let per_core = part.max_share & !SHARED_FORCE;
        per_core > 1 && (force || self.details().is_some_and(|d| d.share_res == 1))
    }

    /// Whether it says how its CPUs go onto nodes beyond a count of them:
    /// `--cpus-per-task` above 1, `--ntasks-per-node`, `--overcommit`, or
    /// more CPUs a node than one (`--mincpus`).
    pub fn lays_out_its_tasks(&self) -> bool {
        let set = |v: u16| v != 0 && v != sys::NO_VAL as u16;
        self.details().is_some_and(|d| {
            (set(d.cpus_per_task) && d.cpus_per_task > 1)
                || set(d.ntasks_per_node)
                || d.overcommit != 0
                || (d.pn_min_cpus > 1 && d.pn_min_cpus != sys::NO_VAL)
        })
    }

    /// The least memory, in MB, a node must have for it to run there: a
    /// bound every node it could use meets, so that a node below it can be
    /// left out for good. slurmctld itself leaves out nodes whose
    /// RealMemory is below the job's `--mem`, or below its `--mem-per-cpu`
    /// (or DefMemPerCPU) as given, whatever SelectTypeParameters say; with
    /// memory consumable (`memory_consumable`, CR_*_Memory) a node must
    /// also hold the per-CPU amount times the fewest CPUs the job puts on a
    /// node (all its CPUs when it runs on one node; else its CPUs per node
    /// or per task, the tasks themselves being free to spread). `None` when
    /// it asks none.
    pub fn memory_per_node_mb(&self, memory_consumable: bool) -> Option<u64> {
        let d = self.details()?;
        let (m, per_cpu) = memory_asked(d.pn_min_memory)?;
        if !per_cpu || !memory_consumable {
            return Some(m);
        }
        // Unset counts are 0 or NO_VAL (NO_VAL16 in a u16: 0xfffe, below
        // the cut-off either way).
        let set = |v: u32| v != 0 && v < 0xfffe;
        let per_node = if self.max_nodes() == Some(1) {
            self.min_cpus()
        } else {
            [d.pn_min_cpus, u32::from(d.cpus_per_task)].into_iter().filter(|&v| set(v)).max().unwrap_or(1)
        };
        Some(m * u64::from(per_node.max(1)))
    }

    /// Its `--mem-per-cpu` (or DefMemPerCPU) in MB; `None` when it asks
    /// memory by the node, or none.
    pub fn memory_per_cpu_mb(&self) -> Option<u64> {
        let (m, per_cpu) = memory_asked(self.details()?.pn_min_memory)?;
        per_cpu.then_some(m)
    }

    /// The GPUs it asks for on each node it uses (`--gres=gpu:N`,
    /// `--gpus-per-node=N`): `Some(0)` without any; `None` when it asks for
    /// GPUs some other way too (`--gpus`, `--gpus-per-task`,
    /// `--gpus-per-socket`) or in a form that does not read, which no
    /// per-node count stands for.
    pub fn gpus_per_node(&self) -> Option<u32> {
        let [per_node, others @ ..] = self.tres_requests();
        if others.iter().any(|t| super::gres::gpus_in(t) != Some(0)) {
            return None;
        }
        super::gres::gpus_in(&per_node)
    }

    /// Whether it asks for a generic resource other than GPUs (`--gres=r1:1`),
    /// which the model does not count: which nodes have it is Slurm's to
    /// say when it starts the job.
    pub fn asks_other_gres(&self) -> bool {
        self.tres_requests().iter().any(|t| super::gres::names_other_than_gpus(t))
    }

    /// Its TRES requests as slurmctld keeps them: per node, per job, per
    /// task, per socket ("" for none).
    fn tres_requests(&self) -> [std::borrow::Cow<'_, str>; 4] {
        let rec = self.rec();
        [rec.tres_per_node, rec.tres_per_job, rec.tres_per_task, rec.tres_per_socket].map(|p| {
            // SAFETY: NULL or a NUL-terminated string owned by the record,
            // which outlives the view (read under the caller's job lock):
            // borrowed, since every waiting job's are read at every pass.
            unsafe { crate::common::cstr::cstr_borrow(p) }
        })
    }

    /// The partitions it may run in, in the order Slurm tries them (its
    /// `-p a,b` list, which slurmctld keeps sorted by PriorityTier), or its
    /// one partition.
    pub fn partitions(&self) -> Vec<JobPartition<'g>> {
        let rec = self.rec();
        // SAFETY: part_ptr_list is NULL or a list of live partition records
        // owned by the job; we only read it, under the job read lock and
        // the partition read lock Scheduling holds.
        unsafe {
            let mut out = Vec::new();
            if !rec.part_ptr_list.is_null() {
                let it = sys::list_iterator_create(rec.part_ptr_list);
                loop {
                    let p = sys::list_next(it).cast::<sys::part_record_t>();
                    let Some(p) = p.as_ref() else { break };
                    out.push(JobPartition::of(p));
                }
                sys::list_iterator_destroy(it);
            }
            if out.is_empty() {
                out.extend(rec.part_ptr.as_ref().map(|p| JobPartition::of(p)));
            }
            out
        }
    }

    /// A waiting array's record of the tasks not yet split off, with an
    /// `aftercorr` dependency. slurmctld's own queue building
    /// (build_job_queue) splits such an array into task records, each then
    /// waiting on its corresponding task (one that fails fails it alone);
    /// [`LockGuard::split_correspond_array`](crate::ctld::LockGuard) does
    /// it under sched/malleable, which builds no such queue.
    pub fn is_unsplit_correspond_array(&self) -> bool {
        let rec = self.rec();
        let Some(details) = self.details() else { return false };
        // SAFETY: array_recs is NULL or owned by the record; depend_list is
        // NULL or a list of depend_spec_t owned by its details; both only
        // read, under the job lock the guard holds.
        unsafe {
            let Some(array) = rec.array_recs.as_ref() else { return false };
            if array.task_id_bitmap.is_null() || rec.array_task_id != sys::NO_VAL || details.depend_list.is_null() {
                return false;
            }
            let it = sys::list_iterator_create(details.depend_list);
            let mut found = false;
            loop {
                let d = sys::list_next(it).cast::<sys::depend_spec_t>();
                let Some(d) = d.as_ref() else { break };
                if u32::from(d.depend_type) == sys::slurm_depend_types_t_SLURM_DEPEND_AFTER_CORRESPOND {
                    found = true;
                    break;
                }
            }
            sys::list_iterator_destroy(it);
            found
        }
    }

    /// The partition it runs in (or, waiting, its first).
    pub fn partition_record(&self) -> Option<JobPartition<'g>> {
        // SAFETY: part_ptr is NULL or a live partition record.
        unsafe { self.rec().part_ptr.as_ref().map(|p| JobPartition::of(p)) }
    }

    /// Whether it asked for a reservation (`--reservation`).
    pub fn in_reservation(&self) -> bool {
        self.rec().resv_id != 0 || !self.rec().resv_ptr.is_null()
    }

    /// Indices of the nodes it must be given (`--nodelist`).
    pub fn required_nodes(&self) -> Vec<usize> {
        // SAFETY: req_node_bitmap is NULL or a bitmap owned by the details.
        self.details().map_or_else(Vec::new, |d| unsafe { set_bits(d.req_node_bitmap) })
    }

    /// Indices of the nodes it may not be given (`--exclude`).
    pub fn excluded_nodes(&self) -> Vec<usize> {
        // SAFETY: exc_node_bitmap is NULL or a bitmap owned by the details.
        self.details().map_or_else(Vec::new, |d| unsafe { set_bits(d.exc_node_bitmap) })
    }

    /// Its allocated nodes as Slurm writes them ("n[1-3]").
    pub fn nodes(&self) -> String {
        // SAFETY: NULL or a NUL-terminated string owned by the record.
        unsafe { crate::common::cstr::cstr_to_string(self.rec().nodes) }.unwrap_or_default()
    }

    /// The node its batch script runs on (empty for a job without one).
    pub fn batch_host(&self) -> String {
        // SAFETY: NULL or a NUL-terminated string owned by the record.
        unsafe { crate::common::cstr::cstr_to_string(self.rec().batch_host) }.unwrap_or_default()
    }

    /// The node its batch step runs on, as the step's layout says (kept
    /// with the step across a restart of slurmctld); None for a job
    /// without a batch step.
    pub fn batch_step_host(&self) -> Option<String> {
        // SAFETY: step_list is NULL or the job's list of live step records,
        // not changed under the job lock the guard holds; a step's layout
        // is NULL or owned by the step, its node_list NULL or a
        // NUL-terminated string.
        unsafe {
            let list = self.rec().step_list;
            if list.is_null() {
                return None;
            }
            let mut host = None;
            let it = sys::list_iterator_create(list);
            loop {
                let step = sys::list_next(it).cast::<sys::step_record_t>();
                if step.is_null() {
                    break;
                }
                if (*step).step_id.step_id == sys::SLURM_BATCH_SCRIPT {
                    host = (*step).step_layout.as_ref().and_then(|l| crate::common::cstr::cstr_to_string(l.node_list));
                    break;
                }
            }
            sys::list_iterator_destroy(it);
            host
        }
    }

    /// The partition it runs or waits in.
    pub fn partition(&self) -> String {
        // SAFETY: part_ptr is NULL or a live partition record, whose name
        // is NULL or a NUL-terminated string it owns.
        unsafe { self.rec().part_ptr.as_ref().and_then(|p| crate::common::cstr::cstr_to_string(p.name)) }
            .unwrap_or_default()
    }

    /// The comment its owner set (`scontrol update Comment=`, `--comment`).
    pub fn comment(&self) -> String {
        // SAFETY: NULL or a NUL-terminated string owned by the record.
        unsafe { crate::common::cstr::cstr_to_string(self.rec().comment) }.unwrap_or_default()
    }

    /// What squeue shows of its wait now: its Reason code, the text shown
    /// instead of the code's name, and its expected start.
    pub fn shown_wait(&self) -> ShownWait {
        let rec = self.rec();
        ShownWait {
            reason: rec.state_reason,
            // SAFETY: NULL or a NUL-terminated string owned by the record.
            text: unsafe { crate::common::cstr::cstr_to_string(rec.state_desc) },
            start: rec.start_time,
        }
    }

    /// Where its SPANK environment is and how many entries it has: what
    /// changes when the environment is rewritten, so that what was read
    /// from it can be kept while this stays the same.
    pub fn spank_env_identity(&self) -> (usize, u32) {
        let rec = self.rec();
        (rec.spank_job_env as usize, rec.spank_job_env_size)
    }

    /// What slurmctld (or a plugin) says about it: `SystemComment=`.
    pub fn system_comment(&self) -> String {
        // SAFETY: NULL or a NUL-terminated string owned by the record.
        unsafe { crate::common::cstr::cstr_to_string(self.rec().system_comment) }.unwrap_or_default()
    }

    /// The entries (NAME=value) of the SPANK environment that SPANK plugins
    /// set at submit which start with `prefix`: what one plugin reads,
    /// without copying every other plugin's entries of every job at every pass.
    pub fn spank_job_env_with(&self, prefix: &str) -> Vec<String> {
        let rec = self.rec();
        if rec.spank_job_env.is_null() {
            return Vec::new();
        }
        (0..rec.spank_job_env_size as usize)
            .filter_map(|i| {
                // SAFETY: spank_job_env has spank_job_env_size entries, each
                // NULL or a NUL-terminated string owned by the record.
                let entry = unsafe { *rec.spank_job_env.add(i) };
                if entry.is_null() {
                    return None;
                }
                // SAFETY: as above, non-NULL; strncmp stops at the entry's
                // NUL or after the prefix's length, so the rest of a long
                // entry is never read.
                let same = unsafe { libc::strncmp(entry, prefix.as_ptr().cast(), prefix.len()) } == 0;
                same.then(|| {
                    // SAFETY: as above, a non-NULL NUL-terminated string.
                    let whole = unsafe { std::ffi::CStr::from_ptr(entry) };
                    String::from_utf8_lossy(whole.to_bytes()).into_owned()
                })
            })
            .collect()
    }
}

/// One partition a job may run in, alive as long as the lock it was read under.
#[derive(Clone, Debug)]
pub struct JobPartition<'g> {
    /// Its PriorityTier: a higher tier's jobs are served first.
    pub tier: u16,
    rec: *const sys::part_record_t,
    _guard: PhantomData<&'g ()>,
}

impl<'g> JobPartition<'g> {
    /// # Safety
    /// `p` is a live partition record, read under the partition lock held for `'g`.
    unsafe fn of(p: &sys::part_record_t) -> JobPartition<'g> {
        JobPartition { tier: p.priority_tier, rec: p, _guard: PhantomData }
    }

    /// What tells it from the others while the lock is held (its record's
    /// address): a key that costs no copy of its name.
    pub fn key(&self) -> usize {
        self.rec as usize
    }

    /// Whether its nodes include all of `nodes` (node-table indices).
    pub fn holds(&self, nodes: &[usize]) -> bool {
        // SAFETY: a live record under the lock held for 'g; node_bitmap is
        // NULL or a bitmap of the node table's size it owns.
        unsafe {
            let bits = (*self.rec).node_bitmap;
            !bits.is_null() && nodes.iter().all(|&i| sys::bit_test(bits, i as i64) != 0)
        }
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::part_record_t {
        self.rec.cast_mut()
    }

    /// Its nodes' indices in the node table (read when asked: a big
    /// partition's list is worth reading once a pass, not once a job).
    pub fn nodes(&self) -> Vec<usize> {
        // SAFETY: a live record under the lock held for 'g; node_bitmap is
        // NULL or a bitmap it owns.
        unsafe { set_bits((*self.rec).node_bitmap) }
    }
}

/// slurmctld's job records, in job_list's order: their addresses are
/// taken in one walk under the list's own lock (list_for_each), so a pass
/// over 10,000 jobs does not lock and unlock it once a job as list_next does.
pub struct JobIter<'g> {
    jobs: std::vec::IntoIter<*mut sys::job_record_t>,
    _guard: PhantomData<&'g ()>,
}

impl<'g> JobIter<'g> {
    /// # Safety
    /// `list` must be slurmctld's job list, protected by a job lock held for `'g`.
    pub(crate) unsafe fn new(list: sys::List) -> JobIter<'g> {
        // SAFETY: a valid list by the caller's contract.
        let count = unsafe { sys::list_count(list) }.max(0) as usize;
        let mut jobs: Vec<*mut sys::job_record_t> = Vec::with_capacity(count);
        // SAFETY: `collect_job` only pushes onto the Vec `arg` points to,
        // which outlives the call; the list is valid (caller's contract).
        unsafe { sys::list_for_each(list, Some(collect_job), std::ptr::addr_of_mut!(jobs).cast()) };
        JobIter { jobs: jobs.into_iter(), _guard: PhantomData }
    }
}

/// list_for_each's callback: one record's address onto the Vec `arg` points to.
extern "C" fn collect_job(record: *mut std::ffi::c_void, arg: *mut std::ffi::c_void) -> std::ffi::c_int {
    // The Vec has room for the whole list; a push that fails anyway
    // (memory) stops the walk rather than unwinding into C.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `arg` is the Vec JobIter::new passes, alive and not
        // otherwise borrowed during list_for_each.
        let jobs = unsafe { &mut *arg.cast::<Vec<*mut sys::job_record_t>>() };
        jobs.push(record.cast());
    }))
    .map_or(-1, |()| 0)
}

impl<'g> Iterator for JobIter<'g> {
    type Item = JobView<'g>;
    fn next(&mut self) -> Option<JobView<'g>> {
        let ahead = self.jobs.as_slice();
        // A scheduler reads a dozen scattered fields of every record and its
        // details, ten thousand records that are seldom in the cache by the
        // next pass: a walk that waited for each miss in turn would spend
        // most of its time waiting. The records a few steps ahead are asked
        // for now, so their misses overlap: the record RECORD_AHEAD jobs on,
        // and the details of the one DETAILS_AHEAD on (whose record, asked
        // for earlier, is in the cache by then).
        if let Some(&p) = ahead.get(RECORD_AHEAD) {
            prefetch_lines(p.cast(), std::mem::size_of::<sys::job_record_t>());
        }
        if let Some(&p) = ahead.get(DETAILS_AHEAD) {
            // SAFETY: a live record of the list (as below); details is NULL
            // or owned by it.
            let details = unsafe { (*p).details };
            if !details.is_null() {
                prefetch_lines(details.cast(), std::mem::size_of::<sys::job_details>());
            }
        }
        // SAFETY: records of the job list, which the job lock held for 'g
        // keeps alive (none is freed while it is held).
        self.jobs.next().and_then(|p| unsafe { JobView::from_ptr(p) })
    }

    /// At most the records left (a NULL one, which the list never holds,
    /// would end the walk early): what a caller reserves room for.
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.jobs.len()))
    }
}

/// How far ahead of the walk a record, then its details, is prefetched.
const RECORD_AHEAD: usize = 8;
const DETAILS_AHEAD: usize = 4;

/// Ask the CPU to bring `len` bytes at `p` into its caches, without
/// waiting for them (a hint: nothing is read, nothing can fault).
pub(crate) fn prefetch_lines(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for offset in (0..len).step_by(64) {
        // SAFETY: a prefetch reads nothing and never faults, whatever the
        // address; wrapping_add keeps the pointer arithmetic defined.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.wrapping_add(offset).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// Whether a job's billable TRES are unset (NO_VAL, as a new job's:
/// slurmctld computes them at its next start), as Slurm's fuzzy_equal reads
/// the double.
pub(crate) fn billing_unset(billable_tres: f64) -> bool {
    (billable_tres - f64::from(sys::NO_VAL)).abs() < 0.5
}

/// A job's `pn_min_memory` read: the MB asked, and whether per CPU (slurm.h's
/// MEM_PER_CPU flag bit) rather than per node; `None` when it asks none.
fn memory_asked(pn_min_memory: u64) -> Option<(u64, bool)> {
    const MEM_PER_CPU: u64 = 0x8000_0000_0000_0000;
    let m = pn_min_memory;
    if m == 0 || m == u64::from(sys::NO_VAL) || m == crate::ctld::slurmdbd::NO_VAL64 {
        return None;
    }
    Some((m & !MEM_PER_CPU, m & MEM_PER_CPU != 0))
}
