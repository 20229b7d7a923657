//! Generates the bindings at build time from the Slurm source tree named by
//! SLURM_SRC_DIR, after checking that the tree is the very Slurm installed on
//! this machine: a plugin built against other headers would load and misread
//! slurmctld's structs.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

const SRC_VAR: &str = "SLURM_SRC_DIR";
const INCLUDE_VAR: &str = "SLURM_INCLUDE_DIR";

fn main() {
    println!("cargo:rerun-if-env-changed={SRC_VAR}");
    println!("cargo:rerun-if-env-changed={INCLUDE_VAR}");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=layout_probe.c");

    let src = source_tree();
    let installed = PathBuf::from(env::var(INCLUDE_VAR).unwrap_or_else(|_| "/usr/include".into()));
    check_same_version(&src, &installed);

    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    generate_bindings(&src, &out);
    compile_layout_probe(&src);
    link_libslurmfull();
}

/// The plugins call libslurmfull's functions (logging, bitstrings, lists).
/// Inside slurmctld the library is already loaded and matched by its soname;
/// elsewhere (tests, the symbol check) the runpath finds it.
fn link_libslurmfull() {
    let dir = env::var("SLURM_LIB_DIR").unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu/slurm-wlm".into());
    println!("cargo:rerun-if-env-changed=SLURM_LIB_DIR");
    if !Path::new(&dir).join("libslurmfull.so").is_file() {
        panic!("{dir}/libslurmfull.so not found: install slurmctld (or set SLURM_LIB_DIR)");
    }
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=dylib=slurmfull");
    // Exported to dependents' build scripts as DEP_SLURMFULL_LIB_DIR.
    println!("cargo:lib_dir={dir}");
}

fn source_tree() -> PathBuf {
    let Some(dir) = env::var_os(SRC_VAR) else {
        panic!(
            "{SRC_VAR} is not set: it must name a configured Slurm 22.05.8 source tree \
             (Debian's slurm-wlm 22.05.8-4+deb12u3). `cargo xtask slurm-src` fetches and \
             configures one and prints its path."
        );
    };
    let dir = PathBuf::from(dir);
    for sentinel in ["slurm/slurm_version.h", "src/slurmctld/slurmctld.h", "config.h"] {
        if !dir.join(sentinel).is_file() {
            panic!(
                "{SRC_VAR}={} is not a configured Slurm source tree: {sentinel} is missing \
                 (config.h appears after ./configure). `cargo xtask slurm-src` prepares one.",
                dir.display()
            );
        }
        println!("cargo:rerun-if-changed={}", dir.join(sentinel).display());
    }
    dir
}

/// The tree's slurm_version.h must be identical to the installed one.
fn check_same_version(src: &Path, include: &Path) {
    let tree = src.join("slurm/slurm_version.h");
    let inst = include.join("slurm/slurm_version.h");
    println!("cargo:rerun-if-changed={}", inst.display());
    let a = fs::read_to_string(&tree).unwrap_or_else(|e| panic!("cannot read {}: {e}", tree.display()));
    let b = fs::read_to_string(&inst).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}. The installed Slurm's public headers come with Debian's package \
             libslurm-dev: install it (apt-get install libslurm-dev; `cargo xtask build` does), or set \
             {INCLUDE_VAR} to the directory that holds slurm/slurm_version.h",
            inst.display()
        )
    });
    if a != b {
        panic!(
            "refusing to build: {} ({}) differs from the installed {} ({}). \
             {SRC_VAR} must be the source of the installed Slurm.",
            tree.display(),
            version_line(&a),
            inst.display(),
            version_line(&b)
        );
    }
}

fn version_line(header: &str) -> String {
    header
        .lines()
        .find(|l| l.starts_with("#define SLURM_VERSION_STRING"))
        .unwrap_or("no SLURM_VERSION_STRING")
        .to_string()
}

fn generate_bindings(src: &Path, out: &Path) {
    let builder = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_arg(format!("-I{}", src.display()))
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .layout_tests(true)
        .derive_default(true)
        .generate_comments(false)
        // Flag macros are spelled SLURM_BIT(n): let clang evaluate them.
        .clang_macro_fallback()
        // netinet/in.h defines it both as an enum value and a macro.
        .blocklist_item("IPPORT_RESERVED")
        // The records a scheduler reads, and what they point to.
        .allowlist_type("job_record_t")
        .allowlist_type("job_details")
        .allowlist_type("node_record_t")
        .allowlist_type("part_record_t")
        .allowlist_type("slurmctld_lock_t")
        .allowlist_type("slurmctld_config_t")
        .allowlist_type("slurm_conf_t")
        .allowlist_type("log_level_t")
        .allowlist_type("job_states")
        .allowlist_type("node_states")
        // slurmctld's own functions: declared here for their types, resolved
        // at run time (see the safe layer's `ctld` module).
        .allowlist_function("lock_slurmctld")
        .allowlist_function("unlock_slurmctld")
        .allowlist_function("select_nodes")
        .allowlist_function("launch_job")
        .allowlist_function("srun_allocate")
        .allowlist_function("job_independent")
        .allowlist_function("find_job_record")
        .allowlist_var("job_list")
        .allowlist_var("last_job_update")
        .allowlist_var("slurmctld_config")
        // libslurmfull, linked into slurmctld.
        .allowlist_var("last_node_update")
        .allowlist_var("node_record_table_ptr")
        .allowlist_var("node_record_count")
        .allowlist_var("slurm_conf")
        .allowlist_function("log_var")
        .allowlist_function("error")
        .allowlist_function("bit_alloc")
        .allowlist_function("bit_set")
        .allowlist_function("bit_test")
        .allowlist_function("bit_size")
        .allowlist_function("bit_not")
        .allowlist_function("bit_or")
        .allowlist_function("bit_copy")
        .allowlist_function("slurm_bit_free")
        .allowlist_function("bitmap2node_name")
        .allowlist_function("slurm_list_iterator_create")
        .allowlist_function("slurm_list_next")
        .allowlist_function("slurm_list_iterator_destroy")
        .allowlist_function("list_iterator_create")
        .allowlist_function("list_next")
        .allowlist_function("list_iterator_destroy")
        .allowlist_function("get_extra_conf_path")
        .allowlist_function("slurm_xfree")
        .allowlist_function("slurm_strerror")
        // Constants a plugin needs.
        .allowlist_var("SLURM_VERSION_NUMBER")
        .allowlist_var("SLURM_SUCCESS")
        .allowlist_var("SLURM_ERROR")
        .allowlist_var("NO_VAL")
        .allowlist_var("NO_VAL64")
        .allowlist_var("INFINITE")
        .allowlist_var("JOB_STATE_BASE")
        .allowlist_var("JOB_.*")
        .allowlist_var("NODE_STATE_.*")
        .allowlist_type("slurm_err_t")
        .allowlist_var("ESLURM_.*")
        .allowlist_var("SLURMDB_JOB_FLAG_.*");
    let bindings = builder.generate().expect("bindgen failed on wrapper.h");
    bindings.write_to_file(out.join("bindings.rs")).expect("cannot write bindings.rs");
}

fn compile_layout_probe(src: &Path) {
    cc::Build::new().file("layout_probe.c").include(src).include(".").warnings(false).compile("slurm_layout_probe");
}
