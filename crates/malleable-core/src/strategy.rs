//! The interface every scheduling strategy implements, and the names under
//! which malleable.conf's `Strategy=` selects them.

use crate::model::{Decision, Snapshot};

/// A scheduling policy: given the cluster now, what to start (and later, what
/// to resize). Strategies may keep state between passes.
pub trait Strategy: Send {
    /// The name `Strategy=` uses for it.
    fn name(&self) -> &'static str;
    /// One scheduling pass.
    fn schedule(&mut self, snapshot: &Snapshot) -> Vec<Decision>;
    /// What the power-aware strategy's LP has done so far; `None` for
    /// strategies without one.
    fn lp_stats(&self) -> Option<&crate::power::LpStats> {
        None
    }
}

/// The strategies a site can choose.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    Fcfs,
    Easy,
    Conservative,
    Mtct,
    Fpsma,
    MtctBackfill,
    Power,
    PowerRunningOnly,
}

impl StrategyKind {
    pub const ALL: &'static [StrategyKind] = &[
        StrategyKind::Fcfs,
        StrategyKind::Easy,
        StrategyKind::Conservative,
        StrategyKind::Mtct,
        StrategyKind::Fpsma,
        StrategyKind::MtctBackfill,
        StrategyKind::Power,
        StrategyKind::PowerRunningOnly,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::Fcfs => "fcfs",
            StrategyKind::Easy => "easy",
            StrategyKind::Conservative => "conservative",
            StrategyKind::Mtct => "mtct",
            StrategyKind::Fpsma => "fpsma",
            StrategyKind::MtctBackfill => "mtct-backfill",
            StrategyKind::Power => "power",
            StrategyKind::PowerRunningOnly => "power-running-only",
        }
    }

    /// Parse a `Strategy=` value; the error lists the allowed names.
    pub fn parse(value: &str) -> Result<Self, String> {
        Self::ALL.iter().copied().find(|k| k.name().eq_ignore_ascii_case(value.trim())).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|k| k.name()).collect();
            format!("unknown strategy '{}', allowed: {}", value, names.join(", "))
        })
    }

    pub fn build(self) -> Box<dyn Strategy> {
        match self {
            StrategyKind::Fcfs => Box::new(crate::fcfs::Fcfs),
            StrategyKind::Easy => Box::new(crate::easy::Easy),
            StrategyKind::Conservative => Box::new(crate::conservative::Conservative),
            StrategyKind::Mtct => Box::new(crate::mtct::Mtct),
            StrategyKind::Fpsma => Box::new(crate::fpsma::Fpsma),
            StrategyKind::MtctBackfill => Box::new(crate::mtct_backfill::MtctBackfill),
            StrategyKind::Power => Box::new(crate::power::PowerAware::new()),
            StrategyKind::PowerRunningOnly => Box::new(crate::power::PowerAware::running_only()),
        }
    }
}
