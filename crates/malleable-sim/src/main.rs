//! `malleable-sim`: run one strategy on a workload, compare several side by
//! side (table with ratios to the first, and the JSON shape), sweep
//! the malleable fraction as in Chadha et al. 2020's Fig. 3, or time the simulator.

mod cli;

fn main() {
    if let Err(e) = cli::main() {
        eprintln!("malleable-sim: {e}");
        std::process::exit(2);
    }
}
