//! The waiting jobs as the last reads left them, and the feed that says
//! which to read again: what a pass hands the strategy of the jobs it did
//! not read under slurmctld's locks this time.

use std::collections::BTreeMap;
use std::time::Instant;

use malleable_model::runtime_msg::Status;
use malleable_model::{JobId, PendingJob};
use slurm::ctld::changes::UpdateNotes;
use slurm::ctld::ShownWait;

use crate::adaptation::MalleableJob;
use crate::feed::{Feed, FeedSettings, Found};
use crate::snapshot::NodeConfigs;

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
