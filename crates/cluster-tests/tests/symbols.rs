//! The symbol check: every built plugin loads with dlopen outside the
//! daemons, names its type, carries the installed Slurm's exact version,
//! and exports every symbol its daemon's loader requires for its kind (read
//! from Slurm's own source, so the list follows Slurm rather than our
//! belief about it).

use std::path::{Path, PathBuf};

use slurm::common::loader::LoadedObject;
use testcluster::plugins::PLUGINS;

fn source_tree() -> PathBuf {
    let dir =
        std::env::var_os("SLURM_SRC_DIR").expect("SLURM_SRC_DIR is set by .cargo/config.toml or cargo xtask test");
    let dir = PathBuf::from(dir);
    if dir.is_relative() {
        cluster_tests::repo_root().join(dir)
    } else {
        dir
    }
}

/// SLURM_VERSION_NUMBER of the installed headers.
fn installed_version() -> u32 {
    let text = std::fs::read_to_string("/usr/include/slurm/slurm_version.h").expect("libslurm-dev installed");
    let line = text.lines().find(|l| l.starts_with("#define SLURM_VERSION_NUMBER")).expect("version line");
    let hex = line.split_whitespace().last().unwrap().trim_start_matches("0x");
    u32::from_str_radix(hex, 16).expect("hex version")
}

/// The strings of the first `*syms[] = { ... }` array in a Slurm source file:
/// the operations its plugin loader resolves, all required.
fn required_symbols(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let start = text.find("syms[] = {").unwrap_or_else(|| panic!("no syms[] in {}", file.display()));
    let body = &text[start..start + text[start..].find("};").unwrap()];
    body.split('"').skip(1).step_by(2).map(str::to_string).collect()
}

/// What a plugin of this type must export beyond the header: slurmctld's
/// plugin kinds, the select plugins and slurmd's and slurmstepd's task
/// plugins list their operations in their loader's `syms[]` (and
/// require init and fini); a SPANK plugin needs at least one callback, and
/// ours registers its options in slurm_spank_init.
fn required_of(plugin_type: &str) -> Vec<String> {
    let kind = plugin_type.split('/').next().unwrap();
    if kind == "spank" {
        return vec!["slurm_spank_init".to_string(), "slurm_spank_init_post_opt".to_string()];
    }
    let mut required = vec!["init".to_string(), "fini".to_string()];
    required.extend(required_symbols(&loader(kind)));
    required
}

/// The loader of a plugin kind in the source tree: 22.05 keeps them with
/// their daemon or in src/common, 24.11 in src/interfaces.
fn loader(kind: &str) -> PathBuf {
    let places: &[&str] = match kind {
        "sched" => &["src/slurmctld/sched_plugin.c", "src/interfaces/sched_plugin.c"],
        "job_submit" => &["src/slurmctld/job_submit.c", "src/interfaces/job_submit.c"],
        "select" => &["src/common/select.c", "src/interfaces/select.c"],
        "task" => &["src/slurmd/common/task_plugin.c", "src/interfaces/task.c"],
        other => panic!("no symbol list known for {other} plugins"),
    };
    let tree = source_tree();
    places
        .iter()
        .map(|p| tree.join(p))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("none of {places:?} in {}", tree.display()))
}

#[test]
#[ignore = "needs the built plugins: cargo xtask test"]
fn every_plugin_loads_and_exports_what_slurm_requires() {
    let dir = cluster_tests::plugin_dir();
    let version = installed_version();
    assert_eq!(version & 0xffffff, slurm::SLURM_VERSION_NUMBER & 0xffffff, "bindings and installed headers disagree");
    for (_, _, file) in PLUGINS {
        let path = dir.join(file);
        let so = LoadedObject::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let ptype = so.string("plugin_type").unwrap_or_else(|| panic!("{file}: no plugin_type"));
        // Slurm finds a plugin by its type (sched/malleable in sched_malleable.so);
        // a SPANK plugin by the path plugstack.conf gives.
        if ptype == "spank" {
            assert!(file.starts_with("spank_"), "{file}: a SPANK plugin's file is named spank_*.so here");
        } else {
            assert_eq!(format!("{}.so", ptype.replace('/', "_")), *file, "file name must be what Slurm looks for");
        }
        let name = so.string("plugin_name").unwrap_or_default();
        assert!(!name.is_empty(), "{file}: empty plugin_name");
        // src/common/plugin.c compares the low 24 bits: major, minor, micro.
        let v = so.u32("plugin_version").unwrap_or_else(|| panic!("{file}: no plugin_version"));
        assert_eq!(v & 0xffffff, version & 0xffffff, "{file}: plugin_version {v:#x} != installed {version:#x}");
        let required = required_of(&ptype);
        for sym in &required {
            assert!(so.has(sym), "{file} ({ptype}) does not export {sym}");
        }
        eprintln!("{file}: {ptype} \"{name}\" version {v:#x}, exports {}", required.join(" "));
    }
}

#[test]
#[ignore = "needs the Slurm source tree: cargo xtask test"]
fn the_symbol_list_is_read_from_slurm() {
    // Guards the check itself: the parser finds each kind's operations.
    let syms = required_symbols(&loader("sched"));
    assert_eq!(syms, vec!["sched_p_reconfig".to_string()]);
    let syms = required_symbols(&loader("job_submit"));
    assert_eq!(syms, vec!["job_submit".to_string(), "job_modify".to_string()]);
    // The select plugins': plugin_id, then 36 operations (31 in 24.11, 12
    // in 25.11, 13 in 26.05), job_test at its place; the task plugins':
    // 12 hooks (8 in 24.11 and 25.11, 9 in 26.05), slurmd's first, the last.
    let (select_ops, job_test, task_hooks, last_hook) = match slurm::SLURM_RELEASE {
        "22.05" => (36, 5, 12, "task_p_add_pid"),
        "24.11" => (31, 5, 8, "task_p_add_pid"),
        "25.11" => (12, 2, 8, "task_p_add_pid"),
        _ => (13, 2, 9, "task_p_update_mem_limit"),
    };
    let syms = required_symbols(&loader("select"));
    assert_eq!(
        (syms.len(), syms[0].as_str(), syms[job_test].as_str()),
        (select_ops + 1, "plugin_id", "select_p_job_test")
    );
    let syms = required_symbols(&loader("task"));
    assert_eq!(
        (syms.len(), syms[0].as_str(), syms[task_hooks - 1].as_str()),
        (task_hooks, "task_p_slurmd_batch_request", last_hook)
    );
}
