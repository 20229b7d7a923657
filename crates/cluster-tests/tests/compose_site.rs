//! The compose site (`cargo xtask compose up`) as its users meet it: alice
//! submits the README's elastic job on the login host, it grows into the
//! idle hosts, shrinks when bob's job comes, and completes with the same
//! result as the application alone, under slurmdbd, multifactor priority
//! and task/cgroup; what it ran in is its cgroup's, and bob cannot touch it.

use std::time::Duration;

use cluster_tests::malleable::checksum_in;
use cluster_tests::site::{
    as_user, job_field, put_file, sbatch_as, up_site, wait_ctld_log, wait_finished, README_APP_ARGS, README_ELASTIC_JOB,
};

#[test]
#[ignore = "needs Docker and a built site: cargo xtask test"]
fn the_readme_elastic_job_grows_shrinks_and_completes_on_the_compose_site() {
    let readme = std::fs::read_to_string(cluster_tests::repo_root().join("README.md")).unwrap();
    assert!(readme.contains(README_ELASTIC_JOB), "the README shows another elastic job than the one tested");
    let site = up_site("t-site", 4, |s| s);
    let script = put_file(&site, "alice", "elastic.sh", README_ELASTIC_JOB);
    let id = sbatch_as(&site, "alice", &[&script]);

    // It starts on two hosts and grows onto the other two; on an added
    // host its step runs in the job's cpuset cgroup, with a core in it.
    wait_ctld_log(&site, &[&format!("JobId={id}: expand onto c3,c4 committed")], Duration::from_secs(90));
    let cpuset = format!("/sys/fs/cgroup/cpuset/slurm_c4/uid_2001/job_{id}/cpuset.cpus");
    let cpus = site.output(None, "c4", &["cat", &cpuset]).unwrap_or_else(|e| panic!("{cpuset}: {e}"));
    assert!(!cpus.trim().is_empty(), "the job's cpuset on c4 is empty");

    // Bob may not cancel it; his job for two hosts makes it shrink to two
    // (its constraint is even), and starts on the hosts it gave up.
    let refused = site.exec(Some("bob"), "login", &["scancel", &id.to_string()]).output().unwrap();
    assert!(!refused.status.success(), "bob cancelled alice's job");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Access/permission denied"), "{refused:?}");
    let rigid = sbatch_as(&site, "bob", &["-N2", "-t", "1", "--wrap", "sleep 3"]);
    let line = wait_ctld_log(&site, &[&format!("JobId={id}: shrink off "), "committed"], Duration::from_secs(60));
    assert!(!line.contains("c1"), "the batch host stays: {line}");

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

    // The database has the job, billed to alice's account.
    let acct = as_user(&site, "alice", &["sacct", "-X", "-n", "-P", "-j", &id.to_string(), "-o", "State,Account,User"]);
    assert_eq!(acct.lines().last(), Some("COMPLETED|physics|alice"), "{acct}");
}
