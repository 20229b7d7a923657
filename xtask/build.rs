//! xtask links the simulator, whose power strategy links CBC (Debian's
//! coinor-libcbc-dev): on a new machine that library is missing before xtask
//! could install it, so `cargo xtask ...` would fail to link. This installs
//! that one package first (as root, with apt-get), the rest being xtask's job.

use std::path::Path;
use std::process::Command;

const LIB: &str = "/usr/lib/x86_64-linux-gnu/libCbcSolver.so";
const PACKAGE: &str = "coinor-libcbc-dev";

fn main() {
    println!("cargo:rerun-if-changed={LIB}");
    if Path::new(LIB).exists() {
        return;
    }
    let apt = |args: &[&str]| {
        Command::new("apt-get").env("DEBIAN_FRONTEND", "noninteractive").args(args).status().is_ok_and(|s| s.success())
    };
    if !(apt(&["update", "-qq"]) && apt(&["install", "-y", "-qq", "--no-install-recommends", PACKAGE])) {
        println!(
            "cargo:warning=xtask needs {PACKAGE} ({LIB} is missing) and could not install it: \
             run `apt-get install {PACKAGE}` as root"
        );
    }
}
