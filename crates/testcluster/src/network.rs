//! A cluster's own network, so that what crosses one in a real cluster
//! (job steps, the runtime's channel, a node that drops off) crosses one
//! here: each slurmd runs in its own network namespace with its own address
//! on a bridge, slurmctld and the clients stay in this machine's namespace
//! on the bridge's address. Made with iproute2 (`ip netns`, veth pairs),
//! named after the cluster's port lease so live clusters never share one,
//! written down in the cluster's directory and removed with the cluster.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::ports::{self, Lease};
use crate::process::run;
use crate::Result;

/// The file in a cluster's run directory that says its network exists.
const RECORD: &str = "run/network";

/// One cluster's network: subnet 10.77.<index>.0/24, slurmd nX at .X and
/// this machine's side (slurmctld, clients) at .254.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Network {
    index: u16,
    nodes: usize,
}

/// At most this many nodes: their addresses run from .1 to .253.
pub const MAX_NODES: usize = 253;

impl Network {
    /// The network of the cluster holding `lease`, for `nodes` nodes.
    pub fn of(lease: &Lease, nodes: usize) -> Network {
        Network { index: lease.base.saturating_sub(ports::FIRST) / ports::BLOCK, nodes }
    }

    /// The address slurmctld and the clients have on it.
    pub fn host_addr(&self) -> String {
        format!("10.77.{}.254", self.index)
    }

    /// Node `i`'s address (1-based, as in its name nI).
    pub fn node_addr(&self, i: usize) -> String {
        format!("10.77.{}.{i}", self.index)
    }

    /// Node `i`'s namespace, for `ip netns exec`.
    pub fn namespace(&self, i: usize) -> String {
        format!("mall-{}-n{i}", self.index)
    }

    /// The hosts file each node sees as /etc/hosts: its own and the other
    /// nodes' names at their addresses, and this machine's name (`host`) at
    /// its address on the network. A node has a hostname of its own (its
    /// NodeHostname), and what resolves it (an MPI library finding its own
    /// address, a job naming another node) must find it there.
    pub fn hosts_file(&self, host: &str) -> String {
        let mut text = format!("127.0.0.1 localhost\n{} {host}\n", self.host_addr());
        for i in 1..=self.nodes {
            text += &format!("{} n{i}\n", self.node_addr(i));
        }
        text
    }

    fn bridge(&self) -> String {
        format!("mallbr{}", self.index)
    }

    /// Node `i`'s end of its link on this machine's side.
    fn link(&self, i: usize) -> String {
        format!("mallv{}n{i}", self.index)
    }

    /// Make it: the bridge with this machine's address, and for each node a
    /// namespace, a veth pair into it, its address and route, loopback up.
    /// Recorded in `dir` first, so that a failure half-way is undone too.
    pub fn create(&self, dir: &Path) -> Result<()> {
        if self.nodes > MAX_NODES {
            return Err(format!("a networked cluster has at most {MAX_NODES} nodes, not {}", self.nodes));
        }
        fs::write(dir.join(RECORD), format!("{} {}\n", self.index, self.nodes))
            .map_err(|e| format!("cannot write {}: {e}", dir.join(RECORD).display()))?;
        // Left over by a run that was killed before it could clean up.
        self.remove();
        let ip = |args: &[&str]| run(Command::new("ip").args(args));
        let bridge = self.bridge();
        ip(&["link", "add", &bridge, "type", "bridge"])?;
        ip(&["addr", "add", &format!("{}/24", self.host_addr()), "dev", &bridge])?;
        ip(&["link", "set", &bridge, "up"])?;
        self.forwarding(true)?;
        for i in 1..=self.nodes {
            let (ns, link) = (self.namespace(i), self.link(i));
            ip(&["netns", "add", &ns])?;
            ip(&["link", "add", &link, "type", "veth", "peer", "name", "eth0", "netns", &ns])?;
            ip(&["link", "set", &link, "master", &bridge, "up"])?;
            ip(&["-n", &ns, "addr", "add", &format!("{}/24", self.node_addr(i)), "dev", "eth0"])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            ip(&["-n", &ns, "route", "add", "default", "via", &self.host_addr()])?;
        }
        Ok(())
    }

    /// Take node `i` off the network (its link down), as a cut cable or a
    /// dead switch port would: its slurmd runs on, unreachable.
    pub fn cut(&self, i: usize) -> Result<()> {
        run(Command::new("ip").args(["link", "set", &self.link(i), "down"]))
    }

    /// Put node `i` back on the network.
    pub fn mend(&self, i: usize) -> Result<()> {
        run(Command::new("ip").args(["link", "set", &self.link(i), "up"]))
    }

    /// Let the nodes reach each other across the bridge (`add`), or take
    /// that back. A node-to-node packet is forwarded between two ports of
    /// the bridge, and where Docker runs, br_netfilter sends bridged
    /// packets through iptables' FORWARD chain, whose policy Docker sets to
    /// DROP: srun from one node to another then failed with "Communication
    /// connection failure" once a compose site had run on this machine.
    /// Without iptables there is no such chain to pass.
    fn forwarding(&self, add: bool) -> Result<()> {
        let bridge = self.bridge();
        let rule = ["FORWARD", "-i", bridge.as_str(), "-o", bridge.as_str(), "-j", "ACCEPT"];
        let mut cmd = Command::new("iptables");
        cmd.args(["-w", if add { "-I" } else { "-D" }]).args(rule);
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot run iptables: {e}")),
            Ok(out) if out.status.success() || !add => Ok(()),
            Ok(out) => Err(format!("iptables -I {}: {}", rule.join(" "), String::from_utf8_lossy(&out.stderr).trim())),
        }
    }

    /// Remove the namespaces (their veth ends go with them), the bridge and
    /// its forwarding rule, quietly: what is not there is already gone.
    fn remove(&self) {
        // A rule inserted twice (a run killed half-way) is deleted until none is left.
        for _ in 0..4 {
            let _ = self.forwarding(false);
        }
        for i in 1..=self.nodes {
            let _ = Command::new("ip").args(["netns", "del", &self.namespace(i)]).output();
            let _ = Command::new("ip").args(["link", "del", &self.link(i)]).output();
        }
        let _ = Command::new("ip").args(["link", "del", &self.bridge()]).output();
    }

    /// The network recorded in a cluster's directory, if it made one.
    pub fn recorded(dir: &Path) -> Option<Network> {
        let text = fs::read_to_string(dir.join(RECORD)).ok()?;
        let mut words = text.split_whitespace().map(str::parse::<usize>);
        let index = u16::try_from(words.next()?.ok()?).ok()?;
        let nodes = words.next()?.ok()?;
        Some(Network { index, nodes })
    }

    /// Remove the network a cluster's directory records, and the record.
    pub fn remove_recorded(dir: &Path) {
        if let Some(net) = Network::recorded(dir) {
            net.remove();
            let _ = fs::remove_file(dir.join(RECORD));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_addresses_follow_the_lease() {
        let net = Network::of(&Lease { base: 20_300, count: 5 }, 4);
        assert_eq!(net.host_addr(), "10.77.3.254");
        assert_eq!(net.node_addr(2), "10.77.3.2");
        assert_eq!(net.namespace(2), "mall-3-n2");
        assert_eq!(
            net.hosts_file("vm"),
            "127.0.0.1 localhost\n10.77.3.254 vm\n10.77.3.1 n1\n10.77.3.2 n2\n10.77.3.3 n3\n10.77.3.4 n4\n"
        );
        // Interface names fit Linux's 15 bytes at the last lease and node.
        let last = Network::of(&Lease { base: ports::LAST - ports::BLOCK, count: 1 }, MAX_NODES);
        assert!(last.bridge().len() <= 15 && last.link(MAX_NODES).len() <= 15, "{}", last.link(MAX_NODES));
    }

    #[test]
    fn the_record_reads_back() {
        let dir = std::env::temp_dir().join(format!("net-record-{}", std::process::id()));
        fs::create_dir_all(dir.join("run")).unwrap();
        assert_eq!(Network::recorded(&dir), None);
        let net = Network::of(&Lease { base: 20_500, count: 3 }, 2);
        fs::write(dir.join(RECORD), "5 2\n").unwrap();
        assert_eq!(Network::recorded(&dir), Some(net));
        fs::remove_dir_all(&dir).unwrap();
    }
}
