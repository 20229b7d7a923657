//! The site network's own /24, so that every host keeps its address when
//! it is killed and started again, or cut off and connected again: Slurm
//! resolves a node's address once, and a host back under another (docker
//! hands out the next free one) received the messages of whichever host
//! had its old address.

use std::process::Command;

use crate::Result;

/// A /24 network, by its first three octets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subnet(pub [u8; 3]);

impl Subnet {
    /// `a.b.c.0/24`.
    pub fn cidr(self) -> String {
        let [a, b, c] = self.0;
        format!("{a}.{b}.{c}.0/24")
    }

    /// The address of the `i`-th host (from 0): `.10` and on, clear of the
    /// gateway docker takes (`.1`).
    pub fn host(self, i: usize) -> String {
        let [a, b, c] = self.0;
        format!("{a}.{b}.{c}.{}", 10 + i)
    }

    fn range(self) -> (u32, u32) {
        let base = u32::from_be_bytes([self.0[0], self.0[1], self.0[2], 0]);
        (base, base + 255)
    }
}

/// `a.b.c.d/p` as its first and last address.
fn parse_cidr(cidr: &str) -> Option<(u32, u32)> {
    let (addr, bits) = cidr.trim().split_once('/')?;
    let addr: std::net::Ipv4Addr = addr.parse().ok()?;
    let bits: u32 = bits.parse().ok().filter(|b| *b <= 32)?;
    let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
    let first = u32::from(addr) & mask;
    Some((first, first | !mask))
}

/// The first /24 of 10.213.0.0/16, from a place that hangs on the site's
/// name (two sites up at once look in different places first), that
/// overlaps none of `taken` (CIDRs; IPv6 ones are skipped).
pub fn pick(name: &str, taken: &[String]) -> Result<Subnet> {
    let used: Vec<(u32, u32)> = taken.iter().filter_map(|c| parse_cidr(c)).collect();
    // FNV-1a of the name: stable across runs and builds.
    let start = name.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193)) as usize;
    (0..256)
        .map(|k| Subnet([10, 213, ((start + k) % 256) as u8]))
        .find(|s| {
            let (a, b) = s.range();
            used.iter().all(|&(x, y)| b < x || y < a)
        })
        .ok_or_else(|| format!("every /24 of 10.213.0.0/16 overlaps a docker network ({})", taken.join(", ")))
}

/// The subnets of every docker network on this machine.
pub fn taken() -> Result<Vec<String>> {
    let ids =
        Command::new("docker").args(["network", "ls", "-q"]).output().map_err(|e| format!("docker network ls: {e}"))?;
    let ids: Vec<String> = String::from_utf8_lossy(&ids.stdout).split_whitespace().map(str::to_string).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let out = Command::new("docker")
        .args(["network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}} {{end}}"])
        .args(&ids)
        .output()
        .map_err(|e| format!("docker network inspect: {e}"))?;
    if !out.status.success() {
        return Err(format!("docker network inspect: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).split_whitespace().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_gets_a_24_that_overlaps_no_network_and_keeps_it_while_nothing_changes() {
        let first = pick("chaos", &[]).unwrap();
        assert_eq!(pick("chaos", &[]).unwrap(), first);
        assert_eq!(first.0[..2], [10, 213]);
        let next = pick("chaos", &[first.cidr(), "172.17.0.0/16".into(), "fd00::/64".into()]).unwrap();
        assert_ne!(next, first);
        // A wider network over the whole /16 leaves nothing.
        let e = pick("chaos", &["10.0.0.0/8".into()]).unwrap_err();
        assert!(e.contains("10.0.0.0/8"), "{e}");
        assert_eq!(first.host(0), format!("10.213.{}.10", first.0[2]));
        assert_eq!(
            parse_cidr("10.213.4.7/24"),
            Some((u32::from_be_bytes([10, 213, 4, 0]), u32::from_be_bytes([10, 213, 4, 255])))
        );
        assert_eq!(parse_cidr("nonsense"), None);
    }
}
