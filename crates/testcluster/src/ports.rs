//! Ports for clusters, so no test and no `cargo xtask cluster up` picks them
//! by hand: each cluster leases a block of consecutive ports that no other
//! live cluster holds and that nothing on this machine listens on. A lease
//! is a file in the cluster's directory (`ports`: base, count, the pid that
//! took it), written under a lock file shared by every allocator, so two
//! clusters started at once get different blocks. A lease is live while the
//! process that took it runs or its cluster's daemons do; a dead one is
//! taken again.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use crate::process::{pid_alive, read_pid};
use crate::Result;

/// Ports are leased in blocks of this many, from [`FIRST`] up to [`LAST`]:
/// above the ports Slurm and common services use, below Linux's ephemeral
/// range (32768 and up), from which outgoing connections take theirs.
pub const BLOCK: u16 = 100;
pub const FIRST: u16 = 20_000;
pub const LAST: u16 = 32_000;

/// The file in a cluster's directory that holds its lease.
pub const LEASE_FILE: &str = "ports";

/// A cluster's block of ports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub base: u16,
    pub count: u16,
}

/// Lease `count` ports for the cluster in `dir` (which must exist), among
/// the clusters under `root`.
pub fn lease(root: &Path, dir: &Path, count: u16) -> Result<Lease> {
    if count == 0 || count > BLOCK {
        return Err(format!("a cluster takes 1 to {BLOCK} ports, not {count} (at most {} nodes)", BLOCK - 1));
    }
    // Held until `_lock` is dropped at the end of this function.
    let _lock = provision::lock::hold_within(&root.join(".ports.lock"), std::time::Duration::from_secs(120))?;
    let taken: Vec<u16> = live_leases(root, dir).into_iter().map(|l| l.base).collect();
    let mut base = FIRST;
    while base + count <= LAST {
        if !taken.contains(&base) && (base..base + count).all(port_is_free) {
            let lease = Lease { base, count };
            let text = format!("{base} {count} {}\n", std::process::id());
            fs::write(dir.join(LEASE_FILE), text).map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
            return Ok(lease);
        }
        base += BLOCK;
    }
    Err(format!("no block of {count} free ports left between {FIRST} and {LAST}: stop some clusters"))
}

/// Give the lease of the cluster in `dir` back.
pub fn release(dir: &Path) {
    let _ = fs::remove_file(dir.join(LEASE_FILE));
}

/// The lease a cluster's directory holds, if any.
pub fn read_lease(dir: &Path) -> Option<(Lease, i32)> {
    let text = fs::read_to_string(dir.join(LEASE_FILE)).ok()?;
    let mut words = text.split_whitespace().map(str::parse::<i64>);
    let (base, count, pid) = (words.next()?.ok()?, words.next()?.ok()?, words.next()?.ok()?);
    Some((Lease { base: u16::try_from(base).ok()?, count: u16::try_from(count).ok()? }, i32::try_from(pid).ok()?))
}

/// The leases of the other clusters under `root` that are still in use.
fn live_leases(root: &Path, except: &Path) -> Vec<Lease> {
    let Ok(entries) = fs::read_dir(root) else { return Vec::new() };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p != except)
        .filter_map(|p| read_lease(&p).filter(|&(_, owner)| pid_alive(owner) || daemons_alive(&p)).map(|(l, _)| l))
        .collect()
}

/// Whether any daemon the cluster in `dir` started still runs.
fn daemons_alive(dir: &Path) -> bool {
    let mut files: Vec<PathBuf> = vec![dir.join("munge/munged.pid")];
    if let Ok(entries) = fs::read_dir(dir.join("run")) {
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files.iter().filter_map(|f| read_pid(f)).any(pid_alive)
}

/// Nothing listens on `port` on the loopback address.
fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests probe and hold real ports: one at a time, or one test's
    /// held port makes another's first free block move.
    static REAL_PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn scratch(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("testcluster-ports-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        root
    }

    #[test]
    fn two_live_clusters_get_different_blocks_and_a_released_one_is_taken_again() {
        let _one_at_a_time = REAL_PORTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = scratch("two");
        let (a, b) = (root.join("a"), root.join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let la = lease(&root, &a, 9).unwrap();
        let lb = lease(&root, &b, 9).unwrap();
        assert_ne!(la.base, lb.base, "a live lease (this process) is not handed out twice");
        assert_eq!(read_lease(&a).unwrap(), (la, std::process::id() as i32));
        release(&a);
        let c = root.join("c");
        fs::create_dir_all(&c).unwrap();
        assert_eq!(lease(&root, &c, 9).unwrap().base, la.base, "a released block is the first free again");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_lease_of_a_dead_owner_without_daemons_is_taken_again() {
        let _one_at_a_time = REAL_PORTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = scratch("dead");
        let (a, b) = (root.join("a"), root.join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let la = lease(&root, &a, 3).unwrap();
        // Pid 0 never names a live process: the lease is stale.
        fs::write(a.join(LEASE_FILE), format!("{} 3 0\n", la.base)).unwrap();
        assert_eq!(lease(&root, &b, 3).unwrap().base, la.base);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_port_in_use_is_skipped() {
        let _one_at_a_time = REAL_PORTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = scratch("busy");
        let a = root.join("a");
        fs::create_dir_all(&a).unwrap();
        // Hold the second port of the first free block.
        let probe = lease(&root, &a, 3).unwrap();
        release(&a);
        let held = TcpListener::bind(("127.0.0.1", probe.base + 1));
        if held.is_ok() {
            assert_ne!(lease(&root, &a, 3).unwrap().base, probe.base, "a block with a port in use is skipped");
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn sizes_out_of_range_are_refused() {
        let _one_at_a_time = REAL_PORTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = scratch("size");
        assert!(lease(&root, &root, 0).is_err());
        assert!(lease(&root, &root, BLOCK + 1).unwrap_err().contains("1 to 100 ports"));
        fs::remove_dir_all(&root).unwrap();
    }
}
