//! The application's workers as Slurm job steps: one `srun` a worker, on
//! one node, so a worker on a leaving node ends with its own step and the
//! others' steps never notice; in restart mode one `srun` (an MPI step)
//! for all of them. Each srun is waited for on a thread of its own, which
//! tells the hub how it ended; stopping ends the sruns still running
//! (SIGTERM, which srun passes to its tasks, then SIGKILL).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use malleable_model::slurm_lines::SlurmLine;
use malleable_rt::worker::{ENV_HUB, ENV_TOKEN, ENV_WORKER, ENV_WORKER_BASE};
use rustix::process::{kill_process, Pid, Signal};

use crate::hub::{Input, WorkerId};

/// What the batch step's environment says of the job's size at its start,
/// stale once the job has been resized (Slurm's answer is the resize
/// script a job sources, slurm_job_J_resize.sh): srun takes the allocation
/// from SLURM_JOB_NODELIST when set, and refuses a step on more nodes than
/// it names ("Only allocated 1 nodes asked for 4"). Without them srun asks
/// slurmctld for the job's nodes.
const SIZE_AT_START: &[&str] = &[
    "SLURM_JOB_NODELIST",
    "SLURM_NODELIST",
    "SLURM_JOB_NUM_NODES",
    "SLURM_NNODES",
    "SLURM_TASKS_PER_NODE",
    "SLURM_JOB_CPUS_PER_NODE",
    "SLURM_NTASKS",
    "SLURM_NPROCS",
];

/// How long a restart-mode step waits for the last one to be released
/// ([`Steps::wait_for_earlier_steps`]): its nodes report its end within a
/// second or two; after this the step is asked for anyway.
const EARLIER_STEPS_WAIT: Duration = Duration::from_secs(10);

pub struct Steps {
    job: u32,
    app: Vec<String>,
    hub: String,
    token: String,
    /// srun's `--mpi` for a restart-mode step (else slurm.conf's MpiDefault).
    mpi_plugin: Option<String>,
    per_node: usize,
    running: Arc<Mutex<HashMap<WorkerId, u32>>>,
}

impl Steps {
    pub fn new(job: u32, app: Vec<String>, hub: String, token: String) -> Steps {
        Steps { job, app, hub, token, mpi_plugin: None, per_node: 1, running: Arc::default() }
    }

    /// Restart mode's steps: `per_node` tasks a node, with srun's `--mpi=plugin`.
    pub fn for_mpi(mut self, plugin: Option<String>, per_node: usize) -> Steps {
        self.mpi_plugin = plugin;
        self.per_node = per_node;
        self
    }

    /// Start one step of `per_node` workers on each of `nodes` (an MPI
    /// application's), numbered from `first` by rank; each one's end is
    /// sent to `events` when the step ends.
    pub fn launch_step(&self, first: WorkerId, nodes: &[String], joining: u64, events: Sender<Input>) {
        self.wait_for_earlier_steps(EARLIER_STEPS_WAIT);
        let tasks = nodes.len() * self.per_node;
        let mut srun = Command::new("srun");
        srun.arg(format!("--jobid={}", self.job))
            .arg(format!("--nodes={}", nodes.len()))
            .arg(format!("--ntasks={tasks}"))
            .arg(format!("--ntasks-per-node={}", self.per_node))
            .arg(format!("--nodelist={}", nodes.join(",")))
            // One rank failing ends the step: MPI cannot go on without it.
            .args(["--kill-on-bad-exit=1", "--quiet"]);
        if let Some(p) = &self.mpi_plugin {
            srun.arg(format!("--mpi={p}"));
        }
        srun.args(&self.app)
            .env(ENV_HUB, &self.hub)
            .env(ENV_TOKEN, &self.token)
            .env(ENV_WORKER_BASE, first.to_string())
            .env_remove(ENV_WORKER)
            .env("MALL_JOINING", joining.to_string())
            .stdin(Stdio::null());
        for var in SIZE_AT_START {
            srun.env_remove(var);
        }
        let ids: Vec<WorkerId> = (first..first + tasks as WorkerId).collect();
        let what = format!("srun on {}", nodes.join(","));
        self.spawn_and_wait(srun, ids, what, events);
    }

    /// Wait until slurmctld holds none of the job's application steps
    /// (restart mode's last one: its srun has ended, but its nodes may not
    /// have told slurmctld yet), `longest` at most, or until squeue cannot
    /// tell. A step asked for while the last one still holds the CPUs it
    /// needs waits in slurmctld, and srun then polls for a minute unless
    /// slurmctld wakes it, which it does at the address of srun's short
    /// hostname: where that names no node or another one (nodes that share
    /// a hostname, as the host rig's did until each had its own), the wake
    /// is lost and the adaptation times out.
    fn wait_for_earlier_steps(&self, longest: Duration) {
        let deadline = Instant::now() + longest;
        loop {
            let listed = Command::new("squeue")
                .args(["-h", "-s", "-j", &self.job.to_string(), "-o", "%i"])
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output();
            let held = match listed {
                Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).lines().any(is_application_step),
                _ => false,
            };
            if !held || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Start worker `worker` on `node`; its end is sent to `events`.
    pub fn launch(&self, worker: WorkerId, node: &str, joining: u64, events: Sender<Input>) {
        let mut srun = Command::new("srun");
        srun.arg(format!("--jobid={}", self.job))
            .args(["--nodes=1", "--ntasks=1", "--kill-on-bad-exit=0", "--quiet"])
            .arg(format!("--nodelist={node}"))
            .args(&self.app)
            .env(ENV_HUB, &self.hub)
            .env(ENV_TOKEN, &self.token)
            .env(ENV_WORKER, worker.to_string())
            .env("MALL_JOINING", joining.to_string())
            .stdin(Stdio::null());
        self.spawn_and_wait(srun, vec![worker], format!("srun on {node}"), events);
    }

    /// Run `srun` for `workers`; when it ends, each one's end goes to `events`.
    /// srun's stderr (its own words and the tasks') passes through here:
    /// a task slurmstepd could not launch is said there, and srun exits 0
    /// all the same (22.05: chaos run 16's JobId=99, its step's pmix socket
    /// taken), which would pass for an application that never used the
    /// runtime and ended well.
    fn spawn_and_wait(&self, mut srun: Command, workers: Vec<WorkerId>, what: String, events: Sender<Input>) {
        srun.stderr(Stdio::piped());
        let mut child = match srun.spawn() {
            Ok(c) => c,
            Err(e) => {
                for worker in workers {
                    let how = format!("cannot start srun: {e}");
                    let _ = events.send(Input::StepExited { worker, success: false, how });
                }
                return;
            }
        };
        let mut running = self.running.lock().expect("steps lock");
        for w in &workers {
            running.insert(*w, child.id());
        }
        drop(running);
        let running = Arc::clone(&self.running);
        let launch_failed = child.stderr.take().map(pass_stderr);
        std::thread::spawn(move || {
            let waited = child.wait();
            // Said at the launch, read by now; else its stderr ends with it
            // (a process it left holding it waits no longer than this).
            let failed = launch_failed.and_then(|r| r.recv_timeout(Duration::from_secs(2)).ok().flatten());
            let (success, how) = match (waited, failed) {
                (Ok(_), Some(line)) => (false, format!("{what}: {line}")),
                (Ok(s), None) if s.success() => (true, "exit 0".to_string()),
                (Ok(s), None) => (false, format!("{what} ended with {s}")),
                (Err(e), _) => (false, format!("waiting for {what}: {e}")),
            };
            let mut r = running.lock().expect("steps lock");
            for w in &workers {
                r.remove(w);
            }
            drop(r);
            for worker in workers {
                let _ = events.send(Input::StepExited { worker, success, how: how.clone() });
            }
        });
    }

    /// End `worker`'s step: SIGTERM to its srun (which cancels the step),
    /// SIGKILL if it still runs `grace` later. Its end is told as usual.
    pub fn end(&self, worker: WorkerId, grace: Duration) {
        let Some(pid) = self.running.lock().expect("steps lock").get(&worker).copied() else { return };
        let running = Arc::clone(&self.running);
        std::thread::spawn(move || terminate(&running, &[pid], grace));
    }

    /// End every step still running, waiting up to `grace` for them.
    pub fn stop_all(&self, grace: Duration) {
        let mut pids: Vec<u32> = self.running.lock().expect("steps lock").values().copied().collect();
        // A restart-mode step's workers share one srun.
        pids.sort_unstable();
        pids.dedup();
        terminate(&self.running, &pids, grace);
    }
}

/// Whether a step id as squeue prints it (`12.0`, `12.batch`, `12.extern`)
/// is an application's step: numbered.
fn is_application_step(id: &str) -> bool {
    id.trim().split_once('.').is_some_and(|(_, step)| step.parse::<u32>().is_ok())
}

/// SIGTERM to each of `pids` (sruns), then SIGKILL to those still in
/// `running` after `grace`.
fn terminate(running: &Mutex<HashMap<WorkerId, u32>>, pids: &[u32], grace: Duration) {
    let signal = |pid: u32, sig: Signal| {
        if let Some(pid) = Pid::from_raw(pid as i32) {
            let _ = kill_process(pid, sig);
        }
    };
    let still = |pid: &u32| running.lock().expect("steps lock").values().any(|p| p == pid);
    for &pid in pids {
        signal(pid, Signal::TERM);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if !pids.iter().any(still) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in pids.iter().filter(|p| still(p)) {
        signal(*pid, Signal::KILL);
    }
}

/// Copy an srun's stderr to this process's as it comes, line by line (its
/// bytes as they are). Sent: the first line in which srun says a task could
/// not be launched, as soon as it is read (srun says it at the launch), or
/// None once the stderr ends without one.
fn pass_stderr(from: impl Read + Send + 'static) -> Receiver<Option<String>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(from);
        let mut line = Vec::new();
        let mut said = false;
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            let _ = std::io::stderr().write_all(&line);
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end();
            if !said && matches!(SlurmLine::parse(text), Some(SlurmLine::TaskLaunchFailed { .. })) {
                said = true;
                let _ = tx.send(Some(text.to_string()));
            }
            line.clear();
        }
        let _ = tx.send(None);
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_numbered_steps_are_the_applications() {
        assert!(is_application_step("12.0"));
        assert!(is_application_step(" 12.17\n"));
        for id in ["12.batch", "12.extern", "12.interactive", "12", ""] {
            assert!(!is_application_step(id), "{id}");
        }
    }

    #[test]
    fn a_launch_srun_says_failed_is_seen_and_every_line_passed_on() {
        let out = "rank 0 says hello\nsrun: error: task 0 launch failed: Unspecified error\nmore\n";
        let rx = pass_stderr(std::io::Cursor::new(out.as_bytes().to_vec()));
        let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(first.as_deref(), Some("srun: error: task 0 launch failed: Unspecified error"));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), None, "then its end");
        let rx = pass_stderr(std::io::Cursor::new(b"srun: error: Node failure on c2\n\xff\n".to_vec()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), None, "no launch failed");
    }
}
