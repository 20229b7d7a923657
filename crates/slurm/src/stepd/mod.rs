//! Plugins that run in slurmstepd (a task plugin such as task/drom): the
//! room for the step record's views and the `task_plugin!` export macro,
//! built on `plugin_header!`, over slurm-sys's `stepd` bindings.
