//! slurmctld's five locks as RAII guards whose type says which locks they
//! hold, and what each may do: a guard that holds the job lock may read job
//! records, one that holds the node lock node records, and only one holding
//! both write locks may start (and later resize) a job. The compiler checks
//! it: starting a job from a [`LockGuard<Reading>`] does not build.
//!
//! ```compile_fail,E0599
//! use slurm::ctld::{LockGuard, Reading, Slurmctld};
//! fn start(ctld: &'static Slurmctld) {
//!     let mut guard = LockGuard::<Reading>::acquire(ctld);
//!     let _ = guard.start_job(1, &[0], None, None);
//! }
//! ```
//!
//! ```no_run
//! use slurm::ctld::{LockGuard, Scheduling, Slurmctld};
//! fn start(ctld: &'static Slurmctld) {
//!     let mut guard = LockGuard::<Scheduling>::acquire(ctld);
//!     let _ = guard.start_job(1, &[0], None, None);
//! }
//! ```

use std::collections::HashMap;
use std::marker::PhantomData;

use slurm_sys as sys;

use crate::ctld::job::{JobIter, JobView, ShownWait};
use crate::ctld::node::{NodeIter, NodeView};
use crate::ctld::symbols::Slurmctld;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LockLevel {
    None,
    Read,
    Write,
}

impl LockLevel {
    fn raw(self) -> sys::lock_level_t {
        match self {
            LockLevel::None => sys::lock_level_t_NO_LOCK,
            LockLevel::Read => sys::lock_level_t_READ_LOCK,
            LockLevel::Write => sys::lock_level_t_WRITE_LOCK,
        }
    }
}

/// Which of slurmctld's locks to take, and how.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Locks {
    conf: LockLevel,
    job: LockLevel,
    node: LockLevel,
    part: LockLevel,
    fed: LockLevel,
}

impl Locks {
    fn raw(self) -> sys::slurmctld_lock_t {
        sys::slurmctld_lock_t {
            conf: self.conf.raw(),
            job: self.job.raw(),
            node: self.node.raw(),
            part: self.part.raw(),
            fed: self.fed.raw(),
            // 26.05's lock of the node counters select plugins keep
            // (alloc_cpus...), written only by nodeinfo_set_all and read
            // to pack nodes: neither is ours, so none, as stock's main
            // scheduler takes none.
            #[cfg(slurm_since_26_05)]
            select_node: LockLevel::None.raw(),
        }
    }
}

/// A set of slurmctld's locks, as a type: what a [`LockGuard`] holds.
pub trait LockSet: 'static {
    const LOCKS: Locks;
}
/// The set holds the job lock, to read at least.
pub trait ReadsJobs: LockSet {}
/// The set holds the job write lock.
pub trait WritesJobs: ReadsJobs {}
/// The set holds the node lock, to read at least.
pub trait ReadsNodes: LockSet {}
/// The set holds the node write lock.
pub trait WritesNodes: ReadsNodes {}

/// What starting and resizing jobs needs, as the stock backfill takes it:
/// read config and partitions, write jobs and nodes.
pub struct Scheduling;
impl LockSet for Scheduling {
    const LOCKS: Locks = Locks {
        conf: LockLevel::Read,
        job: LockLevel::Write,
        node: LockLevel::Write,
        part: LockLevel::Read,
        fed: LockLevel::Read,
    };
}
impl ReadsJobs for Scheduling {}
impl WritesJobs for Scheduling {}
impl ReadsNodes for Scheduling {}
impl WritesNodes for Scheduling {}

/// Reading job, node and partition records, changing nothing.
pub struct Reading;
impl LockSet for Reading {
    const LOCKS: Locks = Locks {
        conf: LockLevel::Read,
        job: LockLevel::Read,
        node: LockLevel::Read,
        part: LockLevel::Read,
        fed: LockLevel::None,
    };
}
impl ReadsJobs for Reading {}
impl ReadsNodes for Reading {}

/// Holds the locks of `L` until dropped. Views borrowed from it cannot
/// outlive it, so no record is read after the locks are released.
pub struct LockGuard<L: LockSet> {
    pub(crate) ctld: &'static Slurmctld,
    /// When the locks were taken (Slurm's clock): a thread of slurmctld's
    /// that came to need them since has waited (fairshare.rs).
    pub(crate) taken_at: i64,
    // slurmctld's locks are pthread rwlocks: release them on the thread
    // that took them.
    _not_send: PhantomData<*const L>,
}

impl<L: LockSet> LockGuard<L> {
    pub fn acquire(ctld: &'static Slurmctld) -> LockGuard<L> {
        // SAFETY: lock_slurmctld takes the locks in slurmctld's order; the
        // guard releases exactly the same set on drop.
        unsafe { (ctld.lock)(L::LOCKS.raw()) };
        // Slurm's clock: the decay pass it is held against stamps itself so.
        LockGuard { ctld, taken_at: crate::common::clock::now(), _not_send: PhantomData }
    }
}

impl<L: ReadsJobs> LockGuard<L> {
    /// Every job record, in slurmctld's list order.
    pub fn jobs(&self) -> JobIter<'_> {
        // SAFETY: job_list points to slurmctld's global list; the job lock
        // L holds keeps its records alive while the iterator (tied to self) lives.
        unsafe { JobIter::new(*self.ctld.job_list) }
    }

    /// The job with this id, if it exists.
    pub fn find_job(&self, job_id: u32) -> Option<JobView<'_>> {
        // SAFETY: find_job_record only reads the job hash, under our lock.
        let p = unsafe { (self.ctld.find_job_record)(job_id) };
        // SAFETY: a non-null result is a live record while the lock is held.
        unsafe { JobView::from_ptr(p) }
    }
}

impl<L: ReadsNodes> LockGuard<L> {
    /// Every node record with its index in the node table.
    pub fn nodes(&self) -> NodeIter<'_> {
        NodeIter::new()
    }

    /// The node at `index` of slurmctld's node table, if that slot holds one.
    pub fn node(&self, index: usize) -> Option<NodeView<'_>> {
        NodeView::at(index)
    }

    /// Size of slurmctld's node table (node indices run below it).
    pub fn node_table_len(&self) -> usize {
        // SAFETY: a plain int global, changed only under the node write
        // lock, which nobody holds while we hold the node lock.
        unsafe { sys::node_record_count.max(0) as usize }
    }
}

impl<L: WritesJobs> LockGuard<L> {
    /// Set a job's `SystemComment=` (what `scontrol show job` shows), if
    /// it says something else. Users cannot change it; slurmctld keeps it
    /// in its state, so it survives a restart. Whether it changed.
    pub fn set_system_comment(&mut self, job_id: u32, text: &str) -> bool {
        let Some(job) = self.find_job(job_id) else { return false };
        // SAFETY: a live record under our job write lock.
        unsafe { crate::ctld::job::write_system_comment(job.as_ptr(), text) }
    }

    /// Say why waiting jobs wait and when each is expected to start, as
    /// Slurm's backfill does: its Reason, a text squeue shows instead of
    /// the reason's name (`None`: the name), and its expected start
    /// (`squeue --start`; 0: not known). A job no longer waiting, or held
    /// since the pass read it (its JobHeldAdmin stays), is left as it is.
    /// Returns how many changed.
    ///
    /// Callers pass the waits that differ from what the job shows (see
    /// [`Wait::is_shown`]), so that a pass with ten thousand waiting jobs
    /// touches the few whose Reason or start moved: those are found by id,
    /// and many at once in one walk of the job list (a lookup hashes an id
    /// and follows a chain; a walk costs about a lookup per job).
    pub fn set_waiting(&mut self, waits: &[Wait<'_>]) -> usize {
        /// Above this many, one walk of the list beats a lookup each.
        const LOOKUPS: usize = 256;
        let mut changed = 0;
        if waits.len() <= LOOKUPS {
            for w in waits {
                if let Some(job) = self.find_job(w.job).filter(JobView::waits_unheld) {
                    // SAFETY: a live record under our job write lock.
                    changed += usize::from(unsafe { self.show_wait(job.as_ptr(), w) });
                }
            }
            return changed;
        }
        let by_id: HashMap<u32, &Wait<'_>> = waits.iter().map(|w| (w.job, w)).collect();
        for job in self.jobs() {
            let Some(w) = by_id.get(&job.id()).filter(|_| job.waits_unheld()) else { continue };
            // SAFETY: a live record under our job write lock.
            changed += usize::from(unsafe { self.show_wait(job.as_ptr(), w) });
        }
        changed
    }

    /// Give one waiting job `w`'s Reason and start; whether either changed.
    ///
    /// # Safety
    /// `ptr` is a live record under our job write lock.
    unsafe fn show_wait(&self, ptr: *mut sys::job_record_t, w: &Wait<'_>) -> bool {
        // SAFETY: by the caller's contract.
        unsafe {
            // A new Reason stamps the job records' change (set_reason), as
            // Slurm's backfill stamps it; a moved estimate alone does not
            // (a booking at "now" moves every second, and the stamp would
            // wake a pass each time).
            let reason_changed = self.set_reason(ptr, w.code.reason(), w.shown_text());
            if (*ptr).start_time != w.start || reason_changed {
                (*ptr).start_time = w.start;
                return true;
            }
        }
        false
    }

    /// Give a job this Reason code and text (`None`: the code's name), as
    /// slurmctld does, stamping the change; whether anything changed.
    ///
    /// # Safety
    /// `ptr` is a live record under our job write lock.
    unsafe fn set_reason(&self, ptr: *mut sys::job_record_t, reason: u32, text: Option<&str>) -> bool {
        // SAFETY: by the caller's contract; state_desc is NULL or xmalloc'd
        // (freed with xfree, which NULLs it), the new one xstrdup'd, as
        // slurmctld frees it with the record; a NULL string reads as None.
        unsafe {
            let old = crate::common::cstr::cstr_to_string((*ptr).state_desc);
            if (*ptr).state_reason == reason && old.as_deref() == text {
                return false;
            }
            (*ptr).state_reason = reason;
            if old.as_deref() != text {
                sys::slurm_xfree(std::ptr::addr_of_mut!((*ptr).state_desc).cast());
                if let Some(t) = text {
                    let c = crate::common::cstr::c_text(t);
                    (*ptr).state_desc = sys::xstrdup(c.as_ptr());
                }
            }
            *self.ctld.last_job_update = libc::time(std::ptr::null_mut());
        }
        true
    }

    /// Slurm's own checks of a waiting job before a scheduler starts it, as
    /// its main scheduler makes them: its partition's state and limits
    /// (MaxTime, MaxNodes, MinNodes) and its QOS (job_limits_check; the
    /// job's Reason becomes what fails), a job array's `%N` throttle
    /// (job_array_start_test), its QOS still allowed to its association
    /// (Reason InvalidQOS), its association's and QOS's limits when
    /// they are enforced (acct_policy_job_runnable_pre_select and
    /// _post_select), its licenses (license_job_test; Reason Licenses),
    /// its association still valid (Reason InvalidAccount),
    /// then its deadline (deadline_ok,
    /// which ends a job that can no longer meet it, state DEADLINE).
    /// Whether it may start now.
    pub fn may_start_now(&self, job: &JobView<'_>) -> bool {
        let mut ptr = job.as_ptr();
        // SAFETY: a live record under our job write lock, which these
        // functions need (they may set its reason or end it; the accounting
        // checks take the association manager's locks themselves, as in
        // Slurm's own schedulers; tres_req_cnt is NULL or the record's
        // array of slurmctld_tres_cnt counts; the QOS and association tests
        // of job_checks.c and job_fail_qos likewise, with slurmctld's own
        // acct_db_conn); job_limits_check
        // aborts slurmctld on a record without details or partition, so those
        // are checked first. The function names are NUL-terminated literals
        // deadline_ok and job_fail_qos only print.
        unsafe {
            if (*ptr).details.is_null() || (*ptr).part_ptr.is_null() {
                return false;
            }
            let reason = (self.ctld.job_limits_check)(&mut ptr, false);
            if reason != sys::job_state_reason_WAIT_NO_REASON as libc::c_int {
                if (*ptr).state_reason != reason as u32 {
                    self.set_reason(ptr, reason as u32, None);
                }
                return false;
            }
            // A job array's next task, while as many run as its `%N` allows:
            // not yet (true for any other job).
            if !(self.ctld.job_array_start_test)(ptr) {
                return false;
            }
            // Its QOS, still one its association may use (an admin may take
            // it away after submission): else Reason InvalidQOS, until it
            // is given back, as slurmctld's schedulers test it each pass.
            let enforce = *self.ctld.accounting_enforce;
            // (A job already InvalidQOS is not asked: job_independent holds
            // it until tend_waiting gives it its QOS back.)
            if sys::malleable_job_qos_invalid(ptr, enforce) != 0 {
                (self.ctld.job_fail_qos)(ptr, c"sched/malleable".as_ptr(), false);
                *self.ctld.last_job_update = libc::time(std::ptr::null_mut());
                return false;
            }
            // Its association's and QOS's limits (AccountingStorageEnforce=
            // limits), as Slurm's schedulers check them before they place a
            // job: the job counts (MaxJobs, GrpJobs...) and wall limits, then
            // its TRES as it asks them (GrpTRES, MaxTRESPerUser...). Each
            // sets the job's Reason when it says no (AssocMaxJobsLimit,
            // QOSMaxCpuPerUserLimit...). Left in the queue, such a job would
            // take free nodes in the strategy's plan that select_nodes then
            // refuses it, at every pass, and the jobs behind it would wait.
            if u32::from(*self.ctld.accounting_enforce) & sys::ACCOUNTING_ENFORCE_LIMITS != 0 {
                if !(self.ctld.runnable_pre_select)(ptr, false) {
                    return false;
                }
                let tres = (*ptr).tres_req_cnt;
                if !tres.is_null() && !(self.ctld.runnable_post_select)(ptr, tres, false) {
                    return false;
                }
            }
            // Its licenses (`-L`), free now or not: a job waiting for them
            // shows Licenses, as under Slurm's own scheduler.
            if !(*ptr).license_list.is_null()
                && (self.ctld.license_job_test)(ptr, libc::time(std::ptr::null_mut()), true)
                    != sys::SLURM_SUCCESS as i32
            {
                if (*ptr).state_reason != sys::job_state_reason_WAIT_LICENSES {
                    self.set_reason(ptr, sys::job_state_reason_WAIT_LICENSES, None);
                }
                return false;
            }
            // Its association, still valid (its account or user not removed
            // since): else Reason InvalidAccount.
            if sys::malleable_job_assoc_invalid(ptr, *self.ctld.acct_db_conn, enforce) != 0 {
                self.set_reason(ptr, sys::job_state_reason_FAIL_ACCOUNT, None);
                return false;
            }
            let deadline = (*ptr).deadline;
            if deadline != 0 && deadline != sys::NO_VAL as libc::time_t {
                return (self.ctld.deadline_ok)(ptr, c"sched/malleable".as_ptr().cast_mut());
            }
            true
        }
    }

    /// The most nodes `job` may hold under its QOS's and association's
    /// node limits (per job, user and account, and their group totals), when
    /// they are enforced and set; `None` otherwise. A running job's expand
    /// goes no further (the group totals are also checked, by Slurm, for
    /// the nodes an expand adds).
    pub fn node_limit(&self, job: &JobView<'_>) -> Option<u32> {
        let mut reason = 0u32;
        // SAFETY: a live record under our job lock; the function takes the
        // association manager's read locks itself and only reads the job.
        unsafe {
            if u32::from(*self.ctld.accounting_enforce) & sys::ACCOUNTING_ENFORCE_LIMITS == 0 {
                return None;
            }
            let most = (self.ctld.limits_max_nodes)(job.as_ptr(), &mut reason);
            (most < sys::INFINITE - 1).then_some(most)
        }
    }

    /// What slurmctld's main scheduler does for every waiting job as it
    /// builds its queue (build_job_queue), which it never does here
    /// (`sched_interval=-1`): a job whose association or QOS was lost
    /// (Reason InvalidAccount, InvalidQOS) gets it back once it is valid
    /// again (set_job_failed_assoc_qos_ptr), and a job starts accruing age
    /// for multifactor priority, within its accrue limits
    /// (acct_policy_handle_accrue_time). That function does nothing more
    /// for a job that accrues already and is no job array, but take the
    /// association manager's write lock: such a job is passed by.
    pub fn tend_waiting(&self, job: &JobView<'_>) {
        let ptr = job.as_ptr();
        // SAFETY: a live pending record under our job write lock, which both
        // functions need (they set its reason, association and QOS pointers
        // and accrue time); they take the association manager's locks
        // themselves (assoc_mgr_locked false). details and array_recs are
        // checked for NULL before they are read.
        unsafe {
            let reason = (*ptr).state_reason;
            if reason == sys::job_state_reason_FAIL_QOS || reason == sys::job_state_reason_FAIL_ACCOUNT {
                (self.ctld.set_job_failed_assoc_qos_ptr)(ptr);
            }
            let details = (*ptr).details;
            if details.is_null() {
                return;
            }
            let array_tasks = (*ptr).array_recs.as_ref().is_some_and(|a| a.task_cnt > 0);
            if (*details).accrue_time == 0 || array_tasks {
                (self.ctld.handle_accrue_time)(ptr, false);
            }
        }
    }

    /// A requeued job's last resize forgotten, once the requeue is over
    /// (the job waiting, its last run's records sent): slurmctld keeps a
    /// job's resize time across a requeue, and on 22.05 slurmdbd keys the
    /// record of a resized job by that time when it has no index for it,
    /// which a requeue takes away: the next run's first record, sent
    /// within 5 s by slurmctld's dbinx thread, would be written into the
    /// last resize's, its start that resize's and its span the time the
    /// job waited. Forgotten, the next run is recorded as a job never
    /// resized, keyed by its new submission (the requeue's). From 24.11
    /// slurmctld names each record's index itself, and 26.05 recorded the
    /// runs apart without this (the compose test); there it changes
    /// nothing. Whether it was set.
    ///
    /// A resize of Slurm's own that no pass saw (the job's two hosts lost
    /// in one of slurmctld's passes: the first taken out of the job, the
    /// second requeuing it) is remembered for its fair-share window first:
    /// the requeue's end counted the job's usage again from the last decay
    /// pass at the new size, and the window is taken back at the next pass.
    pub fn forget_requeued_resize(&self, job: &JobView<'_>) -> bool {
        if !job.is_pending() || job.is_completing() || !job.resized() {
            return false;
        }
        self.fairshare_after_slurms_resize(job.id());
        // 22.05: the requeue may have written over the run's first record.
        self.keep_first_record_of_requeued_run(job);
        // SAFETY: a live record under our job write lock; resize_time and
        // the details' submit_time are plain time_t that slurmctld reads
        // under the job lock only; details is checked for NULL.
        unsafe {
            let rec = job.as_ptr();
            // Requeued in the second of the resize (a --no-kill job's two
            // hosts lost in one pass: the first taken out of the job, the
            // second requeuing it), its new submission keys the next run's
            // records as the resize's: the next run would be written over
            // the last piece of this one. A second on, as stock moves a
            // requeued job's submission off its last one (batch_requeue_fini).
            if let Some(details) = (*rec).details.as_mut() {
                if details.submit_time == (*rec).resize_time {
                    details.submit_time += 1;
                }
            }
            (*rec).resize_time = 0;
        }
        true
    }

    /// A requeued job's last run's billing forgotten, once it waits again.
    /// slurmctld computes a job's billable TRES (what fair share counts and
    /// its records bill) at its first start and then only after a resize
    /// (calc_job_billable_tres, 22.05 to 26.05), so a job requeued and
    /// started again at another size (on more nodes than its last run had,
    /// as a moldable start or `-N1-2` gives it) was billed at its last
    /// run's size: 2 CPUs billed as 1 (the 30-minute campaign at seed 7,
    /// alice's RawUsage 13% under her records). Forgotten (NO_VAL, as a new
    /// job's), the next start counts it anew. The last run's end was counted
    /// at the requeue (priority_p_job_end), and a waiting job is counted no
    /// more. Whether it was set.
    pub fn forget_requeued_billing(&self, job: &JobView<'_>) -> bool {
        if !job.is_pending() || job.is_completing() {
            return false;
        }
        // SAFETY: a live record under our job write lock; billable_tres is a
        // plain double that slurmctld reads and sets under the job lock.
        unsafe {
            let rec = job.as_ptr();
            if crate::ctld::job::billing_unset((*rec).billable_tres) {
                return false;
            }
            (*rec).billable_tres = f64::from(sys::NO_VAL);
        }
        true
    }

    /// Finish a requeue that slurmctld left undone, as 25.11 finishes it:
    /// before 25.11, a requeued batch job whose last node went down while
    /// its last run ended (its epilog never heard of: a host killed, paused
    /// or cut) waits again without its requeue's end (batch_requeue_fini).
    /// It keeps its last run's start, nodes and accounting record, and its
    /// next run is written over that record
    /// ([`JobView::requeue_left_undone`]). Whether it was finished.
    pub fn finish_requeue(&self, job: &JobView<'_>) -> bool {
        if cfg!(slurm_since_25_11) || !job.requeue_left_undone() {
            return false;
        }
        // SAFETY: as stock calls it, for a waiting job not completing,
        // under the job write lock (job_epilog_complete's); it frees the
        // last run's nodes and resources and resets its accounting.
        #[cfg(not(slurm_since_25_11))]
        unsafe {
            (self.ctld.batch_requeue_fini)(job.as_ptr())
        };
        true
    }

    /// Split `job` (see [`JobView::is_unsplit_correspond_array`]) into
    /// records of its waiting tasks, lowest first, as slurmctld's
    /// build_job_queue does, until `limit` of the array's tasks wait as
    /// records of their own (SchedulerParameters' correspond_after_task_cnt,
    /// [`LockGuard::correspond_after_task_cnt`]); its last task takes the
    /// record itself. The ids of the tasks split off (the record split from
    /// takes a new id: the array's stays with the rest). (A federation's remote
    /// dependencies of a last task are not sent on: no federation here.)
    pub fn split_correspond_array(&self, job: &JobView<'_>, limit: u32) -> Vec<u32> {
        let mut ptr = job.as_ptr();
        let mut split = Vec::new();
        // SAFETY: `ptr` is a live waiting array record under our job write
        // lock, which job_array_split and job_array_post_sched need (they
        // copy the record and add the copy to job_list, which no iterator
        // of ours walks meanwhile: the caller has finished its walk);
        // array_recs and the new record are checked for NULL before use.
        unsafe {
            loop {
                let rec = &mut *ptr;
                let Some(array) = rec.array_recs.as_ref() else { break };
                if array.task_cnt < 1 || array.task_id_bitmap.is_null() {
                    break;
                }
                let waiting = (self.ctld.num_pending_job_array_tasks)(rec.array_job_id);
                if u32::try_from(waiting).unwrap_or(0) >= limit {
                    break;
                }
                let Ok(first) = u32::try_from(sys::bit_ffs(array.task_id_bitmap)) else { break };
                rec.array_task_id = first;
                if array.task_cnt == 1 {
                    #[cfg(not(slurm_since_24_11))]
                    (self.ctld.job_array_post_sched)(ptr);
                    #[cfg(slurm_since_24_11)]
                    (self.ctld.job_array_post_sched)(ptr, true);
                    split.push(rec.job_id);
                    break;
                }
                #[cfg(not(slurm_since_24_11))]
                let rest = (self.ctld.job_array_split)(ptr);
                #[cfg(slurm_since_24_11)]
                let rest = (self.ctld.job_array_split)(ptr, true);
                let Some(rest) = rest.as_mut() else { break };
                split.push(rec.job_id);
                // What is left of the array waits, as build_job_queue leaves it.
                #[cfg(not(slurm_since_24_11))]
                {
                    rest.job_state = sys::job_states_JOB_PENDING;
                }
                #[cfg(all(slurm_since_24_11, not(slurm_since_26_05)))]
                (self.ctld.job_state_set)(rest, sys::job_states_JOB_PENDING);
                #[cfg(slurm_since_26_05)]
                (self.ctld.job_state_set)(rest, sys::job_states_JOB_PENDING, c"malleable_split_array".as_ptr());
                rest.start_time = 0;
                ptr = rest;
            }
        }
        split
    }

    /// How many of an aftercorr array's tasks may wait as records of their
    /// own: SchedulerParameters' correspond_after_task_cnt, 10 by default
    /// (job_scheduler.c's CORRESPOND_ARRAY_TASK_CNT).
    pub fn correspond_after_task_cnt(&self) -> u32 {
        // SAFETY: sched_params is NULL or a string slurm_conf owns, read
        // under the config read lock Scheduling holds.
        let params =
            unsafe { crate::common::cstr::cstr_to_string(std::ptr::addr_of!(sys::slurm_conf.sched_params).read()) };
        params
            .unwrap_or_default()
            .split(',')
            .find_map(|o| o.trim().strip_prefix("correspond_after_task_cnt=")?.parse().ok())
            .unwrap_or(10)
    }

    /// True if the job's dependencies are met and nothing else holds it back
    /// (slurmctld's job_independent, which also updates the job's reason).
    pub fn job_is_independent(&self, job: &JobView<'_>) -> bool {
        // SAFETY: job_independent may update the record's reason fields,
        // which our job write lock allows.
        unsafe { (self.ctld.job_independent)(job.as_ptr()) }
    }
}

/// One waiting job's Reason and expected start, for [`LockGuard::set_waiting`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait<'a> {
    pub job: u32,
    pub code: WaitCode,
    pub text: Option<&'a str>,
    /// Seconds since the epoch; 0 when not known.
    pub start: i64,
}

/// The Reasons a scheduler gives a job it did not start (slurm.h's
/// `job_state_reason`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WaitCode {
    /// A job ahead of it waits.
    Priority,
    /// Too few nodes are free for it.
    Resources,
    /// Not enough power is available for it (`PowerNotAvail`).
    Power,
}

impl WaitCode {
    /// slurm.h's code for it.
    fn reason(self) -> u32 {
        match self {
            WaitCode::Priority => sys::job_state_reason_WAIT_PRIORITY,
            WaitCode::Resources => sys::job_state_reason_WAIT_RESOURCES,
            #[cfg(not(slurm_since_24_11))]
            WaitCode::Power => sys::job_state_reason_WAIT_POWER_NOT_AVAIL,
            // 24.11 dropped the power reasons with its power plugin: the
            // job waits for Resources, its text saying which.
            #[cfg(slurm_since_24_11)]
            WaitCode::Power => sys::job_state_reason_WAIT_RESOURCES,
        }
    }

    /// The text shown when the scheduler gives none: where the code alone
    /// no longer says it (24.11's power wait), 22.05's reason name.
    fn default_text(self) -> Option<&'static str> {
        match self {
            WaitCode::Power if cfg!(slurm_since_24_11) => Some("PowerNotAvail"),
            _ => None,
        }
    }
}

impl Wait<'_> {
    /// The Reason text the job shows for this wait.
    fn shown_text(&self) -> Option<&str> {
        self.text.or(self.code.default_text())
    }

    /// What the job shows once given this wait.
    pub fn as_shown(&self) -> ShownWait {
        ShownWait { reason: self.code.reason(), text: self.shown_text().map(String::from), start: self.start }
    }

    /// Whether the job already shows this wait (read with
    /// [`JobView::shown_wait`]): then [`LockGuard::set_waiting`] has
    /// nothing to change.
    pub fn is_shown(&self, shown: &ShownWait) -> bool {
        shown.reason == self.code.reason() && shown.start == self.start && shown.text.as_deref() == self.shown_text()
    }
}

impl<L: WritesJobs + ReadsNodes> LockGuard<L> {
    /// A running job's batch host set back to the node its batch script
    /// runs on, where slurmctld took another: 22.05 to 25.11 take the
    /// first of a job's nodes for its batch host whenever they read its
    /// state (a restart, a reconfigure: build_node_details), and a job
    /// grown onto a node ahead of the one it started on does not run its
    /// script there. Slurm would then refuse to take that node from the
    /// job and let it free the one the script runs on. The batch step,
    /// recovered with its layout, says where the script runs. What
    /// slurmctld said and where the script runs, when it was set back.
    pub fn restore_batch_host(&self, job: &JobView<'_>) -> Option<(String, String)> {
        let runs_on = job.batch_step_host()?;
        let said = job.batch_host();
        if said == runs_on || said.is_empty() {
            return None;
        }
        // Only to a node the job holds.
        job.node_indices().into_iter().filter_map(NodeView::at).find(|n| n.name_is(&runs_on))?;
        let name = crate::common::cstr::c_text(&runs_on);
        // SAFETY: a live record under our job write lock; batch_host is
        // xmalloc'd by slurmctld and freed with xfree, the new one xmalloc'd
        // by xstrdup as slurmctld frees it with the record.
        unsafe {
            let rec = job.as_ptr();
            sys::slurm_xfree(std::ptr::addr_of_mut!((*rec).batch_host).cast());
            (*rec).batch_host = sys::xstrdup(name.as_ptr());
        }
        Some((said, runs_on))
    }
}

impl<L: LockSet> Drop for LockGuard<L> {
    fn drop(&mut self) {
        // SAFETY: releases exactly the locks acquire() took, on this thread.
        unsafe { (self.ctld.unlock)(L::LOCKS.raw()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_shown_only_when_reason_text_and_start_all_match() {
        let wait = Wait { job: 7, code: WaitCode::Resources, text: None, start: 1_000 };
        let shown = |reason, text: Option<&str>, start| ShownWait { reason, text: text.map(String::from), start };
        let resources = sys::job_state_reason_WAIT_RESOURCES;
        assert!(wait.is_shown(&shown(resources, None, 1_000)));
        // What slurmctld set at submit (Reason None), a moved estimate, a text.
        assert!(!wait.is_shown(&shown(sys::job_state_reason_WAIT_NO_REASON, None, 1_000)));
        assert!(!wait.is_shown(&shown(resources, None, 1_001)));
        assert!(!wait.is_shown(&shown(resources, Some("shrinking"), 1_000)));
        let power = Wait { code: WaitCode::Power, text: Some("held back by the power budget"), ..wait };
        assert!(power.is_shown(&shown(WaitCode::Power.reason(), power.text, 1_000)));
        // Without a text, 24.11 (no power reason of its own) names it.
        let bare = Wait { text: None, ..power };
        assert_eq!(bare.is_shown(&shown(WaitCode::Power.reason(), None, 1_000)), !cfg!(slurm_since_24_11));
        assert_eq!(
            bare.is_shown(&shown(sys::job_state_reason_WAIT_RESOURCES, Some("PowerNotAvail"), 1_000)),
            cfg!(slurm_since_24_11)
        );
    }
}
