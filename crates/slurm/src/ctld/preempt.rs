//! Preemption as slurmctld's PreemptType decides it: whether it is on, which
//! running jobs a waiting job may preempt (in the order Slurm preempts
//! them), and a start that preempts them, which select_nodes carries out
//! (requeue, cancel or suspend, as the victim's PreemptMode says).

use slurm_sys as sys;

use crate::ctld::alloc::AllocError;
use crate::ctld::job::{JobState, JobView};
use crate::ctld::locks::{LockGuard, ReadsJobs, WritesJobs, WritesNodes};

impl<L: ReadsJobs> LockGuard<L> {
    /// Whether PreemptType lets any job preempt another.
    pub fn preemption_enabled(&self) -> bool {
        // SAFETY: reads slurm_conf's preempt settings, which our config
        // read lock keeps still.
        unsafe { (self.ctld.preemption_enabled)() }
    }

    /// The running jobs waiting job `job` may preempt, by id, in the order
    /// Slurm would preempt them (its plugin's: lowest priority, or
    /// youngest, first). Empty for a job that is not waiting.
    pub fn preemptable_by(&self, job: &JobView<'_>) -> Vec<u32> {
        if !job.is_pending() {
            return Vec::new();
        }
        let ptr = job.as_ptr();
        let mut ids = Vec::new();
        // SAFETY: a live pending record under our job lock, with its
        // partition's node bitmap checked by the function itself; the list
        // it returns (or NULL) is ours, made with no destructor, and holds
        // live job records, read under the same lock before it is freed.
        unsafe {
            if (*ptr).part_ptr.is_null() {
                return ids;
            }
            let list = (self.ctld.find_preemptable_jobs)(ptr);
            if list.is_null() {
                return ids;
            }
            let it = sys::list_iterator_create(list);
            loop {
                let victim = sys::list_next(it).cast::<sys::job_record_t>();
                if victim.is_null() {
                    break;
                }
                ids.push((*victim).job_id);
            }
            sys::list_iterator_destroy(it);
            sys::list_destroy(list);
        }
        ids
    }
}

/// What a start that preempts did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preempting {
    /// The job started at once (its victims were suspended by gang
    /// scheduling, or their nodes were free after all): its id and node list.
    Started(u32, String),
    /// Slurm is preempting these of the victims named; the job waits for
    /// their nodes.
    Victims(Vec<u32>),
}

impl<L: WritesJobs + WritesNodes> LockGuard<L> {
    /// Start waiting job `job_id` on exactly these nodes (node-table
    /// indices), some held by jobs it may preempt: select_nodes preempts
    /// those it needs (and only those), and says the nodes are busy until
    /// they are back; the job starts at a later pass, as under Slurm's own
    /// scheduler. Which of `victims` Slurm is preempting, by their state
    /// after the call.
    pub fn preempt_for(&mut self, job_id: u32, nodes: &[usize], victims: &[u32]) -> Result<Preempting, AllocError> {
        match self.start_job(job_id, nodes, None, None) {
            Ok((started, list)) => Ok(Preempting::Started(started, list)),
            Err(AllocError::Slurm { code, .. }) if code == sys::slurm_err_t_ESLURM_NODES_BUSY as i32 => {
                let preempted =
                    victims.iter().copied().filter(|&v| self.find_job(v).is_some_and(|j| is_leaving(&j))).collect();
                Ok(Preempting::Victims(preempted))
            }
            Err(e) => Err(e),
        }
    }
}

/// A job being preempted: requeued or cancelled (completing), or suspended.
fn is_leaving(job: &JobView<'_>) -> bool {
    job.state() != JobState::Running || job.is_completing()
}
