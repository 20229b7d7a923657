//! Typed settings, in the spirit of pgrx's GUC declarations: each parameter
//! is one `const` [`Param<T>`] (key, Rust type, default, what is allowed,
//! help), a strategy's table lists them, and the strategy reads each with
//! [`Params::get`], which returns its `T`. Text (malleable.conf's lines, the
//! simulator's `--strategy NAME[Key=value,...]`) still reaches a parameter by
//! its key, without regard to case, `_` or `-`, so `MaxJobTest`,
//! `max_job_test` and `max-job-test` are one key; messages, help texts and
//! `Key=value` displays all come from the declarations.

use std::time::Duration;

/// A parameter's value as a table stores it whatever its Rust type, so that
/// one [`Params`] holds a strategy's parameters of every type.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Value {
    Whole(u64),
    Number(f64),
    Flag(bool),
    /// The index of a word in its type's list.
    Word(usize),
    Time(Duration),
}

/// A Rust type a parameter may have: how its text is read and written, and
/// how it is stored in a [`Value`].
pub trait Setting: Copy + PartialEq + Sync + 'static {
    /// What values are allowed beyond the type itself (bounds, spellings),
    /// declared with each parameter.
    type Allowed: Copy + Sync + 'static;
    /// The value `text` (already trimmed) says, if allowed.
    fn parse(text: &str, allowed: &Self::Allowed) -> Option<Self>;
    /// As it would be written (and read back by `parse`).
    fn show(self, allowed: &Self::Allowed) -> String;
    /// What is allowed, said for a message ("a whole number from 1 to 4").
    fn describe(allowed: &Self::Allowed) -> String;
    fn to_value(self) -> Value;
    fn from_value(v: Value) -> Option<Self>;
}

/// One parameter's declaration.
#[derive(Copy, Clone, Debug)]
pub struct Param<T: Setting> {
    /// The key as help texts, messages and displays spell it.
    pub key: &'static str,
    pub default: T,
    pub allowed: T::Allowed,
    pub help: &'static str,
}

impl<T: Setting> Param<T> {
    /// `text` as this parameter's value, if allowed.
    pub fn read(&self, text: &str) -> Option<T> {
        T::parse(text.trim(), &self.allowed)
    }

    pub fn show(&self, v: T) -> String {
        v.show(&self.allowed)
    }
}

/// A declaration whatever its type, as a strategy's table lists it.
pub trait AnyParam: Sync {
    fn key(&self) -> &'static str;
    fn help(&self) -> &'static str;
    /// What is allowed, said for a message.
    fn allowed(&self) -> String;
    fn default_value(&self) -> Value;
    /// `text` as this parameter's value, if allowed.
    fn read_value(&self, text: &str) -> Option<Value>;
    /// A value as it would be written.
    fn show_value(&self, v: Value) -> String;

    /// Whether `key`, as a user wrote it, names this parameter.
    fn matches(&self, key: &str) -> bool {
        folded(self.key()) == folded(key.trim())
    }
}

impl<T: Setting> AnyParam for Param<T> {
    fn key(&self) -> &'static str {
        self.key
    }

    fn help(&self) -> &'static str {
        self.help
    }

    fn allowed(&self) -> String {
        T::describe(&self.allowed)
    }

    fn default_value(&self) -> Value {
        self.default.to_value()
    }

    fn read_value(&self, text: &str) -> Option<Value> {
        self.read(text).map(T::to_value)
    }

    fn show_value(&self, v: Value) -> String {
        // A table stores only what its own declarations read, so the value
        // is always of this type; the debug form is a fallback that says so.
        T::from_value(v).map_or_else(|| format!("{v:?}"), |t| self.show(t))
    }
}

impl std::fmt::Debug for dyn AnyParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// A key as compared: lower case, without `_` and `-`.
fn folded(key: &str) -> String {
    key.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// A whole number's bounds, and what it counts when a message should say so
/// ("whole jobs from 1 to 10") rather than "a whole number from 1 to 10".
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Whole {
    pub min: u64,
    pub max: u64,
    pub unit: Option<&'static str>,
}

impl Whole {
    pub const fn new(min: u64, max: u64) -> Whole {
        Whole { min, max, unit: None }
    }

    pub const fn of(unit: &'static str, min: u64, max: u64) -> Whole {
        Whole { min, max, unit: Some(unit) }
    }

    fn read(&self, text: &str) -> Option<u64> {
        text.parse::<u64>().ok().filter(|v| (self.min..=self.max).contains(v))
    }

    fn describe(&self) -> String {
        match self.unit {
            None => format!("a whole number from {} to {}", self.min, self.max),
            Some(unit) => format!("whole {unit} from {} to {}", self.min, self.max),
        }
    }
}

macro_rules! whole_setting {
    ($($t:ty),*) => {$(
        impl Setting for $t {
            type Allowed = Whole;
            fn parse(text: &str, allowed: &Whole) -> Option<Self> {
                allowed.read(text).and_then(|v| <$t>::try_from(v).ok())
            }
            fn show(self, _: &Whole) -> String {
                self.to_string()
            }
            fn describe(allowed: &Whole) -> String {
                allowed.describe()
            }
            fn to_value(self) -> Value {
                Value::Whole(self as u64)
            }
            fn from_value(v: Value) -> Option<Self> {
                match v {
                    Value::Whole(n) => <$t>::try_from(n).ok(),
                    _ => None,
                }
            }
        }
    )*};
}

whole_setting!(u32, u64, usize);

/// A finite number's bounds.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Span {
    pub min: f64,
    pub max: f64,
}

impl Span {
    /// A finite number within the bounds.
    pub fn read(&self, text: &str) -> Option<f64> {
        text.parse::<f64>().ok().filter(|v| v.is_finite() && (self.min..=self.max).contains(v))
    }

    pub fn describe(&self) -> String {
        format!("a number from {} to {}", self.min, self.max)
    }
}

impl Setting for f64 {
    type Allowed = Span;
    fn parse(text: &str, allowed: &Span) -> Option<f64> {
        allowed.read(text)
    }
    fn show(self, _: &Span) -> String {
        format!("{self}")
    }
    fn describe(allowed: &Span) -> String {
        allowed.describe()
    }
    fn to_value(self) -> Value {
        Value::Number(self)
    }
    fn from_value(v: Value) -> Option<f64> {
        match v {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
}

/// How a yes-or-no parameter is written: `yes`/`no` for the plugin's own
/// keys, `1`/`0` for the strategies' switches, as their docs and run labels
/// have always said them. Either reads both, in any case.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Flag {
    pub yes: &'static str,
    pub no: &'static str,
}

impl Flag {
    pub const YES_NO: Flag = Flag { yes: "yes", no: "no" };
    pub const ONE_ZERO: Flag = Flag { yes: "1", no: "0" };
}

impl Setting for bool {
    type Allowed = Flag;
    fn parse(text: &str, _: &Flag) -> Option<bool> {
        match text.to_ascii_lowercase().as_str() {
            "yes" | "1" => Some(true),
            "no" | "0" => Some(false),
            _ => None,
        }
    }
    fn show(self, allowed: &Flag) -> String {
        (if self { allowed.yes } else { allowed.no }).to_string()
    }
    fn describe(allowed: &Flag) -> String {
        format!("{} or {}", allowed.yes, allowed.no)
    }
    fn to_value(self) -> Value {
        Value::Flag(self)
    }
    fn from_value(v: Value) -> Option<bool> {
        match v {
            Value::Flag(b) => Some(b),
            _ => None,
        }
    }
}

/// The unit a time parameter is written in.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum TimeUnit {
    Seconds,
    Millis,
}

/// A time's bounds, in whole units.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Within {
    pub min: u64,
    pub max: u64,
    pub unit: TimeUnit,
}

impl Within {
    pub const fn seconds(min: u64, max: u64) -> Within {
        Within { min, max, unit: TimeUnit::Seconds }
    }

    pub const fn millis(min: u64, max: u64) -> Within {
        Within { min, max, unit: TimeUnit::Millis }
    }

    fn whole(&self) -> Whole {
        Whole::of(if self.unit == TimeUnit::Seconds { "seconds" } else { "milliseconds" }, self.min, self.max)
    }
}

impl Setting for Duration {
    type Allowed = Within;
    fn parse(text: &str, allowed: &Within) -> Option<Duration> {
        let n = allowed.whole().read(text)?;
        Some(match allowed.unit {
            TimeUnit::Seconds => Duration::from_secs(n),
            TimeUnit::Millis => Duration::from_millis(n),
        })
    }
    fn show(self, allowed: &Within) -> String {
        match allowed.unit {
            TimeUnit::Seconds => self.as_secs().to_string(),
            TimeUnit::Millis => self.as_millis().to_string(),
        }
    }
    fn describe(allowed: &Within) -> String {
        allowed.whole().describe()
    }
    fn to_value(self) -> Value {
        Value::Time(self)
    }
    fn from_value(v: Value) -> Option<Duration> {
        match v {
            Value::Time(d) => Some(d),
            _ => None,
        }
    }
}

/// An enum whose values are words: implementing this makes it a
/// [`Setting`] whose text is one of the words, in any case.
pub trait Words: Copy + PartialEq + Sync + 'static {
    /// Each value with its word, in the order messages list them.
    const WORDS: &'static [(Self, &'static str)];
}

impl<T: Words> Setting for T {
    type Allowed = ();
    fn parse(text: &str, _: &()) -> Option<T> {
        T::WORDS.iter().find(|(_, w)| w.eq_ignore_ascii_case(text)).map(|(v, _)| *v)
    }
    fn show(self, _: &()) -> String {
        T::WORDS.iter().find(|(v, _)| *v == self).map_or("", |(_, w)| w).to_string()
    }
    fn describe(_: &()) -> String {
        let words: Vec<&str> = T::WORDS.iter().map(|(_, w)| *w).collect();
        format!("one of {}", words.join(", "))
    }
    fn to_value(self) -> Value {
        Value::Word(T::WORDS.iter().position(|(v, _)| *v == self).unwrap_or(0))
    }
    fn from_value(v: Value) -> Option<T> {
        match v {
            Value::Word(i) => T::WORDS.get(i).map(|(v, _)| *v),
            _ => None,
        }
    }
}

/// A strategy's parameter values: each declared one, at its default unless set.
#[derive(Clone)]
pub struct Params {
    specs: &'static [&'static dyn AnyParam],
    values: Vec<Value>,
    set: Vec<bool>,
}

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Params")
            .field("specs", &self.specs)
            .field("values", &self.values)
            .field("set", &self.set)
            .finish()
    }
}

impl PartialEq for Params {
    fn eq(&self, other: &Params) -> bool {
        let keys = |p: &Params| p.specs.iter().map(|s| s.key()).collect::<Vec<_>>();
        keys(self) == keys(other) && self.values == other.values && self.set == other.set
    }
}

impl Params {
    pub fn defaults(specs: &'static [&'static dyn AnyParam]) -> Params {
        Params { specs, values: specs.iter().map(|p| p.default_value()).collect(), set: vec![false; specs.len()] }
    }

    pub fn specs(&self) -> &'static [&'static dyn AnyParam] {
        self.specs
    }

    /// Set `key` from its text; the error names the key as written, the
    /// value and what is allowed, or, for a key not declared, the keys that
    /// are.
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), String> {
        let key = key.trim();
        let Some(i) = self.specs.iter().position(|p| p.matches(key)) else {
            let keys: Vec<&str> = self.specs.iter().map(|p| p.key()).collect();
            return Err(if keys.is_empty() {
                format!("unknown parameter '{key}': it takes none")
            } else {
                format!("unknown parameter '{key}': it takes {}", keys.join(", "))
            });
        };
        let (spec, t) = (self.specs[i], text.trim());
        self.values[i] = spec
            .read_value(t)
            .ok_or_else(|| format!("{key}={t} is not valid: expected {} ({})", spec.allowed(), spec.help()))?;
        self.set[i] = true;
        Ok(())
    }

    /// Where `p` is in the table: found by its declaration's key, never by
    /// text a user wrote.
    fn slot(&self, key: &'static str) -> Option<usize> {
        self.specs.iter().position(|s| s.key() == key)
    }

    /// `p`'s value. A strategy reads only what its table declares (every
    /// registered strategy is built with its defaults in the tests, where
    /// this is checked); in a release build a parameter missing from the
    /// table reads as its default rather than stopping the controller.
    pub fn get<T: Setting>(&self, p: &Param<T>) -> T {
        let value = self.slot(p.key).and_then(|i| T::from_value(self.values[i]));
        debug_assert!(value.is_some(), "parameter {} is not in this table", p.key);
        value.unwrap_or(p.default)
    }

    /// Whether `p` was set (rather than left at its default).
    pub fn is_set(&self, p: &dyn AnyParam) -> bool {
        self.slot(p.key()).is_some_and(|i| self.set[i])
    }

    /// `Key=value` for each parameter that was set, in table order.
    pub fn explicit(&self) -> Vec<String> {
        (0..self.specs.len())
            .filter(|&i| self.set[i])
            .map(|i| format!("{}={}", self.specs[i].key(), self.specs[i].show_value(self.values[i])))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_JOB_TEST: Param<usize> =
        Param { key: "MaxJobTest", default: 500, allowed: Whole::new(1, 1000), help: "jobs tested" };
    const LIMIT: Param<f64> =
        Param { key: "Limit", default: 1.0, allowed: Span { min: 0.0, max: 10.0 }, help: "a ratio" };
    const SPECS: &[&dyn AnyParam] = &[&MAX_JOB_TEST, &LIMIT];

    #[test]
    fn keys_match_in_any_case_with_or_without_separators() {
        let mut p = Params::defaults(SPECS);
        assert_eq!((p.get(&MAX_JOB_TEST), p.get(&LIMIT)), (500, 1.0));
        for key in ["MaxJobTest", "max_job_test", "max-job-test", "MAXJOBTEST"] {
            p.set(key, "7").unwrap();
            assert_eq!(p.get(&MAX_JOB_TEST), 7);
        }
        p.set("limit", " 2.5 ").unwrap();
        assert_eq!(p.explicit(), vec!["MaxJobTest=7", "Limit=2.5"]);
        assert!(Params::defaults(SPECS).explicit().is_empty(), "defaults are not said");
        assert!(p.is_set(&LIMIT) && !Params::defaults(SPECS).is_set(&LIMIT));
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
        // The key as the user wrote it.
        assert!(p.set("max_job_test", "0").unwrap_err().starts_with("max_job_test=0 is not valid"));
        for bad in ["NaN", "inf", "-0.5", "10.5"] {
            let e = p.set("Limit", bad).unwrap_err();
            assert!(e.starts_with(&format!("Limit={bad} is not valid: expected a number from 0 to 10")), "{e}");
        }
        assert_eq!(p.set("Foo", "1").unwrap_err(), "unknown parameter 'Foo': it takes MaxJobTest, Limit");
        assert_eq!(Params::defaults(&[]).set("Foo", "1").unwrap_err(), "unknown parameter 'Foo': it takes none");
        assert_eq!(p, Params::defaults(SPECS), "a refused value changes nothing");
    }

    /// A strategy that reads a parameter its table lacks is caught when the
    /// registry's test builds it (a release build reads the default).
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "parameter Other is not in this table")]
    fn a_read_of_a_parameter_not_in_the_table_is_caught_in_tests() {
        const OTHER: Param<usize> = Param { key: "Other", default: 3, allowed: Whole::new(1, 9), help: "not listed" };
        Params::defaults(SPECS).get(&OTHER);
    }

    #[test]
    fn flags_read_yes_no_and_one_zero_and_say_them_as_declared() {
        const ON: Param<bool> = Param { key: "On", default: false, allowed: Flag::ONE_ZERO, help: "switch" };
        const SAID: Param<bool> = Param { key: "Said", default: true, allowed: Flag::YES_NO, help: "yes" };
        const FLAGS: &[&dyn AnyParam] = &[&ON, &SAID];
        let mut p = Params::defaults(FLAGS);
        assert_eq!((p.get(&ON), p.get(&SAID)), (false, true));
        p.set("on", "YES").unwrap();
        p.set("said", "0").unwrap();
        assert_eq!((p.get(&ON), p.get(&SAID)), (true, false));
        assert_eq!(p.explicit(), vec!["On=1", "Said=no"]);
        assert_eq!(p.set("On", "2").unwrap_err(), "On=2 is not valid: expected 1 or 0 (switch)");
        assert_eq!(p.set("Said", "maybe").unwrap_err(), "Said=maybe is not valid: expected yes or no (yes)");
    }

    #[test]
    fn times_and_words_read_and_show_in_their_units() {
        #[derive(Copy, Clone, Debug, PartialEq)]
        enum Mode {
            Off,
            Full,
        }
        impl Words for Mode {
            const WORDS: &'static [(Mode, &'static str)] = &[(Mode::Off, "off"), (Mode::Full, "full")];
        }
        const BUDGET: Param<Duration> =
            Param { key: "BudgetMs", default: Duration::from_millis(20), allowed: Within::millis(0, 100), help: "ms" };
        const MODE: Param<Mode> = Param { key: "Mode", default: Mode::Off, allowed: (), help: "how" };
        const BOTH: &[&dyn AnyParam] = &[&BUDGET, &MODE];
        let mut p = Params::defaults(BOTH);
        assert_eq!((p.get(&BUDGET), p.get(&MODE)), (Duration::from_millis(20), Mode::Off));
        p.set("budget_ms", "75").unwrap();
        p.set("mode", "FULL").unwrap();
        assert_eq!((p.get(&BUDGET), p.get(&MODE)), (Duration::from_millis(75), Mode::Full));
        assert_eq!(p.explicit(), vec!["BudgetMs=75", "Mode=full"]);
        assert_eq!(
            p.set("BudgetMs", "101").unwrap_err(),
            "BudgetMs=101 is not valid: expected whole milliseconds from 0 to 100 (ms)"
        );
        assert_eq!(p.set("Mode", "half").unwrap_err(), "Mode=half is not valid: expected one of off, full (how)");
    }
}
