//! The cpuset cgroups of jobs that share a node's cores, under task/cgroup
//! (cgroup v1): a task's CPU mask must lie inside its cpuset, and Slurm
//! gives both jobs the cores cons_tres overlapped, so each job's step
//! cgroups are set to its own part, while its job cgroup keeps what Slurm
//! gave it and gains that part (task/cgroup then still creates later steps
//! inside it). Without cpuset cgroups for the job, nothing is done here.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use slurm::stepd::CpuSet;

/// Where cgroup v1 mounts its cpuset hierarchy.
const CPUSET_ROOT: &str = "/sys/fs/cgroup/cpuset";

/// The node's CPUs: all its cpuset hierarchy has where one is mounted (the
/// stepd's own affinity is only its job's cores under task/cgroup), else
/// the stepd's own affinity, which is the node's without cgroups.
pub fn node_cpus() -> io::Result<CpuSet> {
    match fs::read_to_string(Path::new(CPUSET_ROOT).join("cpuset.effective_cpus")) {
        Ok(text) if !text.trim().is_empty() => parse_list(&text),
        _ => CpuSet::own(),
    }
}

/// A kernel CPU list ("0-2,5").
pub fn parse_list(text: &str) -> io::Result<CpuSet> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("not a CPU list: {text:?}"));
    let mut ids = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                ids.extend(a..=b);
            }
            None => ids.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(CpuSet::from_ids(ids))
}

fn list(cpus: &CpuSet) -> String {
    cpus.ids().iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// Job `job`'s cgroup directories in the cpuset hierarchy
/// (`slurm[_NODE]/uid_UID/job_JOB`).
fn job_dirs(job: u32) -> Vec<PathBuf> {
    let name = format!("job_{job}");
    let mut found = Vec::new();
    let Ok(tops) = fs::read_dir(CPUSET_ROOT) else { return found };
    for top in tops.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("slurm")) {
        let Ok(uids) = fs::read_dir(top.path()) else { continue };
        for uid in uids.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("uid_")) {
            let dir = uid.path().join(&name);
            if dir.is_dir() {
                found.push(dir);
            }
        }
    }
    found
}

/// Job `job`'s CPUs on this node as its job cgroup has them: what Slurm
/// allocated it (task/cgroup), and what [`confine_job`] added, which is
/// that same part when the split follows it. `None` without such a cgroup.
pub fn slurm_cores(job: u32) -> Option<CpuSet> {
    job_dirs(job).first().and_then(|d| read(d).ok())
}

/// Every cgroup below `dir`, each after its parent.
fn below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut next = vec![dir.to_path_buf()];
    while let Some(d) = next.pop() {
        if let Ok(entries) = fs::read_dir(&d) {
            for e in entries.flatten().filter(|e| e.path().is_dir()) {
                out.push(e.path());
                next.push(e.path());
            }
        }
    }
    out.sort_by_key(|p| p.components().count());
    out
}

fn read(dir: &Path) -> io::Result<CpuSet> {
    parse_list(&fs::read_to_string(dir.join("cpuset.cpus"))?)
}

fn write(dir: &Path, cpus: &CpuSet) -> io::Result<()> {
    fs::write(dir.join("cpuset.cpus"), list(cpus))
}

fn union(a: &CpuSet, b: &CpuSet) -> CpuSet {
    CpuSet::from_ids(a.ids().iter().chain(b.ids()).copied())
}

/// Give job `job`'s steps on this node exactly `cpus`: its job cgroup
/// gains them (a parent must hold its children's CPUs), then its step
/// cgroups (and theirs) are widened from the top and narrowed from the
/// bottom, as cgroup v1 lets a cpuset change only inside its parent's.
/// Returns how many cgroups were set; none when the job has no cpuset
/// cgroup here (no task/cgroup).
pub fn confine_job(job: u32, cpus: &CpuSet) -> Result<usize, String> {
    let mut set = 0;
    for dir in job_dirs(job) {
        let at = |d: &Path, e: io::Error| format!("{}: {e}", d.display());
        let now = read(&dir).map_err(|e| at(&dir, e))?;
        let wide = union(&now, cpus);
        if wide != now {
            write(&dir, &wide).map_err(|e| at(&dir, e))?;
        }
        let steps = below(&dir);
        for d in &steps {
            let now = read(d).map_err(|e| at(d, e))?;
            write(d, &union(&now, cpus)).map_err(|e| at(d, e))?;
        }
        for d in steps.iter().rev() {
            write(d, cpus).map_err(|e| at(d, e))?;
            set += 1;
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_the_kernel_writes_them() {
        assert_eq!(parse_list("0-2,5\n").unwrap(), CpuSet::from_ids([0, 1, 2, 5]));
        assert_eq!(parse_list("1").unwrap(), CpuSet::from_ids([1]));
        assert_eq!(list(&CpuSet::from_ids([3, 0])), "0,3");
        assert!(parse_list("0-x").is_err());
    }
}
