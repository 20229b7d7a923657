//! Changing who holds which nodes, with the job and node write locks held
//! (the compiler checks it: these are methods of a guard whose lock set
//! writes both): starting a pending job on exactly the chosen nodes, as
//! the stock backfill does it, on fewer nodes than it asked for when it is
//! moldable; shrinking a running job to the nodes it keeps; and growing one
//! onto idle nodes.
//!
//! Resizes go through slurmctld's own `update_job`, the code an admin's
//! `scontrol update` runs, so every record it keeps (node states, the job's
//! node list and counts, step bitmaps, accounting, state save) follows:
//! - shrink: `NodeList=<the nodes kept>`; slurmctld tells the leaving nodes'
//!   slurmd to end the job there and frees them. It never removes the batch
//!   host.
//! - expand: slurmctld grows a job only by merging another job into it. A
//!   helper job is made on the chosen nodes with `--dependency=expand:<job>`
//!   (same user, partition and QOS, no script, so no step: a merge refuses
//!   jobs with steps), started there, and merged (`NumNodes=0`). This needs
//!   `SchedulerParameters=permit_job_expansion`.
//!
//! Without slurmdbd, slurmctld leaves a resized job's `db_index` at NO_VAL64
//! ("being set"), and then refuses every later update of it; with no
//! database to set it, it is put back to 0 here.

use slurm_sys as sys;

use crate::common::bitmap::Bitmap;
use crate::common::cstr::{c_text, cstr_to_string, strerror};
use crate::ctld::locks::{LockGuard, WritesJobs, WritesNodes};
use crate::ctld::merge_cores;
use crate::ctld::slurmdbd::NO_VAL64;

/// Why a job could not be started or resized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    NoSuchJob(u32),
    NotPending(u32),
    NotRunning(u32),
    BadNode(usize),
    /// Slurm refused, with what was asked, its error code and its text.
    Slurm {
        what: &'static str,
        code: i32,
        text: String,
    },
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::NoSuchJob(id) => write!(f, "JobId={id} does not exist"),
            AllocError::NotPending(id) => write!(f, "JobId={id} is not pending"),
            AllocError::NotRunning(id) => write!(f, "JobId={id} is not running"),
            AllocError::BadNode(i) => write!(f, "node index {i} is not in the node table"),
            AllocError::Slurm { what, code, text } => write!(f, "{what}: {text} ({code})"),
        }
    }
}

/// A job started on part of nodes ([`LockGuard::place_job`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The id it started under (an array's task has its own).
    pub started: u32,
    /// Its node list as Slurm writes it.
    pub list: String,
    /// The CPUs it got on each node: (node-table index, CPUs).
    pub cpus: Vec<(usize, u32)>,
}

fn slurm_error(what: &'static str, code: i32) -> AllocError {
    AllocError::Slurm { what, code, text: strerror(code) }
}

/// A name list Slurm writes ("n[1-3,5]") for node-table indices, as an
/// xmalloc'd string the caller frees with xfree.
struct NodeNames(*mut libc::c_char);

impl NodeNames {
    fn of(table: usize, nodes: &[usize]) -> NodeNames {
        let mut b = Bitmap::new(table);
        for &i in nodes {
            b.set(i);
        }
        // SAFETY: a valid bitmap of the node table's size; bitmap2node_name
        // reads the node table (under our node lock) and returns an
        // xmalloc'd string.
        NodeNames(unsafe { sys::bitmap2node_name(b.as_raw()) })
    }
}

impl Drop for NodeNames {
    fn drop(&mut self) {
        // SAFETY: xmalloc'd by bitmap2node_name, freed once; xfree NULLs it.
        unsafe { sys::slurm_xfree(std::ptr::addr_of_mut!(self.0).cast()) }
    }
}

/// The time limit (minutes) a job with a `--deadline` starts with, as
/// slurmctld's own scheduler sets it (job_scheduler.c): the minutes left
/// to its deadline, no more than its own limit, else its partition's
/// DefaultTime, else its MaxTime. `None` without a deadline, or with less
/// than a minute left (slurmctld then keeps the limit too; deadline_ok,
/// checked before, ends a job that cannot finish in time).
///
/// # Safety
/// `job_ptr` is a live record under the job lock; its part_ptr is NULL or
/// a live partition record.
unsafe fn deadline_limit(job_ptr: *const sys::job_record_t, now: libc::time_t) -> Option<u32> {
    // SAFETY: by the caller's contract.
    let (deadline, own, part) = unsafe { ((*job_ptr).deadline, (*job_ptr).time_limit, (*job_ptr).part_ptr.as_ref()) };
    if deadline == 0 || deadline == sys::NO_VAL as libc::time_t {
        return None;
    }
    let left = u32::try_from((deadline - now).max(0) / 60).unwrap_or(u32::MAX);
    let set = |m: u32| m != sys::NO_VAL && m != sys::INFINITE;
    let cap = if set(own) {
        Some(own)
    } else {
        part.and_then(|p| [p.default_time, p.max_time].into_iter().find(|&m| set(m)))
    };
    let limit = cap.map_or(left, |c| c.min(left));
    (limit > 0).then_some(limit)
}

/// What a start may change in a pending job's request: its node count,
/// the CPU and task counts slurmctld derived from it at submission, and
/// its time limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Request {
    min_nodes: u32,
    max_nodes: u32,
    min_cpus: u32,
    max_cpus: u32,
    num_tasks: u32,
    time_limit: u32,
    time_set: u16,
}

impl Request {
    /// # Safety
    /// `job_ptr` is a live record with details, under the job lock.
    unsafe fn read(job_ptr: *const sys::job_record_t) -> Request {
        // SAFETY: by the caller's contract.
        unsafe {
            let d = &*(*job_ptr).details;
            Request {
                min_nodes: d.min_nodes,
                max_nodes: d.max_nodes,
                min_cpus: d.min_cpus,
                max_cpus: d.max_cpus,
                num_tasks: d.num_tasks,
                time_limit: (*job_ptr).time_limit,
                time_set: (*job_ptr).limit_set.time,
            }
        }
    }

    /// # Safety
    /// `job_ptr` is a live record with details, under the job write lock.
    unsafe fn write(&self, job_ptr: *mut sys::job_record_t) {
        // SAFETY: by the caller's contract.
        unsafe {
            let d = &mut *(*job_ptr).details;
            d.min_nodes = self.min_nodes;
            d.max_nodes = self.max_nodes;
            d.min_cpus = self.min_cpus;
            d.max_cpus = self.max_cpus;
            d.num_tasks = self.num_tasks;
            (*job_ptr).time_limit = self.time_limit;
            (*job_ptr).limit_set.time = self.time_set;
        }
    }

    /// The request for exactly `n` nodes, of a job that needs `needed`
    /// (its own count, or the nodes its CPUs need). A job started on
    /// another count keeps its CPUs and tasks per node: slurmctld set its
    /// CPU count from `--nodes` at submission (one per node at least), and
    /// select refuses fewer nodes than hold it ("never runnable"). A
    /// `time_limit` is set as root sets one, so slurmctld does not cut it
    /// back to the partition's MaxTime when the job starts.
    fn on(&self, n: u32, needed: u32, time_limit: Option<u32>) -> Request {
        let mut r = *self;
        let asked = self.min_nodes.max(needed).max(1);
        if self.min_nodes != n || self.max_nodes != n {
            r.min_nodes = n;
            r.max_nodes = n;
            r.min_cpus = per_node(self.min_cpus, n, asked);
            r.num_tasks = per_node(self.num_tasks, n, asked);
            if r.max_cpus != sys::NO_VAL && r.max_cpus < r.min_cpus {
                r.max_cpus = r.min_cpus;
            }
        }
        if let Some(minutes) = time_limit {
            r.time_limit = minutes;
            r.time_set = sys::ADMIN_SET_LIMIT as u16;
        }
        r
    }
}

/// A count asked for `asked` nodes, scaled to `n` nodes (rounded up, at
/// least one a node); 0 and NO_VAL (not asked) stay as they are.
fn per_node(count: u32, n: u32, asked: u32) -> u32 {
    if count == 0 || count == sys::NO_VAL {
        return count;
    }
    let scaled = (u64::from(count) * u64::from(n)).div_ceil(u64::from(asked.max(1)));
    u32::try_from(scaled).unwrap_or(u32::MAX).max(n)
}

impl<L: WritesJobs + WritesNodes> LockGuard<L> {
    fn check_nodes(&self, nodes: &[usize]) -> Result<usize, AllocError> {
        let table = self.node_table_len();
        match nodes.iter().find(|&&i| i >= table) {
            Some(&bad) => Err(AllocError::BadNode(bad)),
            None => Ok(table),
        }
    }

    /// select_nodes for `job_ptr` on exactly `nodes`: every other node is
    /// excluded for the call, then the job's own exclusions are put back.
    ///
    /// # Safety
    /// `job_ptr` is a live pending record with details, and the guard
    /// holds the job and node write locks.
    unsafe fn select_on(&mut self, job_ptr: *mut sys::job_record_t, nodes: &[usize], table: usize) -> i32 {
        let mut chosen = Bitmap::new(table);
        for &i in nodes {
            chosen.set(i);
        }
        // SAFETY: by the caller's contract; details is not NULL.
        unsafe {
            let details = (*job_ptr).details;
            // Exclude everything but the chosen nodes, on top of the job's
            // own exclusions, and keep a copy of those to restore.
            let original = Bitmap::copy_of((*details).exc_node_bitmap);
            chosen.not();
            if let Some(orig) = &original {
                chosen.or(orig);
            }
            (*details).exc_node_bitmap = chosen.into_raw();
            let rc = self.call_select_nodes(job_ptr);
            // select_nodes may have replaced the bitmap: free whatever is
            // there now and put the job's own exclusions back.
            drop(Bitmap::from_raw((*details).exc_node_bitmap));
            (*details).exc_node_bitmap = original.map_or(std::ptr::null_mut(), Bitmap::into_raw);
            rc
        }
    }

    /// slurmctld's select_nodes for a start now, not a test, as the
    /// scheduler (SLURMDB_JOB_FLAG_SCHED).
    ///
    /// # Safety
    /// As [`Self::select_on`].
    #[cfg(not(slurm_since_24_11))]
    unsafe fn call_select_nodes(&self, job_ptr: *mut sys::job_record_t) -> i32 {
        // SAFETY: by the caller's contract; no bitmap or message asked back.
        unsafe {
            (self.ctld.select_nodes)(
                job_ptr,
                false,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                false,
                sys::SLURMDB_JOB_FLAG_SCHED,
            )
        }
    }

    /// 24.11 takes the job (and where to put a message) in a
    /// job_node_select_t, as its backfill passes it.
    #[cfg(slurm_since_24_11)]
    unsafe fn call_select_nodes(&self, job_ptr: *mut sys::job_record_t) -> i32 {
        let mut select = sys::job_node_select_t { job_ptr, ..Default::default() };
        // SAFETY: by the caller's contract; err_msg is NULL (no message
        // asked back), the struct lives across the call.
        unsafe { (self.ctld.select_nodes)(&mut select, false, false, sys::SLURMDB_JOB_FLAG_SCHED) }
    }

    /// Start a pending job on exactly these nodes (node-table indices), the
    /// way the stock backfill does. A job started on another count than it
    /// asked for (a moldable start of a malleable job) is given that count
    /// as its request first ([`Request::on`]), and `time_limit` (minutes)
    /// if given; if Slurm refuses, its request is put back. `needed` is the
    /// node count the job's own request stands for
    /// ([`JobView::nodes_needed`](crate::ctld::JobView::nodes_needed); `None`:
    /// its min_nodes). A job whose `--constraint` is about the set of its
    /// nodes (a count, `[a|b]`), or that asks for a generic resource other
    /// than GPUs (`--gres=r1:1`, which the model does not count), that
    /// Slurm refuses on these nodes is tried once more on any available
    /// nodes of that count, Slurm choosing them (seen: a job array asking
    /// for a GRES one node has was tried on another every pass and never
    /// ran; Slurm's test_122_2). Returns the id of the job that started and
    /// the node list Slurm recorded.
    ///
    /// A job array's pending record starts its next task: select_nodes
    /// splits the task off under a new id, and the record that stays
    /// pending (the array's own id) was copied from the one we changed for
    /// the start. Its exclusions and request are put back too, or every
    /// later task could only run on these nodes.
    pub fn start_job(
        &mut self,
        job_id: u32,
        nodes: &[usize],
        needed: Option<u32>,
        time_limit: Option<u32>,
    ) -> Result<(u32, String), AllocError> {
        let table = self.check_nodes(nodes)?;
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        if !job.is_pending() {
            return Err(AllocError::NotPending(job_id));
        }
        let job_ptr = job.as_ptr();
        let slurm_may_pick = job.constraint_is_about_the_set() || job.asks_other_gres();
        // A job of several partitions (`-p a,b`) runs in the first that
        // holds all its nodes, as Slurm's backfill points it there before
        // select_nodes (which then names it first in the list).
        let holding = job.partitions().into_iter().find(|p| p.holds(nodes)).map(|p| p.as_ptr());
        // SAFETY: job_ptr is a live pending record and we hold the job and
        // node write locks, which is what select_nodes, launch_job and
        // srun_allocate require. details is checked for NULL before use;
        // the array's pending record is looked up again after the split.
        unsafe {
            if (*job_ptr).details.is_null() {
                return Err(AllocError::NotPending(job_id));
            }
            let asked = Request::read(job_ptr);
            let limit = match (time_limit, deadline_limit(job_ptr, libc::time(std::ptr::null_mut()))) {
                (Some(t), Some(d)) => Some(t.min(d)),
                (t, d) => t.or(d),
            };
            asked.on(nodes.len() as u32, needed.unwrap_or(asked.min_nodes), limit).write(job_ptr);
            let home = (*job_ptr).part_ptr;
            if let Some(p) = holding {
                (*job_ptr).part_ptr = p;
            }
            let mut rc = self.select_on(job_ptr, nodes, table);
            if rc != sys::SLURM_SUCCESS as i32 && slurm_may_pick {
                // `-C "gpu*2"`, `-C "[a|b]"` or `--gres=r1:1`: the strategy
                // counted the job's nodes, Slurm's feature and GRES logic
                // knows which set of that many satisfies it; any available
                // node may be its.
                let all: Vec<usize> = (0..table).collect();
                rc = self.select_on(job_ptr, &all, table);
            }
            if rc != sys::SLURM_SUCCESS as i32 {
                asked.write(job_ptr);
                (*job_ptr).part_ptr = home;
                return Err(slurm_error("select_nodes", rc));
            }
            let started = (*job_ptr).job_id;
            if started != job_id {
                if let Some(rest) = self.find_job(job_id).filter(|j| j.is_pending()) {
                    let rest = rest.as_ptr();
                    if !(*rest).details.is_null() {
                        let d = (*rest).details;
                        drop(Bitmap::from_raw((*d).exc_node_bitmap));
                        (*d).exc_node_bitmap = Bitmap::copy_of((*(*job_ptr).details).exc_node_bitmap)
                            .map_or(std::ptr::null_mut(), Bitmap::into_raw);
                        asked.write(rest);
                    }
                }
            }
            Ok(self.launch(job_ptr))
        }
    }

    /// Start a pending job that may share cores (its partition's
    /// OverSubscribe) on some of `busy` (node-table indices: nodes other
    /// jobs run on), as Slurm's node selection chooses them for its own
    /// request, which is left as it is. Returns the job's id and node list.
    pub fn start_sharing(&mut self, job_id: u32, busy: &[usize]) -> Result<(u32, String), AllocError> {
        let table = self.check_nodes(busy)?;
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        if !job.is_pending() || busy.is_empty() {
            return Err(AllocError::NotPending(job_id));
        }
        let job_ptr = job.as_ptr();
        // SAFETY: a live pending record (details checked) under the job and
        // node write locks, as select_on and launch require.
        unsafe {
            if (*job_ptr).details.is_null() {
                return Err(AllocError::NotPending(job_id));
            }
            let rc = self.select_on(job_ptr, busy, table);
            if rc != sys::SLURM_SUCCESS as i32 {
                return Err(slurm_error("select_nodes", rc));
            }
            Ok(self.launch(job_ptr))
        }
    }

    /// Launch a job select_nodes has just started: its batch script, or the
    /// answer its srun or salloc waits for. Its id and node list.
    ///
    /// # Safety
    /// `job_ptr` is a live record select_nodes started, under the job and
    /// node write locks.
    unsafe fn launch(&mut self, job_ptr: *mut sys::job_record_t) -> (u32, String) {
        // SAFETY: by the caller's contract.
        unsafe {
            *self.ctld.last_job_update = libc::time(std::ptr::null_mut());
            if (*job_ptr).batch_flag == 0 {
                (self.ctld.srun_allocate)(job_ptr);
            } else if (*job_ptr).job_state & sys::JOB_CONFIGURING == 0 {
                (self.ctld.launch_job)(job_ptr);
            }
            ((*job_ptr).job_id, cstr_to_string((*job_ptr).nodes).unwrap_or_default())
        }
    }

    /// Start a pending job that asks for CPUs (not whole nodes) on exactly
    /// these nodes, all its CPUs spread over them as select/cons_tres lays
    /// them out (its `_eval_nodes`: in a run of neighbouring nodes, each
    /// gives what it has less one CPU for every node still to come; the
    /// model of it is `malleable_model::layout::cons_tres`). Slurm 22.05 has
    /// no way left to name the CPUs a node is to give (req_node_layout is
    /// gone), so the node set and its count are pinned and the layout read
    /// back.
    pub fn place_job(&mut self, job_id: u32, nodes: &[usize]) -> Result<Placed, AllocError> {
        // Its own CPU count on exactly this many nodes: nothing is scaled.
        let n = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
        let (started, list) = self.start_job(job_id, nodes, Some(n), None)?;
        let cpus = self.find_job(started).map(|j| j.cpus_by_node()).unwrap_or_default();
        Ok(Placed { started, list, cpus })
    }

    /// After a resize (ours, or Slurm's own when a node of a --no-kill job
    /// fails), put the job's `db_index` back from NO_VAL64 to 0 where
    /// Slurm would leave it so for good, refusing every update of the job
    /// ("the DB index is being set"):
    /// - without slurmdbd (module docs);
    /// - on 22.05, with slurmdbd away: job_post_resize_acctg marks the
    ///   index "being set" and asks slurmdbd for the new record under the
    ///   locks; when that fails, the request goes to the agent's queue, and
    ///   the answer it gets once slurmdbd is back is dropped. slurmdbd then
    ///   makes the record from the queued request, and finds it for the
    ///   job's later messages by (job, resize time) when they carry index
    ///   0, as it does for any job whose index slurmctld never learnt.
    ///   (Under the locks no request for it is in flight: a resized job's
    ///   index is asked for only there.) From 24.11 the index is slurmctld's
    ///   own and never left "being set".
    ///
    /// Whether it was put back with slurmdbd in use (for the log).
    pub fn settle_db_index(&mut self, job_id: u32) -> bool {
        let Some(job) = self.find_job(job_id) else { return false };
        let with_dbd = crate::ctld::slurmdbd::slurmdbd_in_use();
        if with_dbd && (cfg!(slurm_since_24_11) || !job.resized()) {
            return false;
        }
        let rec = job.as_ptr();
        // SAFETY: the record is live under our job write lock.
        unsafe {
            if (*rec).db_index == NO_VAL64 {
                (*rec).db_index = 0;
                return with_dbd;
            }
        }
        false
    }

    /// 22.05, slurmdbd caught up: ask slurmdbd, under the locks, for the
    /// index of a resized job's record that it never named (its request
    /// went through the agent's queue while slurmdbd was away, and
    /// [`Self::settle_db_index`] left the index 0). Until then each resize
    /// of the job would end the wrong record: slurmdbd looks a record up
    /// without its index by the job's newest resize time, which the resize
    /// has just moved on, and the record that was current would run away.
    /// slurmdbd answers with the record it made from the queued request
    /// (records are unique by job and start of record; the request is
    /// marked as a resize's, as the queued one was, or slurmdbd would take
    /// it for the job's first record, its submission's). The index named,
    /// or None (nothing to name, or slurmdbd did not answer: the request is
    /// queued again, and slurmdbd takes the copy as the same record).
    pub fn name_record(&mut self, job_id: u32) -> Option<u64> {
        if cfg!(slurm_since_24_11) || !crate::ctld::slurmdbd::slurmdbd_in_use() {
            return None;
        }
        let job = self.find_job(job_id)?;
        if !job.resized() {
            return None;
        }
        let rec = job.as_ptr();
        // SAFETY: the record is live under our job write lock, which
        // slurmctld holds for every jobacct_storage_g_job_start of its own
        // (so no one sees the RESIZING mark, set for the call only);
        // acct_db_conn is its connection to slurmdbd.
        unsafe {
            if (*rec).db_index != 0 {
                return None;
            }
            let state = (*rec).job_state;
            (*rec).job_state = state | sys::JOB_RESIZING;
            sys::jobacct_storage_g_job_start(*self.ctld.acct_db_conn, rec);
            (*rec).job_state = state;
            match (*rec).db_index {
                0 | NO_VAL64 => None,
                index => Some(index),
            }
        }
    }

    /// slurmctld's update_job for one request, as root, as `scontrol
    /// update` would send it.
    ///
    /// # Safety
    /// `desc` was set up with slurm_init_job_desc_msg; the guard holds the
    /// job and node write locks, as update_job's RPC handler does.
    unsafe fn update(&mut self, desc: &mut sys::job_desc_msg_t) -> i32 {
        // SAFETY: a zeroed message set up by slurm_msg_t_init, its data our
        // request; auth_cred is NULL, which update_job reads as "no host".
        // update_job frees the job_id_str it makes; array_bitmap is ours.
        unsafe {
            let mut msg: sys::slurm_msg_t = std::mem::zeroed();
            sys::slurm_msg_t_init(&mut msg);
            msg.data = (desc as *mut sys::job_desc_msg_t).cast();
            let rc = (self.ctld.update_job)(&mut msg, 0, false);
            drop(Bitmap::from_raw(desc.array_bitmap));
            desc.array_bitmap = std::ptr::null_mut();
            rc
        }
    }

    /// Shrink a running job to the nodes it keeps (node-table indices, a
    /// subset of its own, with its batch host): slurmctld ends the job on
    /// the others and frees them. With `time_limit` (minutes), the job's
    /// limit is set next (as root may raise it). Returns the job's node
    /// list after.
    pub fn shrink_job(&mut self, job_id: u32, keep: &[usize], time_limit: Option<u32>) -> Result<String, AllocError> {
        let table = self.check_nodes(keep)?;
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        if !job.holds_nodes() {
            return Err(AllocError::NotRunning(job_id));
        }
        // 26.05: its first record's TRES, should this be its first resize.
        self.keep_first_record(&job, true);
        let rec = job.as_ptr();
        let names = NodeNames::of(table, keep);
        let _acks = self.slurmdbd_quick();
        // SAFETY: a request set up as update() requires; req_nodes points
        // into `names`, alive across the call, which only reads it; the
        // job's details are live under our write lock and get their own
        // pointer back. 24.11's update_job does nothing, and says success, when the new
        // NodeList is the very text the job was submitted with (`-w c1`,
        // grown to c[1-2], kept to c1): its submitted list is set aside for
        // the call (the running job's branch does not read it).
        let rc = unsafe {
            let mut desc: sys::job_desc_msg_t = std::mem::zeroed();
            sys::slurm_init_job_desc_msg(&mut desc);
            sys::job_ids::set_desc_job_id(&mut desc, job_id);
            desc.req_nodes = names.0;
            let details = (*rec).details;
            let submitted = if details.is_null() {
                std::ptr::null_mut()
            } else {
                std::mem::replace(&mut (*details).req_nodes, std::ptr::null_mut())
            };
            let rc = self.update(&mut desc);
            if !details.is_null() {
                (*details).req_nodes = submitted;
            }
            rc
        };
        self.settle_db_index(job_id);
        if rc != sys::SLURM_SUCCESS as i32 {
            return Err(slurm_error("update_job NodeList=", rc));
        }
        // A success that changed nothing (as 24.11's did for the submitted
        // list) must not pass for a shrink: the caller would say it committed.
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        let (mut held, mut wanted) = (job.node_indices(), keep.to_vec());
        held.sort_unstable();
        wanted.sort_unstable();
        if held != wanted {
            return Err(AllocError::Slurm {
                what: "update_job NodeList=",
                code: rc,
                text: format!("Slurm said success, but the job still holds {}", job.nodes()),
            });
        }
        self.keep_first_record(&job, true);
        // SAFETY: the job's record is live under our write locks.
        unsafe { self.start_new_record_at_resize(rec) };
        // SAFETY: the job's record is live under our write locks.
        unsafe { self.carry_steps_over(rec) };
        self.fairshare_after_resize(job_id);
        // A second update, once the shrink has opened the job's new
        // accounting record: in the same one, the limit's change would send
        // that record again with the job's first start (set_time_limit).
        if let Some(minutes) = time_limit {
            self.set_time_limit(job_id, minutes)?;
        }
        Ok(self.find_job(job_id).map(|j| j.nodes()).unwrap_or_default())
    }

    /// From 24.11: send the job's new record's start again, begun at the
    /// resize. After the shrink, update_job finds the job's requested TRES
    /// changed (job_post_resize_acctg set them to the new allocation), puts
    /// the old ones back and sends the job's start once more (`_update_job:
    /// updating accounting`), not as a resize's; slurmctld marks a job in
    /// the database as soon as it queues a start, so slurmdbd takes that
    /// one as an update of the new record by its index and writes the run's
    /// start over the record's (chaos run 22: JobIds 72, 76 and 147, each
    /// rolled back just before it ended). Ours is queued after it, with the
    /// resize as the start, and puts the record right. 22.05 waits for the
    /// new record's index under the locks and sends no such start.
    ///
    /// # Safety
    /// `rec` is a live job record under our job write lock.
    unsafe fn start_new_record_at_resize(&self, rec: *mut sys::job_record_t) {
        #[cfg(slurm_since_24_11)]
        {
            if !crate::ctld::slurmdbd::slurmdbd_in_use() {
                return;
            }
            // SAFETY: the job's record is live under our job write lock,
            // which slurmctld holds for each job start it sends; its start
            // time is put back before the lock is released, so no one else
            // sees it; acct_db_conn is its connection to slurmdbd.
            unsafe {
                let r = &mut *rec;
                if r.resize_time == 0 {
                    return;
                }
                let start = std::mem::replace(&mut r.start_time, r.resize_time);
                sys::jobacct_storage_g_job_start(*self.ctld.acct_db_conn, r);
                r.start_time = start;
            }
        }
        #[cfg(not(slurm_since_24_11))]
        let _ = rec;
    }

    /// Set a running job's time limit to `minutes`, as `scontrol update
    /// TimeLimit=` by root does (its end time follows): SD-Policy grows a
    /// mate's limit by what sharing its cores costs it.
    pub fn set_time_limit(&mut self, job_id: u32, minutes: u32) -> Result<(), AllocError> {
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        if !job.holds_nodes() {
            return Err(AllocError::NotRunning(job_id));
        }
        // update_job sends the job's accounting record again with the job's
        // start time, which would move a resized job's current record back
        // to the job's first start (its records would overlap): for the
        // call, the job starts when its current record does.
        let rec = job.as_ptr();
        // SAFETY: a live record under our job write lock; the start time is
        // put back before the lock is released, so no one else sees it.
        let start = unsafe { std::mem::replace(&mut (*rec).start_time, job.record_time().max((*rec).start_time)) };
        let result = self.update_job(job_id, "update_job TimeLimit=", |desc| desc.time_limit = minutes);
        // SAFETY: as above; update_job frees no running job's record.
        unsafe { (*rec).start_time = start };
        self.settle_db_index(job_id);
        result
    }

    /// `update_job` as root with a request that sets only what `set` does.
    fn update_job(
        &mut self,
        job_id: u32,
        what: &'static str,
        set: impl FnOnce(&mut sys::job_desc_msg_t),
    ) -> Result<(), AllocError> {
        // SAFETY: a request set up by slurm_init_job_desc_msg, given plain
        // values by `set` (no pointers); update_job needs the job write
        // lock we hold.
        let rc = unsafe {
            let mut desc: sys::job_desc_msg_t = std::mem::zeroed();
            sys::slurm_init_job_desc_msg(&mut desc);
            sys::job_ids::set_desc_job_id(&mut desc, job_id);
            set(&mut desc);
            self.update(&mut desc)
        };
        if rc == sys::SLURM_SUCCESS as i32 {
            Ok(())
        } else {
            Err(slurm_error(what, rc))
        }
    }

    /// Grow a running job onto idle nodes (node-table indices) through a
    /// helper job merged into it (module docs). On any refusal the helper
    /// is cancelled and the job keeps what it had. Returns the job's node
    /// list after, and the helper's id.
    pub fn expand_job(&mut self, job_id: u32, add: &[usize]) -> Result<(String, u32), AllocError> {
        let table = self.check_nodes(add)?;
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        if !job.holds_nodes() {
            return Err(AllocError::NotRunning(job_id));
        }
        // 26.05: its first record's TRES, should this be its first resize.
        self.keep_first_record(&job, true);
        let names = NodeNames::of(table, add);
        let depend = c_text(&format!("expand:{job_id}"));
        let name = c_text(&format!("expand-{job_id}"));
        let partition = c_text(&job.partition());
        let job_ptr = job.as_ptr();
        let mut helper: *mut sys::job_record_t = std::ptr::null_mut();
        // The helper's start and the merge each wait for slurmdbd.
        let _acks = self.slurmdbd_quick();
        // SAFETY: the request is set up with slurm_init_job_desc_msg and its
        // strings point into values alive across the calls, which copy them;
        // job_allocate, select_nodes and update_job need the job and node
        // write locks we hold; err_msg is xmalloc'd by slurmctld and freed
        // here with xfree; the helper's record is live under our locks.
        unsafe {
            let mut desc: sys::job_desc_msg_t = std::mem::zeroed();
            sys::slurm_init_job_desc_msg(&mut desc);
            desc.user_id = (*job_ptr).user_id;
            desc.group_id = (*job_ptr).group_id;
            desc.name = name.as_ptr().cast_mut();
            desc.partition = partition.as_ptr().cast_mut();
            desc.dependency = depend.as_ptr().cast_mut();
            // 24.11 refuses a job without a working directory (22.05 took
            // one): the job's own, which job_allocate copies.
            let details = (*job_ptr).details;
            desc.work_dir = if details.is_null() || (*details).work_dir.is_null() {
                c"/".as_ptr().cast_mut()
            } else {
                (*details).work_dir
            };
            desc.req_nodes = names.0;
            desc.min_nodes = add.len() as u32;
            desc.max_nodes = add.len() as u32;
            // Its limit is the rest of the job's: the merge keeps the job's own.
            let left = ((*job_ptr).end_time - libc::time(std::ptr::null_mut())).max(60) / 60;
            desc.time_limit = if (*job_ptr).time_limit == sys::INFINITE { sys::INFINITE } else { left as u32 + 1 };
            let mut err_msg: *mut libc::c_char = std::ptr::null_mut();
            let rc = (self.ctld.job_allocate)(
                &mut desc,
                0,
                0,
                std::ptr::null_mut(),
                crate::ctld::symbols::ALLOCATE,
                0,
                false,
                &mut helper,
                &mut err_msg,
                sys::SLURM_PROTOCOL_VERSION as u16,
            );
            let why = cstr_to_string(err_msg);
            sys::slurm_xfree(std::ptr::addr_of_mut!(err_msg).cast());
            if rc != sys::SLURM_SUCCESS as i32 || helper.is_null() {
                if !helper.is_null() {
                    self.cancel((*helper).job_id);
                }
                let mut e = slurm_error("job_allocate for the expand helper", rc);
                if let (AllocError::Slurm { text, .. }, Some(why)) = (&mut e, why) {
                    *text = format!("{text}: {why}");
                }
                return Err(e);
            }
            let helper_id = (*helper).job_id;
            if (*helper).details.is_null() {
                self.cancel(helper_id);
                return Err(AllocError::NotPending(helper_id));
            }
            // Without `defer` in SchedulerParameters, job_allocate itself
            // starts a job that is the first of its partition's queue and
            // fits: the helper's dependency is met (its job runs), so when
            // nothing waits it is already running, on exactly its required
            // nodes.
            let started = (*helper).job_state & sys::JOB_STATE_BASE == sys::job_states_JOB_RUNNING;
            let rc = if started { sys::SLURM_SUCCESS as i32 } else { self.select_on(helper, add, table) };
            if rc != sys::SLURM_SUCCESS as i32 {
                self.cancel(helper_id);
                return Err(slurm_error("select_nodes for the expand helper", rc));
            }
            // With PrologFlags=Contain the helper has an extern step, which
            // the merge would refuse.
            self.end_helper_steps(helper);
            // Each job's cores by node, which the merge mislays (merge_cores).
            let before = [merge_cores::read(job_ptr), merge_cores::read(helper)];
            // A helper with a resize time is not given a record of its own
            // before the merge ends it (job_pre_resize_acctg asks slurmdbd
            // for one, under the locks, only for a job never resized): it
            // gets the one the merge opens, closed below.
            (*helper).resize_time = libc::time(std::ptr::null_mut());
            let mut merge: sys::job_desc_msg_t = std::mem::zeroed();
            sys::slurm_init_job_desc_msg(&mut merge);
            sys::job_ids::set_desc_job_id(&mut merge, helper_id);
            merge.min_nodes = 0;
            let lists = crate::ctld::merge_licenses::EmptyLicenseLists::give(&[job_ptr, helper]);
            let rc = self.update(&mut merge);
            drop(lists);
            self.settle_db_index(job_id);
            self.settle_db_index(helper_id);
            if rc != sys::SLURM_SUCCESS as i32 {
                self.cancel(helper_id);
                return Err(slurm_error("update_job NumNodes=0 (merge)", rc));
            }
            if merge_cores::restore(job_ptr, &before) {
                log::info!("JobId={job_id}: its cores laid out again node by node after the merge");
            }
            self.close_helper_record(helper);
            if let Some(job) = self.find_job(job_id) {
                self.keep_first_record(&job, true);
            }
            self.carry_steps_over(job_ptr);
            self.prolog_on_added_nodes(job_ptr);
            self.fairshare_after_resize(job_id);
            *self.ctld.last_job_update = libc::time(std::ptr::null_mut());
            Ok((self.find_job(job_id).map(|j| j.nodes()).unwrap_or_default(), helper_id))
        }
    }

    /// Close the accounting record that the merge opened for the helper.
    /// The merge ends the helper's first record (RESIZING) and opens one
    /// with no nodes, as for any resized job, then marks the helper
    /// complete without telling the database: that record stayed running
    /// for ever (End=Unknown, a runaway job). It ends at the merge, with no
    /// node-seconds of its own.
    ///
    /// # Safety
    /// `helper` is the merged helper's record, live under our write locks.
    unsafe fn close_helper_record(&mut self, helper: *mut sys::job_record_t) {
        // SAFETY: by the caller's contract; acct_db_conn is slurmctld's
        // global, read under its locks as slurmctld's own callers do.
        unsafe {
            if (*helper).resize_time != 0 {
                (*helper).end_time = (*helper).resize_time;
            }
            sys::jobacct_storage_g_job_complete(*self.ctld.acct_db_conn, helper);
        }
    }

    /// Put the job's running steps into the accounting record a resize
    /// has just opened. slurmdbd ends the steps of the record the resize
    /// closed (RESIZING, at the resize), and a step's completion goes to
    /// the job's current record, where such a step was not: the batch step
    /// and the first workers were never closed, their usage lost. Sent
    /// again, each is in the new record from the resize on, and its
    /// completion closes it there with the whole step's usage.
    ///
    /// # Safety
    /// `job_ptr` is a live job record under our write locks.
    unsafe fn carry_steps_over(&mut self, job_ptr: *mut sys::job_record_t) {
        // SAFETY: step_list is NULL or the job's list of live step records,
        // not changed while we hold the job write lock; acct_db_conn as in
        // close_helper_record.
        unsafe {
            let list = (*job_ptr).step_list;
            if list.is_null() {
                return;
            }
            let it = sys::list_iterator_create(list);
            loop {
                let step = sys::list_next(it).cast::<sys::step_record_t>();
                if step.is_null() {
                    break;
                }
                if (*step).state & sys::JOB_STATE_BASE == sys::job_states_JOB_RUNNING {
                    sys::jobacct_storage_g_step_start(*self.ctld.acct_db_conn, step);
                }
            }
            sys::list_iterator_destroy(it);
        }
    }

    /// Set a waiting job's priority, as root (`scontrol update
    /// Priority=`): slurmctld keeps it (no priority plugin recomputes it)
    /// until the job starts.
    pub fn set_priority(&mut self, job_id: u32, priority: u32) -> Result<(), AllocError> {
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        if !job.is_pending() {
            return Err(AllocError::NotPending(job_id));
        }
        self.update_job(job_id, "update_job Priority", |desc| desc.priority = priority)
    }

    /// Cancel a job, as root (as `scancel` would); whether Slurm took it.
    pub fn cancel_job(&mut self, job_id: u32) -> Result<(), AllocError> {
        let job = self.find_job(job_id).ok_or(AllocError::NoSuchJob(job_id))?;
        // SAFETY: a live record found under the job and node write locks we
        // hold, which job_signal needs; as root, as 24.11's job_signal_id
        // called it once it had found the job.
        let rc = unsafe { (self.ctld.job_signal)(job.as_ptr(), libc::SIGKILL as u16, 0, 0, false) };
        if rc == sys::SLURM_SUCCESS as i32 {
            Ok(())
        } else {
            Err(slurm_error("job_signal (cancel)", rc))
        }
    }

    /// Cancel a helper that could not be merged.
    fn cancel(&mut self, job_id: u32) {
        if let Err(e) = self.cancel_job(job_id) {
            log::error!("could not cancel JobId={job_id}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(nodes: u32, cpus: u32, tasks: u32) -> Request {
        Request {
            min_nodes: nodes,
            max_nodes: nodes,
            min_cpus: cpus,
            max_cpus: sys::NO_VAL,
            num_tasks: tasks,
            time_limit: 5,
            time_set: 0,
        }
    }

    #[test]
    fn a_moldable_start_keeps_cpus_and_tasks_per_node() {
        // --nodes=3: 3 CPUs; on 2 nodes, 2.
        let r = asked(3, 3, 0).on(2, 3, None);
        assert_eq!((r.min_nodes, r.max_nodes, r.min_cpus, r.num_tasks), (2, 2, 2, 0));
        // --nodes=4 --ntasks=8 --cpus-per-task=2: 16 CPUs, 8 tasks; on 3 nodes 12 and 6.
        let r = asked(4, 16, 8).on(3, 4, None);
        assert_eq!((r.min_cpus, r.num_tasks), (12, 6));
        // Rounded up, never below one a node.
        assert_eq!(asked(4, 6, 0).on(3, 4, None).min_cpus, 5);
        assert_eq!(asked(4, 1, 0).on(3, 4, None).min_cpus, 3);
        // A max_cpus below the new minimum is raised to it.
        let mut a = asked(2, 2, 0);
        a.max_cpus = 2;
        assert_eq!(a.on(3, 2, None).max_cpus, 3);
    }

    #[test]
    fn a_start_at_the_asked_count_changes_nothing_but_a_given_limit() {
        let a = asked(3, 3, 3);
        assert_eq!(a.on(3, 3, None), a);
        let r = a.on(3, 3, Some(8));
        assert_eq!((r.time_limit, r.time_set), (8, sys::ADMIN_SET_LIMIT as u16));
        assert_eq!(Request { time_limit: 5, time_set: 0, ..r }, a);
    }

    #[test]
    fn a_job_whose_cpus_need_more_nodes_than_it_asked_starts_on_those() {
        // --ntasks=2 on one-CPU nodes: min_nodes 1, 2 CPUs, needing 2
        // nodes; started on 2, its CPUs and tasks stay 2 (scaled from the
        // 1 node it asked, they were 4: never runnable).
        let r = asked(1, 2, 2).on(2, 2, None);
        assert_eq!((r.min_nodes, r.max_nodes, r.min_cpus, r.num_tasks), (2, 2, 2, 2));
        assert_eq!(asked(1, 2, 2).on(2, 1, None).min_cpus, 4, "the old count, for comparison");
    }
}
