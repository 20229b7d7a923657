//! The chaos campaign's job stream: who submits what, when, drawn from a
//! seed alone. Rigid, elastic, MPI restart-mode and array jobs from the
//! site's users, `--no-kill` or not, some in the high QOS.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The users that submit: the compose site's (its image makes them).
pub const USERS: [&str; 2] = ["alice", "bob"];

/// What a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// `sleep` on a fixed number of hosts.
    Rigid,
    /// mall-example under mall-run, resized by the scheduler.
    Elastic,
    /// The C Jacobi (Open MPI) under `mall-run --mpi restart`.
    MpiRestart,
    /// An array of four `sleep` tasks of one host each.
    Array,
}

impl Shape {
    pub const ALL: [Shape; 4] = [Shape::Rigid, Shape::Elastic, Shape::MpiRestart, Shape::Array];

    /// How the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Rigid => "rigid",
            Shape::Elastic => "elastic",
            Shape::MpiRestart => "mpi-restart",
            Shape::Array => "array",
        }
    }

    /// Whether its application's result is checked against the same one
    /// run alone.
    pub fn computes(self) -> bool {
        matches!(self, Shape::Elastic | Shape::MpiRestart)
    }
}

/// The applications' sizes: few, so that each is run alone once to
/// compare with (`mall-example --serial`, the Jacobi's `--serial`).
pub const ELASTIC_ARGS: [&str; 2] = [
    "--cells 8192 --iterations 600 --unit-us 25 --checkpoint-every 10",
    "--cells 8192 --iterations 1200 --unit-us 25 --checkpoint-every 10",
];
pub const JACOBI_ARGS: [&str; 2] = [
    "--rows 240 --cols 48 --iterations 600 --unit-us 400 --checkpoint-every 5",
    "--rows 240 --cols 48 --iterations 1200 --unit-us 400 --checkpoint-every 5",
];

/// One job of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// From the campaign's start.
    pub at: Duration,
    pub user: &'static str,
    pub shape: Shape,
    /// Hosts at the start (each array task: one).
    pub nodes: u32,
    /// Elastic and MPI jobs: the most they may grow to.
    pub max_nodes: u32,
    pub no_kill: bool,
    pub high_qos: bool,
    /// Rigid and array jobs: how long each sleeps.
    pub sleep_s: u32,
    /// Elastic and MPI jobs: the application's arguments.
    pub app_args: &'static str,
    pub time_limit_min: u32,
}

impl Planned {
    /// The batch script its user submits (`sbatch SCRIPT`, the options in
    /// it); its output goes to `chaos-<id>.out` in the user's home.
    pub fn script(&self) -> String {
        let mut head = format!("#SBATCH -N{} --time={} --output=chaos-%j.out", self.nodes, self.time_limit_min);
        if self.no_kill {
            head.push_str(" --no-kill");
        }
        if self.high_qos {
            head.push_str(" --qos=high");
        }
        if self.shape.computes() {
            head.push_str(&format!(" --min-nodes-invasive=1 --max-nodes-invasive={}", self.max_nodes));
        }
        if self.shape == Shape::Array {
            head.push_str(" --array=1-4");
        }
        let body = match self.shape {
            Shape::Rigid | Shape::Array => format!("srun sleep {}", self.sleep_s),
            Shape::Elastic => format!("mall-run -- mall-example {}", self.app_args),
            Shape::MpiRestart => {
                format!("mall-run --mpi restart --mpi-plugin pmix -- mall-jacobi-openmpi {}", self.app_args)
            }
        };
        format!("#!/bin/sh\n{head}\n{body}\n")
    }

    /// What prints the checksum its application's output must carry: the
    /// same application run alone (`--serial`), on the login host.
    pub fn serial(&self) -> Option<Vec<&'static str>> {
        let program = match self.shape {
            Shape::Elastic => "mall-example",
            Shape::MpiRestart => "mall-jacobi-openmpi",
            Shape::Rigid | Shape::Array => return None,
        };
        let mut cmd = vec![program, "--serial"];
        cmd.extend(self.app_args.split(' '));
        Some(cmd)
    }
}

/// The mean time between two submissions.
pub const MEAN_GAP: Duration = Duration::from_secs(20);

/// The jobs of a `minutes`-long campaign on `hosts` compute hosts, from
/// `seed`: each shape once, in the first four, then drawn (elastic and MPI
/// jobs as often as the two others together); submissions stop a quarter
/// of the way before the end, so the last have time to run.
pub fn stream(seed: u64, minutes: u32, hosts: u32) -> Vec<Planned> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6368_616f_735f_6a62);
    let stop = Duration::from_secs(u64::from(minutes) * 45);
    let mut jobs = Vec::new();
    let mut at = Duration::ZERO;
    while at < stop {
        let shape = match jobs.len() {
            n if n < Shape::ALL.len() => Shape::ALL[n],
            _ => Shape::ALL[[0, 1, 1, 2, 2, 3][rng.gen_range(0..6)]],
        };
        let user = USERS[rng.gen_range(0..USERS.len())];
        let (nodes, max_nodes) = match shape {
            Shape::Rigid => (rng.gen_range(1..=3.min(hosts)), 0),
            Shape::Array => (1, 0),
            Shape::Elastic | Shape::MpiRestart => (rng.gen_range(1..=2.min(hosts)), hosts.min(4)),
        };
        let app_args = match shape {
            Shape::Elastic => ELASTIC_ARGS[rng.gen_range(0..ELASTIC_ARGS.len())],
            Shape::MpiRestart => JACOBI_ARGS[rng.gen_range(0..JACOBI_ARGS.len())],
            _ => "",
        };
        jobs.push(Planned {
            at,
            user,
            shape,
            nodes,
            max_nodes,
            // Elastic and MPI jobs mostly outlive their hosts; a few are
            // killed with them, as stock does without --no-kill.
            no_kill: rng.gen_bool(if shape.computes() { 0.8 } else { 0.3 }),
            high_qos: rng.gen_bool(0.15),
            sleep_s: rng.gen_range(10..=60),
            app_args,
            time_limit_min: 10,
        });
        at += super::poisson_gap(&mut rng, MEAN_GAP);
    }
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_stream_and_another_seed_another() {
        assert_eq!(stream(3, 5, 6), stream(3, 5, 6));
        assert_ne!(stream(3, 5, 6), stream(4, 5, 6));
    }

    #[test]
    fn five_minutes_bring_every_shape_user_and_option() {
        for seed in 0..20 {
            let s = stream(seed, 5, 6);
            for shape in Shape::ALL {
                assert!(s.iter().any(|j| j.shape == shape), "seed {seed}: no {shape:?}");
            }
            let both_kills = s.iter().any(|j| j.no_kill) && s.iter().any(|j| !j.no_kill);
            assert!(both_kills, "seed {seed}: --no-kill and default jobs");
            assert!(s.iter().any(|j| j.shape.computes() && j.no_kill), "seed {seed}");
            assert!(s.iter().all(|j| j.at < Duration::from_secs(5 * 45)), "seed {seed}");
        }
        // Over a longer campaign, every user and the high QOS come too.
        let s = stream(0, 30, 6);
        for user in USERS {
            assert!(s.iter().any(|j| j.user == user), "no job of {user}");
        }
        assert!(s.iter().any(|j| j.high_qos));
    }

    #[test]
    fn each_shape_is_submitted_with_its_options_and_compared_with_its_application_alone() {
        let s = stream(5, 30, 6);
        let of = |shape: Shape| s.iter().find(|j| j.shape == shape).unwrap();
        let elastic = of(Shape::Elastic);
        let text = elastic.script();
        assert!(text.starts_with("#!/bin/sh\n#SBATCH -N"), "{text}");
        assert!(text.contains(&format!("--max-nodes-invasive={}", elastic.max_nodes)), "{text}");
        assert!(text.contains(&format!("mall-run -- mall-example {}", elastic.app_args)), "{text}");
        assert_eq!(elastic.serial().unwrap()[..2], ["mall-example", "--serial"]);
        let mpi = of(Shape::MpiRestart).script();
        assert!(mpi.contains("mall-run --mpi restart --mpi-plugin pmix -- mall-jacobi-openmpi --rows"), "{mpi}");
        assert!(of(Shape::Array).script().contains("--array=1-4"));
        assert_eq!(of(Shape::Rigid).serial(), None);
        for j in &s {
            let text = j.script();
            assert_eq!(text.contains("--no-kill"), j.no_kill, "{text}");
            assert_eq!(text.contains("--qos=high"), j.high_qos, "{text}");
        }
    }

    #[test]
    fn sizes_fit_the_site_and_applications_have_their_arguments() {
        for j in stream(1, 30, 2) {
            assert!(j.nodes >= 1 && j.nodes <= 2, "{j:?}");
            assert_eq!(j.max_nodes > 0, j.shape.computes(), "{j:?}");
            assert!(j.max_nodes <= 2 && (j.max_nodes == 0 || j.max_nodes >= j.nodes), "{j:?}");
            assert_eq!(j.app_args.is_empty(), !j.shape.computes(), "{j:?}");
        }
    }
}
