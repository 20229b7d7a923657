//! Resizing running malleable jobs, as Chadha et al. 2020's strategies do it
//! (section V-A): in which order jobs are shrunk and expanded (by MTCT
//! ratio, or by start time for FPSMA), which jobs may be resized now, where
//! a shrink for the head job goes, and how idle nodes are shared out.

use std::cmp::Ordering;

use malleable_model::{Decision, MalleableSpec, Placement, RunningJob, Snapshot};

use crate::blocks::pool::FreePool;

/// The order in which running malleable jobs are considered for adaptation.
/// Shrinks take the largest key first, expands the smallest first.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AdaptOrder {
    /// Chadha et al. 2020: the least efficient job (most MPI time per compute time)
    /// shrinks first and expands last. Jobs not measured yet come last both ways.
    /// Equal ratios (the paper is silent on ties) go by start time: the later
    /// started job expands first and the earlier started one shrinks first,
    /// see [`AdaptOrder::tie`].
    MtctRatio,
    /// FPSMA: the latest started shrinks first, the earliest started expands first.
    StartTime,
}

impl AdaptOrder {
    fn key(self, job: &RunningJob) -> Option<f64> {
        match self {
            AdaptOrder::MtctRatio => job.mtct_ratio.filter(|r| !r.is_nan()),
            AdaptOrder::StartTime => Some(job.start as f64),
        }
    }

    /// `jobs` sorted for shrinking: decreasing key, unmeasured last, then
    /// [`AdaptOrder::tie`], then by id.
    pub fn shrink_candidates<'a>(self, jobs: &[&'a RunningJob]) -> Vec<&'a RunningJob> {
        self.sorted(jobs, false, |a, b| b.total_cmp(&a))
    }

    /// `jobs` sorted for expanding: increasing key, unmeasured last, then
    /// [`AdaptOrder::tie`], then by id.
    pub fn expand_candidates<'a>(self, jobs: &[&'a RunningJob]) -> Vec<&'a RunningJob> {
        self.sorted(jobs, true, |a, b| a.total_cmp(&b))
    }

    /// Order between two jobs whose keys are equal. Chadha et al. 2020 say nothing
    /// about ties; for the MTCT ratio the choice is ours. Measured ratios of
    /// real jobs rarely tie, but the simulator's ratio depends on the node
    /// count alone, so there every pair of equally sized jobs ties and this
    /// rule picks which of them gets or gives the next node. We lean on the
    /// paper's stated aim of "some fairness" in expand/shrink decisions
    /// (section V-A): among equally efficient jobs, the one that has run the
    /// least (started last) expands first, and the one that has run the
    /// longest (started first) shrinks first. Measured, seeds 1-5, ESP, all
    /// malleable: makespan / response / wait vs EASY 0.837 / 0.755 / 0.555
    /// with ties by id, 0.834 / 0.748 / 0.547 with this rule; seeds 6-25:
    /// 0.830 / 0.786 / 0.599 -> 0.826 / 0.773 / 0.584. FPSMA's key is the start
    /// time itself, so it has no such rule (ties by id).
    fn tie(self, a: &RunningJob, b: &RunningJob, expanding: bool) -> Ordering {
        match self {
            AdaptOrder::MtctRatio if expanding => b.start.cmp(&a.start),
            AdaptOrder::MtctRatio => a.start.cmp(&b.start),
            AdaptOrder::StartTime => Ordering::Equal,
        }
    }

    fn sorted<'a>(
        self,
        jobs: &[&'a RunningJob],
        expanding: bool,
        by: impl Fn(f64, f64) -> Ordering,
    ) -> Vec<&'a RunningJob> {
        let mut v = jobs.to_vec();
        v.sort_by(|a, b| {
            let key = match (self.key(a), self.key(b)) {
                (Some(x), Some(y)) => by(x, y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            };
            key.then_with(|| self.tie(a, b, expanding)).then(a.id.cmp(&b.id))
        });
        v
    }
}

/// Whether any running malleable job is ADAPTING (line 9).
pub fn any_adapting(s: &Snapshot) -> bool {
    s.running.iter().any(|j| j.adapting)
}

/// Running malleable jobs that may be resized now: not adapting, and holding
/// each of their nodes once (a snapshot where that fails is left alone rather
/// than resized on a guess).
pub fn resizable_jobs(s: &Snapshot) -> Vec<&RunningJob> {
    s.running
        .iter()
        .filter(|j| j.resizable().is_some() && !j.nodes.is_empty())
        .filter(|j| {
            let mut seen = std::collections::HashSet::new();
            j.nodes.iter().all(|&i| i < s.nodes.len() && !s.nodes[i].free && seen.insert(i))
        })
        .collect()
}

/// Plan shrinks, in the given order, that together free `needed` nodes the
/// head job may use (`head`); each job goes to its next lower valid count
/// (`MalleableSpec::shrink_target`). A job whose shrink would free none the
/// head may use is left alone. `None` if all of them together cannot free
/// enough: then nobody shrinks. A job keeps its first node, where its
/// launcher runs (section IV-C).
pub fn shrink_for_head(shrink_candidates: &[&RunningJob], head: &Placement, needed: usize) -> Option<Vec<Decision>> {
    let mut needed = needed;
    let mut plan = Vec::new();
    for job in shrink_candidates {
        if needed == 0 {
            break;
        }
        let Some(spec) = job.resizable() else {
            continue;
        };
        let current = job.nodes.len() as u32;
        let ask = u32::try_from(needed).unwrap_or(u32::MAX);
        if let Some(target) = spec.shrink_target(current, ask) {
            let remove_nodes = job.nodes[target as usize..].to_vec();
            let freed = remove_nodes.iter().filter(|&&i| head.allows(i)).count();
            if freed > 0 {
                plan.push(Decision::Shrink { job: job.id, remove_nodes });
                needed = needed.saturating_sub(freed);
            }
        }
    }
    (needed == 0).then_some(plan)
}

/// Expand jobs onto the idle nodes left in `pool`, round robin in the given
/// order: each job in turn to its next valid count
/// (`MalleableSpec::next_valid_above`), never above `cap(job)`, until the idle
/// nodes run out or no job can take another step. One decision per job.
pub fn expand_into_idle(
    expand_candidates: &[&RunningJob],
    pool: &mut FreePool,
    cap: impl Fn(&RunningJob) -> u32,
) -> Vec<Decision> {
    // Round-robin: each job in turn gets its next valid count up, until the
    // idle nodes run out or no job can take another step. A job allotted an
    // expand goes behind those not yet allotted one (its metrics are reset by
    // the adaptation, and unmeasured jobs come last). Handing a round's steps
    // to the smallest job first instead (water-filling by node count) gave
    // the same 5-seed means, so the simpler round robin stays.
    let jobs: Vec<(&RunningJob, &MalleableSpec, u32, u32)> = expand_candidates
        .iter()
        .filter_map(|job| {
            let spec = job.resizable()?;
            let current = job.nodes.len() as u32;
            // Never planned past the idle nodes it may grow onto.
            let room = u32::try_from(pool.available(&job.placement)).unwrap_or(u32::MAX);
            Some((*job, spec, current, cap(job).min(current.saturating_add(room))))
        })
        .collect();
    let mut target: Vec<u32> = jobs.iter().map(|j| j.2).collect();
    let mut idle = u32::try_from(pool.len()).unwrap_or(u32::MAX);
    loop {
        let mut stepped = false;
        for (k, &(_, spec, _, cap)) in jobs.iter().enumerate() {
            let room = cap.saturating_sub(target[k]).min(idle);
            if let Some(next) = spec.next_valid_above(target[k], room) {
                idle -= next - target[k];
                target[k] = next;
                stepped = true;
            }
        }
        if !stepped || idle == 0 {
            break;
        }
    }
    let mut decisions = Vec::new();
    for (k, &(job, _, current, _)) in jobs.iter().enumerate() {
        if target[k] > current {
            if let Some(add_nodes) = pool.take(&job.placement, (target[k] - current) as usize) {
                decisions.push(Decision::Expand { job: job.id, add_nodes });
            }
        }
    }
    decisions
}
