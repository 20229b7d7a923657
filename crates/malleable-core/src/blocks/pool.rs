//! The nodes free now that no decision of this pass has taken yet, handed
//! out lowest index first so that decisions are deterministic, and only
//! where a job may run (its [`Placement`]): its required nodes first, then
//! the lowest it is allowed; a contiguous job's as the lowest run of them.

use malleable_model::{Decision, NodeIndex, PendingJob, Placement, Snapshot};

pub struct FreePool {
    /// The nodes free at the snapshot, ascending.
    free: Vec<NodeIndex>,
    /// `taken[k]`: `free[k]` was given away in this pass.
    taken: Vec<bool>,
    /// `free[..first]` are all taken (where an unrestricted job's search starts).
    first: usize,
    left: usize,
}

impl FreePool {
    pub fn new(s: &Snapshot) -> Self {
        let free = s.free_nodes();
        FreePool { taken: vec![false; free.len()], left: free.len(), first: 0, free }
    }

    /// Free nodes left, whoever may use them.
    pub fn len(&self) -> usize {
        self.left
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn position(&self, node: NodeIndex) -> Option<usize> {
        self.free.binary_search(&node).ok().filter(|&k| !self.taken[k])
    }

    /// Whether `node` is free and not given away yet.
    pub fn has(&self, node: NodeIndex) -> bool {
        self.position(node).is_some()
    }

    /// How many nodes left a job placed so could be given: 0 while one of
    /// its required nodes is not free.
    pub fn available(&self, p: &Placement) -> usize {
        if p.contiguous {
            p.room(&self.open(p))
        } else if p.required.iter().all(|&r| self.has(r)) {
            self.allowed_free(p)
        } else {
            0
        }
    }

    /// How many nodes left a job placed so may use, whether or not its
    /// required nodes are among them.
    pub fn allowed_free(&self, p: &Placement) -> usize {
        if p.allowed.is_none() {
            return self.left;
        }
        (self.first..self.free.len()).filter(|&k| !self.taken[k] && p.allows(self.free[k])).count()
    }

    /// The nodes left that a job placed `p` may use, ascending.
    fn open(&self, p: &Placement) -> Vec<NodeIndex> {
        (self.first..self.free.len())
            .filter(|&k| !self.taken[k] && p.allows(self.free[k]))
            .map(|k| self.free[k])
            .collect()
    }

    /// The `n` nodes a job placed `p` would be given now (its required nodes,
    /// then the lowest it may use, those `avoid` allows last; for a
    /// contiguous job the lowest run), ascending; the pool is not changed.
    /// `None` if it cannot get `n`.
    pub fn pick(&self, p: &Placement, n: usize, avoid: Option<&Placement>) -> Option<Vec<NodeIndex>> {
        if p.required.len() > n || n > self.left {
            return None;
        }
        if p.contiguous {
            return p.window(&self.open(p), n);
        }
        let mut chosen = Vec::with_capacity(n);
        for &r in &p.required {
            self.position(r)?;
            chosen.push(r);
        }
        let open = |k: &usize| !self.taken[*k] && p.allows(self.free[*k]) && !p.requires(self.free[*k]);
        let mut rest = (self.first..self.free.len()).filter(open);
        match avoid.filter(|a| !a.is_anywhere()) {
            None => chosen.extend(rest.by_ref().take(n - chosen.len()).map(|k| self.free[k])),
            Some(a) => {
                let (others, theirs): (Vec<usize>, Vec<usize>) = rest.partition(|&k| !a.allows(self.free[k]));
                let want = n - chosen.len();
                chosen.extend(others.into_iter().chain(theirs).take(want).map(|k| self.free[k]));
            }
        }
        if chosen.len() < n {
            return None;
        }
        chosen.sort_unstable();
        Some(chosen)
    }

    /// Give these nodes away (each free and not given yet: from [`pick`](Self::pick)).
    pub fn commit(&mut self, nodes: &[NodeIndex]) {
        for &node in nodes {
            if let Some(k) = self.position(node) {
                self.taken[k] = true;
                self.left -= 1;
            }
        }
        while self.first < self.free.len() && self.taken[self.first] {
            self.first += 1;
        }
    }

    /// Hand out `n` nodes a job placed `p` may use (for an expand), or `None`.
    pub fn take(&mut self, p: &Placement, n: usize) -> Option<Vec<NodeIndex>> {
        let nodes = self.pick(p, n, None)?;
        self.commit(&nodes);
        Some(nodes)
    }

    /// Start `job` on `size` nodes it may use, or `None` if too few are left.
    pub fn start(&mut self, job: &PendingJob, size: usize) -> Option<Decision> {
        self.take(&job.placement, size).map(|nodes| Decision::Start { job: job.id, nodes, time_limit: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::cluster;

    #[test]
    fn nodes_go_lowest_first_and_once() {
        let s = cluster(&[true, false, true, true, true]);
        let mut pool = FreePool::new(&s);
        let any = Placement::anywhere();
        assert_eq!(pool.take(&any, 2), Some(vec![0, 2]));
        assert_eq!((pool.len(), pool.available(&any)), (2, 2));
        assert_eq!(pool.take(&any, 3), None, "too few left, and nothing taken");
        assert_eq!(pool.take(&any, 2), Some(vec![3, 4]));
        assert!(pool.is_empty());
    }

    #[test]
    fn a_placed_job_gets_its_required_nodes_and_only_allowed_ones() {
        let s = cluster(&[true; 6]);
        let mut pool = FreePool::new(&s);
        let p = Placement::only([1, 3, 4, 5]).requiring([4]);
        assert_eq!((pool.available(&p), pool.allowed_free(&p)), (4, 4));
        assert_eq!(pool.pick(&p, 2, None), Some(vec![1, 4]));
        assert_eq!(pool.pick(&p, 5, None), None, "only four allowed");
        assert_eq!(pool.pick(&Placement::anywhere().requiring([2, 3]), 1, None), None, "two required");
        // Another job's required node taken: it cannot start at all.
        assert_eq!(pool.take(&Placement::only([4]), 1), Some(vec![4]));
        assert_eq!((pool.available(&p), pool.allowed_free(&p)), (0, 3));
        assert_eq!(pool.pick(&p, 1, None), None);
        // Avoiding another job's nodes where it can: 0 and 2 before 1 and 3.
        let head = Placement::only([0, 1]);
        assert_eq!(pool.pick(&Placement::anywhere(), 3, Some(&head)), Some(vec![2, 3, 5]));
        assert_eq!(pool.pick(&Placement::anywhere(), 4, Some(&head)), Some(vec![0, 2, 3, 5]));
    }

    #[test]
    fn a_contiguous_job_gets_consecutive_nodes_or_none() {
        let s = cluster(&[true, true, false, true, true, true]);
        let mut pool = FreePool::new(&s);
        let row = Placement::anywhere().contiguous_if(true);
        assert_eq!((pool.len(), pool.available(&row)), (5, 3));
        assert_eq!(pool.pick(&row, 2, None), Some(vec![0, 1]));
        assert_eq!(pool.pick(&row, 3, None), Some(vec![3, 4, 5]));
        assert_eq!(pool.pick(&row, 4, None), None, "five free, but not four in a row");
        assert_eq!(pool.take(&Placement::only([4]), 1), Some(vec![4]));
        assert_eq!((pool.available(&row), pool.pick(&row, 3, None)), (2, None));
    }
}
