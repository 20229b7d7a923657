//! slurmctld's own globals and functions, found by name at run time.
//!
//! They live in the slurmctld executable, not in a library, so a plugin that
//! linked them directly could not be loaded anywhere else (the symbol check
//! dlopens every .so outside slurmctld). Resolving them once with dlsym also
//! turns "loaded by the wrong daemon" into a clear error instead of a crash.

use std::ffi::CStr;

use once_cell::sync::OnceCell;
use slurm_sys as sys;

type LockFn = unsafe extern "C" fn(sys::slurmctld_lock_t);
/// 22.05: (job, test_only, select_node_bitmap, err_msg, submission, flags).
#[cfg(not(slurm_since_24_11))]
type SelectNodesFn = unsafe extern "C" fn(
    *mut sys::job_record_t,
    bool,
    *mut *mut sys::bitstr_t,
    *mut *mut libc::c_char,
    bool,
    u32,
) -> libc::c_int;
/// 24.11: the job and err_msg went into a job_node_select_t.
#[cfg(slurm_since_24_11)]
type SelectNodesFn = unsafe extern "C" fn(*mut sys::job_node_select_t, bool, bool, u32) -> libc::c_int;
type JobFn = unsafe extern "C" fn(*mut sys::job_record_t);
type JobTestFn = unsafe extern "C" fn(*mut sys::job_record_t) -> bool;
type FindJobFn = unsafe extern "C" fn(u32) -> *mut sys::job_record_t;
/// get_next_job_id(test_only): the id the next job gets (both releases).
type NextJobIdFn = unsafe extern "C" fn(bool) -> u32;
type FindPartFn = unsafe extern "C" fn(*mut libc::c_char) -> *mut sys::part_record_t;
type UpdateJobFn = unsafe extern "C" fn(*mut sys::slurm_msg_t, libc::uid_t, bool) -> libc::c_int;
/// job_allocate(desc, immediate, will_run, resp, allocate, submit_uid, cron,
/// job, err_msg, protocol_version): `allocate` an int until 25.11, a bool
/// since 26.05 ([`Allocate`]).
type JobAllocateFn = unsafe extern "C" fn(
    *mut sys::job_desc_msg_t,
    libc::c_int,
    libc::c_int,
    *mut *mut sys::will_run_response_msg_t,
    Allocate,
    libc::uid_t,
    bool,
    *mut *mut sys::job_record_t,
    *mut *mut libc::c_char,
    u16,
) -> libc::c_int;
type ValidFeatureCountsFn =
    unsafe extern "C" fn(*mut sys::job_record_t, bool, *mut sys::bitstr_t, *mut bool) -> libc::c_int;
/// (job, when, move_time, node_bitmap, exclusions, overlap, reboot); the
/// exclusions were a core bitmap in 22.05 and are a resv_exc_t in 24.11.
#[cfg(not(slurm_since_24_11))]
type ResvExclusions = *mut *mut sys::bitstr_t;
#[cfg(slurm_since_24_11)]
type ResvExclusions = *mut sys::resv_exc_t;
type JobTestResvFn = unsafe extern "C" fn(
    *mut sys::job_record_t,
    *mut libc::time_t,
    bool,
    *mut *mut sys::bitstr_t,
    ResvExclusions,
    *mut bool,
    bool,
) -> libc::c_int;
#[cfg(slurm_since_24_11)]
type ResvExcFreeFn = unsafe extern "C" fn(*mut sys::resv_exc_t);
type JobLimitsCheckFn = unsafe extern "C" fn(*mut *mut sys::job_record_t, bool) -> libc::c_int;
type DeadlineOkFn = unsafe extern "C" fn(*mut sys::job_record_t, *mut libc::c_char) -> bool;
/// job_signal(job, signal, flags, uid, preempt): the same in every release
/// (24.11's job_signal_id, which found the job first, is gone in 25.05).
type JobSignalFn = unsafe extern "C" fn(*mut sys::job_record_t, u16, u16, libc::uid_t, bool) -> libc::c_int;
#[cfg(not(slurm_since_26_05))]
pub(crate) type Allocate = libc::c_int;
#[cfg(slurm_since_26_05)]
pub(crate) type Allocate = bool;
/// job_allocate's `allocate`: an allocation, not a batch job's submission.
#[cfg(not(slurm_since_26_05))]
pub(crate) const ALLOCATE: Allocate = 1;
#[cfg(slurm_since_26_05)]
pub(crate) const ALLOCATE: Allocate = true;
type FreeFn = unsafe extern "C" fn(*mut libc::c_void);
/// A void function of a job record (set_job_failed_assoc_qos_ptr).
type FreeJobFn = unsafe extern "C" fn(*mut sys::job_record_t);
/// slurm_find_preemptable_jobs: a List (list_t * in 24.11) of job records, or NULL.
type FindPreemptableFn = unsafe extern "C" fn(*mut sys::job_record_t) -> sys::List;
type FlagFn = unsafe extern "C" fn() -> bool;
/// acct_policy_get_max_nodes(job, wait_reason): the most nodes its limits allow.
type MaxNodesFn = unsafe extern "C" fn(*mut sys::job_record_t, *mut u32) -> u32;
/// license_job_test(job, when, reboot): SLURM_SUCCESS when its licenses are free.
type LicenseTestFn = unsafe extern "C" fn(*mut sys::job_record_t, libc::time_t, bool) -> libc::c_int;
/// acct_policy_job_runnable_pre_select(job, assoc_mgr_locked).
type PreSelectFn = unsafe extern "C" fn(*mut sys::job_record_t, bool) -> bool;
/// acct_policy_job_runnable_post_select(job, tres_req_cnt, assoc_mgr_locked).
type PostSelectFn = unsafe extern "C" fn(*mut sys::job_record_t, *mut u64, bool) -> bool;
type BillableFn = unsafe extern "C" fn(*mut sys::job_record_t, libc::time_t, bool) -> f64;
/// acct_policy_handle_accrue_time(job, assoc_mgr_locked).
type AccrueFn = unsafe extern "C" fn(*mut sys::job_record_t, bool) -> libc::c_int;
/// job_fail_qos(job, func_name, assoc_locked): Reason InvalidQOS for a waiting job.
type JobFailQosFn = unsafe extern "C" fn(*mut sys::job_record_t, *const libc::c_char, bool) -> libc::c_int;

/// job_array_split and job_array_post_sched: 22.05's take the job; 24.11's
/// also whether to add a new record to job_list themselves.
#[cfg(not(slurm_since_24_11))]
type ArraySplitFn = unsafe extern "C" fn(*mut sys::job_record_t) -> *mut sys::job_record_t;
#[cfg(slurm_since_24_11)]
type ArraySplitFn = unsafe extern "C" fn(*mut sys::job_record_t, bool) -> *mut sys::job_record_t;
/// num_pending_job_array_tasks(array_job_id).
type PendingTasksFn = unsafe extern "C" fn(u32) -> libc::c_int;
/// 24.11's job_state_set(job, state), which keeps slurmctld's counts of
/// states; 26.05 made it a macro over slurm_job_state_set(job, state, caller).
#[cfg(all(slurm_since_24_11, not(slurm_since_26_05)))]
type JobStateSetFn = unsafe extern "C" fn(*mut sys::job_record_t, u32);
#[cfg(slurm_since_26_05)]
type JobStateSetFn = unsafe extern "C" fn(*mut sys::job_record_t, u32, *const libc::c_char);

/// Handles on slurmctld's internals. Obtain it with [`Slurmctld::get`].
pub struct Slurmctld {
    pub(crate) job_list: *mut sys::List,
    pub(crate) resv_list: *mut sys::List,
    /// slurmctld's connection to its accounting storage (`void *`).
    pub(crate) acct_db_conn: *mut *mut libc::c_void,
    pub(crate) last_job_update: *mut libc::time_t,
    /// The seconds of the last change to any partition and any reservation.
    pub(crate) last_part_update: *const libc::time_t,
    pub(crate) last_resv_update: *const libc::time_t,
    pub(crate) diag_stats: *const sys::diag_stats_t,
    config: *const sys::slurmctld_config_t,
    pub(crate) lock: LockFn,
    pub(crate) unlock: LockFn,
    pub(crate) select_nodes: SelectNodesFn,
    pub(crate) launch_job: JobFn,
    pub(crate) srun_allocate: JobFn,
    pub(crate) job_independent: JobTestFn,
    pub(crate) find_job_record: FindJobFn,
    pub(crate) get_next_job_id: NextJobIdFn,
    pub(crate) find_part_record: FindPartFn,
    pub(crate) default_part_loc: *mut *mut sys::part_record_t,
    pub(crate) update_job: UpdateJobFn,
    pub(crate) job_allocate: JobAllocateFn,
    pub(crate) job_signal: JobSignalFn,
    pub(crate) job_test_resv: JobTestResvFn,
    /// 24.11: frees what job_test_resv put in its resv_exc_t.
    #[cfg(slurm_since_24_11)]
    pub(crate) delete_resv_exc_parts: ResvExcFreeFn,
    pub(crate) job_limits_check: JobLimitsCheckFn,
    pub(crate) deadline_ok: DeadlineOkFn,
    pub(crate) job_array_start_test: JobTestFn,
    pub(crate) job_array_split: ArraySplitFn,
    pub(crate) job_array_post_sched: ArraySplitFn,
    pub(crate) num_pending_job_array_tasks: PendingTasksFn,
    #[cfg(slurm_since_24_11)]
    pub(crate) job_state_set: JobStateSetFn,
    pub(crate) valid_feature_counts: ValidFeatureCountsFn,
    /// AccountingStorageEnforce as flags (ACCOUNTING_ENFORCE_*).
    pub(crate) accounting_enforce: *const u16,
    /// How many TRES slurmctld counts (the length of tres_alloc_cnt).
    pub(crate) tres_cnt: *const u32,
    pub(crate) calc_job_billable_tres: BillableFn,
    pub(crate) launch_prolog: JobFn,
    /// Before 25.11: finishes a requeue that slurmctld left undone
    /// ([`crate::ctld::LockGuard::finish_requeue`]).
    #[cfg(not(slurm_since_25_11))]
    pub(crate) batch_requeue_fini: JobFn,
    pub(crate) delete_step_records: JobFn,
    pub(crate) free_step_record: FreeFn,
    pub(crate) find_preemptable_jobs: FindPreemptableFn,
    pub(crate) preemption_enabled: FlagFn,
    pub(crate) runnable_pre_select: PreSelectFn,
    pub(crate) runnable_post_select: PostSelectFn,
    pub(crate) job_fail_qos: JobFailQosFn,
    pub(crate) set_job_failed_assoc_qos_ptr: FreeJobFn,
    pub(crate) handle_accrue_time: AccrueFn,
    pub(crate) license_job_test: LicenseTestFn,
    pub(crate) limits_max_nodes: MaxNodesFn,
}

// SAFETY: the pointers name process-wide globals of slurmctld that live as
// long as the process; all access to what they point to goes through
// slurmctld's locks (see `locks`) or is a word-sized read of a counter.
unsafe impl Send for Slurmctld {}
// SAFETY: as above; the struct itself is never mutated after resolution.
unsafe impl Sync for Slurmctld {}

/// slurmctld's change counters: the second of the last change to any job
/// record and to any node record, and (finer: they move within a second)
/// how many jobs were submitted, started, completed, cancelled or failed
/// since slurmctld started or `sdiag --reset`, added up; and of those, how
/// many ended (completed, cancelled or failed).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UpdateCounters {
    pub job: i64,
    pub node: i64,
    pub job_events: u64,
    pub job_ends: u64,
}

static CTLD: OnceCell<Slurmctld> = OnceCell::new();

fn symbol(name: &CStr) -> Result<*mut libc::c_void, String> {
    // SAFETY: dlsym with RTLD_DEFAULT searches the global scope of the
    // process; `name` is NUL-terminated.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if p.is_null() {
        Err(format!(
            "symbol {} not found: this plugin must be loaded by slurmctld {}",
            name.to_string_lossy(),
            crate::SLURM_RELEASE
        ))
    } else {
        Ok(p)
    }
}

impl Slurmctld {
    /// Resolve slurmctld's symbols (once per process).
    pub fn get() -> Result<&'static Slurmctld, String> {
        CTLD.get_or_try_init(|| {
            // SAFETY: each symbol is transmuted to the type its declaration
            // in slurmctld's headers gives it (the same declarations bindgen
            // read, so a signature change breaks the build, not slurmctld).
            unsafe {
                Ok(Slurmctld {
                    job_list: symbol(c"job_list")?.cast(),
                    resv_list: symbol(c"resv_list")?.cast(),
                    acct_db_conn: symbol(c"acct_db_conn")?.cast(),
                    last_job_update: symbol(c"last_job_update")?.cast(),
                    last_part_update: symbol(c"last_part_update")?.cast(),
                    last_resv_update: symbol(c"last_resv_update")?.cast(),
                    diag_stats: symbol(c"slurmctld_diag_stats")?.cast(),
                    config: symbol(c"slurmctld_config")?.cast(),
                    lock: std::mem::transmute::<*mut libc::c_void, LockFn>(symbol(c"lock_slurmctld")?),
                    unlock: std::mem::transmute::<*mut libc::c_void, LockFn>(symbol(c"unlock_slurmctld")?),
                    select_nodes: std::mem::transmute::<*mut libc::c_void, SelectNodesFn>(symbol(c"select_nodes")?),
                    launch_job: std::mem::transmute::<*mut libc::c_void, JobFn>(symbol(c"launch_job")?),
                    srun_allocate: std::mem::transmute::<*mut libc::c_void, JobFn>(symbol(c"srun_allocate")?),
                    job_independent: std::mem::transmute::<*mut libc::c_void, JobTestFn>(symbol(c"job_independent")?),
                    find_job_record: std::mem::transmute::<*mut libc::c_void, FindJobFn>(symbol(c"find_job_record")?),
                    get_next_job_id: std::mem::transmute::<*mut libc::c_void, NextJobIdFn>(symbol(c"get_next_job_id")?),
                    find_part_record: std::mem::transmute::<*mut libc::c_void, FindPartFn>(symbol(
                        c"find_part_record",
                    )?),
                    default_part_loc: symbol(c"default_part_loc")?.cast(),
                    update_job: std::mem::transmute::<*mut libc::c_void, UpdateJobFn>(symbol(c"update_job")?),
                    job_allocate: std::mem::transmute::<*mut libc::c_void, JobAllocateFn>(symbol(c"job_allocate")?),
                    job_signal: std::mem::transmute::<*mut libc::c_void, JobSignalFn>(symbol(c"job_signal")?),
                    job_test_resv: std::mem::transmute::<*mut libc::c_void, JobTestResvFn>(symbol(c"job_test_resv")?),
                    #[cfg(slurm_since_24_11)]
                    delete_resv_exc_parts: std::mem::transmute::<*mut libc::c_void, ResvExcFreeFn>(symbol(
                        c"reservation_delete_resv_exc_parts",
                    )?),
                    job_limits_check: std::mem::transmute::<*mut libc::c_void, JobLimitsCheckFn>(symbol(
                        c"job_limits_check",
                    )?),
                    deadline_ok: std::mem::transmute::<*mut libc::c_void, DeadlineOkFn>(symbol(c"deadline_ok")?),
                    job_fail_qos: std::mem::transmute::<*mut libc::c_void, JobFailQosFn>(symbol(c"job_fail_qos")?),
                    set_job_failed_assoc_qos_ptr: std::mem::transmute::<*mut libc::c_void, FreeJobFn>(symbol(
                        c"set_job_failed_assoc_qos_ptr",
                    )?),
                    handle_accrue_time: std::mem::transmute::<*mut libc::c_void, AccrueFn>(symbol(
                        c"acct_policy_handle_accrue_time",
                    )?),
                    job_array_start_test: std::mem::transmute::<*mut libc::c_void, JobTestFn>(symbol(
                        c"job_array_start_test",
                    )?),
                    job_array_split: std::mem::transmute::<*mut libc::c_void, ArraySplitFn>(symbol(
                        c"job_array_split",
                    )?),
                    job_array_post_sched: std::mem::transmute::<*mut libc::c_void, ArraySplitFn>(symbol(
                        c"job_array_post_sched",
                    )?),
                    num_pending_job_array_tasks: std::mem::transmute::<*mut libc::c_void, PendingTasksFn>(symbol(
                        c"num_pending_job_array_tasks",
                    )?),
                    #[cfg(all(slurm_since_24_11, not(slurm_since_26_05)))]
                    job_state_set: std::mem::transmute::<*mut libc::c_void, JobStateSetFn>(symbol(c"job_state_set")?),
                    #[cfg(slurm_since_26_05)]
                    job_state_set: std::mem::transmute::<*mut libc::c_void, JobStateSetFn>(symbol(
                        c"slurm_job_state_set",
                    )?),
                    valid_feature_counts: std::mem::transmute::<*mut libc::c_void, ValidFeatureCountsFn>(symbol(
                        c"valid_feature_counts",
                    )?),
                    accounting_enforce: symbol(c"accounting_enforce")?.cast(),
                    tres_cnt: symbol(c"slurmctld_tres_cnt")?.cast(),
                    calc_job_billable_tres: std::mem::transmute::<*mut libc::c_void, BillableFn>(symbol(
                        c"calc_job_billable_tres",
                    )?),
                    launch_prolog: std::mem::transmute::<*mut libc::c_void, JobFn>(symbol(c"launch_prolog")?),
                    #[cfg(not(slurm_since_25_11))]
                    batch_requeue_fini: std::mem::transmute::<*mut libc::c_void, JobFn>(symbol(c"batch_requeue_fini")?),
                    delete_step_records: std::mem::transmute::<*mut libc::c_void, JobFn>(symbol(
                        c"delete_step_records",
                    )?),
                    free_step_record: std::mem::transmute::<*mut libc::c_void, FreeFn>(symbol(c"free_step_record")?),
                    find_preemptable_jobs: std::mem::transmute::<*mut libc::c_void, FindPreemptableFn>(symbol(
                        c"slurm_find_preemptable_jobs",
                    )?),
                    preemption_enabled: std::mem::transmute::<*mut libc::c_void, FlagFn>(symbol(
                        c"slurm_preemption_enabled",
                    )?),
                    runnable_pre_select: std::mem::transmute::<*mut libc::c_void, PreSelectFn>(symbol(
                        c"acct_policy_job_runnable_pre_select",
                    )?),
                    runnable_post_select: std::mem::transmute::<*mut libc::c_void, PostSelectFn>(symbol(
                        c"acct_policy_job_runnable_post_select",
                    )?),
                    license_job_test: std::mem::transmute::<*mut libc::c_void, LicenseTestFn>(symbol(
                        c"license_job_test",
                    )?),
                    limits_max_nodes: std::mem::transmute::<*mut libc::c_void, MaxNodesFn>(symbol(
                        c"acct_policy_get_max_nodes",
                    )?),
                })
            }
        })
    }

    /// Read the change counters without a lock, as the stock backfill agent
    /// does: each is one aligned machine word that slurmctld only ever moves
    /// forward, so a racing read sees either the old or the new second.
    pub fn update_counters(&self) -> UpdateCounters {
        // SAFETY: the pointers name live, aligned globals (see above): two
        // time_t and the u32 fields of slurmctld_diag_stats, each a word
        // that slurmctld bumps under its job lock; volatile keeps the
        // compiler from caching a value across polls.
        unsafe {
            let d = self.diag_stats;
            let count = |ps: &[*const u32]| ps.iter().map(|&p| u64::from(std::ptr::read_volatile(p))).sum::<u64>();
            let job_ends = count(&[
                std::ptr::addr_of!((*d).jobs_completed),
                std::ptr::addr_of!((*d).jobs_canceled),
                std::ptr::addr_of!((*d).jobs_failed),
            ]);
            let job_events =
                job_ends + count(&[std::ptr::addr_of!((*d).jobs_submitted), std::ptr::addr_of!((*d).jobs_started)]);
            UpdateCounters {
                job: std::ptr::read_volatile(self.last_job_update) as i64,
                node: std::ptr::read_volatile(std::ptr::addr_of!(sys::last_node_update)) as i64,
                job_events,
                job_ends,
            }
        }
    }

    /// True once slurmctld has been told to stop (SIGTERM, `scontrol
    /// shutdown`): what starts then may never reach its nodes (a batch
    /// launch queued as slurmctld stops is lost, and the job, recovered as
    /// running, times out).
    pub fn shutting_down(&self) -> bool {
        // SAFETY: a time_t field of a live global, set once by slurmctld's
        // signal thread without a lock; read like the counters.
        unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*self.config).shutdown_time)) != 0 }
    }

    /// True while slurmctld has scheduling switched off (for instance while
    /// it is shutting down or is not the primary controller).
    pub fn scheduling_disabled(&self) -> bool {
        // SAFETY: a bool field of a live global, read like the counters.
        unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*self.config).scheduling_disabled)) }
    }
}
