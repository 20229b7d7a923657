//! The change feed (issue 35) on a real slurmctld: forced on for a short
//! queue (`WholeReadBelow=0`, `RecheckPerPass=2`), a pass reads only the
//! jobs that may have changed, and an admin's hold, release and Priority=
//! (which job_submit/malleable notes) and a scancel of a waiting job (which
//! sdiag counts, and its record's fingerprint shows) are honoured at the
//! next pass, a `scontrol top` (no sign at
//! all) within ceil(waiting / RecheckPerPass) passes, and a dependency met by
//! a job's end at the pass after the end is seen, as the README says; and
//! a waiting job is read again the second its time limit, counted from
//! then, reaches into a reservation still to come; and a node resumed is
//! offered at the next pass, though reads keep the last walk of the nodes;
//! and a pass with nothing to write does not take the locks again, while
//! the next start still comes.

use std::time::Duration;

use cluster_tests::malleable::malleable_spec;
use cluster_tests::up_with;
use malleable_model::log_lines::LogLine;
use testcluster::process::output;
use testcluster::Cluster;

/// Waiting records read again in turn at each pass (malleable.conf).
const RECHECK: usize = 2;

fn scontrol(c: &Cluster, args: &[&str]) {
    output(c.cmd("scontrol").args(args)).unwrap_or_else(|e| panic!("scontrol {args:?}: {e}"));
}

/// squeue's Reason for a job.
fn reason(c: &Cluster, id: u32) -> String {
    output(c.cmd("squeue").args(["-h", "-j", &id.to_string(), "-o", "%r"])).unwrap_or_default().trim().to_string()
}

/// A job's priority, as squeue shows it.
fn priority(c: &Cluster, id: u32) -> u64 {
    let text = output(c.cmd("squeue").args(["-h", "-j", &id.to_string(), "-o", "%Q"])).unwrap_or_default();
    text.trim().parse().unwrap_or_else(|e| panic!("priority of {id} '{text}': {e}"))
}

/// The feed's lines and the passes' ends in a stretch of slurmctld's log.
fn said(log: &str) -> (Vec<(usize, Option<String>, usize)>, usize) {
    let mut reads = Vec::new();
    let mut passes = 0;
    for l in log.lines() {
        match LogLine::parse(l) {
            Some(LogLine::FeedRead { records, whole, kept, .. }) => reads.push((records, whole, kept)),
            Some(LogLine::LocksHeld { .. }) => passes += 1,
            _ => {}
        }
    }
    (reads, passes)
}

/// Do `act`, then wait until job `job` shows Reason `want`: how many passes
/// ended meanwhile, and the feed's reads in that time.
fn passes_until(c: &Cluster, what: &str, act: impl FnOnce(), job: u32, want: &str) -> (usize, Vec<Option<String>>) {
    let from = c.ctld_log().len();
    act();
    testcluster::wait::until(what, Duration::from_secs(60), || {
        let now = reason(c, job);
        if now == want {
            Ok(Some(()))
        } else {
            Err(format!("JobId={job} shows {now}"))
        }
    })
    .unwrap_or_else(|e| {
        c.print_logs();
        panic!("{what}: {e}")
    });
    let (reads, passes) = said(&c.ctld_log()[from..]);
    eprintln!("{what}: honoured after {passes} pass ends, reads {reads:?}");
    (passes, reads.into_iter().map(|(_, whole, _)| whole).collect())
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn hold_release_priority_top_and_scancel_are_honoured_within_the_feeds_bound() {
    let conf = format!("Strategy=easy\nSchedulerTick=1\nWholeReadBelow=0\nRecheckPerPass={RECHECK}\n");
    // The feed's and the passes' lines are at debug level.
    let c = up_with(malleable_spec("t-feed", 2, &conf).set("SlurmctldDebug", "debug"));
    let job = || c.sbatch(&["-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    // A holds both nodes until the test lets it end by itself (no cancel).
    let done = c.dir.join("a-done");
    let wait_for = format!("while [ ! -e {} ]; do sleep 0.2; done", done.display());
    let a = c.sbatch(&["-N2", "-t", "5", "--wrap", &wait_for]).unwrap();
    c.wait_job(a, "A running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    // Eight waiting, each wanting both nodes: the head shows Resources, the
    // rest Priority (EASY), in submission order (priority/basic).
    let w: Vec<u32> = (0..8).map(|_| job()).collect();
    // Once they are older than BatchStartDelay (read at every pass until
    // then), a read of changes reads the running job and two in turn, not
    // the queue.
    let from = c.ctld_log().len();
    testcluster::wait::until("reads of changes only", Duration::from_secs(60), || {
        let (reads, _) = said(&c.ctld_log()[from..]);
        let few = reads.iter().any(|(n, whole, kept)| whole.is_none() && *kept == 8 && *n <= 1 + RECHECK);
        Ok((few && reason(&c, w[0]) == "Resources").then_some(()))
    })
    .unwrap_or_else(|e| {
        c.print_logs();
        panic!("{e}")
    });

    // Noted by job_submit/malleable's job_modify: at the next pass (the pass
    // under way when the command came may have read before it: two ends).
    let (n, _) = passes_until(&c, "hold", || scontrol(&c, &["hold", &w[0].to_string()]), w[1], "Resources");
    assert!(n <= 2, "hold seen within {n} passes, not at the next");
    assert_eq!(reason(&c, w[0]), "JobHeldAdmin");
    let above = priority(&c, w[1]) + 10;
    let raise = || scontrol(&c, &["update", &format!("JobId={}", w[5]), &format!("Priority={above}")]);
    let (n, _) = passes_until(&c, "Priority=", raise, w[5], "Resources");
    assert!(n <= 2, "Priority= seen within {n} passes, not at the next");
    let (n, _) = passes_until(&c, "release", || scontrol(&c, &["release", &w[0].to_string()]), w[0], "Priority");
    assert!(n <= 2, "release seen within {n} passes, not at the next");

    // No sign: read in turn, within ceil(8 / 2) passes (and one under way).
    let bound = 8usize.div_ceil(RECHECK) + 1;
    let (n, reads) = passes_until(&c, "top", || scontrol(&c, &["top", &w[7].to_string()]), w[7], "Resources");
    assert!(n <= bound, "top seen after {n} passes, beyond the bound of {bound}");
    assert!(reads.iter().all(Option::is_none), "seen by a read of changes, not a whole one: {reads:?}");

    // A waiting job cancelled: sdiag counts it, no read of changes saw it,
    // so every kept record's fingerprint is looked at, and the cancelled
    // job's state has moved: seen at the next pass, without a whole read.
    let (n, reads) =
        passes_until(&c, "scancel", || drop(output(c.cmd("scancel").arg(w[7].to_string()))), w[5], "Resources");
    assert!(n <= 2, "scancel seen within {n} passes, not at the next");
    assert!(reads.iter().all(Option::is_none), "the cancel found by reads of changes: {reads:?}");

    // A dependency met by A's end, which leaves no sign of its own: the
    // dependent job is read at the pass after the end is seen, in the turn
    // of the jobs kept out for what an end may lift, not in the queue's turn
    // (sixteen waiting, held: eight passes). The nodes A frees then go to it.
    for &j in &w[..7] {
        scontrol(&c, &["hold", &j.to_string()]);
    }
    for _ in 0..8 {
        c.sbatch(&["-H", "-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    }
    let d = c.sbatch(&["-N2", "-t", "5", &format!("--dependency=afterok:{a}"), "--wrap", "sleep 300"]).unwrap();
    c.wait_job(d, "D waiting for A", Duration::from_secs(30), |j| j.state == "PENDING").unwrap();
    std::fs::write(&done, "").unwrap();
    c.wait_job(a, "A ended", Duration::from_secs(60), |j| !matches!(j.state.as_str(), "RUNNING" | "COMPLETING"))
        .unwrap();
    let from = c.ctld_log().len();
    c.wait_job(d, "D started", Duration::from_secs(60), |j| j.state == "RUNNING").unwrap_or_else(|e| {
        c.print_logs();
        panic!("{e}")
    });
    let (reads, n) = said(&c.ctld_log()[from..]);
    eprintln!("dependency: D started {n} pass ends after A's end was seen, reads {reads:?}");
    let bound = 1 + 1 + 1;
    assert!(n <= bound, "D started {n} passes after A's end was seen, beyond {bound}: {reads:?}");
    assert!(reads.iter().all(|(_, whole, _)| whole.is_none()), "by reads of changes: {reads:?}");
    drop(output(c.cmd("scancel").args(["-u", "root"])));
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_waiting_job_is_read_again_when_its_window_reaches_a_reservation() {
    // One record in turn a pass among 120 held ones: a job is read in turn
    // about every two minutes, so what the test sees is the feed's doing.
    let conf = "Strategy=easy\nSchedulerTick=1\nWholeReadBelow=0\nRecheckPerPass=1\n";
    let c = up_with(malleable_spec("t-feed-resv", 2, conf).set("SlurmctldDebug", "debug"));
    let user = String::from_utf8(std::process::Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
    let b = c.sbatch(&["-N1", "-w", "n1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    c.wait_job(b, "B running on n1", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    for _ in 0..120 {
        c.sbatch(&["-H", "-N1", "-t", "5", "--wrap", "sleep 300"]).unwrap();
    }
    // n2 reserved from 90 s on.
    let created = std::time::Instant::now();
    scontrol(
        &c,
        &[
            "create",
            "reservation",
            "ReservationName=soon",
            &format!("Users={}", user.trim()),
            "StartTime=now+90",
            "Duration=10",
            "Nodes=n2",
        ],
    );
    // A wants both nodes for a minute: read now, its window ends before the
    // reservation begins, so nothing keeps it from n2, but n1 is busy.
    let a = c.sbatch(&["-N2", "-t", "1", "--wrap", "sleep 30"]).unwrap();
    c.wait_job(a, "A waiting", Duration::from_secs(10), |j| j.state == "PENDING").unwrap();
    // From 31 s on (32 at most, whole seconds) its minute reaches into the
    // reservation: it cannot have n2 any more. B ends just after that; n1
    // and n2 are free, and a start of A on both, as planned on its first
    // read, would be refused by select_nodes. The pass that sees B's end
    // comes after the second A is due to be read again, and reads it; in
    // turn, A's read again comes about every two minutes.
    std::thread::sleep(Duration::from_secs(34).saturating_sub(created.elapsed()));
    let from = c.ctld_log().len();
    drop(output(c.cmd("scancel").arg(b.to_string())));
    c.wait_job(b, "B ended", Duration::from_secs(30), |j| !matches!(j.state.as_str(), "RUNNING" | "COMPLETING"))
        .unwrap();
    // Passes with both nodes free for ten seconds, the reservation still to begin.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut passes = 0;
    while std::time::Instant::now() < deadline && created.elapsed() < Duration::from_secs(85) {
        std::thread::sleep(Duration::from_millis(250));
        passes = said(&c.ctld_log()[from..]).1;
    }
    let log = c.ctld_log()[from..].to_string();
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| matches!(LogLine::parse(l), Some(LogLine::CouldNotStart { job, .. }) if job.0 == a))
        .collect();
    eprintln!("A after {passes} passes with both nodes free: Reason {}", reason(&c, a));
    assert!(passes >= 5, "{passes} passes in the watch: too few to tell");
    assert!(refused.is_empty(), "A planned on the reserved node after its window reached it: {refused:?}");
    assert_eq!(c.job(a).unwrap().state, "PENDING");
    drop(output(c.cmd("scancel").args(["-u", "root"])));
}

/// How many reads in a stretch of slurmctld's log kept the last walk of the nodes.
fn kept_walks(log: &str) -> usize {
    log.lines().filter(|l| matches!(LogLine::parse(l), Some(LogLine::FeedRead { nodes_walked: false, .. }))).count()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_node_resumed_is_offered_at_the_next_pass_though_reads_keep_the_last_walk() {
    let conf = format!("Strategy=easy\nSchedulerTick=1\nWholeReadBelow=0\nRecheckPerPass={RECHECK}\n");
    let c = up_with(malleable_spec("t-feed-nodes", 2, &conf).set("SlurmctldDebug", "debug"));
    // A walk is kept for up to WALK_KEPT_SECS (10 s) while slurmctld stamps
    // no node change: were the resume's stamp not looked at, a round would
    // pass by chance only when the kept walk happened to expire at once
    // (about one in five); three rounds.
    for round in 0..3 {
        scontrol(&c, &["update", "NodeName=n2", "State=DRAIN", "Reason=feed-test"]);
        let a = c.sbatch(&["-N2", "-t", "5", "--wrap", "sleep 300"]).unwrap();
        c.wait_job(a, "A waiting", Duration::from_secs(10), |j| j.state == "PENDING").unwrap();
        let from = c.ctld_log().len();
        testcluster::wait::until("a read keeping the last walk", Duration::from_secs(30), || {
            Ok((kept_walks(&c.ctld_log()[from..]) >= 2).then_some(()))
        })
        .unwrap_or_else(|e| {
            c.print_logs();
            panic!("round {round}: {e}")
        });
        assert_eq!(c.job(a).unwrap().state, "PENDING", "round {round}: A started with n2 drained");
        let from = c.ctld_log().len();
        scontrol(&c, &["update", "NodeName=n2", "State=RESUME"]);
        c.wait_job(a, "A running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap_or_else(|e| {
            c.print_logs();
            panic!("round {round}: {e}")
        });
        // Pass ends from n2's return (the resume, or, where slurmctld asks
        // the resumed node to register first, its answer) to the line of
        // A's start: the pass under way then may end first (one), A starts
        // in the next.
        let log = c.ctld_log()[from..].to_string();
        let lines: Vec<&str> = log.lines().collect();
        let started = lines
            .iter()
            .position(|l| matches!(LogLine::parse(l), Some(LogLine::Started { job, .. }) if job.0 == a))
            .expect("A's start in slurmctld's log");
        let back = lines[..started]
            .iter()
            .rposition(|l| l.contains("Node n2 now responding") || l.contains("node n2 state set to IDLE"))
            .unwrap_or(0);
        let (_, passes) = said(&lines[back..started].join("\n"));
        eprintln!("round {round}: A started after {passes} pass ends from n2's return");
        assert!(
            passes <= 1,
            "round {round}: A started {passes} pass ends after n2 was resumed, not at the next pass:\n{}",
            lines[..=started].join("\n")
        );
        drop(output(c.cmd("scancel").arg(a.to_string())));
        c.wait_job(a, "A ended", Duration::from_secs(30), |j| !matches!(j.state.as_str(), "RUNNING" | "COMPLETING"))
            .unwrap();
    }
}

/// Each pass's hold of the locks to apply in a stretch of the log, in
/// order (`None`: nothing to write, not taken again).
fn apply_holds(log: &str) -> Vec<Option<f64>> {
    log.lines()
        .filter_map(|l| match LogLine::parse(l) {
            Some(LogLine::LocksHeld { apply_ms, .. }) => Some(apply_ms),
            _ => None,
        })
        .collect()
}

#[test]
#[ignore = "needs a real cluster: cargo xtask test"]
fn a_pass_with_nothing_to_write_takes_the_locks_once_and_the_next_start_still_comes() {
    let conf = format!("Strategy=easy\nSchedulerTick=1\nWholeReadBelow=0\nRecheckPerPass={RECHECK}\n");
    let c = up_with(malleable_spec("t-feed-quiet", 2, &conf).set("SlurmctldDebug", "debug"));
    // A holds both nodes until the test lets it end; behind it an elastic
    // job and a rigid one, neither of which can start.
    let done = c.dir.join("a-done");
    let wait_for = format!("while [ ! -e {} ]; do sleep 0.2; done", done.display());
    let a = c.sbatch(&["-N2", "-t", "5", "--wrap", &wait_for]).unwrap();
    c.wait_job(a, "A running", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap();
    let m =
        c.sbatch(&["-N2", "-t", "5", "--min-nodes-invasive=1", "--max-nodes-invasive=2", "--wrap", "sleep 1"]).unwrap();
    let w = c.sbatch(&["-N2", "-t", "5", "--wrap", "sleep 1"]).unwrap();
    // Their Reasons and the elastic one's status are written once; from
    // then on each pass reads and finds nothing to write. Were the status
    // (or a Reason) written again at each pass, no pass would be quiet.
    let from = c.ctld_log().len();
    testcluster::wait::until("three passes in a row with nothing to write", Duration::from_secs(60), || {
        let ends = apply_holds(&c.ctld_log()[from..]);
        let quiet_run = ends.windows(3).any(|w| w.iter().all(Option::is_none));
        Ok((quiet_run && reason(&c, m) == "Resources" && reason(&c, w) == "Priority").then_some(()))
    })
    .unwrap_or_else(|e| {
        c.print_logs();
        panic!("{e}")
    });
    let status = cluster_tests::malleable::status(&c, m);
    assert!(status.contains("state=steady"), "JobId={m}: its status was not written: SystemComment={status}");
    // Quiet passes still notice a change: A's end starts the head of the queue.
    let from = c.ctld_log().len();
    std::fs::write(&done, "").unwrap();
    c.wait_job(m, "the elastic job running after A", Duration::from_secs(30), |j| j.state == "RUNNING").unwrap_or_else(
        |e| {
            c.print_logs();
            panic!("{e}")
        },
    );
    let ends = apply_holds(&c.ctld_log()[from..]);
    let quiet = ends.iter().filter(|a| a.is_none()).count();
    let applied = ends.len() - quiet;
    eprintln!("after A's end: {quiet} passes with nothing to write, {applied} that applied");
    assert!(applied >= 1, "the start was applied without the locks being taken to apply");
}
