//! Jobs as a scheduling pass sees them: waiting ones and running ones, each
//! with a builder so that a test or a bench states a job in one line:
//! `PendingJob::new(7, 4).time_limit(Some(60)).malleable(spec)`.

use crate::constraint::MalleableSpec;
use crate::ids::{JobId, NodeIndex, Time};
use crate::placement::Placement;
use crate::power::JobPower;
use crate::sharing::CoreSharing;

/// A job that holds nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningJob {
    pub id: JobId,
    pub nodes: Vec<NodeIndex>,
    pub start: Time,
    /// When its time limit runs out: the latest moment its nodes come back.
    /// `None` for an unlimited job, whose nodes never come back as far as
    /// planning can tell.
    pub end_limit: Option<Time>,
    /// `None` for a rigid job (it keeps its nodes until it ends).
    pub malleable: Option<MalleableSpec>,
    /// The ADAPTING state of Chadha et al. 2020: an expand or shrink of this
    /// job is under way, so its node count is about to change (section IV-C).
    pub adapting: bool,
    /// The job's measured MPI-to-compute time ratio (Chadha et al. 2020,
    /// section IV-D), reset after each adaptation; `None` until measured.
    /// Higher means less efficient, so shrunk first and expanded last.
    pub mtct_ratio: Option<f64>,
    /// Its draw per node, for the power-aware strategy; `None` when unknown
    /// (the plugin fills in `DefaultJobWatts=`).
    pub power: Option<JobPower>,
    /// Where it may grow (`allowed`; `required` means nothing once it runs).
    pub placement: Placement,
    /// The node count it was submitted with (`--nodes`), the size its owner
    /// planned it at within [min, max]; `None` when not known.
    pub asked: Option<u32>,
    /// Its cores and the jobs it shares nodes with (SD-Policy).
    pub sharing: CoreSharing,
    /// An elastic job whose application can resize but that may not be
    /// resized this pass, for a moment (its accounting record is still
    /// being written, or slurmdbd's queue is not yet drained): `malleable`
    /// is `None` now, and may be set at the next pass.
    pub resize_held: bool,
}

impl RunningJob {
    /// A rigid job on these nodes, started at 0, unlimited, not measured.
    pub fn new(id: u32, nodes: impl IntoIterator<Item = NodeIndex>) -> RunningJob {
        RunningJob {
            id: JobId(id),
            nodes: nodes.into_iter().collect(),
            start: 0,
            end_limit: None,
            malleable: None,
            adapting: false,
            mtct_ratio: None,
            power: None,
            placement: Placement::anywhere(),
            asked: None,
            sharing: CoreSharing::default(),
            resize_held: false,
        }
    }

    pub fn start(mut self, start: Time) -> RunningJob {
        self.start = start;
        self
    }

    pub fn end_limit(mut self, end_limit: Option<Time>) -> RunningJob {
        self.end_limit = end_limit;
        self
    }

    pub fn malleable(mut self, spec: impl Into<Option<MalleableSpec>>) -> RunningJob {
        self.malleable = spec.into();
        self
    }

    pub fn adapting(mut self, adapting: bool) -> RunningJob {
        self.adapting = adapting;
        self
    }

    pub fn mtct_ratio(mut self, ratio: Option<f64>) -> RunningJob {
        self.mtct_ratio = ratio;
        self
    }

    pub fn power(mut self, power: impl Into<Option<JobPower>>) -> RunningJob {
        self.power = power.into();
        self
    }

    pub fn placement(mut self, placement: Placement) -> RunningJob {
        self.placement = placement;
        self
    }

    pub fn sharing(mut self, sharing: CoreSharing) -> RunningJob {
        self.sharing = sharing;
        self
    }

    /// A running malleable job that may be resized now: not mid-adaptation,
    /// and not sharing cores.
    pub fn resizable(&self) -> Option<&MalleableSpec> {
        // A job sharing cores on its nodes keeps its nodes until the sharing
        // ends: a node resize would take cores from under the other job.
        self.malleable.as_ref().filter(|_| !self.adapting && self.sharing.alone())
    }
}

/// A pending job's tier as Slurm's queue sorts it (its sort_job_queue2):
/// jobs in a reservation first, then by their partition's PriorityTier.
pub fn tier_of(in_reservation: bool, partition_tier: u16) -> u32 {
    (u32::from(in_reservation) << 16) | u32::from(partition_tier)
}

/// A job waiting in the queue that may be started now (its dependencies are
/// met and it is not held: the plugin filters the others out).
#[derive(Clone, Debug, PartialEq)]
pub struct PendingJob {
    pub id: JobId,
    /// Higher runs first.
    pub priority: u32,
    /// What Slurm ranks above priority, higher first: a job in a
    /// reservation before one outside, then its partition's PriorityTier
    /// (`tier_of`). 0 for most sites, which use neither.
    pub tier: u32,
    pub submit: Time,
    /// Nodes it asks for (a rigid job gets exactly this many).
    pub nodes: u32,
    /// Its time limit in seconds; `None` if unlimited.
    pub time_limit: Option<Time>,
    /// The shortest limit it accepts (`--time-min`), in seconds: a
    /// backfill may start it under a limit down to this.
    pub time_min: Option<Time>,
    /// `None` for a rigid job. A malleable job starts on `nodes` (its
    /// `--nodes`) and may later be resized within the spec.
    pub malleable: Option<MalleableSpec>,
    /// Its users' per-node power estimates (`--min-power` / `--max-power`).
    pub power: Option<JobPower>,
    /// The nodes it may and must be started on.
    pub placement: Placement,
    /// Its owner lets it start on cores taken from running jobs that opted
    /// in too (`--malleable-cores`, SD-Policy).
    pub share_cores: bool,
    /// `None`: it asks for whole nodes (`nodes` of them). Else the cores
    /// and GPUs it asks for, which a strategy that places cores may spread
    /// over part of nodes (`Decision::Place`); `nodes` is then the fewest
    /// whole nodes that hold them, which is what a strategy that knows only
    /// whole nodes gives it.
    pub cores: Option<CoreRequest>,
    /// The running jobs slurmctld would let it preempt (its PreemptType:
    /// QOS or partition PriorityTier), in the order Slurm preempts them;
    /// empty where preemption is off.
    pub preempts: Vec<JobId>,
}

/// A request for cores rather than nodes (IPSCHED's r_j, g_j, Nmin_j, Nmax_j).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreRequest {
    /// Cores in all (r_j).
    pub cores: u32,
    /// GPUs on every node it uses (g_j).
    pub gpus_per_node: u32,
    /// The fewest and most nodes its cores may be spread over.
    pub min_nodes: u32,
    pub max_nodes: u32,
}

impl CoreRequest {
    /// Whether `layout` (cores on each node used) gives it what it asks:
    /// all its cores, on a count of nodes it allows, at least one core each.
    pub fn fits(&self, layout: &[(crate::NodeIndex, u32)]) -> Result<(), String> {
        let n = layout.len() as u32;
        let total: u64 = layout.iter().map(|&(_, c)| u64::from(c)).sum();
        if layout.iter().any(|&(_, c)| c == 0) {
            return Err("it would be placed on a node with no core".into());
        }
        if total != u64::from(self.cores) {
            return Err(format!("it would get {total} cores: it asks for {}", self.cores));
        }
        if n < self.min_nodes || n > self.max_nodes {
            return Err(format!(
                "it would be spread over {n} nodes: it allows {} to {}",
                self.min_nodes, self.max_nodes
            ));
        }
        Ok(())
    }
}

impl PendingJob {
    /// A rigid job asking `nodes` nodes, priority 0, submitted at 0, unlimited.
    pub fn new(id: u32, nodes: u32) -> PendingJob {
        PendingJob {
            id: JobId(id),
            priority: 0,
            tier: 0,
            submit: 0,
            nodes,
            time_limit: None,
            time_min: None,
            malleable: None,
            power: None,
            placement: Placement::anywhere(),
            share_cores: false,
            cores: None,
            preempts: Vec::new(),
        }
    }

    pub fn priority(mut self, priority: u32) -> PendingJob {
        self.priority = priority;
        self
    }

    pub fn tier(mut self, tier: u32) -> PendingJob {
        self.tier = tier;
        self
    }

    pub fn submit(mut self, submit: Time) -> PendingJob {
        self.submit = submit;
        self
    }

    pub fn time_limit(mut self, seconds: Option<Time>) -> PendingJob {
        self.time_limit = seconds;
        self
    }

    pub fn time_min(mut self, seconds: Option<Time>) -> PendingJob {
        self.time_min = seconds;
        self
    }

    pub fn malleable(mut self, spec: impl Into<Option<MalleableSpec>>) -> PendingJob {
        self.malleable = spec.into();
        self
    }

    pub fn power(mut self, power: impl Into<Option<JobPower>>) -> PendingJob {
        self.power = power.into();
        self
    }

    pub fn placement(mut self, placement: Placement) -> PendingJob {
        self.placement = placement;
        self
    }

    pub fn share_cores(mut self, share: bool) -> PendingJob {
        self.share_cores = share;
        self
    }

    /// It asks for cores (and GPUs per node) rather than whole nodes; its
    /// `nodes` stay what a whole-node strategy gives it.
    pub fn asking_cores(mut self, request: CoreRequest) -> PendingJob {
        self.cores = Some(request);
        self
    }

    /// It may preempt these running jobs, in this order.
    pub fn preempting(mut self, victims: impl IntoIterator<Item = u32>) -> PendingJob {
        self.preempts = victims.into_iter().map(JobId).collect();
        self
    }

    /// Which of two waiting jobs the queue serves first
    /// ([`Snapshot::queue_order`](crate::Snapshot::queue_order)).
    pub fn queue_cmp(a: &PendingJob, b: &PendingJob) -> std::cmp::Ordering {
        b.tier.cmp(&a.tier).then(b.priority.cmp(&a.priority)).then(a.submit.cmp(&b.submit)).then(a.id.cmp(&b.id))
    }

    /// Nodes it starts on when rigid: what it asks for, but at least one
    /// (a job asking for 0 nodes still needs somewhere to run).
    pub fn size(&self) -> usize {
        usize::try_from(self.nodes).unwrap_or(usize::MAX).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NodeConstraint;

    #[test]
    fn builders_set_what_they_name_and_leave_the_rest() {
        let spec = MalleableSpec { min: 1, max: 4, constraint: NodeConstraint::Even };
        let p = PendingJob::new(7, 3).priority(5).submit(10).time_limit(Some(60)).malleable(spec);
        assert_eq!(
            p,
            PendingJob {
                id: JobId(7),
                priority: 5,
                tier: 0,
                submit: 10,
                nodes: 3,
                time_limit: Some(60),
                time_min: None,
                malleable: Some(spec),
                power: None,
                placement: Placement::anywhere(),
                share_cores: false,
                cores: None,
                preempts: Vec::new(),
            }
        );
        assert_eq!(PendingJob::new(1, 1).preempting([4, 2]).preempts, [JobId(4), JobId(2)]);
        let r = RunningJob::new(9, [2, 3]).start(4).end_limit(Some(100)).malleable(spec).adapting(true);
        assert_eq!((r.nodes.clone(), r.start, r.end_limit, r.adapting), (vec![2, 3], 4, Some(100), true));
        assert_eq!(r.resizable(), None, "an adapting job is not resizable");
        assert_eq!(r.adapting(false).resizable(), Some(&spec));
        assert_eq!(RunningJob::new(1, [0]).resizable(), None, "a rigid job is not resizable");
    }

    #[test]
    fn a_core_request_takes_all_its_cores_on_a_count_of_nodes_it_allows() {
        let r = CoreRequest { cores: 10, gpus_per_node: 2, min_nodes: 2, max_nodes: 3 };
        assert_eq!(r.fits(&[(0, 8), (1, 2)]), Ok(()));
        assert_eq!(r.fits(&[(0, 4), (1, 3), (2, 3)]), Ok(()));
        assert_eq!(r.fits(&[(0, 8), (1, 1)]), Err("it would get 9 cores: it asks for 10".into()));
        assert_eq!(r.fits(&[(0, 10)]), Err("it would be spread over 1 nodes: it allows 2 to 3".into()));
        assert_eq!(r.fits(&[(0, 7), (1, 3), (2, 0)]), Err("it would be placed on a node with no core".into()));
        assert!(r.fits(&[(0, 1), (1, 1), (2, 1), (3, 7)]).unwrap_err().contains("over 4 nodes"));
    }

    #[test]
    fn a_job_asking_no_nodes_gets_one() {
        assert_eq!(PendingJob::new(1, 0).size(), 1);
        assert_eq!(PendingJob::new(1, 5).size(), 5);
    }
}
