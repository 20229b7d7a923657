//! One recorded pass sequence through both callers of the core's pass: the
//! simulator records each pass as it asked it, and the controller's own
//! way of asking ([`Asked`]) gets the same decisions from a fresh strategy
//! of the same choice, pass by pass.

use malleable_core::StrategyChoice;
use malleable_model::Decision;
use malleable_sim::engine::RecordedPass;
use malleable_sim::workloads::{mpdata::mpdata, workload::esp};
use malleable_sim::{simulate_recorded, SimOptions};

use super::Asked;
use crate::agent::Role;

/// Replay `recorded` through [`Asked`] with a fresh `strategy`; the first
/// pass whose decisions differ, if any.
fn first_difference(strategy: &str, recorded: &[RecordedPass]) -> Option<String> {
    let mut fresh = StrategyChoice::parse(strategy).unwrap().build();
    for (i, pass) in recorded.iter().enumerate() {
        // The simulator asks as sched/malleable does in its passes, and as
        // select/natural does when an application asks.
        let asked = match pass.scheduling {
            Some(s) => Asked { role: Role::Scheduler, shrink_before_preempt: s.shrink_before_preempt },
            None => Asked { role: Role::Answerer, shrink_before_preempt: false },
        };
        let out = asked.pass(fresh.as_mut(), &pass.snapshot, &pass.asking, std::iter::empty());
        if out.decisions != pass.decisions {
            return Some(format!(
                "{strategy}: pass {i} of {} (now {}, asking {:?}): the simulator decided {:?}, the controller {:?}",
                recorded.len(),
                pass.snapshot.now,
                pass.asking,
                pass.decisions,
                out.decisions
            ));
        }
    }
    None
}

/// How many of the recorded decisions are of each kind: start, expand,
/// shrink (what the sequence exercises).
fn kinds(recorded: &[RecordedPass]) -> (usize, usize, usize) {
    let all = recorded.iter().flat_map(|p| &p.decisions);
    let count = |f: fn(&Decision) -> bool| all.clone().filter(|d| f(d)).count();
    (
        count(|d| matches!(d, Decision::Start { .. })),
        count(|d| matches!(d, Decision::Expand { .. })),
        count(|d| matches!(d, Decision::Shrink { .. })),
    )
}

#[test]
fn the_controller_asks_the_core_as_the_simulator_does_and_gets_the_same_decisions() {
    // Iterative MPDATA jobs that ask at their checks (answered alone, as
    // select/natural answers them) on a cluster they crowd, with passes
    // 5 s after the events that call for them (so that jobs ask while
    // nodes are free and others wait, where an answer must start none),
    // and the ESP mix under strategies that resize in their own passes.
    let delayed = SimOptions { pass_delay: 5.0, ..SimOptions::default() };
    let runs = [
        ("natural", mpdata(40, 16, 1), delayed),
        ("mtct", mpdata(40, 16, 5), delayed),
        ("mtct", esp(32, 0.5, 2), SimOptions::default()),
        ("mtct-backfill", esp(32, 0.5, 3), SimOptions::default()),
        ("sd-policy", esp(32, 0.5, 4), SimOptions::default()),
    ];
    let mut total = (0, 0, 0);
    for (strategy, workload, opts) in runs {
        let mut s = StrategyChoice::parse(strategy).unwrap().build();
        let (result, recorded) = simulate_recorded(&workload, s.as_mut(), opts);
        assert_eq!(result.jobs.len(), workload.jobs.len(), "{strategy}: every job ran");
        assert!(recorded.iter().any(|p| p.scheduling.is_some()), "{strategy}: no scheduling pass recorded");
        if let Some(diff) = first_difference(strategy, &recorded) {
            panic!("{diff}");
        }
        let k = kinds(&recorded);
        total = (total.0 + k.0, total.1 + k.1, total.2 + k.2);
    }
    // The sequences start jobs, grow them and shrink them: a replay that
    // only agreed on empty passes would show nothing.
    assert!(total.0 > 0 && total.1 > 0 && total.2 > 0, "starts, expands, shrinks: {total:?}");
}

#[test]
fn a_replay_that_asks_otherwise_is_caught() {
    // The same sequence asked without its asking jobs (as a controller that
    // dropped them would): the answers the simulator got are missing.
    let mut s = StrategyChoice::parse("natural").unwrap().build();
    let (_, mut recorded) = simulate_recorded(&mpdata(40, 16, 1), s.as_mut(), SimOptions::default());
    let answered = recorded.iter().filter(|p| p.scheduling.is_none() && !p.decisions.is_empty()).count();
    assert!(answered > 0, "no answer decided anything");
    for pass in &mut recorded {
        pass.asking.clear();
    }
    assert!(first_difference("natural", &recorded).is_some());
}
