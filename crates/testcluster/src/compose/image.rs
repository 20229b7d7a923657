//! The image every host of a compose site runs: its release's base
//! (`provision::image`: Debian's packages, and Slurm) with our plugins and
//! commands added by `docker build`, tagged `malleable-site:HASH` of what
//! went in, so a second `up` with nothing changed builds nothing.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use provision::image::{hex, image_exists};
use sha2::{Digest, Sha256};

use crate::plugins::{PLUGINS, TOOLS};
use crate::process::output_within;
use crate::Result;

/// The site-init script (the entrypoint of every host).
pub const SITE_INIT: &str = include_str!("site-init.sh");

/// The site image: `base` with the staged plugins (in `staged`, with
/// `bin/` beside them: mall-run, mall-example, the C examples, the Python
/// one with its module, and the runtime's library) and site-init; with `staged` None (a stock site),
/// site-init only. Built when its tag is missing.
pub fn site_image(base: &str, staged: Option<&Path>, plugin_dir: &str, work: &Path) -> Result<String> {
    // `work` is the site's own directory: its context is its own.
    let ctx = work.join("image");
    if ctx.exists() {
        std::fs::remove_dir_all(&ctx).map_err(|e| format!("cannot clear {}: {e}", ctx.display()))?;
    }
    // What the image adds, laid out as its root: one COPY, one layer.
    let root = ctx.join("root");
    let mut files: Vec<(PathBuf, String, u32)> = Vec::new();
    if let Some(staged) = staged {
        for (_, _, so) in PLUGINS {
            files.push((staged.join(so), format!("{plugin_dir}/{so}"), 0o644));
        }
        let examples = ["mall-stencil-c", "mall-jacobi-openmpi", "mall-jacobi-mpich", "mall_jacobi_mpi4py.py"];
        for tool in TOOLS.iter().map(|t| t.1).chain(examples) {
            files.push((staged.join("bin").join(tool), format!("/usr/local/bin/{tool}"), 0o755));
        }
        // The Python module beside the mpi4py example, which imports it.
        let module = "malleable_rt.py";
        files.push((staged.join("bin").join(module), format!("/usr/local/bin/{module}"), 0o644));
        // The runtime's library where the loader looks without ldconfig.
        let rt = "/usr/lib/x86_64-linux-gnu/libmalleable_rt.so";
        files.push((staged.join("bin/libmalleable_rt.so"), rt.into(), 0o644));
        files.push((staged.join("bin/malleable_rt.h"), "/usr/local/include/malleable_rt.h".into(), 0o644));
    }
    let mut h = Sha256::new();
    h.update(base);
    for (from, to, mode) in &files {
        let bytes =
            std::fs::read(from).map_err(|e| format!("cannot read {}: {e} (run cargo xtask build)", from.display()))?;
        h.update(format!("{to} {mode:o}"));
        h.update(&bytes);
        put(&root, to, &bytes, *mode)?;
    }
    put(&root, "/usr/local/sbin/site-init", SITE_INIT.as_bytes(), 0o755)?;
    h.update(SITE_INIT);
    let dockerfile = format!("FROM {base}\nCOPY root/ /\n");
    h.update(&dockerfile);
    put(&ctx, "Dockerfile", dockerfile.as_bytes(), 0o644)?;
    let tag = format!("malleable-site:{}", hex(h.finalize()));
    if image_exists(&tag) {
        return Ok(tag);
    }
    let t = Instant::now();
    // A layer of copied files: seconds, unless the Docker daemon hangs.
    output_within(Command::new("docker").args(["build", "-q", "-t", &tag]).arg(&ctx), Duration::from_secs(600))?;
    eprintln!("compose: site image {tag} built in {:.1?}", t.elapsed());
    Ok(tag)
}

/// Write `bytes` at `path` under `root` with `mode` (COPY keeps it).
fn put(root: &Path, path: &str, bytes: &[u8], mode: u32) -> Result<()> {
    let to = root.join(path.trim_start_matches('/'));
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut f = std::fs::File::create(&to).map_err(|e| format!("cannot write {}: {e}", to.display()))?;
    f.write_all(bytes).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())
}
