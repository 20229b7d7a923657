//! The application's workers as Slurm job steps: one `srun` a worker, on
//! one node, so a worker on a leaving node ends with its own step and the
//! others' steps never notice. Each srun is waited for on a thread of its
//! own, which tells the hub how it ended; stopping ends the sruns still
//! running (SIGTERM, which srun passes to its tasks, then SIGKILL).

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use malleable_rt::worker::{ENV_HUB, ENV_TOKEN, ENV_WORKER};
use rustix::process::{kill_process, Pid, Signal};

use crate::hub::{Input, WorkerId};

pub struct Steps {
    job: u32,
    app: Vec<String>,
    hub: String,
    token: String,
    running: Arc<Mutex<HashMap<WorkerId, u32>>>,
}

impl Steps {
    pub fn new(job: u32, app: Vec<String>, hub: String, token: String) -> Steps {
        Steps { job, app, hub, token, running: Arc::default() }
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
        let mut child = match srun.spawn() {
            Ok(c) => c,
            Err(e) => {
                let how = format!("cannot start srun: {e}");
                let _ = events.send(Input::StepExited { worker, success: false, how });
                return;
            }
        };
        self.running.lock().expect("steps lock").insert(worker, child.id());
        let running = Arc::clone(&self.running);
        let node = node.to_string();
        std::thread::spawn(move || {
            let (success, how) = match child.wait() {
                Ok(s) if s.success() => (true, "exit 0".to_string()),
                Ok(s) => (false, format!("srun on {node} ended with {s}")),
                Err(e) => (false, format!("waiting for srun on {node}: {e}")),
            };
            running.lock().expect("steps lock").remove(&worker);
            let _ = events.send(Input::StepExited { worker, success, how });
        });
    }

    /// End every step still running, waiting up to `grace` for them.
    pub fn stop_all(&self, grace: Duration) {
        let signal = |sig: Signal| {
            for &pid in self.running.lock().expect("steps lock").values() {
                if let Some(pid) = Pid::from_raw(pid as i32) {
                    let _ = kill_process(pid, sig);
                }
            }
        };
        signal(Signal::TERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if self.running.lock().expect("steps lock").is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal(Signal::KILL);
    }
}
