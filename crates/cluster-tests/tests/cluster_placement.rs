//! Where Slurm users say a job may run, on a real cluster under sched/malleable
//! (Strategy=easy): a job in a non-default partition starts on that
//! partition's nodes, `--exclude` and `--nodelist` are kept, and a job whose
//! required node is busy does not hold up a job that cannot delay it; a
//! `--constraint` (counts and alternatives too) is met; a `--contiguous`
//! job gets nodes in a row; a job asking more memory or GPUs a node than
//! some nodes have waits for those that have them, and holds up no job
//! that can use the others, and one asking memory per CPU starts where its
//! tasks can spread; one whose licenses are in use waits with
//! Reason Licenses, holding up no one; in an `OverSubscribe=YES:2`
//! partition, `--oversubscribe` jobs share busy nodes' cores as under
//! stock Slurm unless that would delay the head job, and others wait for
//! a free node.

use std::time::Duration;

use cluster_tests::malleable::hostnames;
use cluster_tests::said;
use cluster_tests::{spec, up_with};
use testcluster::jobs::JobInfo;
use testcluster::process::run;
use testcluster::{Cluster, NodeShape, Partition};

fn cancel(c: &Cluster, id: u32) {
    run(c.cmd("scancel").arg(id.to_string())).unwrap();
    c.wait_job(id, "ended", Duration::from_secs(30), |j| j.is_finished()).unwrap();
}

fn running(c: &Cluster, id: u32) -> JobInfo {
    c.wait_job(id, "running", Duration::from_secs(30), |j| j.state == "RUNNING")
        .unwrap_or_else(|e| panic!("{e}\n{}", c.ctld_log()))
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn jobs_run_only_where_their_partition_exclusions_and_nodelist_say() {
    let c = up_with(
        spec("t-placement", 4)
            .partition(Partition::new("main", "n[1-2]").default_partition())
            .partition(Partition::new("side", "n[3-4]")),
    );
    let long = ["-t", "5", "--wrap", "sleep 300"];
    let args = |extra: &[&'static str]| -> Vec<&'static str> { extra.iter().chain(long.iter()).copied().collect() };

    // Another partition on an idle cluster: its own nodes, at once.
    let side = c.sbatch(&args(&["-p", "side", "-N2"])).unwrap();
    assert_eq!(running(&c, side).node_list, "n[3-4]");
    // The lowest free node of main is n1, but it is excluded.
    let excluding = c.sbatch(&args(&["-N1", "-x", "n1"])).unwrap();
    assert_eq!(running(&c, excluding).node_list, "n2");
    let required = c.sbatch(&args(&["-N1", "-w", "n1"])).unwrap();
    assert_eq!(running(&c, required).node_list, "n1");

    // n2 is busy: a job requiring it waits at the head of the queue, and a
    // job in the other partition, which cannot delay it, starts behind it.
    cancel(&c, side);
    let blocked = c.sbatch(&args(&["-N1", "-w", "n2"])).unwrap();
    let behind = c.sbatch(&args(&["-p", "side", "-N2"])).unwrap();
    assert_eq!(running(&c, behind).node_list, "n[3-4]");
    let b = c.job(blocked).unwrap();
    assert_eq!(b.state, "PENDING", "{b:?}");

    // Its node comes free: it starts there.
    cancel(&c, excluding);
    assert_eq!(running(&c, blocked).node_list, "n2");
    let log = c.ctld_log();
    assert!(!said::any_refused_start().in_log(&log), "a start Slurm refused:\n{log}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn reservations_keep_their_nodes_for_their_jobs() {
    let c = up_with(spec("t-resv", 4));
    let user = String::from_utf8(std::process::Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
    run(c.cmd("scontrol").args([
        "create",
        "reservation",
        "ReservationName=R",
        &format!("Users={}", user.trim()),
        "StartTime=now",
        "Duration=30",
        "Nodes=n[1-2]",
    ]))
    .unwrap();
    let long = ["-t", "5", "--wrap", "sleep 300"];
    let args = |extra: &[&'static str]| -> Vec<&'static str> { extra.iter().chain(long.iter()).copied().collect() };

    // Three nodes for 5 minutes: only two are outside the reservation for
    // that long, so it waits; the two-node job behind it runs on those two,
    // and the job in the reservation on the reserved nodes.
    let big = c.sbatch(&args(&["-N3"])).unwrap();
    let small = c.sbatch(&args(&["-N2"])).unwrap();
    let inside = c.sbatch(&args(&["-N2", "--reservation=R"])).unwrap();
    assert_eq!(running(&c, small).node_list, "n[3-4]");
    assert_eq!(running(&c, inside).node_list, "n[1-2]");
    assert_eq!(c.job(big).unwrap().state, "PENDING");
    let log = c.ctld_log();
    assert!(!said::any_refused_start().in_log(&log), "a start Slurm refused:\n{log}");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_waits_for_nodes_with_its_memory_and_gpus_and_the_jobs_behind_use_the_others() {
    // n1-n2: 4000 MB; n3-n4: 1000 MB, n4 with 2 GPUs. Memory is a consumable.
    let big = NodeShape { cores: 1, gpus: 0, memory_mb: 4000 };
    let c = up_with(
        spec("t-room", 2)
            .shape(big)
            .add_nodes(1, NodeShape { cores: 1, gpus: 0, memory_mb: 1000 })
            .add_nodes(1, NodeShape { cores: 1, gpus: 2, memory_mb: 1000 })
            .set("SelectTypeParameters", "CR_Core_Memory")
            .set("GresTypes", "gpu"),
    );
    let a = c.sbatch(&["-N2", "--mem=3000", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, a).node_list, "n[1-2]");
    // Ahead in the queue, and fitting no free node: it waits, with the
    // head's Reason, and the two jobs behind it start on n3 and n4.
    let wide = c.sbatch(&["-N1", "--mem=3000", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let gpu = c.sbatch(&["-N1", "--mem=500", "--gres=gpu:1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let small = c.sbatch(&["-N1", "--mem=500", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, gpu).node_list, "n4");
    assert_eq!(running(&c, small).node_list, "n3");
    wait_reason(&c, wide, "Resources");
    // Once A ends, it gets a node that holds it.
    cancel(&c, a);
    assert!(["n1", "n2"].contains(&running(&c, wide).node_list.as_str()));
    for id in [wide, gpu, small] {
        cancel(&c, id);
    }
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_asking_memory_per_cpu_starts_where_its_tasks_can_spread() {
    // Four nodes of 8 CPUs and 1000 MB, memory consumable. Eight tasks of
    // 300 MB fit no node together (2400 MB) but spread over three, as
    // stock Slurm lays them out; a node needs only 300 MB to take one.
    // Slurm's own test1.35 (-n30 --mem-per-cpu=256M) waited for ever here.
    let c = up_with(
        spec("t-mem-cpu", 4)
            .shape(NodeShape { cores: 8, gpus: 0, memory_mb: 1000 })
            .set("SelectTypeParameters", "CR_Core_Memory"),
    );
    let spread = c.sbatch(&["-n8", "--mem-per-cpu=300", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let on = running(&c, spread);
    assert!(on.num_nodes >= 3, "eight tasks of 300 MB on {} ({} nodes)", on.node_list, on.num_nodes);
    cancel(&c, spread);
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_waits_for_its_licenses_and_holds_up_no_one() {
    let c = up_with(spec("t-licenses", 2).set("Licenses", "matlab:1"));
    let holder = c.sbatch(&["-N1", "-L", "matlab:1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    running(&c, holder);
    let waits = c.sbatch(&["-N1", "-L", "matlab", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let other = c.sbatch(&["-N1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    running(&c, other);
    wait_reason(&c, waits, "Licenses");
    cancel(&c, other);
    cancel(&c, holder);
    running(&c, waits);
    cancel(&c, waits);
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn oversubscribing_jobs_share_busy_nodes_as_their_partition_allows() {
    let c = up_with(spec("t-oversubscribe", 2).partition(
        Partition::new("shared", "ALL").default_partition().extra("MaxTime=INFINITE State=UP OverSubscribe=YES:2"),
    ));
    let job = |limit: &'static str, extra: &[&'static str]| {
        let mut args = vec!["-N1", "-t", limit];
        args.extend(extra);
        args.extend(["--wrap", "sleep 300"]);
        c.sbatch(&args).unwrap()
    };
    let shared: Vec<u32> = (0..2).map(|_| job("5", &["--oversubscribe"])).collect();
    for &id in &shared {
        running(&c, id);
    }
    // No node is free. A job that may not share waits for one (its start
    // is expected when the first of them ends); of two that may share, the
    // one that would hold a busy node past that start waits too, and the
    // one that ends before it starts on a busy node.
    let alone = job("5", &[]);
    let too_long = job("10", &["--oversubscribe"]);
    let third = job("2", &["--oversubscribe"]);
    assert!(["n1", "n2"].contains(&running(&c, third).node_list.as_str()));
    wait_reason(&c, alone, "Resources");
    assert_eq!(c.job(too_long).unwrap().state, "PENDING");
    let log = c.ctld_log();
    assert!(
        log.lines().any(|l| said::started(third).matches(l) && l.contains("sharing cores there")),
        "the log says the start on shared cores"
    );
    for id in shared.into_iter().chain([alone, too_long, third]) {
        cancel(&c, id);
    }
}

/// The job's Reason as squeue shows it.
fn reason(c: &Cluster, id: u32) -> String {
    testcluster::process::output(c.cmd("squeue").args(["-h", "-j", &id.to_string(), "-o", "%r"]))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn wait_reason(c: &Cluster, id: u32, want: &str) {
    testcluster::wait::until(&format!("JobId={id} pending for {want}"), Duration::from_secs(30), || {
        let (state, why) = (c.job(id)?.state, reason(c, id));
        if state == "PENDING" && why == want {
            Ok(Some(()))
        } else {
            Err(format!("{state} ({why})"))
        }
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", c.ctld_log()));
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn partition_limits_state_and_deadlines_hold_as_in_slurm() {
    let c = up_with(
        spec("t-limits", 4)
            .partition(Partition::new("main", "n[1-2]").default_partition())
            .partition(Partition::new("short", "n3").extra("MaxTime=1 State=UP"))
            .partition(Partition::new("closed", "n4").extra("MaxTime=INFINITE State=DOWN")),
    );
    // Over the partition's MaxTime: it waits, its limit untouched.
    let too_long = c.sbatch(&["-p", "short", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    wait_reason(&c, too_long, "PartitionTimeLimit");
    assert_eq!(c.job(too_long).unwrap().time_limit, "00:05:00");
    // A partition that is down: its job waits.
    let down = c.sbatch(&["-p", "closed", "-t", "1", "--wrap", "sleep 300"]).unwrap();
    wait_reason(&c, down, "PartitionDown");
    // Within the limit: it runs there.
    let fits = c.sbatch(&["-p", "short", "-t", "1", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, fits).node_list, "n3");
    // A deadline its time limit cannot meet, as Slurm treats it: 22.05
    // takes the job and our pass ends it (deadline_ok, state DEADLINE);
    // 24.11 refuses it at submission (_valid_job_part), whatever the
    // scheduler.
    let late = c.sbatch(&["-t", "10", "--deadline=now+2minutes", "--wrap", "sleep 300"]);
    match testcluster::SlurmRelease::installed().unwrap().version {
        "22.05" => {
            let j = c.wait_job(late.unwrap(), "ended", Duration::from_secs(30), |j| j.is_finished()).unwrap();
            assert_eq!(j.state, "DEADLINE", "{j:?}");
        }
        _ => {
            let e = late.expect_err("24.11 refuses a time limit past the deadline");
            assert!(e.contains("Requested time limit is invalid"), "{e}");
        }
    }
    assert!(c.job(too_long).unwrap().is_pending() && c.job(down).unwrap().is_pending());
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn array_tasks_spread_over_the_nodes_and_keep_to_their_throttle() {
    let c = up_with(spec("t-arrays", 4));
    // Eight tasks on four nodes: four at once, each on its own node.
    let all = c.sbatch(&["-a", "1-8", "-N1", "-t", "1", "--wrap", "sleep 5"]).unwrap();
    let nodes_of_running = |c: &Cluster| -> Vec<String> {
        let text =
            testcluster::process::output(c.cmd("squeue").args(["-h", "-t", "R", "-o", "%N"])).unwrap_or_default();
        let mut v: Vec<String> = text.lines().map(str::to_string).collect();
        v.sort();
        v
    };
    testcluster::wait::until("four tasks running, one a node", Duration::from_secs(30), || {
        let on = nodes_of_running(&c);
        if on == ["n1", "n2", "n3", "n4"] {
            Ok(Some(()))
        } else {
            Err(format!("{on:?}"))
        }
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", c.ctld_log()));
    run(c.cmd("scancel").arg(all.to_string())).unwrap();
    testcluster::wait::until("the array cancelled", Duration::from_secs(30), || {
        let on = nodes_of_running(&c);
        if on.is_empty() {
            Ok(Some(()))
        } else {
            Err(format!("{on:?}"))
        }
    })
    .unwrap();

    // %2: at most two at once, and two do run.
    let throttled = c.sbatch(&["-a", "1-6%2", "-N1", "-t", "1", "--wrap", "sleep 3"]).unwrap();
    let mut most = 0;
    testcluster::wait::until("the throttled array done", Duration::from_secs(90), || {
        most = most.max(nodes_of_running(&c).len());
        let left = testcluster::process::output(c.cmd("squeue").args(["-h", "-j", &throttled.to_string()]))
            .unwrap_or_default();
        if left.trim().is_empty() {
            Ok(Some(()))
        } else {
            Err(format!("{} left", left.lines().count()))
        }
    })
    .unwrap();
    assert_eq!(most, 2, "tasks running at once under %2");
}

/// squeue's partition of a job (`%P`).
fn partition(c: &Cluster, id: u32) -> String {
    let text = testcluster::process::output(c.cmd("squeue").args(["-h", "-j", &id.to_string(), "-o", "%P"]));
    text.unwrap_or_default().trim().to_string()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_higher_priority_tier_goes_first_and_a_job_of_two_partitions_runs_where_there_is_room() {
    let up_tier = |tier: u32| format!("MaxTime=INFINITE State=UP PriorityTier={tier}");
    let c = up_with(
        spec("t-tiers", 4)
            .partition(Partition::new("low", "n[1-4]").default_partition().extra(&up_tier(1)))
            .partition(Partition::new("high", "n[1-4]").extra(&up_tier(2)))
            .partition(Partition::new("left", "n[1-2]"))
            .partition(Partition::new("right", "n[3-4]")),
    );
    let long = ["-N4", "-t", "5", "--wrap", "sleep 300"];
    let all = |p: &'static str| -> Vec<&'static str> { ["-p", p].iter().chain(long.iter()).copied().collect() };
    let a = c.sbatch(&all("low")).unwrap();
    running(&c, a);
    // B waits first, but C's partition has the higher tier: C goes first.
    let b = c.sbatch(&all("low")).unwrap();
    let cc = c.sbatch(&all("high")).unwrap();
    wait_reason(&c, cc, "Resources");
    wait_reason(&c, b, "Priority");
    cancel(&c, a);
    running(&c, cc);
    assert!(c.job(b).unwrap().is_pending(), "B must wait for the higher tier's job");
    cancel(&c, cc);
    running(&c, b);
    cancel(&c, b);

    // `-p left,right` with left full: it runs in right, and squeue says so.
    let x = c.sbatch(&["-p", "left", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, x).node_list, "n[1-2]");
    let y = c.sbatch(&["-p", "left,right", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, y).node_list, "n[3-4]");
    assert_eq!(partition(&c, y), "right");
    // With both full, a third waits, and runs in the first to free.
    let z = c.sbatch(&["-p", "left,right", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    wait_reason(&c, z, "Resources");
    cancel(&c, y);
    assert_eq!(running(&c, z).node_list, "n[3-4]");
    assert_eq!(partition(&c, z), "right");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_constraint_keeps_a_job_to_nodes_with_its_features() {
    let c = up_with(spec("t-features", 4));
    run(c.cmd("scontrol").args(["update", "NodeName=n3,n4", "AvailableFeatures=fast", "ActiveFeatures=fast"])).unwrap();
    // The lowest free node with the feature.
    let one = c.sbatch(&["-C", "fast", "-N1", "-t", "2", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, one).node_list, "n3");
    // Two with it are not free: it waits for the first, and a job without
    // a constraint that ends before then runs on the two idle nodes.
    let two = c.sbatch(&["-C", "fast", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    wait_reason(&c, two, "Resources");
    let plain = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, plain).node_list, "n[1-2]");
    cancel(&c, one);
    assert_eq!(running(&c, two).node_list, "n[3-4]");
    cancel(&c, two);
    cancel(&c, plain);

    // Constraints about the set of nodes, which no node meets alone: the
    // lowest free nodes do not satisfy them, the set Slurm picks does.
    // A count: two nodes, one of them fast.
    let counted = c.sbatch(&["-C", "fast*1", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    let nodes = running(&c, counted).node_list;
    let hosts = hostnames(&c, &nodes);
    assert_eq!(hosts.len(), 2, "{nodes}");
    assert!(hosts.iter().any(|h| h == "n3" || h == "n4"), "no fast node in {nodes}");
    cancel(&c, counted);
    // Alternatives: both nodes slow or both fast; with n1 busy, the free
    // pair n2,n3 mixes them, n3,n4 does not.
    run(c.cmd("scontrol").args(["update", "NodeName=n1,n2", "AvailableFeatures=slow", "ActiveFeatures=slow"])).unwrap();
    let hole = c.sbatch(&["-w", "n1", "-N1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    running(&c, hole);
    let either = c.sbatch(&["-C", "[fast|slow]", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, either).node_list, "n[3-4]");
}

/// `--contiguous`: a job gets the lowest nodes in a row long enough, not the
/// lowest free ones (which slurmctld would refuse), and waits while no row
/// is free.
#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_contiguous_job_gets_nodes_in_a_row() {
    let c = up_with(spec("t-contiguous", 4));
    let hole = c.sbatch(&["-w", "n2", "-N1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    running(&c, hole);
    // n1, n3 and n4 are free: the lowest two in a row are n3 and n4.
    let pair = c.sbatch(&["--contiguous", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    assert_eq!(running(&c, pair).node_list, "n[3-4]");
    cancel(&c, pair);
    // Three free, but not in a row while n2 is busy.
    let three = c.sbatch(&["--contiguous", "-N3", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    wait_reason(&c, three, "Resources");
    cancel(&c, hole);
    assert_eq!(running(&c, three).node_list, "n[1-3]");
    let log = c.ctld_log();
    assert!(!said::any_refused_start().in_log(&log), "a start Slurm refused:\n{log}");
}
