//! sched/malleable: slurmctld's only scheduler. It reads malleable.conf,
//! checks that slurmctld has handed scheduling over, and runs the policy
//! core's strategy in the malleable controller's agent thread
//! (`malleable_ctld::agent`).

use malleable_ctld::agent::{AgentHandle, Role};
use malleable_ctld::config::{
    check_core_placing, check_core_sharing, check_job_submit, check_scheduler_parameters, parameters_added, Config,
};
use malleable_ctld::CONF_FILE;
use slurm::ctld::{PluginContext, SchedPlugin, Slurmctld};

pub struct Malleable {
    agent: AgentHandle,
}

fn read_config(ctx: &PluginContext) -> Result<Config, String> {
    let path = ctx.conf_path(CONF_FILE);
    let (config, found) = Config::load(&path)?;
    check_job_submit(ctx.job_submit_plugins().as_deref())?;
    let params = ctx.scheduler_parameters();
    let mut missing = check_scheduler_parameters(params.as_deref(), config.power_in_use().is_some())?;
    let sharing = check_core_sharing(
        config.strategy.info,
        ctx.select_type().as_deref(),
        ctx.task_plugin().as_deref(),
        params.as_deref(),
    )?;
    for needed in sharing {
        if !missing.iter().any(|(w, _)| *w == needed.0) {
            missing.push(needed);
        }
    }
    check_core_placing(config.strategy.info, ctx.select_type().as_deref())?;
    // What SchedulerParameters lacks is added (on a reconfigure too, as
    // slurm.conf is read again), so that a site's edit of that line leaves
    // a controller that runs and schedules as it should.
    if !missing.is_empty() {
        let options: Vec<&str> = missing.iter().map(|(w, _)| *w).collect();
        let now = ctx.add_scheduler_parameters(&options);
        log::warn!("{}", parameters_added(params.as_deref(), &missing, &now));
    }
    if found {
        log::info!("read {}: {config}", path.display());
    } else {
        log::info!("{} not found, using the defaults: {config}", path.display());
    }
    for note in config.unused_notes() {
        log::warn!("{}: {note}", path.display());
    }
    Ok(config)
}

impl SchedPlugin for Malleable {
    fn init(ctx: &PluginContext) -> Result<Self, String> {
        let config = read_config(ctx)?;
        let ctld = Slurmctld::get()?;
        Ok(Malleable { agent: AgentHandle::start(ctld, config, Role::Scheduler)? })
    }

    fn reconfig(&mut self, ctx: &PluginContext) -> Result<(), String> {
        let config = read_config(ctx)?;
        self.agent.reconfigure(config);
        Ok(())
    }

    fn fini(self) {
        self.agent.stop();
    }
}

slurm::sched_plugin!(Malleable, name: "Malleable scheduler", type: "sched/malleable");
