//! The malleable job options on a real cluster: each accepted in sbatch (on
//! the command line and in #SBATCH lines, in both spellings), salloc and
//! srun, and shown in `scontrol show job`; each bad value and combination
//! refused with its message and nothing queued; and the controller's own
//! check of a spec sent by a client without our SPANK plugin.

use std::process::Command;
use std::time::Duration;

use cluster_tests::malleable::job_field;
use cluster_tests::up;
use slurm::common::refusal::Refusal;
use testcluster::process::output;
use testcluster::{wait, Cluster};

/// A job's SystemComment, once the plugin has published one.
fn status_of(c: &Cluster, id: u32) -> String {
    wait::until(&format!("JobId={id}'s malleable status"), Duration::from_secs(20), || {
        let text = output(c.cmd("scontrol").args(["show", "job", &id.to_string()]))?;
        // SystemComment holds spaces: it runs to the end of its line.
        let line = text.lines().map(str::trim).find_map(|l| l.strip_prefix("SystemComment=")).unwrap_or("");
        match line {
            "" | "(null)" => Err(text),
            _ => Ok(Some(line.to_string())),
        }
    })
    .unwrap()
}

fn job_count(c: &Cluster) -> usize {
    c.jobs().unwrap().len()
}

/// sbatch with these arguments; its output (stdout and stderr) either way.
fn sbatch(c: &Cluster, args: &[&str]) -> (bool, String) {
    let out = c
        .cmd("sbatch")
        .args(["--parsable", "--output=/dev/null", "-t", "1"])
        .args(args)
        .args(["--wrap", "sleep 1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn id_of(out: &str) -> u32 {
    out.trim().lines().last().unwrap().split(';').next().unwrap().parse().unwrap_or_else(|_| panic!("{out}"))
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn each_option_is_taken_in_every_spelling_and_client_and_shown() {
    let c = up("t-options", 4);
    let (ok, out) = sbatch(
        &c,
        &[
            "-N2",
            "--min-nodes-invasive=1",
            "--max-nodes-invasive=4",
            "--node-constraints=pof2",
            "--min-power=150",
            "--max-power=200",
        ],
    );
    assert!(ok, "{out}");
    assert_eq!(status_of(&c, id_of(&out)), "mall1 range=1..4 constraint=pof2 state=steady ack=0 runtime=off");

    let (ok, out) = sbatch(&c, &["-N2", "--min-nodes-invasic=2", "--max-nodes-invasic=3"]);
    assert!(ok, "{out}");
    assert_eq!(status_of(&c, id_of(&out)), "mall1 range=2..3 constraint=none state=steady ack=0 runtime=off");

    // #SBATCH lines; no --nodes: the job starts on the lowest count allowed.
    let script = c.dir.join("elastic.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n#SBATCH --min-nodes-invasive=3\n#SBATCH --max-nodes-invasive=4\n#SBATCH --node-constraints=even\n\
         sleep 1\n",
    )
    .unwrap();
    let out = output(c.cmd("sbatch").args(["--parsable", "--output=/dev/null", "-t", "1"]).arg(&script)).unwrap();
    let id = id_of(&out);
    assert_eq!(status_of(&c, id), "mall1 range=3..4 constraint=even state=steady ack=0 runtime=off");
    assert_eq!(c.job(id).unwrap().num_nodes, 4, "even within 3..4 starts on 4");

    // salloc and srun make jobs too.
    for client in ["salloc", "srun"] {
        let before = job_count(&c);
        let out = c
            .cmd(client)
            .args(["-N1", "-t", "1", "--min-nodes-invasive=1", "--max-nodes-invasive=2", "true"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{client}: {}", String::from_utf8_lossy(&out.stderr));
        let id = c.jobs().unwrap().iter().map(|j| j.id).max().unwrap();
        assert_eq!(job_count(&c), before + 1);
        assert_eq!(status_of(&c, id), "mall1 range=1..2 constraint=none state=steady ack=0 runtime=off", "{client}");
    }

    // Given to an srun inside a job, they are refused: they describe a job,
    // not a step.
    let log = c.dir.join("step.out");
    let id = c
        .sbatch(&[
            &format!("--output={}", log.display()),
            "-t",
            "1",
            "--wrap",
            "srun --min-nodes-invasive=1 --max-nodes-invasive=2 -N1 true; echo srun-exit=$?",
        ])
        .unwrap();
    c.wait_all_finished(&[id], Duration::from_secs(60)).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("the malleable options apply to a job, and this srun starts a step of JobId="), "{text}");
    assert!(!text.contains("srun-exit=0"), "{text}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn bad_values_and_combinations_are_refused_before_anything_is_queued() {
    let c = up("t-badoptions", 4);
    for (args, want) in [
        (&["--min-nodes-invasive=two", "--max-nodes-invasive=4"][..], "--min-nodes-invasive=two is not valid"),
        (&["--min-nodes-invasive=0", "--max-nodes-invasive=4"][..], "--min-nodes-invasive=0 is not valid"),
        (
            &["--min-nodes-invasive=4", "--max-nodes-invasive=2"][..],
            "--min-nodes-invasive=4 is above --max-nodes-invasive=2",
        ),
        (&["--min-nodes-invasive=2"][..], "--min-nodes-invasive=2 given without --max-nodes-invasive"),
        // The paper's earlier spelling is named as typed.
        (&["--max-nodes-invasic=2"][..], "--max-nodes-invasic=2 given without --min-nodes-invasive"),
        (
            &["--min-nodes-invasic=4", "--max-nodes-invasic=2"][..],
            "--min-nodes-invasic=4 is above --max-nodes-invasic=2",
        ),
        (
            &["--min-nodes-invasive=3", "--max-nodes-invasive=3", "--node-constraints=even"][..],
            "--node-constraints=even allows no node count from 3 to 3",
        ),
        (
            &["--node-constraints=prime"][..],
            "--node-constraints=prime is not valid: expected one of pof2|even|odd|ncube|none",
        ),
        (&["--node-constraints=odd"][..], "--node-constraints=odd needs --min-nodes-invasive and --max-nodes-invasive"),
        (&["--min-power=300", "--max-power=200"][..], "--min-power=300 is above --max-power=200"),
        (&["--max-power=-5"][..], "--max-power=-5 is not valid: expected watts per node"),
        // What only the controller knows: the start size and the partition.
        (
            &["-N4", "--min-nodes-invasive=1", "--max-nodes-invasive=2"][..],
            "--nodes=4 is outside --min-nodes-invasive=1",
        ),
        (
            &["--min-nodes-invasive=1", "--max-nodes-invasive=9"][..],
            "--max-nodes-invasive=9 is above the 4 nodes of partition batch",
        ),
        // Checked by the controller, from the job's environment: as typed still.
        (
            &["-N4", "--min-nodes-invasic=1", "--max-nodes-invasic=2"][..],
            "--nodes=4 is outside --min-nodes-invasic=1 .. --max-nodes-invasic=2",
        ),
        (
            &["--min-nodes-invasive=1", "--max-nodes-invasic=9"][..],
            "--max-nodes-invasic=9 is above the 4 nodes of partition batch",
        ),
        // slurmctld takes these only under sched/backfill: said before sending.
        (
            &["-N1", ":", "-N1"][..],
            "heterogeneous jobs (components separated by ':' or '#SBATCH hetjob') are not supported",
        ),
        // An elastic job grows onto whatever is free: never in a row.
        (
            &["-N2", "--contiguous", "--min-nodes-invasive=1", "--max-nodes-invasive=4"][..],
            "--contiguous cannot be combined with --min-nodes-invasive",
        ),
    ] {
        let before = job_count(&c);
        let (ok, out) = sbatch(&c, args);
        assert!(!ok, "{args:?} was accepted: {out}");
        assert!(out.contains(want), "{args:?}: {want:?} not in:\n{out}");
        assert_eq!(job_count(&c), before, "{args:?}: a job was queued");
    }
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn the_controller_refuses_a_bad_spec_from_a_client_without_the_spank_plugin() {
    let c = up("t-rawspec", 2);
    let raw = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_submit_raw"));
        cmd.env("SLURM_CONF", c.conf_path()).args(args);
        let out = cmd.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let before = job_count(&c);
    let (ok, out) = raw(&["1", "MALLEABLE_MIN_NODES=0", "MALLEABLE_MAX_NODES=2"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("MALLEABLE_MIN_NODES=0 in the job's environment: --min-nodes-invasive=0 is not valid"),
        "{out}"
    );
    let (ok, out) = raw(&["1", "MALLEABLE_MIN_NODES=1", "MALLEABLE_MAX_NODES=2", "MALLEABLE_NODE_CONSTRAINTS=cube"]);
    assert!(!ok && out.contains("--node-constraints=cube is not valid"), "{out}");
    assert_eq!(job_count(&c), before, "nothing was queued");
    // A good spec through the same path is taken, and shown.
    let (ok, out) = raw(&["1", "MALLEABLE_MIN_NODES=1", "MALLEABLE_MAX_NODES=2"]);
    assert!(ok, "{out}");
    assert_eq!(
        status_of(&c, out.trim().parse().unwrap()),
        "mall1 range=1..2 constraint=none state=steady ack=0 runtime=off"
    );
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn an_update_that_takes_a_waiting_elastic_job_out_of_its_range_is_refused_and_said() {
    let c = up("t-modify", 4);
    let (ok, out) = sbatch(&c, &["--hold", "-N2", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    assert!(ok, "{out}");
    let id = id_of(&out);
    // A waiting job shows NumNodes=MIN-MAX.
    let num_nodes = || {
        let field = job_field(&c, id, "NumNodes");
        field.split('-').next().unwrap().parse::<u32>().unwrap_or_else(|_| panic!("NumNodes={field}"))
    };
    let update = |n: &str| {
        let o = c.cmd("scontrol").args(["update", &format!("JobId={id}"), &format!("NumNodes={n}")]).output().unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
    };
    let (ok, said) = update("3");
    assert!(!ok, "NumNodes=3 was taken: {said}");
    assert_eq!(num_nodes(), 2);
    let want = "--nodes=3 is outside --min-nodes-invasive=1 .. --max-nodes-invasive=2";
    let refused = c
        .ctld_log()
        .lines()
        .filter_map(Refusal::parse)
        .any(|r| matches!(&r, Refusal::Update(w) if w.starts_with(want)));
    assert!(refused, "{}", c.log_tail("slurmctld.log", 30));
    // 24.11 gave job_modify the err_msg job_submit has, which scontrol
    // prints; 22.05's user sees only that it failed.
    let release = testcluster::SlurmRelease::installed().unwrap();
    if release.version != "22.05" {
        assert!(said.contains(want), "Slurm {}: {want:?} not in: {said}", release.version);
    }
    let (ok, said) = update("1");
    assert!(ok, "NumNodes=1 was refused: {said}");
    assert_eq!(num_nodes(), 1);
}
