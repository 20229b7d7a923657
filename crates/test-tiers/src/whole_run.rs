//! `cargo xtask test`: everything, each step's time said: set-up and plugin
//! build; then, while the other releases' Slurm, images and tiers are built
//! beside (beside.rs), formatting and lints, the import rules, a
//! SPANK-only build without the Slurm source tree, unit and property tests,
//! the symbol check and the real-cluster tests (marked #[ignore] so that a
//! plain `cargo test` never needs root, Docker or a cluster; three at a
//! time), the host's compose tests (two sites at a time) and the evaluation
//! commands' short forms, a short fault campaign beside those; then the
//! other releases' tiers (release_tests), 26.05's compose tests beside
//! them. It ends with one line that counts every test.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use testcluster::process::run;

use crate::cargo_tests::{exact, nextest, run_nextest, run_tests, TestCounts};
use crate::Result;

/// One of the evaluation commands' short forms, run as a test.
pub type Run = Box<dyn Fn() -> Result<()>>;

/// Every test; `evaluations` last, as main.rs lists them (the commands'
/// short forms, which this file does not import).
pub fn run_all(root: &Path, evaluations: Vec<(&'static str, Run)>) -> Result<()> {
    let t = Instant::now();
    provision::build::build_plugins(root)?;
    // The compose site's tests make its image with debootstrap.
    provision::apt::ensure(&["debootstrap", "docker-compose"])?;
    said_took(root, "set-up and plugin build", t);
    // The other releases' Slurm, images, plugins and tests are built
    // meanwhile, the longest part of a fresh machine's run (about 24
    // minutes on 2 cores): the host's tests mostly wait on daemons, and a
    // build container yields the CPUs to them (`Container::command`).
    let beside = crate::beside::OtherReleases::start(root);
    let window = Instant::now();
    let tree = provision::host::source_tree(root);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let cargo_in = |tree: &Path| {
        let mut c = Command::new(&cargo);
        c.current_dir(root).env("SLURM_SRC_DIR", tree);
        c
    };

    let t = Instant::now();
    run(Command::new(&cargo).current_dir(root).args(["fmt", "--all", "--check"]))
        .map_err(|e| format!("{e}: the tree is not formatted as rustfmt.toml says; run `cargo fmt --all`"))?;
    run(cargo_in(&tree).args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))
        .map_err(|e| format!("{e}: clippy has warnings (the workspace denies them)"))?;
    said_took(root, "cargo fmt --check and clippy", t);

    let t = Instant::now();
    import_rules::check(root).map_err(|broken| format!("the import rules are broken:\n  {}", broken.join("\n  ")))?;
    // The SPANK room needs the public headers only: prove it with a tree
    // that does not exist.
    run(cargo_in(Path::new("/nonexistent-slurm-source-tree")).args([
        "build",
        "-p",
        "slurm",
        "--no-default-features",
        "--features",
        "spank",
    ]))
    .map_err(|e| format!("{e}: a SPANK-only build must not need the Slurm source tree"))?;
    said_took(root, "import rules and the SPANK-only build", t);

    let mut total = TestCounts::default();
    let t = Instant::now();
    let unit = run_tests(cargo_in(&tree).args(["test", "--workspace", "--no-fail-fast"]));
    said_took(root, "unit and property tests", t);
    total.add(unit?);
    // The real-cluster tests, three at a time (they mostly wait on
    // daemons: 880 s of tests in 298 s here), and then the host's compose
    // tests two at a time (a site is eight containers).
    let t = Instant::now();
    let cluster = run_nextest(&mut nextest(cargo_in(&tree), "not binary(/^compose_/)", 3));
    said_took(root, "symbol check and cluster tests", t);
    total.add(cluster?);
    let t = Instant::now();
    let site = run_nextest(&mut nextest(cargo_in(&tree), &exact(HOST_SITE), 2));
    said_took(root, "the host's compose tests", t);
    total.add(site?);
    let campaign = crate::beside::Sites::campaign(root);
    let t = Instant::now();
    let evaluations = run_evaluations(evaluations);
    said_took(root, "the evaluation commands' short forms", t);
    total.add(evaluations?);
    let sites = beside.wait();
    said_took(root, "the host's tiers and the other releases' builds", window);
    // The other releases: each tested in its own root, their compose
    // tests beside them (both mostly wait on daemons), started as soon as
    // the builds were done.
    let mut failed = None;
    for tier in crate::release_tests::TIERS {
        let t = Instant::now();
        let other = crate::release_tests::run(root, tier.version, !sites.has(tier.version));
        said_took(root, &format!("Slurm {}'s tests", tier.version), t);
        match other {
            Ok(counts) => total.add(counts),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    sites.finish(&mut total);
    campaign.finish(&mut total);
    if let Some(e) = failed {
        return Err(e);
    }
    // One closing line for the whole run (cargo's last line is often a
    // doc-test block with nothing in it).
    println!("tests: {} passed, {} failed", total.passed, total.failed);
    // What ran beside fails the run too (it is counted, not returned).
    match total.failed {
        0 => Ok(()),
        n => Err(format!("{n} tests failed beside the releases' tiers (their output is above)")),
    }
}

/// The compose tests run on the host's release (22.05): the README's job,
/// an expand onto a host that stops answering (on 26.05 too, where its
/// roll back once left the job a wrong last record), the MPI jobs of
/// bookworm's Open MPI 4 and MPICH 4.0 (whose finalize hangs), and a host
/// lost while slurmdbd is away, under an elastic job and under a rigid
/// `--no-kill` one (22.05 leaves the job refusing updates, and its record
/// unnamed), a shrink forced just after slurmdbd stopped (22.05 would
/// wait for slurmdbd under its locks), a grown job requeued (its runs'
/// records apart), and a `--no-kill` job requeued by losing both its hosts
/// at once (billed once), and a job requeued as its node goes down (22.05
/// leaves the requeue unfinished: its runs' records apart), an MPI step
/// slurmstepd cannot launch (22.05's srun exits 0 after it), an expand
/// held while slurmdbd hangs (22.05 would wait for it under its locks),
/// and the records 22.05 leaves wrong with slurmdbd away: a job started
/// then and resized, one that loses two hosts in turn, and one requeued
/// after a resize (its first record written over as the requeue ends).
/// The rest of the compose tier runs on 26.05, the release sites run now
/// (release_tests::TIERS), not on both: CI's hour.
const HOST_SITE: &[&str] = &[
    "the_readme_elastic_job_grows_shrinks_and_completes_on_the_compose_site",
    "an_expand_onto_a_host_that_stopped_answering_is_rolled_back",
    "mpi_jobs_restart_onto_the_hosts_they_grow_onto_and_compute_their_serial_grid_on_the_site",
    "mpi_steps_stuck_in_mpi_finalize_are_ended_and_their_jobs_complete",
    "a_host_lost_in_a_shrink_off_two_while_slurmdbd_is_away_frees_the_other_once_it_is_back",
    "a_rigid_no_kill_job_that_loses_a_host_while_slurmdbd_is_away_takes_updates_and_its_records_tile",
    "a_shrink_forced_just_after_slurmdbd_stops_waits_for_it_though_slurmctld_does_not_know",
    "a_grown_job_requeued_has_its_two_runs_recorded_apart",
    "a_no_kill_job_that_loses_both_hosts_at_once_is_requeued_and_billed_once",
    "a_job_requeued_as_its_node_goes_down_has_its_runs_recorded_apart",
    "an_mpi_step_that_cannot_be_launched_is_started_again",
    "a_hung_slurmdbd_holds_an_expand_and_slurmctld_keeps_answering",
    "a_no_kill_job_started_while_slurmdbd_is_away_and_resized_before_it_is_back_is_billed_for_the_nodes_it_held",
    "a_no_kill_job_that_loses_two_hosts_in_turn_while_slurmdbd_is_away_has_three_records_that_tile",
    "a_no_kill_job_that_loses_a_host_and_then_is_requeued_while_slurmdbd_is_away_is_billed_for_the_nodes_it_held",
];

/// `cargo xtask test --slurm V`: release V's tier alone, after the host's
/// set-up (its compose test runs from the host).
pub fn run_release(root: &Path, version: &str) -> Result<()> {
    provision::build::build_plugins(root)?;
    provision::apt::ensure(&["debootstrap", "docker-compose"])?;
    let counts = crate::release_tests::run(root, version, true)?;
    println!("tests: {} passed, {} failed", counts.passed, counts.failed);
    Ok(())
}

/// The evaluation commands in their short forms, each a test, in order.
fn run_evaluations(runs: Vec<(&'static str, Run)>) -> Result<TestCounts> {
    let mut counts = TestCounts::default();
    let mut failed = Vec::new();
    for (name, f) in runs {
        println!("evaluation {name}:");
        match f() {
            Ok(()) => {
                println!("evaluation {name} ... ok");
                counts.passed += 1;
            }
            Err(e) => {
                println!("evaluation {name} ... FAILED: {e}");
                counts.failed += 1;
                failed.push(name);
            }
        }
    }
    if failed.is_empty() {
        Ok(counts)
    } else {
        println!("tests: {} passed, {} failed", counts.passed, counts.failed);
        Err(format!("evaluation commands failed: {}", failed.join(", ")))
    }
}

/// Say a step's time, and the disk left (`free_disk`).
fn said_took(root: &Path, what: &str, t: Instant) {
    let free = testcluster::process::free_disk(root);
    eprintln!("xtask: {what} took {:.1?} ({free} free on the disk)", t.elapsed());
}
