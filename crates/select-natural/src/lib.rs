//! select/natural (Iserte et al. 2025, section 4.1): nodes are allocated by
//! Slurm's select/linear, as the paper's select/natural was built on it
//! (every select call passes to it), and in slurmctld the malleable
//! controller's agent answers the jobs that ask, at their own sync points,
//! whether to reconfigure, by NATURAL (malleable.conf's `Strategy=natural`,
//! the default here, or `natural-plan`): a job grows into idle nodes, or
//! releases exactly what the first waiting job lacks, and that job gets
//! the highest priority so that the scheduler (sched/backfill, the paper's
//! set-up) starts it on the nodes released. Under sched/malleable, whose
//! own agent answers the questions, it only allocates.

use malleable_ctld::agent::{AgentHandle, Role};
use malleable_ctld::config::{check_answerer_parameters, check_job_submit, Config};
use malleable_ctld::CONF_FILE;
use slurm::ctld::select::SelectPlugin;
use slurm::ctld::{PluginContext, Slurmctld};

/// The plugin in slurmctld: the agent answering beside sched/backfill, or
/// nothing but select/linear under sched/malleable (whose agent answers).
struct NaturalSelect {
    agent: Option<AgentHandle>,
}

/// malleable.conf, checked for answering (`Config::for_answering`), and
/// slurm.conf's settings that growing and shrinking jobs need.
fn read_config(ctx: &PluginContext) -> Result<Config, String> {
    check_answerer_parameters(ctx.scheduler_parameters().as_deref())?;
    check_job_submit(ctx.job_submit_plugins().as_deref())?;
    let path = ctx.conf_path(CONF_FILE);
    let config = Config::load(&path)?.0.for_answering().map_err(|e| format!("{}: {e}", path.display()))?;
    log::info!("read {}: {config}", path.display());
    Ok(config)
}

fn under_sched_malleable(ctx: &PluginContext) -> bool {
    ctx.scheduler_type().as_deref() == Some("sched/malleable")
}

impl SelectPlugin for NaturalSelect {
    fn start(ctx: &PluginContext) -> Result<Self, String> {
        if under_sched_malleable(ctx) {
            log::info!("SchedulerType=sched/malleable answers the jobs' questions: select/natural only allocates");
            return Ok(NaturalSelect { agent: None });
        }
        let agent = AgentHandle::start(Slurmctld::get()?, read_config(ctx)?, Role::Answerer)?;
        Ok(NaturalSelect { agent: Some(agent) })
    }

    fn reconfigure(&mut self, ctx: &PluginContext) -> Result<(), String> {
        if under_sched_malleable(ctx) {
            return Ok(());
        }
        let config = read_config(ctx)?;
        match &self.agent {
            Some(a) => a.reconfigure(config),
            None => self.agent = Some(AgentHandle::start(Slurmctld::get()?, config, Role::Answerer)?),
        }
        Ok(())
    }

    fn stop(self) {
        if let Some(a) = self.agent {
            a.stop();
        }
    }
}

slurm::select_plugin!(
    NaturalSelect,
    name: "Natural node selection: select/linear, and NATURAL's answers to the jobs that ask",
    type: "select/natural",
    id: 130
);
