//! Bad configuration: the plugin refuses to load, slurmctld stops, and its
//! log says exactly what is wrong and what to write instead; what
//! SchedulerParameters only lack, the plugin adds, and says so.

use std::time::Duration;

use cluster_tests::malleable::{example_script, malleable_spec, submit, wait_said};
use cluster_tests::{refused, said, up_with};
use malleable_model::log_lines::LogLine;
use malleable_model::slurm_lines::SlurmLine;
use slurm::common::refusal::Refusal;
use testcluster::process::output;
use testcluster::Cluster;

#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn bad_values_in_malleable_conf_refuse_the_load() {
    let spec = cluster_tests::spec("t-badconf", 1);
    let spec = spec.file("malleable.conf", "Strategy=easy\nSchedulerTick=soon\n");
    let c = Cluster::create(spec).unwrap();
    let (refusal, log) = refused(&c);
    // The file as slurmctld's configuration names it, then the error.
    let why = "/etc/malleable.conf: line 2: SchedulerTick=soon is not valid: expected whole seconds from 1 to 3600";
    assert!(matches!(&refusal, Refusal::Load(w) if w.ends_with(why)), "{refusal}");
    let failed = log.lines().any(|l| SlurmLine::parse(l) == Some(SlurmLine::SchedPluginFailed));
    assert!(failed, "slurmctld should report the failed load");

    // An unknown key is refused the same way, naming the allowed keys.
    let spec = c.spec.clone();
    drop(c);
    let spec = spec.file("malleable.conf", "Strategy=easy\nBackfillDepth=100\n");
    let c = Cluster::create(spec).unwrap();
    let (refusal, _) = refused(&c);
    let why = refusal.why();
    assert!(why.contains("line 2: unknown key 'BackfillDepth'; allowed keys: Strategy, SchedulerTick"), "{refusal}");
}

/// SchedulerParameters that lack what sched/malleable needs (a site's own
/// line; Slurm's test31.2 appends one, and the last line wins): the plugin
/// adds them, says so, and they are in force: slurmctld's own scheduler
/// never runs a cycle (sched_interval=-1), and a job grows (slurmctld
/// refuses the expand without permit_job_expansion). Before, slurmctld
/// would not start (and on 22.05's reconfigure ran its own scheduler).
#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn scheduler_parameters_that_lack_the_plugins_options_get_them_added_and_in_force() {
    let spec = malleable_spec("t-addparams", 2, "Strategy=mtct\nSchedulerTick=5\n");
    let c = up_with(spec.set("SchedulerParameters", "bf_interval=30"));
    let log = c.ctld_log();
    let added = log.lines().find_map(|l| match LogLine::parse(l) {
        Some(LogLine::ParametersAdded { lacks, was, now, .. }) => Some((lacks, was, now)),
        _ => None,
    });
    let now = "bf_interval=30,sched_interval=-1,permit_job_expansion";
    let want =
        (vec!["sched_interval=-1".to_string(), "permit_job_expansion".into()], "bf_interval=30".into(), now.into());
    assert_eq!(added, Some(want), "{log}");
    let config = output(c.cmd("scontrol").args(["show", "config"])).unwrap();
    let shown =
        config.lines().find_map(|l| l.strip_prefix("SchedulerParameters")?.split_once('=')).map(|(_, v)| v.trim());
    assert_eq!(shown, Some(now), "{config}");

    let script = example_script(&c, "grows", "--cells 4096 --iterations 100000 --unit-us 10");
    let id = submit(&c, &script, "grows.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    wait_said(&c, 0, &said::expand_committed(id, "n2"), Duration::from_secs(60));
    let sdiag = output(&mut c.cmd("sdiag")).unwrap();
    let main = sdiag.split("Main schedule statistics").nth(1).unwrap_or_else(|| panic!("{sdiag}"));
    let cycles = main.lines().find_map(|l| l.trim().strip_prefix("Total cycles:")).map(str::trim);
    assert_eq!(cycles, Some("0"), "slurmctld's own scheduler ran:\n{sdiag}");
    let _ = c.cmd("scancel").arg(id.to_string()).status();
    c.wait_job(id, "ended", Duration::from_secs(60), |j| j.is_finished()).unwrap();
}

#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn slurm_conf_that_forbids_resizing_refuses_the_load() {
    let spec = cluster_tests::spec("t-noresize", 1).set("SchedulerParameters", "sched_interval=-1,disable_job_shrink");
    let c = Cluster::create(spec).unwrap();
    let (refusal, _) = refused(&c);
    let why = refusal.why();
    assert!(matches!(refusal, Refusal::Load(_)), "{refusal}");
    assert!(why.contains("must not contain disable_job_shrink (the plugin shrinks running jobs)"), "{refusal}");
    assert!(why.contains("Set: SchedulerParameters=sched_interval=-1,permit_job_expansion"), "{refusal}");
}
