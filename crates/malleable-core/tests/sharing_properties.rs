//! Property tests for sd-policy on random snapshots with cores: without any
//! opt-in it is exactly EASY; with opt-ins every decision can be carried
//! out, and every sharing start keeps the paper's rules (exact node sum, at
//! most MaxMates mates, each mate's predicted slowdown below MAX_SLOWDOWN,
//! the new job ending inside each mate).

use malleable_core::blocks::backfill::easy;
use malleable_core::blocks::mates::MaxSlowdown;
use malleable_core::strategies::sd_policy;
use malleable_core::{Params, StrategyChoice};
use malleable_model::{validate, CoreSharing, Decision, JobId, Node, PendingJob, RunningJob, Snapshot, Time};
use proptest::prelude::*;

const NOW: Time = 10_000;

/// Nodes of `cores` cores, each free or held by one running job; running
/// jobs started at 0..NOW with limits ahead, opted in or not, having waited
/// and been slowed by earlier sharing; waiting jobs opted in or not.
fn snapshot() -> impl Strategy<Value = Snapshot> {
    (1usize..12, 1u32..9, prop::collection::vec((1i64..5_000, any::<bool>(), 0i64..60_000, 0i64..500), 0..6))
        .prop_flat_map(|(n, cores, jobs)| {
            let owner = prop::collection::vec(0..jobs.len() + 1, n);
            let pending = prop::collection::vec((0u32..3, 1..=n as u32, 1i64..3_000, any::<bool>()), 0..8);
            (owner, pending).prop_map(move |(owner, pending)| {
                let running = jobs
                    .iter()
                    .enumerate()
                    .map(|(k, &(left, opted, wait, increase))| {
                        let nodes: Vec<usize> = (0..n).filter(|&i| owner[i] == k + 1).collect();
                        let sharing = CoreSharing { opted_in: opted, wait, increase, ..CoreSharing::default() };
                        RunningJob::new(100 + k as u32, nodes)
                            .start(NOW / 2)
                            .end_limit(Some(NOW + left))
                            .sharing(sharing)
                    })
                    .filter(|r| !r.nodes.is_empty())
                    .collect();
                let pending = pending
                    .into_iter()
                    .enumerate()
                    .map(|(i, (priority, size, limit, share))| {
                        PendingJob::new(i as u32 + 1, size)
                            .priority(priority)
                            .time_limit(Some(limit))
                            .share_cores(share)
                    })
                    .collect();
                Snapshot {
                    now: NOW,
                    nodes: Node::numbered_with_cores(owner.iter().map(|&o| o == 0), cores),
                    running,
                    pending,
                    power: None,
                }
            })
        })
}

fn sd_policy(s: &Snapshot, text: &str) -> Vec<Decision> {
    StrategyChoice::parse(text).unwrap().build().schedule(s).decisions
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn without_an_opt_in_it_is_easy(mut s in snapshot()) {
        for p in &mut s.pending {
            p.share_cores = false;
        }
        prop_assert_eq!(sd_policy(&s, "sd-policy"), easy(&s));
    }

    #[test]
    fn every_sharing_start_keeps_the_papers_rules(s in snapshot(), unlimited in any::<bool>()) {
        let text = if unlimited { "sd-policy[MaxSlowdown=unlimited]" } else { "sd-policy" };
        let cutoff = if unlimited { f64::INFINITY } else { default_max_slowdown() };
        let ds = sd_policy(&s, text);
        prop_assert_eq!(validate(&s, &ds), Ok(()));
        for d in &ds {
            let Decision::Share { job, nodes, time_limit, mates, .. } = d else { continue };
            prop_assert!(!mates.is_empty() && mates.len() <= 2, "{} mates", mates.len());
            let held: usize = mates.iter().map(|m| mate(&s, m.job).nodes.len()).sum();
            prop_assert_eq!(held, nodes.len());
            let p = s.pending.iter().find(|p| p.id == *job).unwrap();
            prop_assert!(*time_limit >= p.time_limit.unwrap());
            for m in mates {
                let r = mate(&s, m.job);
                let limit = r.end_limit.unwrap();
                prop_assert!(NOW + time_limit <= m.end_limit, "the new job ends inside mate {}", m.job);
                // Eq. 4 with the increase the decision grants.
                let req = (limit - r.start - r.sharing.increase).max(1);
                let increase = r.sharing.increase + (m.end_limit - limit);
                let penalty = (r.sharing.wait + increase + req) as f64 / req as f64;
                prop_assert!(penalty < cutoff, "mate {} at {} against {}", m.job, penalty, cutoff);
            }
        }
    }
}

/// MAX_SLOWDOWN as sd-policy has it by default.
fn default_max_slowdown() -> f64 {
    let info = StrategyChoice::parse("sd-policy").unwrap().info;
    match Params::defaults(info.params).get(&sd_policy::MAX_SLOWDOWN) {
        MaxSlowdown::Static(v) => v,
        other => panic!("sd-policy's default MaxSlowdown is {other:?}, not a number"),
    }
}

fn mate(s: &Snapshot, id: JobId) -> &RunningJob {
    s.running.iter().find(|r| r.id == id).unwrap()
}
