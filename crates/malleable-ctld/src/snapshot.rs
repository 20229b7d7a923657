//! Translate slurmctld's records into the core's Snapshot, and remember how
//! the core's node indices map back to slurmctld's node table.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use malleable_model::log_lines::LogLine;
use malleable_model::{JobId, Node, NodeIndex, PendingJob, RunningJob, SharedCores, Snapshot};
use rustc_hash::FxHashMap;
use slurm::ctld::changes::UpdateNotes;
use slurm::ctld::{JobView, LockGuard, Scheduling, Updates};

use crate::adaptation::{MalleableJob, Memory};
use crate::config::Config;
use crate::feed::{Found, Plan, Whole};
use crate::job_options::OptionsCache;
use crate::kept::Kept;

mod jobs;
pub(crate) mod nodes;
mod placing;
use jobs::Reader;
pub use nodes::NodeConfigs;
use nodes::NodeTable;

/// A snapshot plus the node-table index of each of its nodes.
pub struct Taken {
    pub snapshot: Snapshot,
    pub table_index: Vec<usize>,
    /// Each job with malleable options, waiting or running.
    pub malleable: Vec<MalleableJob>,
    /// Jobs whose options do not read (submitted before job_submit/malleable
    /// checked them): treated as rigid, with the reason.
    pub unreadable: Vec<(JobId, String)>,
    /// Whether each node can take work (see `NodeView::is_usable`), by the
    /// snapshot's node index: a flag, not a set of names, since every node
    /// is read at every pass.
    pub usable_at: Vec<bool>,
    /// The core sharing each running job's SystemComment records, by job:
    /// kept there beside its status when that is written.
    pub shared_cores: HashMap<JobId, SharedCores>,
    /// slurmdbd is away or behind: no job is resized.
    pub slurmdbd_behind: bool,
    /// Running elastic jobs whose QOS's or association's node limits hold
    /// them below their `--max-nodes-invasive`, and the most they may hold.
    pub capped: Vec<(JobId, u32)>,
    /// Running rigid jobs Slurm resized (a --no-kill job that lost a node).
    pub resized_rigid: Vec<JobId>,
    /// Waiting rigid jobs that may share cores with others (their
    /// partition's OverSubscribe), read on the walk the queue is read in.
    pub oversubscribers: Vec<JobId>,
    /// Batch jobs in the queue younger than `BatchStartDelay=`, with the
    /// instant each comes of age: the strategy plans with them, but they
    /// are not started before then (see `Config::batch_start_delay`).
    pub young: FxHashMap<JobId, Instant>,
}

impl Taken {
    /// The name of the node at `table` in slurmctld's node table.
    pub fn name_at_table(&self, table: usize) -> Option<&str> {
        let i = self.table_index.iter().position(|&t| t == table)?;
        Some(&*self.snapshot.nodes[i].name)
    }

    /// Whether the node of this name can take work (a node the snapshot
    /// does not hold cannot).
    pub fn usable(&self, name: &str) -> bool {
        self.snapshot.nodes.iter().position(|n| *n.name == *name).is_some_and(|i| self.usable_at[i])
    }

    /// A node's index in slurmctld's node table, by name.
    pub fn table_index_of(&self, name: &str) -> Option<usize> {
        self.snapshot.nodes.iter().position(|n| *n.name == *name).map(|i| self.table_index[i])
    }
}

/// Read the cluster under the scheduling locks. Pending jobs that cannot run
/// yet (held, unmet dependencies, heterogeneous, over their partition's or
/// QOS's limits, their partition down, past their deadline, kept out by a
/// reservation) are left out of the queue.
///
/// Every node and every running job is read; of the waiting jobs, those
/// `kept`'s feed names (new, updated, named by a decision, read at every
/// pass, a few in turn), or all of them when it says the world changed
/// wholesale; the others are handed over as read before (see `feed.rs`).
/// A read of changes that leaves sdiag's counts unexplained is made whole.
/// Nodes in `suspects` are not free, and while it says slurmdbd does
/// not answer, no job is resized. With a power-aware strategy, the corridor in force now and
/// every job's draw: its own `--min-power`/`--max-power`, else
/// `DefaultJobWatts=`.
///
/// A malleable job's spec goes to the strategy, with whether it is
/// adapting (its status says so) and what its runtime measured (`memory`);
/// a running one is rigid to the strategy until its runtime says HELLO.
///
/// With a strategy that places jobs on part of nodes (IPSCHED)
/// each node carries its GPUs and what running jobs leave of its cores
/// and GPUs, and each waiting job that may share a node asks for its CPUs
/// and GPUs per node ([`core_request`]); otherwise every job asks for
/// whole nodes.
/// What the agent suspects that slurmctld does not know yet.
#[derive(Default)]
pub struct Suspects {
    /// Nodes an expand failed on, kept from the strategies until then.
    pub nodes: HashMap<String, Instant>,
    /// Why slurmdbd does not answer, when it does not
    /// (`slurmdbd_probe`): slurmctld's connection to it may not know yet.
    pub slurmdbd: Option<String>,
}

pub fn take(
    guard: &LockGuard<Scheduling>,
    now: i64,
    config: &Config,
    memory: &Memory,
    suspects: &Suspects,
    known: &mut OptionsCache,
    kept: &mut Kept,
) -> Taken {
    // The notes of the jobs updated since the last read, taken at every
    // read so that they never pile up; where they are taken from is looked
    // up again after a reconfigure (it may have reloaded job_submit
    // plugins) and while job_submit/malleable is not found.
    if kept.enabled && (kept.notes.is_none() || kept.feed.whole_asked()) {
        kept.notes = UpdateNotes::find(UPDATE_NOTES_PLUGIN);
    }
    let updates = match kept.notes.as_mut() {
        Some(notes) if kept.enabled => notes.take(),
        _ => Updates::NotNoted,
    };
    if kept.enabled && updates == Updates::NotNoted && !kept.said_not_noted {
        kept.said_not_noted = true;
        log::warn!(
            "job_submit/malleable is not loaded (JobSubmitPlugins=malleable in slurm.conf): job updates cannot be \
             seen as they come, so every pass reads every job"
        );
    }
    let stamps = guard.stamps();
    let mut whole = if kept.enabled { None } else { Some(Whole::Off) };
    loop {
        // A whole read reads every node's configuration too; a read of
        // changes, RecheckPerPass of them in turn.
        let all = whole.is_some();
        let table = NodeTable::read(
            guard,
            config,
            &suspects.nodes,
            &mut kept.nodes,
            (all, kept.settings.recheck),
            (stamps.nodes, now),
        );
        let shape = table.shape();
        let plan = match whole {
            Some(why) => Plan::Whole(why),
            None => kept.feed.plan(&kept.settings, &stamps, shape, &updates, now),
        };
        if let Plan::Whole(why) = plan {
            if !all {
                whole = Some(why);
                continue;
            }
        }
        let partitions = kept.partitions.take_for(stamps.partitions, shape, matches!(plan, Plan::Whole(_)));
        let mut r = Reader {
            guard,
            now,
            config,
            memory,
            known: &mut *known,
            table,
            partitions,
            db_behind: suspects.slurmdbd.is_some() || guard.slurmdbd_behind(),
            read_at: Instant::now(),
            running: Vec::new(),
            malleable: Vec::new(),
            unreadable: Vec::new(),
            shared_cores: HashMap::new(),
            capped: Vec::new(),
            resized_rigid: Vec::new(),
            correspond: Vec::new(),
            resv_starts: guard.reservation_starts_after(now),
        };
        let mut records = match &plan {
            Plan::Jobs { read, check } => {
                for &id in read {
                    read_one(&mut r, kept, id, guard.find_job(id));
                }
                // In turn: a queued job whose fingerprint has not moved is
                // as read (a fraction of a whole read's cost). What
                // reservations keep from it moves with the clock too, but a
                // job is read from the second its window reaches one
                // (Recheck::From, snapshot/jobs.rs).
                let mut n = read.len();
                for &id in check {
                    let job = guard.find_job(id);
                    if job.as_ref().is_some_and(|j| kept.unmoved(id, j.fingerprint())) {
                        continue;
                    }
                    n += 1;
                    read_one(&mut r, kept, id, job);
                }
                n
            }
            Plan::Whole(_) => {
                kept.begin_whole();
                r.known.begin_walk();
                let mut n = 0;
                for job in guard.jobs() {
                    read_one(&mut r, kept, job.id(), Some(job));
                    n += 1;
                }
                r.known.end_walk();
                n
            }
        };
        let mut ended = kept.feed.end(&stamps, shape, matches!(plan, Plan::Whole(_)));
        if ended == Err(Whole::UnseenChange) {
            // sdiag counted a start or a cancel no read saw (a waiting job
            // cancelled, most often): the job is kept, and its record's
            // state moved. Every kept record's fingerprint is looked at
            // (a hash lookup and a line or two each: about a tenth of a
            // whole read), those that moved read whole, and sdiag asked again.
            log::debug!("feed: sdiag counted a start or cancel no read saw: every kept fingerprint looked at");
            let ids: Vec<u32> = kept.waiters().map(|(&id, _)| id).collect();
            for id in ids {
                let job = guard.find_job(id);
                if job.as_ref().is_some_and(|j| kept.print_of(id) == Some(j.fingerprint())) {
                    continue;
                }
                records += 1;
                read_one(&mut r, kept, id, job);
            }
            ended = kept.feed.end(&stamps, shape, false);
        }
        if let Err(why) = ended {
            // sdiag counted what no read saw: read again, whole.
            whole = Some(why);
            continue;
        }
        let whole = match plan {
            Plan::Whole(why) => Some(format!("{why:?}")),
            Plan::Jobs { .. } => None,
        };
        let nodes_walked = r.table.walked;
        kept.partitions.keep(std::mem::take(&mut r.partitions), stamps.partitions, shape, now);
        log::debug!("{}", LogLine::FeedRead { records, whole, kept: kept.feed.waiting(), nodes_walked });
        return taken(guard, now, config, r);
    }
}

/// Read job `id`'s record (`None`: there is none by that id any more) into
/// `kept` and the pass's running jobs.
fn read_one(r: &mut Reader<'_>, kept: &mut Kept, id: u32, job: Option<JobView<'_>>) {
    match job {
        Some(job) => {
            let read = r.read(&job);
            kept.found(id, read.found, read.weight, read.waiter);
        }
        None => {
            r.known.forget(id);
            kept.found(id, Found::Gone { cancelled: false }, 1, None);
        }
    }
}

/// The Taken of a pass's reads: its nodes and running jobs. The waiting
/// jobs are added by [`add_waiting`], away from the locks where it can be.
fn taken(guard: &LockGuard<Scheduling>, now: i64, config: &Config, r: Reader<'_>) -> Taken {
    let Reader {
        table,
        mut running,
        malleable,
        unreadable,
        shared_cores,
        capped,
        resized_rigid,
        correspond,
        db_behind,
        ..
    } = r;
    let NodeTable { nodes, table_index, usable_at, .. } = table;
    // As slurmctld's queue building: each task of such an array waits on its
    // corresponding task as a record of its own (one whose task failed then
    // shows DependencyNeverSatisfied alone), read as such from the next pass.
    if !correspond.is_empty() {
        let limit = guard.correspond_after_task_cnt();
        for array in correspond {
            let Some(job) = guard.find_job(array) else { continue };
            // The array's own id: the record a task is split from gets the task's.
            let split = guard.split_correspond_array(&job, limit);
            if !split.is_empty() {
                log::info!("{}", LogLine::TasksSplitOff { job: JobId(array), split });
            }
        }
    }
    sharing_as_recorded(&mut running, &nodes, &shared_cores);
    let power = config.power_in_use().and_then(|p| p.state_at(now));
    Taken {
        snapshot: Snapshot { now, nodes, running, pending: Vec::new(), power },
        table_index,
        malleable,
        unreadable,
        usable_at,
        shared_cores,
        slurmdbd_behind: db_behind,
        capped,
        resized_rigid,
        oversubscribers: Vec::new(),
        young: FxHashMap::default(),
    }
}

/// Add the waiting jobs as `kept` holds them: the strategy's queue (a copy
/// of every queued job, made where it can be without slurmctld's locks),
/// the malleable ones' statuses, the options that do not read, the young
/// and those that may share cores.
pub fn add_waiting(taken: &mut Taken, kept: &Kept) {
    taken.snapshot.pending.reserve(kept.feed.waiting());
    for (&id, w) in kept.waiters() {
        if let Some(m) = &w.malleable {
            taken.malleable.push(m.clone());
        }
        if let Some(why) = &w.unreadable {
            taken.unreadable.push((JobId(id), why.clone()));
        }
        let Some(p) = &w.queued else { continue };
        taken.snapshot.pending.push(p.clone());
        if let Some(at) = w.young {
            taken.young.insert(JobId(id), at);
        } else if w.oversubscribes {
            taken.oversubscribers.push(JobId(id));
        }
    }
}

/// Move what [`add_waiting`] added from `from` to `to`, a read of the same
/// pass made later: the waiting jobs are the same kept ones (each start is
/// checked against its live record anyway), not copied again under the locks.
pub fn carry_waiting(from: &mut Taken, to: &mut Taken) {
    to.snapshot.pending = std::mem::take(&mut from.snapshot.pending);
    to.young = std::mem::take(&mut from.young);
    to.oversubscribers = std::mem::take(&mut from.oversubscribers);
    let running: HashSet<JobId> = to.snapshot.running.iter().map(|r| r.id).collect();
    to.malleable.extend(from.malleable.iter().filter(|m| !m.running && !running.contains(&m.id)).cloned());
    let said: HashSet<JobId> = to.unreadable.iter().map(|(id, _)| *id).collect();
    to.unreadable.extend(from.unreadable.iter().filter(|(id, _)| !said.contains(id)).cloned());
}

/// The file of the job_submit plugin that notes updates (see `slurm::ctld::changes`).
const UPDATE_NOTES_PLUGIN: &str = "job_submit_malleable.so";

/// How many waiting jobs, from the head of the queue, are asked whom they
/// may preempt: Slurm walks every job to answer, so a pass asks no more
/// than its own scheduler tries by default (`default_queue_depth`).
const PREEMPT_DEPTH: usize = 100;

/// Fill in, for the first [`PREEMPT_DEPTH`] waiting jobs in queue order,
/// the running jobs slurmctld lets each preempt.
pub fn who_may_preempt(guard: &LockGuard<Scheduling>, pending: &mut [PendingJob]) {
    let mut order: Vec<usize> = (0..pending.len()).collect();
    // Under the locks: only which are the first, in linear time, not the
    // whole queue sorted (their own order does not matter here).
    if order.len() > PREEMPT_DEPTH {
        order.select_nth_unstable_by(PREEMPT_DEPTH, |&a, &b| PendingJob::queue_cmp(&pending[a], &pending[b]));
        order.truncate(PREEMPT_DEPTH);
    }
    for &k in &order {
        if let Some(job) = guard.find_job(pending[k].id.0) {
            pending[k].preempts = guard.preemptable_by(&job).into_iter().map(JobId).collect();
        }
    }
}

/// Each running job's part in core sharing, from the records in the
/// SystemComments (`shared`): a job started on mates' cores holds the
/// recorded cores on each node whose mate still runs, and all of the
/// others'; a mate keeps the rest of each node while that job runs. A job
/// whose partners have all ended is alone again (Listing 3: their cores
/// came back to it). The seconds sharing added to its limit stay counted.
pub fn sharing_as_recorded(running: &mut [RunningJob], nodes: &[Node], shared: &HashMap<JobId, SharedCores>) {
    // Every pass reads this under slurmctld's locks: only the jobs a record
    // names have their nodes copied, and none at all on a cluster where no
    // job shares.
    if shared.is_empty() {
        return;
    }
    let named: HashSet<JobId> =
        shared.values().flat_map(|r| std::iter::once(r.job).chain(r.mates.iter().copied())).collect();
    let held: HashMap<JobId, Vec<NodeIndex>> =
        running.iter().filter(|r| named.contains(&r.id)).map(|r| (r.id, r.nodes.clone())).collect();
    for r in running.iter_mut() {
        let Some(rec) = shared.get(&r.id) else { continue };
        r.sharing.increase = rec.increase;
        let cores_of = |i: NodeIndex| nodes.get(i).map_or(1, |n| n.cores);
        if rec.job == r.id {
            let with: Vec<JobId> = rec.mates.iter().copied().filter(|m| held.contains_key(m)).collect();
            if with.is_empty() {
                continue;
            }
            let shared_node = |i: &NodeIndex| with.iter().any(|m| held[m].contains(i));
            r.sharing.cores = r
                .nodes
                .iter()
                .map(|i| if shared_node(i) { rec.cores.min(cores_of(*i)) } else { cores_of(*i) })
                .collect();
            r.sharing.with = with;
        } else if rec.mates.contains(&r.id) && held.contains_key(&rec.job) {
            r.sharing.cores = r.nodes.iter().map(|&i| cores_of(i).saturating_sub(rec.cores).max(1)).collect();
            r.sharing.with = vec![rec.job];
        }
    }
}

#[cfg(test)]
mod sharing_tests {
    use super::*;

    fn running(id: u32, nodes: Vec<NodeIndex>) -> RunningJob {
        let mut r = RunningJob::new(id, nodes);
        r.sharing.opted_in = true;
        r
    }

    #[test]
    fn a_recorded_sharing_gives_each_job_its_cores_while_its_partners_run() {
        let nodes: Vec<Node> =
            (1..=4).map(|i| Node { name: format!("n{i}").into(), free: false, cores: 4, ..Node::default() }).collect();
        // JobId=3 started on 1 core of each node of mates 1 (n1, n2) and 2 (n3).
        let rec = SharedCores { job: JobId(3), cores: 1, of: 4, mates: vec![JobId(1), JobId(2)], increase: 0 };
        let recorded = |increase| {
            HashMap::from([
                (JobId(1), SharedCores { increase, ..rec.clone() }),
                (JobId(2), rec.clone()),
                (JobId(3), SharedCores { increase: 60, ..rec.clone() }),
            ])
        };
        let mut jobs =
            vec![running(1, vec![0, 1]), running(2, vec![2]), running(3, vec![0, 1, 2]), running(4, vec![3])];
        sharing_as_recorded(&mut jobs, &nodes, &recorded(120));
        assert_eq!((jobs[0].sharing.cores.clone(), jobs[0].sharing.with.clone()), (vec![3, 3], vec![JobId(3)]));
        assert_eq!(jobs[0].sharing.increase, 120);
        assert_eq!(
            (jobs[2].sharing.cores.clone(), jobs[2].sharing.with.clone()),
            (vec![1, 1, 1], vec![JobId(1), JobId(2)])
        );
        assert!(jobs[3].sharing.alone(), "a job in no record is alone");

        // Mate 2 ended first: its node's cores went to JobId=3 (all 4 of n3).
        let mut jobs = vec![running(1, vec![0, 1]), running(3, vec![0, 1, 2])];
        sharing_as_recorded(&mut jobs, &nodes, &recorded(120));
        assert_eq!((jobs[1].sharing.cores.clone(), jobs[1].sharing.with.clone()), (vec![1, 1, 4], vec![JobId(1)]));

        // JobId=3 ended: the mates are alone again, with what sharing added to their limits.
        let mut jobs = vec![running(1, vec![0, 1]), running(2, vec![2])];
        sharing_as_recorded(&mut jobs, &nodes, &recorded(120));
        assert!(jobs.iter().all(|j| j.sharing.alone()));
        assert_eq!(jobs[0].sharing.increase, 120);
    }
}
