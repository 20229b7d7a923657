//! The runs' outcomes by series (an expect series as `test17`, a python
//! directory as `commands/sbatch`, 24.11's renumbered files as `test_116`),
//! each side's passed / failed / skipped beside the tests the list leaves
//! out: the table issue 32 asks for, printed and written as markdown.

use std::collections::BTreeMap;

use super::list::{Entry, Kind, Mark};
use super::suite::{Outcome, Status};

/// The series a test belongs to.
pub fn series_of(kind: Kind, test: &str) -> String {
    match kind {
        // test17.36 -> test17; a prefix line (test20.*) names its series.
        Kind::Expect => test.split('.').next().unwrap_or(test).to_string(),
        Kind::Python => {
            let rel = test.strip_prefix("tests/").unwrap_or(test);
            match rel.rsplit_once('/') {
                Some((dir, _)) => dir.to_string(),
                // 24.11's flat files: tests/test_116_25.py -> test_116.
                None => {
                    let stem = rel.trim_end_matches(".py");
                    match stem.rsplit_once('_') {
                        Some((head, tail)) if tail.chars().all(|c| c.is_ascii_digit()) && head.contains('_') => {
                            head.to_string()
                        }
                        _ => stem.to_string(),
                    }
                }
            }
        }
    }
}

/// One series' counts: each side's passed, failed (or timed out), skipped;
/// and how many of its tests the list leaves out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    pub sides: [[usize; 3]; 2],
    pub out: usize,
}

/// The rows by kind and series, from the tests run (`chosen`, their outcomes
/// per side, stock's first) and the tree's tests the list leaves out
/// (`left_out`: by kind, each test once, prefix lines expanded).
pub fn rows(
    chosen: &[&Entry],
    by_side: &[BTreeMap<String, Outcome>; 2],
    left_out: &[(Kind, String)],
) -> BTreeMap<(Kind, String), Row> {
    let mut rows: BTreeMap<(Kind, String), Row> = BTreeMap::new();
    for e in chosen {
        let row = rows.entry((e.kind, series_of(e.kind, &e.test))).or_default();
        for (side, outcomes) in row.sides.iter_mut().zip(by_side) {
            match outcomes.get(&e.test).map(|o| o.status) {
                Some(Status::Passed) => side[0] += 1,
                Some(Status::Failed | Status::TimedOut) => side[1] += 1,
                Some(Status::Skipped) => side[2] += 1,
                None => {}
            }
        }
    }
    for (kind, test) in left_out {
        rows.entry((*kind, series_of(*kind, test))).or_default().out += 1;
    }
    rows
}

/// The tree's tests the list leaves out, each once: an `out` line's test, or
/// each test its prefix begins.
pub fn left_out(entries: &[Entry], tree: &[(Kind, String)]) -> Vec<(Kind, String)> {
    tree.iter()
        .filter(|(kind, t)| entries.iter().any(|e| e.kind == *kind && matches!(e.mark, Mark::Out(_)) && e.names(t)))
        .cloned()
        .collect()
}

/// The rows as a markdown table, with each kind's totals.
pub fn markdown(rows: &BTreeMap<(Kind, String), Row>, labels: [&str; 2]) -> String {
    let mut s = format!(
        "| kind | series | {} passed / failed / skipped | {} passed / failed / skipped | out |\n|---|---|---|---|---|\n",
        labels[0], labels[1]
    );
    let cell = |c: [usize; 3]| format!("{} / {} / {}", c[0], c[1], c[2]);
    let line = |kind: Kind, series: &str, row: &Row| {
        format!("| {} | {series} | {} | {} | {} |\n", kind.name(), cell(row.sides[0]), cell(row.sides[1]), row.out)
    };
    for kind in [Kind::Python, Kind::Expect] {
        let mut total = Row::default();
        for ((_, series), row) in rows.iter().filter(|((k, _), _)| *k == kind) {
            s.push_str(&line(kind, series, row));
            for (t, r) in total.sides.iter_mut().zip(row.sides) {
                for (a, b) in t.iter_mut().zip(r) {
                    *a += b;
                }
            }
            total.out += row.out;
        }
        if rows.keys().any(|(k, _)| *k == kind) {
            s.push_str(&line(kind, "**all**", &total));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::list::parse;
    use super::*;

    #[test]
    fn a_test_s_series_is_its_expect_number_or_python_directory_or_24_11_component() {
        assert_eq!(series_of(Kind::Expect, "test17.36"), "test17");
        assert_eq!(series_of(Kind::Expect, "test20.*"), "test20");
        assert_eq!(series_of(Kind::Python, "tests/commands/sbatch/test_hetjob.py"), "commands/sbatch");
        assert_eq!(series_of(Kind::Python, "tests/test_116_25.py"), "test_116");
        assert_eq!(series_of(Kind::Python, "tests/test_odd.py"), "test_odd");
    }

    fn outcome(status: Status) -> Outcome {
        Outcome { status, secs: 1.0, why: String::new() }
    }

    #[test]
    fn rows_count_each_side_and_the_tests_left_out_by_series() {
        let entries = parse(
            "expect test1.1 run\nexpect test1.2 short\nexpect test1.3 out why\nexpect test20.* out none\n\
             python tests/test_116_1.py run\n",
            "l",
        )
        .unwrap();
        let tree: Vec<(Kind, String)> = [
            (Kind::Expect, "test1.1"),
            (Kind::Expect, "test1.2"),
            (Kind::Expect, "test1.3"),
            (Kind::Expect, "test20.1"),
            (Kind::Expect, "test20.2"),
            (Kind::Python, "tests/test_116_1.py"),
        ]
        .iter()
        .map(|(k, t)| (*k, t.to_string()))
        .collect();
        let out = left_out(&entries, &tree);
        assert_eq!(out.len(), 3, "test1.3 and the two of test20.*: {out:?}");
        let chosen: Vec<&Entry> = entries.iter().filter(|e| e.runs(false)).collect();
        let stock = BTreeMap::from([
            ("test1.1".to_string(), outcome(Status::Passed)),
            ("test1.2".to_string(), outcome(Status::Skipped)),
            ("tests/test_116_1.py".to_string(), outcome(Status::Passed)),
        ]);
        let ours = BTreeMap::from([
            ("test1.1".to_string(), outcome(Status::Passed)),
            ("test1.2".to_string(), outcome(Status::TimedOut)),
            ("tests/test_116_1.py".to_string(), outcome(Status::Failed)),
        ]);
        let rows = rows(&chosen, &[stock, ours], &out);
        assert_eq!(rows[&(Kind::Expect, "test1".into())], Row { sides: [[1, 0, 1], [1, 1, 0]], out: 1 });
        assert_eq!(rows[&(Kind::Expect, "test20".into())], Row { sides: [[0, 0, 0], [0, 0, 0]], out: 2 });
        assert_eq!(rows[&(Kind::Python, "test_116".into())], Row { sides: [[1, 0, 0], [0, 1, 0]], out: 0 });
        let md = markdown(&rows, ["stock", "ours"]);
        assert!(md.contains("| expect | test1 | 1 / 0 / 1 | 1 / 1 / 0 | 1 |"), "{md}");
        assert!(md.contains("| expect | **all** | 1 / 0 / 1 | 1 / 1 / 0 | 3 |"), "{md}");
        assert!(md.contains("| python | **all** | 1 / 0 / 0 | 0 / 1 / 0 | 0 |"), "{md}");
    }
}
