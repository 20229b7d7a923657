//! The registry is the one place strategies are named: every entry builds
//! from its defaults and reads only its own parameters, names and keys are
//! unique, a choice reads back as written, and the machinery needs nothing
//! per strategy: a strategy defined here, outside the core, is parsed,
//! given parameters, built and run through the same functions.

use malleable_core::strategies::split_list;
use malleable_core::{
    MeasureKind, MeasureSpec, Param, Params, PassReport, Strategy, StrategyChoice, StrategyInfo, Whole, REGISTRY,
};
use malleable_model::{Decision, Node, PendingJob, Snapshot};

#[test]
fn every_entry_builds_with_its_defaults_and_names_are_unique() {
    let s = Snapshot {
        now: 10,
        nodes: Node::numbered([true, true, false]),
        pending: vec![PendingJob::new(1, 1).time_limit(Some(60))],
        ..Snapshot::default()
    };
    let mut names = std::collections::HashSet::new();
    for info in REGISTRY {
        assert!(names.insert(info.name), "{} registered twice", info.name);
        let mut strategy = (info.build)(&Params::defaults(info.params));
        assert_eq!(strategy.name(), info.name, "an instance names itself as its entry does");
        // A pass runs, and reports only figures its entry declares.
        let report = strategy.schedule(&s);
        for (name, _) in &report.measures {
            assert!(info.measures.iter().any(|m| m.name == *name), "{}: undeclared figure {name}", info.name);
        }
        let keys: std::collections::HashSet<&str> = info.params.iter().map(|p| p.key()).collect();
        assert_eq!(keys.len(), info.params.len(), "{}: a parameter declared twice", info.name);
        for p in info.params {
            let default = p.default_value();
            assert_eq!(
                p.read_value(&p.show_value(default)),
                Some(default),
                "{}: {}'s default is allowed",
                info.name,
                p.key()
            );
        }
    }
}

#[test]
fn a_choice_reads_back_as_it_is_written() {
    for text in ["easy", "conservative[MaxJobTest=100]", "power[CombinationWindow=4,DeepSearchBudgetMs=0]"] {
        let c = StrategyChoice::parse(text).unwrap();
        assert_eq!(c.to_string(), text);
        assert_eq!(StrategyChoice::parse(&c.to_string()).unwrap(), c);
    }
    // Keys in any case and spelling; defaults are not written out.
    let c = StrategyChoice::parse(" Conservative[max_job_test=7] ").unwrap();
    assert_eq!((c.name(), c.to_string()), ("conservative", "conservative[MaxJobTest=7]".to_string()));
    assert_eq!(StrategyChoice::parse("conservative[]").unwrap().to_string(), "conservative");
}

#[test]
fn bad_choices_name_the_strategy_the_key_the_value_and_what_is_allowed() {
    let e = |t: &str| StrategyChoice::parse(t).unwrap_err();
    assert_eq!(
        e("fastest"),
        "unknown strategy 'fastest', allowed: fcfs, easy, conservative, mtct, fpsma, mtct-backfill, power, power-running-only, natural, natural-plan, sd-policy, ipsched"
    );
    assert_eq!(e("easy[Foo=1]"), "easy: unknown parameter 'Foo': it takes none");
    assert_eq!(e("conservative[Foo=1]"), "conservative: unknown parameter 'Foo': it takes MaxJobTest");
    assert!(
        e("conservative[MaxJobTest=0]")
            .starts_with("conservative: MaxJobTest=0 is not valid: expected a whole number from 1 to 1000000"),
        "{}",
        e("conservative[MaxJobTest=0]")
    );
    assert_eq!(e("conservative[MaxJobTest]"), "conservative: 'MaxJobTest' is not Key=value");
    assert!(e("conservative[MaxJobTest=3").contains("must end with ']'"));
}

#[test]
fn lists_split_at_commas_outside_brackets() {
    assert_eq!(
        split_list("easy, conservative[MaxJobTest=10,Other=2],mtct,"),
        vec!["easy", "conservative[MaxJobTest=10,Other=2]", "mtct"]
    );
    assert!(split_list("").is_empty());
}

/// A strategy that is not in the core: starts the first waiting job on
/// `Step` free nodes, whatever it asked.
struct Toy {
    step: usize,
}

impl Strategy for Toy {
    fn name(&self) -> &'static str {
        TOY.name
    }
    fn schedule(&mut self, s: &Snapshot) -> PassReport {
        let mut report = PassReport::default();
        if let Some(job) = s.queue_order().first() {
            let nodes: Vec<usize> = s.free_nodes().into_iter().take(self.step).collect();
            report.decisions.push(Decision::Start { job: job.id, nodes, time_limit: None });
        }
        report.count("toy_passes", 1);
        report
    }
}

const STEP: Param<usize> = Param { key: "Step", default: 1, allowed: Whole::new(1, 4), help: "nodes" };

const TOY: StrategyInfo = StrategyInfo {
    name: "toy",
    about: "a strategy defined in a test",
    params: &[&STEP],
    measures: &[MeasureSpec { name: "toy_passes", kind: MeasureKind::Count, help: "passes" }],
    uses_power_corridor: false,
    shares_cores: false,
    places_cores: false,
    build: |p| Box::new(Toy { step: p.get(&STEP) }),
};

#[test]
fn a_new_strategy_needs_its_file_and_a_registry_line_only() {
    // The registry line.
    let registry: Vec<&'static StrategyInfo> = REGISTRY.iter().copied().chain([&TOY]).collect();
    let choice = StrategyChoice::parse_in(&registry, "toy[step=2]").unwrap();
    assert_eq!(choice.to_string(), "toy[Step=2]");
    let s = Snapshot { nodes: Node::numbered([true, false, true, true]), ..Snapshot::default() };
    let s = Snapshot { pending: vec![PendingJob::new(5, 1)], ..s };
    let report = choice.build().schedule(&s);
    assert_eq!(
        report.decisions,
        vec![Decision::Start { job: malleable_model::JobId(5), nodes: vec![0, 2], time_limit: None }]
    );
    assert_eq!(report.counted("toy_passes"), 1);
    let e = StrategyChoice::parse_in(&registry, "toy[Step=5]").unwrap_err();
    assert_eq!(e, "toy: Step=5 is not valid: expected a whole number from 1 to 4 (nodes)");
}
