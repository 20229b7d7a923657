//! The nodes a waiting job's `--constraint` allows, asked of slurmctld's
//! own valid_feature_counts, so that the strategies only place a job where
//! select_nodes would take it; and whether the expression is about the set
//! of nodes rather than each node (counts, exclusive-or alternatives).

use crate::common::bitmap::{set_bits, Bitmap};
use crate::common::cstr::cstr_to_string;
use crate::ctld::job::JobView;
use crate::ctld::locks::{LockGuard, WritesJobs, WritesNodes};

impl<L: WritesJobs + WritesNodes> LockGuard<L> {
    /// The nodes whose features satisfy `job`'s `--constraint` (node-table
    /// indices), as slurmctld's valid_feature_counts reads the expression
    /// (counts and exclusive-or alternatives widen it, and select_nodes has
    /// the last word); `None` for a job without one. A node's features are
    /// its active ones, and also its available ones that a node_features
    /// plugin may change for the job's user, as select_nodes counts them
    /// (it reboots such a node into them for the job: Slurm's
    /// node_features/helpers test; with the active ones only, such a job
    /// was never placed and waited for ever).
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
            (self.ctld.valid_feature_counts)(job.as_ptr(), false, all.as_raw(), &mut has_xor);
            Some(set_bits(all.as_raw()))
        }
    }
}

impl JobView<'_> {
    /// Whether the job's `--constraint` speaks of its nodes as a set: a
    /// count (`gpu*2`: two of the nodes have it) or alternatives in
    /// brackets (`[a|b]`: all of them have the same one). No node alone
    /// qualifies or not then, so [`LockGuard::feature_nodes`] can only
    /// widen, and a start on nodes the strategy chose may need Slurm's own
    /// pick instead (`start_job`).
    pub fn constraint_is_about_the_set(&self) -> bool {
        let Some(d) = self.details() else { return false };
        // SAFETY: the details' strings are NULL or NUL-terminated, owned by
        // the live record we read under the caller's job lock.
        let text = unsafe {
            let used = if d.features_use.is_null() { d.features } else { d.features_use };
            cstr_to_string(used)
        };
        text.is_some_and(|t| expression_is_about_the_set(&t))
    }
}

/// A constraint expression with a node count (`name*N`) or bracketed
/// alternatives (`[a|b]`, `[a*2&b*1]`), the forms select_nodes satisfies by
/// the whole set of nodes.
fn expression_is_about_the_set(text: &str) -> bool {
    text.contains('*') || text.contains('[')
}

#[cfg(test)]
mod tests {
    use super::expression_is_about_the_set;

    #[test]
    fn counts_and_alternatives_are_about_the_set_and_plain_features_are_not() {
        for set in ["gpu*2", "[a|b]", "[(a&b)*2&c*1]", "f4&[f1|f0]"] {
            assert!(expression_is_about_the_set(set), "{set}");
        }
        for each in ["gpu", "a&b", "a|b", "(a|b)&c"] {
            assert!(!expression_is_about_the_set(each), "{each}");
        }
    }
}
