//! EASY backfill (placeholder, to be written).
use crate::model::{Decision, Snapshot};
use crate::strategy::Strategy;
pub struct Easy;
impl Strategy for Easy {
    fn name(&self) -> &'static str { "easy" }
    fn schedule(&mut self, _s: &Snapshot) -> Vec<Decision> { todo!() }
}
