//! CPU affinity as a task plugin sets it: a set of CPU ids, the calling
//! thread's own, and one set on every thread of a process (a mask set on
//! a process's pid reaches its main thread only; threads it already
//! started keep theirs).

use std::fmt;
use std::io;

/// CPU ids, sorted, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSet(Vec<usize>);

/// Bits of one word of a kernel CPU mask.
const WORD_BITS: usize = 64;
/// The largest mask we ask the kernel about: 2^20 CPUs.
const MAX_CPUS: usize = 1 << 20;

impl CpuSet {
    pub fn from_ids(ids: impl IntoIterator<Item = usize>) -> CpuSet {
        let mut v: Vec<usize> = ids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        CpuSet(v)
    }

    /// The ids, ascending.
    pub fn ids(&self) -> &[usize] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The calling thread's affinity (`sched_getaffinity(0)`): in
    /// slurmstepd's job-manager thread, the CPUs slurmd and the stepd run on.
    pub fn own() -> io::Result<CpuSet> {
        CpuSet::of_thread(0)
    }

    /// The affinity of thread (or process) `tid`, 0 for the calling thread.
    pub fn of_thread(tid: libc::pid_t) -> io::Result<CpuSet> {
        // The kernel refuses a buffer smaller than its own mask (EINVAL):
        // start at glibc's 1024 CPUs and grow.
        let mut words = 1024 / WORD_BITS;
        loop {
            let mut mask = vec![0u64; words];
            // SAFETY: the buffer holds words * 8 bytes, as the size says;
            // u64 alignment suffices for cpu_set_t's words, and the kernel
            // writes at most that many bytes.
            let rc = unsafe { libc::sched_getaffinity(tid, words * 8, mask.as_mut_ptr().cast::<libc::cpu_set_t>()) };
            if rc == 0 {
                return Ok(CpuSet::from_mask(&mask));
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINVAL) && words * WORD_BITS < MAX_CPUS {
                words *= 2;
                continue;
            }
            return Err(err);
        }
    }

    /// Set this affinity on thread (or process main thread) `tid`.
    pub fn set_on_thread(&self, tid: libc::pid_t) -> io::Result<()> {
        let mask = self.to_mask();
        // SAFETY: the buffer holds mask.len() * 8 bytes, as the size says;
        // the kernel only reads it.
        let rc = unsafe { libc::sched_setaffinity(tid, mask.len() * 8, mask.as_ptr().cast::<libc::cpu_set_t>()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn from_mask(mask: &[u64]) -> CpuSet {
        let ids = mask.iter().enumerate().flat_map(|(w, &bits)| {
            (0..WORD_BITS).filter(move |b| bits & (1u64 << b) != 0).map(move |b| w * WORD_BITS + b)
        });
        CpuSet(ids.collect())
    }

    /// A kernel mask of at least 1024 bits (what glibc's cpu_set_t holds),
    /// long enough for the largest id.
    fn to_mask(&self) -> Vec<u64> {
        let top = self.0.last().map_or(0, |&c| c + 1);
        let mut mask = vec![0u64; top.div_ceil(WORD_BITS).max(1024 / WORD_BITS)];
        for &c in &self.0 {
            mask[c / WORD_BITS] |= 1u64 << (c % WORD_BITS);
        }
        mask
    }
}

/// As Linux lists CPUs (`0-3,8,10-11`), `(none)` when empty.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "(none)");
        }
        let mut first = true;
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            if !first {
                write!(f, ",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

/// Set `cpus` as the affinity of every thread of process `pid`, each TID
/// of /proc/PID/task. A thread (or the whole process) that ends meanwhile
/// is no error. The walk repeats until it meets no thread it has not set
/// (a few rounds at most): a thread started meanwhile by one not yet set
/// would otherwise keep the old mask. Returns how many threads it set, 0
/// for a process that had already ended.
pub fn set_process_affinity(pid: i32, cpus: &CpuSet) -> io::Result<usize> {
    let mut done: Vec<i32> = Vec::new();
    for _round in 0..4 {
        let tids = match threads_of(pid) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(done.len()),
            Err(e) => return Err(e),
        };
        let fresh: Vec<i32> = tids.into_iter().filter(|t| !done.contains(t)).collect();
        if fresh.is_empty() {
            break;
        }
        for tid in fresh {
            match cpus.set_on_thread(tid) {
                Ok(()) => done.push(tid),
                // The thread ended between the listing and now.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => return Err(io::Error::new(e.kind(), format!("thread {tid}: {e}"))),
            }
        }
    }
    Ok(done.len())
}

/// The TIDs of process `pid` (NotFound once it has ended).
fn threads_of(pid: i32) -> io::Result<Vec<i32>> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// Whether process `pid` is a slurmstepd (its command line, which
/// slurmstepd sets to `slurmstepd: [JOB.STEP]`, starts with `slurmstepd`,
/// or its first word is a path to it). A process that has ended is not.
pub fn is_slurmstepd(pid: i32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let argv0 = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    let base = argv0.rsplit(|&b| b == b'/').next().unwrap_or_default();
    cmdline.starts_with(b"slurmstepd") || base == b"slurmstepd"
}

/// Whether `pid` is one of the kernel's threads (PF_KTHREAD in the flags
/// of /proc/PID/stat), which no job owns and no plugin should confine. A
/// process that has ended is not.
pub fn is_kernel_thread(pid: i32) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // After the command (in parentheses, which may hold anything): state,
    // ppid, pgrp, session, tty_nr, tpgid, flags.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    rest.split_whitespace().nth(6).and_then(|f| f.parse::<u64>().ok()).is_some_and(|flags| flags & PF_KTHREAD != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_sorted_once_and_listed_as_linux_lists_cpus() {
        let s = CpuSet::from_ids([8, 1, 0, 3, 2, 8, 10, 11]);
        assert_eq!(s.ids(), &[0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert_eq!(CpuSet::from_ids([5]).to_string(), "5");
        assert_eq!(CpuSet::default().to_string(), "(none)");
    }

    #[test]
    fn masks_read_back_as_their_ids_beyond_1024_cpus() {
        for ids in [vec![0], vec![1, 63, 64, 65], vec![3, 1023, 1024, 4000]] {
            let s = CpuSet::from_ids(ids.clone());
            let mask = s.to_mask();
            assert!(mask.len() * WORD_BITS >= 1024, "at least glibc's cpu_set_t");
            assert_eq!(CpuSet::from_mask(&mask).ids(), &ids[..]);
        }
    }

    #[test]
    fn the_own_affinity_is_what_the_kernel_says() {
        let own = CpuSet::own().unwrap();
        assert!(!own.is_empty());
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let listed = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim();
        assert_eq!(own.to_string(), listed);
    }

    #[test]
    fn a_process_that_ended_is_no_error_and_is_no_slurmstepd() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        child.wait().unwrap();
        // Reaped: no such process any more.
        assert_eq!(set_process_affinity(pid, &CpuSet::own().unwrap()).unwrap(), 0);
        assert!(!is_slurmstepd(pid));
        assert!(!is_slurmstepd(std::process::id() as i32), "a test binary is no slurmstepd");
    }

    #[test]
    fn the_kernel_s_threads_are_told_from_processes() {
        // kthreadd is pid 2 on Linux (in a pid namespace it may not be seen).
        if std::fs::read_to_string("/proc/2/comm").is_ok_and(|c| c.trim() == "kthreadd") {
            assert!(is_kernel_thread(2));
        }
        assert!(!is_kernel_thread(std::process::id() as i32));
        assert!(!is_kernel_thread(i32::MAX), "no such process");
    }

    #[test]
    fn a_process_titled_as_slurmstepd_is_one() {
        use std::os::unix::process::CommandExt;
        // slurmstepd retitles itself `slurmstepd: [JOB.STEP]`.
        let mut child = std::process::Command::new("sleep").arg0("slurmstepd: [17.0]").arg("30").spawn().unwrap();
        let pid = child.id() as i32;
        // spawn may return before the exec has set the new command line.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::fs::read(format!("/proc/{pid}/cmdline")).unwrap().is_empty() && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let seen = is_slurmstepd(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(seen);
    }
}
