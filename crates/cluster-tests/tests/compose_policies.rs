//! The site's policies under sched/malleable, on the compose site
//! (slurmdbd with limits enforced, multifactor priority, QOS `high` that
//! preempts `normal` by requeue): an association limit holds a job with the
//! Reason stock Slurm gives, without holding up the jobs behind it; a
//! `--qos=high` job gets its hosts from an elastic job by shrinking it
//! rather than requeueing it, and from a rigid one by requeueing it; an elastic job grows no further than its
//! QOS's node limit; multifactor's priority, nice included, orders the
//! queue, and waiting jobs accrue age; a job whose QOS is taken from its
//! association waits with Reason InvalidQOS until it is given back.

use std::time::Duration;

use cluster_tests::said;
use cluster_tests::site::{job_field, put_file, sbatch_as, up_site, wait_ctld_said, wait_field};
use testcluster::compose::Site;
use testcluster::wait;

/// Run a command as root on slurmctld's host; panics with its error.
fn admin(site: &Site, cmd: &[&str]) -> String {
    site.output(None, "slurmctld", cmd).unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn a_limit_holds_a_job_with_stocks_reason_and_a_high_qos_job_shrinks_an_elastic_one_instead_of_requeueing_it() {
    // EASY resizes nothing itself: every resize here is preemption's.
    let site = up_site("t-policies", 4, |s| s.malleable("Strategy", "easy"));

    // Alice may run one job at a time. Her second, though first in the
    // queue, waits with stock's Reason, and bob's job behind it starts on
    // the hosts it would take.
    admin(&site, &["sacctmgr", "-i", "modify", "user", "alice", "set", "MaxJobs=1"]);
    wait::until("slurmctld to have alice's MaxJobs", Duration::from_secs(30), || {
        let out = admin(&site, &["scontrol", "show", "assoc_mgr", "users=alice", "flags=assoc"]);
        Ok(out.contains("MaxJobs=1(").then_some(()))
    })
    .unwrap();
    let first = sbatch_as(&site, "alice", &["-N1", "-t", "5", "--wrap", "sleep 300"]);
    wait_field(&site, first, "JobState", "RUNNING", Duration::from_secs(30));
    let second = sbatch_as(&site, "alice", &["-N3", "-t", "5", "--wrap", "sleep 300"]);
    admin(&site, &["scontrol", "update", &format!("JobId={second}"), "Priority=1000000"]);
    let bobs = sbatch_as(&site, "bob", &["-N3", "-t", "5", "--wrap", "sleep 300"]);
    wait_field(&site, bobs, "JobState", "RUNNING", Duration::from_secs(30));
    wait_field(&site, second, "Reason", "AssocMaxJobsLimit", Duration::from_secs(30));
    admin(&site, &["scancel", &first.to_string(), &second.to_string(), &bobs.to_string()]);
    admin(&site, &["sacctmgr", "-i", "modify", "user", "alice", "set", "MaxJobs=-1"]);

    // Alice's elastic job holds every host; bob's high-QOS job for two
    // takes them by shrinking it, which runs on and is not requeued.
    let script = "#!/bin/sh\n#SBATCH --nodes=4 --min-nodes-invasive=1 --max-nodes-invasive=4 --exclusive\n\
                  #SBATCH --time=5 --output=policies-%j.out\n\
                  mall-run -- mall-example --cells 4096 --iterations 100000 --unit-us 10\n";
    let path = put_file(&site, "alice", "long-elastic.sh", script);
    let elastic = sbatch_as(&site, "alice", &[&path]);
    wait_field(&site, elastic, "JobState", "RUNNING", Duration::from_secs(60));
    wait::until("its runtime", Duration::from_secs(30), || {
        let st = job_field(&site, elastic, "SystemComment");
        Ok(st.contains("runtime=on").then_some(()))
    })
    .unwrap();
    let high = sbatch_as(&site, "bob", &["--qos=high", "-N2", "-t", "5", "--wrap", "sleep 300"]);
    wait_ctld_said(&site, &said::shrink_instead_of_preempting(elastic, high), Duration::from_secs(60));
    wait_field(&site, high, "JobState", "RUNNING", Duration::from_secs(60));
    assert_eq!(job_field(&site, elastic, "JobState"), "RUNNING");
    assert_eq!(job_field(&site, elastic, "NumNodes"), "2");
    assert_eq!(job_field(&site, elastic, "Restarts"), "0", "the elastic job was not requeued");
    admin(&site, &["scancel", &elastic.to_string(), &high.to_string()]);

    // A rigid job has nothing to give but its hosts: preempt/qos requeues
    // it, as stock does (slurm.conf's PreemptMode=REQUEUE), and the high
    // job runs on what it held (every host). (Slurm's own test34.2 checks this too, but
    // goes on to heterogeneous jobs, which slurmctld refuses under any
    // scheduler plugin but sched/backfill.)
    let rigid = sbatch_as(&site, "alice", &["-N4", "--exclusive", "-t", "5", "--wrap", "sleep 300"]);
    wait_field(&site, rigid, "JobState", "RUNNING", Duration::from_secs(60));
    let high = sbatch_as(&site, "bob", &["--qos=high", "-N2", "-t", "5", "--wrap", "sleep 300"]);
    wait_field(&site, high, "JobState", "RUNNING", Duration::from_secs(60));
    wait_field(&site, rigid, "Restarts", "1", Duration::from_secs(30));
    assert_ne!(job_field(&site, rigid, "JobState"), "RUNNING", "the requeued job waits for its four hosts");
    admin(&site, &["scancel", &rigid.to_string(), &high.to_string()]);
}

#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn an_elastic_job_grows_no_further_than_its_qos_allows() {
    let site = up_site("t-qos-cap", 4, |s| s);
    admin(&site, &["sacctmgr", "-i", "modify", "qos", "normal", "set", "MaxTRESPerJob=node=3"]);
    wait::until("slurmctld to have the QOS limit", Duration::from_secs(30), || {
        let out = admin(&site, &["scontrol", "show", "assoc_mgr", "qos=normal", "flags=qos"]);
        Ok(out.contains("MaxTRESPJ=node=3").then_some(()))
    })
    .unwrap();
    // Four idle hosts, an elastic job of up to four: it grows to three.
    let script = "#!/bin/sh\n#SBATCH --nodes=1 --min-nodes-invasive=1 --max-nodes-invasive=4\n\
                  #SBATCH --time=5 --output=capped-%j.out\n\
                  mall-run -- mall-example --cells 4096 --iterations 100000 --unit-us 10\n";
    let path = put_file(&site, "alice", "capped.sh", script);
    let id = sbatch_as(&site, "alice", &[&path]);
    wait_ctld_said(&site, &said::capped(id, 3), Duration::from_secs(60));
    wait_ctld_said(&site, &said::expand_committed(id, ""), Duration::from_secs(60));
    wait_field(&site, id, "NumNodes", "3", Duration::from_secs(30));
    // The fourth host stays idle: no other expand was decided.
    let log = site.log("slurmctld", "slurmctld.log");
    let expands = said::expanding(id, "").count(&log);
    assert_eq!(expands, 1, "{log}");
    admin(&site, &["scancel", &id.to_string()]);
}

#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn multifactor_priority_with_nice_orders_the_queue() {
    let site = up_site("t-nice", 4, |s| s);
    let hold = sbatch_as(&site, "alice", &["-N4", "-t", "5", "--wrap", "sleep 300"]);
    wait_field(&site, hold, "JobState", "RUNNING", Duration::from_secs(30));
    // Submitted first, but nice: multifactor puts it below the later one.
    let nice = sbatch_as(&site, "alice", &["-N4", "-t", "5", "--nice=5000", "--wrap", "sleep 300"]);
    let later = sbatch_as(&site, "alice", &["-N4", "-t", "5", "--wrap", "sleep 300"]);
    let priority = |id: u32| job_field(&site, id, "Priority").parse::<u64>().unwrap_or(0);
    wait::until("multifactor's priorities", Duration::from_secs(30), || {
        let (n, l) = (priority(nice), priority(later));
        if n > 0 && l > n {
            Ok(Some(()))
        } else {
            Err(format!("nice {n}, later {l}"))
        }
    })
    .unwrap();
    // Waiting for hosts, each accrues age for multifactor's age factor, as
    // slurmctld's own queue building starts it (it never runs here).
    for id in [nice, later] {
        wait::until("its accrue time", Duration::from_secs(30), || {
            let t = job_field(&site, id, "AccrueTime");
            if t.is_empty() || t == "Unknown" {
                Err(format!("JobId={id} AccrueTime={t}"))
            } else {
                Ok(Some(()))
            }
        })
        .unwrap();
    }
    admin(&site, &["scancel", &hold.to_string()]);
    wait_field(&site, later, "JobState", "RUNNING", Duration::from_secs(60));
    assert_eq!(job_field(&site, nice, "JobState"), "PENDING");
    admin(&site, &["scancel", &nice.to_string(), &later.to_string()]);
}

#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn a_job_whose_qos_is_taken_from_its_association_waits_as_invalid_qos_until_it_is_given_back() {
    let site = up_site("t-lost-qos", 4, |s| s.malleable("Strategy", "easy"));
    admin(&site, &["sacctmgr", "-i", "add", "qos", "extra"]);
    admin(&site, &["sacctmgr", "-i", "modify", "user", "alice", "set", "QOS+=extra"]);
    // slurmctld's own view of alice's QOS, as it checks a submission.
    let has_extra = |want: bool| {
        wait::until("slurmctld to have alice's QOS", Duration::from_secs(30), || {
            let probe = ["sbatch", "--test-only", "--qos=extra", "-N1", "-t", "5", "--wrap", "true"];
            let allowed = site.output(Some("alice"), "login", &probe);
            if allowed.is_ok() == want {
                Ok(Some(()))
            } else {
                Err(format!("{allowed:?}"))
            }
        })
        .unwrap()
    };
    has_extra(true);
    // Eligible in a few seconds; by then the QOS is no longer alice's.
    let id = sbatch_as(&site, "alice", &["--begin=now+3", "--qos=extra", "-N1", "-t", "5", "--wrap", "sleep 300"]);
    admin(&site, &["sacctmgr", "-i", "modify", "user", "alice", "set", "QOS-=extra"]);
    has_extra(false);
    wait_field(&site, id, "Reason", "InvalidQOS", Duration::from_secs(30));
    assert_eq!(job_field(&site, id, "JobState"), "PENDING");
    admin(&site, &["sacctmgr", "-i", "modify", "user", "alice", "set", "QOS+=extra"]);
    wait_field(&site, id, "JobState", "RUNNING", Duration::from_secs(30));
    admin(&site, &["scancel", &id.to_string()]);
}
