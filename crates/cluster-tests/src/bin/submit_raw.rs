//! Submits a batch job from a request built by hand, through Slurm's client
//! API and without sbatch or any SPANK plugin: what a client that skips our
//! option checks could send. The real-cluster tests use it to show the
//! controller checks a job's malleable options itself.
//!
//!   submit_raw NODES [NAME=VALUE ...]   the SPANK environment to send
//!
//! Prints the job id; on refusal exits 1 (Slurm prints its message).

fn main() {
    slurm::client::init();
    let mut args = std::env::args().skip(1);
    let nodes = args.next().and_then(|n| n.parse::<u32>().ok()).unwrap_or_else(|| {
        eprintln!("usage: submit_raw NODES [NAME=VALUE ...]");
        std::process::exit(2)
    });
    let req = slurm::client::BatchRequest {
        name: "raw".into(),
        script: "#!/bin/sh\nsleep 1\n".into(),
        nodes,
        time_limit_minutes: 1,
        spank_env: args.collect(),
    };
    match slurm::client::submit_batch(&req) {
        Ok(id) => println!("{id}"),
        Err(e) => {
            eprintln!("submit_raw: {e}");
            std::process::exit(1)
        }
    }
}
