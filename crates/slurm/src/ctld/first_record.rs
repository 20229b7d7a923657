//! A resized job's first accounting record kept at its own size on 26.05.
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
#![cfg_attr(not(slurm_since_26_05), allow(dead_code))]

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
    sluid: u64,
    /// The run's start: a requeued job started again is noted again.
    start: i64,
    tres: String,
}

/// The first record of a resized job, to be set right when it ends.
#[derive(Clone, Debug, PartialEq)]
struct Kept {
    job: u32,
    sluid: u64,
    /// Its first resize: the record's end.
    ended: i64,
    tres: String,
}

impl Kept {
    /// One line of [`FILE`]: job, sluid, end, TRES (a TRES string has no
    /// space: `1=2,2=1000,4=2,5=2`).
    fn line(&self) -> String {
        format!("{} {} {} {}", self.job, self.sluid, self.ended, self.tres)
    }

    fn parse(line: &str) -> Option<Kept> {
        let mut f = line.split_whitespace();
        let kept = Kept {
            job: f.next()?.parse().ok()?,
            sluid: f.next()?.parse().ok()?,
            ended: f.next()?.parse().ok()?,
            tres: f.next()?.to_string(),
        };
        f.next().is_none().then_some(kept)
    }
}

static NOTED: Mutex<BTreeMap<u32, Noted>> = Mutex::new(BTreeMap::new());

/// `None` until read from [`FILE`].
static KEPT: Mutex<Option<Vec<Kept>>> = Mutex::new(None);

/// [`FILE`]'s path, when slurm.conf names a StateSaveLocation.
#[cfg(slurm_since_26_05)]
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
                log::error!("{FILE}: line {l:?} does not read as `job sluid end TRES`; left out");
            }
            kept
        })
        .collect()
}

/// The kept records, read from [`FILE`] on first use.
#[cfg(slurm_since_26_05)]
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
#[cfg(slurm_since_26_05)]
fn save(list: &[Kept]) {
    let Some(path) = file() else { return };
    let text: String = list.iter().map(|k| k.line() + "\n").collect();
    let new = path.with_extension("new");
    if let Err(e) = std::fs::write(&new, text).and_then(|()| std::fs::rename(&new, &path)) {
        log::error!("{}: {e}: a resized job's first record may bill its last size", path.display());
    }
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
                        noted.insert(job.id(), Noted { sluid, start, tres });
                    }
                }
                return;
            }
            let Some(n) = noted.remove(&job.id()) else { return };
            if n.sluid != sluid {
                return;
            }
            let kept = Kept { job: job.id(), sluid, ended: resize_time, tres: n.tres };
            with_kept(|list| {
                list.retain(|k| k.job != kept.job);
                list.push(kept);
                ((), true)
            });
        }
        #[cfg(not(slurm_since_26_05))]
        let _ = (job, malleable);
    }
}

impl<L: WritesJobs> LockGuard<L> {
    /// Once a resized job has ended, is no longer completing, has no step
    /// left and its last step's message is queued (TRES_STR_CALC set),
    /// queue its first record's end again with its own TRES; a requeued
    /// job's too, once its requeue is over (its run has ended). Forgets
    /// what it no longer needs: a job gone, or not running. Called every
    /// pass. The jobs whose record was sent again.
    pub fn settle_first_records(&mut self) -> Vec<u32> {
        #[cfg(slurm_since_26_05)]
        {
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
                        sent.push(k.job);
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
                    sent.push(k.job);
                    false
                });
                let changed = list.len() != before;
                ((), changed)
            });
            sent
        }
        #[cfg(not(slurm_since_26_05))]
        Vec::new()
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
        let k = Kept { job: 548, sluid: 16876827526426806272, ended: 1796604295, tres: "1=1,2=500,4=1,5=1".into() };
        assert_eq!(Kept::parse(&k.line()), Some(k.clone()));
        assert_eq!(parse_file(&format!("{}\n\n{}\n", k.line(), k.line())).len(), 2);
    }

    #[test]
    fn a_line_that_does_not_read_is_left_out() {
        for bad in ["548 1 2", "548 x 2 1=1", "548 1 2 1=1 extra", "-1 1 2 1=1"] {
            assert_eq!(Kept::parse(bad), None, "{bad}");
        }
        assert!(parse_file("548 1 2\n").is_empty());
    }
}
