//! The import rules of docs/architecture.md, checked on the sources:
//! - which workspace crate may depend on which (the model on none of ours,
//!   the core on the model only, no plugin on the simulator or the test
//!   crates, ...), read from each crate's Cargo.toml;
//! - `unsafe` only in slurm-sys, slurm and the runtime's C ABI: the
//!   compiler refuses it elsewhere (the workspace's `unsafe_code = "deny"`);
//!   checked here is what it cannot see, that every crate but slurm-sys
//!   takes the workspace's lints and that only slurm's lib.rs and
//!   malleable-rt's (for its src/c_abi.rs) allow `unsafe_code`;
//! - inside malleable-core, no strategy imports another strategy or the
//!   registry, and no module imports one that (through others) imports it
//!   back;
//! - no command file of xtask imports another command file, and no
//!   evaluation run of cluster-eval (`runs/`) another run: what they share
//!   sits in a module of its own (cluster-eval's `runs::common`; what
//!   `cargo xtask test` runs is the test-tiers crate).
//!
//! `cargo xtask test` runs [`check`] before the tests, and the unit tests
//! below run it on the tree too, so a plain `cargo test` catches a broken rule.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Each workspace crate and the workspace crates it may depend on (normal
/// and build dependencies). A crate missing here is an error: a new crate
/// gets its line when it is added.
const ALLOWED: &[(&str, &[&str])] = &[
    ("malleable-model", &[]),
    ("malleable-core", &["malleable-model"]),
    ("slurm-sys", &[]),
    ("slurm", &["slurm-sys"]),
    ("malleable-ctld", &["malleable-model", "malleable-core", "slurm"]),
    ("sched-malleable", &["malleable-ctld", "slurm"]),
    ("select-natural", &["malleable-ctld", "slurm"]),
    ("task-drom", &["malleable-model", "slurm"]),
    ("spank-malleable", &["malleable-model", "slurm"]),
    ("job-submit-malleable", &["malleable-model", "slurm"]),
    ("malleable-sim", &["malleable-model", "malleable-core"]),
    ("malleable-rt", &[]),
    ("mall-run", &["malleable-model", "malleable-rt", "slurm"]),
    ("mall-example", &["malleable-rt"]),
    ("provision", &[]),
    ("import-rules", &[]),
    ("test-tiers", &["provision", "testcluster", "import-rules"]),
    ("testcluster", &["provision", "malleable-model"]),
    ("cluster-tests", &["testcluster", "provision", "slurm", "malleable-model"]),
    ("cluster-eval", &["testcluster", "malleable-model", "malleable-core", "malleable-sim"]),
    (
        "xtask",
        &["provision", "testcluster", "cluster-eval", "cluster-tests", "malleable-sim", "malleable-core", "test-tiers"],
    ),
];

/// Dev-dependencies a test may take beyond the above.
const ALLOWED_FOR_TESTS: &[(&str, &[&str])] = &[
    // The replay test: a pass sequence the simulator recorded, decided
    // again as the controller asks it (agent/replay_tests.rs).
    ("malleable-ctld", &["malleable-sim"]),
];

/// The crate that takes no workspace lints: bindgen's raw bindings.
const NO_WORKSPACE_LINTS: &[&str] = &["slurm-sys"];

/// The files that may allow `unsafe_code` (crate, path in the crate): the
/// safe layer as a whole, and malleable-rt for its C ABI module.
const UNSAFE_ALLOWED_IN: &[(&str, &str)] = &[("slurm", "src/lib.rs"), ("malleable-rt", "src/lib.rs")];

/// xtask's command files: each is one `cargo xtask` command (main.rs
/// dispatches them and is no command file; cli.rs, the arguments, is
/// shared; `cargo xtask test` is the test-tiers crate).
const XTASK_COMMANDS: &[&str] = &["compose", "demo", "slurm_tests"];

/// Every broken rule, said as what to fix; `Ok` when none is.
pub fn check(root: &Path) -> Result<(), Vec<String>> {
    let mut broken = Vec::new();
    let crates = workspace_crates(root);
    if crates.is_empty() {
        broken.push(format!("no crates found under {}", root.display()));
    }
    let names: BTreeSet<&str> = crates.iter().map(|(n, _)| n.as_str()).collect();
    for (name, dir) in &crates {
        broken.extend(dependency_rules(name, dir, &names));
        broken.extend(unsafe_rules(name, dir));
        broken.extend(lints_rules(name, dir));
        broken.extend(circle_rules(name, dir));
    }
    broken.extend(core_rules(&root.join("crates/malleable-core/src")));
    broken.extend(command_rules("xtask", &module_graph(&root.join("xtask/src"), "main.rs"), xtask_command));
    broken.extend(command_rules(
        "cluster-eval",
        &module_graph(&root.join("crates/cluster-eval/src"), "lib.rs"),
        eval_run,
    ));
    if broken.is_empty() {
        Ok(())
    } else {
        Err(broken)
    }
}

/// (package name, directory) of every member: the folders of crates/ and xtask.
fn workspace_crates(root: &Path) -> Vec<(String, PathBuf)> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.join("Cargo.toml").is_file()).collect())
        .unwrap_or_default();
    dirs.push(root.join("xtask"));
    dirs.sort();
    dirs.into_iter()
        .filter_map(|d| {
            let text = fs::read_to_string(d.join("Cargo.toml")).ok()?;
            let name = text.lines().find_map(|l| l.strip_prefix("name = "))?.trim_matches('"').to_string();
            Some((name, d))
        })
        .collect()
}

/// The workspace crates a manifest lists in sections whose name `wanted` accepts.
fn manifest_deps(manifest: &str, workspace: &BTreeSet<&str>, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let mut section = String::new();
    let mut deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        if !wanted(&section) {
            continue;
        }
        let key = line.split(['=', '.']).next().unwrap_or("").trim();
        if workspace.contains(key) {
            deps.push(key.to_string());
        }
    }
    deps
}

fn dependency_rules(name: &str, dir: &Path, workspace: &BTreeSet<&str>) -> Vec<String> {
    let Ok(manifest) = fs::read_to_string(dir.join("Cargo.toml")) else {
        return vec![format!("{}: cannot read Cargo.toml", dir.display())];
    };
    let Some(&(_, allowed)) = ALLOWED.iter().find(|(n, _)| *n == name) else {
        return vec![format!(
            "crate {name} is not in the import rules: give it a line in crates/import-rules/src/lib.rs"
        )];
    };
    let mut broken = Vec::new();
    let normal = manifest_deps(&manifest, workspace, |s| s == "dependencies" || s == "build-dependencies");
    for dep in normal {
        if !allowed.contains(&dep.as_str()) {
            broken.push(format!("{name} depends on {dep}, which the import rules do not allow"));
        }
    }
    let for_tests = ALLOWED_FOR_TESTS.iter().find(|(n, _)| *n == name).map_or(&[][..], |(_, a)| a);
    for dep in manifest_deps(&manifest, workspace, |s| s == "dev-dependencies") {
        if !allowed.contains(&dep.as_str()) && !for_tests.contains(&dep.as_str()) {
            broken.push(format!("{name}'s tests depend on {dep}, which the import rules do not allow"));
        }
    }
    broken
}

/// A line of Rust with its comment and the text of its string literals
/// taken out, so that a word in either is not read as code.
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_string => {
                chars.next();
            }
            '"' => in_string = !in_string,
            '/' if !in_string && chars.peek() == Some(&'/') => break,
            _ if !in_string => out.push(c),
            _ => {}
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() && name != "target" {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Each `allow(unsafe_code)` of crate `name` (in `dir`) outside the files
/// allowed to hold one: `file:line`, said as what to fix.
fn unsafe_rules(name: &str, dir: &Path) -> Vec<String> {
    let allowed: Vec<PathBuf> =
        UNSAFE_ALLOWED_IN.iter().filter(|(n, _)| *n == name).map(|(_, file)| dir.join(file)).collect();
    let mut found = Vec::new();
    for file in rust_files(dir) {
        if allowed.contains(&file) {
            continue;
        }
        let Ok(text) = fs::read_to_string(&file) else { continue };
        for (i, line) in text.lines().enumerate() {
            let code: String = code_of(line).split_whitespace().collect();
            if code.contains("allow(unsafe_code)") || code.contains("expect(unsafe_code)") {
                found.push(format!(
                    "{}:{}: allows unsafe_code outside slurm and malleable-rt's C ABI \
                     (put it in the safe layer, with a SAFETY line)",
                    file.display(),
                    i + 1
                ));
            }
        }
    }
    found
}

/// Crate `name` takes the workspace's lints (`[lints] workspace = true`),
/// which deny `unsafe` code, unless it is the raw bindings.
fn lints_rules(name: &str, dir: &Path) -> Vec<String> {
    if NO_WORKSPACE_LINTS.contains(&name) {
        return Vec::new();
    }
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let mut section = "";
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[lints]" && line.split_whitespace().collect::<String>() == "workspace=true" {
            return Vec::new();
        }
    }
    vec![format!("{name} does not take the workspace's lints: add `[lints]` with `workspace = true` to its Cargo.toml")]
}

/// A core module's name from its file: `strategies/power/lp.rs` is
/// `strategies::power::lp`, `blocks/mod.rs` is `blocks`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The modules a file's code names through `crate::`, `self::` or `super::`,
/// each resolved to the longest module that exists. `code` is the file's
/// lines without comments and strings; an inline `mod name {` (a test
/// module) adds a level for `self` and `super` until its brace closes.
fn references(module: &str, code: &[String], modules: &BTreeSet<String>) -> BTreeSet<String> {
    let file_level: Vec<String> =
        if module.is_empty() { vec![] } else { module.split("::").map(String::from).collect() };
    let mut inline: Vec<(String, i64)> = Vec::new();
    let mut depth: i64 = 0;
    let mut found = BTreeSet::new();
    for line in code {
        let words: Vec<&str> = line.split_whitespace().collect();
        let opens_module = match words.as_slice() {
            ["mod", name, "{", ..] | ["pub", "mod", name, "{", ..] => Some(name.to_string()),
            _ => None,
        };
        let own: Vec<String> = file_level.iter().cloned().chain(inline.iter().map(|(n, _)| n.clone())).collect();
        for t in line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).filter(|t| t.contains("::")) {
            if let Some(target) = resolve(t, &own, modules) {
                if target != module {
                    found.insert(target);
                }
            }
        }
        if let Some(name) = opens_module {
            inline.push((name, depth));
        }
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        while inline.last().is_some_and(|&(_, at)| depth <= at) {
            inline.pop();
        }
    }
    found
}

/// The module a path names, seen from module `own`: the longest prefix of
/// it that is a module of the crate, or `None` for a path outside it.
fn resolve(path: &str, own: &[String], modules: &BTreeSet<String>) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<&str> = match parts.first().copied() {
        Some("crate") => vec![],
        Some("self") => own.iter().map(String::as_str).collect(),
        Some("super") => {
            let mut b: Vec<&str> = own.iter().map(String::as_str).collect();
            while parts.first() == Some(&"super") {
                parts.remove(0);
                b.pop();
            }
            parts.insert(0, "super");
            b
        }
        // A path relative to this module, through a child it declares.
        Some(first)
            if modules.contains(&own.iter().map(String::as_str).chain([first]).collect::<Vec<_>>().join("::")) =>
        {
            parts.insert(0, "self");
            own.iter().map(String::as_str).collect()
        }
        _ => return None,
    };
    parts.remove(0);
    base.extend(parts);
    // Inline modules are not files: the nearest enclosing file module counts.
    (0..=base.len()).rev().map(|n| base[..n].join("::")).find(|m| modules.contains(m))
}

/// Code with each path group written out path by path: `super::{a, b::{c,
/// d}}` as `super::a, super::b::c, super::b::d` (a group names its items,
/// not the module before it), the lines a group spanned kept as empty lines.
fn expand_groups(code: &str) -> String {
    let Some(at) = code.find("::{") else { return code.to_string() };
    let head_start = code[..at].rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(0, |i| i + 1);
    let prefix = &code[head_start..at];
    let open = at + 2;
    let mut depth = 0;
    let Some(close) = code[open..].char_indices().find_map(|(i, c)| {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        (depth == 0).then_some(open + i)
    }) else {
        return code.to_string();
    };
    let inner = &code[open + 1..close];
    // Items at the group's own level (a nested group's commas are its own).
    let mut items = Vec::new();
    let (mut level, mut from) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => level += 1,
            '}' => level -= 1,
            ',' if level == 0 => {
                items.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[from..]);
    let written: Vec<String> = items
        .iter()
        .map(|i| i.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|i| !i.is_empty())
        .map(|i| expand_groups(&format!("{prefix}::{i}")))
        .collect();
    let lines = code[head_start..=close].matches('\n').count();
    format!("{}{}{}{}", &code[..head_start], written.join(", "), "\n".repeat(lines), expand_groups(&code[close + 1..]))
}

/// The import graph of malleable-core's modules (`lib` left out: it only
/// declares and re-exports), from each file's code outside comments and strings.
fn core_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    module_graph(src, "lib.rs")
}

/// The import graph of a crate's modules under `src`, its root file (`lib.rs`
/// or `main.rs`, which declares the modules) left out.
fn module_graph(src: &Path, root_file: &str) -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<PathBuf> =
        rust_files(src).into_iter().filter(|f| f.strip_prefix(src).is_ok_and(|r| r != Path::new(root_file))).collect();
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    files
        .iter()
        .map(|f| {
            let module = module_of(src, f);
            let code: Vec<String> = fs::read_to_string(f).unwrap_or_default().lines().map(code_of).collect();
            let code: Vec<String> = expand_groups(&code.join("\n")).lines().map(String::from).collect();
            let refs = references(&module, &code, &modules);
            (module, refs)
        })
        .collect()
}

fn core_rules(src: &Path) -> Vec<String> {
    let graph = core_graph(src);
    if graph.is_empty() {
        return vec![format!("no modules found in {}", src.display())];
    }
    let mut broken = Vec::new();
    // A strategy (a file or folder in strategies/) names no other strategy
    // and not the registry.
    let strategy_of =
        |m: &str| m.strip_prefix("strategies::").map(|rest| rest.split("::").next().unwrap_or(rest).to_string());
    for (m, refs) in &graph {
        let Some(own) = strategy_of(m) else { continue };
        for r in refs {
            if r == "strategies" {
                broken.push(format!("malleable-core: {m} imports the registry (strategies/mod.rs)"));
            } else if let Some(other) = strategy_of(r) {
                if other != own {
                    broken.push(format!("malleable-core: strategy {m} imports strategy {r}; share it through blocks/"));
                }
            }
        }
    }
    broken
}

/// The command an xtask module belongs to (`demo`, or `x` for a submodule
/// `x::y` of a command `x`), if it is one.
fn xtask_command(module: &str) -> Option<String> {
    let top = module.split("::").next().unwrap_or(module);
    XTASK_COMMANDS.contains(&top).then(|| top.to_string())
}

/// The evaluation run a cluster-eval module is (`runs::soak`), if it is one:
/// every module under `runs` but `runs::common`, what they share.
fn eval_run(module: &str) -> Option<String> {
    let rest = module.strip_prefix("runs::")?;
    let run = rest.split("::").next().unwrap_or(rest);
    (run != "common").then(|| format!("runs::{run}"))
}

/// Each import of one command (or run), as `command_of` names them, by another.
fn command_rules(
    krate: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    command_of: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut broken = Vec::new();
    for (m, refs) in graph {
        let Some(own) = command_of(m) else { continue };
        for r in refs {
            if command_of(r).is_some_and(|other| other != own) {
                broken.push(format!("{krate}: {m} imports {r}, another command; share it through a module of its own"));
            }
        }
    }
    broken
}

/// Each import circle among a crate's modules (a parent and its child
/// counted as any two), from its library's root, else its program's.
fn circle_rules(name: &str, dir: &Path) -> Vec<String> {
    let src = dir.join("src");
    let root = if src.join("lib.rs").is_file() { "lib.rs" } else { "main.rs" };
    cycles(&module_graph(&src, root))
        .into_iter()
        .map(|c| format!("{name}: import circle {}; move what both use into a module of its own", c.join(" -> ")))
        .collect()
}

/// Each import circle, once, as the modules around it.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn walk<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        found: &mut Vec<Vec<String>>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            let mut circle: Vec<String> = path[i..].iter().map(|s| s.to_string()).collect();
            circle.push(m.to_string());
            found.push(circle);
            return;
        }
        if done.contains(m) {
            return;
        }
        path.push(m);
        for next in graph.get(m).into_iter().flatten() {
            walk(next, graph, path, done, found);
        }
        path.pop();
        done.insert(m);
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        walk(m, graph, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        edges.iter().map(|(m, to)| (m.to_string(), to.iter().map(|s| s.to_string()).collect())).collect()
    }

    #[test]
    fn the_tree_follows_the_rules() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap();
        if let Err(broken) = check(root) {
            panic!("import rules broken:\n  {}", broken.join("\n  "));
        }
        // Not vacuous: the core's graph has the rooms and their edges.
        let g = core_graph(&root.join("crates/malleable-core/src"));
        assert!(g["strategies::easy"].contains("blocks::backfill"), "{g:?}");
        assert!(g["strategies::power"].contains("strategies::power::lp"), "{g:?}");
        assert!(g["strategies"].contains("strategies::power"), "{g:?}");
        // The runs' rule sees their imports of the shared module.
        let g = module_graph(&root.join("crates/cluster-eval/src"), "lib.rs");
        assert!(g["runs::bench_ipsched"].contains("runs::common"), "{g:?}");
    }

    #[test]
    fn a_group_names_its_items_not_the_module_before_it() {
        assert_eq!(expand_groups("use super::{files, image};"), "use super::files, super::image;");
        assert_eq!(
            expand_groups("use crate::a::{\n    b::{c, d},\n    e,\n};\nx"),
            "use crate::a::b::c, crate::a::b::d, crate::a::e\n\n\n;\nx"
        );
        assert_eq!(expand_groups("use a::{b}; use c::{d, e};"), "use a::b; use c::d, c::e;");
        assert_eq!(expand_groups("no groups"), "no groups");
        let modules: BTreeSet<String> =
            ["compose", "compose::files", "compose::site"].iter().map(|s| s.to_string()).collect();
        let code: Vec<String> = expand_groups("use super::{files, site::Site};").lines().map(String::from).collect();
        let r = references("compose::image", &code, &modules);
        assert_eq!(r, ["compose::files", "compose::site"].iter().map(|s| s.to_string()).collect());
    }

    #[test]
    fn a_circle_inside_a_crate_is_refused_a_parent_and_its_child_too() {
        let dir = std::env::temp_dir().join(format!("arch-circle-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src/hub")).unwrap();
        fs::write(dir.join("src/lib.rs"), "pub mod hub;").unwrap();
        fs::write(dir.join("src/hub/mod.rs"), "mod bound;\npub struct Rules;\nfn f() -> bound::Bound { todo!() }")
            .unwrap();
        fs::write(dir.join("src/hub/bound.rs"), "use super::Rules;\npub struct Bound;").unwrap();
        assert_eq!(
            circle_rules("mall-run", &dir),
            vec!["mall-run: import circle hub -> hub::bound -> hub; move what both use into a module of its own"]
        );
        // The shared type in a room of its own: no circle.
        fs::write(dir.join("src/hub/mod.rs"), "mod bound;\nmod io;\nfn f() -> bound::Bound { todo!() }").unwrap();
        fs::write(dir.join("src/hub/io.rs"), "pub struct Rules;").unwrap();
        fs::write(dir.join("src/hub/bound.rs"), "use super::io::Rules;\npub struct Bound;").unwrap();
        assert!(circle_rules("mall-run", &dir).is_empty());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn circles_and_sibling_imports_are_found() {
        let g = graph(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"]), ("d", &["a"])]);
        assert_eq!(cycles(&g), vec![vec!["a", "b", "c", "a"]]);
        assert!(cycles(&graph(&[("a", &["b"]), ("b", &[]), ("c", &["a", "b"])])).is_empty());
    }

    #[test]
    fn references_resolve_crate_self_and_super() {
        let modules: BTreeSet<String> =
            ["blocks", "blocks::queue", "strategies", "strategies::power", "strategies::power::lp", "strategies::easy"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let code: Vec<String> = [
            "use crate::blocks::queue::{runnable_queue, end_on};",
            "use self::lp::solve;",
            "let x = super::super::blocks::queue::f();",
            "mod tests {",
            "    use super::*;",
            "    use super::super::easy::x;",
            "}",
            "use super::easy::y;",
        ]
        .iter()
        .map(|l| code_of(l))
        .collect();
        let r = references("strategies::power", &code, &modules);
        let want = ["blocks::queue", "strategies::easy", "strategies::power::lp"];
        assert_eq!(r, want.iter().map(|s| s.to_string()).collect());
        // Inside the test module, super is the file's own module: only the
        // explicit super::super reaches the sibling.
        let r = references("strategies::power", &code[3..7], &modules);
        assert_eq!(r, ["strategies::easy"].iter().map(|s| s.to_string()).collect());
        // What a comment or a string says is not code.
        assert_eq!(code_of(r#"let s = "crate::strategies::easy"; // use crate::blocks"#), "let s = ; ");
    }

    #[test]
    fn a_sibling_strategy_import_is_refused() {
        let dir = std::env::temp_dir().join(format!("arch-core-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("strategies")).unwrap();
        fs::create_dir_all(dir.join("blocks")).unwrap();
        fs::write(dir.join("blocks/mod.rs"), "pub mod pool;").unwrap();
        fs::write(dir.join("blocks/pool.rs"), "").unwrap();
        fs::write(dir.join("strategies/mod.rs"), "pub mod a; pub mod b;").unwrap();
        fs::write(dir.join("strategies/a.rs"), "use crate::strategies::b::helper;\nuse crate::blocks::pool::X;")
            .unwrap();
        fs::write(dir.join("strategies/b.rs"), "use crate::strategies::Registry;").unwrap();
        let broken = core_rules(&dir);
        assert_eq!(
            broken,
            vec![
                "malleable-core: strategy strategies::a imports strategy strategies::b; share it through blocks/",
                "malleable-core: strategies::b imports the registry (strategies/mod.rs)",
            ]
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_command_importing_another_is_refused() {
        let dir = std::env::temp_dir().join(format!("arch-commands-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("runs")).unwrap();
        fs::write(dir.join("lib.rs"), "pub mod runs; pub mod records;").unwrap();
        fs::write(dir.join("records.rs"), "").unwrap();
        fs::write(dir.join("runs/mod.rs"), "pub mod common; pub mod soak; pub mod bench;").unwrap();
        fs::write(dir.join("runs/common.rs"), "use crate::records::x;").unwrap();
        fs::write(dir.join("runs/soak.rs"), "use super::common::pass_times;\nuse crate::records::log_time;").unwrap();
        fs::write(dir.join("runs/bench.rs"), "use super::common::x;\nuse crate::runs::soak::pass_times;").unwrap();
        let graph = module_graph(&dir, "lib.rs");
        assert!(graph["runs::soak"].contains("runs::common"), "{graph:?}");
        assert_eq!(
            command_rules("cluster-eval", &graph, eval_run),
            vec!["cluster-eval: runs::bench imports runs::soak, another command; share it through a module of its own"]
        );
        assert_eq!(xtask_command("demo"), Some("demo".into()));
        assert_eq!(xtask_command("setup"), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unsafe_code_is_allowed_only_in_slurm_and_malleable_rt_and_every_crate_takes_the_lints() {
        let dir = std::env::temp_dir().join(format!("arch-unsafe-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::write(
            dir.join("src/lib.rs"),
            "// allow(unsafe_code) in a comment\n#[allow(unsafe_code)]\npub mod c_abi;\n",
        )
        .unwrap();
        fs::write(dir.join("src/c_abi.rs"), "#![ allow( unsafe_code ) ]\nlet s = \"allow(unsafe_code)\";\n").unwrap();
        let at = |file: &str, line: usize| {
            format!(
                "{}:{line}: allows unsafe_code outside slurm and malleable-rt's C ABI \
                 (put it in the safe layer, with a SAFETY line)",
                dir.join(file).display()
            )
        };
        assert_eq!(unsafe_rules("malleable-rt", &dir), vec![at("src/c_abi.rs", 1)]);
        assert_eq!(unsafe_rules("mall-run", &dir), vec![at("src/c_abi.rs", 1), at("src/lib.rs", 2)]);
        fs::write(dir.join("Cargo.toml"), "[package]\nname = \"x\"\n\n[lints]\nworkspace = false\n").unwrap();
        assert_eq!(
            lints_rules("mall-run", &dir),
            vec![
                "mall-run does not take the workspace's lints: add `[lints]` with `workspace = true` to its Cargo.toml"
            ]
        );
        assert!(lints_rules("slurm-sys", &dir).is_empty());
        fs::write(dir.join("Cargo.toml"), "[package]\nname = \"x\"\n\n[lints]\nworkspace = true\n").unwrap();
        assert!(lints_rules("mall-run", &dir).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dependencies_outside_the_rules_are_refused() {
        let workspace: BTreeSet<&str> = ALLOWED.iter().map(|(n, _)| *n).collect();
        let manifest = "[package]\nname = \"malleable-core\"\n\n[dependencies]\nmalleable-model.workspace = true\n\
                        slurm = { workspace = true }\ngood_lp = \"1\"\n\n[dev-dependencies]\nmalleable-sim = { path = \"x\" }\n";
        assert_eq!(manifest_deps(manifest, &workspace, |s| s == "dependencies"), vec!["malleable-model", "slurm"]);
        let dir = std::env::temp_dir().join(format!("arch-deps-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        assert_eq!(
            dependency_rules("malleable-core", &dir, &workspace),
            vec![
                "malleable-core depends on slurm, which the import rules do not allow",
                "malleable-core's tests depend on malleable-sim, which the import rules do not allow",
            ]
        );
        assert_eq!(
            dependency_rules("new-crate", &dir, &workspace),
            vec!["crate new-crate is not in the import rules: give it a line in crates/import-rules/src/lib.rs"]
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
