//! The list of Slurm's own tests `cargo xtask slurm-tests` runs
//! (`xtask/slurm-tests/VERSION.list`, one a release): each test's kind, whether CI runs it, and why
//! any test left out is left out.

use super::Result;

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
    /// Run by full runs only, on the clusters with accounting (slurmdbd,
    /// enforced associations, QOS and limits, multifactor priority).
    Dbd,
    /// Run in the python suite's auto-config mode (the test rewrites the
    /// configuration and starts and stops Slurm itself, so the two sides
    /// take turns): by full runs, and by CI too when `true`
    /// (`auto-short`).
    Auto(bool),
    /// As `Auto`, on the clusters with accounting.
    AutoDbd,
    /// Run by full runs only, in local-config mode but one side after the
    /// other, both clusters up: a test that uses a fixed path of the node
    /// it runs on, which both sides' nodes share on this one host.
    Alone,
    /// As `Alone`, on the clusters with accounting.
    AloneDbd,
    /// Never run here, for this reason.
    Out(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    /// The file or script; on an `out` line it may end in `*` (a prefix).
    pub test: String,
    pub mark: Mark,
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
            Mark::Run | Mark::Dbd | Mark::Auto(false) | Mark::AutoDbd | Mark::Alone | Mark::AloneDbd => !short,
            Mark::Out(_) => false,
        }
    }

    /// Whether it runs on the clusters with accounting.
    pub fn accounting(&self) -> bool {
        matches!(self.mark, Mark::Dbd | Mark::AutoDbd | Mark::AloneDbd)
    }

    /// Whether it runs in the python suite's auto-config mode.
    pub fn auto_config(&self) -> bool {
        matches!(self.mark, Mark::Auto(_) | Mark::AutoDbd)
    }

    /// Whether the sides take turns at it (auto-config mode, or `alone`).
    pub fn in_turns(&self) -> bool {
        self.auto_config() || matches!(self.mark, Mark::Alone | Mark::AloneDbd)
    }
}

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
        let mark = match (mark, rest.is_empty()) {
            (Some("short"), true) => Mark::Short,
            (Some("run"), true) => Mark::Run,
            (Some("dbd"), true) => Mark::Dbd,
            (Some("auto"), true) => Mark::Auto(false),
            (Some("auto-short"), true) => Mark::Auto(true),
            (Some("auto-dbd"), true) => Mark::AutoDbd,
            (Some("alone"), true) => Mark::Alone,
            (Some("alone-dbd"), true) => Mark::AloneDbd,
            (Some("out"), false) => Mark::Out(rest),
            (Some("out"), true) => return Err(format!("{}: {test} is out without a reason", at())),
            (Some(m @ ("short" | "run" | "dbd" | "auto" | "auto-short" | "auto-dbd" | "alone" | "alone-dbd")), false) => {
                return Err(format!("{}: {test}: text after '{m}': only an out line has a reason", at()))
            }
            (other, _) => {
                return Err(format!(
                    "{}: {test}: mark {other:?}: expected short, run, dbd, auto, auto-short, auto-dbd, alone, alone-dbd or out",
                    at()
                ))
            }
        };
        if matches!(mark, Mark::Auto(_) | Mark::AutoDbd) && kind != Kind::Python {
            return Err(format!("{}: {test}: only a python file runs in auto-config mode", at()));
        }
        if test.ends_with('*') && !matches!(mark, Mark::Out(_)) {
            return Err(format!("{}: {test}: only an out line may name every test a prefix begins", at()));
        }
        if entries.iter().any(|e| e.kind == kind && e.test == test) {
            return Err(format!("{}: {} {test} is listed twice", at(), kind.name()));
        }
        entries.push(Entry { kind, test, mark });
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
    use super::super::LISTS;
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
        assert_eq!(e[3].mark, Mark::Dbd);
        assert!(e[7].in_turns() && !e[7].auto_config() && !e[7].accounting() && !e[7].runs(true) && e[7].runs(false));
        assert!(e[6].in_turns() && !e[3].in_turns());
        assert!(e[8].in_turns() && e[8].accounting() && !e[8].auto_config() && !e[8].runs(true));
        assert!(!e[3].runs(true) && e[3].runs(false));
        assert_eq!((e[0].kind, e[0].test.as_str(), &e[0].mark), (Kind::Python, "tests/a.py", &Mark::Short));
        assert_eq!(e[2].mark, Mark::Out("needs slurmdbd".into()));
        assert!(e[0].runs(true) && !e[1].runs(true) && e[1].runs(false) && !e[2].runs(false));
    }

    #[test]
    fn a_bad_line_is_named_with_what_is_wrong() {
        let err = |t: &str| parse(t, "l").unwrap_err();
        assert_eq!(err("expect test1.1 out\n"), "l:1: test1.1 is out without a reason");
        assert_eq!(err("perl t.pl run\n"), "l:1: kind Some(\"perl\"): expected python or expect");
        assert_eq!(
            err("expect test1.1 maybe\n"),
            "l:1: test1.1: mark Some(\"maybe\"): expected short, run, dbd, auto, auto-short, auto-dbd, alone, alone-dbd or out"
        );
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
    fn each_buildable_release_has_a_list_that_reads() {
        for r in testcluster::slurm_release::RELEASES.iter().filter(|r| r.unavailable.is_none()) {
            let path = format!("{}/../../{LISTS}/{}.list", env!("CARGO_MANIFEST_DIR"), r.version);
            let e = parse(&std::fs::read_to_string(&path).unwrap(), &path).unwrap();
            assert!(e.iter().any(|e| e.runs(true) && e.kind == Kind::Expect), "{path}");
            assert!(e.iter().any(|e| e.runs(true) && e.kind == Kind::Python), "{path}");
        }
    }
}
