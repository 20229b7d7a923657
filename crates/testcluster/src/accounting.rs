//! A cluster's accounting, on this machine as its other daemons are: a
//! MariaDB server of its own (data under the cluster's directory, on a
//! leased loopback port) and slurmdbd, each started and stopped by pid file,
//! and the cluster added to the database before slurmctld first asks.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::process::{pid_alive, read_pid, run, stop_by_pid_file};
use crate::{wait, Result};

/// What a cluster with accounting needs besides Slurm's daemons.
pub const PACKAGES: &[&str] = &["slurmdbd", "mariadb-server"];

/// The database's user for slurmdbd, without a password: the server takes
/// connections on loopback only, and Slurm 22.05's python suite, which
/// dumps and restores the database in auto-config mode, passes a password
/// to mysql as `-p PASS` (which mysql reads as "ask for it", then fails).
const DB_USER: &str = "slurm";
const DB_NAME: &str = "slurm_acct_db";

/// slurmdbd.conf for a cluster in `dir`: slurmdbd on `dbd_port`, MariaDB on
/// `db_port`, both on `addr`; munge through the cluster's own munged.
pub fn slurmdbd_conf(dir: &Path, addr: &str, dbd_port: u16, db_port: u16) -> String {
    let d = dir.display();
    format!(
        "# Written by testcluster: this cluster's slurmdbd.\nAuthType=auth/munge\nAuthInfo=socket={d}/munge/munge.socket\n\
         DbdHost=localhost\nDbdAddr={addr}\nDbdPort={dbd_port}\nSlurmUser=root\nDebugLevel=info\nTrackWCKey=yes\n\
         LogFile={d}/log/slurmdbd.log\nPidFile={d}/run/slurmdbd.pid\nStorageType=accounting_storage/mysql\n\
         StorageHost={addr}\nStoragePort={db_port}\nStorageUser={DB_USER}\nStorageLoc={DB_NAME}\n"
    )
}

/// slurmdbd's user and database, made by MariaDB at its start: slurmdbd
/// would make a missing database itself, but trixie's client library leaves
/// that connection broken (see compose's `mariadb_init`).
fn init_sql() -> String {
    format!(
        "CREATE USER IF NOT EXISTS '{DB_USER}'@'%';\n\
         CREATE DATABASE IF NOT EXISTS {DB_NAME};\nGRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'%';\nFLUSH PRIVILEGES;\n"
    )
}

/// Whether something takes connections on `addr:port`.
fn answers(addr: &str, port: u16) -> bool {
    std::net::TcpStream::connect_timeout(
        &format!("{addr}:{port}").parse().expect("an address and a port"),
        Duration::from_millis(200),
    )
    .is_ok()
}

/// Start MariaDB (its data made on first use) and slurmdbd for the cluster
/// in `dir`, whose slurmdbd.conf is `conf_dir/slurmdbd.conf`, then add the
/// cluster `cluster_name` with sacctmgr.
pub fn start(dir: &Path, conf: &Path, addr: &str, dbd_port: u16, db_port: u16, cluster_name: &str) -> Result<()> {
    let data = dir.join("db");
    let init = dir.join("run/mariadb-init.sql");
    fs::write(&init, init_sql()).map_err(|e| format!("cannot write {}: {e}", init.display()))?;
    if !data.join("mysql").is_dir() {
        fs::create_dir_all(&data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
        let log = fs::File::create(dir.join("log/mariadb-install.log")).map_err(|e| e.to_string())?;
        run(Command::new("mariadb-install-db")
            .args(["--no-defaults", "--user=root", "--skip-test-db", "--auth-root-authentication-method=socket"])
            .arg(format!("--datadir={}", data.display()))
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log))?;
    }
    let pid_file = dir.join("run/mariadbd.pid");
    // mariadbd stays in the foreground: started in a session of its own, so
    // that a test's process group and terminal never reach it, and stopped
    // by its pid file as the others are.
    let mut db = Command::new("mariadbd");
    db.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", dir.join("run/mariadbd.sock").display()))
        .arg(format!("--pid-file={}", pid_file.display()))
        .arg(format!("--log-error={}", dir.join("log/mariadb.log").display()))
        .arg(format!("--init-file={}", init.display()))
        .arg(format!("--bind-address={addr}"))
        .arg(format!("--port={db_port}"))
        // Slurm's accounting schema wants a long lock wait.
        .args(["--user=root", "--skip-name-resolve", "--innodb-lock-wait-timeout=900"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    db.spawn().map_err(|e| format!("cannot start mariadbd: {e}"))?;
    wait::until("MariaDB to take connections", Duration::from_secs(60), || {
        if let Some(pid) = read_pid(&pid_file) {
            if !pid_alive(pid) {
                return Err("mariadbd exited".into());
            }
        }
        Ok(answers(addr, db_port).then_some(()))
    })
    .map_err(|e| format!("{e}\n{}", tail(&dir.join("log/mariadb.log"), 20)))?;
    fs::set_permissions(conf, fs::Permissions::from_mode(0o600)).map_err(|e| e.to_string())?;
    // slurmdbd finds slurmdbd.conf beside the slurm.conf SLURM_CONF names.
    run(Command::new("slurmdbd").env("SLURM_CONF", conf.with_file_name("slurm.conf")))?;
    wait::until("slurmdbd to take connections", Duration::from_secs(60), || {
        if read_pid(&dir.join("run/slurmdbd.pid")).is_some_and(|p| !pid_alive(p)) {
            return Err("slurmdbd exited".into());
        }
        Ok(answers(addr, dbd_port).then_some(()))
    })
    .map_err(|e| format!("{e}\n{}", tail(&dir.join("log/slurmdbd.log"), 20)))?;
    // "Nothing new added" (exit 1) when the database has it already.
    let out = Command::new("sacctmgr")
        .env("SLURM_CONF", conf.with_file_name("slurm.conf"))
        .args(["-i", "add", "cluster", cluster_name])
        .output()
        .map_err(|e| format!("cannot run sacctmgr: {e}"))?;
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && !said.contains("Nothing new added") && !said.contains("already exists") {
        return Err(format!("sacctmgr add cluster {cluster_name} failed: {}", said.trim()));
    }
    Ok(())
}

/// Make the cluster's database and its user again if something dropped them
/// (Slurm's python suite in auto-config mode drops the database when it puts
/// its dump back, and leaves none when there was no dump): slurmdbd would
/// make it itself, and then die on trixie's client library (`init_sql`).
pub fn ensure_database(dir: &Path) -> Result<()> {
    let out = Command::new("mariadb")
        .arg(format!("--socket={}", dir.join("run/mariadbd.sock").display()))
        .args(["-u", "root", "-e", &init_sql()])
        .output()
        .map_err(|e| format!("cannot run mariadb: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("making the accounting database again failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Stop slurmdbd, then MariaDB, of the cluster in `dir`.
pub fn stop(dir: &Path) {
    stop_slurmdbd(dir);
    stop_by_pid_file(&dir.join("run/mariadbd.pid"), "mariadbd");
}

/// Stop the slurmdbd of the cluster in `dir` alone (MariaDB stays).
pub fn stop_slurmdbd(dir: &Path) {
    stop_by_pid_file(&dir.join("run/slurmdbd.pid"), "slurmdbd");
}

fn tail(file: &Path, lines: usize) -> String {
    let text = fs::read_to_string(file).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    format!("---- {} ----\n{}", file.display(), all[all.len().saturating_sub(lines)..].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurmdbd_conf_points_at_the_clusters_own_munge_and_database() {
        let c = slurmdbd_conf(Path::new("/c"), "127.0.0.1", 7001, 7002);
        assert!(c.contains("AuthInfo=socket=/c/munge/munge.socket\n"));
        assert!(c.contains("DbdPort=7001\n"));
        assert!(c.contains("StoragePort=7002\n"));
        assert!(c.contains("PidFile=/c/run/slurmdbd.pid\n"));
        assert!(init_sql().contains(&format!("CREATE DATABASE IF NOT EXISTS {DB_NAME};")));
    }
}
