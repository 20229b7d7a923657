//! Passes on slurm-sys's choice of Slurm release (DEP_SLURMFULL_RELEASE, from
//! the headers it bound) as the same cfg, so the safe layer handles what
//! moved between releases (docs/slurm-versions.md) and nothing above it must.

/// The releases after 22.05 whose changes the safe layer handles, each a
/// cfg `slurm_since_MAJOR_MINOR` as slurm-sys emits it.
const SINCE: &[(u32, u32)] = &[(24, 11), (25, 11), (26, 5)];

fn main() {
    for (major, minor) in SINCE {
        println!("cargo::rustc-check-cfg=cfg(slurm_since_{major}_{minor:02})");
    }
    println!("cargo:rerun-if-env-changed=DEP_SLURMFULL_RELEASE");
    println!("cargo:rerun-if-env-changed=DEP_SLURMFULL_LIB_DIR");
    // Where libslurmfull, and Slurm's plugins beside it, are (tests).
    if let Ok(dir) = std::env::var("DEP_SLURMFULL_LIB_DIR") {
        println!("cargo:rustc-env=SLURM_PLUGIN_DIR={dir}");
    }
    let release = std::env::var("DEP_SLURMFULL_RELEASE").expect("slurm-sys exports the Slurm release it binds");
    let (major, minor) = release
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .unwrap_or_else(|| panic!("DEP_SLURMFULL_RELEASE={release}: expected MAJOR.MINOR"));
    for &(a, b) in SINCE {
        if (major, minor) >= (a, b) {
            println!("cargo:rustc-cfg=slurm_since_{a}_{b:02}");
        }
    }
}
