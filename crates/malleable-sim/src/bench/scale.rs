//! The snapshot of issue 35's scale (100,000 waiting jobs on 10,000 nodes): a
//! queue closer to a site's than `pass_snapshot`'s, with priorities,
//! partitions and job arrays (pass.rs times each pass's median and p99).

use malleable_model::{JobPower, MalleableSpec, NodeConstraint, PendingJob, Placement, Snapshot};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::pass::pass_snapshot;

/// A pass's input at a site's scale: `pass_snapshot`'s machine and running
/// jobs (about half the nodes held), and `waiting` pending jobs of 1-256
/// nodes (log-uniform) and 1 minute to 1 day, half malleable, with
/// priorities 0-99, runs of identical jobs submitted together as a job
/// array's tasks are (one run in 20, of 2-32 tasks: about half the jobs),
/// and a few percent in
/// two partitions: a 512-node one and a 64-node debug one of short jobs.
pub fn scale_snapshot(nodes: usize, waiting: usize, seed: u64) -> Snapshot {
    let mut s = pass_snapshot(nodes, 0, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x35);
    let now = s.now;
    let constraints = [NodeConstraint::None, NodeConstraint::PowerOfTwo, NodeConstraint::Even];
    // Partitions over nodes scattered through the table, as a site's are not
    // always one range; sorted, as `Placement::only` keeps them.
    let mut order: Vec<usize> = (0..nodes).collect();
    order.shuffle(&mut rng);
    let big = Placement::only(order.iter().copied().take(512.min(nodes)));
    let debug = Placement::only(order.iter().copied().skip(512.min(nodes)).take(64.min(nodes / 4).max(1)));
    let first = s.running.len() as u32 + 1;
    let mut pending = Vec::with_capacity(waiting);
    while pending.len() < waiting {
        let tasks = if rng.gen_bool(0.05) { rng.gen_range(2..=32usize) } else { 1 };
        let tasks = tasks.min(waiting - pending.len());
        let (placement, max_size, limit) = match rng.gen_range(0..100) {
            0..=2 => (big.clone(), 512.min(nodes) as u32, rng.gen_range(60..86_400)),
            3 => (debug.clone(), 16, rng.gen_range(60..1_800)),
            _ => (Placement::anywhere(), 256, rng.gen_range(60..86_400)),
        };
        let size = (rng.gen_range(0.0f64..256f64.ln()).exp() as u32).clamp(1, max_size);
        let malleable = rng.gen_bool(0.5).then(|| {
            let constraint = *constraints.choose(&mut rng).unwrap();
            MalleableSpec { min: 1, max: 512.min(max_size * 2), constraint }
        });
        // Start sizes obey the constraint (round up to one it allows, within the partition).
        let size = match malleable {
            Some(spec) => (size..=spec.max).find(|&n| spec.allows(n)).unwrap_or(size),
            None => size,
        };
        let priority = rng.gen_range(0..100);
        let watts = rng.gen_range(150.0..300.0);
        // Earlier entries were submitted earlier: one second apart, a run at once.
        let submit = now - (waiting - pending.len()) as i64;
        for _ in 0..tasks {
            let job = PendingJob::new(first + pending.len() as u32, size).submit(submit).priority(priority);
            let job = job.time_limit(Some(limit)).malleable(malleable).placement(placement.clone());
            pending.push(job.power(JobPower::fixed(watts)));
        }
    }
    s.pending = pending;
    s
}

#[cfg(test)]
mod tests {
    use super::super::pass::time_pass_spread;
    use super::*;
    use malleable_core::StrategyChoice;

    #[test]
    fn scale_snapshot_has_arrays_partitions_and_valid_sizes() {
        let s = scale_snapshot(2_000, 3_000, 1);
        assert_eq!((s.nodes.len(), s.pending.len()), (2_000, 3_000));
        assert_eq!(s.free_nodes().len(), 1_000);
        let ids: std::collections::HashSet<u32> =
            s.running.iter().map(|r| r.id.0).chain(s.pending.iter().map(|p| p.id.0)).collect();
        assert_eq!(ids.len(), s.running.len() + s.pending.len(), "ids unique");
        assert!(s.pending.iter().all(|p| p.malleable.is_none_or(|m| m.allows(p.nodes))));
        assert!(s.pending.iter().all(|p| p.nodes as usize <= p.placement.allowed_count(s.nodes.len())));
        let placed = s.pending.iter().filter(|p| !p.placement.is_anywhere()).count();
        assert!((30..300).contains(&placed), "{placed} in partitions");
        // An array's tasks: neighbours alike but for the id.
        let alike = s.pending.windows(2).filter(|w| w[0].submit == w[1].submit && w[0].nodes == w[1].nodes).count();
        assert!((700..2_000).contains(&alike), "{alike} array neighbours");
        assert!(s.pending.iter().any(|p| p.priority > 0));
        assert_eq!(scale_snapshot(2_000, 3_000, 1), s, "seeded");
    }

    #[test]
    fn spread_orders_median_and_p99() {
        let s = scale_snapshot(256, 300, 2);
        let t = time_pass_spread(&StrategyChoice::named("easy").unwrap(), &s, 3);
        assert!(t.median <= t.p99 && t.decisions > 0);
    }
}
