//! A step whose workers never reach mall-run: chaos run 23's step had its
//! slurmstepd die at the launch (the node's /tmp full) and srun waited for
//! it until the job's time limit. Here the first launch's application
//! hangs before the runtime's init; mall-run ends the step after
//! `--connect-within` and starts it again, and the job computes its result.

use std::time::Duration;

use cluster_tests::malleable::{checksum_in, job_output, malleable_spec, serial_checksum, submit, tool};
use cluster_tests::up_with;

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_step_whose_workers_never_connect_is_started_again_and_the_job_completes() {
    let c = up_with(malleable_spec("t-lostlaunch", 2, "Strategy=easy\nSchedulerTick=5\n"));
    let app = "--cells 2048 --iterations 40 --unit-us 20";
    // The first launch hangs before the runtime's init; the next one runs.
    let marker = c.dir.join("launched-once");
    let wrapper = c.dir.join("app.sh");
    let text = format!(
        "#!/bin/sh\nif [ ! -e {m} ]; then touch {m}; exec sleep 600; fi\nexec {} \"$@\"\n",
        tool("mall-example").display(),
        m = marker.display()
    );
    std::fs::write(&wrapper, text).unwrap();
    let script = c.dir.join("lostlaunch.sh");
    let text = format!(
        "#!/bin/sh\nexec {} --poll-ms 50 --report-every 1 --connect-within 10 -- /bin/sh {} {app}\n",
        tool("mall-run").display(),
        wrapper.display()
    );
    std::fs::write(&script, text).unwrap();
    let id = submit(&c, &script, "lostlaunch.out", &["-N1", "--min-nodes-invasive=1", "--max-nodes-invasive=2"]);
    // Without mall-run's deadline the job would wait out its 5 minutes.
    let j = c.wait_job(id, "finished", Duration::from_secs(120), |j| j.is_finished()).unwrap();
    let out = job_output(&c, "lostlaunch.out");
    assert!(marker.exists(), "the first launch ran the wrapper");
    assert_eq!(j.state, "COMPLETED", "{out}");
    assert!(out.contains("none of its workers has connected"), "{out}");
    assert_eq!(checksum_in(&out), Some(serial_checksum(app)), "{out}");
}
