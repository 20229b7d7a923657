//! Passes on slurm-sys's choice of Slurm release (DEP_SLURMFULL_RELEASE, from
//! the headers it bound) as the same cfg, so the safe layer handles what
//! moved between releases (docs/slurm-versions.md) and nothing above it must.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(slurm_since_24_11)");
    println!("cargo:rerun-if-env-changed=DEP_SLURMFULL_RELEASE");
    let release = std::env::var("DEP_SLURMFULL_RELEASE").expect("slurm-sys exports the Slurm release it binds");
    let (major, minor) = release
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .unwrap_or_else(|| panic!("DEP_SLURMFULL_RELEASE={release}: expected MAJOR.MINOR"));
    if (major, minor) >= (24, 11) {
        println!("cargo:rustc-cfg=slurm_since_24_11");
    }
}
