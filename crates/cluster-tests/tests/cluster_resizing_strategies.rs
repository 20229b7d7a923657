//! Every strategy that resizes in the simulator resizes in slurmctld too:
//! fpsma and mtct-backfill grow an elastic job into idle nodes and shrink
//! it for a waiting job; power and power-running-only grow it when the
//! machine draws below the power corridor and shrink it when it draws above.
//! One cluster, the strategy changed by `scontrol reconfigure`.

use std::time::Duration;

use cluster_tests::malleable::{example_script, job_field, malleable_spec, submit, wait_said};
use cluster_tests::said;
use cluster_tests::up_with;
use testcluster::process::run;
use testcluster::Cluster;

fn use_conf(c: &Cluster, conf: &str) {
    std::fs::write(c.dir.join("etc/malleable.conf"), conf).unwrap();
    run(c.cmd("scontrol").arg("reconfigure")).unwrap();
    let first = conf.lines().next().unwrap().to_string();
    let took = said::Said::new(
        format!("reconfigured: {first}"),
        move |l| matches!(l, said::LogLine::Reconfigured { config } if config.starts_with(&first)),
    );
    wait_said(c, 0, &took, Duration::from_secs(20));
}

/// Submit the elastic job and wait until its runtime has said hello.
fn elastic(c: &Cluster, name: &str) -> u32 {
    let script = example_script(c, name, "--cells 4096 --iterations 100000 --unit-us 20");
    let id = submit(c, &script, &format!("{name}.out"), &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=4"]);
    wait_said(c, 0, &said::request_taken(id, "mall1 seq=1 HELLO"), Duration::from_secs(30));
    id
}

fn end(c: &Cluster, id: u32) {
    run(c.cmd("scancel").arg(id.to_string())).unwrap();
    c.wait_job(id, "cancelled", Duration::from_secs(30), |j| j.is_finished()).unwrap();
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn every_strategy_that_resizes_in_the_simulator_resizes_in_slurmctld() {
    // The power strategies need defer in slurm.conf, the others allow it.
    let spec = malleable_spec("t-resizers", 4, "Strategy=easy\nSchedulerTick=5\n")
        .set("SchedulerParameters", testcluster::plugins::POWER_SCHEDULER_PARAMETERS);
    let c = up_with(spec);
    for strategy in ["fpsma", "mtct-backfill"] {
        use_conf(&c, &format!("Strategy={strategy}\nSchedulerTick=5\n"));
        let id = elastic(&c, strategy);
        let grow = wait_said(&c, 0, &said::expand_committed(id, ""), Duration::from_secs(30));
        assert!(job_field(&c, id, "NumNodes").parse::<u32>().unwrap() > 1, "{strategy}: {grow}");
        let from = c.ctld_log().len();
        let rigid = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 1"]).unwrap();
        wait_said(&c, from, &said::shrink_committed(id, ""), Duration::from_secs(30));
        c.wait_job(rigid, "started", Duration::from_secs(30), |j| j.has_started()).unwrap();
        end(&c, id);
        // The next strategy's job starts on an idle cluster: were this
        // rigid job still running, the next one could start on the nodes
        // it frees, and no shrink would be needed.
        c.wait_job(rigid, "finished", Duration::from_secs(30), |j| j.is_finished()).unwrap();
    }

    // 4 idle nodes draw 284 W; the job's nodes 250 W each.
    let power = |strategy: &str, corridor: &str| {
        format!(
            "Strategy={strategy}\nSchedulerTick=1\nPowerCorridor={corridor}\nIdleNodeWatts=71\nDefaultJobWatts=250\n"
        )
    };
    for strategy in ["power", "power-running-only"] {
        // On one node it draws 463 W, under the corridor: it grows.
        use_conf(&c, &power(strategy, "800-2000"));
        let id = elastic(&c, strategy);
        wait_said(&c, 0, &said::expand_committed(id, ""), Duration::from_secs(30));
        let grown: u32 = job_field(&c, id, "NumNodes").parse().unwrap();
        assert!(grown > 1 && 250 * grown + 71 * (4 - grown) >= 800, "{strategy}: {grown} nodes");
        // A top of 700 W: it shrinks back under it.
        let from = c.ctld_log().len();
        use_conf(&c, &power(strategy, "0-700"));
        wait_said(&c, from, &said::shrink_committed(id, ""), Duration::from_secs(30));
        let shrunk: u32 = job_field(&c, id, "NumNodes").parse().unwrap();
        assert!(250 * shrunk + 71 * (4 - shrunk) <= 700, "{strategy}: {shrunk} nodes");
        end(&c, id);
    }
}
