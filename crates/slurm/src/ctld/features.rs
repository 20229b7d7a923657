//! The nodes a waiting job's `--constraint` allows, asked of slurmctld's
//! own valid_feature_counts, so that the strategies only place a job where
//! select_nodes would take it.

use crate::common::bitmap::{set_bits, Bitmap};
use crate::ctld::job::JobView;
use crate::ctld::locks::{LockGuard, WritesJobs, WritesNodes};

impl<L: WritesJobs + WritesNodes> LockGuard<L> {
    /// The nodes whose active features satisfy `job`'s `--constraint`
    /// (node-table indices), as slurmctld's valid_feature_counts reads the
    /// expression (counts and exclusive-or alternatives widen it, and
    /// select_nodes has the last word); `None` for a job without one.
    pub fn feature_nodes(&self, job: &JobView<'_>) -> Option<Vec<usize>> {
        let d = job.details()?;
        if d.feature_list.is_null() && d.feature_list_use.is_null() {
            return None;
        }
        let mut all = Bitmap::new(self.node_table_len());
        all.not();
        let mut has_xor = false;
        // SAFETY: a live record with details under our job write lock
        // (valid_feature_counts refreshes its feature list's node bitmaps)
        // and the node lock; `all` is a bitmap of the table's size we own,
        // cleared by it where a node does not qualify.
        unsafe {
            (self.ctld.valid_feature_counts)(job.as_ptr(), true, all.as_raw(), &mut has_xor);
            Some(set_bits(all.as_raw()))
        }
    }
}
