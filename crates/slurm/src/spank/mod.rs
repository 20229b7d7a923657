//! SPANK plugins (loaded by srun, sbatch, salloc, slurmd and slurmstepd
//! through plugstack.conf): the room for the `Plugin` trait, the
//! `spank_plugin!` export macro built on `plugin_header!`, option
//! registration and the job-control environment. It needs only Slurm's
//! public headers (slurm-sys's `spank` feature), so a SPANK plugin builds
//! without a configured source tree.
