//! The evaluation runs `cargo xtask` starts (esp and fidelity, mpdata, soak,
//! versus-stock and the benchmarks), one file each. A run takes the staged
//! plugin directory and where to write from its caller; what runs share is in
//! `common`, and no run imports another (xtask's import rules check it).

pub mod bench_ipsched;
pub mod bench_resize;
pub mod bench_scale;
pub mod bench_site;
pub mod chaos;
pub mod common;
pub mod esp;
pub mod mpdata;
pub mod soak;
pub mod versus;
