//! `cargo xtask test` as a library: the order of the whole run and the
//! host's tiers (whole_run), each other release's tier in its build image
//! (release_tests), what runs beside them (beside), and the counts of
//! cargo's and nextest's runs (cargo_tests). xtask only dispatches to it.

mod beside;
mod cargo_tests;
pub mod release_tests;
pub mod whole_run;

pub type Result<T> = std::result::Result<T, String>;
