//! The list of Slurm's own tests `cargo xtask slurm-tests` runs
//! (`xtask/slurm-tests/VERSION.list`, one a release): each test's kind, whether CI runs it, and why
//! any test left out is left out.

use super::host::Result;

/// The lists, one a release: `xtask/slurm-tests/24.11.list`.
pub(super) const LISTS: &str = "xtask/slurm-tests";

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A file of the python (ATF) suite, under `testsuite/python`.
    Python,
    /// A script of the expect suite, in `testsuite/expect`.
    Expect,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Python => "python",
            Kind::Expect => "expect",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Run by CI (`--short`) and by full runs.
    Short,
    /// Run by full runs only.
    Run,
    /// Run in the python suite's auto-config mode (the test rewrites the
    /// configuration and starts and stops Slurm itself, so the two sides
    /// take turns): by full runs, and by CI too when `true`
    /// (`auto-short`).
    Auto(bool),
    /// Run by full runs only, in local-config mode but one side after the
    /// other, both clusters up: a test that uses a fixed path of the node
    /// it runs on, which both sides' nodes share on this one host.
    Alone,
    /// Never run here, for this reason.
    Out(String),
}

/// Which pair of clusters a test runs on: a test that needs a
/// configuration the others would not have (a database, preemption,
/// bigger nodes) gets a pair of its own, stock and ours alike.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Setup {
    /// Four one-CPU nodes, no accounting.
    Plain,
    /// With accounting: slurmdbd and MariaDB of their own, enforced
    /// associations, QOS and limits, multifactor priority.
    Dbd,
    /// As `Plain`, with `PreemptType=preempt/partition_prio` and GANG.
    Preempt,
    /// As `Dbd`, with nodes of several CPUs and memory, memory consumable:
    /// most tests of `--mem` want accounting too (sacct, jobacct_gather).
    Wide,
}

impl Setup {
    /// Every setup, in the order a run takes them.
    pub const ALL: [Setup; 4] = [Setup::Plain, Setup::Dbd, Setup::Preempt, Setup::Wide];

    /// Its word in a mark (`dbd`, `auto-dbd`); none for `Plain`.
    pub fn word(self) -> &'static str {
        match self {
            Setup::Plain => "",
            Setup::Dbd => "dbd",
            Setup::Preempt => "preempt",
            Setup::Wide => "wide",
        }
    }

    /// The setup a `--pairs` word names (`plain`, or a mark's word).
    pub fn named(word: &str) -> Option<Setup> {
        Setup::ALL.into_iter().find(|s| word == if *s == Setup::Plain { "plain" } else { s.word() })
    }

    /// Whether its clusters have accounting.
    pub fn accounting(self) -> bool {
        matches!(self, Setup::Dbd | Setup::Wide)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    /// The file or script; on an `out` line it may end in `*` (a prefix).
    pub test: String,
    pub mark: Mark,
    /// The pair of clusters it runs on.
    pub setup: Setup,
}

impl Entry {
    /// Whether this line names `test`: alone, or by its prefix (`test2.*`).
    pub fn names(&self, test: &str) -> bool {
        match self.test.strip_suffix('*') {
            Some(prefix) => test.starts_with(prefix),
            None => self.test == test,
        }
    }

    /// Whether a run with or without `--short` runs it.
    pub fn runs(&self, short: bool) -> bool {
        match self.mark {
            Mark::Short | Mark::Auto(true) => true,
            Mark::Run | Mark::Auto(false) | Mark::Alone => !short,
            Mark::Out(_) => false,
        }
    }

    /// Whether it runs on clusters with accounting.
    pub fn accounting(&self) -> bool {
        self.setup.accounting()
    }

    /// Whether it runs in the python suite's auto-config mode.
    pub fn auto_config(&self) -> bool {
        matches!(self.mark, Mark::Auto(_))
    }

    /// Whether the sides take turns at it (auto-config mode, or `alone`).
    pub fn in_turns(&self) -> bool {
        self.auto_config() || self.mark == Mark::Alone
    }
}

/// The marks' ways to run, longest first (`auto-short` before `auto`).
const MODES: [(&str, Mark); 5] = [
    ("auto-short", Mark::Auto(true)),
    ("short", Mark::Short),
    ("run", Mark::Run),
    ("auto", Mark::Auto(false)),
    ("alone", Mark::Alone),
];

/// A mark other than `out`: `MODE`, `SETUP` (run on that pair) or
/// `MODE-SETUP`, e.g. `short`, `dbd`, `auto-dbd`, `alone-wide`. CI's modes
/// (`short`, `auto-short`) run on the plain pair only: CI brings up no other.
fn read_mark(word: &str) -> Option<(Mark, Setup)> {
    let setup_of = |w: &str| Setup::ALL.into_iter().find(|s| s.word() == w && *s != Setup::Plain);
    if let Some(setup) = setup_of(word) {
        return Some((Mark::Run, setup));
    }
    for (mode, mark) in MODES {
        if word == mode {
            return Some((mark, Setup::Plain));
        }
        if let Some(setup) = word.strip_prefix(mode).and_then(|r| r.strip_prefix('-')).and_then(setup_of) {
            if matches!(mark, Mark::Short | Mark::Auto(true)) {
                return None;
            }
            return Some((mark, setup));
        }
    }
    None
}

/// What a mark may be, for the error naming a bad one.
const MARKS_ALLOWED: &str = "short, run, auto, auto-short or alone, each but short and auto-short also \
     followed by -dbd, -preempt or -wide (run's alone: dbd, preempt, wide), or out";

/// Read the list (`origin` names it in errors). Every line is a test, a
/// comment (`#`) or blank; a test is named once; an `out` line gives a
/// reason; only an `out` line may name a prefix (`test2.*`).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{origin}:{}", n + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let (kind, test, mark) = (words.first().copied(), words.get(1).copied(), words.get(2).copied());
        let rest = words.get(3..).unwrap_or_default().join(" ");
        let kind = match kind {
            Some("python") => Kind::Python,
            Some("expect") => Kind::Expect,
            other => return Err(format!("{}: kind {other:?}: expected python or expect", at())),
        };
        let test = test.ok_or_else(|| format!("{}: no test named", at()))?.to_string();
        let (mark, setup) = match (mark, rest.is_empty()) {
            (Some("out"), false) => (Mark::Out(rest), Setup::Plain),
            (Some("out"), true) => return Err(format!("{}: {test} is out without a reason", at())),
            (Some(m), empty) => match (read_mark(m), empty) {
                (Some(read), true) => read,
                (Some(_), false) => {
                    return Err(format!("{}: {test}: text after '{m}': only an out line has a reason", at()))
                }
                (None, _) => return Err(format!("{}: {test}: mark {m:?}: expected {MARKS_ALLOWED}", at())),
            },
            (None, _) => return Err(format!("{}: {test}: no mark: expected {MARKS_ALLOWED}", at())),
        };
        if matches!(mark, Mark::Auto(_)) && kind != Kind::Python {
            return Err(format!("{}: {test}: only a python file runs in auto-config mode", at()));
        }
        if test.ends_with('*') && !matches!(mark, Mark::Out(_)) {
            return Err(format!("{}: {test}: only an out line may name every test a prefix begins", at()));
        }
        if entries.iter().any(|e| e.kind == kind && e.test == test) {
            return Err(format!("{}: {} {test} is listed twice", at(), kind.name()));
        }
        entries.push(Entry { kind, test, mark, setup });
    }
    Ok(entries)
}

/// The tests of the suites that the list names nowhere, neither alone nor
/// by a prefix: each must be listed, run or out with a reason.
pub fn unlisted(entries: &[Entry], kind: Kind, all: &[String]) -> Vec<String> {
    all.iter().filter(|t| !entries.iter().any(|e| e.kind == kind && e.names(t))).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_kind_test_mark_and_reason() {
        let text =
            "# a comment\n\npython  tests/a.py  short\nexpect test1.2 run\nexpect  test2.*  out  needs   slurmdbd\n\
             expect test21.1 dbd\npython tests/b.py auto\npython tests/c.py auto-dbd\n\
                    python tests/d.py auto-short\nexpect test14.9 alone\nexpect test14.10 alone-dbd\n";
        let e = parse(text, "l").unwrap();
        assert_eq!(e.len(), 9);
        assert!(e[6].auto_config() && !e[6].accounting() && e[6].runs(true));
        assert!(e[4].auto_config() && !e[4].accounting() && !e[4].runs(true) && e[4].runs(false));
        assert!(e[5].auto_config() && e[5].accounting() && e[3].accounting() && !e[3].auto_config());
        assert_eq!((&e[3].mark, e[3].setup), (&Mark::Run, Setup::Dbd));
        assert!(e[7].in_turns() && !e[7].auto_config() && !e[7].accounting() && !e[7].runs(true) && e[7].runs(false));
        assert!(e[6].in_turns() && !e[3].in_turns());
        assert!(e[8].in_turns() && e[8].accounting() && !e[8].auto_config() && !e[8].runs(true));
        assert!(!e[3].runs(true) && e[3].runs(false));
        assert_eq!((e[0].kind, e[0].test.as_str(), &e[0].mark), (Kind::Python, "tests/a.py", &Mark::Short));
        assert_eq!(e[2].mark, Mark::Out("needs slurmdbd".into()));
        assert!(e[0].runs(true) && !e[1].runs(true) && e[1].runs(false) && !e[2].runs(false));
    }

    #[test]
    fn a_mark_names_its_pair_of_clusters_alone_or_after_its_mode() {
        let text = "expect test34.1 preempt\nexpect test34.2 dbd\npython tests/w.py auto-wide\n\
                    expect test1.12 alone-wide\nexpect test1.14 wide\nexpect test1.1 run\n";
        let e = parse(text, "l").unwrap();
        let read: Vec<(Mark, Setup)> = e.iter().map(|e| (e.mark.clone(), e.setup)).collect();
        assert_eq!(
            read,
            [
                (Mark::Run, Setup::Preempt),
                (Mark::Run, Setup::Dbd),
                (Mark::Auto(false), Setup::Wide),
                (Mark::Alone, Setup::Wide),
                (Mark::Run, Setup::Wide),
                (Mark::Run, Setup::Plain),
            ]
        );
        assert!(e[1].accounting() && !e[0].accounting() && e[2].accounting() && e[2].auto_config());
        // CI brings up the plain pair only, so its modes take no setup.
        let err = parse("expect test1.1 short-dbd\n", "l").unwrap_err();
        assert_eq!(err, format!("l:1: test1.1: mark \"short-dbd\": expected {MARKS_ALLOWED}"));
        assert!(parse("python t.py auto-short-wide\n", "l").is_err());
        assert!(parse("expect t run-\n", "l").is_err());
    }

    #[test]
    fn a_bad_line_is_named_with_what_is_wrong() {
        let err = |t: &str| parse(t, "l").unwrap_err();
        assert_eq!(err("expect test1.1 out\n"), "l:1: test1.1 is out without a reason");
        assert_eq!(err("perl t.pl run\n"), "l:1: kind Some(\"perl\"): expected python or expect");
        assert_eq!(err("expect test1.1 maybe\n"), format!("l:1: test1.1: mark \"maybe\": expected {MARKS_ALLOWED}"));
        assert_eq!(
            err("expect test1.1 run because\n"),
            "l:1: test1.1: text after 'run': only an out line has a reason"
        );
        assert_eq!(err("expect test1.* run\n"), "l:1: test1.*: only an out line may name every test a prefix begins");
        assert_eq!(err("expect t run\n\nexpect t short\n"), "l:3: expect t is listed twice");
        assert_eq!(err("expect test1.1 auto\n"), "l:1: test1.1: only a python file runs in auto-config mode");
    }

    #[test]
    fn a_test_neither_listed_nor_under_a_prefix_is_unlisted() {
        let e = parse("expect test1.1 run\nexpect test2.* out why\npython test1.2 run\n", "l").unwrap();
        let all: Vec<String> = ["test1.1", "test1.2", "test2.7", "test21.1"].iter().map(|s| s.to_string()).collect();
        assert_eq!(unlisted(&e, Kind::Expect, &all), vec!["test1.2".to_string(), "test21.1".to_string()]);
    }

    #[test]
    fn pairs_are_named_as_their_marks_are() {
        assert_eq!(Setup::named("plain"), Some(Setup::Plain));
        assert_eq!(Setup::named("dbd"), Some(Setup::Dbd));
        assert_eq!(Setup::named("wide"), Some(Setup::Wide));
        assert_eq!(Setup::named(""), None);
        assert_eq!(Setup::named("auto"), None);
    }

    #[test]
    fn each_release_with_a_suite_has_a_list_that_reads() {
        // SchedMD's release sources carry no expect or python suite since
        // 25.11 (docs/slurm-versions.md): 26.05's come from its branch point
        // (`--testsuite`); 25.11 has no list.
        for r in provision::release::RELEASES.iter().filter(|r| r.version != "25.11") {
            let path = format!("{}/../../{LISTS}/{}.list", env!("CARGO_MANIFEST_DIR"), r.version);
            let e = parse(&std::fs::read_to_string(&path).unwrap(), &path).unwrap();
            assert!(e.iter().any(|e| e.runs(true) && e.kind == Kind::Expect), "{path}");
            assert!(e.iter().any(|e| e.runs(true) && e.kind == Kind::Python), "{path}");
        }
    }
}
