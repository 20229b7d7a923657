//! SD-Policy on a real cluster (D'Amico et al. 2019): a waiting job that
//! allows it starts on cores of a running job that allows it, and task/drom
//! on the nodes gives each its own cores: the CPU masks of both jobs' tasks
//! (Cpus_allowed_list in /proc/PID/status) are disjoint while they share,
//! and whole again when one ends, whichever ends first. Nodes have 2 CPUs,
//! so the masks are real on this machine.

use std::path::Path;
use std::time::Duration;

use cluster_tests::malleable::{job_field, malleable_spec};
use cluster_tests::up_with;
use testcluster::spec::{NodeShape, Partition};
use testcluster::{wait, Cluster};

/// A CPU list as /proc writes it ("0-2,5"), as CPU ids.
fn cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// The CPUs process `pid` may run on.
fn cpus_of(pid: u32) -> Result<Vec<u32>, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| format!("pid {pid}: {e}"))?;
    let line = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).ok_or("no Cpus_allowed_list")?;
    Ok(cpu_list(line))
}

/// The CPUs of this machine the daemons run on (the nodes' CPUs), and the
/// split task/drom makes of them for a job given `cores` of `of`: the last
/// share for it, the first for the mate.
fn split(cores: u32, of: u32) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let all = cpus_of(std::process::id()).unwrap();
    let n = all.len() as u32;
    let taken = ((n * cores + of / 2) / of).clamp(1, n - 1) as usize;
    let (mate, job) = all.split_at(all.len() - taken);
    (all.clone(), mate.to_vec(), job.to_vec())
}

/// A batch script whose one task per node writes its pid to
/// `<name>.<node index>` and runs until the file `<name>.stop` exists.
fn script(c: &Cluster, name: &str) -> String {
    let d = c.dir.display();
    format!(
        "#!/bin/sh\nsrun -N2 --ntasks-per-node=1 sh -c 'echo $$ > {d}/{name}.$SLURM_NODEID; \
         while [ ! -e {d}/{name}.stop ]; do sleep 0.2; done'\n"
    )
}

fn submit(c: &Cluster, name: &str, limit: &str, extra: &[&str]) -> u32 {
    let path = c.dir.join(format!("{name}.sh"));
    std::fs::write(&path, script(c, name)).unwrap();
    let out = c.dir.join(format!("{name}.out")).display().to_string();
    let mut args = vec!["--malleable-cores", "-N2", "-t", limit, "-o", &out];
    args.extend_from_slice(extra);
    let p = path.display().to_string();
    args.push(&p);
    c.sbatch(&args).unwrap()
}

/// The pids of job `name`'s two tasks, once both wrote them.
fn pids(dir: &Path, name: &str) -> Result<Option<Vec<u32>>, String> {
    let read = |i| std::fs::read_to_string(dir.join(format!("{name}.{i}"))).ok()?.trim().parse().ok();
    match (read(0), read(1)) {
        (Some(a), Some(b)) => Ok(Some(vec![a, b])),
        _ => Err(format!("{name}'s tasks have not both written their pids")),
    }
}

/// Wait until every task in `pids` may run on exactly `want`.
fn masks_become(what: &str, pids: &[u32], want: &[u32]) {
    wait::until(what, Duration::from_secs(30), || {
        let now: Vec<Vec<u32>> = pids.iter().map(|&p| cpus_of(p)).collect::<Result<_, _>>()?;
        if now.iter().all(|m| m == want) {
            Ok(Some(()))
        } else {
            Err(format!("tasks {pids:?} may run on {now:?}, not {want:?}"))
        }
    })
    .unwrap();
}

fn stop(c: &Cluster, name: &str, id: u32) {
    std::fs::write(c.dir.join(format!("{name}.stop")), "").unwrap();
    c.wait_job(id, "completed", Duration::from_secs(30), |j| j.state == "COMPLETED").unwrap();
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_job_started_on_mates_cores_and_its_mate_each_run_on_their_own_cpus() {
    let spec = malleable_spec("t-drom", 2, "Strategy=sd-policy\nSchedulerTick=2\n")
        .shape(NodeShape { cores: 2, gpus: 0, memory_mb: 0 })
        .set("TaskPlugin", "task/drom")
        .set("SchedulerParameters", "sched_interval=-1,defer,permit_job_expansion")
        .partition(
            Partition::new("batch", "ALL").default_partition().extra("MaxTime=INFINITE State=UP OverSubscribe=YES:2"),
        )
        .partition(Partition::new("solo", "ALL").extra("MaxTime=INFINITE State=UP OverSubscribe=NO"));
    let c = up_with(spec);
    let (all, mate_cpus, job_cpus) = split(1, 2);

    // Sharing where it cannot be is refused at submit, saying why.
    let refused = |extra: &[&str]| {
        let mut args = vec!["--malleable-cores", "-N1", "--wrap", "true"];
        args.extend_from_slice(extra);
        c.sbatch(&args).expect_err("refused")
    };
    let e = refused(&["--exclusive"]);
    assert!(e.contains("--malleable-cores cannot be combined with --exclusive"), "{e}");
    let e = refused(&["-p", "solo"]);
    assert!(
        e.contains("--malleable-cores needs a partition whose cores two jobs may share, and partition solo has OverSubscribe=NO"),
        "{e}"
    );

    // A holds both nodes, both CPUs of each, for up to 10 minutes.
    let a = submit(&c, "A", "10", &["--ntasks-per-node=1", "-c2"]);
    c.wait_job(a, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let a_pids = wait::until("A's tasks", Duration::from_secs(30), || pids(&c.dir, "A")).unwrap();
    masks_become("A alone on its nodes", &a_pids, &all);

    // B needs both nodes for 2 minutes: waiting for A would end it after
    // 12 minutes, on half of A's cores it ends within 4; A's predicted
    // slowdown, 1.2, stays below MaxSlowdown=2. SD-Policy starts it on A's cores.
    let b = submit(&c, "B", "2", &[]);
    let started = c.wait_job(b, "running on A's cores", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let record = job_field(&c, b, "SystemComment");
    assert!(record.contains(&format!("mall1-cores job={b} cores=1 of=2 mates={a}")), "B's SystemComment: {record}");
    assert!(job_field(&c, a, "SystemComment").contains(&format!("job={b}")), "A records whom it lends to");
    // Eq. 6: B's 2 minutes on half the cores take 4; A, on half its cores
    // for those 4 minutes, falls 2 behind.
    assert_eq!((job_field(&c, b, "TimeLimit"), job_field(&c, a, "TimeLimit")), ("00:04:00".into(), "00:12:00".into()));
    assert_eq!(started.node_list, c.job(a).unwrap().node_list, "B runs on A's nodes");
    let b_pids = wait::until("B's tasks", Duration::from_secs(30), || pids(&c.dir, "B")).unwrap();
    masks_become("B on the cores taken", &b_pids, &job_cpus);
    masks_become("A on the cores it keeps", &a_pids, &mate_cpus);

    // B ends first: A has its cores back; both complete.
    stop(&c, "B", b);
    masks_become("A with all its cores again", &a_pids, &all);
    stop(&c, "A", a);

    // Now the mate ends first: its cores go to the job on them.
    let m = submit(&c, "M", "10", &["--ntasks-per-node=1", "-c2"]);
    c.wait_job(m, "running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let m_pids = wait::until("M's tasks", Duration::from_secs(30), || pids(&c.dir, "M")).unwrap();
    let j = submit(&c, "J", "2", &[]);
    c.wait_job(j, "running on M's cores", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let j_pids = wait::until("J's tasks", Duration::from_secs(30), || pids(&c.dir, "J")).unwrap();
    masks_become("J on the cores taken", &j_pids, &job_cpus);
    masks_become("M on the cores it keeps", &m_pids, &mate_cpus);
    assert!(c.cmd("scancel").arg(m.to_string()).status().unwrap().success());
    masks_become("J with all of M's cores", &j_pids, &all);
    stop(&c, "J", j);
}
