//! The runtime's C side, staged for jobs: libmalleable_rt.so and its
//! headers beside the commands in target/plugins/bin, and the C examples
//! built against them, which find the library beside themselves (rpath
//! $ORIGIN): mall_stencil.c as mall-stencil-c, and the MPI Jacobi
//! (mall_jacobi_mpi.c) once for each MPI Debian has, as mall-jacobi-openmpi
//! and mall-jacobi-mpich; beside them the Python module over the library
//! and the mpi4py example.

use std::path::Path;
use std::process::Command;

use crate::cmd::run;
use crate::staged::{stage, tool_dir};
use crate::Result;

/// What cc is given beyond the files: C99, every warning an error.
const CFLAGS: &[&str] = &["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"];

/// The MPI example's builds: the staged name and the MPI's compiler
/// wrapper (Debian's alternatives name each MPI's own).
pub const MPI_EXAMPLES: &[(&str, &str)] =
    &[("mall-jacobi-openmpi", "mpicc.openmpi"), ("mall-jacobi-mpich", "mpicc.mpich")];

/// What a bin/ holds: our commands, the runtime's C library and headers,
/// and the C and Python examples.
pub fn staged_tools() -> Vec<&'static str> {
    let mut t: Vec<&str> = crate::staged::TOOLS.iter().map(|t| t.1).collect();
    t.extend(["libmalleable_rt.so", "malleable_rt.h", "malleable_rt_mpi.h", "mall-stencil-c"]);
    t.extend(MPI_EXAMPLES.iter().map(|e| e.0));
    t.extend(PYTHON_EXAMPLE);
    t
}

/// Stage the library and the headers, then compile and stage the examples.
/// Needs target/release/libmalleable_rt.so (`cargo build --release -p malleable-rt`).
pub fn build(root: &Path) -> Result<()> {
    let bin = tool_dir(root);
    build_into(&root.join("target/release"), &bin, root, Command::new("cc"))?;
    build_mpi_into(&bin, root, |name| Command::new(name))
}

/// Stage the MPI header into `bin` and build the MPI example there with
/// each MPI's compiler wrapper, `compiler(name)` the command that runs it
/// (here, or in another release's build image).
pub fn build_mpi_into(bin: &Path, root: &Path, compiler: impl Fn(&str) -> Command) -> Result<()> {
    let crate_dir = root.join("crates/malleable-rt");
    stage(&crate_dir.join("include/malleable_rt_mpi.h"), &bin.join("malleable_rt_mpi.h"))?;
    for (name, mpicc) in MPI_EXAMPLES {
        compile(compiler(mpicc), bin, &crate_dir.join("examples/c/mall_jacobi_mpi.c"), name)?;
    }
    for name in PYTHON_EXAMPLE {
        stage(&crate_dir.join("examples/python").join(name), &bin.join(name))?;
    }
    Ok(())
}

/// The Python runtime module and the mpi4py example, staged beside the
/// library the module loads.
pub const PYTHON_EXAMPLE: &[&str] = &["malleable_rt.py", "mall_jacobi_mpi4py.py"];

/// As [`build`], from the cargo output dir `release` into `bin`, with `cc`
/// the compiler command to add the arguments to (plain `cc`, or `docker
/// run ... cc` in another release's build image: the paths are the same there).
pub fn build_into(release: &Path, bin: &Path, root: &Path, cc: Command) -> Result<()> {
    let crate_dir = root.join("crates/malleable-rt");
    std::fs::create_dir_all(bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    stage(&release.join("libmalleable_rt.so"), &bin.join("libmalleable_rt.so"))?;
    stage(&crate_dir.join("include/malleable_rt.h"), &bin.join("malleable_rt.h"))?;
    compile(cc, bin, &crate_dir.join("examples/c/mall_stencil.c"), "mall-stencil-c")
}

/// Compile `source` with `cc` against the staged library into `bin/name`.
fn compile(mut cc: Command, bin: &Path, source: &Path, name: &str) -> Result<()> {
    // Built under a temporary name and renamed, as `stage` does.
    let tmp = crate::staged::temporary(&bin.join(name));
    cc.args(CFLAGS)
        .arg("-I")
        .arg(bin)
        .arg(source)
        .arg("-L")
        .arg(bin)
        .arg("-lmalleable_rt")
        // $ORIGIN is the binary's own directory, whatever the working one.
        .arg("-Wl,-rpath,$ORIGIN")
        .arg("-o")
        .arg(&tmp);
    run(&mut cc).map_err(|e| format!("building {name}: {e}"))?;
    let to = bin.join(name);
    std::fs::rename(&tmp, &to).map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), to.display()))
}
