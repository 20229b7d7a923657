//! The window IPSCHED decides on: its jobs (what each asks, where it may
//! run), the nodes with cores to give, EASY's hold for the head job, and
//! the rules a start must keep (`Problem::check`), shared by the program
//! (`model.rs`), its start (`greedy.rs`) and its cover rows (`covers.rs`).

use std::collections::{BTreeMap, BTreeSet};

use malleable_model::{JobId, NodeIndex, Placement};

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

/// EASY's reservation for the window's first job (the head), kept by the
/// program.
#[derive(Clone, Debug, PartialEq)]
pub enum HeadHold {
    /// The head fits on the free nodes: it starts now, as EASY starts it.
    /// (Leaving it to the objective with a row "unless the head starts"
    /// made the relaxation weak: a fraction of the head lifted the hold
    /// for hundreds of nodes, and solves took up to 11 s.)
    StartsNow,
    /// It does not: jobs that would still run at its shadow time hold at
    /// most `extra` of the open nodes back by then.
    Until {
        /// The open nodes back by the head's shadow time: free ones, and
        /// those whose jobs all end by then.
        back: BTreeSet<NodeIndex>,
        /// Nodes back by the shadow time beyond what the head needs.
        extra: u32,
        /// For each job of the window: whether, started now, it may still
        /// run at the shadow time (its time limit says so, or it has none).
        late: Vec<bool>,
    },
}

/// The program's input; `machine_nodes` is the paper's N (the packing
/// penalty's scale), all the machine's nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub jobs: Vec<WindowJob>,
    pub nodes: Vec<OpenNode>,
    pub machine_nodes: usize,
    /// The head job's reservation, when one is kept; the head is job 0.
    pub hold: Option<HeadHold>,
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
pub(super) fn usable(job: &WindowJob, node: &OpenNode) -> bool {
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
    pub(super) fn gap(&self) -> f64 {
        (0..self.jobs.len()).map(|j| self.spread_cost(j)).fold(f64::INFINITY, f64::min).min(1.0) / 2.0
    }

    /// The penalty per node used of job `j` (p_j / 2N).
    pub(super) fn spread_cost(&self, j: usize) -> f64 {
        self.jobs[j].weight / (2.0 * self.machine_nodes.max(1) as f64)
    }

    /// The fewest open nodes job `j` can start on: its cores over the
    /// widest node it may use, rounded up, and no fewer than its Nmin; a
    /// whole-node job's count. `None` when no open node would do.
    pub fn fewest(&self, j: usize) -> Option<u32> {
        let ask = self.jobs[j].ask;
        let widest = self.nodes.iter().filter(|n| usable(&self.jobs[j], n)).map(|n| n.cores).max()?;
        Some(match ask {
            Ask::Cores { cores, min_nodes, .. } => min_nodes.max(cores.div_ceil(widest)),
            Ask::WholeNodes(n) => n,
        })
    }

    /// Whether job `j` counts against the head's hold: it is not the head
    /// and may still run at the shadow time.
    pub(super) fn held_against(&self, j: usize) -> bool {
        match &self.hold {
            Some(HeadHold::Until { late, .. }) => j != 0 && late.get(j).copied().unwrap_or(true),
            _ => false,
        }
    }

    /// Whether open node `i` is back by the head's shadow time (any node
    /// when no shadow time is kept).
    pub(super) fn back_by_shadow(&self, i: NodeIndex) -> bool {
        match &self.hold {
            Some(HeadHold::Until { back, .. }) => back.contains(&i),
            _ => true,
        }
    }

    /// The objective's value of `starts`, and whether they keep every rule
    /// (plain Rust, so a solver's rounding cannot slip a broken layout through).
    pub fn check(&self, starts: &[(usize, Vec<(NodeIndex, u32)>)]) -> Result<f64, String> {
        let by_index: BTreeMap<NodeIndex, &OpenNode> = self.nodes.iter().map(|n| (n.index, n)).collect();
        let mut used = std::collections::HashSet::new();
        let mut value = 0.0;
        let mut held = 0;
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
                if self.held_against(*j) && self.back_by_shadow(i) {
                    held += 1;
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
        match &self.hold {
            Some(HeadHold::StartsNow) if !starts.iter().any(|(j, _)| *j == 0) => {
                return Err("the head fits now and does not start".into());
            }
            Some(HeadHold::Until { extra, .. }) if held > *extra => {
                return Err(format!("jobs past the head's shadow time hold {held} of its nodes, {extra} spare"));
            }
            _ => {}
        }
        Ok(value)
    }
}
