//! The runtime's C side, staged for jobs: libmalleable_rt.so and its
//! header beside the commands in target/plugins/bin, and the C example
//! (crates/malleable-rt/examples/c/mall_stencil.c) built against them as
//! mall-stencil-c, which finds the library beside itself (rpath $ORIGIN).

use std::path::Path;
use std::process::Command;

use testcluster::plugins::tool_dir;
use testcluster::process::run;

use crate::Result;

/// What cc is given beyond the files: C99, every warning an error.
const CFLAGS: &[&str] = &["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"];

/// Stage the library and the header, then compile and stage the example.
/// Needs target/release/libmalleable_rt.so (`cargo build --release -p malleable-rt`).
pub fn build(root: &Path) -> Result<()> {
    build_into(&root.join("target/release"), &tool_dir(root), root, Command::new("cc"))
}

/// As [`build`], from the cargo output dir `release` into `bin`, with `cc`
/// the compiler command to add the arguments to (plain `cc`, or `docker
/// run ... cc` in another release's build image: the paths are the same there).
pub fn build_into(release: &Path, bin: &Path, root: &Path, mut cc: Command) -> Result<()> {
    let crate_dir = root.join("crates/malleable-rt");
    std::fs::create_dir_all(bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    stage(&release.join("libmalleable_rt.so"), &bin.join("libmalleable_rt.so"))?;
    stage(&crate_dir.join("include/malleable_rt.h"), &bin.join("malleable_rt.h"))?;
    // Built under a temporary name and renamed, as `stage` does.
    let tmp = bin.join(".mall-stencil-c.tmp");
    cc.args(CFLAGS)
        .arg("-I")
        .arg(bin)
        .arg(crate_dir.join("examples/c/mall_stencil.c"))
        .arg("-L")
        .arg(bin)
        .arg("-lmalleable_rt")
        // $ORIGIN is the binary's own directory, whatever the working one.
        .arg("-Wl,-rpath,$ORIGIN")
        .arg("-o")
        .arg(&tmp);
    run(&mut cc).map_err(|e| format!("building the C example: {e}"))?;
    std::fs::rename(&tmp, bin.join("mall-stencil-c")).map_err(|e| e.to_string())
}

/// Copy to a temporary name and rename, so that a job running the old
/// file is not disturbed.
pub fn stage(from: &Path, to: &Path) -> Result<()> {
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = to.with_file_name(format!(".{name}.tmp"));
    std::fs::copy(from, &tmp).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    std::fs::rename(&tmp, to).map_err(|e| e.to_string())
}
