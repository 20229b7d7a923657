//! slurmctld's five locks as one RAII guard, and what may be done while
//! holding them: read job and node records, and start a job.

use std::marker::PhantomData;

use slurm_sys as sys;

use crate::bitmap::Bitmap;
use crate::ctld::Slurmctld;
use crate::job::{JobIter, JobView};
use crate::node::NodeIter;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockLevel {
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
    pub conf: LockLevel,
    pub job: LockLevel,
    pub node: LockLevel,
    pub part: LockLevel,
    pub fed: LockLevel,
}

impl Locks {
    /// What starting jobs needs, as the stock backfill takes it: read config
    /// and partitions, write jobs and nodes.
    pub const SCHEDULE: Locks = Locks {
        conf: LockLevel::Read,
        job: LockLevel::Write,
        node: LockLevel::Write,
        part: LockLevel::Read,
        fed: LockLevel::Read,
    };

    fn raw(self) -> sys::slurmctld_lock_t {
        sys::slurmctld_lock_t {
            conf: self.conf.raw(),
            job: self.job.raw(),
            node: self.node.raw(),
            part: self.part.raw(),
            fed: self.fed.raw(),
        }
    }
}

/// Why a job could not be started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartError {
    NoSuchJob(u32),
    NotPending(u32),
    BadNode(usize),
    /// `select_nodes` refused, with Slurm's error code and its text.
    Slurm {
        code: i32,
        text: String,
    },
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::NoSuchJob(id) => write!(f, "JobId={id} does not exist"),
            StartError::NotPending(id) => write!(f, "JobId={id} is not pending"),
            StartError::BadNode(i) => write!(f, "node index {i} is not in the node table"),
            StartError::Slurm { code, text } => write!(f, "select_nodes: {text} ({code})"),
        }
    }
}

/// Holds slurmctld's locks until dropped. Views borrowed from it cannot
/// outlive it, so no record is read after the locks are released.
pub struct LockGuard {
    ctld: &'static Slurmctld,
    locks: Locks,
    // slurmctld's locks are pthread rwlocks: release them on the thread
    // that took them.
    _not_send: PhantomData<*const ()>,
}

impl LockGuard {
    pub fn acquire(ctld: &'static Slurmctld, locks: Locks) -> LockGuard {
        // SAFETY: lock_slurmctld takes the locks in slurmctld's order; the
        // guard releases exactly the same set on drop.
        unsafe { (ctld.lock)(locks.raw()) };
        LockGuard { ctld, locks, _not_send: PhantomData }
    }

    fn require(&self, what: &str, have: LockLevel, need: LockLevel) {
        // A programming error in the plugin, caught by the FFI guard.
        assert!(have >= need, "{what} needs the {need:?} lock, the guard holds {have:?}");
    }

    /// Every job record, in slurmctld's list order.
    pub fn jobs(&self) -> JobIter<'_> {
        self.require("reading jobs", self.locks.job, LockLevel::Read);
        // SAFETY: job_list points to slurmctld's global list; the job read
        // lock keeps its records alive while the iterator (tied to self) lives.
        unsafe { JobIter::new(*self.ctld.job_list) }
    }

    /// The job with this id, if it exists.
    pub fn find_job(&self, job_id: u32) -> Option<JobView<'_>> {
        self.require("reading jobs", self.locks.job, LockLevel::Read);
        // SAFETY: find_job_record only reads the job hash, under our lock.
        let p = unsafe { (self.ctld.find_job_record)(job_id) };
        // SAFETY: a non-null result is a live record while the lock is held.
        unsafe { JobView::from_ptr(p) }
    }

    /// Every node record with its index in the node table.
    pub fn nodes(&self) -> NodeIter<'_> {
        self.require("reading nodes", self.locks.node, LockLevel::Read);
        NodeIter::new()
    }

    /// Size of slurmctld's node table (node indices run below it).
    pub fn node_table_len(&self) -> usize {
        // SAFETY: a plain int global, changed only under the node write lock.
        unsafe { sys::node_record_count.max(0) as usize }
    }

    /// True if the job's dependencies are met and nothing else holds it back
    /// (slurmctld's job_independent, which also updates the job's reason).
    pub fn job_is_independent(&self, job: &JobView<'_>) -> bool {
        self.require("testing dependencies", self.locks.job, LockLevel::Write);
        // SAFETY: job_independent may update the record's reason fields,
        // which our job write lock allows.
        unsafe { (self.ctld.job_independent)(job.as_ptr()) }
    }

    /// Start a pending job on exactly these nodes (indices into the node
    /// table), the way the stock backfill does: every other node is excluded
    /// for the duration of the select_nodes call, then the job's own
    /// exclusions are restored. Returns the node list Slurm recorded.
    pub fn start_job(&mut self, job_id: u32, nodes: &[usize]) -> Result<String, StartError> {
        self.require("starting a job", self.locks.job, LockLevel::Write);
        self.require("starting a job", self.locks.node, LockLevel::Write);
        let table = self.node_table_len();
        if let Some(&bad) = nodes.iter().find(|&&i| i >= table) {
            return Err(StartError::BadNode(bad));
        }
        let job = self.find_job(job_id).ok_or(StartError::NoSuchJob(job_id))?;
        if !job.is_pending() {
            return Err(StartError::NotPending(job_id));
        }
        let job_ptr = job.as_ptr();
        let mut chosen = Bitmap::new(table);
        for &i in nodes {
            chosen.set(i);
        }
        // SAFETY: job_ptr is a live pending record and we hold the job and
        // node write locks, which is what select_nodes, launch_job and
        // srun_allocate require. details is checked for NULL before use.
        unsafe {
            let details = (*job_ptr).details;
            if details.is_null() {
                return Err(StartError::NotPending(job_id));
            }
            // Exclude everything but the chosen nodes, on top of the job's
            // own exclusions, and keep a copy of those to restore.
            let original = Bitmap::copy_of((*details).exc_node_bitmap);
            chosen.not();
            if let Some(orig) = &original {
                chosen.or(orig);
            }
            (*details).exc_node_bitmap = chosen.into_raw();
            let rc = (self.ctld.select_nodes)(
                job_ptr,
                false,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                false,
                sys::SLURMDB_JOB_FLAG_SCHED,
            );
            // select_nodes may have replaced the bitmap: free whatever is
            // there now and put the job's own exclusions back.
            drop(Bitmap::from_raw((*details).exc_node_bitmap));
            (*details).exc_node_bitmap = original.map_or(std::ptr::null_mut(), Bitmap::into_raw);
            if rc != sys::SLURM_SUCCESS as i32 {
                return Err(StartError::Slurm { code: rc, text: crate::strerror(rc) });
            }
            *self.ctld.last_job_update = libc::time(std::ptr::null_mut());
            if (*job_ptr).batch_flag == 0 {
                (self.ctld.srun_allocate)(job_ptr);
            } else if (*job_ptr).job_state & sys::JOB_CONFIGURING == 0 {
                (self.ctld.launch_job)(job_ptr);
            }
            Ok(crate::cstr_to_string((*job_ptr).nodes).unwrap_or_default())
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // SAFETY: releases exactly the locks acquire() took, on this thread.
        unsafe { (self.ctld.unlock)(self.locks.raw()) };
    }
}
