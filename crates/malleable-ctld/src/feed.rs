//! The change feed's bookkeeping: which job records a pass reads under
//! slurmctld's locks. A whole read walks every record; between whole reads
//! a pass reads the jobs that changed or may have, and a few of the rest in
//! turn, and keeps what it read of the others (slurmctld stamps no job).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap, FxHashSet};
use slurm::ctld::{Stamps, Updates};

/// How much a pass reads (malleable.conf's `WholeReadBelow=` and
/// `RecheckPerPass=`, see `config`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FeedSettings {
    /// Fewer waiting records than this: every pass reads every job, as if
    /// there were no feed (a whole read of a short queue costs less than a
    /// millisecond, and nothing is ever stale).
    pub whole_below: usize,
    /// Waiting records read again in turn at each pass, whatever else it
    /// reads: what changed without a sign (`scontrol top`, a dependency
    /// met, multifactor's new priorities) is seen within
    /// ceil(waiting / recheck) passes.
    pub recheck: usize,
}

/// When a waiting record is read again, besides in turn.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Recheck {
    /// Only in turn (and when a sign names it).
    InTurn,
    /// At every pass: what it reads depends on the clock or on other jobs
    /// (a deadline, licenses, features, several partitions, accrue limits).
    EveryPass,
    /// From this second on (a `--begin` time, or its time limit counted
    /// from now reaching into a reservation still to come), in turn meanwhile.
    From(i64),
    /// After a job ends: kept out of the queue by what another job's end
    /// may lift (a dependency, its association's or QOS's limits, its
    /// array's throttle, licenses). At the pass after an end,
    /// `RecheckPerPass` of them are read in their own turn.
    AfterEnds,
}

/// What a read found of a job.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Waiting, in the strategy's queue or kept out of it.
    Waiting(Recheck),
    /// Holding nodes: read at every pass until it ends.
    Running { cancelled: bool },
    /// Ended, or no record by that id: forgotten.
    Gone { cancelled: bool },
}

/// Why a pass reads every job.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Whole {
    /// The first pass.
    First,
    /// The feed is off: beside another scheduler, which starts jobs no
    /// decision of ours named.
    Off,
    /// Asked for: a reconfigure, the role or the strategy changed.
    Asked,
    /// Fewer waiting records than `WholeReadBelow=`.
    ShortQueue,
    /// A partition or a reservation changed (stamps whole seconds).
    Partitions,
    Reservations,
    /// Nodes came or went, or what a waiting job's read takes from the
    /// node table changed (the largest node's CPUs, memory, GPUs).
    NodeTable,
    /// No job_submit/malleable notes updates in this slurmctld, or it
    /// dropped some: any job may have been updated.
    NoUpdateNotes,
    /// More new job ids than records kept.
    ManyNew,
    /// sdiag counted a submission the reads did not see (a job given its
    /// id by hand, outside the range handed out).
    UnseenJob,
    /// sdiag counted a start or a cancel the reads did not see (a job
    /// started by someone else, a waiting job cancelled), and the kept
    /// records whose fingerprint moved did not account for it either.
    UnseenChange,
}

/// What the feed knows of the jobs between passes, and whose turn it is.
#[derive(Default)]
pub struct Feed {
    last: Option<Stamps>,
    node_shape: u64,
    /// Waiting records (in the queue or kept out of it), by id.
    waiting: BTreeMap<u32, Recheck>,
    every_pass: BTreeSet<u32>,
    from: BTreeSet<(i64, u32)>,
    after_ends: BTreeSet<u32>,
    /// The last id read in the turn of those waiting for an end, and whether
    /// a job ended since the last plan.
    ends_cursor: u32,
    ended: bool,
    /// Jobs holding nodes, and whether each was found cancelled.
    running: FxHashMap<u32, bool>,
    /// The last id read in turn.
    cursor: u32,
    /// Jobs a decision named, read at the next pass.
    touched: FxHashSet<u32>,
    whole_asked: bool,
    /// What this read saw, against sdiag's counts.
    seen: Seen,
}

#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    submitted: u64,
    started: u64,
    cancelled: u64,
}

/// What a pass reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    Whole(Whole),
    /// These records, by id (each once, ascending): those to read, and
    /// those read in turn, which a queued job need be read whole only when
    /// its record's fingerprint moved (see `JobView::fingerprint`).
    Jobs {
        read: Vec<u32>,
        check: Vec<u32>,
    },
}

impl Feed {
    /// The next read reads every job.
    pub fn ask_whole(&mut self) {
        self.whole_asked = true;
    }

    /// A decision named this job: read it at the next pass, whatever it
    /// became (started, refused, ended).
    pub fn touched(&mut self, id: u32) {
        self.touched.insert(id);
    }

    /// Whether the next read is to be whole because it was asked.
    pub fn whole_asked(&self) -> bool {
        self.whole_asked
    }

    /// How many waiting records are kept.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// What to read now, given slurmctld's stamps, the shape of its node
    /// table, the updates noted since the last read, and the time.
    pub fn plan(&mut self, s: &FeedSettings, stamps: &Stamps, node_shape: u64, updates: &Updates, now: i64) -> Plan {
        self.seen = Seen::default();
        let Some(last) = self.last.filter(|_| !std::mem::take(&mut self.whole_asked)) else {
            return Plan::Whole(if self.last.is_none() { Whole::First } else { Whole::Asked });
        };
        let why = if self.waiting.len() < s.whole_below {
            Some(Whole::ShortQueue)
        } else if stamps.partitions != last.partitions {
            Some(Whole::Partitions)
        } else if stamps.reservations != last.reservations {
            Some(Whole::Reservations)
        } else if node_shape != self.node_shape {
            Some(Whole::NodeTable)
        } else {
            None
        };
        if let Some(why) = why {
            return Plan::Whole(why);
        }
        let noted = match updates {
            Updates::Jobs(ids) => ids,
            Updates::Lost | Updates::NotNoted => return Plan::Whole(Whole::NoUpdateNotes),
        };
        let kept = self.waiting.len() + self.running.len();
        let Some(new) = new_ids(last.next_job_id, stamps, kept.max(s.whole_below)) else {
            return Plan::Whole(Whole::ManyNew);
        };
        let mut ids: Vec<u32> = Vec::with_capacity(self.running.len() + noted.len() + s.recheck + 16);
        ids.extend(self.running.keys().copied());
        ids.extend(self.touched.drain());
        ids.extend(noted.iter().copied());
        ids.extend(new);
        ids.extend(self.every_pass.iter().copied());
        ids.extend(self.from.iter().take_while(|&&(t, _)| t <= now).map(|&(_, id)| id));
        if std::mem::take(&mut self.ended) {
            ids.extend(turn_of(&self.after_ends, &mut self.ends_cursor, s.recheck));
        }
        ids.sort_unstable();
        ids.dedup();
        let mut check = self.in_turn(s.recheck);
        check.retain(|id| ids.binary_search(id).is_err());
        check.sort_unstable();
        Plan::Jobs { read: ids, check }
    }

    /// The next `k` waiting records after the cursor, wrapping; the cursor
    /// moves to the last.
    fn in_turn(&mut self, k: usize) -> Vec<u32> {
        let after = self.waiting.range(self.cursor.saturating_add(1)..).map(|(&id, _)| id);
        let mut turn: Vec<u32> = after.take(k).collect();
        if turn.len() < k {
            let wrapped = self.waiting.range(..=self.cursor).map(|(&id, _)| id);
            turn.extend(wrapped.take(k - turn.len()));
        }
        if let Some(&last) = turn.last() {
            self.cursor = last;
        }
        turn
    }

    /// A whole read begins: what was kept is read anew.
    pub fn begin_whole(&mut self) {
        self.waiting.clear();
        self.every_pass.clear();
        self.from.clear();
        self.after_ends.clear();
        self.running.clear();
        self.touched.clear();
    }

    /// What a read found of job `id`; `weight` is what its submission
    /// counted in sdiag (an array's tasks), for a job not seen before.
    pub fn found(&mut self, id: u32, found: Found, weight: u64) {
        let was_running = self.running.remove(&id);
        let was_waiting = self.forget_waiting(id);
        let new = was_running.is_none() && was_waiting.is_none();
        if new {
            self.seen.submitted += weight;
        }
        // Leaving the queue counts as a start (a cancel while waiting too:
        // more seen than counted only makes the check looser).
        if was_running.is_none() && !matches!(found, Found::Waiting(_)) {
            self.seen.started += 1;
        }
        match found {
            Found::Waiting(r) => {
                self.waiting.insert(id, r);
                match r {
                    Recheck::InTurn => {}
                    Recheck::EveryPass => {
                        self.every_pass.insert(id);
                    }
                    Recheck::From(t) => {
                        self.from.insert((t, id));
                    }
                    Recheck::AfterEnds => {
                        self.after_ends.insert(id);
                    }
                }
            }
            // A cancelled job holds its nodes while it completes: counted once.
            Found::Running { cancelled } => {
                self.running.insert(id, cancelled);
                if cancelled && was_running != Some(true) {
                    self.seen.cancelled += 1;
                }
            }
            Found::Gone { cancelled } => {
                if cancelled && was_running != Some(true) {
                    self.seen.cancelled += 1;
                }
                // Its end may lift what keeps others waiting.
                self.ended |= was_running.is_some();
            }
        }
    }

    /// Forget a waiting record's kept recheck; what it was.
    fn forget_waiting(&mut self, id: u32) -> Option<Recheck> {
        let r = self.waiting.remove(&id)?;
        match r {
            Recheck::InTurn => {}
            Recheck::EveryPass => {
                self.every_pass.remove(&id);
            }
            Recheck::From(t) => {
                self.from.remove(&(t, id));
            }
            Recheck::AfterEnds => {
                self.after_ends.remove(&id);
            }
        }
        Some(r)
    }

    /// After a read: the stamps it read are the ones the next compares
    /// with. For a read of changes, `Err` when sdiag counted what the reads
    /// did not see; the stamps are then kept as they were, so that after
    /// more reads (every kept record's fingerprint, for a start or cancel)
    /// `end` can be asked again, and else the read is made whole.
    pub fn end(&mut self, stamps: &Stamps, node_shape: u64, whole: bool) -> Result<(), Whole> {
        self.node_shape = node_shape;
        let Some(last) = self.last.filter(|_| !whole) else {
            self.last = Some(*stamps);
            return Ok(());
        };
        // sdiag --reset takes the counts back to 0: nothing unseen then.
        let more = |now: u64, then: u64, seen: u64| now.saturating_sub(then) > seen;
        if more(stamps.submitted, last.submitted, self.seen.submitted) {
            return Err(Whole::UnseenJob);
        }
        if more(stamps.started, last.started, self.seen.started)
            || more(stamps.cancelled, last.cancelled, self.seen.cancelled)
        {
            return Err(Whole::UnseenChange);
        }
        self.last = Some(*stamps);
        Ok(())
    }
}

/// From when a waiting job read at `now` is to be read again because the
/// clock brings its window up to a reservation: job_test_resv counts a
/// reservation beginning at `s` (of `starts`, sorted) against a job that
/// would start now and run `duration` seconds once `s < now + duration`,
/// so at `s - duration + 1` for the first `s` it does not count yet.
pub fn reaches_reservation(starts: &[i64], now: i64, duration: i64) -> Option<i64> {
    let end = now.saturating_add(duration);
    let i = starts.partition_point(|&s| s < end);
    starts.get(i).map(|&s| s - duration + 1)
}

/// The next `k` of `set` after `cursor`, wrapping; the cursor moves to the last.
fn turn_of(set: &BTreeSet<u32>, cursor: &mut u32, k: usize) -> Vec<u32> {
    let mut turn: Vec<u32> = set.range(cursor.saturating_add(1)..).copied().take(k).collect();
    if turn.len() < k {
        turn.extend(set.range(..=*cursor).copied().take(k - turn.len()));
    }
    if let Some(&last) = turn.last() {
        *cursor = last;
    }
    turn
}

/// The ids handed out since `from` (the next id at the last read), up to
/// `stamps.next_job_id`, wrapping from MaxJobId to FirstJobId; `None` when
/// there are more than `most` (a whole read costs less then) or the ids ran
/// out (get_next_job_id said SLURM_ERROR).
fn new_ids(from: u32, stamps: &Stamps, most: usize) -> Option<Vec<u32>> {
    let to = stamps.next_job_id;
    if to == u32::MAX {
        return None;
    }
    let span = |a: u32, b: u32| usize::try_from(b.saturating_sub(a)).unwrap_or(usize::MAX);
    if to >= from {
        return (span(from, to) <= most).then(|| (from..to).collect());
    }
    // Wrapped: the rest up to MaxJobId, then from FirstJobId.
    let (first, max) = (stamps.first_job_id, stamps.max_job_id);
    let count = span(from, max).saturating_add(span(first, to));
    (count <= most).then(|| (from..max).chain(first..to).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: FeedSettings = FeedSettings { whole_below: 0, recheck: 2 };

    fn stamps(next: u32) -> Stamps {
        Stamps { next_job_id: next, first_job_id: 1, max_job_id: 1000, ..Stamps::default() }
    }

    /// Every id the plan names, read or checked.
    fn jobs(plan: Plan) -> Vec<u32> {
        match plan {
            Plan::Jobs { mut read, check } => {
                read.extend(check);
                read.sort_unstable();
                read
            }
            Plan::Whole(why) => panic!("a whole read ({why:?}) where changes were due"),
        }
    }

    /// A feed after a whole read that found jobs 1..=n waiting, in turn.
    fn after_whole(n: u32) -> Feed {
        let mut f = Feed::default();
        let s = stamps(n + 1);
        assert_eq!(f.plan(&SETTINGS, &s, 0, &Updates::Jobs(vec![]), 0), Plan::Whole(Whole::First));
        f.begin_whole();
        for id in 1..=n {
            f.found(id, Found::Waiting(Recheck::InTurn), 1);
        }
        f.end(&Stamps { submitted: u64::from(n), ..s }, 0, true).unwrap();
        f
    }

    #[test]
    fn a_pass_reads_new_ids_updates_running_jobs_and_a_few_in_turn() {
        let mut f = after_whole(6);
        // Job 7 submitted, 5 updated (noted by job_modify).
        let s = Stamps { submitted: 7, ..stamps(8) };
        assert_eq!(jobs(f.plan(&SETTINGS, &s, 0, &Updates::Jobs(vec![5]), 10)), vec![1, 2, 5, 7]);
        f.found(1, Found::Waiting(Recheck::InTurn), 1);
        f.found(2, Found::Waiting(Recheck::InTurn), 1);
        f.found(5, Found::Waiting(Recheck::InTurn), 1);
        f.found(7, Found::Running { cancelled: false }, 1);
        // Job 7 started at submit (an srun slurmctld starts itself).
        f.end(&Stamps { started: 1, ..s }, 0, false).unwrap();
        // The next: the running job, the next two in turn.
        assert_eq!(jobs(f.plan(&SETTINGS, &s, 0, &Updates::Jobs(vec![]), 11)), vec![3, 4, 7]);
        f.found(3, Found::Waiting(Recheck::InTurn), 1);
        f.found(4, Found::Waiting(Recheck::InTurn), 1);
        f.found(7, Found::Gone { cancelled: false }, 1);
        f.end(&Stamps { started: 1, ..s }, 0, false).unwrap();
        // The turn wraps, and every waiting record is read within ceil(6 / 2) passes.
        assert_eq!(jobs(f.plan(&SETTINGS, &s, 0, &Updates::Jobs(vec![]), 12)), vec![5, 6]);
        f.end(&Stamps { started: 1, ..s }, 0, false).unwrap();
        assert_eq!(jobs(f.plan(&SETTINGS, &s, 0, &Updates::Jobs(vec![]), 13)), vec![1, 2]);
    }

    #[test]
    fn those_in_turn_are_checked_and_the_rest_read() {
        let mut f = after_whole(6);
        let s = Stamps { submitted: 6, ..stamps(7) };
        f.touched(2);
        let plan = f.plan(&SETTINGS, &s, 0, &Updates::Jobs(vec![5]), 0);
        // In turn: 1 and 2; 2 is read anyway (touched).
        assert_eq!(plan, Plan::Jobs { read: vec![2, 5], check: vec![1] });
    }

    #[test]
    fn a_touched_job_and_those_read_every_pass_or_from_a_time_are_read() {
        let mut f = after_whole(6);
        let s = Stamps { submitted: 6, ..stamps(7) };
        let s2 = FeedSettings { recheck: 0, ..SETTINGS };
        f.found(3, Found::Waiting(Recheck::EveryPass), 1);
        f.found(4, Found::Waiting(Recheck::From(100)), 1);
        f.touched(6);
        assert_eq!(jobs(f.plan(&s2, &s, 0, &Updates::Jobs(vec![]), 99)), vec![3, 6]);
        assert_eq!(jobs(f.plan(&s2, &s, 0, &Updates::Jobs(vec![]), 100)), vec![3, 4], "touched once");
        f.found(3, Found::Waiting(Recheck::InTurn), 1);
        f.found(4, Found::Waiting(Recheck::InTurn), 1);
        assert_eq!(jobs(f.plan(&s2, &s, 0, &Updates::Jobs(vec![]), 101)), Vec::<u32>::new());
    }

    #[test]
    fn those_waiting_for_an_end_are_read_after_one_in_their_own_turn() {
        let mut f = after_whole(6);
        let s = Stamps { submitted: 6, ..stamps(7) };
        let s1 = FeedSettings { recheck: 1, ..SETTINGS };
        let none = Updates::Jobs(vec![]);
        // 1 runs; 4, 5 and 6 wait for it (a dependency, a limit).
        f.found(1, Found::Running { cancelled: false }, 1);
        for id in [4, 5, 6] {
            f.found(id, Found::Waiting(Recheck::AfterEnds), 1);
        }
        assert_eq!(jobs(f.plan(&s1, &s, 0, &none, 0)), vec![1, 2], "no end yet: the running job, one in turn");
        f.found(1, Found::Gone { cancelled: false }, 1);
        // The pass after the end reads one of them more, in their own turn.
        assert_eq!(jobs(f.plan(&s1, &s, 0, &none, 0)), vec![3, 4]);
        assert_eq!(jobs(f.plan(&s1, &s, 0, &none, 0)), vec![4], "only after an end");
        f.found(9, Found::Running { cancelled: false }, 1);
        f.found(9, Found::Gone { cancelled: false }, 1);
        // Their turn and the queue's meet at 5; then wrap apart.
        assert_eq!(jobs(f.plan(&s1, &s, 0, &none, 0)), vec![5]);
        f.found(9, Found::Running { cancelled: false }, 1);
        f.found(9, Found::Gone { cancelled: false }, 1);
        assert_eq!(jobs(f.plan(&s1, &s, 0, &none, 0)), vec![6]);
        f.found(9, Found::Running { cancelled: false }, 1);
        f.found(9, Found::Gone { cancelled: false }, 1);
        assert_eq!(jobs(f.plan(&s1, &s, 0, &none, 0)), vec![2, 4], "the queue's turn wrapped to 2, theirs to 4");
    }

    #[test]
    fn the_world_changing_wholesale_makes_the_read_whole() {
        let mut f = after_whole(6);
        let s = Stamps { submitted: 6, ..stamps(7) };
        let none = Updates::Jobs(vec![]);
        let plan = |f: &mut Feed, st: &Stamps, shape, u: &Updates| f.plan(&SETTINGS, st, shape, u, 0);
        assert_eq!(plan(&mut f, &Stamps { partitions: 5, ..s }, 0, &none), Plan::Whole(Whole::Partitions));
        assert_eq!(plan(&mut f, &Stamps { reservations: 5, ..s }, 0, &none), Plan::Whole(Whole::Reservations));
        assert_eq!(plan(&mut f, &s, 1, &none), Plan::Whole(Whole::NodeTable));
        assert_eq!(plan(&mut f, &s, 0, &Updates::Lost), Plan::Whole(Whole::NoUpdateNotes));
        assert_eq!(plan(&mut f, &s, 0, &Updates::NotNoted), Plan::Whole(Whole::NoUpdateNotes));
        f.ask_whole();
        assert_eq!(plan(&mut f, &s, 0, &none), Plan::Whole(Whole::Asked));
        assert!(matches!(plan(&mut f, &s, 0, &none), Plan::Jobs { .. }), "asked once");
        let short = FeedSettings { whole_below: 7, ..SETTINGS };
        assert_eq!(f.plan(&short, &s, 0, &none, 0), Plan::Whole(Whole::ShortQueue));
        // More new ids than records kept (6 waiting): whole.
        assert_eq!(plan(&mut f, &stamps(20), 0, &none), Plan::Whole(Whole::ManyNew));
    }

    #[test]
    fn what_sdiag_counted_and_no_read_saw_makes_the_read_whole() {
        let none = Updates::Jobs(vec![]);
        // A waiting job cancelled: counted, not among the jobs read.
        let mut f = after_whole(6);
        let s = Stamps { submitted: 6, ..stamps(7) };
        f.plan(&SETTINGS, &s, 0, &none, 0);
        assert_eq!(f.end(&Stamps { cancelled: 1, ..s }, 0, false), Err(Whole::UnseenChange));
        // ... found by more reads (its fingerprint moved): asked again, explained.
        f.found(4, Found::Gone { cancelled: true }, 1);
        assert_eq!(f.end(&Stamps { cancelled: 1, ..s }, 0, false), Ok(()));
        // ... seen, when it was read in turn.
        let mut f = after_whole(6);
        f.plan(&SETTINGS, &s, 0, &none, 0);
        f.found(1, Found::Gone { cancelled: true }, 1);
        assert_eq!(f.end(&Stamps { cancelled: 1, ..s }, 0, false), Ok(()));
        // A job started by someone else, not read.
        let mut f = after_whole(6);
        f.plan(&SETTINGS, &s, 0, &none, 0);
        assert_eq!(f.end(&Stamps { started: 1, ..s }, 0, false), Err(Whole::UnseenChange));
        // A job given its id by hand (outside the range handed out).
        let mut f = after_whole(6);
        f.plan(&SETTINGS, &s, 0, &none, 0);
        assert_eq!(f.end(&Stamps { submitted: 7, ..s }, 0, false), Err(Whole::UnseenJob));
        // An array of 4 tasks, one record in the range: its weight counts them.
        let mut f = after_whole(6);
        let s8 = Stamps { submitted: 6, ..stamps(8) };
        assert_eq!(jobs(f.plan(&SETTINGS, &s8, 0, &none, 0)), vec![1, 2, 7]);
        f.found(7, Found::Waiting(Recheck::InTurn), 4);
        assert_eq!(f.end(&Stamps { submitted: 10, ..s8 }, 0, false), Ok(()));
        // A running job cancelled counts once, though read again as it completes.
        let mut f = after_whole(6);
        f.plan(&SETTINGS, &s, 0, &none, 0);
        f.found(6, Found::Running { cancelled: false }, 1);
        f.end(&Stamps { started: 1, ..s }, 0, false).unwrap();
        let s = Stamps { started: 1, ..s };
        f.plan(&SETTINGS, &s, 0, &none, 0);
        f.found(6, Found::Running { cancelled: true }, 1);
        f.end(&Stamps { cancelled: 1, ..s }, 0, false).unwrap();
        let s = Stamps { cancelled: 1, ..s };
        f.plan(&SETTINGS, &s, 0, &none, 0);
        f.found(6, Found::Gone { cancelled: true }, 1);
        assert_eq!(f.end(&s, 0, false), Ok(()), "its end is no second cancel");
        f.plan(&SETTINGS, &s, 0, &none, 0);
        assert_eq!(f.end(&Stamps { cancelled: 2, ..s }, 0, false), Err(Whole::UnseenChange));
    }

    #[test]
    fn a_job_is_read_again_when_its_window_first_reaches_a_reservation() {
        // Reservations at 1,000 and 5,000; a job of 600 s read at 100.
        let starts = [1_000, 5_000];
        assert_eq!(reaches_reservation(&starts, 100, 600), Some(401));
        // At 401 its window (401 + 600 > 1,000) reaches the first: the next.
        assert_eq!(reaches_reservation(&starts, 401, 600), Some(4_401));
        assert_eq!(reaches_reservation(&starts, 400, 600), Some(401), "400 + 600 is not past 1,000");
        // Past them all, or none: nothing to wait for.
        assert_eq!(reaches_reservation(&starts, 4_401, 600), None);
        assert_eq!(reaches_reservation(&[], 0, 600), None);
        // A year's window (no limit) reaches what begins within the year.
        assert_eq!(reaches_reservation(&starts, 0, 365 * 86_400), None);
    }

    #[test]
    fn new_ids_wrap_from_max_job_id_to_first_job_id() {
        let s = Stamps { next_job_id: 3, first_job_id: 1, max_job_id: 10, ..Stamps::default() };
        assert_eq!(new_ids(8, &s, 100), Some(vec![8, 9, 1, 2]));
        assert_eq!(new_ids(8, &s, 3), None, "more than a whole read");
        assert_eq!(new_ids(3, &s, 100), Some(vec![]));
        assert_eq!(new_ids(1, &Stamps { next_job_id: 4, ..s }, 100), Some(vec![1, 2, 3]));
        assert_eq!(new_ids(1, &Stamps { next_job_id: u32::MAX, ..s }, 100), None, "ids exhausted");
    }
}
