//! Which nodes are free over time, going by time limits, and the bookings
//! made on it: conservative backfill's plan, by node, as Slurm's backfill
//! keeps its node space. A job that may use only some nodes (its
//! partition, `--nodelist`, `--exclude`, a reservation) is booked only when
//! enough of its own nodes are free for its whole length (a contiguous
//! job's in a row), and where partitions overlap a node's return counts for
//! every job that may use it.

use std::ops::Range;

use malleable_model::{NodeIndex, Placement, Snapshot, Time};

use crate::blocks::returns::node_returns;

/// A set of nodes, as bits.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Nodes(Vec<u64>);

impl Nodes {
    fn empty(n: usize) -> Nodes {
        Nodes(vec![0; n.div_ceil(64)])
    }

    fn set(&mut self, i: NodeIndex) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    #[cfg(test)]
    fn clear(&mut self, i: NodeIndex) {
        self.0[i / 64] &= !(1 << (i % 64));
    }

    fn has(&self, i: NodeIndex) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    fn and(&mut self, other: &Nodes) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= b;
        }
    }

    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// How many of its members `other` has too.
    fn count_within(&self, other: &Nodes) -> usize {
        self.0.iter().zip(&other.0).map(|(a, b)| (a & b).count_ones() as usize).sum()
    }

    /// Its members, lowest first.
    fn members(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(k, &w)| (0..64).filter(move |b| w & (1 << b) != 0).map(move |b| k * 64 + b))
    }
}

/// One step: the nodes free from `at` until the next step's time.
#[derive(Clone, Debug)]
struct Step {
    at: Time,
    free: Nodes,
    /// `free.count()`, kept so most steps are ruled out without a look at the bits.
    count: usize,
}

impl Step {
    /// Free node `i` from this step on.
    fn add(&mut self, i: NodeIndex) {
        if !self.free.has(i) {
            self.free.set(i);
            self.count += 1;
        }
    }
}

/// Each step's free nodes a job may use, counted when first asked for.
struct StepCounts<'a> {
    allowed: Option<&'a Nodes>,
    /// By step; `usize::MAX`: not counted yet (a confined job's only).
    counted: Vec<usize>,
}

impl<'a> StepCounts<'a> {
    fn new(steps: &[Step], allowed: Option<&'a Nodes>) -> StepCounts<'a> {
        let counted = if allowed.is_some() { vec![usize::MAX; steps.len()] } else { Vec::new() };
        StepCounts { allowed, counted }
    }

    fn at(&mut self, steps: &[Step], k: usize) -> usize {
        let Some(a) = self.allowed else { return steps[k].count };
        if self.counted[k] == usize::MAX {
            self.counted[k] = steps[k].free.count_within(a);
        }
        self.counted[k]
    }
}

/// The plan: steps in increasing time, the first at now, the last lasting
/// for ever.
pub struct NodePlan {
    nodes: usize,
    steps: Vec<Step>,
}

impl NodePlan {
    /// The nodes free now (`free_now`), then each busy node from when it
    /// comes back ([`node_returns`]): a node held by an unlimited job, or
    /// by none (down), never does. One held past its job's limit counts as
    /// back a second from now: a job waiting on it is booked then, ahead of
    /// the jobs behind it, and only nodes free now are started on.
    pub fn new(s: &Snapshot, free_now: impl IntoIterator<Item = NodeIndex>) -> NodePlan {
        let nodes = s.nodes.len();
        let mut first = Nodes::empty(nodes);
        for i in free_now {
            first.set(i);
        }
        let count = first.count();
        let mut steps = vec![Step { at: s.now, free: first, count }];
        let mut returns = node_returns(s);
        returns.sort_unstable_by_key(|&(i, t)| (t, i));
        for (i, t) in returns {
            let t = t.max(s.now + 1);
            let last = steps.last_mut().expect("a plan has a first step");
            if last.at != t {
                let mut next = last.clone();
                next.at = t;
                steps.push(next);
            }
            steps.last_mut().expect("a plan has a first step").add(i);
        }
        NodePlan { nodes, steps }
    }

    /// The earliest step time, `from` or later, from which `size` nodes the
    /// job may use (with every node it requires) stay free for `length`
    /// seconds (`None`: for ever), and which nodes: those it requires, then
    /// the lowest others (a contiguous job: the lowest run).
    pub fn earliest(
        &mut self,
        from: Time,
        size: usize,
        length: Option<Time>,
        p: &Placement,
    ) -> Option<(Time, Vec<NodeIndex>)> {
        let allowed = self.allowed(p);
        let size = size.max(p.required.len());
        let mut k = self.split_at(from.max(self.steps[0].at));
        // Each step's free nodes that the job may use: an upper bound on what
        // a start there can get, so a count below `size` rules a step out.
        // Counted as steps are looked at (a confined job's count takes a
        // pass over the step's bits): most searches end in the first steps.
        let mut counts = StepCounts::new(&self.steps, allowed.as_ref());
        while k < self.steps.len() {
            if counts.at(&self.steps, k) < size {
                k += 1;
                continue;
            }
            let start = self.steps[k].at;
            let end = length.map(|l| start.saturating_add(l));
            // A step in the job's span with fewer than `size` such nodes rules
            // out this start, and every later one up to that step (their spans
            // reach it too, ending later): skip past it on counts alone,
            // before any bits are intersected.
            if let Some(short) = self.short_step(&mut counts, k, end, size) {
                k = short + 1;
                continue;
            }
            if !p.contiguous && p.required.is_empty() {
                let span = self.span_end(k, end);
                if let Some(chosen) = self.lowest_throughout(k..span, allowed.as_ref(), size) {
                    return Some((start, chosen));
                }
                k += 1;
                continue;
            }
            let mut usable = self.steps[k].free.clone();
            if let Some(a) = &allowed {
                usable.and(a);
            }
            let mut j = k + 1;
            while j < self.steps.len() && end.is_none_or(|e| self.steps[j].at < e) && usable.count() >= size {
                usable.and(&self.steps[j].free);
                j += 1;
            }
            if p.contiguous && usable.count() >= size {
                let open: Vec<NodeIndex> = usable.members().collect();
                if let Some(chosen) = p.window(&open, size) {
                    return Some((start, chosen));
                }
            } else if usable.count() >= size && p.required.iter().all(|&r| usable.has(r)) {
                let mut chosen: Vec<NodeIndex> = p.required.clone();
                chosen.extend(usable.members().filter(|i| !p.required.contains(i)).take(size - p.required.len()));
                return Some((start, chosen));
            }
            k += 1;
        }
        None
    }

    /// The index past the last step from `k` on that starts before `end`
    /// (`None`: for ever): a start at step `k` lasting until `end` spans
    /// the steps `k..` it.
    fn span_end(&self, k: usize, end: Option<Time>) -> usize {
        match end {
            Some(e) => k + 1 + self.steps[k + 1..].partition_point(|step| step.at < e),
            None => self.steps.len(),
        }
    }

    /// The lowest `size` nodes (in `allowed`, if given) free in every step
    /// of `span`, or `None` if fewer are. Word by word, each word through
    /// the whole span, stopping once `size` are found: a small job looks at
    /// the first words only, where intersecting whole sets took every word
    /// of every step.
    fn lowest_throughout(&self, span: Range<usize>, allowed: Option<&Nodes>, size: usize) -> Option<Vec<NodeIndex>> {
        let steps = &self.steps[span.clone()];
        let mut chosen = Vec::with_capacity(size);
        for w in 0..self.steps[span.start].free.0.len() {
            if chosen.len() == size {
                break;
            }
            let mut bits = allowed.map_or(u64::MAX, |a| a.0[w]);
            for step in steps {
                if bits == 0 {
                    break;
                }
                bits &= step.free.0[w];
            }
            while bits != 0 && chosen.len() < size {
                chosen.push(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        (chosen.len() == size).then_some(chosen)
    }

    /// The first step after `k` and before `end` (`None`: for ever) with
    /// fewer than `size` nodes free (`counts`, by step).
    fn short_step(&self, counts: &mut StepCounts, k: usize, end: Option<Time>, size: usize) -> Option<usize> {
        (k + 1..self.steps.len())
            .take_while(|&j| end.is_none_or(|e| self.steps[j].at < e))
            .find(|&j| counts.at(&self.steps, j) < size)
    }

    /// Take `nodes` from `start` for `length` seconds (`None`: for ever).
    pub fn book(&mut self, start: Time, length: Option<Time>, nodes: &[NodeIndex]) {
        let from = self.split_at(start);
        let to = match length {
            Some(l) => self.split_at(start.saturating_add(l)),
            None => self.steps.len(),
        };
        // The job's nodes as words of bits, taken from each step a word at
        // a time: a job of hundreds of nodes over hundreds of steps.
        let mut words: Vec<(usize, u64)> = Vec::new();
        for &i in nodes.iter().filter(|&&i| i < self.nodes) {
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            // Lowest first, as chosen: a node's word is most often the last one.
            match words.last_mut().filter(|(at, _)| *at == w) {
                Some((_, mask)) => *mask |= bit,
                None => match words.iter_mut().find(|(at, _)| *at == w) {
                    Some((_, mask)) => *mask |= bit,
                    None => words.push((w, bit)),
                },
            }
        }
        for step in &mut self.steps[from..to] {
            for &(w, mask) in &words {
                let word = &mut step.free.0[w];
                step.count -= (*word & mask).count_ones() as usize;
                *word &= !mask;
            }
        }
    }

    /// The nodes a job placed `p` may use that stay free from `from` for
    /// `length` seconds (`None`: for ever), lowest first: where a running
    /// job may grow without taking a node booked for a waiting one.
    pub fn free_throughout(&mut self, from: Time, length: Option<Time>, p: &Placement) -> Vec<NodeIndex> {
        let k = self.split_at(from.max(self.steps[0].at));
        let end = length.map(|l| from.saturating_add(l));
        let mut usable = self.steps[k].free.clone();
        if let Some(a) = self.allowed(p) {
            usable.and(&a);
        }
        for step in &self.steps[k + 1..] {
            if end.is_some_and(|e| step.at >= e) {
                break;
            }
            usable.and(&step.free);
        }
        usable.members().collect()
    }

    /// The nodes a job placed `p` may use; `None` for all.
    fn allowed(&self, p: &Placement) -> Option<Nodes> {
        let list = p.allowed.as_ref()?;
        let mut a = Nodes::empty(self.nodes);
        for &i in list.iter().filter(|&&i| i < self.nodes) {
            a.set(i);
        }
        Some(a)
    }

    /// The index of the step starting at `t`, adding one there if needed.
    fn split_at(&mut self, t: Time) -> usize {
        match self.steps.binary_search_by_key(&t, |s| s.at) {
            Ok(i) => i,
            Err(i) => {
                // i > 0: nothing is booked before now, the first step's time.
                let mut step = self.steps[i - 1].clone();
                step.at = t;
                self.steps.insert(i, step);
                i
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cluster, running};

    #[test]
    fn nodes_come_back_at_their_jobs_limits_and_bookings_take_them() {
        // Now 100: node 0 free; 1 back at 200, 2 at 300; 3 held for ever.
        let mut s = cluster(&[true, false, false, false]);
        s.running = vec![running(8, &[1], Some(200)), running(9, &[2], Some(300)), running(7, &[3], None)];
        let mut plan = NodePlan::new(&s, s.free_nodes());
        let any = Placement::anywhere();
        assert_eq!(plan.earliest(s.now, 1, Some(50), &any), Some((100, vec![0])));
        assert_eq!(plan.earliest(s.now, 2, Some(50), &any), Some((200, vec![0, 1])));
        assert_eq!(plan.earliest(s.now, 4, Some(50), &any), None);
        // Node 0 booked 100-250: two nodes only from 300 (1 and 2)... and
        // 0 again from 250, so from 300 the lowest are 0 and 1.
        plan.book(100, Some(150), &[0]);
        assert_eq!(plan.earliest(s.now, 2, Some(50), &any), Some((250, vec![0, 1])));
        assert_eq!(plan.earliest(s.now, 3, None, &any), Some((300, vec![0, 1, 2])));
    }

    #[test]
    fn a_confined_job_counts_only_its_own_nodes() {
        // Partitions {0, 1} and {2, 3}: 0 free, 1 back at 500; 2 and 3 free.
        let mut s = cluster(&[true, false, true, true]);
        s.running = vec![running(8, &[1], Some(500))];
        let mut plan = NodePlan::new(&s, s.free_nodes());
        let left = Placement::only([0, 1]);
        assert_eq!(plan.earliest(s.now, 2, Some(100), &left), Some((500, vec![0, 1])));
        assert_eq!(plan.earliest(s.now, 2, Some(100), &Placement::only([2, 3])), Some((100, vec![2, 3])));
        // Booked, the right side is taken until 300: a job needing node 3
        // waits for it.
        plan.book(100, Some(200), &[2, 3]);
        let needs_3 = Placement::anywhere().requiring(vec![3]);
        assert_eq!(plan.earliest(s.now, 1, Some(10), &needs_3), Some((300, vec![3])));
    }

    #[test]
    fn a_gap_too_short_for_the_job_is_skipped() {
        // Node 0 free until a booking at 150-400; node 1 back at 200.
        let mut s = cluster(&[true, false]);
        s.running = vec![running(8, &[1], Some(200))];
        let mut plan = NodePlan::new(&s, s.free_nodes());
        plan.book(150, Some(250), &[0]);
        let any = Placement::anywhere();
        // 100 s from 100 does not fit before 150 on node 0; node 1 from 200 does.
        assert_eq!(plan.earliest(s.now, 1, Some(100), &any), Some((200, vec![1])));
        assert_eq!(plan.earliest(s.now, 1, Some(50), &any), Some((100, vec![0])));
    }

    /// The search before counts and word-by-word scans: whole sets
    /// intersected from each step with room, as Slurm's backfill does.
    fn earliest_by_sets(
        plan: &mut NodePlan,
        from: Time,
        size: usize,
        length: Option<Time>,
        p: &Placement,
    ) -> Option<(Time, Vec<NodeIndex>)> {
        let allowed = plan.allowed(p);
        let mut k = plan.split_at(from.max(plan.steps[0].at));
        while k < plan.steps.len() {
            let start = plan.steps[k].at;
            let end = length.map(|l| start.saturating_add(l));
            let mut usable = plan.steps[k].free.clone();
            if let Some(a) = &allowed {
                usable.and(a);
            }
            for step in &plan.steps[k + 1..] {
                if end.is_some_and(|e| step.at >= e) {
                    break;
                }
                usable.and(&step.free);
            }
            if usable.count() >= size {
                return Some((start, usable.members().take(size).collect()));
            }
            k += 1;
        }
        None
    }

    /// The booking before words of bits: node by node, step by step.
    fn book_node_by_node(plan: &mut NodePlan, start: Time, length: Option<Time>, nodes: &[NodeIndex]) {
        let from = plan.split_at(start);
        let to = match length {
            Some(l) => plan.split_at(start.saturating_add(l)),
            None => plan.steps.len(),
        };
        for step in &mut plan.steps[from..to] {
            for &i in nodes {
                if step.free.has(i) {
                    step.free.clear(i);
                    step.count -= 1;
                }
            }
        }
    }

    #[test]
    fn the_search_finds_what_intersecting_whole_sets_finds() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(35);
        for _ in 0..200 {
            let n = rng.gen_range(1..200);
            let mut s = cluster(&(0..n).map(|_| rng.gen_bool(0.3)).collect::<Vec<_>>());
            s.running = (0..n)
                .filter(|&i| !s.nodes[i].free)
                .map(|i| running(i as u32, &[i], Some(100 + rng.gen_range(1..500))))
                .collect();
            let (mut plan, mut reference) = (NodePlan::new(&s, s.free_nodes()), NodePlan::new(&s, s.free_nodes()));
            for _ in 0..40 {
                let size = rng.gen_range(1..=n);
                let length = rng.gen_bool(0.9).then(|| rng.gen_range(1..400));
                let p = if rng.gen_bool(0.3) {
                    Placement::only((0..n).filter(|_| rng.gen_bool(0.5)))
                } else {
                    Placement::anywhere()
                };
                let found = plan.earliest(s.now, size, length, &p);
                assert_eq!(found, earliest_by_sets(&mut reference, s.now, size, length, &p));
                if let Some((start, nodes)) = found {
                    plan.book(start, length, &nodes);
                    book_node_by_node(&mut reference, start, length, &nodes);
                    assert_eq!(plan.steps.len(), reference.steps.len());
                    for (a, b) in plan.steps.iter().zip(&reference.steps) {
                        assert_eq!((a.at, &a.free, a.count), (b.at, &b.free, b.count));
                    }
                }
            }
        }
    }

    #[test]
    fn a_contiguous_job_waits_for_nodes_in_a_row() {
        // Nodes 0 and 2 free; 1 back at 300, 3 at 200.
        let mut s = cluster(&[true, false, true, false]);
        s.running = vec![running(8, &[1], Some(300)), running(9, &[3], Some(200))];
        let mut plan = NodePlan::new(&s, s.free_nodes());
        let row = Placement::anywhere().contiguous_if(true);
        // By count two are free now; in a row, 2 and 3 from 200.
        assert_eq!(plan.earliest(s.now, 2, Some(50), &Placement::anywhere()), Some((100, vec![0, 2])));
        assert_eq!(plan.earliest(s.now, 2, Some(50), &row), Some((200, vec![2, 3])));
        assert_eq!(plan.earliest(s.now, 3, None, &row), Some((300, vec![0, 1, 2])));
    }
}
