//! Whether slurmdbd answers at all, asked every second from a thread of its
//! own: slurmctld learns that slurmdbd went away only when it next sends it
//! something, and a resize may be that something (on 22.05, under its locks).

use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use slurm::ctld::accounting::SlurmdbdAddress;

/// How often slurmdbd is asked.
const EVERY: Duration = Duration::from_secs(1);

/// How long a connection to slurmdbd may take to open.
const CONNECT_WITHIN: Duration = Duration::from_secs(1);

/// slurmdbd that has not answered for this long does not answer, even
/// while the probe still waits (a name that takes seconds to resolve is
/// one of the ways it goes: a compose site's DNS, its host stopped).
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// The probe: a thread started once slurmdbd's address is known, stopped
/// (and waited for) when dropped.
pub struct SlurmdbdProbe {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
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
        let state = State { stop: false, target: None, since: Instant::now(), answered: None, failed: None };
        SlurmdbdProbe { shared: Arc::new(Shared { state: Mutex::new(state), wake: Condvar::new() }), thread: None }
    }
}

impl SlurmdbdProbe {
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
            let shared = self.shared.clone();
            match std::thread::Builder::new().name("slurmdbd-probe".into()).spawn(move || run(&shared)) {
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
fn run(shared: &Shared) {
    loop {
        let target = {
            let s = shared.state.lock();
            if s.stop {
                return;
            }
            s.target.clone()
        };
        let asked = Instant::now();
        let result = target.as_ref().map(ask);
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

/// Whether slurmdbd takes a connection, at its host or its backup: a TCP
/// connection opened and closed at once (slurmdbd reads its end as a
/// client gone, and says nothing at its usual levels).
fn ask(target: &SlurmdbdAddress) -> Result<(), String> {
    let mut why = Vec::new();
    for host in &target.hosts {
        match (host.as_str(), target.port).to_socket_addrs() {
            Err(e) => why.push(format!("{host}:{}: {e}", target.port)),
            Ok(addrs) => {
                for a in addrs {
                    match TcpStream::connect_timeout(&a, CONNECT_WITHIN) {
                        Ok(_) => return Ok(()),
                        Err(e) => why.push(format!("{host}:{} ({a}): {e}", target.port)),
                    }
                }
            }
        }
    }
    Err(why.join("; "))
}

fn shown(target: &SlurmdbdAddress) -> String {
    target.hosts.iter().map(|h| format!("{h}:{}", target.port)).collect::<Vec<_>>().join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

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
        let mut probe = SlurmdbdProbe::default();
        probe.aim(Some(SlurmdbdAddress { hosts: vec!["127.0.0.1".into()], port }));
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
        let mut probe = SlurmdbdProbe::default();
        let nowhere = "slurmdbd.invalid".to_string();
        probe.aim(Some(SlurmdbdAddress { hosts: vec![nowhere.clone(), "127.0.0.1".into()], port }));
        wait_until("answered", || probe.shared.state.lock().answered.is_some());
        assert_eq!(probe.unanswered(), None);
        probe.aim(Some(SlurmdbdAddress { hosts: vec![nowhere], port }));
        wait_until("unanswered", || probe.unanswered().is_some());
        assert!(probe.unanswered().unwrap().starts_with(&format!("slurmdbd.invalid:{port}")));
    }

    #[test]
    fn without_slurmdbd_nothing_is_asked() {
        let mut probe = SlurmdbdProbe::default();
        probe.aim(None);
        assert!(probe.thread.is_none());
        assert_eq!(probe.unanswered(), None);
    }
}
