//! A whole Slurm site in docker-compose, as production sites run one: hosts
//! `mariadb`, `slurmdbd`, `slurmctld`, `login` and `c1`..`cN`, each a
//! container with its own name and address, accounting in MariaDB,
//! multifactor priority, QOS, cgroups, GPUs and features on the nodes.
//!
//! [`SiteSpec`] says what site ([`files`] renders its compose file and
//! configs), [`image`] builds the one image every host runs from Debian's
//! packages (cached by a hash of its inputs), and [`Site`] brings it up,
//! runs commands on its hosts and takes it down by its compose project name.

pub mod files;
pub mod image;
pub mod site;
pub mod spec;
pub mod subnet;

pub use site::Site;
pub use spec::SiteSpec;
