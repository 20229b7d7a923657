//! The strategies, one file each, and the one registry that names them:
//! malleable.conf's `Strategy=` and every simulator command find a strategy,
//! its parameters and its figures here and nowhere else. Adding a strategy is
//! a file in this folder and a line in [`REGISTRY`]. A strategy imports
//! blocks, `lp` and the model, never another strategy.

pub mod conservative;
pub mod easy;
pub mod fcfs;
pub mod ipsched;
pub mod mtct_backfill;
pub mod natural;
pub mod perf_aware;
pub mod power;
pub mod sd_policy;

use crate::params::Params;
use crate::strategy::{Strategy, StrategyInfo};

/// Every strategy a site or the simulator can choose, in the order help
/// texts list them.
pub const REGISTRY: &[&StrategyInfo] = &[
    &fcfs::FCFS,
    &easy::EASY,
    &conservative::CONSERVATIVE,
    &perf_aware::MTCT,
    &perf_aware::FPSMA,
    &mtct_backfill::MTCT_BACKFILL,
    &power::POWER,
    &power::POWER_RUNNING_ONLY,
    &natural::NATURAL,
    &natural::NATURAL_PLAN,
    &sd_policy::SD_POLICY,
    &ipsched::IPSCHED,
];

/// The registered names, as help texts and errors list them.
pub fn names() -> String {
    REGISTRY.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// A strategy with its parameter values: what `Strategy=` plus its keys, or
/// `--strategy NAME[Key=value,...]`, chose.
#[derive(Clone, Debug, PartialEq)]
pub struct StrategyChoice {
    pub info: &'static StrategyInfo,
    pub params: Params,
}

impl StrategyChoice {
    /// The registered strategy `name` (any case) with its defaults.
    pub fn named(name: &str) -> Result<StrategyChoice, String> {
        StrategyChoice::named_in(REGISTRY, name)
    }

    /// `NAME` or `NAME[Key=value,...]`, from the registry.
    pub fn parse(text: &str) -> Result<StrategyChoice, String> {
        StrategyChoice::parse_in(REGISTRY, text)
    }

    /// [`StrategyChoice::named`] in another registry (a test's).
    pub fn named_in(registry: &[&'static StrategyInfo], name: &str) -> Result<StrategyChoice, String> {
        let name = name.trim();
        let info = registry.iter().copied().find(|s| s.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
            let names: Vec<&str> = registry.iter().map(|s| s.name).collect();
            format!("unknown strategy '{name}', allowed: {}", names.join(", "))
        })?;
        Ok(StrategyChoice { info, params: Params::defaults(info.params) })
    }

    /// [`StrategyChoice::parse`] in another registry (a test's).
    pub fn parse_in(registry: &[&'static StrategyInfo], text: &str) -> Result<StrategyChoice, String> {
        let text = text.trim();
        let (name, rest) = match text.split_once('[') {
            None => (text, None),
            Some((name, rest)) => {
                let inner = rest.strip_suffix(']').ok_or_else(|| {
                    format!("'{text}' is not NAME or NAME[Key=value,...]: the parameters must end with ']'")
                })?;
                (name, Some(inner))
            }
        };
        let mut choice = StrategyChoice::named_in(registry, name)?;
        for pair in rest.into_iter().flat_map(|r| r.split(',')).map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) =
                pair.split_once('=').ok_or_else(|| format!("{}: '{pair}' is not Key=value", choice.info.name))?;
            choice.set(key, value)?;
        }
        Ok(choice)
    }

    /// Set one parameter; the error names the strategy, the key, the value
    /// and what is allowed.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        self.params.set(key.trim(), value).map_err(|e| format!("{}: {e}", self.info.name))
    }

    pub fn name(&self) -> &'static str {
        self.info.name
    }

    /// A new instance.
    pub fn build(&self) -> Box<dyn Strategy> {
        (self.info.build)(&self.params)
    }
}

/// `name`, or `name[Key=value,...]` with the parameters that were set.
impl std::fmt::Display for StrategyChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = self.params.explicit();
        if set.is_empty() {
            f.write_str(self.info.name)
        } else {
            write!(f, "{}[{}]", self.info.name, set.join(","))
        }
    }
}

/// Split a list of choices at the commas outside brackets:
/// `easy,conservative[MaxJobTest=10,Other=2],mtct` is three.
pub fn split_list(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(text[from..].trim());
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}
