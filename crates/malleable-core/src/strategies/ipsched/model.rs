//! IPSCHED's integer program (Soner and Ozturan, section 3) over a window
//! of waiting jobs and the nodes with cores to give, in two equivalent
//! forms: `exact`, the paper's x_ij and t_ij for every job and node (2M(1+N)
//! variables: 410,000 at 200 jobs on 1,024 nodes), and `classes`, which
//! counts nodes of each kind (free or not, cores and GPUs available, back by
//! the head job's shadow time or not, which of the window's jobs may use
//! it) a job takes and the cores it takes on them (a few thousand
//! variables).
//!
//! The paper's plugin assumed jobs that may use any node. Here a job may be
//! held to some nodes (its partition, `--exclude`, reservations) and name
//! nodes it must have (`--nodelist`): it takes nodes only where it may, and
//! every node it requires. In the class form a node that some job requires
//! is a class of its own, and nodes differ in kind where one job may use
//! them and another not, so a class's nodes stay interchangeable for every
//! job of the window. A started job's cores are laid out on its nodes as
//! select/cons_tres will lay them out (`as_slurm_lays_out`).
//!
//! One rule is added to the paper's model, in both forms: a node takes at
//! most one job of the window. With it the forms have the same optimum (a
//! class solution is handed out node by node, and an exact one counted by
//! class), which the tests check on random small cases; without it a class
//! form would need every way jobs can share a node. What it costs: two jobs
//! new in one pass never share a node; the next pass may put a job on what
//! the first left of it.
//!
//! What makes both forms quick to prove, none of it changing the optimum:
//! - a job's node count is at least its cores over the widest node it may
//!   use, rounded up (the relaxation would otherwise spread a job over
//!   fractions of nodes and promise a smaller penalty than any start has);
//! - cover rows (`covers.rs`): at most k of a set of jobs fit when any k + 1
//!   of them ask more cores or nodes than there are;
//! - a start (`greedy.rs`), which CBC keeps as its first incumbent.
//!
//! Without the first two, near-equal jobs of the ragged CPU-GPU ESP (1,020
//! to 1,028 cores each, two of which missed fitting together by 7 cores)
//! left a relaxation almost two jobs above the optimum, and CBC took up to
//! 18 s to close it; with them the bound of such windows is the optimum.
//! Windows of unequal weights still have a knapsack's own gap, which the
//! search closes in at most some hundreds of nodes.
//!
//! With a head reservation (`HeadHold`) the program keeps EASY's: the head
//! job starts now if it fits on the free nodes; otherwise jobs that would
//! still run at its shadow time may hold at most its extra nodes of those
//! back by then, as EASY's backfill allows.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use good_lp::{variable, Constraint, Expression, ProblemVariables, Variable};
use malleable_model::layout;
use malleable_model::NodeIndex;

use super::covers::cover_rows;
use super::greedy::greedy;
use super::problem::{usable, Ask, HeadHold, OpenNode, Problem, Solution, Starts};
use crate::lp::{self, integral, Outcome, Search};

/// How a solve ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Solved {
    Optimal(Solution),
    /// A limit stopped the search first: the best solution found by then,
    /// if it keeps the rules (`Problem::check`); `None` if there was none.
    Stopped(Option<Solution>),
}

/// How far a solve may search: branch-and-bound nodes (the same on every
/// machine) and wall-clock seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub nodes: Option<u32>,
    pub seconds: Option<f64>,
}

/// Where job `j` may take nodes in a form: its index in the form's capacity
/// rows, its cores per node there, how many nodes it has (a class, or one
/// node), whether they are back by the head's shadow time, and whether it
/// is one node the job requires (taken whenever the job starts).
struct Place {
    at: usize,
    per_node: u32,
    count: f64,
    back: bool,
    required: bool,
}

/// Job `j`'s variables in a form: s_j, and per place it may use, the place,
/// the nodes it takes there (u, or t_ij) and its cores there (X, or x_ij;
/// `None` for a whole-node job, which takes every core).
type Uses = Vec<(usize, Variable, Option<Variable>)>;

/// A form's program under construction.
struct Build {
    vars: ProblemVariables,
    rows: Vec<Constraint>,
    objective: Expression,
    s: Vec<Variable>,
    uses: Vec<Uses>,
    /// Nodes jobs past the head's shadow time take of those back by then.
    held: Expression,
}

impl Build {
    fn new() -> Build {
        Build {
            vars: ProblemVariables::new(),
            rows: Vec::new(),
            objective: Expression::from(0.0),
            s: Vec::new(),
            uses: Vec::new(),
            held: Expression::from(0.0),
        }
    }

    /// Job `j`'s variables and rows over `places`: s_j, and per place the
    /// nodes it takes there (u, t_ij when a place is one node) and, for a
    /// job asking cores, its cores there (X, or x_ij), at least one and at
    /// most R on each node taken; its cores add up to r_j on [`Problem::fewest`]
    /// to Nmax_j nodes, or it takes n whole nodes; a node it requires is
    /// taken when it starts, and it does not start when one is not among
    /// its places. Its node counts go into `per_place` (the capacity rows).
    fn add_job(&mut self, p: &Problem, j: usize, places: &[Place], per_place: &mut [Expression]) {
        let job = &p.jobs[j];
        let sj = self.vars.add(variable().binary());
        self.objective += job.weight * sj;
        let (mut count, mut cores) = (Expression::from(0.0), Expression::from(0.0));
        let mut mine = Vec::new();
        if places.iter().filter(|place| place.required).count() < job.placement.required.len() {
            // A node it requires has nothing to give it now.
            self.rows.push(Expression::from(sj).leq(0.0));
        }
        for place in places {
            let u = self.vars.add(variable().integer().min(0).max(place.count));
            self.objective -= p.spread_cost(j) * u;
            per_place[place.at] += u;
            count += u;
            if place.required {
                self.rows.push((Expression::from(u) - sj).geq(0.0));
            }
            if place.back && p.held_against(j) {
                self.held += u;
            }
            let x = match job.ask {
                Ask::Cores { .. } => {
                    let x = self.vars.add(variable().integer().min(0).max(f64::from(place.per_node) * place.count));
                    self.rows.push((Expression::from(u) - x).leq(0.0));
                    self.rows.push((Expression::from(x) - f64::from(place.per_node) * u).leq(0.0));
                    cores += x;
                    Some(x)
                }
                Ask::WholeNodes(_) => None,
            };
            mine.push((place.at, u, x));
        }
        match (job.ask, p.fewest(j)) {
            (_, None) => self.rows.push(Expression::from(sj).leq(0.0)),
            (Ask::Cores { cores: r, max_nodes, .. }, Some(fewest)) => {
                self.rows.push((cores - f64::from(r) * sj).eq(0.0));
                self.rows.push((count.clone() - f64::from(fewest) * sj).geq(0.0));
                self.rows.push((count - f64::from(max_nodes) * sj).leq(0.0));
            }
            (Ask::WholeNodes(n), Some(_)) => self.rows.push((count - f64::from(n) * sj).eq(0.0)),
        }
        self.s.push(sj);
        self.uses.push(mine);
    }

    /// The rows every form shares once its jobs are in: each place's
    /// capacity, the covers, and the head's hold; then the search from
    /// `start`'s values (`values` turns a start into the form's variables).
    fn solve<T>(
        mut self,
        p: &Problem,
        capacity: &[f64],
        mut per_place: Vec<Expression>,
        limits: Limits,
        start: &[(Variable, f64)],
        read: impl FnOnce(&dyn Fn(Variable) -> f64, &[Variable], &[Uses]) -> Result<T, String>,
    ) -> Result<Outcome<T>, String> {
        for (k, &cap) in capacity.iter().enumerate() {
            self.rows.push(std::mem::replace(&mut per_place[k], Expression::from(0.0)).leq(cap));
        }
        self.rows.extend(cover_rows(p, &self.s));
        match &p.hold {
            Some(HeadHold::StartsNow) => self.rows.push(Expression::from(self.s[0]).geq(1.0)),
            Some(HeadHold::Until { extra, .. }) => {
                let held = std::mem::replace(&mut self.held, Expression::from(0.0));
                self.rows.push(held.leq(f64::from(*extra)));
            }
            None => {}
        }
        let search = Search { node_limit: limits.nodes, seconds: limits.seconds, start: start.to_vec() };
        let (s, uses) = (self.s, self.uses);
        lp::maximise("ipsched", self.vars, self.objective, self.rows, search, p.gap(), |value| read(value, &s, &uses))
    }
}

/// The class form.
pub fn solve_classes(p: &Problem, limits: Limits) -> Result<Solved, String> {
    let classes = classes(p);
    let mut b = Build::new();
    let mut per_class: Vec<Expression> = vec![Expression::from(0.0); classes.len()];
    for (j, job) in p.jobs.iter().enumerate() {
        // A node a job requires is a class alone (see `classes`).
        let places: Vec<Place> = (classes.iter().enumerate())
            .filter(|(_, (kind, _, _))| usable(job, kind))
            .map(|(k, (kind, back, idx))| Place {
                at: k,
                per_node: kind.cores,
                count: idx.len() as f64,
                back: *back,
                required: job.placement.requires(kind.index),
            })
            .collect();
        b.add_job(p, j, &places, &mut per_class);
    }
    // The start's values: each job's nodes and cores counted by class.
    let class_of: HashMap<NodeIndex, usize> =
        classes.iter().enumerate().flat_map(|(k, (_, _, idx))| idx.iter().map(move |&i| (i, k))).collect();
    let mut start = Vec::new();
    for (j, layout) in greedy(p) {
        start.push((b.s[j], 1.0));
        for &(k, u, x) in &b.uses[j] {
            let mine: Vec<u32> = layout.iter().filter(|(i, _)| class_of[i] == k).map(|&(_, c)| c).collect();
            start.push((u, mine.len() as f64));
            if let Some(x) = x {
                start.push((x, f64::from(mine.iter().sum::<u32>())));
            }
        }
    }
    let capacity: Vec<f64> = classes.iter().map(|(_, _, idx)| idx.len() as f64).collect();
    let read = |value: &dyn Fn(Variable) -> f64, s: &[Variable], uses: &[Uses]| -> Result<Starts, String> {
        let mut next = vec![0usize; classes.len()];
        let mut starts = Vec::new();
        for (j, mine) in uses.iter().enumerate() {
            if integral("ipsched", value(s[j]), "s_j")? != 1 {
                continue;
            }
            let mut layout = Vec::new();
            for &(k, u, x) in mine {
                let (kind, _, idx) = &classes[k];
                let u = integral("ipsched", value(u), "u_jk")? as usize;
                let x = match x {
                    Some(x) => integral("ipsched", value(x), "X_jk")? as u32,
                    None => kind.cores * u as u32,
                };
                let nodes = idx.get(next[k]..next[k] + u).ok_or("ipsched: a class handed out more than it has")?;
                next[k] += u;
                layout.extend(spread(x, kind.cores, nodes));
            }
            starts.push((j, layout));
        }
        Ok(starts)
    };
    finish(p, b.solve(p, &capacity, per_class, limits, &start, read)?)
}

/// Nodes of a kind, each kind's lowest-index node standing for it, with
/// whether they are back by the head's shadow time: kinds differ by free or
/// not, cores and GPUs available, back or not, and which of the window's
/// node sets (its jobs' `allowed`) hold them; a node some job requires is a
/// kind of its own.
fn classes(p: &Problem) -> Vec<(OpenNode, bool, Vec<NodeIndex>)> {
    let mut sets: Vec<&Vec<NodeIndex>> = p.jobs.iter().filter_map(|j| j.placement.allowed.as_ref()).collect();
    sets.sort();
    sets.dedup();
    let required: BTreeSet<NodeIndex> = p.jobs.iter().flat_map(|j| j.placement.required.iter().copied()).collect();
    type Kind = (bool, u32, u32, bool, Vec<bool>, Option<NodeIndex>);
    let mut classes: BTreeMap<Kind, Vec<NodeIndex>> = BTreeMap::new();
    for n in &p.nodes {
        let within: Vec<bool> = sets.iter().map(|s| s.binary_search(&n.index).is_ok()).collect();
        let alone = required.contains(&n.index).then_some(n.index);
        let kind = (!n.free, n.cores, n.gpus, !p.back_by_shadow(n.index), within, alone);
        classes.entry(kind).or_default().push(n.index);
    }
    classes
        .into_iter()
        .map(|((held, cores, gpus, late, _, _), idx)| {
            (OpenNode { index: idx[0], free: !held, cores, gpus }, !late, idx)
        })
        .collect()
}

/// `cores` over `nodes` of `per_node` cores each: one on every node, the
/// rest filling nodes in order.
fn spread(cores: u32, per_node: u32, nodes: &[NodeIndex]) -> Vec<(NodeIndex, u32)> {
    let mut left = cores.saturating_sub(nodes.len() as u32);
    nodes
        .iter()
        .map(|&i| {
            let more = left.min(per_node.saturating_sub(1));
            left -= more;
            (i, 1 + more)
        })
        .collect()
}

/// The exact form: the paper's variables for every job and node.
pub fn solve_exact(p: &Problem, limits: Limits) -> Result<Solved, String> {
    let mut b = Build::new();
    let mut per_node: Vec<Expression> = vec![Expression::from(0.0); p.nodes.len()];
    for (j, job) in p.jobs.iter().enumerate() {
        let places: Vec<Place> = (p.nodes.iter().enumerate())
            .filter(|(_, n)| usable(job, n))
            .map(|(i, n)| Place {
                at: i,
                per_node: n.cores,
                count: 1.0,
                back: p.back_by_shadow(n.index),
                required: job.placement.requires(n.index),
            })
            .collect();
        b.add_job(p, j, &places, &mut per_node);
    }
    let at: HashMap<NodeIndex, usize> = p.nodes.iter().enumerate().map(|(k, n)| (n.index, k)).collect();
    let mut start = Vec::new();
    for (j, layout) in greedy(p) {
        start.push((b.s[j], 1.0));
        let cores: HashMap<usize, u32> = layout.iter().map(|&(i, c)| (at[&i], c)).collect();
        for &(i, t, x) in &b.uses[j] {
            if let Some(&c) = cores.get(&i) {
                start.push((t, 1.0));
                if let Some(x) = x {
                    start.push((x, f64::from(c)));
                }
            }
        }
    }
    let capacity = vec![1.0; p.nodes.len()];
    let read = |value: &dyn Fn(Variable) -> f64, s: &[Variable], uses: &[Uses]| -> Result<Starts, String> {
        let mut starts = Vec::new();
        for (j, mine) in uses.iter().enumerate() {
            if integral("ipsched", value(s[j]), "s_j")? != 1 {
                continue;
            }
            let mut layout = Vec::new();
            for &(i, t, x) in mine {
                if integral("ipsched", value(t), "t_ij")? == 1 {
                    let node = &p.nodes[i];
                    let c = match x {
                        Some(x) => integral("ipsched", value(x), "x_ij")? as u32,
                        None => node.cores,
                    };
                    layout.push((node.index, c));
                }
            }
            starts.push((j, layout));
        }
        Ok(starts)
    };
    finish(p, b.solve(p, &capacity, per_node, limits, &start, read)?)
}

/// The cores of each job asking for cores laid out on its nodes as
/// select/cons_tres will ([`malleable_model::layout::cons_tres`]); every
/// layout in node order. The program counts only the nodes a job uses and
/// its cores in all, which this keeps, so any of its answers may be laid
/// out so, and the simulator's layout is slurmctld's.
fn as_slurm_lays_out(p: &Problem, starts: Starts) -> Result<Starts, String> {
    let avail: BTreeMap<NodeIndex, u32> = p.nodes.iter().map(|n| (n.index, n.cores)).collect();
    starts
        .into_iter()
        .map(|(j, mut layout)| {
            layout.sort_unstable();
            if let Ask::Cores { cores, .. } = p.jobs[j].ask {
                let nodes: Vec<(NodeIndex, u32)> =
                    layout.iter().map(|&(i, _)| (i, avail.get(&i).copied().unwrap_or(0))).collect();
                layout = layout::cons_tres(cores, &nodes)
                    .ok_or_else(|| format!("ipsched: {}'s {cores} cores do not fit on {nodes:?}", p.jobs[j].id))?;
            }
            Ok((j, layout))
        })
        .collect()
}

/// A solve's outcome, its starts laid out as Slurm will and checked
/// against the rules.
fn finish(p: &Problem, outcome: Outcome<Starts>) -> Result<Solved, String> {
    let checked = |starts: Starts| -> Result<Solution, String> {
        let starts = as_slurm_lays_out(p, starts)?;
        let value = p.check(&starts)?;
        Ok(Solution { value, starts })
    };
    match outcome {
        Outcome::Optimal(starts) => Ok(Solved::Optimal(
            checked(starts).map_err(|e| format!("ipsched: the solver's answer breaks a rule: {e}"))?,
        )),
        // Starting nothing is always possible: never infeasible.
        Outcome::Infeasible => Err("ipsched: the solver found the program infeasible, which it never is".into()),
        Outcome::Stopped(best) => Ok(Solved::Stopped(best.and_then(|starts| checked(starts).ok()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::ipsched::problem::WindowJob;
    use malleable_model::{JobId, Placement};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn node(index: usize, free: bool, cores: u32, gpus: u32) -> OpenNode {
        OpenNode { index, free, cores, gpus }
    }

    fn cores(id: u32, cores: u32, gpus: u32, min_nodes: u32, max_nodes: u32) -> WindowJob {
        WindowJob::anywhere(JobId(id), 1.0, Ask::Cores { cores, gpus, min_nodes, max_nodes })
    }

    fn optimal(s: Solved) -> Solution {
        match s {
            Solved::Optimal(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_most_jobs_start_each_on_the_fewest_nodes() {
        // 4 free nodes of 8 cores and 2 GPUs. Jobs of 16, 8 and 12 cores and
        // one of 24 with 2 GPUs a node: 16 + 8 + 12 > 32, so at most three
        // start; the three smallest leave a node out.
        let p = Problem {
            jobs: vec![cores(1, 16, 0, 1, 4), cores(2, 8, 0, 1, 4), cores(3, 12, 0, 1, 4), cores(4, 24, 2, 1, 4)],
            nodes: (0..4).map(|i| node(i, true, 8, 2)).collect(),
            machine_nodes: 4,
            hold: None,
        };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, Limits::default()).unwrap());
            let started: Vec<usize> = s.starts.iter().map(|(j, _)| *j).collect();
            assert_eq!(started.len(), 2, "{s:?}");
            // Two jobs (16 + 8 cores on 3 nodes, or 8 + 12, ...): the value
            // is 2 less the spread, 3 nodes / 8.
            assert!((s.value - (2.0 - 3.0 / 8.0)).abs() < 1e-9, "{s:?}");
        }
    }

    #[test]
    fn gpus_and_spare_cores_bound_what_a_node_gives() {
        // n0 free (8 cores, 2 GPUs); n1 has 3 spare cores and no GPU left.
        let nodes = vec![node(0, true, 8, 2), node(1, false, 3, 0)];
        let p = Problem { jobs: vec![cores(1, 11, 1, 1, 2)], nodes: nodes.clone(), machine_nodes: 2, hold: None };
        // It needs a GPU on every node it uses: n1 has none, 11 > 8.
        assert!(optimal(solve_classes(&p, Limits::default()).unwrap()).starts.is_empty());
        let p = Problem { jobs: vec![cores(1, 11, 0, 1, 2)], nodes, machine_nodes: 2, hold: None };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, Limits::default()).unwrap());
            let mut layout = s.starts[0].1.clone();
            layout.sort_unstable();
            assert_eq!(layout, vec![(0, 8), (1, 3)]);
        }
        // A whole-node job takes only free nodes, whole.
        let p = Problem {
            jobs: vec![WindowJob::anywhere(JobId(1), 1.0, Ask::WholeNodes(1))],
            nodes: vec![node(0, false, 8, 2), node(1, true, 8, 2)],
            machine_nodes: 2,
            hold: None,
        };
        assert_eq!(optimal(solve_classes(&p, Limits::default()).unwrap()).starts, vec![(0, vec![(1, 8)])]);
    }

    /// The best value by trying every way of giving each node to one job of
    /// the window or none: independent of both forms and their added rows.
    fn brute_force(p: &Problem) -> f64 {
        let (m, n) = (p.jobs.len(), p.nodes.len());
        let mut best = 0.0_f64;
        let mut owner = vec![0usize; n]; // 0: none, j + 1: job j
        loop {
            let mut value = 0.0;
            let mut ok = true;
            let mut held = 0u32;
            let mut head = false;
            for j in 0..m {
                let mine: Vec<&OpenNode> = (0..n).filter(|&i| owner[i] == j + 1).map(|i| &p.nodes[i]).collect();
                if mine.is_empty() {
                    continue;
                }
                let k = mine.len() as u32;
                let room: u32 = mine.iter().map(|n| n.cores).sum();
                ok &= mine.iter().all(|node| usable(&p.jobs[j], node))
                    && p.jobs[j].placement.required.iter().all(|r| mine.iter().any(|node| node.index == *r))
                    && match p.jobs[j].ask {
                        Ask::Cores { cores, min_nodes, max_nodes, .. } => {
                            (min_nodes..=max_nodes).contains(&k) && k <= cores && cores <= room
                        }
                        Ask::WholeNodes(w) => k == w,
                    };
                value += p.jobs[j].weight - p.spread_cost(j) * f64::from(k);
                head |= j == 0;
                if p.held_against(j) {
                    held += mine.iter().filter(|node| p.back_by_shadow(node.index)).count() as u32;
                }
            }
            match &p.hold {
                Some(HeadHold::StartsNow) => ok &= head,
                Some(HeadHold::Until { extra, .. }) => ok &= held <= *extra,
                None => {}
            }
            if ok {
                best = best.max(value);
            }
            // The next assignment, as a number in base m + 1.
            let Some(i) = (0..n).find(|&i| owner[i] < m) else {
                return best;
            };
            owner[i] += 1;
            owner[..i].iter_mut().for_each(|o| *o = 0);
        }
    }

    /// The two forms and a brute force agree on the optimum of random small
    /// windows (the rule that a node takes one job of the window in all
    /// three), with and without a head's hold; so the rows added to the
    /// paper's (a job's fewest nodes, the covers) cut off no start. Every
    /// answer keeps the rules.
    #[test]
    fn the_class_form_has_the_exact_forms_optimum() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for case in 0..80 {
            let n = rng.gen_range(2..7);
            let nodes: Vec<OpenNode> = (0..n)
                .map(|i| {
                    let free = rng.gen_bool(0.6);
                    let cores = if free { 4 } else { rng.gen_range(1..4) };
                    node(i, free, cores, if free { 2 } else { rng.gen_range(0..3) })
                })
                .collect();
            let jobs: Vec<WindowJob> = (0..rng.gen_range(1..6))
                .map(|j| {
                    let mut w = if rng.gen_bool(0.2) {
                        WindowJob::anywhere(JobId(j), 1.0, Ask::WholeNodes(rng.gen_range(1..3)))
                    } else {
                        let min = rng.gen_range(1..3);
                        cores(j, rng.gen_range(1..12), rng.gen_range(0..2), min, min + rng.gen_range(0..3))
                    };
                    w.weight = rng.gen_range(0.5..2.0);
                    // Some held to part of the nodes, some requiring one.
                    if rng.gen_bool(0.3) {
                        w.placement = Placement::only((0..n).filter(|_| rng.gen_bool(0.6)));
                    }
                    if rng.gen_bool(0.2) {
                        w.placement = w.placement.clone().requiring([rng.gen_range(0..n)]);
                    }
                    w
                })
                .collect();
            let hold = match rng.gen_range(0..5) {
                0 | 1 => Some(HeadHold::Until {
                    back: nodes.iter().filter(|_| rng.gen_bool(0.7)).map(|n| n.index).collect(),
                    extra: rng.gen_range(0..3),
                    late: jobs.iter().map(|_| rng.gen_bool(0.6)).collect(),
                }),
                _ => None,
            };
            let mut p = Problem { jobs, nodes, machine_nodes: 8, hold };
            // The head starting now whenever it can start alone.
            if p.hold.is_none()
                && rng.gen_bool(0.3)
                && brute_force(&Problem { jobs: vec![p.jobs[0].clone()], ..p.clone() }) > 0.0
            {
                p.hold = Some(HeadHold::StartsNow);
            }
            let a = optimal(solve_classes(&p, Limits::default()).unwrap());
            let b = optimal(solve_exact(&p, Limits::default()).unwrap());
            let best = brute_force(&p);
            assert!((a.value - best).abs() < 1e-6, "case {case}: classes {a:?}, brute force {best} for {p:?}");
            assert!((b.value - best).abs() < 1e-6, "case {case}: exact {b:?}, brute force {best} for {p:?}");
        }
    }

    /// The ragged CPU-GPU ESP's slowest solve in miniature: 10 free nodes of
    /// 8 cores and 3 with 1 spare core (83 cores on 13 nodes), and 12 jobs
    /// of 42 to 47 cores (6 nodes each). Two need 84 cores or more: one
    /// starts, on 6 nodes, value 1 - 6/26. Without the cover rows the
    /// relaxation starts 83/42 of a job and its bound is near 2; with them
    /// it is the optimum, which the search proves at its first node.
    #[test]
    fn near_equal_jobs_that_do_not_fit_two_together_are_proved_at_once() {
        let mut nodes: Vec<OpenNode> = (0..10).map(|i| node(i, true, 8, 2)).collect();
        nodes.extend((10..13).map(|i| node(i, false, 1, 0)));
        let jobs = (0..12).map(|j| cores(j, 42 + j % 6, 0, 1, 13)).collect();
        let p = Problem { jobs, nodes, machine_nodes: 13, hold: None };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, Limits { nodes: Some(1), seconds: None }).unwrap());
            assert_eq!(s.starts.len(), 1, "{s:?}");
            assert!((s.value - (1.0 - 6.0 / 26.0)).abs() < 1e-6, "{s:?}");
        }
    }

    /// A search a limit cuts short keeps the best solution found, checked.
    #[test]
    fn a_search_cut_short_keeps_a_checked_solution() {
        let p = Problem {
            jobs: vec![cores(1, 8, 0, 1, 2)],
            nodes: vec![node(0, true, 8, 2)],
            machine_nodes: 1,
            hold: None,
        };
        let got = finish(&p, Outcome::Stopped(Some(vec![(0, vec![(0, 8)])]))).unwrap();
        assert_eq!(got, Solved::Stopped(Some(Solution { value: 0.5, starts: vec![(0, vec![(0, 8)])] })));
        // Its cores per node are laid out anew (cons_tres's, not the
        // solver's), but one on a node that has nothing to give is dropped.
        let got = finish(&p, Outcome::Stopped(Some(vec![(0, vec![(0, 9)])]))).unwrap();
        assert_eq!(got, Solved::Stopped(Some(Solution { value: 0.5, starts: vec![(0, vec![(0, 8)])] })));
        let got = finish(&p, Outcome::Stopped(Some(vec![(0, vec![(0, 4), (5, 4)])]))).unwrap();
        assert_eq!(got, Solved::Stopped(None));
    }

    #[test]
    fn a_job_takes_nodes_only_where_it_may_and_every_node_it_requires() {
        // Three free nodes of 8 cores. Job 1 (8 cores) may use only node 2;
        // job 2 (8 cores) requires node 2 as well: one of them starts, on
        // node 2. Job 3 (12 cores on 2 nodes) requires node 0 and may use
        // any other: it takes 0 and 1 (cons_tres: 8, then 4).
        let mut j1 = cores(1, 8, 0, 1, 1);
        j1.placement = Placement::only([2]);
        let mut j2 = cores(2, 8, 0, 1, 1);
        j2.placement = Placement::anywhere().requiring([2]);
        let mut j3 = cores(3, 12, 0, 2, 2);
        j3.placement = Placement::anywhere().requiring([0]);
        let nodes = (0..3).map(|i| node(i, true, 8, 0)).collect();
        let p = Problem { jobs: vec![j1, j2, j3], nodes, machine_nodes: 3, hold: None };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, Limits::default()).unwrap());
            let on: BTreeMap<usize, Vec<(NodeIndex, u32)>> = s.starts.iter().cloned().collect();
            assert_eq!(on.len(), 2, "{s:?}");
            assert_eq!(on[&2], vec![(0, 8), (1, 4)]);
            let other = if on.contains_key(&0) { 0 } else { 1 };
            assert_eq!(on[&other], vec![(2, 8)]);
        }
        // Node 0 held whole: job 3 cannot have it, so it does not start.
        let mut p = p;
        p.nodes.remove(0);
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, Limits::default()).unwrap());
            assert!(s.starts.iter().all(|(j, _)| *j != 2), "{s:?}");
        }
    }

    #[test]
    fn a_jobs_cores_are_laid_out_as_cons_tres_does() {
        // 10 cores on 2 nodes at most: node 0 with 3 spare, nodes 2 and 3
        // free. The program may take 0 and 2 (apart: cons_tres takes the
        // free node's 8 first, then 2 of node 0) or 2 and 3 (neighbours: 8
        // then 2); never the 5 and 5 a round robin would give, in both forms.
        let p = Problem {
            jobs: vec![cores(1, 10, 0, 1, 2)],
            nodes: vec![node(0, false, 3, 0), node(2, true, 8, 0), node(3, true, 8, 0)],
            machine_nodes: 4,
            hold: None,
        };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, Limits::default()).unwrap());
            let mut cpus: Vec<u32> = s.starts[0].1.iter().map(|&(_, c)| c).collect();
            cpus.sort_unstable();
            assert_eq!(cpus, vec![2, 8], "{s:?}");
        }
    }

    #[test]
    fn cores_spread_one_a_node_then_fill_in_order() {
        assert_eq!(spread(20, 8, &[3, 5, 9]), vec![(3, 8), (5, 8), (9, 4)]);
        assert_eq!(spread(9, 8, &[0, 1]), vec![(0, 8), (1, 1)]);
        assert_eq!(spread(3, 8, &[0, 1, 2]), vec![(0, 1), (1, 1), (2, 1)]);
    }
}
