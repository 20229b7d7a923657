//! `cargo xtask compose up|down|exec`: a whole Slurm site in docker-compose
//! (testcluster::compose), with our plugins installed, left running for a
//! person to use; its files under target/compose/NAME.

use std::path::PathBuf;
use testcluster::compose::{site, Site, SiteSpec};

use testcluster::plugins::plugin_dir_for;

use crate::cli::ComposeCommand;
use crate::{repo_root, Result};

fn root() -> PathBuf {
    repo_root().join("target/compose")
}

pub fn run(c: ComposeCommand) -> Result<()> {
    match c {
        ComposeCommand::Up { which, nodes, slurm, stock, strategy, set, malleable } => {
            let (name, slurm) = (which.name, slurm.or_host().to_string());
            let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
            let mut spec = SiteSpec::new(&name, nodes, cores).slurm(&slurm)?;
            if stock {
                spec = spec.stock();
            }
            if let Some(s) = strategy {
                spec = spec.malleable("Strategy", &s);
            }
            for (k, v) in &set {
                spec = spec.set(k, v);
            }
            for (k, v) in &malleable {
                spec = spec.malleable(k, v);
            }
            provision::apt::ensure(&["debootstrap", "docker-compose"])?;
            // A stock site's image has none of our files: nothing to build.
            let staged = if stock {
                plugin_dir_for(&repo_root(), &slurm)
            } else {
                provision::build::build(&repo_root(), &slurm)?
            };
            let mut site = Site::up(spec, &repo_root(), &staged)?;
            site.keep = true;
            let what = if stock { "stock " } else { "" };
            println!(
                "site '{name}' is up: {what}Slurm {slurm}, {nodes} compute hosts c1..c{nodes}, files in {}",
                site.dir.display()
            );
            println!("  cargo xtask compose exec --name {name} --user alice login -- sinfo");
            println!("  docker-compose -p {name} -f {}/docker-compose.yml ps", site.dir.display());
            Ok(())
        }
        ComposeCommand::Down { which } => {
            let name = which.name;
            let dir = Site::dir_of(&root(), &name);
            if !dir.join("docker-compose.yml").exists() {
                return Err(format!("no site '{name}' (no {})", dir.join("docker-compose.yml").display()));
            }
            Site::down_in(&name, &dir);
            println!("site '{name}' is down");
            Ok(())
        }
        ComposeCommand::Exec { which, user, host, cmd } => {
            let status = site::exec_in(&which.name, user.as_deref(), &host, &cmd)
                .status()
                .map_err(|e| format!("cannot run docker exec: {e}"))?;
            // The command's own exit code is ours.
            std::process::exit(status.code().unwrap_or(1));
        }
    }
}
