//! The compose site (`cargo xtask compose up`) as its users meet it: alice
//! submits the README's elastic job on the login host, it grows into the
//! idle hosts, shrinks when bob's job comes, and completes with the same
//! result as the application alone, under slurmdbd, multifactor priority
//! and task/cgroup; what it ran in is its cgroup's, bob cannot touch it,
//! its Comment stays alice's, and slurmrestd (where the release ships it)
//! says of it what scontrol says.

use std::time::Duration;

use cluster_tests::malleable::checksum_in;
use cluster_tests::said::{self, JobId, LogLine};
use cluster_tests::site::{
    as_user, assert_each_record_billed_for_its_nodes, assert_result_as_alone, assert_tiling, docker, job_field,
    put_file, records, sbatch_as, timeline, up_site, usage_against_records, wait_ctld_said, wait_field, wait_finished,
    README_APP_ARGS, README_ELASTIC_JOB,
};
use testcluster::compose::files::{REST_HOST, REST_PORT};
use testcluster::compose::Site;
use testcluster::wait;

#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn the_readme_elastic_job_grows_shrinks_and_completes_on_the_compose_site() {
    let readme = std::fs::read_to_string(cluster_tests::repo_root().join("README.md")).unwrap();
    assert!(readme.contains(README_ELASTIC_JOB), "the README shows another elastic job than the one tested");
    let site = up_site("t-site", 4, |s| s);
    let script = put_file(&site, "alice", "elastic.sh", README_ELASTIC_JOB);
    // Alice keeps her grant in the job's Comment, as sites ask their users
    // to; it stays hers while its runtime talks to the scheduler.
    let id = sbatch_as(&site, "alice", &["--comment=grant ABC-123", &script]);

    // It starts on two hosts and grows onto the other two; on an added
    // host its step runs in the job's cpuset cgroup, with a core in it.
    wait_ctld_said(&site, &said::expand_committed(id, "c3,c4"), Duration::from_secs(90));
    // Where slurmrestd runs, its JSON for the grown job is what scontrol says.
    if site.spec.rest() {
        rest_agrees_with_scontrol(&site, id, 4);
    }
    let cpuset = format!("/sys/fs/cgroup/cpuset/slurm_c4/uid_2001/job_{id}/cpuset.cpus");
    let cpus = site.output(None, "c4", &["cat", &cpuset]).unwrap_or_else(|e| panic!("{cpuset}: {e}"));
    assert!(!cpus.trim().is_empty(), "the job's cpuset on c4 is empty");
    // PrologFlags=Contain: the job's extern step runs on the host it grew
    // onto too (where pam_slurm_adopt would put alice's ssh session): Slurm
    // lists it over every host, and c4 has its cgroup (26.05's extern step
    // keeps no process of its own there; 22.05's and 24.11's a sleeper).
    let steps = as_user(&site, "alice", &["squeue", "-s", "-h", "-j", &id.to_string(), "-o", "%i %N"]);
    assert!(steps.lines().any(|l| l == format!("{id}.extern c[1-4]")), "{steps}");
    let extern_dir = format!("/sys/fs/cgroup/freezer/slurm_c4/uid_2001/job_{id}/step_extern");
    wait::until(&format!("{extern_dir} on c4"), Duration::from_secs(20), || {
        Ok(site.output(None, "c4", &["test", "-d", &extern_dir]).ok())
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    });

    // Bob may not cancel it; his job for two hosts makes it shrink to two
    // (its constraint is even), and starts on the hosts it gave up.
    let refused = site.exec(Some("bob"), "login", &["scancel", &id.to_string()]).output().unwrap();
    assert!(!refused.status.success(), "bob cancelled alice's job");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Access/permission denied"), "{refused:?}");
    let rigid = sbatch_as(&site, "bob", &["-N2", "-t", "1", "--wrap", "sleep 3"]);
    let line = wait_ctld_said(&site, &said::shrink_committed(id, ""), Duration::from_secs(60));
    assert!(!line.contains("c1"), "the batch host stays: {line}");
    if site.spec.rest() {
        rest_agrees_with_scontrol(&site, id, 2);
    }

    assert_eq!(wait_finished(&site, id, Duration::from_secs(240)), "COMPLETED");
    assert_eq!(wait_finished(&site, rigid, Duration::from_secs(60)), "COMPLETED");
    assert_eq!(job_field(&site, rigid, "NodeList"), "c[3-4]");
    let out = std::fs::read_to_string(site.dir.join(format!("home/alice/elastic-{id}.out"))).unwrap();
    assert!(out.contains("expand to 4 workers") && out.contains("shrink to 2 workers"), "{out}");
    let mut serial = vec!["mall-example", "--serial"];
    serial.extend(README_APP_ARGS.split(' '));
    let alone = checksum_in(&as_user(&site, "alice", &serial));
    assert!(alone.is_some());
    assert_eq!(checksum_in(&out), alone, "{out}");

    // The database has the job, billed to alice's account (read once its
    // records have all ended there: `records`, in the story).
    accounting_tells_its_story(&site, id, 0);
    let acct = as_user(
        &site,
        "alice",
        &["sacct", "-X", "-n", "-P", "-j", &id.to_string(), "-o", "State,Account,User,Comment"],
    );
    // AccountingStoreFlags=job_comment: the database has her Comment as she gave it.
    assert_eq!(acct.lines().last(), Some("COMPLETED|physics|alice|grant ABC-123"), "{acct}");
    assert_eq!(job_field(&site, id, "Comment"), "grant ABC-123");
    usage_is_what_it_held(&site, id);
}

/// slurmrestd's answer for job `id` (as alice, with her JWT from `scontrol
/// token`), read as a REST client reads it: its node list, node count and
/// allocated TRES are what scontrol shows, and it holds `nodes` nodes.
fn rest_agrees_with_scontrol(site: &Site, id: u32, nodes: u64) {
    let token = as_user(site, "alice", &["scontrol", "token", "lifespan=600"]);
    let jwt = token.trim().strip_prefix("SLURM_JWT=").unwrap_or_else(|| panic!("scontrol token said {token:?}"));
    let url = format!("http://{REST_HOST}:{REST_PORT}/slurm/v0.0.45/job/{id}");
    let (user, auth) = ("X-SLURM-USER-NAME: alice".to_string(), format!("X-SLURM-USER-TOKEN: {jwt}"));
    let body = wait::until("slurmrestd's answer", Duration::from_secs(60), || {
        match site.output(Some("alice"), "login", &["curl", "-sf", "-H", &user, "-H", &auth, &url]) {
            Ok(b) => Ok(Some(b)),
            Err(e) => Err(e),
        }
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    });
    let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let job = &json["jobs"][0];
    assert_eq!(job["job_id"].as_u64(), Some(u64::from(id)), "{body}");
    assert_eq!(job["nodes"].as_str(), Some(job_field(site, id, "NodeList").as_str()), "{body}");
    assert_eq!(job["node_count"]["number"].as_u64(), Some(nodes), "{body}");
    let tres = job_field(site, id, "AllocTRES");
    assert_eq!(job["tres_alloc_str"].as_str(), Some(tres.as_str()), "{body}");
    assert!(tres.contains(&format!("node={nodes}")), "{tres}");
}

/// Alice's fair-share usage (sshare's RawUsage) and sreport's figure for
/// her, once the hour is rolled up, are the CPU-seconds her job's records
/// hold, within 2% or within a second of each record's CPUs, whichever is
/// more: slurmdbd keeps a record's start and end by the whole second, so
/// each record's ElapsedRaw may be a second off what the job held (CI on
/// 26.05 saw 131 against 134 over a job's records of up to 4 CPUs). Slurm
/// itself counts a resized job's new size twice from its last count to the
/// resize (ctld::fairshare): before the plugin took that back, this job
/// showed 185 against 128.
fn usage_is_what_it_held(site: &Site, id: u32) {
    let (held, within) = usage_against_records(site, "alice", id).unwrap_or_else(|e| panic!("{e}"));

    // The hours the job ran in, rolled up now (slurmdbd does it hourly):
    // from its start's hour to the end of this one.
    let start = job_field(site, id, "StartTime");
    let (from, to) = (format!("{}:00:00", &start[..13]), "now+1hours".to_string());
    // (sacctmgr says SUCCESS on stderr; output() fails on a failed command.)
    site.output(None, "slurmctld", &["sacctmgr", "-i", "rollup", &from, &to]).unwrap();
    let report = as_user(
        site,
        "alice",
        &["sreport", "-n", "-P", "-t", "seconds", "cluster", "AccountUtilizationByUser", "accounts=physics"]
            .into_iter()
            .chain([format!("start={from}").as_str(), format!("end={to}").as_str()])
            .collect::<Vec<_>>(),
    );
    let used = report.lines().find(|l| l.split('|').nth(2) == Some("alice")).and_then(|l| l.split('|').nth(4));
    let got: f64 = used.and_then(|u| u.parse().ok()).unwrap_or(-1.0);
    assert!(
        (got - held as f64).abs() <= within,
        "sreport's CPU-s for alice {got}, the job's records hold {held} CPU-s (allowed: {within})"
    );
}

/// The job's records in `sacct -D -X` tile its life: each starts where the
/// one before ended, from its start to its end, all RESIZING but the last,
/// which has its final state and nodes; their node-seconds are those the
/// scheduler's log tells, within a second per resize; the helpers of its
/// expands hold their nodes no longer than the second of their merge and
/// are closed; no step is left open and no record runs away. Up to `memory_resizes` of its records begin at a
/// change of its memory (26.05), which the scheduler's log does not tell
/// (none when it came in the second a record began: slurmdbd keys a job's
/// records by the second).
fn accounting_tells_its_story(site: &Site, id: u32, memory_resizes: usize) {
    let recs = records(site, id);
    let events = timeline(site, id);
    let told = events.len()..=events.len() + memory_resizes;
    assert!(recs.len() >= 3 && told.contains(&recs.len()), "records {recs:#?}\nlog {events:?}");
    let start = testcluster::jobs::parse_time(&job_field(site, id, "StartTime")).unwrap();
    let end = testcluster::jobs::parse_time(&job_field(site, id, "EndTime")).unwrap();
    assert_eq!(recs.last().unwrap().end, end, "{recs:#?}");
    // A memory resize moves the job's StartTime to its own end (stock
    // Slurm's job_post_resize_acctg); the node resizes keep it.
    if memory_resizes == 0 {
        assert_eq!(recs[0].start, start, "{recs:#?}");
    } else {
        assert!(recs[0].start <= start, "{recs:#?}");
    }
    assert_tiling(&recs);
    for r in &recs[..recs.len() - 1] {
        assert_eq!(r.state, "RESIZING", "{recs:#?}");
    }
    let last = recs.last().unwrap();
    assert_eq!((last.state.as_str(), last.node_list.clone()), ("COMPLETED", job_field(site, id, "NodeList")));
    let billed: i64 = recs.iter().map(|r| r.nodes * (r.end - r.start)).sum();
    let mut held = 0.0;
    for (k, (t, n)) in events.iter().enumerate() {
        let until = events.get(k + 1).map_or(end as f64, |e| e.0);
        held += *n as f64 * (until - t);
    }
    let most = events.iter().map(|e| e.1).max().unwrap() as f64;
    let slack = most * events.len() as f64;
    assert!((billed as f64 - held).abs() <= slack, "sacct bills {billed} node-s, the log says {held:.1} (+-{slack})");

    let log = site.log("slurmctld", "slurmctld.log");
    let helpers: Vec<u32> = log
        .lines()
        .filter_map(|l| match LogLine::parse(l)? {
            LogLine::Expanding { job, helper, .. } if job == JobId(id) => Some(helper.0),
            _ => None,
        })
        .collect();
    assert!(!helpers.is_empty(), "no expand helper in the log");
    for h in helpers {
        let recs = records(site, h);
        // The helper holds its nodes from its start to the merge, both in
        // one hold of slurmctld's locks: no time, but slurmdbd keys records
        // by the second, so one that crossed a second's turn bills that
        // second (seen on CI, 26.05: RESIZING 528..529 on c[3-4]).
        assert!(recs.iter().all(|r| r.end - r.start <= 1), "helper {h} holds nodes past its merge: {recs:#?}");
        assert_eq!(recs.last().map(|r| r.state.as_str()), Some("COMPLETED"), "helper {h}: {recs:#?}");
    }
    // Every step is closed with its usage in some record (those that ran
    // on across a resize, in the last), and none is left running (read once
    // the batch step's end is in: slurmctld's agent sends it after the job's).
    let mut seen = String::new();
    let steps = wait::until("the job's steps in the database", Duration::from_secs(60), || {
        seen = as_user(site, "alice", &["sacct", "-D", "-n", "-P", "-j", &id.to_string(), "-o", "JobID,State"]);
        Ok(seen.lines().any(|l| l == format!("{id}.batch|COMPLETED")).then(|| seen.clone()))
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}; sacct -D (JobID,State):\n{seen}")
    });
    let ids: std::collections::BTreeSet<&str> = steps.lines().filter_map(|l| l.split('|').next()).collect();
    assert!(ids.contains(format!("{id}.batch").as_str()), "{steps}");
    for step in ids {
        assert!(steps.lines().any(|l| l == format!("{step}|COMPLETED")), "{step} never closed: {steps}");
    }
    assert!(!steps.contains("|RUNNING"), "a step left open: {steps}");
    assert_eq!(site.runaway_jobs(), Ok(None));
}

/// Dynamic Memory Resizing (26.05): an admin lowers a running elastic job's
/// memory, as they may any job's; every node's limit is lowered (its
/// cgroup), the job leaves RESIZING once every node has answered, and it
/// then grows and shrinks as before, ending with the application's result
/// and records that tile its life. Where Slurm has no such resizing, it
/// refuses the update, and the job goes on as it was.
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn memory_taken_from_a_running_elastic_job_leaves_its_resizes_right() {
    let site = up_site("t-mem", 4, |s| s);
    let script = put_file(&site, "alice", "elastic.sh", README_ELASTIC_JOB);
    // Held to two hosts while bob's job runs on the others.
    let rigid = sbatch_as(&site, "bob", &["-N2", "-w", "c[3-4]", "-t", "1", "--wrap", "sleep 20"]);
    wait_field(&site, rigid, "JobState", "RUNNING", Duration::from_secs(30));
    let id = sbatch_as(&site, "alice", &[&script]);
    wait_field(&site, id, "JobState", "RUNNING", Duration::from_secs(30));
    wait_ctld_said(&site, &said::request_taken(id, "mall1 seq=1 HELLO"), Duration::from_secs(30));
    let job = format!("JobId={id}");
    let lower = ["scontrol", "update", job.as_str(), "MinMemoryNode=300"];
    // DefMemPerCPU: the job asked 500 MB a CPU.
    let memory = |site: &Site| (job_field(site, id, "MinMemoryCPU"), job_field(site, id, "MinMemoryNode"));
    let asked = memory(&site);
    if !site.spec.memory_resizing() {
        let refused = site.exec(None, "login", &lower).output().unwrap();
        assert!(!refused.status.success(), "Slurm {} lowered a running job's memory", site.spec.slurm);
        assert_eq!(memory(&site), asked);
    } else {
        // Not in the second the job started: 26.05 keeps every step on the
        // job's first record (by its SLUID), and a resize in that second
        // gives that record the new one's index (slurmdbd's duplicate key),
        // leaving no step in any record (docs/slurm-versions.md). The
        // plugin's own resizes wait that second out; an admin's do not.
        let start = testcluster::jobs::parse_time(&job_field(&site, id, "StartTime")).unwrap();
        wait::until(&format!("the second JobId={id} started in to pass"), Duration::from_secs(5), || {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
            Ok((now > start).then_some(()))
        })
        .unwrap();
        site.output(None, "login", &lower).unwrap_or_else(|e| panic!("lowering JobId={id}'s memory: {e}"));
        wait_field(&site, id, "MinMemoryNode", "300M", Duration::from_secs(30));
        wait_field(&site, id, "JobState", "RUNNING", Duration::from_secs(30));
        for host in ["c1", "c2"] {
            let limit = format!("/sys/fs/cgroup/memory/slurm_{host}/uid_2001/job_{id}/memory.limit_in_bytes");
            let bytes = site.output(None, host, &["cat", &limit]).unwrap_or_else(|e| panic!("{limit}: {e}"));
            assert_eq!(bytes.trim(), (300u64 << 20).to_string(), "{limit}");
        }
    }
    // Bob's job ends; the elastic one grows onto its hosts, and shrinks
    // for bob's next, as it would have.
    wait_ctld_said(&site, &said::expand_committed(id, "c3,c4"), Duration::from_secs(60));
    assert_eq!(job_field(&site, id, "NumNodes"), "4");
    let next = sbatch_as(&site, "bob", &["-N2", "-t", "1", "--wrap", "sleep 3"]);
    wait_ctld_said(&site, &said::shrink_committed(id, ""), Duration::from_secs(60));
    assert_eq!(wait_finished(&site, next, Duration::from_secs(60)), "COMPLETED");
    assert_eq!(wait_finished(&site, id, Duration::from_secs(240)), "COMPLETED");
    let out = std::fs::read_to_string(site.dir.join(format!("home/alice/elastic-{id}.out"))).unwrap();
    let mut serial = vec!["mall-example", "--serial"];
    serial.extend(README_APP_ARGS.split(' '));
    assert_eq!(checksum_in(&out), checksum_in(&as_user(&site, "alice", &serial)), "{out}");
    accounting_tells_its_story(&site, id, usize::from(site.spec.memory_resizing()));
}

/// A job that grew bills each of its records at the size it held then,
/// and its owner's fair-share usage matches them. On 26.05 the last step of
/// an ended job writes the job's TRES into its first record (steps are kept
/// by the job's SLUID, which is that record's index): without the plugin
/// setting it right, this job's first record, two nodes for the time before
/// the expand, billed four (slurm::ctld::first_record).
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn a_job_that_grew_is_billed_in_each_record_for_the_nodes_it_held_then() {
    let site = up_site("t-grown", 4, |s| s);
    let script = put_file(&site, "alice", "elastic.sh", README_ELASTIC_JOB);
    // Held to two hosts while bob's job runs on the others, it grows onto
    // them once that ends, and ends on four (nothing else comes).
    let rigid = sbatch_as(&site, "bob", &["-N2", "-w", "c[3-4]", "-t", "1", "--wrap", "sleep 15"]);
    wait_field(&site, rigid, "JobState", "RUNNING", Duration::from_secs(30));
    let id = sbatch_as(&site, "alice", &[&script]);
    wait_field(&site, id, "JobState", "RUNNING", Duration::from_secs(30));
    wait_ctld_said(&site, &said::expand_committed(id, "c3,c4"), Duration::from_secs(90));
    assert_eq!(wait_finished(&site, id, Duration::from_secs(240)), "COMPLETED");
    assert_eq!(job_field(&site, id, "NumNodes"), "4", "it ended on four hosts");
    let recs = records(&site, id);
    assert_tiling(&recs);
    assert_eq!((recs[0].nodes, recs.last().unwrap().nodes), (2, 4), "{recs:#?}");

    // Each record billed for the nodes it held, at one CPU a node as the
    // job asked.
    assert_each_record_billed_for_its_nodes(&site, "alice", id);
    usage_against_records(&site, "alice", id).unwrap_or_else(|e| panic!("{e}"));
}

/// slurmdbd away during a busy run: the plugin holds resizes until it is
/// back (a resize then would leave the job without a record index, refusing
/// every update), waiting jobs wait, and afterwards every job is in the
/// database with its records tiling its life. slurmdbd away again while
/// the shrink that follows is under way: its application commits, and the
/// nodes are freed only once slurmdbd is back, with slurmctld restarted
/// in between.
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn with_slurmdbd_away_resizes_wait_and_every_job_reaches_the_database() {
    let site = up_site("t-faults", 4, |s| s);
    // Its application commits an adaptation 12 s after it began, time for
    // slurmdbd to be stopped in the middle of one.
    let long = README_ELASTIC_JOB.replace("--iterations 600", "--iterations 2500 --adapt-delay-ms 12000");
    let script = put_file(&site, "alice", "long.sh", &long);
    let id = sbatch_as(&site, "alice", &[&script]);
    wait_ctld_said(&site, &said::expand_committed(id, "c3,c4"), Duration::from_secs(90));
    // Where slurmrestd runs, its JSON for the grown job is what scontrol says.
    if site.spec.rest() {
        rest_agrees_with_scontrol(&site, id, 4);
    }

    let before_stop = site.log("slurmctld", "slurmctld.log").len();
    docker(&["stop", "-t", "1", &site.container("slurmdbd")]);
    // A job for later: slurmctld sends it to slurmdbd, and finds it away.
    let later = sbatch_as(&site, "bob", &["-N1", "--begin=now+1hour", "-t", "1", "--wrap", "true"]);
    wait::until("the plugin to hold resizes", Duration::from_secs(60), || {
        let log = site.log("slurmctld", "slurmctld.log");
        Ok(said::resizes_held().in_log(&log[before_stop..]).then_some(()))
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    });
    let rigid = sbatch_as(&site, "bob", &["-N2", "-t", "1", "--wrap", "sleep 3"]);
    // Nothing shrinks for it while slurmdbd is away (a few passes go by).
    let log_len = site.log("slurmctld", "slurmctld.log").len();
    wait::until("three passes", Duration::from_secs(30), || {
        let log = site.log("slurmctld", "slurmctld.log");
        Ok((said::request_taken(id, "").count(&log[log_len..]) >= 3).then_some(()))
    })
    .unwrap();
    let log = site.log("slurmctld", "slurmctld.log");
    assert!(!said::shrinking(id, "").in_log(&log[log_len..]), "resized with slurmdbd away");
    assert_eq!(job_field(&site, rigid, "JobState"), "PENDING");

    docker(&["start", &site.container("slurmdbd")]);
    wait_ctld_said(&site, &said::resizes_resumed(), Duration::from_secs(90));
    // (The plugin says so only after a hold it reported: this line is the one after the stop.)
    wait_ctld_said(&site, &said::shrinking(id, ""), Duration::from_secs(60));
    let shrink_begun = site.log("slurmctld", "slurmctld.log").len();
    docker(&["stop", "-t", "1", &site.container("slurmdbd")]);
    let meanwhile = sbatch_as(&site, "bob", &["-N1", "--begin=now+1hour", "-t", "1", "--wrap", "true"]);
    // The application commits the shrink (its COMMIT acknowledged), but
    // the nodes stay the job's until slurmdbd is back.
    wait_ctld_said(&site, &said::release_held(id, "c3,c4"), Duration::from_secs(60));
    let log = site.log("slurmctld", "slurmctld.log");
    assert!(!said::shrink_committed(id, "").in_log(&log[shrink_begun..]), "nodes freed with slurmdbd away");
    assert_eq!(job_field(&site, id, "NodeList"), "c[1-4]");
    // As an admin restarts it: SIGTERM, its state saved. Killed a second
    // after, while it waited on slurmdbd's unreachable host to send what
    // it holds, 26.05 had saved nothing yet and, slurmdbd away, would not
    // start (`fatal: No Assoc usage file`: stock, on a site this young).
    docker(&["restart", "-t", "60", &site.container("slurmctld")]);
    docker(&["start", &site.container("slurmdbd")]);
    wait_ctld_said(&site, &said::shrink_committed(id, "c3,c4"), Duration::from_secs(90));
    as_user(&site, "bob", &["scancel", &meanwhile.to_string()]);
    assert_eq!(wait_finished(&site, rigid, Duration::from_secs(120)), "COMPLETED");
    as_user(&site, "bob", &["scancel", &later.to_string()]);
    assert_eq!(wait_finished(&site, id, Duration::from_secs(300)), "COMPLETED");
    assert_eq!(records(&site, rigid).last().map(|r| r.state.as_str()), Some("COMPLETED"));
    // Read after `records` waited for the elastic job's end to reach the
    // database: slurmctld's agent sent the cancel before it.
    let recs = records(&site, id);
    let cancelled = as_user(&site, "bob", &["sacct", "-X", "-n", "-P", "-j", &later.to_string(), "-o", "State"]);
    assert!(cancelled.starts_with("CANCELLED"), "JobId={later} in the database: {cancelled:?}");
    assert_tiling(&recs);
    assert_eq!(recs.last().map(|r| r.state.as_str()), Some("COMPLETED"), "{recs:#?}");
    assert_eq!(site.runaway_jobs(), Ok(None));
}

/// Iserte et al. 2025's set-up on the site: stock sched/backfill schedules,
/// select/natural (over select/linear) answers the elastic job that asks at
/// its sync points, under task/cgroup and slurmdbd: it grows into the idle
/// hosts, releases exactly two for bob's job, which starts on them.
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn select_natural_beside_sched_backfill_resizes_a_job_that_asks_on_the_site() {
    let site = up_site("t-natural", 4, |s| {
        s.set("SchedulerType", "sched/backfill")
            .set("SelectType", "select/natural")
            .set("SelectTypeParameters", "CR_Memory")
            .set("SchedulerParameters", "permit_job_expansion,bf_interval=1")
            .malleable("Strategy", "natural")
    });
    let script = "#!/bin/sh\n#SBATCH -N1 --min-nodes-invasive=1 --max-nodes-invasive=4 -t 5 --output=ask-%j.out\n\
                  mall-run -- mall-example --cells 8192 --iterations 1200 --unit-us 25 --ask-every 5\n";
    let path = put_file(&site, "alice", "ask.sh", script);
    let id = sbatch_as(&site, "alice", &[&path]);
    wait_ctld_said(&site, &said::expand_committed(id, "c2,c3,c4"), Duration::from_secs(90));
    let rigid = sbatch_as(&site, "bob", &["-N2", "-t", "1", "--wrap", "sleep 3"]);
    wait_ctld_said(&site, &said::released_at_sync_point(rigid, id, 2), Duration::from_secs(90));
    wait_ctld_said(&site, &said::shrink_committed(id, ""), Duration::from_secs(60));
    assert_eq!(wait_finished(&site, rigid, Duration::from_secs(60)), "COMPLETED");
    assert_eq!(wait_finished(&site, id, Duration::from_secs(300)), "COMPLETED");
    let recs = records(&site, id);
    assert_tiling(&recs);
}

/// SD-Policy on the site, under task/cgroup: bob's job starts on cores of
/// alice's running job, and on each host task/drom gives each job's steps
/// their own cores, as cpuset cgroups (where task/affinity's masks must
/// lie) and as their tasks' masks; when bob's job ends, alice's steps get
/// the whole host again.
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn sd_policy_gives_each_job_its_own_cores_in_its_cpuset_cgroups_on_the_site() {
    let site = up_site("t-sdpolicy", 2, |s| {
        s.set("TaskPlugin", "task/cgroup,task/affinity,task/drom")
            .set("SchedulerParameters", "sched_interval=-1,defer,permit_job_expansion")
            .set("PartitionName", "batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES:2")
            .malleable("Strategy", "sd-policy")
    });
    let work = |secs: u32| format!("srun -N2 --ntasks-per-node=1 sleep {secs}");
    let a = sbatch_as(
        &site,
        "alice",
        &["--malleable-cores", "-N2", "--ntasks-per-node=1", "-c2", "-t", "10", "--wrap", &work(600)],
    );
    wait::until("alice's step on c1", Duration::from_secs(60), || {
        Ok(step_cpusets(&site, a).ok().filter(|s| !s.is_empty()))
    })
    .unwrap();
    let b = sbatch_as(&site, "bob", &["--malleable-cores", "-N2", "-t", "2", "--wrap", &work(600)]);
    // On alice's cores: she holds both hosts' second core.
    wait_field(&site, b, "JobState", "RUNNING", Duration::from_secs(60));
    // The host's CPUs (this machine's: 2 here, so each job gets one).
    let node = site.output(None, "c1", &["cat", "/sys/fs/cgroup/cpuset/cpuset.effective_cpus"]).unwrap();
    let node = vec![node.trim().to_string()];
    assert_eq!(node, ["0-1"], "these checks expect hosts of 2 CPUs");
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    wait::until("disjoint cpusets and masks on c1", Duration::from_secs(30), || {
        let (sa, sb) = (step_cpusets(&site, a)?, step_cpusets(&site, b)?);
        let (ma, mb) = (masks(&site, a)?, masks(&site, b)?);
        let one = |v: &[String]| !v.is_empty() && v.iter().all(|c| c == &v[0]) && v[0].len() == 1;
        if one(&sa) && one(&sb) && sa[0] != sb[0] && ma.iter().all(|m| *m == sa[0]) && mb.iter().all(|m| *m == sb[0]) {
            mine = sa;
            theirs = sb;
            Ok(Some(()))
        } else {
            Err(format!("alice {sa:?} {ma:?}, bob {sb:?} {mb:?}"))
        }
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    });
    assert_ne!(mine, theirs);
    as_user(&site, "bob", &["scancel", &b.to_string()]);
    wait::until("alice's steps on the whole host again", Duration::from_secs(30), || {
        let (sa, ma) = (step_cpusets(&site, a)?, masks(&site, a)?);
        Ok((sa.iter().all(|c| node.contains(c)) && ma.iter().all(|m| node.contains(m))).then_some(()))
    })
    .unwrap();
    as_user(&site, "alice", &["scancel", &a.to_string()]);
}

/// The cpuset of each of job `id`'s step cgroups on c1.
fn step_cpusets(site: &Site, id: u32) -> Result<Vec<String>, String> {
    let cmd = format!("cat /sys/fs/cgroup/cpuset/slurm_c1/uid_*/job_{id}/step_*/cpuset.cpus");
    Ok(site.output(None, "c1", &["sh", "-c", &cmd])?.lines().map(str::to_string).collect())
}

/// The CPU masks of job `id`'s `sleep` tasks on c1 (Cpus_allowed_list),
/// in its steps' cgroups (26.05's task/cgroup puts each task in a `task_N`
/// cgroup of its own below its step's).
fn masks(site: &Site, id: u32) -> Result<Vec<String>, String> {
    let steps = format!("/sys/fs/cgroup/cpuset/slurm_c1/uid_*/job_{id}/step_[0-9]*");
    let cmd = format!(
        "for p in $(cat {steps}/cgroup.procs {steps}/task_*/cgroup.procs 2>/dev/null); do \
         [ \"$(cat /proc/$p/comm)\" = sleep ] && grep Cpus_allowed_list /proc/$p/status | cut -f2; done; true"
    );
    let out: Vec<String> = site.output(None, "c1", &["sh", "-c", &cmd])?.lines().map(str::to_string).collect();
    if out.is_empty() {
        Err(format!("no task of JobId={id} on c1 yet"))
    } else {
        Ok(out)
    }
}

/// IPSCHED on the site's GPU hosts (the last two, 2 GPUs each): three jobs
/// of one core and one GPU start at once, two of them on one host, each on
/// a GPU of its own, which the devices cgroup gives it (ConstrainDevices).
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn ipsched_places_gpu_jobs_on_the_sites_gpu_hosts() {
    let site = up_site("t-ipsched", 4, |s| s.malleable("Strategy", "ipsched"));
    let ids: Vec<u32> =
        (0..3).map(|_| sbatch_as(&site, "alice", &["-n1", "--gres=gpu:1", "-t", "2", "--wrap", "sleep 20"])).collect();
    let mut placed = Vec::new();
    wait::until("the three GPU jobs running", Duration::from_secs(60), || {
        placed.clear();
        for id in &ids {
            let detail = site.output(None, "login", &["scontrol", "show", "job", "-d", &id.to_string()])?;
            if !detail.contains("JobState=RUNNING") {
                return Err(format!("JobId={id} not running"));
            }
            let line = detail.lines().map(str::trim).find(|l| l.starts_with("Nodes=") && l.contains("GRES="));
            let line = line.ok_or(format!("no GRES line for JobId={id}"))?;
            let host = line["Nodes=".len()..].split(' ').next().unwrap_or_default().to_string();
            let idx = line.split("IDX:").nth(1).and_then(|r| r.split(')').next()).unwrap_or_default().to_string();
            placed.push((host, idx));
        }
        Ok(Some(()))
    })
    .unwrap_or_else(|e| {
        site.print_logs();
        panic!("{e}")
    });
    assert!(placed.iter().all(|(h, _)| h == "c3" || h == "c4"), "{placed:?}");
    let mut seen = placed.clone();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 3, "two jobs on one GPU: {placed:?}");
    for id in ids {
        assert_eq!(wait_finished(&site, id, Duration::from_secs(60)), "COMPLETED");
    }
}

/// A compute host that stops answering just before a job grows onto it
/// (`docker pause`: slurmctld still counts it up until its pings time
/// out): the job's worker cannot start there, the expand is rolled back,
/// and, the host killed, the job completes on the hosts it had, with the
/// application's result; its records tile its life, no record runs away.
#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn an_expand_onto_a_host_that_stopped_answering_is_rolled_back() {
    let site = up_site("t-kill", 4, |s| s);
    // c3 and c4 are kept from the job by a reservation until c4 is paused
    // (draining and resuming them would have slurmctld ping them first).
    let resv = |args: &[&str]| {
        site.output(None, "slurmctld", args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    };
    resv(&[
        "scontrol",
        "create",
        "reservation",
        "reservationname=hold",
        "nodes=c3,c4",
        "users=root",
        "starttime=now",
        "duration=10",
    ]);
    let args = README_APP_ARGS.replace("--iterations 600", "--iterations 1500");
    let long = README_ELASTIC_JOB.replace(README_APP_ARGS, &args);
    let script = put_file(&site, "alice", "long.sh", &long);
    let id = sbatch_as(&site, "alice", &[&script]);
    // Its application's runtime is up: it may be resized.
    wait_ctld_said(&site, &said::request_taken(id, "mall1 seq=1 HELLO"), Duration::from_secs(60));
    docker(&["pause", &site.container("c4")]);
    resv(&["scontrol", "delete", "reservation=hold"]);

    let line = wait_ctld_said(&site, &said::rolled_back(id, "c3,c4"), Duration::from_secs(150));
    assert_eq!(said::holds(&line).as_deref(), Some("c[1-2]"), "{line}");
    docker(&["unpause", &site.container("c4")]);
    docker(&["kill", &site.container("c4")]);
    assert_eq!(wait_finished(&site, id, Duration::from_secs(300)), "COMPLETED");
    let recs = records(&site, id);
    assert_tiling(&recs);
    let last = recs.last().unwrap();
    assert_eq!((last.state.as_str(), last.node_list.as_str()), ("COMPLETED", "c[1-2]"), "{recs:#?}");
    assert_result_as_alone(&site, "alice", id, &args);
    assert_eq!(site.runaway_jobs(), Ok(None));
}
