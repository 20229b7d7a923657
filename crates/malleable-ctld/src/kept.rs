//! The waiting jobs as the last reads left them, and the feed that says
//! which to read again: what a pass hands the strategy of the jobs it did
//! not read under slurmctld's locks this time.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use malleable_model::runtime_msg::Status;
use malleable_model::{JobId, PendingJob};
use rustc_hash::FxHashMap;
use slurm::ctld::changes::UpdateNotes;
use slurm::ctld::ShownWait;

use crate::adaptation::MalleableJob;
use crate::feed::{Feed, FeedSettings, Found};
use crate::snapshot::nodes::NodeConfigs;

/// One waiting job, as last read.
#[derive(Clone, Debug, Default)]
pub struct Waiter {
    /// Its entry in the strategy's queue; `None` when it is kept out (held,
    /// dependent, over a limit...).
    pub queued: Option<PendingJob>,
    /// What it showed of its wait when read, or was given since.
    pub shown: Option<ShownWait>,
    pub malleable: Option<MalleableJob>,
    /// Why its malleable options do not read, if they do not.
    pub unreadable: Option<String>,
    /// A rigid job that may share cores (its partition's OverSubscribe).
    pub oversubscribes: bool,
    /// A batch job younger than `BatchStartDelay=`: when it comes of age.
    pub young: Option<Instant>,
    /// Its record's fingerprint when read (`JobView::fingerprint`).
    pub print: u64,
}

/// The kept waiting jobs, by id (so the queue is handed over in the order
/// slurmctld made the jobs), and the feed.
pub struct Kept {
    pub feed: Feed,
    pub settings: FeedSettings,
    /// Off: every pass reads every job (beside another scheduler, which
    /// starts jobs the feed would not see start).
    pub enabled: bool,
    waiting: BTreeMap<u32, Waiter>,
    /// Each node's configuration as last read.
    pub nodes: NodeConfigs,
    /// Where job_submit/malleable's notes of updated jobs are taken from.
    pub notes: Option<UpdateNotes>,
    /// Whether the log said that updates are not noted.
    pub said_not_noted: bool,
    /// Each partition's nodes as the last reads found them.
    pub partitions: PartitionNodes,
}

/// Each partition's nodes in the strategies' indices, by partition record,
/// kept from read to read while slurmctld stamps no partition change and
/// the node table keeps its shape: a running elastic job's read asks for
/// its partition's, and at 10,000 nodes one such list, read again under the
/// locks at every pass, was a fifth of a read (perf, bench-scale).
#[derive(Default)]
pub struct PartitionNodes {
    /// slurmctld's partition stamp and the node table's shape when read,
    /// and the second of the read.
    at: Option<(i64, u64, i64)>,
    by_record: FxHashMap<usize, Arc<Vec<usize>>>,
}

impl PartitionNodes {
    /// The lists for a read with these stamp and shape: none when either
    /// moved, or the lists were read in the stamp's own
    /// second (a change later in it would not move it), or the read is
    /// whole (which reads everything again).
    pub fn take_for(&mut self, stamp: i64, shape: u64, whole: bool) -> FxHashMap<usize, Arc<Vec<usize>>> {
        let stands = !whole && self.at.is_some_and(|(s, sh, at)| s == stamp && sh == shape && at > stamp);
        let mut lists = std::mem::take(&mut self.by_record);
        if !stands {
            lists.clear();
            self.at = None;
        }
        lists
    }

    /// Keep what a read at second `now` found, with the stamp and shape it
    /// read at: lists carried over stand for the second of the oldest.
    pub fn keep(&mut self, lists: FxHashMap<usize, Arc<Vec<usize>>>, stamp: i64, shape: u64, now: i64) {
        self.by_record = lists;
        self.at = Some(self.at.filter(|&(s, sh, _)| s == stamp && sh == shape).unwrap_or((stamp, shape, now)));
    }
}

impl Kept {
    pub fn new(settings: FeedSettings, enabled: bool) -> Kept {
        Kept {
            feed: Feed::default(),
            settings,
            enabled,
            waiting: BTreeMap::new(),
            nodes: NodeConfigs::default(),
            notes: None,
            said_not_noted: false,
            partitions: PartitionNodes::default(),
        }
    }

    /// A whole read begins: nothing kept counts.
    pub fn begin_whole(&mut self) {
        self.feed.begin_whole();
        self.waiting.clear();
    }

    /// What a read found of job `id`.
    pub fn found(&mut self, id: u32, found: Found, weight: u64, waiter: Option<Waiter>) {
        self.feed.found(id, found, weight);
        match waiter {
            Some(w) => {
                self.waiting.insert(id, w);
            }
            None => {
                self.waiting.remove(&id);
            }
        }
    }

    /// Whether job `id` is queued as read with this fingerprint: then a
    /// read in turn need not read it whole.
    pub fn unmoved(&self, id: u32, print: u64) -> bool {
        self.waiting.get(&id).is_some_and(|w| w.queued.is_some() && w.print == print)
    }

    /// The fingerprint job `id` was read with, if it is kept.
    pub fn print_of(&self, id: u32) -> Option<u64> {
        self.waiting.get(&id).map(|w| w.print)
    }

    /// The kept waiting jobs, in id order.
    pub fn waiters(&self) -> impl Iterator<Item = (&u32, &Waiter)> {
        self.waiting.iter()
    }

    /// What a kept waiting job shows of its wait (as read, or as given since).
    pub fn shown_of(&self, id: u32) -> Option<&ShownWait> {
        self.waiting.get(&id)?.shown.as_ref()
    }

    /// A kept waiting malleable job was written this status: kept as
    /// shown, so the next pass does not write it again.
    pub fn status_shown(&mut self, id: JobId, status: &Status) {
        if let Some(m) = self.waiting.get_mut(&id.0).and_then(|w| w.malleable.as_mut()) {
            m.status = status.clone();
            m.shown = true;
        }
    }

    /// A job was given this wait to show (its Reason, start): kept, so the
    /// next pass compares with it without reading the job.
    pub fn shown(&mut self, id: JobId, shown: ShownWait) {
        if let Some(w) = self.waiting.get_mut(&id.0) {
            w.shown = Some(shown);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_list() -> FxHashMap<usize, Arc<Vec<usize>>> {
        FxHashMap::from_iter([(7, Arc::new(vec![0, 1, 2]))])
    }

    #[test]
    fn partition_lists_stand_while_the_stamp_and_the_shape_do() {
        let mut p = PartitionNodes::default();
        assert!(p.take_for(100, 1, false).is_empty(), "nothing read yet");
        p.keep(one_list(), 100, 1, 105);
        assert_eq!(p.take_for(100, 1, false).len(), 1);
        p.keep(one_list(), 100, 1, 106);
        assert!(p.take_for(101, 1, false).is_empty(), "a partition change stamped");
        p.keep(one_list(), 101, 1, 107);
        assert!(p.take_for(101, 2, false).is_empty(), "the node table changed");
        p.keep(one_list(), 101, 2, 108);
        assert!(p.take_for(101, 2, true).is_empty(), "a whole read reads them again");
    }

    #[test]
    fn partition_lists_read_in_the_stamps_own_second_do_not_stand() {
        let mut p = PartitionNodes::default();
        p.take_for(100, 1, false);
        // A change later in second 100 would leave the stamp at 100.
        p.keep(one_list(), 100, 1, 100);
        assert!(p.take_for(100, 1, false).is_empty());
        // Carried over, lists stand for the second of the oldest.
        p.keep(one_list(), 100, 1, 101);
        assert_eq!(p.take_for(100, 1, false).len(), 1);
        p.keep(one_list(), 100, 1, 102);
        assert_eq!(p.take_for(100, 1, false).len(), 1);
    }
}
