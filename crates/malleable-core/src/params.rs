//! Strategy parameters, declared once per strategy in a table of
//! [`ParamSpec`]s, from which malleable.conf's keys, the simulator's
//! `--strategy NAME[Key=value,...]`, their checks and their error messages
//! all follow. Keys match without regard to case, `_` or `-`, so
//! `MaxJobTest`, `max_job_test` and `max-job-test` are one key.

/// What values a parameter takes.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A whole number within the bounds.
    Whole { min: u64, max: u64 },
    /// A finite number within the bounds.
    Number { min: f64, max: f64 },
    /// A finite number within the bounds (`min` 0 or more), or one of the
    /// words, any case (kept as -1 - its index, so never a number).
    NumberOrWord { min: f64, max: f64, words: &'static [&'static str] },
}

/// One parameter: its key, its values, its default, and what it means.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ParamSpec {
    pub key: &'static str,
    pub kind: ParamKind,
    pub default: f64,
    pub help: &'static str,
}

/// A key as compared: lower case, without `_` and `-`.
fn folded(key: &str) -> String {
    key.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

impl ParamSpec {
    pub fn matches(&self, key: &str) -> bool {
        folded(self.key) == folded(key.trim())
    }

    /// What is allowed, said for an error message.
    pub fn allowed(&self) -> String {
        match self.kind {
            ParamKind::Whole { min, max } => format!("a whole number from {min} to {max}"),
            ParamKind::Number { min, max } => format!("a number from {min} to {max}"),
            ParamKind::NumberOrWord { min, max, words } => {
                let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
                format!("a number from {min} to {max}, or {}", words.join(" or "))
            }
        }
    }

    /// Check `text` as this parameter's value.
    pub fn parse(&self, text: &str) -> Result<f64, String> {
        let t = text.trim();
        let value = match self.kind {
            ParamKind::Whole { min, max } => {
                t.parse::<u64>().ok().filter(|v| (min..=max).contains(v)).map(|v| v as f64)
            }
            ParamKind::Number { min, max } => {
                t.parse::<f64>().ok().filter(|v| v.is_finite() && (min..=max).contains(v))
            }
            ParamKind::NumberOrWord { min, max, words } => match words.iter().position(|w| w.eq_ignore_ascii_case(t)) {
                Some(i) => Some(-1.0 - i as f64),
                None => t.parse::<f64>().ok().filter(|v| v.is_finite() && (min.max(0.0)..=max).contains(v)),
            },
        };
        value.ok_or_else(|| format!("{}={t} is not valid: expected {} ({})", self.key, self.allowed(), self.help))
    }

    /// The word a [`ParamKind::NumberOrWord`] value stands for; None for a number.
    fn word(&self, v: f64) -> Option<&'static str> {
        match self.kind {
            ParamKind::NumberOrWord { words, .. } if v < 0.0 => words.get((-1.0 - v) as usize).copied(),
            _ => None,
        }
    }

    /// A value as it would be written.
    pub fn show(&self, v: f64) -> String {
        self.word(v).map_or_else(|| format!("{v}"), str::to_string)
    }
}

/// A strategy's parameter values: each declared one, at its default unless set.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    specs: &'static [ParamSpec],
    values: Vec<f64>,
    set: Vec<bool>,
}

impl Params {
    pub fn defaults(specs: &'static [ParamSpec]) -> Params {
        Params { specs, values: specs.iter().map(|p| p.default).collect(), set: vec![false; specs.len()] }
    }

    pub fn specs(&self) -> &'static [ParamSpec] {
        self.specs
    }

    /// Set `key` from its text; the error names the key, the value and what
    /// is allowed, or, for a key not declared, the keys that are.
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), String> {
        let Some(i) = self.specs.iter().position(|p| p.matches(key)) else {
            let keys: Vec<&str> = self.specs.iter().map(|p| p.key).collect();
            return Err(if keys.is_empty() {
                format!("unknown parameter '{key}': it takes none")
            } else {
                format!("unknown parameter '{key}': it takes {}", keys.join(", "))
            });
        };
        self.values[i] = self.specs[i].parse(text)?;
        self.set[i] = true;
        Ok(())
    }

    fn value(&self, key: &str) -> f64 {
        let i = self.specs.iter().position(|p| p.key == key);
        // A strategy reads only the keys its own table declares; every
        // registered strategy is built with its defaults in the tests.
        self.values[i.unwrap_or_else(|| panic!("parameter {key} is not declared"))]
    }

    /// A [`ParamKind::Whole`] parameter's value.
    pub fn whole(&self, key: &str) -> u64 {
        self.value(key) as u64
    }

    /// A [`ParamKind::Number`] parameter's value.
    pub fn number(&self, key: &str) -> f64 {
        self.value(key)
    }

    /// A [`ParamKind::NumberOrWord`] parameter's value: `Ok` with its
    /// number, or `Err` with its word as the table spells it.
    pub fn number_or_word(&self, key: &str) -> Result<f64, &'static str> {
        let v = self.value(key);
        let spec = self.specs.iter().find(|p| p.key == key).expect("read only once declared");
        spec.word(v).map_or(Ok(v), Err)
    }

    /// Whether `key` was set (rather than left at its default).
    pub fn is_set(&self, key: &str) -> bool {
        self.specs.iter().position(|p| p.matches(key)).is_some_and(|i| self.set[i])
    }

    /// `Key=value` for each parameter that was set, in table order.
    pub fn explicit(&self) -> Vec<String> {
        self.specs
            .iter()
            .zip(&self.values)
            .zip(&self.set)
            .filter(|(_, set)| **set)
            .map(|((p, v), _)| format!("{}={}", p.key, p.show(*v)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            key: "MaxJobTest",
            kind: ParamKind::Whole { min: 1, max: 1000 },
            default: 500.0,
            help: "jobs tested",
        },
        ParamSpec { key: "Limit", kind: ParamKind::Number { min: 0.0, max: 10.0 }, default: 1.0, help: "a ratio" },
    ];

    #[test]
    fn keys_match_in_any_case_with_or_without_separators() {
        let mut p = Params::defaults(SPECS);
        assert_eq!((p.whole("MaxJobTest"), p.number("Limit")), (500, 1.0));
        for key in ["MaxJobTest", "max_job_test", "max-job-test", "MAXJOBTEST"] {
            p.set(key, "7").unwrap();
            assert_eq!(p.whole("MaxJobTest"), 7);
        }
        p.set("limit", " 2.5 ").unwrap();
        assert_eq!(p.explicit(), vec!["MaxJobTest=7", "Limit=2.5"]);
        assert!(Params::defaults(SPECS).explicit().is_empty(), "defaults are not said");
    }

    #[test]
    fn bad_values_and_keys_say_what_is_allowed() {
        let mut p = Params::defaults(SPECS);
        for bad in ["0", "1001", "x", "1.5", "-1", ""] {
            let e = p.set("MaxJobTest", bad).unwrap_err();
            assert_eq!(
                e,
                format!("MaxJobTest={bad} is not valid: expected a whole number from 1 to 1000 (jobs tested)")
            );
        }
        for bad in ["NaN", "inf", "-0.5", "10.5"] {
            let e = p.set("Limit", bad).unwrap_err();
            assert!(e.starts_with(&format!("Limit={bad} is not valid: expected a number from 0 to 10")), "{e}");
        }
        assert_eq!(p.set("Foo", "1").unwrap_err(), "unknown parameter 'Foo': it takes MaxJobTest, Limit");
        assert_eq!(Params::defaults(&[]).set("Foo", "1").unwrap_err(), "unknown parameter 'Foo': it takes none");
        assert_eq!(p, Params::defaults(SPECS), "a refused value changes nothing");
    }

    #[test]
    fn a_number_or_word_takes_either_and_says_both() {
        const MIXED: &[ParamSpec] = &[ParamSpec {
            key: "MaxSlowdown",
            kind: ParamKind::NumberOrWord { min: 1.0, max: 1e6, words: &["unlimited", "dynavgsd"] },
            default: 10.0,
            help: "cut-off",
        }];
        let mut p = Params::defaults(MIXED);
        assert_eq!(p.number_or_word("MaxSlowdown"), Ok(10.0));
        p.set("MaxSlowdown", "DynAvgSD").unwrap();
        assert_eq!(p.number_or_word("MaxSlowdown"), Err("dynavgsd"));
        assert_eq!(p.explicit(), vec!["MaxSlowdown=dynavgsd"]);
        p.set("MaxSlowdown", "unlimited").unwrap();
        assert_eq!(p.number_or_word("MaxSlowdown"), Err("unlimited"));
        p.set("MaxSlowdown", "50").unwrap();
        assert_eq!(p.number_or_word("MaxSlowdown"), Ok(50.0));
        for bad in ["0.5", "-1", "-2", "infinite", "NaN"] {
            assert_eq!(
                p.set("MaxSlowdown", bad).unwrap_err(),
                format!("MaxSlowdown={bad} is not valid: expected a number from 1 to 1000000, or 'unlimited' or 'dynavgsd' (cut-off)")
            );
        }
        assert_eq!(p.number_or_word("MaxSlowdown"), Ok(50.0), "a refused value changes nothing");
    }
}
