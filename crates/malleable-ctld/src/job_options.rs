//! What each job's SPANK environment says (its malleable options, its power
//! estimates, the node count it was submitted with), read once per job and
//! kept across passes: the environment is set at submit and does not change,
//! and reading it is a walk of strings per job, most of a pass's reading
//! with ten thousand waiting jobs.

use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::time::{Duration, Instant};

use malleable_model::submit_options::{Malleability, SubmitOptions};
use slurm::ctld::JobView;

/// One job's options, as its environment says them.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOptions {
    /// Its elastic spec, power estimates and core-sharing opt-in, or why
    /// they do not read.
    pub options: Result<Malleability, String>,
    /// The node count job_submit/malleable recorded it was submitted with.
    pub submitted: Option<u32>,
}

impl JobOptions {
    fn read(env: &[String]) -> JobOptions {
        JobOptions { options: options_of(env), submitted: submitted_nodes(env) }
    }
}

/// The options of the jobs seen lately, by job id.
#[derive(Default)]
pub struct OptionsCache {
    jobs: FxHashMap<u32, Kept>,
    walk: u64,
    /// When the jobs first seen lately were, as one (see [`COHORT`]).
    cohort: Option<Instant>,
    /// How many jobs had ended (completed, cancelled or failed) at the
    /// last count, and when a count first saw more than the one before.
    ends: (u64, Option<Instant>),
}

/// Jobs first seen within this of the first of them count as seen with it:
/// jobs submitted together (an sbatch loop, a workflow's burst) then come
/// of age together under `BatchStartDelay=` and are decided in one pass, as
/// they were without it (IPSCHED places such a set by one program; seen: two
/// jobs submitted at once, first seen a pass apart, were placed one after
/// the other, the second on the first's node instead of a free one).
const COHORT: Duration = Duration::from_millis(200);

/// One job's options, with where its environment was when they were read
/// (a rewritten environment, another array or another length, is read
/// again), the last walk that saw the job and when the first did.
struct Kept {
    options: JobOptions,
    identity: (usize, u32),
    seen: u64,
    seen_first: Instant,
}

impl OptionsCache {
    /// Start a walk of the job list: what no job of it asks for is then forgotten by [`Self::end_walk`].
    pub fn begin_walk(&mut self) {
        self.walk += 1;
    }

    /// `job`'s options, read from its environment if not kept.
    pub fn of(&mut self, job: &JobView) -> &JobOptions {
        let identity = job.spank_env_identity();
        let kept = match self.jobs.entry(job.id()) {
            Entry::Occupied(e) if e.get().identity == identity => e.into_mut(),
            entry => {
                let options = JobOptions::read(&job.spank_job_env_with(SubmitOptions::ENV_PREFIX));
                let seen_first = match &entry {
                    Entry::Occupied(e) => e.get().seen_first,
                    Entry::Vacant(_) => {
                        let now = Instant::now();
                        match self.cohort {
                            Some(first) if now.duration_since(first) < COHORT => first,
                            _ => *self.cohort.insert(now),
                        }
                    }
                };
                entry.insert_entry(Kept { options, identity, seen: self.walk, seen_first }).into_mut()
            }
        };
        kept.seen = self.walk;
        &kept.options
    }

    /// When a walk first saw job `id` (its options were read then), or the
    /// first of the jobs first seen with it (see [`COHORT`]).
    pub fn first_seen(&self, id: u32) -> Option<Instant> {
        self.jobs.get(&id).map(|k| k.seen_first)
    }

    /// slurmctld's count of the jobs that ended so far, read before a walk:
    /// more than at the last count means a job ended since.
    pub fn count_ends(&mut self, ended: u64) {
        if ended > self.ends.0 {
            self.ends.1 = Some(Instant::now());
        }
        // (`sdiag --reset` takes the count back to 0: nothing ended then.)
        self.ends.0 = ended;
    }

    /// Until when batch job `id` is held back under `BatchStartDelay=`
    /// `delay`: `delay` after it was first seen, unless a job ended after
    /// that, which lets it go at once. Stock slurmctld starts a batch job at
    /// its scheduler's next run: when a job ends (its epilog completes),
    /// or else 0 to 3 s after the submit. A test that submits a batch job,
    /// runs a short srun job and removes the batch job's account once the
    /// srun job is over (Slurm's test21.23, 225 ms after the sbatch) finds
    /// it ended under stock; held the whole delay it would still be waiting.
    pub fn held_back_until(&self, id: u32, delay: Duration) -> Option<Instant> {
        let seen = self.first_seen(id)?;
        match self.ends.1 {
            Some(ended) if ended > seen => None,
            _ => Some(seen + delay),
        }
    }

    /// Forget an ended job (read between whole walks).
    pub fn forget(&mut self, id: u32) {
        self.jobs.remove(&id);
    }

    /// Forget the jobs this walk did not see (ended and purged).
    pub fn end_walk(&mut self) {
        let walk = self.walk;
        self.jobs.retain(|_, kept| kept.seen == walk);
    }
}

/// A job's options from its SPANK environment: its elastic spec, its
/// power estimates and whether it shares cores, or why they do not read.
fn options_of(env: &[String]) -> Result<Malleability, String> {
    SubmitOptions::from_env(env.iter().map(String::as_str))?.resolve(None)
}

/// The node count job_submit/malleable recorded the job was submitted
/// with; `None` for a job submitted before it did, or a value it did not write.
fn submitted_nodes(env: &[String]) -> Option<u32> {
    env.iter()
        .filter_map(|e| e.split_once('='))
        .find(|(k, _)| *k == SubmitOptions::SUBMITTED_NODES_ENV)
        .and_then(|(_, v)| v.parse().ok())
        .filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_model::{MalleableSpec, NodeConstraint};

    fn env(pairs: &[&str]) -> Vec<String> {
        pairs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_jobs_options_give_its_spec_and_power() {
        assert_eq!(options_of(&env(&["OTHER=1"])), Ok(Malleability { spec: None, power: None, share_cores: false }));
        let Malleability { spec, power, share_cores } = options_of(&env(&[
            "MALLEABLE_MIN_NODES=2",
            "MALLEABLE_MAX_NODES=6",
            "MALLEABLE_NODE_CONSTRAINTS=even",
            "MALLEABLE_MIN_POWER=150",
            "MALLEABLE_MAX_POWER=210",
            "MALLEABLE_CORES=yes",
        ]))
        .unwrap();
        assert!(share_cores);
        assert_eq!(spec, Some(MalleableSpec { min: 2, max: 6, constraint: NodeConstraint::Even }));
        assert_eq!(power.map(|p| (p.low(), p.high())), Some((150.0, 210.0)));
        assert!(options_of(&env(&["MALLEABLE_MIN_NODES=3"])).unwrap_err().contains("given without"));
    }

    #[test]
    fn a_batch_job_is_held_back_until_the_delay_is_over_or_a_job_ends_after_it_was_seen() {
        let delay = Duration::from_secs(60);
        let mut cache = OptionsCache::default();
        cache.count_ends(3);
        // A job that ended before a job was first seen does not let it go.
        let seen = Instant::now();
        cache.jobs.insert(7, Kept { options: JobOptions::read(&[]), identity: (0, 0), seen: 0, seen_first: seen });
        assert_eq!(cache.held_back_until(7, delay), Some(seen + delay));
        assert_eq!(cache.held_back_until(8, delay), None, "a job never seen");
        cache.count_ends(3);
        assert_eq!(cache.held_back_until(7, delay), Some(seen + delay), "no job ended since");
        // After `sdiag --reset` the count starts again: nothing ended.
        cache.count_ends(0);
        assert_eq!(cache.held_back_until(7, delay), Some(seen + delay));
        cache.count_ends(1);
        assert_eq!(cache.held_back_until(7, delay), None, "a job ended after it was seen");
    }

    #[test]
    fn the_count_a_job_was_submitted_with_is_read_back_and_nonsense_is_not() {
        assert_eq!(submitted_nodes(&env(&["MALLEABLE_MIN_NODES=2", "MALLEABLE_SUBMITTED_NODES=5"])), Some(5));
        assert_eq!(submitted_nodes(&env(&["MALLEABLE_MIN_NODES=2"])), None);
        assert_eq!(submitted_nodes(&env(&["MALLEABLE_SUBMITTED_NODES=0"])), None);
        assert_eq!(submitted_nodes(&env(&["MALLEABLE_SUBMITTED_NODES=five"])), None);
    }
}
