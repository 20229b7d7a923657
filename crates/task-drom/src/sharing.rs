//! SD-Policy's core sharing on one node, decided without touching the
//! node: who opted in, how the node's CPUs split between the job started on
//! its mates' cores and the mate, who a job's peers are, which of them run
//! here, whose processes to confine, and when a step's end gives the peers
//! their cores back (Listing 3 of D'Amico et al. 2019).

use malleable_model::{JobId, SharedCores};
use slurm::stepd::{CpuSet, StepId, StepState};

/// Whether a job other than `job` has a step on this node: only then can
/// `job` share the node's cores with one, and only then is slurmctld asked
/// for its record (an RPC per step launch and end of every job would load
/// it for nothing: jobs hold whole nodes unless they share). The gate is the
/// node's own list of steps, which no job's owner writes.
pub fn another_job_here(job: u32, steps: &[StepId]) -> bool {
    steps.iter().any(|s| s.job != job)
}

/// How many of a node's `n` CPUs the started job gets while its mate runs:
/// its `cores` of the node's `of`, scaled to the CPUs this node has, to the
/// nearest (halves up), and at least one for each job. `None` when the
/// node has fewer than two CPUs: nobody can be confined then.
pub fn started_job_cpus(n: usize, cores: u32, of: u32) -> Option<usize> {
    if n < 2 || of == 0 {
        return None;
    }
    let (n64, cores, of) = (n as u64, u64::from(cores), u64::from(of));
    let nearest = (2 * n64 * cores + of) / (2 * of);
    Some((nearest as usize).clamp(1, n - 1))
}

/// A node's CPUs, split between the two jobs that share it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// The started job's: the last CPUs of the node.
    pub started: CpuSet,
    /// The mate's: the first ones, where it ran alone before.
    pub mate: CpuSet,
}

/// Split `node`'s CPUs as the record says (`None` for a one-CPU node).
pub fn split(node: &CpuSet, cores: u32, of: u32) -> Option<Split> {
    let b = started_job_cpus(node.len(), cores, of)?;
    let (mate, started) = node.ids().split_at(node.len() - b);
    Some(Split { started: CpuSet::from_ids(started.iter().copied()), mate: CpuSet::from_ids(mate.iter().copied()) })
}

/// [`split`], but the started job keeps `given` when it is a part of the
/// node of the size the record gives it: the cores Slurm allocated it here
/// (its cpuset under task/cgroup, where task/affinity binds its tasks,
/// which a mask outside it would make fail). The mate gets the rest.
pub fn split_as(node: &CpuSet, cores: u32, of: u32, given: Option<&CpuSet>) -> Option<Split> {
    let default = split(node, cores, of)?;
    match given {
        Some(g) if g.len() == default.started.len() && g.ids().iter().all(|c| node.ids().contains(c)) => {
            let mate = CpuSet::from_ids(node.ids().iter().copied().filter(|c| !g.ids().contains(c)));
            Some(Split { started: g.clone(), mate })
        }
        _ => Some(default),
    }
}

/// A job's place in a sharing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// The job started on its mates' cores.
    Started,
    /// A running job whose cores it took.
    Mate,
}

/// Job `j`'s role in `record`, `None` when the record does not name it.
pub fn role_of(record: &SharedCores, j: JobId) -> Option<Role> {
    if record.job == j {
        Some(Role::Started)
    } else if record.mates.contains(&j) {
        Some(Role::Mate)
    } else {
        None
    }
}

/// The jobs `j` shares cores with: the started job's are its mates (one on
/// each of its nodes, so a mate on several is listed once here), a mate's
/// is the started job.
pub fn peers_of(record: &SharedCores, role: Role) -> Vec<JobId> {
    match role {
        Role::Started => {
            let mut peers: Vec<JobId> = Vec::new();
            for &m in &record.mates {
                if !peers.contains(&m) {
                    peers.push(m);
                }
            }
            peers
        }
        Role::Mate => vec![record.job],
    }
}

impl Split {
    /// The CPUs of the job in `role`.
    pub fn part(&self, role: Role) -> &CpuSet {
        match role {
            Role::Started => &self.started,
            Role::Mate => &self.mate,
        }
    }

    /// The CPUs of its peers.
    pub fn peers_part(&self, role: Role) -> &CpuSet {
        match role {
            Role::Started => &self.mate,
            Role::Mate => &self.started,
        }
    }
}

/// Whether `job` is in the sharing `record` says (the started job or a
/// mate): the steps whose state the node is asked for.
pub fn in_record(record: &SharedCores, job: u32) -> bool {
    record.job.0 == job || record.mates.iter().any(|m| m.0 == job)
}

/// The steps that run a job's tasks here or are about to: neither the
/// extern step (which holds none of a job's tasks, and lingers while a job
/// that ended is cleaned up) nor a step whose tasks have ended (its stepd
/// may still answer while it finishes).
pub fn live(states: &[(StepId, StepState)]) -> Vec<StepId> {
    states
        .iter()
        .filter(|(s, st)| !s.is_extern() && matches!(st, StepState::Starting | StepState::Running))
        .map(|(s, _)| *s)
        .collect()
}

/// Which of `jobs` run on this node: those with a live step here.
pub fn running_here(jobs: &[JobId], live: &[StepId]) -> Vec<JobId> {
    jobs.iter().copied().filter(|j| live.iter().any(|s| s.job == j.0 && !s.is_extern())).collect()
}

/// The steps of `jobs` whose processes to set: every one whose tasks run
/// (the extern step too: a process adopted into it is the job's as much
/// as its tasks are). A starting step is left alone: its tasks are not
/// forked yet (its own stepd sets them), and its processes cannot be
/// listed safely before it runs.
pub fn to_set(jobs: &[JobId], states: &[(StepId, StepState)]) -> Vec<StepId> {
    states
        .iter()
        .filter(|(s, st)| *st == StepState::Running && jobs.iter().any(|j| j.0 == s.job))
        .map(|(s, _)| *s)
        .collect()
}

/// What a step's launch does on this node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launch {
    /// The node has one CPU: nobody can be confined.
    OneCpu,
    /// The record does not name the job: a broken record, nothing is done.
    NotInRecord,
    /// No peer runs here (the mate ended first, or the job it lent its
    /// cores to has ended): the step keeps all the node's CPUs.
    Alone,
    /// The step's tasks get `own`; every step here of `peers` gets
    /// `peers_cpus`.
    Confine { own: CpuSet, peers: Vec<JobId>, peers_cpus: CpuSet },
}

/// The launch of a step of job `j`, which `record` says shares cores, on a
/// node with CPUs `node` where the steps `live` run (see [`live`]).
pub fn at_launch(record: &SharedCores, j: JobId, node: &CpuSet, live: &[StepId], given: Option<&CpuSet>) -> Launch {
    let Some(role) = role_of(record, j) else {
        return Launch::NotInRecord;
    };
    let Some(split) = split_as(node, record.cores, record.of, given) else {
        return Launch::OneCpu;
    };
    let peers = running_here(&peers_of(record, role), live);
    if peers.is_empty() {
        return Launch::Alone;
    }
    Launch::Confine { own: split.part(role).clone(), peers, peers_cpus: split.peers_part(role).clone() }
}

/// When step `this` of a job that `record` says shares cores ends, with
/// the steps `live` still running here: the peers running here that get
/// all the node's CPUs back. None while the job has another live step
/// here: its tasks still run on its part. (Of two steps of a job that end
/// together, the later one's `post_step` finds the other ending, so the
/// cores go back once the job's last task here has ended.)
pub fn at_step_end(record: &SharedCores, this: StepId, live: &[StepId]) -> Vec<JobId> {
    let still_here = live.iter().any(|s| s.job == this.job && *s != this && !s.is_extern());
    let Some(role) = role_of(record, JobId(this.job)) else {
        return Vec::new();
    };
    if still_here {
        return Vec::new();
    }
    running_here(&peers_of(record, role), live)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(n: usize) -> CpuSet {
        CpuSet::from_ids(0..n)
    }

    /// Job 17 started on the cores of 15 (on one node) and 16 (another).
    fn record(cores: u32, of: u32) -> SharedCores {
        SharedCores { job: JobId(17), cores, of, mates: vec![JobId(15), JobId(16)], increase: 240 }
    }

    #[test]
    fn only_another_jobs_step_here_opens_the_gate() {
        assert!(!another_job_here(7, &[]), "nobody here");
        assert!(!another_job_here(7, &[id(7, 0), id(7, 1)]), "only this job's steps");
        assert!(another_job_here(7, &[id(7, 0), id(9, 0)]));
    }

    #[test]
    fn one_cpu_is_shared_by_nobody() {
        assert_eq!(started_job_cpus(1, 1, 2), None);
        assert_eq!(split(&node(1), 1, 2), None);
        assert_eq!(started_job_cpus(0, 1, 2), None);
    }

    #[test]
    fn two_cpus_give_one_to_each_whatever_the_record_says() {
        for (cores, of) in [(1, 2), (1, 48), (47, 48), (3, 4)] {
            let s = split(&node(2), cores, of).unwrap();
            assert_eq!((s.mate.ids(), s.started.ids()), (&[0][..], &[1][..]), "cores={cores} of={of}");
        }
    }

    #[test]
    fn three_cpus_round_half_up_for_the_started_job() {
        // 3 * 1/2 = 1.5: two for the started job, the last two.
        let s = split(&node(3), 1, 2).unwrap();
        assert_eq!((s.mate.ids(), s.started.ids()), (&[0][..], &[1, 2][..]));
        // 3 * 1/3 = 1.
        let s = split(&node(3), 1, 3).unwrap();
        assert_eq!((s.mate.ids(), s.started.ids()), (&[0, 1][..], &[2][..]));
    }

    #[test]
    fn eight_cpus_scale_the_record_to_the_node() {
        assert_eq!(started_job_cpus(8, 3, 4), Some(6));
        assert_eq!(started_job_cpus(8, 1, 4), Some(2));
        // 8 * 5/16 = 2.5 -> 3.
        assert_eq!(started_job_cpus(8, 5, 16), Some(3));
        // 8 * 7/16 = 3.5 -> 4; 8 * 3/16 = 1.5 -> 2; 8 * 1/16 = 0.5 -> 1.
        assert_eq!(started_job_cpus(8, 7, 16), Some(4));
        assert_eq!(started_job_cpus(8, 3, 16), Some(2));
        assert_eq!(started_job_cpus(8, 1, 16), Some(1));
        // Less than half a CPU still gets one; the mate keeps one at least.
        assert_eq!(started_job_cpus(8, 1, 48), Some(1));
        assert_eq!(started_job_cpus(8, 47, 48), Some(7));
    }

    #[test]
    fn forty_eight_cpus_and_a_record_in_hyperthreads() {
        assert_eq!(started_job_cpus(48, 24, 48), Some(24));
        assert_eq!(started_job_cpus(48, 47, 48), Some(47));
        assert_eq!(started_job_cpus(48, 1, 48), Some(1));
        // Slurm counting 96 CPUs (two threads a core) on a node the stepd
        // sees 48 of: the shares scale, and 95 of 96 still leaves the mate one.
        assert_eq!(started_job_cpus(48, 32, 96), Some(16));
        assert_eq!(started_job_cpus(48, 95, 96), Some(47));
        let s = split(&node(48), 12, 48).unwrap();
        assert_eq!(s.started, CpuSet::from_ids(36..48));
        assert_eq!(s.mate, CpuSet::from_ids(0..36));
    }

    #[test]
    fn the_split_follows_the_ids_the_node_has_not_their_count() {
        // A stepd confined to some CPUs already (CPU 3 offline, say).
        let cpus = CpuSet::from_ids([0, 1, 2, 4, 5, 6]);
        let s = split(&cpus, 1, 2).unwrap();
        assert_eq!((s.mate.ids(), s.started.ids()), (&[0, 1, 2][..], &[4, 5, 6][..]));
    }

    #[test]
    fn the_started_job_s_peers_are_its_mates_and_a_mate_s_is_the_started_job() {
        let r = record(1, 2);
        assert_eq!(role_of(&r, JobId(17)), Some(Role::Started));
        assert_eq!(role_of(&r, JobId(16)), Some(Role::Mate));
        assert_eq!(role_of(&r, JobId(99)), None);
        assert_eq!(peers_of(&r, Role::Started), vec![JobId(15), JobId(16)]);
        assert_eq!(peers_of(&r, Role::Mate), vec![JobId(17)]);
        // One mate on both of the started job's nodes.
        let one_mate = SharedCores { mates: vec![JobId(15), JobId(15)], ..r.clone() };
        assert_eq!(peers_of(&one_mate, Role::Started), vec![JobId(15)]);
        let s = split(&node(4), 1, 2).unwrap();
        assert_eq!(s.part(Role::Started), &CpuSet::from_ids([2, 3]));
        assert_eq!(s.peers_part(Role::Started), &CpuSet::from_ids([0, 1]));
        assert_eq!(s.part(Role::Mate), s.peers_part(Role::Started));
        assert_eq!(s.peers_part(Role::Mate), s.part(Role::Started));
    }

    use StepState::{Ending, Running, Starting};

    fn id(job: u32, step: u32) -> StepId {
        StepId::new(job, step)
    }

    #[test]
    fn live_steps_are_those_whose_tasks_run_or_are_about_to() {
        let states = [
            (id(15, StepId::EXTERN), Running),
            (id(15, StepId::BATCH), Running),
            (id(15, 0), Ending),
            (id(16, 1), Starting),
            (id(16, 2), StepState::NotRunning),
        ];
        assert_eq!(live(&states), vec![id(15, StepId::BATCH), id(16, 1)]);
        // Processes are set on running steps only, the extern one too.
        assert_eq!(to_set(&[JobId(15), JobId(16)], &states), vec![id(15, StepId::EXTERN), id(15, StepId::BATCH)]);
        assert_eq!(to_set(&[JobId(16)], &states), vec![], "a starting step's tasks are not forked yet");
        assert_eq!(running_here(&[JobId(15), JobId(16), JobId(17)], &live(&states)), vec![JobId(15), JobId(16)]);
        let only_extern = [(id(15, StepId::EXTERN), Running)];
        assert_eq!(running_here(&[JobId(15)], &live(&only_extern)), vec![], "an extern step alone is no running job");
        let r = record(1, 2);
        assert!(in_record(&r, 17) && in_record(&r, 15) && in_record(&r, 16) && !in_record(&r, 18));
    }

    #[test]
    fn a_launch_confines_both_jobs_only_when_a_peer_runs_here() {
        let r = record(1, 2);
        let cpus = node(4);
        // The started job's batch step, on the node where mate 15 runs.
        let here = [id(15, StepId::BATCH), id(15, 0)];
        assert_eq!(
            at_launch(&r, JobId(17), &cpus, &here, None),
            Launch::Confine {
                own: CpuSet::from_ids([2, 3]),
                peers: vec![JobId(15)],
                peers_cpus: CpuSet::from_ids([0, 1])
            }
        );
        // A new step of mate 15 while 17's batch step runs here.
        assert_eq!(
            at_launch(&r, JobId(15), &cpus, &[id(15, StepId::BATCH), id(17, StepId::BATCH)], None),
            Launch::Confine {
                own: CpuSet::from_ids([0, 1]),
                peers: vec![JobId(17)],
                peers_cpus: CpuSet::from_ids([2, 3])
            }
        );
        // Mate 15 has ended (no live step left): 17 runs alone.
        assert_eq!(at_launch(&r, JobId(17), &cpus, &[id(17, StepId::BATCH)], None), Launch::Alone);
        // 17 has ended: a new step of 15 gets the whole node.
        assert_eq!(at_launch(&r, JobId(15), &cpus, &[id(15, 0)], None), Launch::Alone);
        assert_eq!(at_launch(&r, JobId(17), &node(1), &here, None), Launch::OneCpu);
        assert_eq!(at_launch(&r, JobId(99), &cpus, &here, None), Launch::NotInRecord);
    }

    #[test]
    fn the_started_job_keeps_the_cores_slurm_gave_it_when_they_fit_its_share() {
        let r = record(1, 2);
        let cpus = node(4);
        let here = [id(15, StepId::BATCH), id(17, StepId::BATCH)];
        // cons_tres gave 17 cores 0 and 1 here (its cpuset): it keeps them,
        // its mate moves to the others, seen from either side.
        let given = CpuSet::from_ids([0, 1]);
        let want = |own: [usize; 2], peer: u32, theirs: [usize; 2]| Launch::Confine {
            own: CpuSet::from_ids(own),
            peers: vec![JobId(peer)],
            peers_cpus: CpuSet::from_ids(theirs),
        };
        assert_eq!(at_launch(&r, JobId(17), &cpus, &here, Some(&given)), want([0, 1], 15, [2, 3]));
        assert_eq!(at_launch(&r, JobId(15), &cpus, &here, Some(&given)), want([2, 3], 17, [0, 1]));
        // Not the size of its share, or not the node's: the default split.
        for odd in [CpuSet::from_ids([0]), CpuSet::from_ids([0, 7])] {
            assert_eq!(at_launch(&r, JobId(17), &cpus, &here, Some(&odd)), want([2, 3], 15, [0, 1]));
        }
    }

    #[test]
    fn a_step_s_end_gives_the_cores_back_only_when_it_was_the_job_s_last_here() {
        let r = record(1, 2);
        let batch17 = id(17, StepId::BATCH);
        let step17 = id(17, 0);
        let mate = id(15, StepId::BATCH);
        // 17's srun step ends while its batch script still runs: nothing.
        assert_eq!(at_step_end(&r, step17, &[mate, batch17, step17]), vec![]);
        // Its batch step ends after the srun step ended: the mate gets them back.
        assert_eq!(at_step_end(&r, batch17, &[mate, batch17]), vec![JobId(15)]);
        // The mate's last step ends first: the started job gets them.
        assert_eq!(at_step_end(&r, mate, &[mate, batch17]), vec![JobId(17)]);
        // A peer that no longer runs here gets nothing.
        assert_eq!(at_step_end(&r, batch17, &[batch17]), vec![]);
        // A job the record does not name releases nobody.
        assert_eq!(at_step_end(&r, id(99, 0), &[mate, batch17]), vec![]);
    }
}
