//! The tests of the Slurm releases other than the host's (24.11, 25.11,
//! 26.05), part of `cargo xtask test`, each release's tier as [`TIERS`]
//! says: its plugins built in its build image, then there the bindings' and
//! plugins' unit tests (the layout probe among them), the symbol check and
//! the real-cluster tests that resize jobs; on the host, compose sites of
//! that release; CI's selection of the release's own test suites, and the
//! demo, in the image. And `cargo xtask demo|bench-resize|bench-scale|
//! slurm-tests --slurm V`: those, in that image.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use testcluster::plugins::{plugin_dir_for, PLUGIN_DIR_VAR};
use testcluster::SlurmRelease;

use crate::cargo_tests::{exact, nextest, run_nextest, run_tests, TestCounts};
use crate::Result;
use provision::container::Container;

/// The crates whose unit tests depend on the release: the bindings, the
/// safe layer and the plugins.
const UNIT: &[&str] = &[
    "-p",
    "slurm-sys",
    "--features",
    "slurm-sys/ctld,slurm-sys/stepd",
    "-p",
    "slurm",
    "--features",
    "slurm/ctld,slurm/stepd,slurm/spank,slurm/client",
    "-p",
    "sched-malleable",
    "-p",
    "select-natural",
    "-p",
    "task-drom",
    "-p",
    "job-submit-malleable",
    "-p",
    "spank-malleable",
];

/// The real-cluster tests run on 26.05: the symbol check, every elastic
/// job that grows and shrinks under mall-run (through the Rust and the C
/// API, its Comment kept), starts only through the plugin and EASY's
/// backfill, select/natural beside sched/backfill, task/drom's core
/// sharing, the options taken or refused (SPANK, job_submit and
/// job_modify, whose interfaces changed), the queue's order by
/// slurmctld's priority and preemption (whose functions moved into
/// libslurmfull in 24.11), what a node must have, partitions' limits and
/// deadlines, and the change feed (slurmctld's stamps, job ids and counters
/// it reads, and job_submit/malleable's notes, found through the loader).
/// The MPI applications restarted on trixie's Open MPI and MPICH run on
/// its compose site (`SITE`). The rest of the host's tier (reasons, the
/// other strategies, failures...) exercises the model, the core and the
/// controller, which do not change with the release; run on 26.05 too, it
/// would take CI past its hour.
const CLUSTER: &[&str] = &[
    "symbols",
    "cluster_malleable",
    "cluster_scheduling",
    "cluster_select_natural",
    "cluster_core_sharing",
    "cluster_options",
    "cluster_priority",
    "cluster_preemption",
    "cluster_placement",
    "cluster_feed",
];

/// The compose tests run on 26.05 (the host's tier has the MPI finalize
/// hang of bookworm's MPICH and the faults whose handling 22.05 alone
/// needs): the README's elastic job under slurmdbd, multifactor, cgroups
/// and PrologFlags=Contain, read through slurmrestd too; memory taken from
/// a running job (26.05's Dynamic Memory Resizing); slurmdbd stopped
/// mid-shrink; select/natural, SD-Policy and IPSCHED on the site; an
/// association limit, a QOS preemption, a QOS cap, nice, a QOS taken from
/// a waiting job's association (24.11 keeps a job's QOS as a pointer,
/// 22.05 as an id: job_checks.c); MPI jobs restarted on hosts of their own
/// (trixie's Open MPI 5 with PMIx 5, MPICH 4.2, mpi4py); a host lost in a
/// shrink while slurmdbd is away; a `--no-kill` job that loses a host and
/// is then requeued (26.05 bills its first record for its last size:
/// first_record.rs); an expand onto a host that stops answering, rolled
/// back (26.05 wrote the run's start over the last record's: alloc.rs,
/// start_new_record_at_resize).
const SITE: &[&str] = &[
    "the_readme_elastic_job_grows_shrinks_and_completes_on_the_compose_site",
    "memory_taken_from_a_running_elastic_job_leaves_its_resizes_right",
    "a_job_that_grew_is_billed_in_each_record_for_the_nodes_it_held_then",
    "with_slurmdbd_away_resizes_wait_and_every_job_reaches_the_database",
    "select_natural_beside_sched_backfill_resizes_a_job_that_asks_on_the_site",
    "sd_policy_gives_each_job_its_own_cores_in_its_cpuset_cgroups_on_the_site",
    "ipsched_places_gpu_jobs_on_the_sites_gpu_hosts",
    "a_limit_holds_a_job_with_stocks_reason_and_a_high_qos_job_shrinks_an_elastic_one_instead_of_requeueing_it",
    "an_elastic_job_grows_no_further_than_its_qos_allows",
    "multifactor_priority_with_nice_orders_the_queue",
    "a_job_whose_qos_is_taken_from_its_association_waits_as_invalid_qos_until_it_is_given_back",
    "mpi_jobs_restart_onto_the_hosts_they_grow_onto_and_compute_their_serial_grid_on_the_site",
    "a_host_lost_while_slurmdbd_is_away_costs_an_elastic_job_none_of_its_work",
    "a_no_kill_job_that_loses_a_host_and_then_is_requeued_is_billed_in_each_record_for_the_nodes_it_held",
    "an_expand_onto_a_host_that_stopped_answering_is_rolled_back",
];

/// What `cargo xtask test` runs of a release other than the host's.
pub struct Tier {
    pub version: &'static str,
    /// The real-cluster test files run in its build image.
    cluster: &'static [&'static str],
    /// The compose tests run on a site of it (exact names).
    site: &'static [&'static str],
    /// CI's selection of its own test suites, under stock and ours.
    suites: bool,
    /// `cargo xtask demo`, in its build image.
    demo: bool,
}

/// The releases `cargo xtask test` runs after the host's, in that order,
/// and what of each (docs/slurm-versions.md, "Tests per release"):
/// - 26.05, the newest SchedMD supports: its cluster tier and nearly the
///   whole compose tier (the host's runs the rest). Its own suites are not
///   in its release source (SchedMD takes testsuite/expect and
///   testsuite/python out of the release branches since 25.11), so CI
///   cannot run them;
/// - 25.11, the other one SchedMD supports: the demo, the symbol check and
///   the elastic jobs (its interfaces are 26.05's less memory resizing);
/// - 24.11, out of SchedMD's support since 26.05 and still Debian
///   trixie's: its build, unit tests (the layout probe) and symbol check.
pub const TIERS: &[Tier] = &[
    Tier { version: "26.05", cluster: CLUSTER, site: SITE, suites: false, demo: false },
    Tier { version: "25.11", cluster: &["symbols", "cluster_malleable"], site: &[], suites: false, demo: true },
    Tier { version: "24.11", cluster: &["symbols"], site: &[], suites: false, demo: false },
];

/// The tier of `version`.
pub fn tier(version: &str) -> Result<&'static Tier> {
    TIERS.iter().find(|t| t.version == version).ok_or_else(|| {
        let known: Vec<&str> = TIERS.iter().map(|t| t.version).collect();
        format!("test --slurm {version}: no tier of it; expected one of {}", known.join(", "))
    })
}

/// cluster_tests' `site::SITE_SLURM_VAR` (xtask does not depend on that
/// crate): the release a compose test's site runs.
const SITE_SLURM_VAR: &str = "MALLEABLE_SITE_SLURM";

/// `cargo xtask test --slurm V --no-run`: V's plugins built and its tier's
/// unit and cluster tests compiled, in a build container (low CPU shares),
/// none run. `cargo xtask test` does this beside the host's cluster tests,
/// which mostly wait on daemons, so that [`run`] later finds it done.
pub fn compile(root: &Path, version: &str) -> Result<()> {
    let r = SlurmRelease::find(version)?;
    let tier = tier(version)?;
    provision::build::build(root, version)?;
    // The same arguments as `run` gives, so cargo's fingerprints match and
    // `run` compiles nothing again.
    let mut unit = vec!["test", "--offline", "--no-fail-fast", "--no-run"];
    unit.extend(UNIT);
    provision::build::cargo_in(root, r, &unit, &[])?;
    provision::build::cargo_in(root, r, &cluster_args(tier, &["--no-run"]), &[])?;
    if tier.demo {
        provision::build::cargo_in(root, r, &["build", "--offline", "-p", "xtask"], &[])?;
    }
    Ok(())
}

/// `cargo test` of the tier's cluster tests, with `extra` before the test names.
fn cluster_args<'a>(tier: &Tier, extra: &[&'a str]) -> Vec<&'a str> {
    let mut cluster = vec!["test", "--offline", "--no-fail-fast"];
    cluster.extend(extra);
    cluster.extend(["-p", "cluster-tests"]);
    for test in tier.cluster {
        cluster.extend(["--test", test]);
    }
    cluster
}

/// The command that runs `version`'s compose tests on the host, if its
/// tier has any.
pub(crate) fn site_command(root: &Path, version: &str) -> Result<Option<Command>> {
    let tier = tier(version)?;
    if tier.site.is_empty() {
        return Ok(None);
    }
    let mut cargo = crate::cargo_tests::cargo_command(root);
    cargo.env(SITE_SLURM_VAR, version).env(PLUGIN_DIR_VAR, plugin_dir_for(root, version));
    // Two sites at a time, as the host's compose tests run.
    Ok(Some(nextest(cargo, &exact(tier.site), 2)))
}

/// `version`'s tier; its compose tests too if `with_site` (`cargo xtask
/// test` runs them beside the tiers instead: crate::beside).
pub(crate) fn run(root: &Path, version: &str, with_site: bool) -> Result<TestCounts> {
    let r = SlurmRelease::find(version)?;
    let tier = tier(version)?;
    let t = Instant::now();
    provision::build::build(root, version)?;
    eprintln!("xtask: Slurm {version}'s plugins built in {:.1?}", t.elapsed());
    let plugins = plugin_dir_for(root, version);
    let mut total = TestCounts::default();

    let t = Instant::now();
    let mut unit = vec!["test", "--offline", "--no-fail-fast"];
    unit.extend(UNIT);
    total.add(in_image(root, r, &unit, &plugins)?);
    eprintln!("xtask: Slurm {version}'s unit tests took {:.1?}", t.elapsed());

    let t = Instant::now();
    let mut cluster = cluster_args(tier, &[]);
    // Three at a time, as the host's run under nextest (which the build
    // image lacks): each cluster has ports and networks of its own.
    cluster.extend(["--", "--ignored", "--test-threads=3"]);
    total.add(in_image(root, r, &cluster, &plugins)?);
    eprintln!("xtask: Slurm {version}'s symbol check and cluster tests took {:.1?}", t.elapsed());

    if let Some(mut site) = site_command(root, version)?.filter(|_| with_site) {
        let t = Instant::now();
        total.add(run_nextest(&mut site)?);
        eprintln!("xtask: Slurm {version}'s compose site tests took {:.1?}", t.elapsed());
    }

    // The release's own test suites, CI's selection, and the demo, under
    // its stock scheduler and ours (each one test, as the host's are among
    // the evaluations).
    let evaluations: [(bool, &str, &[&str]); 2] =
        [(tier.suites, "slurm-tests", &["--short"]), (tier.demo, "demo", &[])];
    for (wanted, command, args) in evaluations {
        if !wanted {
            continue;
        }
        let t = Instant::now();
        let name = format!(
            "cargo xtask {command} {}--slurm {version}",
            args.iter().map(|a| format!("{a} ")).collect::<String>()
        );
        println!("evaluation {name}:");
        xtask_in_image(root, r, &plugins, command, args)?;
        println!("evaluation {name} ... ok");
        total.add(TestCounts { passed: 1, failed: 0 });
        eprintln!("xtask: {name} took {:.1?}", t.elapsed());
    }
    Ok(total)
}

/// `cargo xtask COMMAND --slurm V ARGS` (demo, bench-resize, slurm-tests): V's plugins
/// built, then COMMAND ARGS (less `--slurm V`) run in V's build image on
/// V's own daemons.
pub fn in_release(root: &Path, version: &str, command: &str, args: &[String]) -> Result<()> {
    let r = SlurmRelease::find(version)?;
    let plugins = provision::build::build(root, version)?;
    let mut rest: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--slurm" {
            it.next();
        } else {
            rest.push(a);
        }
    }
    xtask_in_image(root, r, &plugins, command, &rest)
}

/// `cargo xtask COMMAND ARGS` in the release's build image, as a test
/// container, with the plugins already staged in `plugins`.
fn xtask_in_image(root: &Path, r: &SlurmRelease, plugins: &Path, command: &str, args: &[&str]) -> Result<()> {
    let mut cargo = vec!["run", "--offline", "--quiet", "-p", "xtask", "--", command];
    cargo.extend(args);
    let (_box, mut cmd) = image_cargo(root, r, &format!("malleable-{command}-{}", r.version), &cargo, plugins)?;
    testcluster::process::run(&mut cmd).map_err(|e| format!("{command} on Slurm {}: {e}", r.version))
}

/// `cargo ARGS` in the release's build image, as a test container, with
/// the release's source tree, target dir and staged plugins; its counts.
fn in_image(root: &Path, r: &SlurmRelease, args: &[&str], plugins: &Path) -> Result<TestCounts> {
    let (_box, mut cargo) = image_cargo(root, r, &format!("malleable-test-{}", r.version), args, plugins)?;
    run_tests(&mut cargo)
}

/// The command `cargo ARGS` in the release's build image, and its test
/// container `name` (the release's tests', or a command's: a long
/// `slurm-tests` beside the tests), removed when that is dropped.
fn image_cargo(
    root: &Path,
    r: &SlurmRelease,
    name: &str,
    args: &[&str],
    plugins: &Path,
) -> Result<(Container, Command)> {
    let mut box_ = Container::claim_for_tests(name)?;
    let mut cargo =
        provision::build::image_cargo(root, r, &mut box_, &[(PLUGIN_DIR_VAR, plugins.display().to_string())])?;
    cargo.args(args);
    Ok((box_, cargo))
}
