//! What a run or a sweep turns into for people: the paper's metrics, the
//! sweep over malleable fractions and its CSVs, and the PNG plots.

pub mod metrics;
pub mod plot;
pub mod plot_compare;
pub mod plot_power;
pub mod sweep;
