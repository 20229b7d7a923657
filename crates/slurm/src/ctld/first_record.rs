//! A resized job's accounting records kept at their own size: its first on
//! 26.05, and on 22.05 any that slurmdbd never named.
//!
//! 26.05 keys a job's steps in slurmdbd by the job's sluid, which a resize
//! keeps, and the index of its first record is that sluid. When the last
//! step of an ended job ends, slurmctld sends the job's TRES with it (with
//! the energy its steps used: stepmgr's _internal_step_complete sets
//! TRES_STR_CALC), and slurmdbd writes them into the record the step names
//! (as_mysql_step_complete): the first one. A job that started on one CPU
//! and ended on three had its first record billed for three (the 30-minute
//! campaign at seed 7: alice's records 8.4% over her RawUsage). 25.11 names
//! the job's current record there, and earlier releases key steps so too.
//!
//! So, on 26.05, the TRES of each resizable job's first record are noted
//! while it is unresized, kept in StateSaveLocation at its first resize
//! (with that resize's time, the record's end), and once the job has ended
//! and its last step is gone, the record's end is queued again with them. The
//! agent sends its queue in order, so slurmdbd writes ours last. A resize
//! of the plugin's is seen as it is made; one of Slurm's own (a node of a
//! `--no-kill` job lost, an admin's memory resize) at the next read, and
//! should Slurm resize a job twice between two reads, the record's end
//! sent again is the second's.
//!
//! 22.05 loses a record another way. A job that starts while slurmdbd is
//! away has its start queued, its record unnamed (`db_index` 0), and so has
//! the record each resize opens while slurmdbd is away. When Slurm then
//! resizes the job (a node of a `--no-kill` job lost), the message that
//! ends the current record carries no index, and slurmdbd looks the record
//! up by the new resize's time (as_mysql_job_complete), finds none, and
//! makes one there: the current record is never ended and runs away, and
//! the new one is merged into the one made. So, on 22.05, each record of a
//! job that may be resized is noted while it is unnamed; when the job's
//! resize time moves on, the note is kept (in the same file), and once
//! slurmdbd has caught up, the record is asked for its index as slurmctld
//! asks at a start or a resize (under the locks), with the fields it was
//! opened with, and ended at the resize that closed it, with its own TRES.
//!
//! And 22.05 writes over a named record. A requeue whose job's current
//! record is unnamed (opened by a resize while slurmdbd was away) sends the
//! run's start once more as the requeue finishes (batch_requeue_fini), with
//! the run's last nodes and TRES, and slurmdbd keys it by the run's
//! submission: the run's first record, already ended at the first resize,
//! is written over with the last size. So, on 22.05, the first record of
//! each run of a job that may be resized is noted too, named or not; when
//! such a requeue is seen, it is kept, and once slurmdbd has caught up its
//! start is sent again as it was (slurmdbd's record keeps its end).
#![cfg_attr(not(any(slurm_since_26_05, not(slurm_since_24_11))), allow(dead_code))]

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::ctld::job::JobView;
use crate::ctld::locks::{LockGuard, ReadsJobs, WritesJobs};

/// The file in StateSaveLocation that keeps [`Kept`] across restarts.
const FILE: &str = "malleable_first_records";

/// A resizable job's first record while it is the current one (in memory:
/// after a restart, the next read notes it again).
#[derive(Clone, Debug, PartialEq)]
struct Noted {
    /// 26.05's; 0 on 22.05.
    sluid: u64,
    /// The run's start: a requeued job started again is noted again.
    start: i64,
    tres: String,
    /// 22.05: what the first record's start said besides its TRES.
    held: Option<Held>,
}

/// 22.05: a record's run start, the resize that opened it and its nodes,
/// as its start said them.
#[derive(Clone, Debug, PartialEq)]
struct Held {
    start: i64,
    /// The resize time that opened it; 0 for the run's first record.
    since: i64,
    /// Its node list (a hostlist has no space: `c[1-2]`).
    nodes: String,
    count: u32,
    /// The run's submission and eligibility (slurmdbd keys a run's first
    /// record by its submission, which a requeue moves on); 0 in a line
    /// written before they were kept: the job's own then.
    submit: i64,
    eligible: i64,
}

/// 22.05: a run's first record while the job may be resized, named or not,
/// and how the job was last read running (a requeue may write over the
/// record: module docs).
#[cfg(not(slurm_since_24_11))]
#[derive(Clone, Debug, PartialEq)]
struct FirstRun {
    tres: String,
    held: Held,
    /// The job's resize time as last read running.
    resize_time: i64,
    /// Whether its current record was unnamed then.
    unnamed: bool,
}

/// The first record of a resized job, to be set right when it ends.
#[derive(Clone, Debug, PartialEq)]
struct Kept {
    job: u32,
    sluid: u64,
    /// Its first resize: the record's end. 22.05: 0 when slurmdbd has the
    /// record's end, and only its start is sent again.
    ended: i64,
    tres: String,
    /// 22.05: the record is unnamed, and made again from these.
    held: Option<Held>,
}

impl Kept {
    /// One line of [`FILE`]: job, sluid, end, TRES (a TRES string has no
    /// space: `1=2,2=1000,4=2,5=2`), and on 22.05 the run's start, the
    /// record's opening resize, its nodes and their count, the run's
    /// submission and eligibility (a line of 8 fields, without the last
    /// two, is read too: the plugin before them wrote it).
    fn line(&self) -> String {
        let mut line = format!("{} {} {} {}", self.job, self.sluid, self.ended, self.tres);
        if let Some(h) = &self.held {
            line += &format!(" {} {} {} {} {} {}", h.start, h.since, h.nodes, h.count, h.submit, h.eligible);
        }
        line
    }

    fn parse(line: &str) -> Option<Kept> {
        let f: Vec<&str> = line.split_whitespace().collect();
        let held = match f.len() {
            4 => None,
            8 | 10 => Some(Held {
                start: f[4].parse().ok()?,
                since: f[5].parse().ok()?,
                nodes: f[6].to_string(),
                count: f[7].parse().ok()?,
                submit: f.get(8).map_or(Some(0), |t| t.parse().ok())?,
                eligible: f.get(9).map_or(Some(0), |t| t.parse().ok())?,
            }),
            _ => return None,
        };
        Some(Kept {
            job: f[0].parse().ok()?,
            sluid: f[1].parse().ok()?,
            ended: f[2].parse().ok()?,
            tres: f[3].to_string(),
            held,
        })
    }
}

static NOTED: Mutex<BTreeMap<u32, Noted>> = Mutex::new(BTreeMap::new());

/// 22.05's [`FirstRun`]s, by job.
#[cfg(not(slurm_since_24_11))]
static FIRST_RUNS: Mutex<BTreeMap<u32, FirstRun>> = Mutex::new(BTreeMap::new());

/// `None` until read from [`FILE`].
static KEPT: Mutex<Option<Vec<Kept>>> = Mutex::new(None);

/// [`FILE`]'s path, when slurm.conf names a StateSaveLocation.
#[cfg(any(slurm_since_26_05, not(slurm_since_24_11)))]
fn file() -> Option<std::path::PathBuf> {
    // SAFETY: slurm_conf is set up before any plugin runs; the string is
    // NULL or NUL-terminated and changes only on reconfigure, under the
    // config lock our guards exclude.
    let dir = unsafe {
        crate::common::cstr::cstr_to_string(std::ptr::addr_of!(slurm_sys::slurm_conf.state_save_location).read())
    }?;
    Some(std::path::Path::new(&dir).join(FILE))
}

/// Every line of a [`FILE`] that reads; a line that does not is said.
fn parse_file(text: &str) -> Vec<Kept> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let kept = Kept::parse(l);
            if kept.is_none() {
                log::error!(
                    "{FILE}: line {l:?} does not read as `job sluid end TRES [start since nodes count [submit eligible]]`; left out"
                );
            }
            kept
        })
        .collect()
}

/// The kept records, read from [`FILE`] on first use.
#[cfg(any(slurm_since_26_05, not(slurm_since_24_11)))]
fn with_kept<T>(f: impl FnOnce(&mut Vec<Kept>) -> (T, bool)) -> T {
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    let list = kept.get_or_insert_with(|| {
        file().and_then(|p| std::fs::read_to_string(p).ok()).map(|t| parse_file(&t)).unwrap_or_default()
    });
    let (out, changed) = f(list);
    if changed {
        save(list);
    }
    out
}

/// Write [`FILE`] whole, through a file renamed over it (a crash leaves
/// the old one or the new one).
#[cfg(any(slurm_since_26_05, not(slurm_since_24_11)))]
fn save(list: &[Kept]) {
    let Some(path) = file() else { return };
    let text: String = list.iter().map(|k| k.line() + "\n").collect();
    let new = path.with_extension("new");
    if let Err(e) = std::fs::write(&new, text).and_then(|()| std::fs::rename(&new, &path)) {
        log::error!("{}: {e}: a resized job's first record may bill its last size", path.display());
    }
}

/// 22.05: the noted record to be ended, when the job (of this run start)
/// has been resized since it was noted: the record ends at the new resize.
#[cfg(not(slurm_since_24_11))]
fn closed_by(n: &Noted, job: u32, start: i64, resize_time: i64) -> Option<Kept> {
    let held = n.held.as_ref()?;
    (n.start == start && held.since != resize_time).then(|| Kept {
        job,
        sluid: 0,
        ended: resize_time,
        tres: n.tres.clone(),
        held: Some(held.clone()),
    })
}

/// Keep a record to be set right: one a job on 26.05 (its first, the
/// newest run's), one a record on 22.05 (by run and opening resize; a
/// record to be ended wins over the same record to be started again, which
/// its ending does too).
#[cfg(any(slurm_since_26_05, not(slurm_since_24_11)))]
fn keep(kept: Kept) {
    let record = |k: &Kept| k.held.as_ref().map(|h| (h.start, h.since));
    with_kept(|list| {
        let same = |k: &Kept| k.job == kept.job && (kept.held.is_none() || record(k) == record(&kept));
        if kept.ended == 0 && list.iter().any(|k| same(k) && k.ended != 0) {
            return ((), false);
        }
        list.retain(|k| !same(k));
        list.push(kept);
        ((), true)
    });
}

impl<L: ReadsJobs> LockGuard<L> {
    /// Note the TRES of a running job's first record while it is unresized,
    /// and keep them at its first resize. Called for each running job as
    /// it is read (`malleable`: the job is the plugin's to resize; Slurm
    /// resizes a `--no-kill` job on more than one node itself), and before
    /// and after each resize of the plugin's. Nothing before 26.05.
    pub fn keep_first_record(&self, job: &JobView<'_>, malleable: bool) {
        #[cfg(slurm_since_26_05)]
        {
            let rec = job.as_ptr();
            // SAFETY: a live record under our job lock; plain fields.
            let (sluid, db_index, resize_time, start, may_resize) = unsafe {
                let may_resize = malleable || ((*rec).kill_on_node_fail == 0 && (*rec).node_cnt > 1);
                ((*rec).step_id.sluid, (*rec).db_index, (*rec).resize_time, (*rec).start_time, may_resize)
            };
            // Running, not a requeued job still ending its last run (it has
            // its new SLUID, and its last run's TRES until it ends).
            let running = job.state() == crate::ctld::job::JobState::Running && !job.is_completing();
            if sluid == 0 || !running {
                return;
            }
            let mut noted = NOTED.lock().unwrap_or_else(|p| p.into_inner());
            if db_index == sluid {
                // Copied once a run (this is called for each running job each pass).
                if may_resize && noted.get(&job.id()).is_none_or(|n| n.sluid != sluid || n.start != start) {
                    // SAFETY: tres_alloc_str is NULL or NUL-terminated, live
                    // under our job lock; copied.
                    if let Some(tres) = unsafe { crate::common::cstr::cstr_to_string((*rec).tres_alloc_str) } {
                        noted.insert(job.id(), Noted { sluid, start, tres, held: None });
                    }
                }
                return;
            }
            let Some(n) = noted.remove(&job.id()) else { return };
            if n.sluid != sluid {
                return;
            }
            let kept = Kept { job: job.id(), sluid, ended: resize_time, tres: n.tres, held: None };
            keep(kept);
        }
        #[cfg(not(slurm_since_24_11))]
        {
            let rec = job.as_ptr();
            // SAFETY: a live record under our job lock; plain fields, the
            // details checked for NULL.
            let (db_index, since, start, count, may_resize, submit, eligible) = unsafe {
                let may_resize = malleable || ((*rec).kill_on_node_fail == 0 && (*rec).node_cnt > 1);
                let (submit, eligible) = (*rec).details.as_ref().map_or((0, 0), |d| (d.submit_time, d.begin_time));
                (
                    (*rec).db_index,
                    (*rec).resize_time,
                    (*rec).start_time,
                    (*rec).total_nodes,
                    may_resize,
                    submit,
                    eligible,
                )
            };
            let running = job.state() == crate::ctld::job::JobState::Running && !job.is_completing();
            if !running {
                return;
            }
            let unnamed = db_index == 0 || db_index == crate::ctld::slurmdbd::NO_VAL64;
            // SAFETY: NULL or NUL-terminated strings, live under our job
            // lock; copied.
            let tres_and_nodes = || unsafe {
                Some((
                    crate::common::cstr::cstr_to_string((*rec).tres_alloc_str)?,
                    crate::common::cstr::cstr_to_string((*rec).nodes)?,
                ))
            };
            {
                // The run's first record, copied once a run; how the job is
                // read running, each read.
                let mut first = FIRST_RUNS.lock().unwrap_or_else(|p| p.into_inner());
                match first.get_mut(&job.id()) {
                    Some(f) if f.held.start == start => (f.resize_time, f.unnamed) = (since, unnamed),
                    _ => {
                        // An earlier run's is of no more use.
                        first.remove(&job.id());
                        if let Some((tres, nodes)) = (may_resize && since == 0).then(tres_and_nodes).flatten() {
                            let held = Held { start, since, nodes, count, submit, eligible };
                            first.insert(job.id(), FirstRun { tres, held, resize_time: since, unnamed });
                        }
                    }
                }
            }
            let mut noted = NOTED.lock().unwrap_or_else(|p| p.into_inner());
            // Resized since it was last read, the record it had unnamed then.
            if let Some(kept) = noted.get(&job.id()).and_then(|n| closed_by(n, job.id(), start, since)) {
                noted.remove(&job.id());
                keep(kept);
            }
            if !(may_resize && unnamed) {
                noted.remove(&job.id());
                return;
            }
            // Copied once a record.
            if noted
                .get(&job.id())
                .is_some_and(|n| n.start == start && n.held.as_ref().is_some_and(|h| h.since == since))
            {
                return;
            }
            if let Some((tres, nodes)) = tres_and_nodes() {
                let held = Some(Held { start, since, nodes, count, submit, eligible });
                noted.insert(job.id(), Noted { sluid: 0, start, tres, held });
            }
        }
        #[cfg(not(any(slurm_since_26_05, not(slurm_since_24_11))))]
        let _ = (job, malleable);
    }

    /// 22.05: a resized job requeued, its requeue over (called before its
    /// resize is forgotten). When its current record was unnamed as the
    /// requeue finished (as last read running, or a resize no read saw),
    /// slurmctld sent the run's start again and slurmdbd wrote it over the
    /// run's first record (module docs): that record is kept, to be started
    /// again as it was (its log line is said when it is sent). Nothing from
    /// 24.11, whose slurmctld names each record itself.
    pub fn keep_first_record_of_requeued_run(&self, job: &JobView<'_>) {
        #[cfg(not(slurm_since_24_11))]
        {
            let Some(f) = FIRST_RUNS.lock().unwrap_or_else(|p| p.into_inner()).remove(&job.id()) else {
                return;
            };
            // SAFETY: a live record under our job lock; a plain field.
            let resize_time = unsafe { (*job.as_ptr()).resize_time };
            if resize_time != 0 && (f.unnamed || f.resize_time != resize_time) {
                keep(Kept { job: job.id(), sluid: 0, ended: 0, tres: f.tres, held: Some(f.held) });
            }
        }
        #[cfg(slurm_since_24_11)]
        let _ = job;
    }
}

impl<L: WritesJobs> LockGuard<L> {
    /// Once a resized job has ended, is no longer completing, has no step
    /// left and its last step's message is queued (TRES_STR_CALC set),
    /// queue its first record's end again with its own TRES; a requeued
    /// job's too, once its requeue is over (its run has ended). Forgets
    /// what it no longer needs: a job gone, or not running. Called every
    /// pass. On 22.05, once slurmdbd has caught up (`caught_up`), end each
    /// kept record at the resize that closed it (module docs). The jobs
    /// whose record was sent again, each with whether its end was (else
    /// its start only: a run's first record written over at a requeue).
    pub fn settle_first_records(&mut self, caught_up: bool) -> Vec<(u32, bool)> {
        #[cfg(not(slurm_since_24_11))]
        {
            self.settle_unnamed_records(caught_up)
        }
        #[cfg(slurm_since_26_05)]
        {
            let _ = caught_up;
            NOTED.lock().unwrap_or_else(|p| p.into_inner()).retain(|&j, n| {
                // SAFETY: a live record under our job lock; a plain field.
                self.find_job(j).is_some_and(|v| v.holds_nodes() && unsafe { (*v.as_ptr()).step_id.sluid } == n.sluid)
            });
            let mut sent = Vec::new();
            with_kept(|list| {
                let before = list.len();
                list.retain(|k| {
                    let Some(job) = self.find_job(k.job) else { return false };
                    let rec = job.as_ptr();
                    // SAFETY: a live record under our job write lock; plain fields.
                    let (sluid, flags) = unsafe { ((*rec).step_id.sluid, (*rec).bit_flags) };
                    if sluid != k.sluid {
                        // Requeued (a new SLUID): the run whose first record
                        // this is has ended, its steps with it, and its last
                        // step may have written the run's last TRES there as
                        // at a job's end (chaos run 22's JobId=142). Sent
                        // again once the requeue is over.
                        if job.is_completing() {
                            return true;
                        }
                        // SAFETY: the record is live under our job write lock.
                        unsafe { self.send_first_record_again(rec, k) };
                        sent.push((k.job, true));
                        return false;
                    }
                    // Ended, and every step gone: once TRES_STR_CALC is set,
                    // each step that ends sends the job's TRES (a step ended
                    // with the job is finished again when its nodes answer).
                    let ended = job.has_ended() && !job.is_completing();
                    if !ended || job.has_steps() || flags & u64::from(slurm_sys::TRES_STR_CALC) == 0 {
                        return true;
                    }
                    // SAFETY: the record is live under our job write lock.
                    unsafe { self.send_first_record_again(rec, k) };
                    sent.push((k.job, true));
                    false
                });
                let changed = list.len() != before;
                ((), changed)
            });
            sent
        }
        #[cfg(all(slurm_since_24_11, not(slurm_since_26_05)))]
        {
            let _ = caught_up;
            Vec::new()
        }
    }

    /// 22.05's [`Self::settle_first_records`]: a note whose job Slurm has
    /// resized since (seen here too when the job ended before a read) is
    /// kept; a kept record is ended once slurmdbd has caught up.
    #[cfg(not(slurm_since_24_11))]
    fn settle_unnamed_records(&mut self, caught_up: bool) -> Vec<(u32, bool)> {
        // A run's first record is wanted until its job ends or is requeued.
        FIRST_RUNS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|&j, _| self.find_job(j).is_some_and(|v| v.holds_nodes() || v.is_pending()));
        let mut resized = Vec::new();
        NOTED.lock().unwrap_or_else(|p| p.into_inner()).retain(|&j, n| {
            let Some(job) = self.find_job(j) else { return false };
            // SAFETY: a live record under our job lock; plain fields.
            let (resize_time, start) = unsafe { ((*job.as_ptr()).resize_time, (*job.as_ptr()).start_time) };
            if let Some(kept) = closed_by(n, j, start, resize_time) {
                resized.push(kept);
                return false;
            }
            job.holds_nodes()
        });
        for kept in resized {
            keep(kept);
        }
        if !caught_up {
            return Vec::new();
        }
        let mut sent = Vec::new();
        with_kept(|list| {
            let before = list.len();
            list.retain(|k| {
                let Some(job) = self.find_job(k.job) else {
                    if k.ended == 0 {
                        log::error!(
                            "JobId={}: gone from slurmctld before slurmdbd came back; its run's first record, written over as its requeue finished, is left with the run's last size in slurmdbd",
                            k.job
                        );
                    } else {
                        log::error!(
                            "JobId={}: gone from slurmctld before slurmdbd came back; its record ended by the resize at {} is left open in slurmdbd",
                            k.job,
                            k.ended
                        );
                    }
                    return false;
                };
                // SAFETY: the record is live under our job write lock.
                let ended = unsafe { self.end_unnamed_record(job.as_ptr(), k) };
                if ended {
                    sent.push((k.job, k.ended != 0));
                }
                !ended
            });
            let changed = list.len() != before;
            ((), changed)
        });
        sent
    }

    /// 22.05: name one of the job's records as slurmctld does at a start
    /// or a resize (asking slurmdbd under the locks), with the fields its
    /// start gave it (not yet ended, its own nodes and TRES; a resize's
    /// marked as a resize's, or slurmdbd would take it for the job's first
    /// record), and end it at the resize that closed it with its own TRES.
    /// The job record's fields are put back as they were after each call.
    /// Whether slurmdbd named it (if not, the request went to the agent's
    /// queue, where it is harmless: the same record again, and the next
    /// pass asks again).
    ///
    /// # Safety
    /// `rec` is a live job record under our job write lock.
    #[cfg(not(slurm_since_24_11))]
    unsafe fn end_unnamed_record(&self, rec: *mut slurm_sys::job_record_t, k: &Kept) -> bool {
        use crate::ctld::slurmdbd::NO_VAL64;
        let Some(held) = &k.held else { return true };
        let (Ok(tres), Ok(nodes)) =
            (std::ffi::CString::new(k.tres.clone()), std::ffi::CString::new(held.nodes.clone()))
        else {
            return true;
        };
        // SAFETY: by the caller's contract; every field changed is put back
        // before the locks are released, and the strings swapped in are
        // ours for the calls only (their messages are packed in them).
        unsafe {
            let r = &mut *rec;
            let flags = r.bit_flags & !u64::from(slurm_sys::TRES_STR_CALC);
            let running = slurm_sys::job_states_JOB_RUNNING;
            let opened = if held.since == 0 { running } else { running | slurm_sys::JOB_RESIZING };
            use std::mem::replace;
            let saved = (
                replace(&mut r.db_index, 0),
                replace(&mut r.job_state, opened),
                replace(&mut r.resize_time, held.since),
                replace(&mut r.start_time, held.start),
                replace(&mut r.bit_flags, flags),
                replace(&mut r.tres_alloc_str, tres.as_ptr().cast_mut()),
                replace(&mut r.nodes, nodes.as_ptr().cast_mut()),
                replace(&mut r.total_nodes, held.count),
                replace(&mut r.exit_code, 0),
                replace(&mut r.derived_ec, slurm_sys::NO_VAL),
                replace(&mut r.requid, u32::MAX),
            );
            // The run's submission keys its first record (a requeue moved
            // the job's on), and its eligibility is the record's.
            let details = r.details.as_mut().filter(|_| held.submit != 0).map(|d| {
                let saved = (replace(&mut d.submit_time, held.submit), replace(&mut d.begin_time, held.eligible));
                (d, saved)
            });
            slurm_sys::jobacct_storage_g_job_start(*self.ctld.acct_db_conn, std::ptr::from_mut(r));
            if let Some((d, saved)) = details {
                (d.submit_time, d.begin_time) = saved;
            }
            let named = !matches!(r.db_index, 0 | NO_VAL64);
            if named && k.ended != 0 {
                r.job_state = running | slurm_sys::JOB_RESIZING;
                r.resize_time = k.ended;
                slurm_sys::jobacct_storage_g_job_complete(*self.ctld.acct_db_conn, std::ptr::from_mut(r));
            }
            (
                r.db_index,
                r.job_state,
                r.resize_time,
                r.start_time,
                r.bit_flags,
                r.tres_alloc_str,
                r.nodes,
                r.total_nodes,
                r.exit_code,
                r.derived_ec,
                r.requid,
            ) = saved;
            named
        }
    }

    /// Queue the end of the job's first record again, with its own TRES:
    /// the job record as it was at that end for the fields the message
    /// carries (index, RESIZING and its time, its TRES, no exit code yet,
    /// no failed node), put back as they are after the call. 26.05 packs
    /// the message when it queues it.
    ///
    /// # Safety
    /// `rec` is a live job record under our job write lock.
    #[cfg(slurm_since_26_05)]
    unsafe fn send_first_record_again(&self, rec: *mut slurm_sys::job_record_t, k: &Kept) {
        let Ok(tres) = std::ffi::CString::new(k.tres.clone()) else { return };
        // SAFETY: by the caller's contract; every field changed is put back
        // before the locks are released, and the strings swapped in are
        // ours for the call only (the message is packed in it).
        unsafe {
            let r = &mut *rec;
            let state = r.job_state | slurm_sys::JOB_RESIZING;
            let flags = r.bit_flags & !u64::from(slurm_sys::TRES_STR_CALC);
            use std::mem::replace;
            let saved = (
                replace(&mut r.db_index, k.sluid),
                replace(&mut r.job_state, state),
                replace(&mut r.resize_time, k.ended),
                replace(&mut r.bit_flags, flags),
                replace(&mut r.tres_alloc_str, tres.as_ptr().cast_mut()),
                replace(&mut r.exit_code, 0),
                replace(&mut r.derived_ec, slurm_sys::NO_VAL),
                replace(&mut r.requid, u32::MAX),
                replace(&mut r.failed_node, std::ptr::null_mut()),
            );
            slurm_sys::jobacct_storage_g_job_complete(*self.ctld.acct_db_conn, std::ptr::from_mut(r));
            (
                r.db_index,
                r.job_state,
                r.resize_time,
                r.bit_flags,
                r.tres_alloc_str,
                r.exit_code,
                r.derived_ec,
                r.requid,
                r.failed_node,
            ) = saved;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_record_reads_back_as_written() {
        let k = Kept {
            job: 548,
            sluid: 16876827526426806272,
            ended: 1796604295,
            tres: "1=1,2=500,4=1,5=1".into(),
            held: None,
        };
        assert_eq!(Kept::parse(&k.line()), Some(k.clone()));
        assert_eq!(parse_file(&format!("{}\n\n{}\n", k.line(), k.line())).len(), 2);
        // 22.05's, with the run's start and its nodes.
        let held = Held {
            start: 1796604200,
            since: 1796604250,
            nodes: "c[5-6]".into(),
            count: 2,
            submit: 1796604190,
            eligible: 1796604191,
        };
        let k = Kept { sluid: 0, held: Some(held.clone()), ..k };
        assert_eq!(k.line(), "548 0 1796604295 1=1,2=500,4=1,5=1 1796604200 1796604250 c[5-6] 2 1796604190 1796604191");
        assert_eq!(Kept::parse(&k.line()), Some(k.clone()));
        // A line of the plugin before the run's submission was kept: the
        // job's own is used then.
        let old = Kept::parse("548 0 1796604295 1=1,2=500,4=1,5=1 1796604200 1796604250 c[5-6] 2");
        let unknown = Held { submit: 0, eligible: 0, ..held };
        assert_eq!(old, Some(Kept { held: Some(unknown), ..k }));
    }

    #[test]
    fn a_line_that_does_not_read_is_left_out() {
        for bad in [
            "548 1 2",
            "548 x 2 1=1",
            "548 1 2 1=1 extra",
            "-1 1 2 1=1",
            "548 0 2 1=1 x 0 c1 1",
            "548 0 2 1=1 5 0 c1 -1",
            "548 0 2 1=1 5 0 c1 1 7",
            "548 0 2 1=1 5 0 c1 1 7 x",
        ] {
            assert_eq!(Kept::parse(bad), None, "{bad}");
        }
        assert!(parse_file("548 1 2\n").is_empty());
    }
}
