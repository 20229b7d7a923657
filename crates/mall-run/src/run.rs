//! mall-run's driver: the hub's socket (one reader thread a worker), the
//! channel to slurmctld on its thread, the workers' steps, and one loop
//! that feeds the hub every event and carries out what it says.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use malleable_model::runtime_msg::Request;
use malleable_model::JobId;
use malleable_rt::wire::Frame;

use crate::channel::{Channel, Polling};
use crate::hub::{ConnId, Hub, Input, Output, Rules};
use crate::steps::Steps;

/// How the driver runs, from mall-run's options.
pub struct Settings {
    pub job: u32,
    pub nodes: Vec<String>,
    pub app: Vec<String>,
    pub rules: Rules,
    pub polling: Polling,
    /// The name workers reach this host by.
    pub hub_host: String,
    /// srun's `--mpi` for restart mode's steps.
    pub mpi_plugin: Option<String>,
}

type Writers = Arc<Mutex<HashMap<ConnId, TcpStream>>>;

fn say(line: &str) {
    eprintln!("mall-run: {line}");
}

/// A token only the job's processes learn (it is in their environment,
/// which only the job's owner and root can read).
fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes for the hub's token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Accept workers; each connection's frames become events.
fn serve(listener: TcpListener, writers: Writers, events: Sender<Input>) {
    let next = AtomicU64::new(1);
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let id = next.fetch_add(1, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let Ok(write_half) = stream.try_clone() else { continue };
        writers.lock().expect("writers lock").insert(id, write_half);
        let events = events.clone();
        std::thread::spawn(move || {
            let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
            let mut reader = BufReader::new(stream);
            loop {
                match Frame::read_from(&mut reader) {
                    Ok(Some(f)) => {
                        if events.send(Input::Frame(id, f)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                        say(&format!("a connection from {peer} sent what does not read, closing it: {e}"));
                        break;
                    }
                    // A worker killed with its node, say: its end is handled.
                    Err(_) => break,
                }
            }
            let _ = events.send(Input::Closed(id));
        });
    }
}

/// Run the application until it ends; the exit code.
pub fn run(s: Settings) -> Result<i32, String> {
    let listener = TcpListener::bind("0.0.0.0:0").map_err(|e| format!("cannot open the hub's socket: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let hub_addr = format!("{}:{port}", s.hub_host);
    let token = new_token()?;
    let (events, inbox) = mpsc::channel::<Input>();
    let writers: Writers = Arc::default();
    {
        let (writers, events) = (Arc::clone(&writers), events.clone());
        std::thread::spawn(move || serve(listener, writers, events));
    }
    let (tell, requests) = mpsc::channel::<Request>();
    {
        let channel = Channel::new(s.job, s.polling, events.clone());
        std::thread::spawn(move || channel.run(requests));
    }
    let steps =
        Steps::new(s.job, s.app.clone(), hub_addr.clone(), token.clone()).for_mpi(s.mpi_plugin, s.rules.per_node);
    say(&format!("hub at {hub_addr}; starting {} on {}", s.app.join(" "), s.nodes.join(",")));
    let (mut hub, first) = Hub::new(JobId(s.job), token, &s.nodes, s.rules);
    let mut exit = None;
    let carry_out = |outputs: Vec<Output>, exit: &mut Option<i32>| {
        for o in outputs {
            match o {
                Output::Reply(conn, frame) => {
                    let w = writers.lock().expect("writers lock").get(&conn).and_then(|s| s.try_clone().ok());
                    if let Some(w) = w {
                        // A worker gone meanwhile: its Closed event follows.
                        let _ = frame.write_to(&mut BufWriter::new(w));
                    }
                }
                Output::Close(conn) => {
                    if let Some(w) = writers.lock().expect("writers lock").remove(&conn) {
                        let _ = w.shutdown(Shutdown::Both);
                    }
                }
                Output::Launch { worker, node, joining } => steps.launch(worker, &node, joining, events.clone()),
                Output::LaunchStep { first, nodes, joining } => {
                    steps.launch_step(first, &nodes, joining, events.clone())
                }
                Output::EndStep { worker } => steps.end(worker, Duration::from_secs(10)),
                Output::Tell(r) => {
                    let _ = tell.send(r);
                }
                Output::Log(line) => say(&line),
                Output::Exit(code) => *exit = Some(code),
            }
        }
    };
    carry_out(first, &mut exit);
    let tick = Duration::from_millis(100);
    let mut last_tick = Instant::now();
    while exit.is_none() {
        let input = match inbox.recv_timeout(tick) {
            Ok(i) => i,
            Err(RecvTimeoutError::Timeout) => Input::Tick,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let mut outputs = hub.handle(input);
        if last_tick.elapsed() >= tick {
            last_tick = Instant::now();
            outputs.extend(hub.handle(Input::Tick));
        }
        carry_out(outputs, &mut exit);
    }
    // The BYE told on the way out reaches the scheduler before we go.
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match inbox.recv_timeout(left) {
            Ok(Input::Answered { request: Request::Bye { .. }, .. }) | Err(_) => break,
            Ok(_) => {}
        }
    }
    steps.stop_all(Duration::from_secs(10));
    Ok(exit.unwrap_or(1))
}
