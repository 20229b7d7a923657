//! Whether slurmdbd answers at all, asked every second from a thread of its
//! own: slurmctld learns that slurmdbd went away only when it next sends it
//! something, and a resize may be that something (on 22.05, under its locks).
//! Asked with slurmdbd's own PersistInit, which a stopped or hung slurmdbd
//! leaves unanswered though the kernel takes its connections.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use slurm::ctld::accounting::SlurmdbdAddress;
use slurm::ctld::slurmdbd_ping::SlurmdbdPing;

/// How often slurmdbd is asked.
const EVERY: Duration = Duration::from_secs(1);

/// How long slurmdbd may take to answer a PersistInit (it answers in
/// milliseconds when well).
const PERSIST_INIT_WITHIN: Duration = Duration::from_secs(2);

/// slurmdbd that has not answered for this long does not answer, even
/// while the probe still waits (a name that takes seconds to resolve is
/// one of the ways it goes: a compose site's DNS, its host stopped).
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// How the probe asks slurmdbd: with its PersistInit in slurmctld
/// ([`PersistInit`]); this file's tests ask a listener of their own, with
/// no Slurm about.
pub trait Ask: Send + 'static {
    fn ask(&mut self, target: &SlurmdbdAddress) -> Result<(), String>;
}

/// The probe: a thread started once slurmdbd's address is known, stopped
/// (and waited for) when dropped.
pub struct SlurmdbdProbe {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    asker: Option<Box<dyn Ask>>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

struct State {
    stop: bool,
    target: Option<SlurmdbdAddress>,
    /// Since when this target is asked.
    since: Instant,
    answered: Option<Instant>,
    failed: Option<(Instant, String)>,
}

impl Default for SlurmdbdProbe {
    fn default() -> Self {
        SlurmdbdProbe::asking(PersistInit::default())
    }
}

impl SlurmdbdProbe {
    /// A probe that asks through `asker`.
    pub fn asking(asker: impl Ask) -> SlurmdbdProbe {
        let state = State { stop: false, target: None, since: Instant::now(), answered: None, failed: None };
        let shared = Arc::new(Shared { state: Mutex::new(state), wake: Condvar::new() });
        SlurmdbdProbe { shared, thread: None, asker: Some(Box::new(asker)) }
    }

    /// Ask slurmdbd at `target` from now on (slurm.conf's, read again after
    /// a reconfigure, which may change it); `None`: ask nothing.
    pub fn aim(&mut self, target: Option<SlurmdbdAddress>) {
        {
            let mut s = self.shared.state.lock();
            if s.target == target {
                return;
            }
            s.target = target.clone();
            s.since = Instant::now();
            s.answered = None;
            s.failed = None;
        }
        self.shared.wake.notify_all();
        if target.is_some() && self.thread.is_none() {
            let Some(mut asker) = self.asker.take() else { return };
            let shared = self.shared.clone();
            match std::thread::Builder::new().name("slurmdbd-probe".into()).spawn(move || run(&shared, &mut *asker)) {
                Ok(t) => self.thread = Some(t),
                Err(e) => log::error!("cannot start the thread that asks whether slurmdbd answers: {e}"),
            }
        }
    }

    /// Why slurmdbd does not answer, if it does not: its last probe failed,
    /// or none has been answered for [`ANSWER_WITHIN`].
    pub fn unanswered(&self) -> Option<String> {
        let s = self.shared.state.lock();
        let target = s.target.as_ref()?;
        // No thread (it could not start): nothing is known, nothing held.
        self.thread.as_ref()?;
        if let Some((at, why)) = &s.failed {
            if s.answered.is_none_or(|ok| ok < *at) {
                return Some(why.clone());
            }
        }
        let last = s.answered.unwrap_or(s.since);
        (last.elapsed() > ANSWER_WITHIN)
            .then(|| format!("{}: no answer for {} s", shown(target), last.elapsed().as_secs()))
    }
}

impl Drop for SlurmdbdProbe {
    fn drop(&mut self) {
        self.shared.state.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                log::error!("the slurmdbd probe's thread ended by a panic");
            }
        }
    }
}

/// The probe's thread: ask, record, wait a second or until stopped.
fn run(shared: &Shared, asker: &mut dyn Ask) {
    loop {
        let target = {
            let s = shared.state.lock();
            if s.stop {
                return;
            }
            s.target.clone()
        };
        let asked = Instant::now();
        let result = target.as_ref().map(|t| asker.ask(t));
        let mut s = shared.state.lock();
        if s.stop {
            return;
        }
        // An answer for a target since replaced says nothing of the new one.
        if s.target == target && s.since <= asked {
            match result {
                Some(Ok(())) => s.answered = Some(Instant::now()),
                Some(Err(why)) => s.failed = Some((Instant::now(), why)),
                None => {}
            }
        }
        let wait = EVERY.saturating_sub(asked.elapsed());
        if !wait.is_zero() {
            shared.wake.wait_for(&mut s, wait);
        }
    }
}

/// slurmdbd asked as slurmctld asks it, at its host, then its backup: a
/// connection opened with its PersistInit, answered, and closed (slurmdbd
/// says so at debug level only). One connection record per host, kept
/// while the target stays.
#[derive(Default)]
pub struct PersistInit {
    pings: Option<(SlurmdbdAddress, Vec<HostPing>)>,
}

/// A host's name and its connection record (or why it has none: a name
/// with a NUL byte in it).
type HostPing = (String, Result<SlurmdbdPing, String>);

impl Ask for PersistInit {
    fn ask(&mut self, target: &SlurmdbdAddress) -> Result<(), String> {
        if self.pings.as_ref().is_none_or(|(t, _)| t != target) {
            let pings = target
                .hosts
                .iter()
                .map(|h| (h.clone(), SlurmdbdPing::new(h, target.port, &target.cluster, PERSIST_INIT_WITHIN)))
                .collect();
            self.pings = Some((target.clone(), pings));
        }
        let mut why = Vec::new();
        for (host, ping) in self.pings.as_mut().map(|(_, p)| p).into_iter().flatten() {
            match ping.as_mut().map_err(|e| e.clone()).and_then(SlurmdbdPing::ask) {
                Ok(()) => return Ok(()),
                Err(e) => why.push(format!("{host}:{}: {e}", target.port)),
            }
        }
        Err(why.join("; "))
    }
}

fn shown(target: &SlurmdbdAddress) -> String {
    target.hosts.iter().map(|h| format!("{h}:{}", target.port)).collect::<Vec<_>>().join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream, ToSocketAddrs};

    /// A TCP connection opened and closed, to a listener of the test's: the
    /// probe's thread and its reading of answers, without Slurm.
    struct Connect;

    impl Ask for Connect {
        fn ask(&mut self, target: &SlurmdbdAddress) -> Result<(), String> {
            let mut why = Vec::new();
            for host in &target.hosts {
                match (host.as_str(), target.port).to_socket_addrs() {
                    Err(e) => why.push(format!("{host}:{}: {e}", target.port)),
                    Ok(addrs) => {
                        for a in addrs {
                            match TcpStream::connect_timeout(&a, Duration::from_secs(1)) {
                                Ok(_) => return Ok(()),
                                Err(e) => why.push(format!("{host}:{} ({a}): {e}", target.port)),
                            }
                        }
                    }
                }
            }
            Err(why.join("; "))
        }
    }

    /// Answers until told to hang, then waits for ever (a slurmdbd stopped
    /// with its port still taking connections).
    struct Hangs(Arc<std::sync::atomic::AtomicBool>);

    impl Ask for Hangs {
        fn ask(&mut self, _: &SlurmdbdAddress) -> Result<(), String> {
            while self.0.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(())
        }
    }

    fn at(hosts: &[&str], port: u16) -> Option<SlurmdbdAddress> {
        Some(SlurmdbdAddress { hosts: hosts.iter().map(|h| h.to_string()).collect(), port, cluster: "c".into() })
    }

    fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !f() {
            assert!(Instant::now() < deadline, "not within 10 s: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn slurmdbd_that_listens_answers_and_one_gone_does_not_saying_where() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut probe = SlurmdbdProbe::asking(Connect);
        probe.aim(at(&["127.0.0.1"], port));
        wait_until("answered", || probe.shared.state.lock().answered.is_some());
        assert_eq!(probe.unanswered(), None);
        drop(listener);
        wait_until("unanswered", || probe.unanswered().is_some());
        let why = probe.unanswered().unwrap();
        assert!(why.contains(&format!("127.0.0.1:{port}")) && why.contains("refused"), "{why}");
        // Back, at the same port: answered again.
        let _back = TcpListener::bind(("127.0.0.1", port)).unwrap();
        wait_until("answered again", || probe.unanswered().is_none());
    }

    #[test]
    fn a_backup_that_answers_is_enough_and_a_name_that_does_not_resolve_is_said() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut probe = SlurmdbdProbe::asking(Connect);
        probe.aim(at(&["slurmdbd.invalid", "127.0.0.1"], port));
        wait_until("answered", || probe.shared.state.lock().answered.is_some());
        assert_eq!(probe.unanswered(), None);
        probe.aim(at(&["slurmdbd.invalid"], port));
        wait_until("unanswered", || probe.unanswered().is_some());
        assert!(probe.unanswered().unwrap().starts_with(&format!("slurmdbd.invalid:{port}")));
    }

    #[test]
    fn an_ask_that_never_returns_is_no_answer_after_three_seconds() {
        let hang = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut probe = SlurmdbdProbe::asking(Hangs(hang.clone()));
        probe.aim(at(&["slurmdbd"], 6819));
        wait_until("answered", || probe.shared.state.lock().answered.is_some());
        hang.store(true, std::sync::atomic::Ordering::SeqCst);
        let asked = Instant::now();
        wait_until("unanswered", || probe.unanswered().is_some());
        assert!(asked.elapsed() >= ANSWER_WITHIN - Duration::from_secs(1), "{:?}", asked.elapsed());
        let why = probe.unanswered().unwrap();
        assert!(why.starts_with("slurmdbd:6819: no answer for "), "{why}");
        hang.store(false, std::sync::atomic::Ordering::SeqCst);
        wait_until("answered again", || probe.unanswered().is_none());
    }

    #[test]
    fn without_slurmdbd_nothing_is_asked() {
        let mut probe = SlurmdbdProbe::asking(Connect);
        probe.aim(None);
        assert!(probe.thread.is_none());
        assert_eq!(probe.unanswered(), None);
    }
}
