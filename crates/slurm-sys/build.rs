//! Generates the bindings at build time, by daemon, for the Slurm release
//! the headers are of (22.05, 24.11, 25.11 or 26.05; see docs/slurm-versions.md):
//! - always: the installed public headers (slurm.h, slurm_errno.h, spank.h),
//!   enough for a SPANK plugin (feature `spank`), from /usr/include or
//!   SLURM_INCLUDE_DIR;
//! - features `ctld` and `stepd`: slurmctld's or slurmstepd's internal
//!   headers too, from the configured source tree named by SLURM_SRC_DIR
//!   (and SLURM_BUILD_DIR, where configure wrote config.h and
//!   slurm/slurm_version.h when the tree was built out of tree, as SchedMD's
//!   Debian packaging builds it), after checking that the tree is the very Slurm installed on this
//!   machine: a plugin built against other headers would load and misread
//!   the daemon's structs.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

const SRC_VAR: &str = "SLURM_SRC_DIR";
const BUILD_VAR: &str = "SLURM_BUILD_DIR";
const INCLUDE_VAR: &str = "SLURM_INCLUDE_DIR";

fn main() {
    println!("cargo:rerun-if-env-changed={SRC_VAR}");
    println!("cargo:rerun-if-env-changed={BUILD_VAR}");
    println!("cargo:rerun-if-env-changed={INCLUDE_VAR}");
    for file in ["wrapper.h", "wrapper_public.h", "layout_probe.c", "fairshare.c", "job_checks.c"] {
        println!("cargo:rerun-if-changed={file}");
    }

    let ctld = env::var_os("CARGO_FEATURE_CTLD").is_some();
    let stepd = env::var_os("CARGO_FEATURE_STEPD").is_some();
    let spank = env::var_os("CARGO_FEATURE_SPANK").is_some();
    let client = env::var_os("CARGO_FEATURE_CLIENT").is_some();
    let installed = PathBuf::from(env::var(INCLUDE_VAR).unwrap_or_else(|_| "/usr/include".into()));
    let installed_version = read_installed_version(&installed);
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    // For the version test: where the installed headers are.
    println!("cargo:rustc-env=SLURM_INSTALLED_INCLUDE={}", installed.display());
    let release = Release::of(&installed_version);
    release.emit();

    if ctld || stepd {
        let tree = source_tree();
        check_same_version(&tree, &installed_version);
        generate_bindings(Headers::Internal { tree: &tree, stepd }, Features { ctld, stepd, spank, client }, &out);
        compile_layout_probe(&tree, stepd);
        if ctld {
            compile_helpers(&tree);
        }
    } else {
        generate_bindings(Headers::Public { include: &installed }, Features { ctld, stepd, spank, client }, &out);
    }
    link_libslurmfull();
}

/// Which daemons' bindings to generate.
#[derive(Copy, Clone)]
struct Features {
    ctld: bool,
    stepd: bool,
    spank: bool,
    client: bool,
}

/// Where the headers come from.
enum Headers<'a> {
    /// The installed public headers only.
    Public { include: &'a Path },
    /// The configured source tree: its public headers (checked identical to
    /// the installed ones) and the internal ones.
    Internal { tree: &'a Tree, stepd: bool },
}

/// A configured source tree: the source, and where configure wrote its
/// headers (the same folder for a build in the tree).
struct Tree {
    src: PathBuf,
    build: PathBuf,
}

impl Tree {
    /// The include folders, generated headers first (the source tree of an
    /// out-of-tree build has none of them).
    fn includes(&self) -> Vec<&Path> {
        if self.build == self.src {
            vec![&self.src]
        } else {
            vec![&self.build, &self.src]
        }
    }
}

/// Every daemon and command loads libslurmfull, and the plugins call its
/// functions (logging, bitstrings, lists, SPANK). Inside a daemon the
/// library is already loaded and matched by its soname; elsewhere (tests,
/// the symbol check) the runpath finds it.
fn link_libslurmfull() {
    let dir = env::var("SLURM_LIB_DIR").unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu/slurm-wlm".into());
    println!("cargo:rerun-if-env-changed=SLURM_LIB_DIR");
    if !Path::new(&dir).join("libslurmfull.so").is_file() {
        panic!(
            "{dir}/libslurmfull.so not found: it comes with Debian's Slurm packages; install slurmctld \
             (apt-get install slurmctld; `cargo xtask build` does), or set SLURM_LIB_DIR"
        );
    }
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=dylib=slurmfull");
    // Exported to dependents' build scripts as DEP_SLURMFULL_LIB_DIR.
    println!("cargo:lib_dir={dir}");
}

/// The Slurm release the bindings are for, from SLURM_VERSION_NUMBER.
/// What differs between releases is decided by cfgs this emits for this
/// crate and, through `DEP_SLURMFULL_RELEASE`, for the safe layer's build
/// script: `slurm_since_24_11`, `slurm_since_25_11`, `slurm_since_26_05`
/// (that release or later).
struct Release {
    major: u32,
    minor: u32,
}

/// The releases whose internals the bindings and the safe layer know.
const KNOWN_RELEASES: &[(u32, u32)] = &[(22, 5), (24, 11), (25, 11), (26, 5)];

impl Release {
    fn of(slurm_version_h: &str) -> Release {
        let number = slurm_version_h
            .lines()
            .find_map(|l| l.strip_prefix("#define SLURM_VERSION_NUMBER"))
            .and_then(|v| u32::from_str_radix(v.trim().trim_start_matches("0x"), 16).ok())
            .unwrap_or_else(|| panic!("slurm_version.h has no SLURM_VERSION_NUMBER 0x...: not a Slurm header"));
        let r = Release { major: number >> 16, minor: (number >> 8) & 0xff };
        if !KNOWN_RELEASES.contains(&(r.major, r.minor)) {
            panic!(
                "Slurm {}.{:02} is not one these bindings know (22.05, 24.11, 25.11, 26.05): its internal \
                 structs and plugin interfaces must be compared first (docs/slurm-versions.md)",
                r.major, r.minor
            );
        }
        r
    }

    fn emit(&self) {
        for &(major, minor) in &KNOWN_RELEASES[1..] {
            let cfg = format!("slurm_since_{major}_{minor:02}");
            println!("cargo::rustc-check-cfg=cfg({cfg})");
            if (self.major, self.minor) >= (major, minor) {
                println!("cargo:rustc-cfg={cfg}");
            }
        }
        // Exported to dependents' build scripts as DEP_SLURMFULL_RELEASE.
        println!("cargo:release={}.{:02}", self.major, self.minor);
    }
}

fn source_tree() -> Tree {
    let Some(dir) = env::var_os(SRC_VAR) else {
        panic!(
            "{SRC_VAR} is not set: the ctld and stepd features need the configured source tree of the \
             installed Slurm for the daemons' internal headers. `cargo xtask slurm-src [--slurm VERSION]` \
             prepares one and prints its path. (A SPANK-only build, --no-default-features --features spank, \
             needs none.)"
        );
    };
    let src = PathBuf::from(dir);
    let build = env::var_os(BUILD_VAR).map_or_else(|| src.clone(), PathBuf::from);
    for (base, sentinel) in
        [(&build, "slurm/slurm_version.h"), (&src, "src/slurmctld/slurmctld.h"), (&build, "config.h")]
    {
        if !base.join(sentinel).is_file() {
            panic!(
                "{SRC_VAR}={} (build folder {}) is not a configured Slurm source tree: {} is missing \
                 (config.h appears after ./configure). `cargo xtask slurm-src` prepares one.",
                src.display(),
                build.display(),
                base.join(sentinel).display()
            );
        }
        println!("cargo:rerun-if-changed={}", base.join(sentinel).display());
    }
    Tree { src, build }
}

/// The installed slurm_version.h, or a panic naming the package to install.
fn read_installed_version(include: &Path) -> String {
    let inst = include.join("slurm/slurm_version.h");
    println!("cargo:rerun-if-changed={}", inst.display());
    fs::read_to_string(&inst).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}. The installed Slurm's public headers come with Debian's package \
             libslurm-dev: install it (apt-get install libslurm-dev; `cargo xtask build` does), or set \
             {INCLUDE_VAR} to the directory that holds slurm/slurm_version.h",
            inst.display()
        )
    })
}

/// The tree's slurm_version.h must be identical to the installed one.
fn check_same_version(src: &Tree, installed: &str) {
    let tree = src.build.join("slurm/slurm_version.h");
    let a = fs::read_to_string(&tree).unwrap_or_else(|e| panic!("cannot read {}: {e}", tree.display()));
    if a != installed {
        panic!(
            "refusing to build: {} ({}) differs from the installed slurm/slurm_version.h ({}). \
             {SRC_VAR} must be the source of the installed Slurm.",
            tree.display(),
            version_line(&a),
            version_line(installed)
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

fn generate_bindings(headers: Headers, f: Features, out: &Path) {
    let mut builder = bindgen::Builder::default()
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .layout_tests(true)
        .derive_default(true)
        .generate_comments(false)
        // Flag macros are spelled SLURM_BIT(n): let clang evaluate them.
        .clang_macro_fallback()
        // netinet/in.h defines it both as an enum value and a macro.
        .blocklist_item("IPPORT_RESERVED");
    builder = match headers {
        Headers::Public { include } => builder.header("wrapper_public.h").clang_arg(format!("-I{}", include.display())),
        Headers::Internal { tree, stepd } => {
            let b = tree
                .includes()
                .iter()
                .fold(builder.header("wrapper.h"), |b, dir| b.clang_arg(format!("-I{}", dir.display())));
            if stepd {
                b.clang_arg("-DMALLEABLE_STEPD")
            } else {
                b
            }
        }
    };

    for (wanted, allow) in [
        (true, &EVERY_BUILD),
        (f.spank, &SPANK),
        (f.client, &CLIENT),
        (f.ctld, &CTLD),
        (f.ctld || f.stepd, &DAEMONS),
        (f.stepd, &STEPD),
    ] {
        if wanted {
            builder = allow.apply(builder);
        }
    }

    let bindings = builder.generate().expect("bindgen failed on the Slurm headers");
    bindings.write_to_file(out.join("bindings.rs")).expect("cannot write bindings.rs");
}

/// What a feature's bindings hold, by bindgen's allowlist patterns.
struct Allow {
    types: &'static [&'static str],
    functions: &'static [&'static str],
    vars: &'static [&'static str],
}

impl Allow {
    fn apply(&self, mut b: bindgen::Builder) -> bindgen::Builder {
        for t in self.types {
            b = b.allowlist_type(t);
        }
        for f in self.functions {
            b = b.allowlist_function(f);
        }
        for v in self.vars {
            b = b.allowlist_var(v);
        }
        b
    }
}

/// Every build: the version, error codes and texts, and the log functions
/// spank.h declares (the same code as the daemons' info() and error()).
const EVERY_BUILD: Allow = Allow {
    types: &["slurm_err_t"],
    functions: &["slurm_info", "slurm_error", "slurm_debug", "slurm_debug2", "slurm_strerror"],
    vars: &["SLURM_VERSION_NUMBER", "SLURM_SUCCESS", "SLURM_ERROR", "NO_VAL", "NO_VAL64", "INFINITE", "ESLURM_.*"],
};

/// SPANK plugins: spank.h, a public header.
const SPANK: Allow = Allow {
    types: &[
        "spank_t",
        "spank_err_t",
        "spank_item_t",
        "spank_context_t",
        "spank_option",
        "spank_opt_cb_f",
        "slurm_conf_t",
    ],
    // 26.05 renamed slurm_free_ctl_conf slurm_free_conf.
    functions: &["spank_.*", "slurm_load_ctl_conf", "slurm_free_ctl_conf", "slurm_free_conf"],
    vars: &["ESPANK_.*", "SPANK_.*"],
};

/// Slurm's client API, for commands and applications: public headers.
const CLIENT: Allow = Allow {
    types: &[
        "job_info_msg_t",
        "slurm_job_info_t",
        "job_desc_msg_t",
        "submit_response_msg_t",
        "node_info_msg_t",
        "node_info_t",
    ],
    functions: &[
        "slurm_init",
        "slurm_load_job",
        "slurm_load_node_single",
        "slurm_free_node_info_msg",
        "slurm_free_job_info_msg",
        "slurm_update_job",
        "slurm_init_job_desc_msg",
        "slurm_submit_batch_job",
        "slurm_free_submit_response_response_msg",
        "slurm_hostlist_create",
        "slurm_hostlist_shift",
        "slurm_hostlist_destroy",
    ],
    vars: &["JOB_STATE_BASE"],
};

/// A scheduler in slurmctld: the records it reads and what they point to;
/// slurmctld's own functions (declared here for their types, resolved at
/// run time, see the safe layer's `ctld` module); libslurmfull's globals.
const CTLD: Allow = Allow {
    types: &[
        "job_record_t",
        "job_desc_msg_t",
        // 22.05's `struct job_details`, 24.11's typedef.
        "job_details",
        "job_details_t",
        "node_record_t",
        "part_record_t",
        "step_record_t",
        "acct_storage_info_t",
        // 22.05's name and 24.11's.
        "slurm_persist_conn_t",
        "persist_conn_t",
        // 24.11: select_nodes' argument and job_test_resv's exclusions.
        "job_node_select_t",
        "resv_exc_t",
        "slurmctld_lock_t",
        "slurmctld_config_t",
        "diag_stats_t",
        "slurm_conf_t",
        "slurm_msg_t",
        "will_run_response_msg_t",
        "job_states",
        "job_state_reason",
        "node_states",
        // A dependency (its type: aftercorr splits a waiting array).
        "depend_spec_t",
        "slurm_depend_types_t",
    ],
    functions: &[
        "lock_slurmctld",
        "unlock_slurmctld",
        "select_nodes",
        "launch_job",
        "srun_allocate",
        "job_independent",
        "job_test_resv",
        // 24.11: frees what job_test_resv put in a resv_exc_t.
        "reservation_delete_resv_exc_parts",
        "job_limits_check",
        "deadline_ok",
        "job_array_start_test",
        // A waiting array with an aftercorr dependency split into tasks,
        // as slurmctld's build_job_queue does (22.05: (job); 24.11: (job,
        // list_add)), and 24.11's setter of a job's state.
        "job_array_split",
        "job_array_post_sched",
        "num_pending_job_array_tasks",
        "job_state_set",
        "valid_feature_counts",
        "find_job_record",
        "find_part_record",
        "update_job",
        "job_allocate",
        "job_signal_id",
        "calc_job_billable_tres",
        // An expand's prolog and extern step on the added nodes
        // (PrologFlags=Alloc or Contain).
        "launch_prolog",
        "delete_step_records",
        "free_step_record",
        // libslurmfull's: take a job's cores out of the select plugin's
        // rows and put them back (the expand merge's repair, ctld::merge_cores).
        "select_g_job_suspend",
        "select_g_job_resume",
        // libslurmfull's: a job's accounting record closed (the expand
        // helper's, which stock Slurm leaves open).
        "jobacct_storage_g_job_complete",
        "jobacct_storage_g_step_start",
        // libslurmfull's: a resized job's record named again (22.05,
        // LockGuard::name_record).
        "jobacct_storage_g_job_start",
        "acct_storage_g_get_data",
        // libslurmfull's: slurmdbd asked whether it answers (ctld::slurmdbd_ping).
        "slurm_persist_conn_open",
        "slurm_persist_conn_close",
        "slurm_msg_t_init",
        "slurm_init_job_desc_msg",
        "get_extra_conf_path",
        "slurm_list_iterator_create",
        "slurm_list_next",
        "slurm_list_iterator_destroy",
        "list_iterator_create",
        "list_next",
        "list_iterator_destroy",
        "list_remove",
        "list_count",
        // An empty license list for the expand merge (ctld::merge_licenses).
        "list_create",
        "slurm_list_create",
        // slurmctld's: the list slurm_find_preemptable_jobs returns is ours to free.
        "list_destroy",
        "slurm_list_for_each",
        "list_for_each",
        // A function until 24.11, a macro over run_in_daemon since 25.11.
        "running_in_slurmctld",
        "run_in_daemon",
        "env_array_overwrite",
        "envcount",
    ],
    vars: &[
        "job_list",
        "default_part_loc",
        "last_job_update",
        "slurmctld_config",
        "last_node_update",
        "node_record_table_ptr",
        "node_record_count",
        "slurm_conf",
        "JOB_STATE_BASE",
        "JOB_.*",
        "ACCOUNTING_ENFORCE_.*",
        "NODE_STATE_.*",
        "SLURMDB_JOB_FLAG_.*",
        "SLURM_PROTOCOL_VERSION",
        "PROLOG_FLAG_.*",
        "SLURM_EXTERN_CONT",
        "SLURM_BATCH_SCRIPT",
        "ADMIN_SET_LIMIT",
        "IS_SLURMCTLD",
        "WHOLE_NODE_.*",
        "TRES_STR_CALC",
    ],
};

/// Any daemon: libslurmfull's bitstrings and memory, from internal headers.
const DAEMONS: Allow = Allow {
    types: &[],
    functions: &[
        "bit_alloc",
        "bit_set",
        "bit_clear",
        // A function in 22.05, a macro for slurm_bit_test in 24.11.
        "bit_test",
        "slurm_bit_test",
        "bit_size",
        "bit_set_count",
        "bit_ffs",
        "bit_not",
        "bit_or",
        "bit_copy",
        "slurm_bit_free",
        "bitmap2node_name",
        "slurm_xfree",
        "xstrdup",
    ],
    vars: &[],
};

/// A task plugin in slurmstepd: what it sees of its step (and, in slurmd,
/// of the launch requests), slurmstepd's configuration (`slurmd_conf_t`,
/// whose global `conf` lives in the slurmstepd executable and is resolved
/// at run time, so it is no var here), the stepd API of libslurmfull that
/// lists the node's steps and their processes, and the list functions that
/// walk what it returns.
const STEPD: Allow = Allow {
    types: &[
        "stepd_step_rec_t",
        "stepd_step_task_info_t",
        "slurmd_conf_t",
        "step_loc_t",
        "slurmstepd_state_t",
        "slurm_step_id_t",
        "batch_job_launch_msg_t",
        "launch_tasks_request_msg_t",
    ],
    functions: &[
        "stepd_available",
        "stepd_connect",
        "stepd_list_pids",
        "stepd_state",
        "list_iterator_create",
        "list_next",
        "list_iterator_destroy",
        "list_destroy",
    ],
    vars: &["SLURM_EXTERN_CONT", "SLURM_BATCH_SCRIPT", "SLURM_INTERACTIVE_STEP", "SLURM_PENDING_STEP"],
};

/// Our C helpers for slurmctld (fairshare.c, job_checks.c), compiled by gcc
/// against the same headers as the bindings.
fn compile_helpers(tree: &Tree) {
    cc::Build::new()
        .file("fairshare.c")
        .file("job_checks.c")
        .includes(tree.includes())
        .include(".")
        .compile("slurm_malleable_helpers");
}

fn compile_layout_probe(tree: &Tree, stepd: bool) {
    let mut build = cc::Build::new();
    build.file("layout_probe.c").includes(tree.includes()).include(".").warnings(false);
    if stepd {
        build.define("MALLEABLE_STEPD", None);
    }
    build.compile("slurm_layout_probe");
}
