//! The job options of Chadha et al. 2020 (Listing 2) and how they travel:
//! the SPANK plugin reads them where the user typed them (sbatch, salloc,
//! srun, `#SBATCH` lines), checks them, and puts them into the job's SPANK
//! environment, which slurmctld keeps with the job; the scheduler plugin
//! reads them back from there and checks them again, so a client without our
//! SPANK plugin cannot slip in a bad spec. Both ends use this file, so they
//! cannot disagree on a name, a spelling or a rule.
//!
//! A job with both node bounds is elastic (malleable); `--nodes` is its start
//! size and must lie within them. Power bounds are per node and may be given
//! for any job; one alone fixes both.

use crate::constraint::{MalleableSpec, NodeConstraint};
use crate::power::{JobPower, Watts};

/// One option: its name, the other spelling the paper's earlier text used,
/// what it takes, what it means, and its key in the job's environment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OptionInfo {
    pub name: &'static str,
    pub also: Option<&'static str>,
    pub arg: &'static str,
    pub usage: &'static str,
    pub env: &'static str,
}

pub const MIN_NODES: OptionInfo = OptionInfo {
    name: "min-nodes-invasive",
    also: Some("min-nodes-invasic"),
    arg: "N",
    usage: "fewest nodes an elastic job may be shrunk to",
    env: "MALLEABLE_MIN_NODES",
};
pub const MAX_NODES: OptionInfo = OptionInfo {
    name: "max-nodes-invasive",
    also: Some("max-nodes-invasic"),
    arg: "N",
    usage: "most nodes an elastic job may be grown to",
    env: "MALLEABLE_MAX_NODES",
};
pub const NODE_CONSTRAINTS: OptionInfo = OptionInfo {
    name: "node-constraints",
    also: None,
    arg: "pof2|even|odd|ncube|none",
    usage: "node counts an elastic job can run on",
    env: "MALLEABLE_NODE_CONSTRAINTS",
};
pub const MIN_POWER: OptionInfo = OptionInfo {
    name: "min-power",
    also: None,
    arg: "W",
    usage: "least the job draws per node, in watts",
    env: "MALLEABLE_MIN_POWER",
};
pub const MAX_POWER: OptionInfo = OptionInfo {
    name: "max-power",
    also: None,
    arg: "W",
    usage: "most the job draws per node, in watts",
    env: "MALLEABLE_MAX_POWER",
};

/// A flag: SD-Policy (D'Amico et al. 2019) may start another opted-in job
/// on some of this job's cores, or this job on cores of opted-in running
/// jobs. Never by force: without it a job keeps its nodes to itself.
pub const MALLEABLE_CORES: OptionInfo = OptionInfo {
    name: "malleable-cores",
    also: None,
    arg: "",
    usage: "the job may share its nodes' cores with another job that allows it too (SD-Policy)",
    env: "MALLEABLE_CORES",
};

/// Every option, in the order `--help` lists them.
pub const OPTIONS: [OptionInfo; 6] = [MIN_NODES, MAX_NODES, NODE_CONSTRAINTS, MIN_POWER, MAX_POWER, MALLEABLE_CORES];

/// How the user spelled the node options (the paper's earlier `-invasic`,
/// or `-invasive`), so that a message names an option as it was typed. Not
/// part of what the options mean: any two spellings are equal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spelling([Option<&'static str>; 2]);

/// The options with another spelling, in the order [`Spelling`] keeps them.
const SPELLED_TWO_WAYS: [&OptionInfo; 2] = [&MIN_NODES, &MAX_NODES];

impl Spelling {
    /// Where option `o`'s spelling is kept, if it has two.
    fn slot(o: &OptionInfo) -> Option<usize> {
        SPELLED_TWO_WAYS.iter().position(|t| t.env == o.env)
    }

    fn record(&mut self, o: &OptionInfo, spelled: &'static str) {
        if let Some(i) = Spelling::slot(o) {
            self.0[i] = Some(spelled);
        }
    }
}

impl PartialEq for Spelling {
    fn eq(&self, _: &Spelling) -> bool {
        true
    }
}

/// The options as given, each checked on its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubmitOptions {
    pub min_nodes: Option<u32>,
    pub max_nodes: Option<u32>,
    pub constraint: Option<NodeConstraint>,
    pub min_power: Option<Watts>,
    pub max_power: Option<Watts>,
    /// `--malleable-cores` was given.
    pub share_cores: bool,
    pub spelling: Spelling,
}

/// What the options make of a job.
#[derive(Clone, Debug, PartialEq)]
pub struct Malleability {
    /// `None`: a rigid job.
    pub spec: Option<MalleableSpec>,
    pub power: Option<JobPower>,
    /// Its owner let it share cores (`--malleable-cores`).
    pub share_cores: bool,
}

/// The option `name` names (either spelling, dashes or not), and the
/// spelling it was given in.
fn option_for(name: &str) -> Option<(&'static OptionInfo, &'static str)> {
    let name = name.trim_start_matches('-');
    OPTIONS.iter().find_map(|o| match o.also {
        Some(also) if also == name => Some((o, also)),
        _ => (o.name == name).then_some((o, o.name)),
    })
}

fn node_count(name: &str, value: &str) -> Result<u32, String> {
    match value.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("--{name}={value} is not valid: expected a whole number of nodes, 1 or more")),
    }
}

fn watts(o: &OptionInfo, value: &str) -> Result<Watts, String> {
    match value.trim().parse::<f64>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(format!("--{}={value} is not valid: expected watts per node, a number 0 or more", o.name)),
    }
}

/// A count as written back: whole watts without a fraction.
fn number(w: f64) -> String {
    format!("{w}")
}

impl SubmitOptions {
    /// Take one option as the user gave it: its name (either spelling, with
    /// or without the leading dashes) and its value. A repeated option
    /// replaces the earlier value, as sbatch's own options do.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let (o, spelled) = option_for(name).ok_or_else(|| {
            let names: Vec<String> = OPTIONS.iter().map(|o| format!("--{}", o.name)).collect();
            format!("unknown option '{name}': expected one of {}", names.join(", "))
        })?;
        match o.env {
            e if e == MIN_NODES.env => self.min_nodes = Some(node_count(spelled, value)?),
            e if e == MAX_NODES.env => self.max_nodes = Some(node_count(spelled, value)?),
            e if e == NODE_CONSTRAINTS.env => {
                let c = NodeConstraint::parse(value)
                    .map_err(|_| format!("--{}={value} is not valid: expected one of {}", o.name, o.arg))?;
                self.constraint = Some(c);
            }
            e if e == MIN_POWER.env => self.min_power = Some(watts(o, value)?),
            e if e == MALLEABLE_CORES.env => {
                // A flag: sbatch gives no value; the job's environment says yes.
                if !matches!(value.trim(), "" | "yes") {
                    return Err(format!("--{}={value} is not valid: it is a flag and takes no value", o.name));
                }
                self.share_cores = true;
            }
            _ => self.max_power = Some(watts(o, value)?),
        }
        self.spelling.record(o, spelled);
        Ok(())
    }

    /// Whether any option was given.
    pub fn is_empty(&self) -> bool {
        *self == SubmitOptions::default()
    }

    /// Option `o`'s name as the user spelled it (its first name unless
    /// they used the other).
    pub fn name(&self, o: &OptionInfo) -> &'static str {
        Spelling::slot(o).and_then(|i| self.spelling.0[i]).unwrap_or(o.name)
    }

    /// The rules between the options, and with the job's start size
    /// `--nodes` when it is known. The error names the options, their values
    /// and what is allowed.
    pub fn resolve(&self, start_nodes: Option<u32>) -> Result<Malleability, String> {
        let (lo, hi) = (self.name(&MIN_NODES), self.name(&MAX_NODES));
        let spec = match (self.min_nodes, self.max_nodes) {
            (None, None) => {
                if let Some(c) = self.constraint {
                    return Err(format!(
                        "--{}={c} needs --{lo} and --{hi}: only an elastic job has node constraints",
                        NODE_CONSTRAINTS.name
                    ));
                }
                None
            }
            (Some(min), None) => {
                return Err(format!("--{lo}={min} given without --{hi}: an elastic job needs both bounds"))
            }
            (None, Some(max)) => {
                return Err(format!("--{hi}={max} given without --{lo}: an elastic job needs both bounds"))
            }
            (Some(min), Some(max)) => {
                if min > max {
                    return Err(format!("--{lo}={min} is above --{hi}={max}: expected min <= max"));
                }
                let spec = MalleableSpec { min, max, constraint: self.constraint.unwrap_or_default() };
                if spec.lowest_valid().is_none() {
                    return Err(format!(
                        "--{}={} allows no node count from {min} to {max} (--{lo}, --{hi}): widen the range \
                         or choose another constraint",
                        NODE_CONSTRAINTS.name, spec.constraint
                    ));
                }
                if let Some(n) = start_nodes {
                    if n < min || n > max {
                        return Err(format!(
                            "--nodes={n} is outside --{lo}={min} .. --{hi}={max}: an elastic job starts on \
                             --nodes, which must lie in that range"
                        ));
                    }
                }
                Some(spec)
            }
        };
        let power = match (self.min_power, self.max_power) {
            (None, None) => None,
            (Some(w), None) | (None, Some(w)) => Some(JobPower::fixed(w)),
            (Some(min), Some(max)) if min > max => {
                return Err(format!(
                    "--{}={} is above --{}={}: expected min <= max",
                    MIN_POWER.name,
                    number(min),
                    MAX_POWER.name,
                    number(max)
                ))
            }
            (Some(min), Some(max)) => Some(JobPower { min_per_node: min, max_per_node: max, measured_per_node: None }),
        };
        Ok(Malleability { spec, power, share_cores: self.share_cores })
    }

    /// The options as `NAME=value` pairs for the job's SPANK environment.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let mut env = Vec::new();
        if let Some(n) = self.min_nodes {
            env.push((MIN_NODES.env, n.to_string()));
        }
        if let Some(n) = self.max_nodes {
            env.push((MAX_NODES.env, n.to_string()));
        }
        if let Some(c) = self.constraint {
            env.push((NODE_CONSTRAINTS.env, c.name().to_string()));
        }
        if let Some(w) = self.min_power {
            env.push((MIN_POWER.env, number(w)));
        }
        if let Some(w) = self.max_power {
            env.push((MAX_POWER.env, number(w)));
        }
        if self.share_cores {
            env.push((MALLEABLE_CORES.env, "yes".to_string()));
        }
        let other: Vec<&str> = SPELLED_TWO_WAYS
            .iter()
            .zip(self.spelling.0)
            .filter_map(|(o, spelled)| spelled.filter(|s| *s != o.name))
            .collect();
        if !other.is_empty() {
            env.push((Self::SPELLED_ENV, other.join(",")));
        }
        env
    }

    /// Read the options back from a job's SPANK environment (`NAME=value`
    /// entries; those of other plugins are skipped). Each value is checked
    /// as if typed: the environment can come from any client.
    /// What every entry of [`OPTIONS`] in a job's environment starts with:
    /// a reader may skip the rest without looking further.
    pub const ENV_PREFIX: &'static str = "MALLEABLE_";

    /// Not an option: the node count an elastic job was submitted with,
    /// which job_submit/malleable writes into its environment (whatever a
    /// client put there) so that the scheduler still knows it once the job
    /// runs on another count.
    pub const SUBMITTED_NODES_ENV: &'static str = "MALLEABLE_SUBMITTED_NODES";

    /// Not an option: the options the user gave in their other spelling
    /// (`min-nodes-invasic,...`), so that the controller's messages name
    /// them as typed too.
    pub const SPELLED_ENV: &'static str = "MALLEABLE_SPELLED";

    pub fn from_env<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<SubmitOptions, String> {
        let mut o = SubmitOptions::default();
        for entry in entries {
            let Some((key, value)) = entry.split_once('=') else { continue };
            if key == Self::SPELLED_ENV {
                for name in value.split(',') {
                    match option_for(name) {
                        Some((info, spelled)) if Spelling::slot(info).is_some() => o.spelling.record(info, spelled),
                        _ => {
                            return Err(format!(
                                "{key}={value} in the job's environment: '{name}' is not a spelling of --{} or --{}",
                                MIN_NODES.name, MAX_NODES.name
                            ))
                        }
                    }
                }
            }
            if let Some(info) = OPTIONS.iter().find(|i| i.env == key) {
                o.set(info.name, value).map_err(|e| format!("{key}={value} in the job's environment: {e}"))?;
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_in_the_environment_has_the_prefix() {
        assert!(OPTIONS.iter().all(|o| o.env.starts_with(SubmitOptions::ENV_PREFIX)));
    }

    fn given(pairs: &[(&str, &str)]) -> Result<SubmitOptions, String> {
        let mut o = SubmitOptions::default();
        for (k, v) in pairs {
            o.set(k, v)?;
        }
        Ok(o)
    }

    #[test]
    fn both_spellings_and_dashes_are_accepted() {
        let a = given(&[("--min-nodes-invasive", "2"), ("max-nodes-invasive", "8")]).unwrap();
        let b = given(&[("min-nodes-invasic", "2"), ("--max-nodes-invasic", "8")]).unwrap();
        assert_eq!(a, b);
        assert_eq!((a.min_nodes, a.max_nodes), (Some(2), Some(8)));
        // Listing 2 writes poF2.
        assert_eq!(given(&[("node-constraints", "poF2")]).unwrap().constraint, Some(NodeConstraint::PowerOfTwo));
    }

    #[test]
    fn bad_values_name_the_option_the_value_and_what_is_allowed() {
        for (name, value, want) in [
            (
                "min-nodes-invasive",
                "abc",
                "--min-nodes-invasive=abc is not valid: expected a whole number of nodes, 1 or more",
            ),
            (
                "max-nodes-invasic",
                "0",
                "--max-nodes-invasic=0 is not valid: expected a whole number of nodes, 1 or more",
            ),
            ("min-nodes-invasive", "-3", "--min-nodes-invasive=-3 is not valid"),
            (
                "node-constraints",
                "prime",
                "--node-constraints=prime is not valid: expected one of pof2|even|odd|ncube|none",
            ),
            ("min-power", "-5", "--min-power=-5 is not valid: expected watts per node, a number 0 or more"),
            ("max-power", "lots", "--max-power=lots is not valid"),
            ("max-power", "inf", "--max-power=inf is not valid"),
            ("malleable-cores", "2", "--malleable-cores=2 is not valid: it is a flag and takes no value"),
        ] {
            let e = given(&[(name, value)]).unwrap_err();
            assert!(e.starts_with(want), "{name}={value}: {e}");
        }
        assert!(given(&[("max-nodes", "3")]).unwrap_err().contains("expected one of --min-nodes-invasive"));
    }

    #[test]
    fn combinations_follow_the_rules() {
        let r = |pairs: &[(&str, &str)], nodes| given(pairs).unwrap().resolve(nodes);
        // Rigid: nothing, or power only.
        assert_eq!(r(&[], Some(4)).unwrap(), Malleability { spec: None, power: None, share_cores: false });
        // Core sharing alone, or with an elastic spec.
        assert!(r(&[("malleable-cores", "")], Some(4)).unwrap().share_cores);
        let both = r(&[("malleable-cores", ""), ("min-nodes-invasive", "1"), ("max-nodes-invasive", "2")], Some(2));
        assert!(both.as_ref().unwrap().share_cores && both.unwrap().spec.is_some());
        assert_eq!(r(&[("min-power", "170")], None).unwrap().power, Some(JobPower::fixed(170.0)));
        // Elastic.
        let m = r(&[("min-nodes-invasive", "2"), ("max-nodes-invasive", "8"), ("node-constraints", "even")], Some(4));
        assert_eq!(m.unwrap().spec, Some(MalleableSpec { min: 2, max: 8, constraint: NodeConstraint::Even }));
        for (pairs, nodes, want) in [
            (&[("min-nodes-invasive", "2")][..], None, "--min-nodes-invasive=2 given without --max-nodes-invasive"),
            (&[("max-nodes-invasive", "2")][..], None, "--max-nodes-invasive=2 given without --min-nodes-invasive"),
            (
                &[("min-nodes-invasive", "5"), ("max-nodes-invasive", "4")][..],
                None,
                "--min-nodes-invasive=5 is above --max-nodes-invasive=4",
            ),
            (
                &[("min-nodes-invasive", "3"), ("max-nodes-invasive", "3"), ("node-constraints", "even")][..],
                None,
                "--node-constraints=even allows no node count from 3 to 3",
            ),
            (
                &[("min-nodes-invasive", "2"), ("max-nodes-invasive", "4")][..],
                Some(5),
                "--nodes=5 is outside --min-nodes-invasive=2 .. --max-nodes-invasive=4",
            ),
            (&[("min-nodes-invasive", "2"), ("max-nodes-invasive", "4")][..], Some(1), "--nodes=1 is outside"),
            (
                &[("node-constraints", "pof2")][..],
                None,
                "--node-constraints=pof2 needs --min-nodes-invasive and --max-nodes-invasive",
            ),
            (&[("min-power", "300"), ("max-power", "200")][..], None, "--min-power=300 is above --max-power=200"),
        ] {
            let e = r(pairs, nodes).unwrap_err();
            assert!(e.starts_with(want), "{pairs:?} {nodes:?}: {e}");
        }
    }

    #[test]
    fn messages_name_the_node_options_as_the_user_spelled_them_also_read_back_from_the_environment() {
        let paper = given(&[("min-nodes-invasic", "5"), ("--max-nodes-invasic", "4")]).unwrap();
        let want = "--min-nodes-invasic=5 is above --max-nodes-invasic=4";
        assert!(paper.resolve(None).unwrap_err().starts_with(want));
        let mixed = given(&[("min-nodes-invasive", "2"), ("max-nodes-invasic", "4")]).unwrap();
        let e = mixed.resolve(Some(5)).unwrap_err();
        assert!(e.starts_with("--nodes=5 is outside --min-nodes-invasive=2 .. --max-nodes-invasic=4"), "{e}");
        // The controller reads the options back from the job's environment.
        let entries: Vec<String> = mixed.to_env().into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        let back = SubmitOptions::from_env(entries.iter().map(String::as_str)).unwrap();
        assert_eq!(back.resolve(Some(5)).unwrap_err(), e);
        let e = SubmitOptions::from_env(["MALLEABLE_SPELLED=min-power"]).unwrap_err();
        assert!(e.contains("'min-power' is not a spelling of --min-nodes-invasive or --max-nodes-invasive"), "{e}");
    }

    #[test]
    fn the_environment_carries_exactly_what_was_given() {
        let o = given(&[
            ("min-nodes-invasic", "1"),
            ("max-nodes-invasive", "16"),
            ("node-constraints", "ncube"),
            ("min-power", "170.5"),
            ("max-power", "250"),
            ("--malleable-cores", ""),
        ])
        .unwrap();
        let env: Vec<String> = o.to_env().into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            env,
            [
                "MALLEABLE_MIN_NODES=1",
                "MALLEABLE_MAX_NODES=16",
                "MALLEABLE_NODE_CONSTRAINTS=ncube",
                "MALLEABLE_MIN_POWER=170.5",
                "MALLEABLE_MAX_POWER=250",
                "MALLEABLE_CORES=yes",
                "MALLEABLE_SPELLED=min-nodes-invasic"
            ]
        );
        // Other entries in the job's SPANK environment are not ours.
        let mut entries = vec!["OTHER_PLUGIN=x".to_string(), "NOEQUALS".to_string()];
        entries.extend(env);
        assert_eq!(SubmitOptions::from_env(entries.iter().map(String::as_str)).unwrap(), o);
        assert_eq!(SubmitOptions::from_env([]).unwrap(), SubmitOptions::default());
        // A hand-crafted bad value is refused, naming the entry.
        let e = SubmitOptions::from_env(["MALLEABLE_MIN_NODES=0"]).unwrap_err();
        assert!(
            e.starts_with("MALLEABLE_MIN_NODES=0 in the job's environment: --min-nodes-invasive=0 is not valid"),
            "{e}"
        );
    }
}
