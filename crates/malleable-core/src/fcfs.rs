//! First come, first served (placeholder, to be written).
use crate::model::{Decision, Snapshot};
use crate::strategy::Strategy;
pub struct Fcfs;
impl Strategy for Fcfs {
    fn name(&self) -> &'static str { "fcfs" }
    fn schedule(&mut self, _s: &Snapshot) -> Vec<Decision> { todo!() }
}
