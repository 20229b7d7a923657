//! sched/malleable: slurmctld's only scheduler. It reads malleable.conf,
//! checks that slurmctld has handed scheduling over, and runs the policy
//! core's strategy in an agent thread (see `agent`).

pub mod adapt;
pub mod agent;
pub mod config;
pub mod snapshot;

use slurm::ctld::{PluginContext, SchedPlugin, Slurmctld};

use crate::agent::AgentHandle;
use crate::config::{check_scheduler_parameters, Config};

pub const CONF_FILE: &str = "malleable.conf";

pub struct Malleable {
    agent: AgentHandle,
}

fn read_config(ctx: &PluginContext) -> Result<Config, String> {
    if ctx.prolog_contain() {
        return Err("PrologFlags in slurm.conf must not contain Contain: it gives every job an extern step, and \
                    slurmctld refuses to merge a job with a step into another, which is how a job grows. Remove \
                    Contain from PrologFlags"
            .into());
    }
    let path = ctx.conf_path(CONF_FILE);
    let (config, found) = Config::load(&path)?;
    check_scheduler_parameters(ctx.scheduler_parameters().as_deref(), config.power_in_use().is_some())?;
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
        Ok(Malleable { agent: AgentHandle::start(ctld, config)? })
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
