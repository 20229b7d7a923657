//! A node's measured draw, from the RAPL energy counters Linux exposes
//! under /sys/class/powercap (one `intel-rapl:N` zone per CPU package; AMD's
//! packages appear there too). Where none is readable (no RAPL, or the
//! files are root-only, as on many distributions since 2020), there is no
//! measurement and the scheduler keeps the job's estimates.

use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where Linux puts the counters.
pub const POWERCAP: &str = "/sys/class/powercap";

/// The package zones of one node, and the last reading.
#[derive(Debug)]
pub struct Rapl {
    zones: Vec<Zone>,
    last: Option<(Instant, Vec<u64>)>,
}

#[derive(Debug)]
struct Zone {
    energy: PathBuf,
    /// The counter wraps at this many microjoules.
    range_uj: u64,
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl Rapl {
    /// The readable package zones under `root` (their sub-zones, core and
    /// dram, are inside the package's count and left out), or `None`.
    pub fn open(root: &Path) -> Option<Rapl> {
        let mut zones: Vec<Zone> = std::fs::read_dir(root)
            .ok()?
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                // intel-rapl:0 is a package; intel-rapl:0:1 a sub-zone.
                name.strip_prefix("intel-rapl:").is_some_and(|n| !n.contains(':'))
            })
            .filter_map(|e| {
                let energy = e.path().join("energy_uj");
                read_u64(&energy)?;
                Some(Zone { energy, range_uj: read_u64(&e.path().join("max_energy_range_uj")).unwrap_or(u64::MAX) })
            })
            .collect();
        zones.sort_by(|a, b| a.energy.cmp(&b.energy));
        (!zones.is_empty()).then_some(Rapl { zones, last: None })
    }

    /// The node's mean draw in watts since the last call (`None` at the
    /// first call, or when a counter stops reading).
    pub fn watts(&mut self) -> Option<f64> {
        self.watts_at(Instant::now())
    }

    fn watts_at(&mut self, now: Instant) -> Option<f64> {
        let counts: Option<Vec<u64>> = self.zones.iter().map(|z| read_u64(&z.energy)).collect();
        let counts = counts?;
        let last = self.last.replace((now, counts.clone()));
        let (then, before) = last?;
        let secs = now.duration_since(then).as_secs_f64();
        if secs <= 0.0 {
            return None;
        }
        let joules: f64 = self
            .zones
            .iter()
            .zip(counts.iter().zip(&before))
            .map(|(z, (&now, &was))| {
                // A counter that wrapped went round once.
                let uj = if now >= was { now - was } else { z.range_uj - was + now };
                uj as f64 / 1e6
            })
            .sum();
        Some(joules / secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(root: &Path, name: &str, energy: u64, range: u64) {
        let d = root.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("energy_uj"), format!("{energy}\n")).unwrap();
        std::fs::write(d.join("max_energy_range_uj"), format!("{range}\n")).unwrap();
    }

    #[test]
    fn packages_are_summed_sub_zones_left_out_and_a_wrap_counted_once() {
        let root = std::env::temp_dir().join(format!("rapl-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        zone(&root, "intel-rapl:0", 1_000_000, 10_000_000);
        zone(&root, "intel-rapl:1", 9_500_000, 10_000_000);
        zone(&root, "intel-rapl:0:0", 5, 10_000_000);
        let mut r = Rapl::open(&root).unwrap();
        assert_eq!(r.zones.len(), 2);
        let t0 = Instant::now();
        assert_eq!(r.watts_at(t0), None, "the first reading only starts the count");
        // Package 0 used 3 J; package 1 wrapped and used 1 J; in 2 s.
        std::fs::write(root.join("intel-rapl:0/energy_uj"), "4000000").unwrap();
        std::fs::write(root.join("intel-rapl:1/energy_uj"), "500000").unwrap();
        assert_eq!(r.watts_at(t0 + std::time::Duration::from_secs(2)), Some(2.0));
        std::fs::remove_dir_all(&root).unwrap();
        assert!(Rapl::open(&root).is_none(), "no directory, no measurement");
    }
}
