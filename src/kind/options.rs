//! Named options of a kind, as JSON values.

use crate::data_error::DataError;
use serde_json::Value;

/// What values an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionType {
    /// A switch: `true` when given (`--exhaustive`).
    Flag,
    /// An unsigned 32-bit integer in `min..=max`.
    U32 {
        /// The smallest value.
        min: u32,
        /// The largest value.
        max: u32,
    },
    /// An unsigned 64-bit integer.
    U64,
    /// A finite number.
    F64,
    /// Any text.
    Text,
    /// One of these words (the error names them all).
    Choice(&'static [&'static str]),
    /// A list of names (comma-separated on a command line).
    Names,
    /// A file's path.
    Path,
}

/// One option of a kind, declared once: the CLI makes its flag of it (`--max-candidates` of
/// `max_candidates`, typed, with its range or words and its help), the server and Python take it
/// by name in their options, and [`Options::check`] refuses every name a kind does not declare
/// and every value its declaration does not allow, so a kind reads its options already checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    /// The name (snake case).
    pub name: &'static str,
    /// Its values.
    pub ty: OptionType,
    /// The placeholder of its value in help texts (`N`, `FILE`).
    pub value_name: &'static str,
    /// One paragraph of help, its default included (the kind applies its defaults itself).
    pub help: &'static str,
}

impl OptionSpec {
    /// An option of type `ty`.
    pub const fn new(
        name: &'static str,
        ty: OptionType,
        value_name: &'static str,
        help: &'static str,
    ) -> Self {
        Self {
            name,
            ty,
            value_name,
            help,
        }
    }

    /// A switch.
    pub const fn flag(name: &'static str, help: &'static str) -> Self {
        Self::new(name, OptionType::Flag, "", help)
    }

    /// An unsigned 32-bit integer of at least `min`.
    pub const fn u32(
        name: &'static str,
        min: u32,
        value_name: &'static str,
        help: &'static str,
    ) -> Self {
        Self::new(
            name,
            OptionType::U32 { min, max: u32::MAX },
            value_name,
            help,
        )
    }

    /// The command-line flag (`--max-candidates`).
    pub fn flag_name(&self) -> String {
        format!("--{}", self.name.replace('_', "-"))
    }
}

/// Named options of a kind (`radius`, `candidates`, ...): what the CLI's kind flags and a server
/// request's `options` object become. Each kind says which names it takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options(serde_json::Map<String, Value>);

impl Options {
    /// No options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Options from a JSON object (`null` is none); anything else is an error.
    pub fn from_json(value: &Value) -> Result<Self, DataError> {
        match value {
            Value::Null => Ok(Self::new()),
            Value::Object(map) => Ok(Self(map.clone())),
            _ => Err(DataError::BadOption {
                name: "options".into(),
                message: "expected an object of named options".into(),
            }),
        }
    }

    /// Sets an option.
    pub fn set(&mut self, name: &str, value: impl Into<Value>) -> &mut Self {
        self.0.insert(name.to_string(), value.into());
        self
    }

    /// The options as a JSON object.
    pub fn to_json(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// The names given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Whether no option is given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An error unless every name given is one of the options `accepted` (of kind `kind`) and
    /// every value given is one its declaration allows ([`OptionType`]: the type, an integer's
    /// range, a choice's words); called by every parse, so the list of names is made only for
    /// the message.
    pub fn check(&self, kind: &str, accepted: &[OptionSpec]) -> Result<(), DataError> {
        if let Some(n) = self
            .names()
            .find(|n| !accepted.iter().any(|s| s.name == *n))
        {
            return Err(DataError::BadOption {
                name: n.to_string(),
                message: if accepted.is_empty() {
                    format!("kind {kind} takes no options")
                } else {
                    let names: Vec<&str> = accepted.iter().map(|s| s.name).collect();
                    format!(
                        "not an option of kind {kind} (it takes {})",
                        names.join(", ")
                    )
                },
            });
        }
        accepted
            .iter()
            .filter(|s| self.has(s.name))
            .try_for_each(|s| self.check_value(s))
    }

    /// An error unless the value given for `spec` is one it declares.
    fn check_value(&self, spec: &OptionSpec) -> Result<(), DataError> {
        let name = spec.name;
        let refused = |message: String| {
            Err(DataError::BadOption {
                name: name.to_string(),
                message,
            })
        };
        match spec.ty {
            OptionType::Flag => self.flag(name).map(drop),
            OptionType::U32 { min, max } => match self.u32(name)? {
                Some(v) if v < min => refused(format!("expected at least {min}, found {v}")),
                Some(v) if v > max => refused(format!("expected at most {max}, found {v}")),
                _ => Ok(()),
            },
            OptionType::U64 => self.u64(name).map(drop),
            OptionType::F64 => self.f64(name).map(drop),
            OptionType::Text | OptionType::Path => self.str(name).map(drop),
            OptionType::Choice(words) => match self.str(name)? {
                Some(w) if !words.contains(&w) => {
                    refused(format!("expected {}, found {w:?}", one_of(words)))
                }
                _ => Ok(()),
            },
            OptionType::Names => self.strings(name).map(drop),
        }
    }

    fn bad(name: &str, expected: &str, found: &Value) -> DataError {
        DataError::BadOption {
            name: name.to_string(),
            message: format!("expected {expected}, found {found}"),
        }
    }

    /// Whether option `name` is given (and not null).
    pub fn has(&self, name: &str) -> bool {
        self.0.get(name).is_some_and(|v| !v.is_null())
    }

    /// An unsigned 32-bit option.
    pub fn u32(&self, name: &str) -> Result<Option<u32>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| Self::bad(name, "an unsigned 32-bit integer", v)),
        }
    }

    /// An unsigned 64-bit option.
    pub fn u64(&self, name: &str) -> Result<Option<u64>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| Self::bad(name, "an unsigned 64-bit integer", v)),
        }
    }

    /// A floating-point option (finite).
    pub fn f64(&self, name: &str) -> Result<Option<f64>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| Self::bad(name, "a finite number", v)),
        }
    }

    /// A boolean option (absent is `false`).
    pub fn flag(&self, name: &str) -> Result<bool, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(Self::bad(name, "true or false", v)),
        }
    }

    /// A string option.
    pub fn str(&self, name: &str) -> Result<Option<&str>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(Self::bad(name, "a string", v)),
        }
    }

    /// A list of strings (a JSON array of strings, or one string of comma-separated names).
    pub fn strings(&self, name: &str) -> Result<Option<Vec<String>>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.split(',').map(str::to_string).collect())),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| Self::bad(name, "a list of strings", &Value::Array(a.clone()))),
            Some(v) => Err(Self::bad(name, "a list of strings", v)),
        }
    }
}

/// The words as a choice: `a, b or c`.
fn one_of(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_typed_and_checked() {
        let v: Value = serde_json::json!({"radius": 2, "column": "text", "bad": -1, "x": true});
        let o = Options::from_json(&v).expect("object");
        assert_eq!(o.u32("radius").ok(), Some(Some(2)));
        assert_eq!(o.u32("missing").ok(), Some(None));
        let e = o.u32("bad").expect_err("negative");
        assert_eq!(
            e.to_string(),
            "option bad: expected an unsigned 32-bit integer, found -1"
        );
        assert_eq!(o.str("column").ok(), Some(Some("text")));
        assert!(o.flag("x").expect("bool"));
        let e = o
            .check(
                "table",
                &[
                    OptionSpec::u32("radius", 0, "R", ""),
                    OptionSpec::new("column", OptionType::Text, "NAME", ""),
                    OptionSpec::flag("x", ""),
                ],
            )
            .expect_err("bad is unknown");
        assert_eq!(
            e.to_string(),
            "option bad: not an option of kind table (it takes radius, column, x)"
        );
        assert!(Options::from_json(&serde_json::json!([1])).is_err());
    }

    #[test]
    fn values_are_checked_against_their_declaration() {
        let specs = [
            OptionSpec::u32("radius", 3, "R", ""),
            OptionSpec::new("bits", OptionType::U32 { min: 1, max: 64 }, "B", ""),
            OptionSpec::new(
                "format",
                OptionType::Choice(&["auto", "csv", "rows"]),
                "F",
                "",
            ),
            OptionSpec::new("how", OptionType::Choice(&["scan", "lists"]), "H", ""),
            OptionSpec::flag("x", ""),
        ];
        let check = |v: Value| {
            Options::from_json(&v)
                .and_then(|o| o.check("table", &specs))
                .map_err(|e| e.to_string())
        };
        let ok = serde_json::json!({"radius": 3, "bits": 64, "format": "csv", "x": false});
        assert_eq!(check(ok), Ok(()));
        assert_eq!(check(serde_json::json!({"radius": null})), Ok(()));
        for (given, want) in [
            (
                serde_json::json!({"radius": 2}),
                "option radius: expected at least 3, found 2",
            ),
            (
                serde_json::json!({"bits": 65}),
                "option bits: expected at most 64, found 65",
            ),
            (
                serde_json::json!({"bits": -1}),
                "option bits: expected an unsigned 32-bit integer, found -1",
            ),
            (
                serde_json::json!({"format": "tsv"}),
                "option format: expected auto, csv or rows, found \"tsv\"",
            ),
            (
                serde_json::json!({"how": "both"}),
                "option how: expected scan or lists, found \"both\"",
            ),
            (
                serde_json::json!({"how": 1}),
                "option how: expected a string, found 1",
            ),
            (
                serde_json::json!({"x": "yes"}),
                "option x: expected true or false, found \"yes\"",
            ),
        ] {
            assert_eq!(check(given).err().as_deref(), Some(want));
        }
    }
}
