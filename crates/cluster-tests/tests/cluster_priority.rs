//! The queue's order is slurmctld's priority, under every strategy that
//! serves waiting jobs in priority order, as under stock Slurm: an admin's
//! `scontrol update Priority=`, `scontrol hold` and `release`, and `scontrol
//! top` are honoured at the next pass.

use std::time::Duration;

use cluster_tests::malleable::malleable_spec;
use cluster_tests::up_with;
use testcluster::process::output;
use testcluster::{plugins, Cluster, ClusterSpec};

/// The strategies whose algorithm serves waiting jobs by priority (the
/// README's strategy table says how the others order them).
const BY_PRIORITY: [&str; 7] = ["fcfs", "easy", "conservative", "mtct", "fpsma", "mtct-backfill", "sd-policy"];

fn scontrol(c: &Cluster, args: &[&str]) {
    output(c.cmd("scontrol").args(args)).unwrap_or_else(|e| panic!("scontrol {args:?}: {e}"));
}

/// squeue's Reason for a job.
fn reason(c: &Cluster, id: u32) -> String {
    output(c.cmd("squeue").args(["-h", "-j", &id.to_string(), "-o", "%r"])).unwrap_or_default().trim().to_string()
}

/// The queue as squeue shows it: id, priority, state, reason.
fn queue(c: &Cluster) -> String {
    output(c.cmd("squeue").args(["-h", "-o", "%i %Q %T %r"])).unwrap_or_default()
}

/// A job's priority, as squeue shows it.
fn priority(c: &Cluster, id: u32) -> u64 {
    let text = output(c.cmd("squeue").args(["-h", "-j", &id.to_string(), "-o", "%Q"])).unwrap_or_default();
    text.trim().parse().unwrap_or_else(|e| panic!("priority of {id} '{text}': {e}"))
}

/// The only job running now, once the one before it has ended: each job
/// takes both nodes, so the next to start shows whom the scheduler chose.
fn next_to_run(c: &Cluster, before: u32, jobs: &[u32]) -> u32 {
    let was = queue(c);
    output(c.cmd("scancel").arg(before.to_string())).unwrap();
    testcluster::wait::until("the next job to start", Duration::from_secs(30), || {
        let running: Vec<u32> =
            jobs.iter().copied().filter(|&j| c.job(j).is_ok_and(|i| i.state == "RUNNING")).collect();
        match running.as_slice() {
            [one] => {
                eprintln!("queue before {before} ended:\n{was}then {one} started");
                Ok(Some(*one))
            }
            [] => Err("none runs yet".into()),
            more => Err(format!("several run: {more:?}")),
        }
    })
    .unwrap_or_else(|e| {
        c.print_logs();
        panic!("{e}")
    })
}

/// A, B, C and D each want both nodes: A runs, the others wait in the
/// order they came (priority/basic). B is held, D raised above C: D goes
/// next; B released (its priority recomputed, below C's) and put on top of
/// the user's jobs: B goes next; then C.
fn the_admins_order_is_followed(spec: ClusterSpec, what: &str) {
    let c = up_with(spec);
    let job = |_: ()| c.sbatch(&["-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let a = job(());
    c.wait_job(a, "A running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let (b, cc, d) = (job(()), job(()), job(()));
    scontrol(&c, &["hold", &b.to_string()]);
    // priority/basic counts down from near 2^32: D is put just above C.
    let above_c = priority(&c, cc) + 10;
    scontrol(&c, &["update", &format!("JobId={d}"), &format!("Priority={above_c}")]);
    let all = [b, cc, d];
    assert_eq!(next_to_run(&c, a, &all), d, "{what}: the job raised above the others");
    assert_eq!(reason(&c, b), "JobHeldAdmin", "{what}: the held job's reason");
    scontrol(&c, &["release", &b.to_string()]);
    scontrol(&c, &["top", &b.to_string()]);
    assert_eq!(next_to_run(&c, d, &all), b, "{what}: the released job put on top");
    assert_eq!(next_to_run(&c, b, &all), cc, "{what}: the last one");
    output(c.cmd("scancel").arg(cc.to_string())).unwrap();
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn hold_release_priority_and_top_are_honoured_as_under_stock() {
    // The expectations are stock Slurm's: checked there first.
    let stock = ClusterSpec::new("t-prio-stock", 2)
        .set("SchedulerType", "sched/backfill")
        .set("SchedulerParameters", "bf_interval=1")
        .set("SelectType", "select/cons_tres")
        .set("SelectTypeParameters", "CR_Core");
    the_admins_order_is_followed(stock, "stock sched/backfill");
    for strategy in BY_PRIORITY {
        let mut spec = malleable_spec(&format!("t-prio-{strategy}"), 2, &format!("Strategy={strategy}\n"));
        if strategy == "sd-policy" {
            // It shares cores: slurmctld must not start jobs at submit,
            // and task/drom gives each sharer its own.
            spec = spec.set("SchedulerParameters", plugins::POWER_SCHEDULER_PARAMETERS).set("TaskPlugin", "task/drom");
        }
        the_admins_order_is_followed(spec, strategy);
    }
}
