//! What the agent's log has said, so that a line is said once while what it
//! says holds (a job held by its limits, its options unreadable, slurmdbd
//! away), and again when it changes: one type for each such memory.

use std::collections::HashMap;
use std::hash::Hash;

use malleable_core::Note;
use malleable_model::JobId;

/// What was said about each key, in what words (`V`, or nothing but that
/// it was said), and how many times it came again since.
#[derive(Debug)]
pub(super) struct SaidOnce<K, V = ()> {
    said: HashMap<K, (V, u64)>,
}

impl<K, V> Default for SaidOnce<K, V> {
    fn default() -> Self {
        SaidOnce { said: HashMap::new() }
    }
}

impl<K: Eq + Hash, V: PartialEq> SaidOnce<K, V> {
    /// Whether to say `what` about `key` now: it was not said, or said
    /// otherwise; from now on it counts as said.
    pub(super) fn first(&mut self, key: K, what: V) -> bool {
        self.again(key, what) == 0
    }

    /// How many times in a row `what` came about `key` before now (0: it
    /// was not said, or said otherwise); from now on it counts as said.
    pub(super) fn again(&mut self, key: K, what: V) -> u64 {
        match self.said.get_mut(&key) {
            Some((said, times)) if *said == what => {
                *times += 1;
                *times
            }
            _ => {
                self.said.insert(key, (what, 0));
                0
            }
        }
    }

    /// Forget what no longer holds (a job that ended, or started);
    /// whether it had been said.
    pub(super) fn forget(&mut self, key: &K) -> bool {
        self.said.remove(key).is_some()
    }

    /// Keep only the keys `live` still names: an ended job's memory goes.
    pub(super) fn keep(&mut self, live: impl Fn(&K) -> bool) {
        self.said.retain(|k, _| live(k));
    }
}

/// The lines the agent says once while they hold.
#[derive(Debug, Default)]
pub(super) struct Said {
    /// For each waiting job a strategy's note was said about, its reason.
    pub(super) notes: SaidOnce<JobId, String>,
    /// Jobs whose malleable options were said not to read.
    pub(super) unreadable: SaidOnce<JobId>,
    /// Elastic jobs said to be held below their maximum by their limits.
    pub(super) capped: SaidOnce<JobId>,
    /// Jobs whose ended adaptation was said to wait for slurmdbd to free
    /// its nodes.
    pub(super) release_held: SaidOnce<JobId>,
    /// For each waiting job slurmctld refused to start, the refusal: a
    /// strategy decides the same start again at every pass (apply.rs).
    pub(super) start_refused: SaidOnce<JobId, String>,
}

impl Said {
    /// The lines of `notes` to say: every note about no job; a note about
    /// a job once while it is noted for the same reason.
    pub(super) fn notes(&mut self, notes: Vec<Note>) -> Vec<String> {
        let mut lines = Vec::new();
        for note in notes {
            match note.job {
                None => lines.push(note.text),
                Some(job) if self.notes.first(job, note.reason) => lines.push(note.text),
                Some(_) => {}
            }
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_about_a_job_is_said_once_per_reason() {
        let mut said = Said::default();
        let held = |corridor: &str| {
            Note::about(JobId(7), format!("power budget under {corridor}"), format!("JobId=7 held ({corridor})"))
        };
        assert_eq!(
            said.notes(vec![held("0-300"), Note::pass("power: repaired")]),
            vec!["JobId=7 held (0-300)".to_string(), "power: repaired".to_string()]
        );
        // The next pass says the same: only the note about no job is said.
        assert_eq!(said.notes(vec![held("0-300"), Note::pass("power: repaired")]), vec!["power: repaired".to_string()]);
        // A pass without the note keeps it said (the job still waits) ...
        assert!(said.notes(vec![]).is_empty());
        assert!(said.notes(vec![held("0-300")]).is_empty());
        // ... and a new reason is said again.
        assert_eq!(said.notes(vec![held("0-1000")]), vec!["JobId=7 held (0-1000)".to_string()]);
        // Once the job is gone, the same reason is news again.
        said.notes.keep(|_| false);
        assert_eq!(said.notes(vec![held("0-1000")]), vec!["JobId=7 held (0-1000)".to_string()]);
    }

    #[test]
    fn a_line_is_said_again_only_once_forgotten() {
        let mut held = SaidOnce::<()>::default();
        assert!(held.first((), ()));
        assert!(!held.first((), ()));
        assert!(held.forget(&()), "it had been said");
        assert!(!held.forget(&()), "nothing said since");
        assert!(held.first((), ()));
    }

    #[test]
    fn a_refusal_is_said_once_while_it_repeats_and_counted() {
        let mut refused = SaidOnce::<JobId, String>::default();
        let (a, b) = (JobId(1), JobId(2));
        assert_eq!(refused.again(a, "x".into()), 0);
        assert_eq!(refused.again(a, "x".into()), 1);
        assert_eq!(refused.again(a, "x".into()), 2);
        // Another job's refusal, or another refusal of this one, is new.
        assert_eq!(refused.again(b, "x".into()), 0);
        assert_eq!(refused.again(a, "y".into()), 0);
        assert_eq!(refused.again(a, "y".into()), 1);
        // Once the job started (forgotten), the same refusal is news.
        refused.forget(&a);
        assert_eq!(refused.again(a, "y".into()), 0);
    }
}
