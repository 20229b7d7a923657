//! IPSCHED's integer program (Soner and Ozturan, section 3) over a window
//! of waiting jobs and the nodes with cores to give, in two equivalent
//! forms: `exact`, the paper's x_ij and t_ij for every job and node (2M(1+N)
//! variables: 410,000 at 200 jobs on 1,024 nodes), and `classes`, which
//! counts nodes of each kind (free or not, cores and GPUs available, which
//! of the window's jobs may use it) a job takes and the cores it takes on
//! them (a few thousand variables).
//!
//! The paper's plugin assumed jobs that may use any node. Here a job may be
//! held to some nodes (its partition, `--exclude`, reservations) and name
//! nodes it must have (`--nodelist`): it takes nodes only where it may, and
//! every node it requires. In the class form a node that some job requires
//! is a class of its own, and nodes differ in kind where one job may use
//! them and another not, so a class's nodes stay interchangeable for every
//! job of the window.
//!
//! One rule is added to the paper's model, in both forms: a node takes at
//! most one job of the window. With it the forms have the same optimum (a
//! class solution is handed out node by node, and an exact one counted by
//! class), which the tests check on random small cases; without it a class
//! form would need every way jobs can share a node. What it costs: two jobs
//! new in one pass never share a node; the next pass may put a job on what
//! the first left of it.

use std::collections::BTreeMap;

use good_lp::{variable, Constraint, Expression, ProblemVariables, Variable};
use malleable_model::layout;
use malleable_model::{JobId, NodeIndex, Placement};

use crate::lp::{self, integral, Outcome};

/// What a job of the window asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// r_j cores with g_j GPUs on each node used, on Nmin_j to Nmax_j nodes.
    Cores { cores: u32, gpus: u32, min_nodes: u32, max_nodes: u32 },
    /// This many whole free nodes (a job that asks for nodes).
    WholeNodes(u32),
}

/// One job of the window: its weight in the objective (p_j), its ask, and
/// the nodes it may use and must have (never `contiguous`: such a job is
/// left out of the window).
#[derive(Clone, Debug, PartialEq)]
pub struct WindowJob {
    pub id: JobId,
    pub weight: f64,
    pub ask: Ask,
    pub placement: Placement,
}

impl WindowJob {
    /// A job free to use any node.
    pub fn anywhere(id: JobId, weight: f64, ask: Ask) -> WindowJob {
        WindowJob { id, weight, ask, placement: Placement::anywhere() }
    }
}

/// A node with cores to give: free (all of it), or the spare part of one
/// jobs hold part of (R_i, G_i).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenNode {
    pub index: NodeIndex,
    pub free: bool,
    pub cores: u32,
    pub gpus: u32,
}

/// The program's input; `machine_nodes` is the paper's N (the packing
/// penalty's scale), all the machine's nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub jobs: Vec<WindowJob>,
    pub nodes: Vec<OpenNode>,
    pub machine_nodes: usize,
}

/// Jobs started, by their place in the window, each with its cores on
/// each node it uses.
pub type Starts = Vec<(usize, Vec<(NodeIndex, u32)>)>;

/// The jobs started and the objective's value.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    pub value: f64,
    pub starts: Starts,
}

/// Whether `job` may have cores of `node` at all.
fn usable(job: &WindowJob, node: &OpenNode) -> bool {
    let fits = match job.ask {
        Ask::Cores { gpus, .. } => node.cores > 0 && node.gpus >= gpus,
        Ask::WholeNodes(_) => node.free,
    };
    fits && job.placement.allows(node.index)
}

impl Problem {
    /// How close to the optimum a solve must come: under half the smallest
    /// penalty of one node more, so the jobs started and how widely they
    /// spread are the optimum's; what is left (the order between equal
    /// choices) needs no proof, which on a window of near-equal weights
    /// would take CBC tens of thousands of nodes.
    fn gap(&self) -> f64 {
        (0..self.jobs.len()).map(|j| self.spread_cost(j)).fold(f64::INFINITY, f64::min).min(1.0) / 2.0
    }

    /// The penalty per node used of job `j` (p_j / 2N).
    fn spread_cost(&self, j: usize) -> f64 {
        self.jobs[j].weight / (2.0 * self.machine_nodes.max(1) as f64)
    }

    /// The objective's value of `starts`, and whether they keep every rule
    /// (plain Rust, so a solver's rounding cannot slip a broken layout through).
    pub fn check(&self, starts: &[(usize, Vec<(NodeIndex, u32)>)]) -> Result<f64, String> {
        let by_index: BTreeMap<NodeIndex, &OpenNode> = self.nodes.iter().map(|n| (n.index, n)).collect();
        let mut used = std::collections::HashSet::new();
        let mut value = 0.0;
        for (j, layout) in starts {
            let job = self.jobs.get(*j).ok_or_else(|| format!("no job {j} in the window"))?;
            for &(i, c) in layout {
                let node = by_index.get(&i).ok_or_else(|| format!("{}: node {i} has nothing to give", job.id))?;
                if !used.insert(i) {
                    return Err(format!("{}: node {i} is given twice", job.id));
                }
                if !usable(job, node) || c == 0 || c > node.cores {
                    return Err(format!("{}: {c} cores of node {i} ({node:?}) do not fit", job.id));
                }
                if matches!(job.ask, Ask::WholeNodes(_)) && c != node.cores {
                    return Err(format!("{}: node {i} is not given whole", job.id));
                }
            }
            let n = layout.len() as u32;
            let total: u32 = layout.iter().map(|&(_, c)| c).sum();
            let fits = match job.ask {
                Ask::Cores { cores, min_nodes, max_nodes, .. } => {
                    total == cores && (min_nodes..=max_nodes).contains(&n)
                }
                Ask::WholeNodes(k) => n == k,
            };
            if !fits {
                return Err(format!("{}: {total} cores on {n} nodes is not what it asks ({:?})", job.id, job.ask));
            }
            if let Some(r) = job.placement.required.iter().find(|r| !layout.iter().any(|(i, _)| i == *r)) {
                return Err(format!("{}: it requires node {r}, which it is not given", job.id));
            }
            value += job.weight - self.spread_cost(*j) * f64::from(n);
        }
        Ok(value)
    }
}

/// How a solve ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Solved {
    Optimal(Solution),
    /// The branch and bound reached its node limit first.
    NodeLimit,
}

/// The class form. `node_limit` bounds CBC's search.
pub fn solve_classes(p: &Problem, node_limit: Option<u32>) -> Result<Solved, String> {
    let classes = classes(p);
    let mut vars = ProblemVariables::new();
    let mut rows: Vec<Constraint> = Vec::new();
    let mut objective = Expression::from(0.0);
    let mut s = Vec::new();
    // Per job: (class, u_jk, X_jk) for each class it may use.
    let mut per_class: Vec<Expression> = vec![Expression::from(0.0); classes.len()];
    let mut uses = Vec::new();
    for (j, job) in p.jobs.iter().enumerate() {
        // A class holds one node a job requires, alone (see `classes`).
        let places: Vec<Place> = (classes.iter().enumerate())
            .filter(|(_, (kind, _))| usable(job, kind))
            .map(|(k, (kind, idx))| Place {
                at: k,
                cores: kind.cores,
                nodes: idx.len() as f64,
                required: job.placement.requires(kind.index),
            })
            .collect();
        let (sj, mine) = add_job(p, j, &places, &mut vars, &mut rows, &mut objective, &mut per_class);
        s.push(sj);
        uses.push(mine);
    }
    for (k, (_, idx)) in classes.iter().enumerate() {
        rows.push(std::mem::replace(&mut per_class[k], Expression::from(0.0)).leq(idx.len() as f64));
    }
    let read = |value: &dyn Fn(Variable) -> f64| -> Result<Starts, String> {
        let mut next = vec![0usize; classes.len()];
        let mut starts = Vec::new();
        for (j, mine) in uses.iter().enumerate() {
            if integral("ipsched", value(s[j]), "s_j")? != 1 {
                continue;
            }
            let mut layout = Vec::new();
            for &(k, u, x) in mine {
                let (kind, idx) = &classes[k];
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
    finish(p, lp::maximise("ipsched", vars, objective, rows, node_limit, p.gap(), read)?)
}

/// Nodes of a kind, each kind's lowest-index node standing for it: free or
/// not, cores and GPUs available, and which of the window's node sets
/// (its jobs' `allowed`) hold it; a node some job requires is a kind of
/// its own.
fn classes(p: &Problem) -> Vec<(OpenNode, Vec<NodeIndex>)> {
    let mut sets: Vec<&Vec<NodeIndex>> = p.jobs.iter().filter_map(|j| j.placement.allowed.as_ref()).collect();
    sets.sort();
    sets.dedup();
    let required: std::collections::BTreeSet<NodeIndex> =
        p.jobs.iter().flat_map(|j| j.placement.required.iter().copied()).collect();
    type Kind = (bool, u32, u32, Vec<bool>, Option<NodeIndex>);
    let mut classes: BTreeMap<Kind, Vec<NodeIndex>> = BTreeMap::new();
    for n in &p.nodes {
        let within: Vec<bool> = sets.iter().map(|s| s.binary_search(&n.index).is_ok()).collect();
        let alone = required.contains(&n.index).then_some(n.index);
        classes.entry((!n.free, n.cores, n.gpus, within, alone)).or_default().push(n.index);
    }
    classes
        .into_iter()
        .map(|((held, cores, gpus, _, _), idx)| (OpenNode { index: idx[0], free: !held, cores, gpus }, idx))
        .collect()
}

/// Where a job may take nodes: a class, or one node (the exact form).
struct Place {
    /// Its index in `per_place`.
    at: usize,
    /// Cores per node (R).
    cores: u32,
    /// How many nodes it has.
    nodes: f64,
    /// One node the job requires: taken whenever the job starts.
    required: bool,
}

/// Job `j`'s variables and rows over `places`: s_j, and per place the
/// nodes it takes there (u, t_ij when a place is one node) and, for a job
/// asking cores, its cores there (X, or x_ij), at least one and at most R
/// on each node taken; its cores add up to r_j on Nmin_j to Nmax_j nodes,
/// or it takes n whole nodes; a node it requires is taken when it starts,
/// and it does not start when one is not among its places. Its terms go
/// into `objective` and its node counts into `per_place`.
fn add_job(
    p: &Problem,
    j: usize,
    places: &[Place],
    vars: &mut ProblemVariables,
    rows: &mut Vec<Constraint>,
    objective: &mut Expression,
    per_place: &mut [Expression],
) -> (Variable, Vec<(usize, Variable, Option<Variable>)>) {
    let job = &p.jobs[j];
    let sj = vars.add(variable().binary());
    *objective += job.weight * sj;
    let (mut count, mut cores) = (Expression::from(0.0), Expression::from(0.0));
    let mut mine = Vec::new();
    let reached = places.iter().filter(|place| place.required).count();
    if reached < job.placement.required.len() {
        // A node it requires has nothing to give it now.
        rows.push(Expression::from(sj).leq(0.0));
    }
    for &Place { at: k, cores: per_node, nodes: n, required } in places {
        let u = vars.add(variable().integer().min(0).max(n));
        *objective -= p.spread_cost(j) * u;
        per_place[k] += u;
        count += u;
        if required {
            rows.push((Expression::from(u) - sj).geq(0.0));
        }
        let x = match job.ask {
            Ask::Cores { .. } => {
                let x = vars.add(variable().integer().min(0).max(f64::from(per_node) * n));
                rows.push((Expression::from(u) - x).leq(0.0));
                rows.push((Expression::from(x) - f64::from(per_node) * u).leq(0.0));
                cores += x;
                Some(x)
            }
            Ask::WholeNodes(_) => None,
        };
        mine.push((k, u, x));
    }
    match job.ask {
        Ask::Cores { cores: r, min_nodes, max_nodes, .. } => {
            rows.push((cores - f64::from(r) * sj).eq(0.0));
            rows.push((count.clone() - f64::from(min_nodes) * sj).geq(0.0));
            rows.push((count - f64::from(max_nodes) * sj).leq(0.0));
        }
        Ask::WholeNodes(n) => rows.push((count - f64::from(n) * sj).eq(0.0)),
    }
    (sj, mine)
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
pub fn solve_exact(p: &Problem, node_limit: Option<u32>) -> Result<Solved, String> {
    let mut vars = ProblemVariables::new();
    let mut rows: Vec<Constraint> = Vec::new();
    let mut objective = Expression::from(0.0);
    let mut s = Vec::new();
    let mut per_node: Vec<Expression> = vec![Expression::from(0.0); p.nodes.len()];
    let mut uses = Vec::new();
    for (j, job) in p.jobs.iter().enumerate() {
        let places: Vec<Place> = (p.nodes.iter().enumerate())
            .filter(|(_, n)| usable(job, n))
            .map(|(i, n)| Place { at: i, cores: n.cores, nodes: 1.0, required: job.placement.requires(n.index) })
            .collect();
        let (sj, mine) = add_job(p, j, &places, &mut vars, &mut rows, &mut objective, &mut per_node);
        s.push(sj);
        uses.push(mine);
    }
    for e in per_node {
        rows.push(e.leq(1.0));
    }
    let read = |value: &dyn Fn(Variable) -> f64| -> Result<Starts, String> {
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
    finish(p, lp::maximise("ipsched", vars, objective, rows, node_limit, p.gap(), read)?)
}

/// The cores of each job asking for cores laid out on its nodes as
/// select/cons_tres will ([`malleable_model::layout::cons_tres`]). The
/// program counts only the nodes a job uses and its cores in all, which
/// this keeps, so any of its answers may be laid out so, and the
/// simulator's layout is slurmctld's.
fn as_slurm_lays_out(p: &Problem, starts: Starts) -> Result<Starts, String> {
    let avail: BTreeMap<NodeIndex, u32> = p.nodes.iter().map(|n| (n.index, n.cores)).collect();
    starts
        .into_iter()
        .map(|(j, mut layout)| {
            layout.sort_unstable();
            if let Ask::Cores { cores, .. } = p.jobs[j].ask {
                let nodes: Vec<(NodeIndex, u32)> = layout.iter().map(|&(i, _)| (i, avail[&i])).collect();
                layout = layout::cons_tres(cores, &nodes)
                    .ok_or_else(|| format!("ipsched: {}'s {cores} cores do not fit on {nodes:?}", p.jobs[j].id))?;
            }
            Ok((j, layout))
        })
        .collect()
}

/// A solve's outcome, its starts checked against the rules.
fn finish(p: &Problem, outcome: Outcome<Starts>) -> Result<Solved, String> {
    match outcome {
        Outcome::Optimal(starts) => {
            let starts = as_slurm_lays_out(p, starts)?;
            let value = p.check(&starts).map_err(|e| format!("ipsched: the solver's answer breaks a rule: {e}"))?;
            Ok(Solved::Optimal(Solution { value, starts }))
        }
        // Starting nothing is always possible: never infeasible.
        Outcome::Infeasible => Err("ipsched: the solver found the program infeasible, which it never is".into()),
        Outcome::NodeLimit => Ok(Solved::NodeLimit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, None).unwrap());
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
        let p = Problem { jobs: vec![cores(1, 11, 1, 1, 2)], nodes: nodes.clone(), machine_nodes: 2 };
        // It needs a GPU on every node it uses: n1 has none, 11 > 8.
        assert!(optimal(solve_classes(&p, None).unwrap()).starts.is_empty());
        let p = Problem { jobs: vec![cores(1, 11, 0, 1, 2)], nodes, machine_nodes: 2 };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, None).unwrap());
            let mut layout = s.starts[0].1.clone();
            layout.sort_unstable();
            assert_eq!(layout, vec![(0, 8), (1, 3)]);
        }
        // A whole-node job takes only free nodes, whole.
        let p = Problem {
            jobs: vec![WindowJob::anywhere(JobId(1), 1.0, Ask::WholeNodes(1))],
            nodes: vec![node(0, false, 8, 2), node(1, true, 8, 2)],
            machine_nodes: 2,
        };
        assert_eq!(optimal(solve_classes(&p, None).unwrap()).starts, vec![(0, vec![(1, 8)])]);
    }

    /// The two forms agree on the optimum of random small windows (the
    /// rule that a node takes one job of the window in both), and every
    /// answer keeps the rules.
    #[test]
    fn the_class_form_has_the_exact_forms_optimum() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for case in 0..60 {
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
            let p = Problem { jobs, nodes, machine_nodes: 8 };
            let (a, b) = (optimal(solve_classes(&p, None).unwrap()), optimal(solve_exact(&p, None).unwrap()));
            assert!((a.value - b.value).abs() < 1e-6, "case {case}: classes {a:?}, exact {b:?} for {p:?}");
        }
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
        let p =
            Problem { jobs: vec![j1, j2, j3], nodes: (0..3).map(|i| node(i, true, 8, 0)).collect(), machine_nodes: 3 };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, None).unwrap());
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
            let s = optimal(solve(&p, None).unwrap());
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
        };
        for solve in [solve_classes, solve_exact] {
            let s = optimal(solve(&p, None).unwrap());
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
