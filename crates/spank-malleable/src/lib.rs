//! spank_malleable.so, loaded through plugstack.conf: the job options of
//! Chadha et al. 2020 (Listing 2) for sbatch, salloc and srun, on the
//! command line and in `#SBATCH` lines: `--min-nodes-invasive=N`,
//! `--max-nodes-invasive=N` (also spelled `-invasic`, as the paper's earlier
//! text has them), `--node-constraints=pof2|even|odd|ncube|none`,
//! `--min-power=W`, `--max-power=W`.
//!
//! Each value is checked as it is read, and their combination once all are
//! read; a bad one stops the command with a message naming the option, the
//! value and what is allowed, before anything is submitted. The options
//! then travel in the job's SPANK environment, where slurmctld keeps them;
//! the controller checks them again at submit (job_submit/malleable), since
//! a client without this plugin could send anything.
//!
//! A heterogeneous job is refused here, in sbatch or salloc, with why, when
//! slurmctld runs sched/malleable: slurmctld (22.05, 24.11) takes one only under
//! sched/backfill and would refuse it with a bare "Requested operation not
//! supported". Beside sched/backfill (select/natural) it goes on, unless
//! it is given malleable options.

use malleable_model::submit_options::{SubmitOptions, OPTIONS};
use parking_lot::Mutex;
use slurm::spank::{controller_scheduler_type, Context, Spank, SpankOption, SpankPlugin};

/// Each option under its name, then each other spelling, in `OPTIONS` order.
const SPELLINGS: &[SpankOption] = &{
    let mut table = [SpankOption { name: "", arg: "", usage: "" }; 8];
    let mut i = 0;
    let mut n = 0;
    while i < OPTIONS.len() {
        let o = OPTIONS[i];
        table[n] = SpankOption { name: o.name, arg: o.arg, usage: o.usage };
        n += 1;
        if let Some(also) = o.also {
            table[n] = SpankOption { name: also, arg: o.arg, usage: o.usage };
            n += 1;
        }
        i += 1;
    }
    assert!(n == table.len(), "SPELLINGS' size is every name and every other spelling");
    table
};

struct Malleable {
    given: Mutex<Given>,
}

#[derive(Default)]
struct Given {
    /// What this command gave, from its environment and command line.
    options: SubmitOptions,
    /// Each option set so far, by the name it was set under.
    seen: Vec<&'static str>,
    /// The ones set on the command line, not inherited (see `inherited`).
    typed: Vec<&'static str>,
    /// How many job components this command has read the options of:
    /// sbatch and salloc call init_post_opt once per component.
    components: u32,
}

/// Why a heterogeneous job is refused before it is sent.
const HETEROGENEOUS: &str = "heterogeneous jobs (components separated by ':' or '#SBATCH hetjob') are not \
                             supported under sched/malleable: slurmctld accepts them only under \
                             sched/backfill; submit the components as separate jobs";

/// Why a heterogeneous job may not be elastic, under any scheduler.
const HETEROGENEOUS_ELASTIC: &str = "the malleable options cannot be given to a heterogeneous job (components \
                                     separated by ':' or '#SBATCH hetjob'): submit the elastic part as a job of its own";

/// Whether this is the first time option `name` is set, to `value`, and the
/// environment holds that value for it: Slurm exports a job's SPANK options
/// to the job's environment and every command started in the job (srun
/// above all) reads them back from there before its command line.
fn inherited(name: &str, value: &str, seen_before: bool) -> bool {
    let var = format!("SLURM_SPANK__SLURM_SPANK_OPTION_malleable_{}", name.replace('-', "_"));
    !seen_before && std::env::var(var).is_ok_and(|v| v == value)
}

impl SpankPlugin for Malleable {
    fn new() -> Self {
        Malleable { given: Mutex::new(Given::default()) }
    }

    fn options() -> &'static [SpankOption] {
        SPELLINGS
    }

    fn option(&self, index: usize, value: Option<&str>, _remote: bool) -> Result<(), String> {
        let name = SPELLINGS[index].name;
        let raw = value.unwrap_or("");
        // A flag has no value; read back from the environment, Slurm hands
        // it over as the text "(null)", which is what it exported.
        let value = if SPELLINGS[index].arg.is_empty() { "" } else { raw };
        let mut g = self.given.lock();
        if !inherited(name, raw, g.seen.contains(&name)) {
            g.typed.push(name);
        }
        g.seen.push(name);
        g.options.set(name, value)
    }

    fn init_post_opt(&self, spank: &Spank, context: Context) -> Result<(), String> {
        let (given, typed, components) = {
            let mut g = self.given.lock();
            g.components += 1;
            (g.options.clone(), g.typed.first().copied(), g.components)
        };
        // A heterogeneous step inside a job (srun with ':' in an
        // allocation) needs no scheduler and may go on.
        let in_a_job = context == Context::Local && std::env::var_os("SLURM_JOB_ID").is_some();
        if components > 1 && context.is_submitting() && !in_a_job {
            // Beside stock sched/backfill (select/natural's set-up) slurmctld
            // takes heterogeneous jobs; when it cannot be asked, it decides.
            let ours = controller_scheduler_type().is_ok_and(|t| t == "sched/malleable");
            if ours {
                return Err(HETEROGENEOUS.into());
            }
            if !given.is_empty() {
                return Err(HETEROGENEOUS_ELASTIC.into());
            }
            return Ok(());
        }
        if given.is_empty() || !context.is_submitting() {
            return Ok(());
        }
        if context == Context::Local {
            if let Ok(job) = std::env::var("SLURM_JOB_ID") {
                // The job's own options, read back from its environment,
                // are not this step's: only options typed for it are refused.
                if let Some(name) = typed {
                    return Err(format!(
                        "--{name}: the malleable options apply to a job, and this srun starts a step of JobId={job}: \
                         give them to the sbatch or salloc that makes the job"
                    ));
                }
                return Ok(());
            }
        }
        // The start size (--nodes) and the partition are checked by the
        // controller, which knows them.
        given.resolve(None)?;
        for (name, value) in given.to_env() {
            spank.job_control_setenv(name, &value)?;
        }
        Ok(())
    }
}

slurm::spank_plugin!(Malleable, name: "malleable");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_is_registered_once() {
        let names: Vec<&str> = SPELLINGS.iter().map(|o| o.name).collect();
        assert_eq!(
            names,
            [
                "min-nodes-invasive",
                "min-nodes-invasic",
                "max-nodes-invasive",
                "max-nodes-invasic",
                "node-constraints",
                "min-power",
                "max-power",
                "malleable-cores"
            ]
        );
        assert!(SPELLINGS.iter().all(|o| !o.usage.is_empty()));
        // Every option takes a value but the one flag.
        let flags: Vec<&str> = SPELLINGS.iter().filter(|o| o.arg.is_empty()).map(|o| o.name).collect();
        assert_eq!(flags, ["malleable-cores"]);
    }

    #[test]
    fn options_are_checked_as_read_and_combined_after() {
        let m = Malleable::new();
        assert!(m.option(0, Some("2"), false).is_ok());
        // Index 3 is the paper's spelling, which the message keeps.
        let e = m.option(3, Some("many"), false).unwrap_err();
        assert!(e.starts_with("--max-nodes-invasic=many is not valid"), "{e}");
        assert!(m.option(3, Some("8"), false).is_ok());
        assert!(m.option(4, Some("pof2"), false).is_ok());
        let g = m.given.lock().options.clone();
        assert_eq!((g.min_nodes, g.max_nodes), (Some(2), Some(8)));
        assert!(g.resolve(None).is_ok());
    }

    #[test]
    fn options_read_back_from_the_jobs_environment_are_told_from_typed_ones() {
        // The variable Slurm exports for --max-nodes-invasic, which no other
        // test sets.
        std::env::set_var("SLURM_SPANK__SLURM_SPANK_OPTION_malleable_max_nodes_invasic", "6");
        let m = Malleable::new();
        m.option(3, Some("6"), false).unwrap();
        assert!(m.given.lock().typed.is_empty(), "first set, to the environment's value: inherited");
        m.option(3, Some("6"), false).unwrap();
        assert_eq!(m.given.lock().typed, ["max-nodes-invasic"], "set again: typed on the command line");
        let m = Malleable::new();
        m.option(3, Some("5"), false).unwrap();
        assert_eq!(m.given.lock().typed, ["max-nodes-invasic"], "another value than the environment's: typed");
        m.option(0, Some("1"), false).unwrap();
        assert_eq!(m.given.lock().typed, ["max-nodes-invasic", "min-nodes-invasive"], "no variable: typed");
        // The flag, as an srun in the job gets it back from Slurm's export.
        let flag = SPELLINGS.iter().position(|o| o.name == "malleable-cores").unwrap();
        std::env::set_var("SLURM_SPANK__SLURM_SPANK_OPTION_malleable_malleable_cores", "(null)");
        let m = Malleable::new();
        m.option(flag, Some("(null)"), false).unwrap();
        assert!(m.given.lock().typed.is_empty(), "inherited, not typed");
        assert!(m.given.lock().options.share_cores);
    }
}
