//! Bad configuration: the plugin refuses to load, slurmctld stops, and its
//! log says exactly what is wrong and what to write instead.

use cluster_tests::refused_log;
use testcluster::Cluster;

#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn bad_values_in_malleable_conf_refuse_the_load() {
    let spec = cluster_tests::spec("t-badconf", 1);
    let spec = spec.file("malleable.conf", "Strategy=easy\nSchedulerTick=soon\n");
    let c = Cluster::create(spec).unwrap();
    let log = refused_log(&c);
    assert!(
        log.contains("malleable.conf: line 2: SchedulerTick=soon is not valid: expected whole seconds from 1 to 3600"),
        "{log}"
    );
    assert!(log.contains("Failed to initialize sched plugin"), "slurmctld should report the failed load");

    // An unknown key is refused the same way, naming the allowed keys.
    let spec = c.spec.clone();
    drop(c);
    let spec = spec.file("malleable.conf", "Strategy=easy\nBackfillDepth=100\n");
    let c = Cluster::create(spec).unwrap();
    let log = refused_log(&c);
    assert!(log.contains("line 2: unknown key 'BackfillDepth'; allowed keys: Strategy, SchedulerTick"), "{log}");
}

#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn slurm_conf_that_keeps_the_builtin_scheduler_refuses_the_load() {
    let spec = cluster_tests::spec("t-badparams", 1);
    let spec = spec.set("SchedulerParameters", "defer");
    let c = Cluster::create(spec).unwrap();
    let log = refused_log(&c);
    assert!(
        log.contains("SchedulerParameters in slurm.conf must contain sched_interval=-1 and permit_job_expansion ("),
        "{log}"
    );
    assert!(log.contains("Set: SchedulerParameters=defer,sched_interval=-1,permit_job_expansion"), "{log}");
}

#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn slurm_conf_that_forbids_resizing_refuses_the_load() {
    let spec = cluster_tests::spec("t-noresize", 1).set("SchedulerParameters", "sched_interval=-1,disable_job_shrink");
    let c = Cluster::create(spec).unwrap();
    let log = refused_log(&c);
    assert!(
        log.contains("must contain permit_job_expansion (without permit_job_expansion slurmctld refuses to grow"),
        "{log}"
    );
    assert!(log.contains("must not contain disable_job_shrink"), "{log}");
}
