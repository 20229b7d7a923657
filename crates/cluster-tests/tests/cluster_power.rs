//! Strategy=power on a real cluster: the power budget holds a start back and
//! says why, a wider corridor from `scontrol reconfigure` or from the
//! PowerCorridorSchedule lets it start (at the scheduled moment, not at the
//! next SchedulerTick), and bad power settings stop slurmctld with a message
//! naming the key. Here the jobs are rigid, so the strategy controls which
//! start; its resizes are tested in cluster_resizing_strategies.rs.

use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cluster_tests::malleable::wait_said;
use cluster_tests::said::{self, CorridorCause, JobId, LogLine};
use cluster_tests::{refused, start_lines, up_with};
use malleable_model::slurm_lines::SlurmLine;
use malleable_model::Corridor;
use testcluster::jobs::parse_time;
use testcluster::process::output;
use testcluster::wait;
use testcluster::Cluster;

/// Job `job` held back under a 300 W top: 4 idle nodes at 71 W draw
/// 284 W; one node of a 250 W job adds 179 W.
fn held(job: u32) -> said::Said {
    let corridor = Corridor::new(0.0, 300.0).unwrap();
    said::power_held(LogLine::PowerHeld { job: JobId(job), nodes: 1, before_w: 284.0, after_w: 463.0, corridor })
}

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

/// `t` in this machine's local time as an admin writes it in malleable.conf
/// (and as scontrol prints StartTime=): date(1) reads TZ and /etc/localtime
/// as slurmctld does.
fn local_time(t: i64) -> String {
    output(Command::new("date").arg("-d").arg(format!("@{t}")).arg("+%Y-%m-%dT%H:%M:%S")).unwrap().trim().to_string()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn power_budget_holds_a_start_until_reconfigure_widens_the_corridor() {
    let conf = |corridor: &str| {
        format!("Strategy=power\nSchedulerTick=1\nPowerCorridor={corridor}\nIdleNodeWatts=71\nDefaultJobWatts=250\n")
    };
    let c = up_with(cluster_tests::power_spec("t-power", 4).file("malleable.conf", &conf("0-300")));
    assert!(
        said::agent_started_with(
            "Strategy=power SchedulerTick=1 PowerCorridor=0-300 IdleNodeWatts=71 DefaultJobWatts=250"
        )
        .in_log(&c.ctld_log()),
        "the power settings should be in the start line"
    );

    let a = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    wait_said(&c, 0, &held(a), Duration::from_secs(20));
    let j = c.job(a).unwrap();
    assert!(j.is_pending(), "a start drawing 463 W must wait under a 300 W top, is {}", j.state);
    // squeue says why, in Slurm's word for it.
    wait::until("squeue to say the job waits for power", Duration::from_secs(20), || {
        let r = output(c.cmd("squeue").args(["-h", "-j", &a.to_string(), "-o", "%r"]))?;
        if r.trim() == "PowerNotAvail" {
            Ok(Some(()))
        } else {
            Err(r)
        }
    })
    .unwrap();
    // A second job's line proves later passes ran (SchedulerTick=1, and its
    // submit); the first job was not said again in them.
    let b = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    wait_said(&c, 0, &held(b), Duration::from_secs(20));
    let log = c.ctld_log();
    assert_eq!(held(a).count(&log), 1, "said once per job, not every pass");
    assert!(c.job(a).unwrap().is_pending() && c.job(b).unwrap().is_pending());

    std::fs::write(c.dir.join("etc/malleable.conf"), conf("0-1000")).unwrap();
    output(c.cmd("scontrol").arg("reconfigure")).unwrap();
    let widened = said::corridor("0-1000", CorridorCause::Reconfigured);
    wait_said(&c, 0, &widened, Duration::from_secs(20));
    // 284 + 179 + 179 = 642 W: both fit under 1000 W.
    let jobs = c.wait_all_finished(&[a, b], Duration::from_secs(30)).unwrap();
    for j in &jobs {
        assert_eq!(j.state, "COMPLETED", "JobId={} ended {}", j.id, j.state);
        let lines = start_lines(&c, j.id);
        assert!(
            lines.len() == 1 && lines[0].ends_with("(power)"),
            "JobId={} started by the power strategy: {lines:?}",
            j.id
        );
    }
    let log = c.ctld_log();
    let reconfigured = widened.find(&log).unwrap();
    assert!(log.find(&start_lines(&c, a)[0]).unwrap() > reconfigured, "started only after the corridor widened");
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_scheduled_corridor_change_starts_the_held_job_at_its_time() {
    // A change 20 s ahead, written in local time; SchedulerTick=60 so that
    // only the change itself can explain a start at its time.
    let at = unix_now() + 20;
    let when = local_time(at);
    let spec = cluster_tests::power_spec("t-power-sched", 4);
    let spec = spec.file(
        "malleable.conf",
        &format!(
            "Strategy=power\nSchedulerTick=60\nPowerCorridor=0-300\nPowerCorridorSchedule={when}@0-1000\n\
         IdleNodeWatts=71\nDefaultJobWatts=250\n"
        ),
    );
    let c = up_with(spec);
    let schedule = format!("PowerCorridorSchedule={when}@0-1000");
    let started =
        |l: &str| matches!(LogLine::parse(l), Some(LogLine::AgentStarted { config }) if config.contains(&schedule));
    assert!(c.ctld_log().lines().any(started), "the schedule should be in the agent's first line");

    let a = c.sbatch(&["-N1", "-t", "1", "--wrap", "sleep 1"]).unwrap();
    wait_said(&c, 0, &held(a), Duration::from_secs(15));
    let j = c.job(a).unwrap();
    assert!(j.is_pending(), "the job must wait for the change, is {}", j.state);
    assert!(unix_now() < at, "the cluster came up too slowly: the change was due before the job was held");

    let timeout = Duration::from_secs((at - unix_now()).max(0) as u64 + 20);
    let j = c.wait_job(a, "started after the scheduled change", timeout, |j| j.has_started()).unwrap();
    wait_said(&c, 0, &said::corridor("0-1000", CorridorCause::Scheduled), Duration::from_secs(5));
    // StartTime and the schedule are both local time: compare them as such.
    let (start, due) = (j.start.unwrap(), parse_time(&when).unwrap());
    assert!(start >= due, "started at {start:?} before the change at {when}");
    assert!(start <= due + 5, "started {} s after the change: the change should trigger a pass", start - due);
    let lines = start_lines(&c, a);
    assert!(lines.len() == 1 && lines[0].ends_with("(power)"), "{lines:?}");
}

#[test]
#[ignore = "needs slurmctld: cargo xtask test"]
fn bad_power_settings_refuse_the_load_naming_the_key() {
    let spec = cluster_tests::power_spec("t-power-bad", 1);
    let spec = spec.file("malleable.conf", "Strategy=power\nPowerCorridor=300-200\n");
    let c = Cluster::create(spec).unwrap();
    let (refusal, log) = refused(&c);
    assert!(
        refusal.why().contains(
            "/etc/malleable.conf: line 2: PowerCorridor=300-200 is not valid (300-200: LOW must be below HIGH): \
             expected LOW-HIGH in watts with 0 <= LOW < HIGH"
        ),
        "{refusal}"
    );
    let failed = log.lines().any(|l| SlurmLine::parse(l) == Some(SlurmLine::SchedPluginFailed));
    assert!(failed, "slurmctld should report the failed load");

    let spec = c.spec.clone();
    drop(c);
    let spec = spec.file("malleable.conf", "Strategy=power\nSchedulerTick=5\n");
    let c = Cluster::create(spec).unwrap();
    let (refusal, _) = refused(&c);
    assert!(
        refusal.why().contains(
            "/etc/malleable.conf: line 1: Strategy=power needs a power corridor: add PowerCorridor=LOW-HIGH, the \
             watts the machine may draw (e.g. PowerCorridor=1700-2500), to malleable.conf"
        ),
        "{refusal}"
    );

    // A valid corridor, but slurm.conf without defer (slurmctld would start
    // srun and salloc jobs at submit past the budget): the plugin adds it.
    let spec = c.spec.clone();
    drop(c);
    let spec = spec
        .set("SchedulerParameters", testcluster::plugins::SCHEDULER_PARAMETERS)
        .file("malleable.conf", "Strategy=power\nPowerCorridor=0-300\n");
    let c = up_with(spec);
    let log = c.ctld_log();
    let added = LogLine::ParametersAdded {
        lacks: vec!["defer".into()],
        reasons: "without defer slurmctld would start srun and salloc jobs at submit without asking the power budget"
            .into(),
        was: "sched_interval=-1,permit_job_expansion".into(),
        now: "sched_interval=-1,permit_job_expansion,defer".into(),
    };
    assert!(log.lines().any(|l| LogLine::parse(l).as_ref() == Some(&added)), "{log}");
}
