//! What a pass writes in the malleable jobs' SystemComments (each one's
//! status, and beside it the cores it shares): only what differs from what
//! the job showed when read, so that a pass with nothing new to say need
//! not take slurmctld's locks a second time, nor look up every job.

use std::collections::HashMap;

use malleable_model::runtime_msg::{keeping_request, SharedCores, Status};
use malleable_model::JobId;
use slurm::ctld::{LockGuard, Scheduling};

use crate::adaptation::MalleableJob;

/// Write `text` (a status, a cores record) as job `id`'s SystemComment,
/// keeping there the runtime's request that job_submit/malleable keeps
/// beside it, unless `text` answers it: it may have come in since the pass
/// read the job. Whether the comment changed.
pub(super) fn write(guard: &mut LockGuard<Scheduling>, id: JobId, text: &str) -> bool {
    let current = guard.find_job(id.0).map(|j| j.system_comment()).unwrap_or_default();
    guard.set_system_comment(id.0, &keeping_request(text, &current))
}

/// Each malleable job's status as the pass leaves it: as read, or as
/// settling its adaptation left it.
pub(super) fn statuses(read: &[MalleableJob], settled: &HashMap<JobId, Status>) -> HashMap<JobId, Status> {
    let mut out: HashMap<JobId, Status> = read.iter().map(|j| (j.id, j.status.clone())).collect();
    out.extend(settled.iter().map(|(id, st)| (*id, st.clone())));
    out
}

/// The SystemComments to write: `statuses` and `cores` as the pass leaves
/// them, against `read` and `read_cores` as the jobs showed them. A job
/// whose comment did not read as a status is written its status; one that
/// lost its cores record is written without it. A cores record without a
/// status is written alone, as when it was made.
pub(super) fn to_write(
    read: &[MalleableJob],
    read_cores: &HashMap<JobId, SharedCores>,
    statuses: &HashMap<JobId, Status>,
    cores: &HashMap<JobId, SharedCores>,
) -> Vec<(JobId, String)> {
    let shown: HashMap<JobId, &Status> = read.iter().filter(|m| m.shown).map(|m| (m.id, &m.status)).collect();
    let mut out = Vec::new();
    for (id, st) in statuses {
        let same_status = shown.get(id).is_some_and(|s| *s == st);
        if same_status && cores.get(id) == read_cores.get(id) {
            continue;
        }
        let status = st.encode();
        let text = match cores.get(id) {
            Some(rec) => rec.beside(Some(&status)),
            None => status,
        };
        out.push((*id, text));
    }
    for (id, rec) in cores.iter().filter(|(id, _)| !statuses.contains_key(id)) {
        if read_cores.get(id) != Some(rec) {
            out.push((*id, rec.encode()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use malleable_model::runtime_msg::Phase;
    use malleable_model::{MalleableSpec, NodeConstraint};

    fn spec() -> MalleableSpec {
        MalleableSpec { min: 1, max: 8, constraint: NodeConstraint::None }
    }

    fn job(id: u32, status: Status, shown: bool) -> MalleableJob {
        MalleableJob {
            id: JobId(id),
            spec: spec(),
            status,
            shown,
            request: String::new(),
            running: true,
            nodes: vec!["n1".into()],
        }
    }

    fn cores(job: u32) -> SharedCores {
        SharedCores { job: JobId(job), cores: 2, of: 4, mates: vec![JobId(9)], increase: 30 }
    }

    #[test]
    fn an_unchanged_status_shown_as_read_is_not_written() {
        let st = Status::new(spec());
        let read = [job(1, st.clone(), true)];
        let statuses = HashMap::from([(JobId(1), st)]);
        assert!(to_write(&read, &HashMap::new(), &statuses, &HashMap::new()).is_empty());
    }

    #[test]
    fn a_status_not_yet_shown_or_moved_is_written() {
        let st = Status::new(spec());
        let moved = Status { phase: Phase::Expanding { resize: 1, nodes: vec!["n2".into()], since: 5 }, ..st.clone() };
        // Job 1 showed nothing that read as a status; job 2 showed st and is now expanding.
        let read = [job(1, st.clone(), false), job(2, st.clone(), true)];
        let statuses = HashMap::from([(JobId(1), st.clone()), (JobId(2), moved.clone())]);
        let mut out = to_write(&read, &HashMap::new(), &statuses, &HashMap::new());
        out.sort_by_key(|(id, _)| *id);
        assert_eq!(out, vec![(JobId(1), st.encode()), (JobId(2), moved.encode())]);
    }

    #[test]
    fn a_cores_record_that_changed_is_written_beside_the_status_and_one_that_went_is_written_away() {
        let st = Status::new(spec());
        let read = [job(1, st.clone(), true), job(2, st.clone(), true)];
        let statuses = HashMap::from([(JobId(1), st.clone()), (JobId(2), st.clone())]);
        // Job 1 gained a record, job 2 lost its own.
        let read_cores = HashMap::from([(JobId(2), cores(2))]);
        let now_cores = HashMap::from([(JobId(1), cores(1))]);
        let mut out = to_write(&read, &read_cores, &statuses, &now_cores);
        out.sort_by_key(|(id, _)| *id);
        assert_eq!(out, vec![(JobId(1), cores(1).beside(Some(&st.encode()))), (JobId(2), st.encode())]);
    }

    #[test]
    fn a_cores_record_alone_is_written_only_when_it_differs() {
        let same = HashMap::from([(JobId(3), cores(3))]);
        assert!(to_write(&[], &same, &HashMap::new(), &same).is_empty());
        let moved = HashMap::from([(JobId(3), SharedCores { cores: 1, ..cores(3) })]);
        assert_eq!(to_write(&[], &same, &HashMap::new(), &moved), vec![(JobId(3), moved[&JobId(3)].encode())]);
    }
}
