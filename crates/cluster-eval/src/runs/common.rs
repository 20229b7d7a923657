//! What the runs share, so that no run imports another: one workload run on
//! a fresh local cluster per strategy (so logs and job ids do not mix), the
//! same workload in the simulator with the real cluster's measured costs, the
//! tables, the plugin's pass times, a strategy switched on a running cluster.
//! xtask's demo takes the same pieces.

use std::path::{Path, PathBuf};
use std::time::Duration;

use malleable_core::StrategyChoice;
use malleable_model::log_lines::LogLine;
use malleable_sim::model::app_model::{AppModel, ResizeCost};
use malleable_sim::report::metrics::median;
use malleable_sim::workloads::workload::Workload;
use malleable_sim::{simulate, summarize, SimOptions, SimResult, Summary};
use testcluster::plugins;
use testcluster::{Cluster, ClusterSpec};

use crate::records::log_time;
use crate::replay::{ElasticApp, RealRun, Replay};

/// A run's error: what went wrong, said.
pub type Result<T> = std::result::Result<T, String>;

/// How the real runs are set up.
pub struct Setup {
    /// Clusters are named `<name>-<k>` for the k-th strategy.
    pub name: String,
    pub nodes: usize,
    /// SchedulerTick, s (the simulator ticks the same).
    pub tick: u32,
    /// mall-run's --poll-ms.
    pub poll_ms: u64,
    /// Leave the last cluster running.
    pub keep: bool,
    pub drain_timeout: Duration,
    /// Slurm's own sched/backfill schedules, with select/natural answering
    /// the jobs that ask (Iserte et al. 2025's set-up), instead of
    /// sched/malleable.
    pub beside_backfill: bool,
    /// What the malleable jobs run; the MPI application's clusters give
    /// each node a network namespace and a TmpFS of its own (mpi/pmix keeps
    /// a job's files there by the job's name alone).
    pub app: ElasticApp,
}

/// Run `w` under each strategy, each on its own fresh cluster, with the
/// plugins (and their `bin/` of tools) staged in `staged`.
pub fn real_runs(staged: &Path, w: &Workload, strategies: &[String], s: &Setup) -> Result<Vec<RealRun>> {
    let bin = staged.join("bin");
    let mut runs = Vec::new();
    for (k, strategy) in strategies.iter().enumerate() {
        let base = ClusterSpec::new(&format!("{}-{}", s.name, k + 1), s.nodes);
        let spec = if s.beside_backfill {
            plugins::select_natural(base, staged)
        } else {
            plugins::sched_malleable(base, staged)
        };
        let mut spec = spec.file("malleable.conf", &malleable_conf(strategy, s.tick)?);
        if s.app == ElasticApp::MpiRestart {
            spec = spec.own_tmpfs().networked();
        }
        let mut cluster = Cluster::up(spec)?;
        cluster.keep = s.keep && k + 1 == strategies.len();
        println!("{strategy}: {}-node cluster up in {}", s.nodes, cluster.dir.display());
        let replay = Replay {
            app: s.app,
            cluster: &cluster,
            bin: &bin,
            poll_ms: s.poll_ms,
            label: strategy.clone(),
            drain_timeout: s.drain_timeout,
        };
        let run = replay.run(w).inspect_err(|_| cluster.print_logs())?;
        if cluster.keep {
            println!("cluster left running: export SLURM_CONF={}", cluster.conf_path().display());
        }
        runs.push(run);
    }
    Ok(runs)
}

/// malleable.conf for `NAME` or `NAME[Key=value,...]` (the simulator's
/// spelling): `Strategy=NAME`, each parameter on a line of its own.
fn malleable_conf(strategy: &str, tick: u32) -> Result<String> {
    // The core's own reading of NAME[Key=value,...]: a bad name or value
    // stops here, before a cluster is started, with the plugin's message.
    let choice = StrategyChoice::parse(strategy)?;
    let mut conf = format!("Strategy={}\nSchedulerTick={tick}\n", choice.name());
    for kv in choice.params.explicit() {
        conf += &format!("{kv}\n");
    }
    Ok(conf)
}

/// What a real run needs its jobs to have done: each started by
/// sched/malleable and completed. Every one that did not, said.
pub fn failures(run: &RealRun) -> Vec<String> {
    run.jobs
        .iter()
        .filter_map(|j| {
            if j.logged.start.is_none() {
                Some(format!("{}: job {} (JobId={}) has no start in slurmctld's log", run.label, j.spec.id, j.slurm_id))
            } else if j.state != "COMPLETED" {
                Some(format!("{}: job {} (JobId={}) ended {}", run.label, j.spec.id, j.slurm_id, j.state))
            } else {
                None
            }
        })
        .collect()
}

/// The median of (real run time - the workload's run time) over the jobs
/// of `runs` that never resized, rigid (`malleable` false) or malleable:
/// the launch and completion overhead of such a job on this cluster, which
/// the simulator then adds as its start delay.
pub fn measured_start_delay(runs: &[RealRun], malleable: bool) -> Option<f64> {
    let d: Vec<f64> = runs
        .iter()
        .flat_map(|r| &r.jobs)
        // No node gained or given up: never resized, nor an expand begun and rolled back.
        .filter(|j| j.spec.malleable.is_some() == malleable && j.logged.changes.is_empty())
        .filter_map(|j| Some(j.logged.end? - j.logged.start? - j.spec.run_time))
        .collect();
    (!d.is_empty()).then(|| median(&d).max(0.0))
}

/// The median time from the event that let a job start (its submission or
/// another job's end, the latest before its start) to its start, over the
/// jobs of `runs` that started within a second of one: how long slurmctld
/// takes to wake the plugin's agent and pass. Later starts came from a tick
/// or waited for a reservation, and say nothing of it.
pub fn measured_pass_delay(runs: &[RealRun]) -> Option<f64> {
    let mut d = Vec::new();
    for r in runs {
        let mut events: Vec<f64> = r.jobs.iter().flat_map(|j| [j.logged.submit, j.logged.end]).flatten().collect();
        events.sort_by(f64::total_cmp);
        for start in r.jobs.iter().filter_map(|j| j.logged.start) {
            let before = events.partition_point(|&e| e <= start);
            if let Some(gap) = before.checked_sub(1).map(|k| start - events[k]) {
                if gap < 1.0 {
                    d.push(gap);
                }
            }
        }
    }
    (!d.is_empty()).then(|| median(&d))
}

/// What the simulator takes from the real runs.
#[derive(Clone, Copy, Debug)]
pub struct Overheads {
    pub start_delay: f64,
    pub malleable_start_delay: f64,
    pub pass_delay: f64,
}

/// The overheads measured on `runs` (0 where nothing measured them).
pub fn measured_overheads(runs: &[RealRun]) -> Overheads {
    let rigid = measured_start_delay(runs, false).unwrap_or(0.0);
    Overheads {
        start_delay: rigid,
        malleable_start_delay: measured_start_delay(runs, true).unwrap_or(rigid),
        pass_delay: measured_pass_delay(runs).unwrap_or(0.0),
    }
}

/// The simulator's run of `w` under `strategy`, set up like the real cluster:
/// the example application scales linearly, the same tick, the measured
/// resize cost, start and pass delays.
pub fn sim_run(w: &Workload, strategy: &str, tick: u32, o: Overheads) -> Result<(Summary, SimResult)> {
    let choice = StrategyChoice::parse(strategy)?;
    let opts = SimOptions {
        app_model: AppModel::Linear,
        tick: f64::from(tick),
        resize_cost: ResizeCost::MEASURED,
        start_delay: o.start_delay,
        malleable_start_delay: o.malleable_start_delay,
        pass_delay: o.pass_delay,
        // As the plugin's agent: a pass at least every SchedulerTick.
        tick_while_running: true,
        ..SimOptions::default()
    };
    let r = simulate(w, choice.build().as_mut(), opts);
    Ok((summarize(&choice, &r), r))
}

/// A real run's summary, by the simulator's code.
pub fn real_summary(run: &RealRun) -> Result<Summary> {
    Ok(summarize(&StrategyChoice::parse(&run.label)?, &run.as_sim_result()))
}

/// Per job: submitted, started, ended (s from the first submission), nodes
/// at start and at end, expands and shrinks.
pub fn job_table(run: &RealRun) -> String {
    let mut out = format!(
        "{:>4} {:>6} {:<22} {:>7} {:>7} {:>7} {:>6} {:>7} {:>4} {:>4}\n",
        "job", "JobId", "kind", "submit", "start", "end", "wait", "nodes", "exp", "shr"
    );
    for (j, r) in run.jobs.iter().zip(run.records()) {
        let kind = match j.spec.malleable {
            None => "rigid".to_string(),
            Some(m) => format!("elastic {} {}..{}", m.constraint, m.min, m.max),
        };
        let nodes = if r.start_nodes == r.final_nodes {
            format!("{}", r.start_nodes)
        } else {
            format!("{}->{}", r.start_nodes, r.final_nodes)
        };
        out.push_str(&format!(
            "{:>4} {:>6} {:<22} {:>7.1} {:>7.1} {:>7.1} {:>6.1} {:>7} {:>4} {:>4}\n",
            j.spec.id,
            j.slurm_id,
            kind,
            r.submit,
            r.start,
            r.end,
            r.start - r.submit,
            nodes,
            r.expands,
            r.shrinks
        ));
    }
    out
}

/// Summaries side by side, with each column's ratio to the first.
pub fn summary_table(rows: &[Summary]) -> String {
    let mut out = format!("{:<28}", "");
    for r in rows {
        out.push_str(&format!("{:>16}", r.strategy));
    }
    out.push('\n');
    type Field = (&'static str, fn(&Summary) -> f64);
    let fields: [Field; 5] = [
        ("makespan (s)", |s| s.makespan_s),
        ("mean wait (s)", |s| s.mean_wait_s),
        ("mean response (s)", |s| s.mean_response_s),
        ("utilization (%)", |s| 100.0 * s.utilization),
        ("expands + shrinks", |s| (s.expands + s.shrinks) as f64),
    ];
    for (name, f) in fields {
        out.push_str(&format!("{name:<28}"));
        for r in rows {
            let v = f(r);
            let cell = if name.starts_with("expands") { format!("{v:.0}") } else { format!("{v:.1}") };
            out.push_str(&format!("{cell:>16}"));
        }
        out.push('\n');
    }
    if rows.len() > 1 {
        for (name, f) in fields.iter().take(4) {
            out.push_str(&format!(
                "{:<28}",
                format!("{} / {}", name.split(" (").next().unwrap_or(name), rows[0].strategy)
            ));
            for r in rows {
                let base = f(&rows[0]);
                let cell = if base.abs() > 1e-9 { format!("{:.3}", f(r) / base) } else { "-".into() };
                out.push_str(&format!("{cell:>16}"));
            }
            out.push('\n');
        }
    }
    out
}

/// Write `text` to `file` in `dir`, making the folder.
pub fn write_text(dir: &Path, file: &str, text: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join(file), text).map_err(|e| format!("{}: {e}", dir.join(file).display()))
}

/// Write `value` as pretty JSON to `dir/file`.
pub fn write_json(dir: &Path, file: &str, value: &impl serde::Serialize) -> Result<PathBuf> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    write_text(dir, file, &text)?;
    Ok(dir.join(file))
}

/// The plugin's debug lines per pass, in milliseconds, one entry a pass.
#[derive(Debug, Default, PartialEq)]
pub struct PassTimes {
    /// The locks held to read and to apply (wall time).
    pub read: Vec<f64>,
    pub apply: Vec<f64>,
    /// How much of those two the agent thread was on the CPU.
    pub on_cpu: Vec<f64>,
    /// And how much it was runnable, waiting for a CPU (where the line
    /// says: the kernel keeps it).
    pub queued: Vec<f64>,
    /// Deciding, without the locks.
    pub decide: Vec<f64>,
}

/// The plugin's debug line per pass, read from slurmctld's log.
pub fn pass_times(log: &str) -> PassTimes {
    let mut t = PassTimes::default();
    for line in log.lines().filter(|l| log_time(l).is_some()) {
        if let Some(LogLine::LocksHeld { read_ms, apply_ms, on_cpu_ms, queued_ms, decide_ms, .. }) =
            LogLine::parse(line)
        {
            t.read.push(read_ms);
            // Not taken again: no time held to apply.
            t.apply.push(apply_ms.unwrap_or(0.0));
            t.on_cpu.push(on_cpu_ms);
            t.queued.extend(queued_ms);
            t.decide.push(decide_ms);
        }
    }
    t
}

/// Give the running cluster's sched/malleable `Strategy=name` (and the
/// malleable.conf lines `extra`), a pass every second, and wait until its
/// log says it took them.
pub fn switch_strategy(cluster: &Cluster, name: &str, extra: &str) -> Result<()> {
    let conf = format!("Strategy={name}\nSchedulerTick=1\n{extra}");
    std::fs::write(cluster.dir.join("etc/malleable.conf"), &conf).map_err(|e| e.to_string())?;
    let from = cluster.ctld_log().len();
    testcluster::process::run(cluster.cmd("scontrol").arg("reconfigure"))?;
    let head = format!("Strategy={name}");
    // The agent's word that it took them: its config, said as it reads it, starts with the strategy.
    let took =
        |l: &str| matches!(LogLine::parse(l), Some(LogLine::Reconfigured { config }) if config.starts_with(&head));
    testcluster::wait::until(&format!("sched/malleable: reconfigured: {head}"), Duration::from_secs(60), || {
        Ok(cluster.ctld_log().get(from..).is_some_and(|l| l.lines().any(took)).then_some(()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_table_gives_ratios_to_the_first_strategy() {
        let easy = Summary { strategy: "easy".into(), makespan_s: 100.0, mean_wait_s: 40.0, ..Summary::default() };
        let mtct = Summary {
            strategy: "mtct-backfill".into(),
            makespan_s: 80.0,
            mean_wait_s: 10.0,
            expands: 3,
            shrinks: 2,
            ..Summary::default()
        };
        let t = summary_table(&[easy, mtct]);
        let line = |head: &str| t.lines().find(|l| l.starts_with(head)).unwrap().split_whitespace().collect::<Vec<_>>();
        assert_eq!(line("makespan (s)")[2..], ["100.0", "80.0"]);
        assert_eq!(line("makespan / easy")[3..], ["1.000", "0.800"]);
        assert_eq!(line("mean wait / easy")[4..], ["1.000", "0.250"]);
        assert_eq!(line("expands + shrinks")[3..], ["0", "5"]);
    }

    #[test]
    fn a_strategys_parameters_become_malleable_conf_lines() {
        assert_eq!(malleable_conf("natural", 5).unwrap(), "Strategy=natural\nSchedulerTick=5\n");
        assert_eq!(
            malleable_conf("natural-plan[ShortestFirst=1, WideUnbooked=1]", 5).unwrap(),
            "Strategy=natural-plan\nSchedulerTick=5\nShortestFirst=1\nWideUnbooked=1\n"
        );
        // Keys in any spelling come out as declared; a bad value is caught here, before a cluster starts.
        assert_eq!(
            malleable_conf("Conservative[max_job_test=7]", 1).unwrap(),
            "Strategy=conservative\nSchedulerTick=1\nMaxJobTest=7\n"
        );
        assert_eq!(
            malleable_conf("conservative[MaxJobTest=0]", 1).unwrap_err(),
            "conservative: MaxJobTest=0 is not valid: expected a whole number from 1 to 1000000 (waiting jobs tested \
             and booked per pass, as sched/backfill's bf_max_job_test)"
        );
    }

    fn job(id: u32, run_time: f64, submit: f64, start: f64, end: f64) -> crate::replay::RunJob {
        use crate::records::LoggedJob;
        use malleable_sim::workloads::workload::JobSpec;
        let spec = JobSpec::rigid(id, submit, 1, run_time, 60.0);
        let logged = LoggedJob { submit: Some(submit), start: Some(start), end: Some(end), ..LoggedJob::default() };
        crate::replay::RunJob { spec, slurm_id: id, logged, state: "COMPLETED".into(), output: None }
    }

    #[test]
    fn overheads_are_medians_of_what_the_real_run_logged() {
        // Job 1 starts 0.02 s after its submission; job 2, submitted at 1,
        // waits for job 1's end at 10.04 and starts 0.04 s after it; job 3
        // starts 0.03 s after its submission; job 4 starts 5 s after the
        // last event (a tick): no measure of the pass delay.
        let run = RealRun {
            label: "easy".into(),
            nodes: 1,
            node_names: vec!["n1".into()],
            jobs: vec![
                job(1, 10.0, 0.0, 0.02, 10.04),
                job(2, 5.0, 1.0, 10.08, 15.18),
                job(3, 2.0, 20.0, 20.03, 22.09),
                job(4, 1.0, 30.0, 35.0, 36.01),
            ],
            t0: 0.0,
        };
        let o = measured_overheads(std::slice::from_ref(&run));
        // Gaps 0.02, 0.04, 0.03: median 0.03.
        assert!((o.pass_delay - 0.03).abs() < 1e-9, "{o:?}");
        // Overheads 0.02, 0.1, 0.06, 0.01: median (0.02 + 0.06) / 2. No
        // malleable job: the rigid figure stands for both.
        assert!((o.start_delay - 0.04).abs() < 1e-9, "{o:?}");
        assert_eq!(o.malleable_start_delay, o.start_delay);
    }

    #[test]
    fn pass_times_are_read_from_the_debug_lines() {
        let log = "[2026-11-24T01:00:00.100] debug:  sched/malleable: pass 7: slurmctld's locks held 0.4 ms to read, 1.5 ms to apply, on the CPU 1.8 ms of them (none while deciding, 2.0 ms)\n\
                   [2026-11-24T01:00:01.100] debug:  sched/malleable: pass 8: slurmctld's locks held 0.2 ms to read, 0.5 ms to apply, on the CPU 0.3 ms of them, waiting for one 0.4 ms (none while deciding, 9.0 ms)\n\
                   [2026-11-24T01:00:01.200] sched/malleable: started JobId=3 on n1 (mtct-backfill)\n";
        let t = pass_times(log);
        assert_eq!(
            t,
            PassTimes {
                read: vec![0.4, 0.2],
                apply: vec![1.5, 0.5],
                on_cpu: vec![1.8, 0.3],
                queued: vec![0.4],
                decide: vec![2.0, 9.0]
            }
        );
    }
}
