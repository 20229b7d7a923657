//! The chaos campaign's fault schedule: which fault, on which host, when and
//! for how long, drawn from a seed alone, so the same seed gives the same
//! schedule (what the site then does with it is not deterministic).

use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A kind of fault the campaign injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A compute host's container killed, started again after the hold.
    KillHost,
    /// A compute host's container paused (it stops answering), unpaused.
    PauseHost,
    /// A compute host cut from the site's network, connected again.
    CutHost,
    /// slurmctld restarted (no hold).
    RestartCtld,
    /// slurmdbd stopped, started again.
    StopDbd,
    /// MariaDB stopped with SIGSTOP, continued with SIGCONT.
    StallMariadb,
    /// A job's mall-run hub killed (no hold).
    KillHub,
    /// One worker of a job killed (no hold).
    KillWorker,
    /// A compute host's /tmp filled, emptied again.
    FillTmp,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::KillHost,
        Kind::PauseHost,
        Kind::CutHost,
        Kind::RestartCtld,
        Kind::StopDbd,
        Kind::StallMariadb,
        Kind::KillHub,
        Kind::KillWorker,
        Kind::FillTmp,
    ];

    /// Whether it strikes one compute host (else the controller's side,
    /// or a job's processes wherever they are).
    pub fn on_a_host(self) -> bool {
        matches!(self, Kind::KillHost | Kind::PauseHost | Kind::CutHost | Kind::FillTmp)
    }

    /// Whether it strikes the controller's side (one such fault at a time).
    pub fn on_the_controller(self) -> bool {
        matches!(self, Kind::RestartCtld | Kind::StopDbd | Kind::StallMariadb)
    }

    /// How long it lasts before it is undone, in whole seconds: (least, most).
    fn hold(self) -> (u64, u64) {
        match self {
            Kind::KillHost => (30, 90),
            Kind::PauseHost => (10, 40),
            Kind::CutHost => (10, 60),
            Kind::StopDbd => (20, 120),
            Kind::StallMariadb => (5, 30),
            Kind::FillTmp => (30, 60),
            Kind::RestartCtld | Kind::KillHub | Kind::KillWorker => (0, 0),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::KillHost => "host killed",
            Kind::PauseHost => "host paused",
            Kind::CutHost => "host cut from the network",
            Kind::RestartCtld => "slurmctld restarted",
            Kind::StopDbd => "slurmdbd stopped",
            Kind::StallMariadb => "MariaDB stalled",
            Kind::KillHub => "mall-run hub killed",
            Kind::KillWorker => "worker killed",
            Kind::FillTmp => "/tmp filled",
        }
    }
}

/// One fault of the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// From the campaign's start.
    pub at: Duration,
    pub kind: Kind,
    /// The compute host it strikes (an index into the site's hosts), for
    /// the kinds [`Kind::on_a_host`].
    pub host: Option<usize>,
    /// How long until it is undone.
    pub hold: Duration,
}

impl Fault {
    pub fn undone_at(&self) -> Duration {
        self.at + self.hold
    }
}

/// The mean time between two faults: 30 minutes bring about 140, well
/// over the 100 the issue asks of them whatever the seed.
pub const MEAN_GAP: Duration = Duration::from_secs(12);

/// The faults of a `minutes`-long campaign on a site of `hosts` compute
/// hosts, from `seed`. Each kind comes once, in an order of the seed's,
/// before the draws are free; no two faults strike one host at once, nor
/// two the controller's side (a draw that would is given a kind that can
/// go then); every fault is undone before the campaign ends.
pub fn schedule(seed: u64, minutes: u32, hosts: usize) -> Vec<Fault> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6368_616f_735f_7631);
    let end = Duration::from_secs(u64::from(minutes) * 60);
    let mut first: Vec<Kind> = Kind::ALL.to_vec();
    first.shuffle(&mut rng);
    let mut faults: Vec<Fault> = Vec::new();
    let mut at = Duration::ZERO;
    loop {
        at += super::poisson_gap(&mut rng, MEAN_GAP);
        if at >= end {
            break;
        }
        let busy = |f: &Fault| at < f.undone_at() + Duration::from_secs(1);
        let free: Vec<usize> = (0..hosts).filter(|h| !faults.iter().any(|f| f.host == Some(*h) && busy(f))).collect();
        let controller_busy = faults.iter().any(|f| f.kind.on_the_controller() && busy(f));
        let can = |k: Kind| !((k.on_a_host() && free.is_empty()) || (k.on_the_controller() && controller_busy));
        let kind = match first.iter().position(|&k| can(k)) {
            Some(i) => first.remove(i),
            None => {
                let able: Vec<Kind> = Kind::ALL.into_iter().filter(|&k| can(k)).collect();
                able[rng.gen_range(0..able.len())]
            }
        };
        let (least, most) = kind.hold();
        let hold =
            Duration::from_secs(rng.gen_range(least..=most)).min(end.saturating_sub(at + Duration::from_secs(1)));
        let host = kind.on_a_host().then(|| free[rng.gen_range(0..free.len())]);
        faults.push(Fault { at, kind, host, hold });
    }
    faults
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_schedule_and_another_seed_another() {
        assert_eq!(schedule(7, 30, 6), schedule(7, 30, 6));
        assert_ne!(schedule(7, 30, 6), schedule(8, 30, 6));
    }

    #[test]
    fn thirty_minutes_bring_a_hundred_faults_of_every_kind() {
        for seed in 0..20 {
            let s = schedule(seed, 30, 6);
            assert!(s.len() >= 100, "seed {seed}: {} faults", s.len());
            for kind in Kind::ALL {
                assert!(s.iter().any(|f| f.kind == kind), "seed {seed}: no {kind:?}");
            }
        }
    }

    #[test]
    fn no_two_faults_strike_one_host_or_the_controller_at_once_and_all_are_undone_in_time() {
        for seed in 0..20 {
            let s = schedule(seed, 30, 6);
            for (i, a) in s.iter().enumerate() {
                assert!(a.undone_at() < Duration::from_secs(30 * 60), "seed {seed}: {a:?}");
                assert_eq!(a.host.is_some(), a.kind.on_a_host(), "{a:?}");
                assert!(a.host.is_none_or(|h| h < 6), "{a:?}");
                for b in &s[i + 1..] {
                    let overlap = b.at < a.undone_at() + Duration::from_secs(1);
                    let same_host = a.host.is_some() && a.host == b.host;
                    let both_controller = a.kind.on_the_controller() && b.kind.on_the_controller();
                    assert!(!(overlap && (same_host || both_controller)), "seed {seed}: {a:?} and {b:?}");
                }
            }
            assert!(s.windows(2).all(|w| w[0].at < w[1].at), "seed {seed}: out of order");
        }
    }
}
