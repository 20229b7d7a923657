//! `cargo xtask compose up|down|exec`: a whole Slurm site in docker-compose
//! (testcluster::compose), with our plugins installed, left running for a
//! person to use; its files under target/compose/NAME.

use std::path::PathBuf;
use testcluster::compose::{site, Site, SiteSpec};

use provision::HOST_RELEASE;
use testcluster::plugins::plugin_dir_for;

use crate::{repo_root, Result};

pub const USAGE: &str = "usage: cargo xtask compose <command>
  up [--name NAME] [--nodes N] [--slurm VERSION] [--stock] [--strategy S] [--set KEY=VALUE]...
     [--malleable KEY=VALUE]...
                       build the images (cached), start the site NAME (malleable) with N compute
                       hosts (8), Slurm VERSION (22.05 on bookworm, 24.11 on trixie), malleable.conf's
                       Strategy=S (mtct-backfill); --stock: none of our plugins (sched/backfill, no
                       job_submit, nothing built); --set: a slurm.conf key (PartitionName= replaces
                       the partition line); --malleable: a malleable.conf key (e.g. PowerCorridor=300-600)
  down [--name NAME]   stop it and remove its containers and network
  exec [--name NAME] [--user USER] HOST -- CMD...
                       run CMD on HOST (login, slurmctld, c1, ...) as USER (root), passing its
                       output and exit code";

fn root() -> PathBuf {
    repo_root().join("target/compose")
}

fn name_value(flag: &str, v: Option<&String>) -> Result<String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') || v.starts_with('-') {
        return Err(format!("{flag} {v}: expected letters, digits and '-', not first"));
    }
    Ok(v.clone())
}

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("up") => up(&args[1..]),
        Some("down") => {
            let mut name = "malleable".to_string();
            let mut it = args[1..].iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "--name" => name = name_value("--name", it.next())?,
                    other => return Err(format!("compose down: unknown option '{other}'\n{USAGE}")),
                }
            }
            let dir = Site::dir_of(&root(), &name);
            if !dir.join("docker-compose.yml").exists() {
                return Err(format!("no site '{name}' (no {})", dir.join("docker-compose.yml").display()));
            }
            Site::down_in(&name, &dir);
            println!("site '{name}' is down");
            Ok(())
        }
        Some("exec") => exec(&args[1..]),
        _ => Err(USAGE.to_string()),
    }
}

fn up(args: &[String]) -> Result<()> {
    let mut name = "malleable".to_string();
    let mut nodes = 8;
    let mut slurm = HOST_RELEASE.to_string();
    let mut stock = false;
    let mut strategy = None;
    let mut set = Vec::new();
    let mut malleable = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--name" => name = name_value("--name", it.next())?,
            "--nodes" => nodes = crate::whole("--nodes", it.next(), 1, 32)?,
            "--slurm" => slurm = it.next().ok_or("--slurm needs a version, e.g. 24.11")?.clone(),
            "--stock" => stock = true,
            "--strategy" => {
                let v = it.next().ok_or("--strategy needs a value")?;
                malleable_core::StrategyChoice::parse(v).map_err(|e| format!("--strategy {v}: {e}"))?;
                strategy = Some(v.clone());
            }
            "--set" => {
                let v = it.next().ok_or("--set needs KEY=VALUE")?;
                let (k, val) = v.split_once('=').ok_or_else(|| format!("--set {v}: expected KEY=VALUE"))?;
                set.push((k.to_string(), val.to_string()));
            }
            "--malleable" => {
                let v = it.next().ok_or("--malleable needs KEY=VALUE")?;
                let (k, val) = v.split_once('=').ok_or_else(|| format!("--malleable {v}: expected KEY=VALUE"))?;
                malleable.push((k.to_string(), val.to_string()));
            }
            other => return Err(format!("compose up: unknown option '{other}'\n{USAGE}")),
        }
    }
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
    let staged =
        if stock { plugin_dir_for(&repo_root(), &slurm) } else { provision::build::build(&repo_root(), &slurm)? };
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

fn exec(args: &[String]) -> Result<()> {
    let mut name = "malleable".to_string();
    let mut user = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--name" => {
                name = name_value("--name", args.get(i + 1))?;
                i += 2;
            }
            "--user" => {
                user = Some(name_value("--user", args.get(i + 1))?);
                i += 2;
            }
            _ => break,
        }
    }
    let host = args.get(i).ok_or_else(|| format!("compose exec: which host?\n{USAGE}"))?;
    if args.get(i + 1).map(String::as_str) != Some("--") || args.len() < i + 3 {
        return Err(format!("compose exec: expected HOST -- CMD...\n{USAGE}"));
    }
    let cmd = &args[i + 2..];
    let status = site::exec_in(&name, user.as_deref(), host, cmd)
        .status()
        .map_err(|e| format!("cannot run docker exec: {e}"))?;
    // The command's own exit code is ours.
    std::process::exit(status.code().unwrap_or(1));
}
