//! `cargo xtask slurm-tests`' runner: the installed Slurm
//! release's own python and expect tests, as `xtask/slurm-tests/VERSION.list`
//! chooses them, against a cluster under sched/malleable (Strategy=easy) and
//! the same cluster under stock sched/backfill, both at once, printed side by
//! side. It fails when a test that passes under stock does not pass under
//! sched/malleable. (`--slurm 24.11` runs it in that release's build image.)

mod host;
pub mod list;
mod series;
mod suite;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use testcluster::{plugins, Cluster, ClusterSpec, NodeShape, SlurmRelease};

pub use host::{Host, Result};
pub use list::Setup;
use list::LISTS;
use list::{Entry, Kind, Mark};
use suite::{Outcome, Side, Status};

/// The nodes of both clusters: the list's results were taken on four.
const NODES: usize = 4;
/// Ports kept free after the slurmds' for the nodes a test of the python
/// suite adds in auto-config mode (its most here: 2).
const SPARE_PORTS: u16 = 8;
/// Where the sides' copies of the testsuite live (tests write into them).
const WORK: &str = "/tmp/malleable-slurm-tests";

/// A test's time limit: a python file has pytest-timeout's 300 s a test
/// besides; the longest expect tests here take about 6 minutes.
fn limit(kind: Kind) -> Duration {
    match kind {
        Kind::Python => Duration::from_secs(600),
        Kind::Expect => Duration::from_secs(900),
    }
}

/// The list of release `version`, as the repository names it.
fn list_path(version: &str) -> String {
    format!("{LISTS}/{version}.list")
}

/// Release `version`'s list, as the repository names it, read and parsed.
fn read_list(root: &Path, version: &str) -> Result<(String, Vec<Entry>)> {
    let list = list_path(version);
    let text = fs::read_to_string(root.join(&list)).map_err(|e| format!("cannot read {list}: {e}"))?;
    let entries = list::parse(&text, &list)?;
    Ok((list, entries))
}

/// Whether every test of the testsuite `suites` (a `testsuite/` directory)
/// has its line in release `version`'s list (each run or out with a
/// reason): how many tests it has, else which lack one.
pub fn check_listed(root: &Path, version: &str, suites: &Path) -> Result<usize> {
    let (list, entries) = read_list(root, version)?;
    Ok(listed(&list, &entries, suites)?.len())
}

/// Every test of the suites, by kind, once each is known to have its line.
fn listed(list: &str, entries: &[Entry], suites: &Path) -> Result<Vec<(Kind, String)>> {
    let mut tree = Vec::new();
    for kind in [Kind::Python, Kind::Expect] {
        let all = suite_tests(suites, kind)?;
        let missing = list::unlisted(entries, kind, &all);
        if !missing.is_empty() {
            return Err(format!(
                "{list} names no line for these {} tests (each is run or out with a reason): {}",
                kind.name(),
                missing.join(" ")
            ));
        }
        tree.extend(all.into_iter().map(|t| (kind, t)));
    }
    Ok(tree)
}

/// Run the installed release's listed tests (`short`: CI's selection;
/// `only`: those whose name holds one of these; `pairs`: those of these
/// pairs of clusters, all when empty) on both sides.
pub fn run(host: &Host, short: bool, only: &[String], pairs: &[Setup]) -> Result<()> {
    let root = host.root;
    let release = SlurmRelease::installed()?;
    let (list, entries) = read_list(root, release.version)?;
    let tree = listed(&list, &entries, host.suites)?;
    let chosen: Vec<&Entry> = entries
        .iter()
        .filter(
            |e| if only.is_empty() { e.runs(short) } else { e.runs(false) && only.iter().any(|o| e.test.contains(o)) },
        )
        .filter(|e| pairs.is_empty() || pairs.contains(&e.setup))
        .collect();
    if chosen.is_empty() {
        return Err(format!("no test of {list} is run or short and matches --only {}", only.join(",")));
    }
    let out = root.join("target/slurm-tests").join(release.version);
    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let left_out = entries.iter().filter(|e| matches!(e.mark, Mark::Out(_))).count();
    println!(
        "slurm-tests: {} of Slurm {}'s own tests ({} python files, {} expect tests; {left_out} lines of {list} left out), \
         under stock sched/backfill and sched/malleable (easy) at once, {NODES} nodes each",
        chosen.len(),
        release.upstream(),
        chosen.iter().filter(|e| e.kind == Kind::Python).count(),
        chosen.iter().filter(|e| e.kind == Kind::Expect).count(),
    );

    suite::prepare_host(host, release, chosen.iter().any(|e| e.accounting()))?;
    let mut by_side = [BTreeMap::new(), BTreeMap::new()];
    for setup in Setup::ALL {
        let tests: Vec<&Entry> = chosen.iter().copied().filter(|e| e.setup == setup).collect();
        if tests.is_empty() {
            continue;
        }
        if setup != Setup::Plain {
            println!("slurm-tests: {} tests on the clusters {}", tests.len(), pair_said(setup));
        }
        for (all, side) in by_side.iter_mut().zip(run_pair(host, setup, &tests, &out)?) {
            all.extend(side);
        }
    }
    // The tree's tests the list leaves out, for the table by series.
    let left_out = series::left_out(&entries, &tree);
    report(&chosen, &by_side, &left_out, &out)
}

/// The sides' labels, stock's first.
const LABELS: [&str; 2] = ["stock sched/backfill", "sched/malleable (easy)"];

/// How a setup's pair differs from the plain one, as the run says it.
fn pair_said(setup: Setup) -> &'static str {
    match setup {
        Setup::Plain => "without accounting",
        Setup::Dbd => "with accounting (slurmdbd, limits, multifactor)",
        Setup::Preempt => "preempting by partition (preempt/partition_prio, SUSPEND,GANG)",
        Setup::Wide => "with accounting, whose nodes have 8 CPUs and 4,000 MB of memory each (CR_Core_Memory)",
    }
}

/// The names of a setup's clusters (stock's, ours) and of its sides'
/// result directories.
fn pair_names(setup: Setup) -> ([&'static str; 2], [&'static str; 2]) {
    match setup {
        Setup::Plain => (["stock", "malleable"], ["st-stock", "st-malleable"]),
        Setup::Dbd => (["stock-dbd", "malleable-dbd"], ["st-stock-db", "st-mall-db"]),
        Setup::Preempt => (["stock-preempt", "malleable-preempt"], ["st-stock-pp", "st-mall-pp"]),
        Setup::Wide => (["stock-wide", "malleable-wide"], ["st-stock-w", "st-mall-w"]),
    }
}

/// Bring up a cluster under stock Slurm and one under ours, configured as
/// `setup` says, and run `tests` on both at once; then those in
/// auto-config mode, which start Slurm themselves, on one side after the
/// other (the suite knows a node's slurmd by `pgrep -f 'slurmd -N n1'`,
/// which matches the other side's as well), both clusters' Slurm stopped.
/// Each side's outcomes, stock's first.
fn run_pair(host: &Host, setup: Setup, tests: &[&Entry], out: &Path) -> Result<[BTreeMap<String, Outcome>; 2]> {
    let (names, clusters) = pair_names(setup);
    // Room for the nodes the suite adds in auto-config mode; the rest as
    // the setup says, on both sides alike.
    // Applied last to both sides, over each scheduler's own keys.
    let with = |spec: ClusterSpec| {
        let spec = spec.spare_node_ports(SPARE_PORTS);
        let spec = if setup.accounting() { spec.with_accounting() } else { spec };
        match setup {
            Setup::Plain | Setup::Dbd => spec,
            // GANG: the tests try suspending only when it is in PreemptMode,
            // and set CANCEL, REQUEUE or SUSPEND on the partition or QOS
            // themselves. (24.11's test34.1 suspends nothing under
            // CANCEL,GANG, stock or ours; its test_128_1 asks for that.
            // preempt/qos has no pair: test34.2, the one test of it, goes on
            // to heterogeneous jobs; see its line.)
            Setup::Preempt => spec.set("PreemptType", "preempt/partition_prio").set("PreemptMode", "SUSPEND,GANG"),
            // Memory consumable where nodes have it: the tests of --mem skip
            // themselves without CR_*_Memory.
            Setup::Wide => spec
                .shape(NodeShape { cores: 8, gpus: 0, memory_mb: 4000 })
                .set("SelectTypeParameters", "CR_Core_Memory"),
        }
    };
    let ours = with(
        plugins::sched_malleable(ClusterSpec::new(clusters[1], NODES), host.staged)
            .file("malleable.conf", "Strategy=easy\nSchedulerTick=5\n"),
    );
    // Stock Slurm with nothing of ours loaded, its backfill every second
    // as our agent's passes are.
    let stock = with(
        ClusterSpec::new(clusters[0], NODES)
            .set("SchedulerType", "sched/backfill")
            .set("SchedulerParameters", "bf_interval=1")
            .set("SelectType", "select/cons_tres")
            .set("SelectTypeParameters", "CR_Core"),
    );
    let work = Path::new(WORK);
    let sides = [
        Side::new(LABELS[0], names[0], Cluster::up(stock)?, host, work)?,
        Side::new(LABELS[1], names[1], Cluster::up(ours)?, host, work)?,
    ];
    let (in_turns, local): (Vec<&Entry>, Vec<&Entry>) = tests.iter().partition(|e| e.in_turns());
    let (auto, alone): (Vec<&Entry>, Vec<&Entry>) = in_turns.into_iter().partition(|e| e.auto_config());
    let results: Vec<Result<BTreeMap<String, Outcome>>> = std::thread::scope(|scope| {
        let handles: Vec<_> =
            sides.iter().map(|side| scope.spawn(|| run_side(side, &local, &out.join(side.name)))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a side's thread panicked".into()))).collect()
    });
    let mut by_side = [BTreeMap::new(), BTreeMap::new()];
    for ((side, r), all) in sides.iter().zip(results).zip(by_side.iter_mut()) {
        *all = r.map_err(|e| format!("{}: {e}", side.label))?;
    }
    if !alone.is_empty() {
        println!("slurm-tests: {} tests one side after the other", alone.len());
        for (side, all) in sides.iter().zip(by_side.iter_mut()) {
            let mut dir = out.join(side.name).into_os_string();
            dir.push("-alone");
            all.extend(run_side(side, &alone, Path::new(&dir)).map_err(|e| format!("{}: {e}", side.label))?);
        }
    }
    if !auto.is_empty() {
        println!("slurm-tests: {} files in auto-config mode, one side after the other", auto.len());
        for side in &sides {
            side.cluster.stop_slurm();
        }
        for (side, all) in sides.iter().zip(by_side.iter_mut()) {
            let mut dir = out.join(side.name).into_os_string();
            dir.push("-auto");
            all.extend(run_side(side, &auto, Path::new(&dir)).map_err(|e| format!("{}: {e}", side.label))?);
        }
    }
    Ok(by_side)
}

/// Every test of a kind in the testsuite `suites`: the python files
/// holding tests, the expect scripts.
fn suite_tests(suites: &Path, kind: Kind) -> Result<Vec<String>> {
    let mut found = Vec::new();
    match kind {
        Kind::Expect => {
            let dir = suites.join("expect");
            for f in fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))? {
                let name = f.map_err(|e| e.to_string())?.file_name().to_string_lossy().into_owned();
                let numbered = name.strip_prefix("test").and_then(|r| r.split_once('.')).is_some_and(|(a, b)| {
                    !a.is_empty() && !b.is_empty() && (a.chars().chain(b.chars())).all(|c| c.is_ascii_digit())
                });
                if numbered {
                    found.push(name);
                }
            }
        }
        Kind::Python => {
            let base = suites.join("python");
            let mut stack = vec![base.join("tests")];
            while let Some(dir) = stack.pop() {
                for f in fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))? {
                    let path = f.map_err(|e| e.to_string())?.path();
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    if path.is_dir() {
                        stack.push(path);
                    } else if name.starts_with("test_") && name.ends_with(".py") {
                        let rel = path.strip_prefix(&base).map_err(|e| e.to_string())?;
                        found.push(rel.display().to_string());
                    }
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Run the chosen tests on one side, in list order, saying each outcome as
/// it comes; logs under `dir`.
fn run_side(side: &Side, chosen: &[&Entry], dir: &Path) -> Result<BTreeMap<String, Outcome>> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut results = BTreeMap::new();
    let mut tsv = String::new();
    for e in chosen {
        let log = dir.join(format!("{}.log", e.test.replace('/', "%")));
        let o = side.run(e.kind, &e.test, e.auto_config(), limit(e.kind), &log)?;
        println!("  [{}] {} {} {} {:.0} s {}", side.name, e.kind.name(), e.test, o.status.word(), o.secs, o.why);
        tsv.push_str(&format!("{}\t{}\t{}\t{:.1}\t{}\n", e.kind.name(), e.test, o.status.word(), o.secs, o.why));
        results.insert(e.test.clone(), o);
    }
    let file = dir.with_extension("tsv");
    fs::write(&file, tsv).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(results)
}

fn report(
    chosen: &[&Entry],
    by_side: &[BTreeMap<String, Outcome>; 2],
    left_out: &[(Kind, String)],
    out: &Path,
) -> Result<()> {
    let (stock, ours) = (&by_side[0], &by_side[1]);
    println!();
    println!("{:<58}{:>24}{:>26}", "", LABELS[0], LABELS[1]);
    for kind in [Kind::Python, Kind::Expect] {
        let of_kind: Vec<&&Entry> = chosen.iter().filter(|e| e.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let counts = |r: &BTreeMap<String, Outcome>| {
            let n = |s: Status| of_kind.iter().filter(|e| r.get(&e.test).is_some_and(|o| o.status == s)).count();
            format!("{} / {} / {}", n(Status::Passed), n(Status::Failed) + n(Status::TimedOut), n(Status::Skipped))
        };
        let what = format!("{} ({} tests): passed / failed / skipped", kind.name(), of_kind.len());
        println!("{what:<58}{:>24}{:>26}", counts(stock), counts(ours));
    }
    // By series, with the tests the list leaves out (a run of part of the
    // list counts only what it ran).
    let table = series::markdown(&series::rows(chosen, by_side, left_out), LABELS);
    let file = out.join("series.md");
    fs::write(&file, &table).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    println!();
    print!("{table}");
    println!();
    let mut regressions = Vec::new();
    let mut differ = Vec::new();
    for e in chosen {
        let (s, o) = (&stock[&e.test], &ours[&e.test]);
        if s.status != o.status {
            differ.push(format!(
                "  {} {}: {} under stock, {} under sched/malleable{}",
                e.kind.name(),
                e.test,
                s.status.word(),
                o.status.word(),
                if o.why.is_empty() { String::new() } else { format!(" ({})", o.why) }
            ));
            if s.status == Status::Passed {
                regressions.push(e.test.clone());
            }
        }
    }
    if differ.is_empty() {
        println!("every test has the same outcome under both");
    } else {
        println!("tests whose outcome differs:");
        for d in &differ {
            println!("{d}");
        }
    }
    println!("per-test results and logs in {}", out.display());
    if regressions.is_empty() {
        Ok(())
    } else {
        Err(format!("passed under stock sched/backfill but not under sched/malleable: {}", regressions.join(" ")))
    }
}
