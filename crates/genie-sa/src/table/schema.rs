//! The schema of a relational table (paper section V-C, Fig. 1): each attribute owns a contiguous
//! block of keywords.
//!
//! * A **categorical** attribute maps each of its values (sorted, as text) to one keyword of its
//!   block.
//! * A **numeric** attribute is discretized into `B` equal-width intervals over `[min, max]` of
//!   the indexed values (the paper uses `B = 1024`, [`DEFAULT_BINS`]): value `v` lies in interval
//!   `floor((v - min) / (max - min) * B)`, clamped to `0..B` (so `max` is in the last one; when
//!   `max == min` every value is in interval 0). Interval `i` is keyword `start + i`.
//!
//! Fields are trimmed of surrounding whitespace; a field equal to a **missing marker** (by default
//! the empty string and `?`) is missing and gives no keyword. In a numeric attribute a field
//! that spells a number that is not finite (`nan`, `inf`, `-Infinity`, ...) is missing too: it
//! is never indexed as a number nor as a category. A schema is inferred from rows: an attribute
//! is numeric when every present value parses as a number (not finite ones being missing), else
//! categorical (kinds can be forced by name).

use crate::error::{Result, SaError};
use genie_core::index::MAX_KEYWORD_SPACE;
use genie_core::Keyword;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// The default number of intervals of a numeric attribute.
pub const DEFAULT_BINS: u32 = 1024;

/// The default missing markers.
pub const DEFAULT_MISSING: [&str; 2] = ["", "?"];

/// What an attribute's values are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum AttributeKind {
    /// Values are labels; `values` are sorted and distinct.
    Categorical {
        /// The values, each one keyword.
        values: Vec<String>,
    },
    /// Values are numbers, discretized into `bins` equal-width intervals over `[min, max]`.
    Numeric {
        /// The smallest indexed value.
        min: f64,
        /// The largest indexed value.
        max: f64,
        /// The number of intervals, at least 1.
        bins: u32,
    },
}

/// One attribute of the schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    /// The attribute's name (unique in the schema).
    pub name: String,
    /// Its kind and value domain.
    #[serde(flatten)]
    pub kind: AttributeKind,
}

impl Attribute {
    /// The number of keywords of the attribute's block (at least 1).
    pub fn block_len(&self) -> u32 {
        match &self.kind {
            AttributeKind::Categorical { values } => (values.len() as u32).max(1),
            AttributeKind::Numeric { bins, .. } => *bins,
        }
    }

    /// Whether the attribute is numeric.
    pub fn is_numeric(&self) -> bool {
        matches!(self.kind, AttributeKind::Numeric { .. })
    }
}

/// A kind forced on an attribute during inference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindHint {
    /// Treat the values as labels even if they are numbers.
    Categorical,
    /// The values must be numbers.
    Numeric,
}

/// Settings of schema inference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InferOptions {
    /// Intervals per numeric attribute.
    pub bins: u32,
    /// Field values (after trimming) that mean "missing".
    pub missing: Vec<String>,
    /// Kinds forced by attribute name.
    pub hints: HashMap<String, KindHint>,
}

impl Default for InferOptions {
    fn default() -> Self {
        Self {
            bins: DEFAULT_BINS,
            missing: DEFAULT_MISSING.map(String::from).to_vec(),
            hints: HashMap::new(),
        }
    }
}

/// What is stored in the index metadata: attributes and missing markers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaRecord {
    /// The attributes in column order.
    pub attributes: Vec<Attribute>,
    /// The missing markers.
    pub missing: Vec<String>,
}

/// Attributes with their keyword blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    record: SchemaRecord,
    starts: Vec<Keyword>,
    space: u32,
    by_name: HashMap<String, usize>,
    values: Vec<HashMap<String, u32>>,
}

impl Schema {
    /// A schema of given attributes (names unique, categorical values distinct, numeric bounds
    /// finite with `min <= max`, `bins >= 1`).
    pub fn new(record: SchemaRecord) -> Result<Self> {
        let mut starts = Vec::with_capacity(record.attributes.len());
        let mut space = 0u64;
        let mut by_name = HashMap::new();
        let mut values = Vec::with_capacity(record.attributes.len());
        for (i, a) in record.attributes.iter().enumerate() {
            if by_name.insert(a.name.clone(), i).is_some() {
                return Err(SaError::InvalidParameter(format!(
                    "attribute {:?} appears twice",
                    a.name
                )));
            }
            values.push(check_kind(a)?);
            starts.push(space as Keyword);
            space += u64::from(a.block_len());
        }
        if space > MAX_KEYWORD_SPACE {
            return Err(SaError::InvalidParameter(format!(
                "the attributes need {space} keywords, more than {MAX_KEYWORD_SPACE}"
            )));
        }
        Ok(Self {
            record,
            starts,
            space: space as u32,
            by_name,
            values,
        })
    }

    /// Infers a schema from rows of fields (`names.len()` fields each).
    pub fn infer<R: AsRef<[S]>, S: AsRef<str>>(
        names: &[String],
        rows: &[R],
        options: &InferOptions,
    ) -> Result<Self> {
        if options.bins == 0 {
            return Err(SaError::InvalidParameter("bins must be at least 1".into()));
        }
        if let Some(name) = options.hints.keys().find(|n| !names.contains(n)) {
            return Err(unknown_attribute(name, names));
        }
        let missing = &options.missing;
        let is_missing = |v: &str| missing.iter().any(|m| m == v);
        for row in rows {
            if row.as_ref().len() != names.len() {
                return Err(SaError::RaggedRow {
                    found: row.as_ref().len(),
                    expected: names.len(),
                });
            }
        }
        let field = |row: &R, i: usize| row.as_ref()[i].as_ref().trim().to_string();
        let mut attributes = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let present = rows.iter().map(|r| field(r, i)).filter(|v| !is_missing(v));
            let hint = options.hints.get(name).copied();
            let kind = if hint == Some(KindHint::Categorical) {
                None
            } else {
                numeric_range(present.clone(), name, hint == Some(KindHint::Numeric))?
            };
            let kind = match kind {
                Some((min, max)) => AttributeKind::Numeric {
                    min,
                    max,
                    bins: options.bins,
                },
                None => AttributeKind::Categorical {
                    values: present.collect::<BTreeSet<_>>().into_iter().collect(),
                },
            };
            attributes.push(Attribute {
                name: name.clone(),
                kind,
            });
        }
        Self::new(SchemaRecord {
            attributes,
            missing: missing.clone(),
        })
    }

    /// The attributes and missing markers (for the index metadata).
    pub fn record(&self) -> &SchemaRecord {
        &self.record
    }

    /// The attributes in column order.
    pub fn attributes(&self) -> &[Attribute] {
        &self.record.attributes
    }

    /// The first keyword of each attribute's block.
    pub fn block_starts(&self) -> &[Keyword] {
        &self.starts
    }

    /// The keyword space: the sum of the block lengths.
    pub fn keyword_space(&self) -> u32 {
        self.space
    }

    /// The position of attribute `name`.
    pub fn position(&self, name: &str) -> Result<usize> {
        self.by_name.get(name).copied().ok_or_else(|| {
            let names: Vec<String> = self.attributes().iter().map(|a| a.name.clone()).collect();
            unknown_attribute(name, &names)
        })
    }

    /// Whether a trimmed field value means "missing".
    pub fn is_missing(&self, value: &str) -> bool {
        self.record.missing.iter().any(|m| m == value)
    }

    /// The keyword of categorical value `value` of attribute `attr`, if the data has it.
    pub fn category_keyword(&self, attr: usize, value: &str) -> Option<Keyword> {
        self.values[attr].get(value).map(|&i| self.starts[attr] + i)
    }

    /// The keyword range `[lo, hi]` of attribute `attr`'s block holding intervals `lo..=hi`
    /// (signed interval numbers are clipped to the block); `None` when nothing is left.
    pub fn interval_keywords(&self, attr: usize, lo: i64, hi: i64) -> Option<(Keyword, Keyword)> {
        let last = i64::from(self.attributes()[attr].block_len()) - 1;
        let (lo, hi) = (lo.max(0), hi.min(last));
        (lo <= hi).then(|| {
            let s = self.starts[attr];
            (s + lo as Keyword, s + hi as Keyword)
        })
    }

    /// The keyword of one field of a row: `None` when the field is missing.
    pub fn field_keyword(&self, attr: usize, raw: &str) -> Result<Option<Keyword>> {
        let value = raw.trim();
        if self.is_missing(value) {
            return Ok(None);
        }
        let a = &self.attributes()[attr];
        match &a.kind {
            AttributeKind::Categorical { .. } => match self.category_keyword(attr, value) {
                Some(k) => Ok(Some(k)),
                None => Err(SaError::NotInDictionary(format!(
                    "value {value:?} of attribute {:?}",
                    a.name
                ))),
            },
            AttributeKind::Numeric { .. } if is_not_finite_number(value) => Ok(None),
            AttributeKind::Numeric { min, max, .. } => {
                let v = parse_number(&a.name, value)?;
                if v < *min || v > *max {
                    return Err(SaError::BadValue {
                        attribute: a.name.clone(),
                        reason: format!("{v} lies outside the indexed range [{min}, {max}]"),
                    });
                }
                let i = self.interval(attr, v).unwrap_or(0);
                Ok(Some(self.starts[attr] + i as Keyword))
            }
        }
    }

    /// The keyword of one field of a row written to a live index: like
    /// [`Schema::field_keyword`], but a number outside `[min, max]` goes to the first or last
    /// interval (the bins stay those of the build).
    pub fn field_keyword_clamped(&self, attr: usize, raw: &str) -> Result<Option<Keyword>> {
        let value = raw.trim();
        let a = &self.attributes()[attr];
        match &a.kind {
            AttributeKind::Numeric { .. } if !self.is_missing(value) => {
                if is_not_finite_number(value) {
                    return Ok(None);
                }
                let v = parse_number(&a.name, value)?;
                let i = self.interval(attr, v).unwrap_or(0);
                Ok(Some(self.starts[attr] + i as Keyword))
            }
            _ => self.field_keyword(attr, value),
        }
    }

    /// The interval number of `v` for numeric attribute `attr`, not clamped (may be negative or
    /// at least `bins` for values outside `[min, max]`); `None` for a categorical attribute.
    pub fn raw_interval(&self, attr: usize, v: f64) -> Option<i64> {
        match self.attributes()[attr].kind {
            AttributeKind::Numeric { min, max, bins } => {
                if max <= min {
                    return Some(if v < min {
                        -1
                    } else if v > max {
                        1
                    } else {
                        0
                    });
                }
                let x = ((v - min) / (max - min) * f64::from(bins)).floor();
                Some(x.clamp(-(1i64 << 40) as f64, (1i64 << 40) as f64) as i64)
            }
            AttributeKind::Categorical { .. } => None,
        }
    }

    /// The interval of `v` for numeric attribute `attr`, with `max` in the last interval and
    /// values outside `[min, max]` clamped to the first or last.
    pub fn interval(&self, attr: usize, v: f64) -> Option<u32> {
        let bins = i64::from(self.attributes()[attr].block_len());
        self.raw_interval(attr, v)
            .map(|i| i.clamp(0, bins - 1) as u32)
    }
}

/// Parses a numeric field (finite `f64`).
pub fn parse_number(attribute: &str, value: &str) -> Result<f64> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| SaError::BadValue {
            attribute: attribute.to_string(),
            reason: format!("{value:?} is not a number"),
        })
}

fn unknown_attribute(name: &str, names: &[String]) -> SaError {
    SaError::UnknownAttribute {
        name: name.to_string(),
        known: names.join(", "),
    }
}

/// `Some((min, max))` when every value is a finite number (`(0, 0)` when there is none); with
/// `required`, a value that is not a number is an error.
/// Whether a field spells a number that is not finite (`nan`, `inf`, `-Infinity`, ...): in a
/// numeric column such a field is a missing value, not a category nor an error.
pub fn is_not_finite_number(value: &str) -> bool {
    value.parse::<f64>().is_ok_and(|x| !x.is_finite())
}

fn numeric_range(
    values: impl Iterator<Item = String>,
    name: &str,
    required: bool,
) -> Result<Option<(f64, f64)>> {
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for (row, v) in values.enumerate() {
        if is_not_finite_number(&v) {
            continue;
        }
        match parse_number(name, &v) {
            Ok(x) => {
                min = min.min(x);
                max = max.max(x);
            }
            Err(_) if required => {
                return Err(SaError::BadValue {
                    attribute: name.to_string(),
                    reason: format!(
                        "{v:?} is not a number (the {} value given)",
                        ordinal(row + 1)
                    ),
                })
            }
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(if min > max { (0.0, 0.0) } else { (min, max) }))
}

/// `1st`, `2nd`, `3rd`, `4th`, ...
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn check_kind(a: &Attribute) -> Result<HashMap<String, u32>> {
    let bad = |reason: String| SaError::BadValue {
        attribute: a.name.clone(),
        reason,
    };
    match &a.kind {
        AttributeKind::Categorical { values } => {
            let map: HashMap<String, u32> = values
                .iter()
                .enumerate()
                .map(|(i, v)| (v.clone(), i as u32))
                .collect();
            if map.len() != values.len() {
                return Err(bad("categorical values repeat".into()));
            }
            Ok(map)
        }
        AttributeKind::Numeric { min, max, bins } => {
            if !(min.is_finite() && max.is_finite() && min <= max) || *bins == 0 {
                return Err(bad(format!(
                    "numeric domain [{min}, {max}] with {bins} intervals"
                )));
            }
            Ok(HashMap::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn rows() -> Vec<Vec<&'static str>> {
        vec![
            vec!["39", " State-gov", "13"],
            vec!["50", "Private", "?"],
            vec!["17", "Private ", "9"],
            vec!["90", "?", "16"],
        ]
    }

    #[test]
    fn not_finite_numbers_are_missing_values() {
        let rows = vec![
            vec!["25", "a"],
            vec!["nan", "b"],
            vec!["-Infinity", "nan"],
            vec!["40", "c"],
        ];
        let s = Schema::infer(&names(&["age", "tag"]), &rows, &InferOptions::default())
            .expect("schema");
        assert!(
            matches!(s.attributes()[0].kind, AttributeKind::Numeric { min, max, .. } if min == 25.0 && max == 40.0)
        );
        assert!(matches!(
            s.attributes()[1].kind,
            AttributeKind::Categorical { .. }
        ));
        assert_eq!(s.field_keyword(0, "NaN").expect("missing"), None);
        assert_eq!(s.field_keyword(0, "inf").expect("missing"), None);
        assert!(s.field_keyword(1, "nan").expect("a category").is_some());
        let forced = InferOptions {
            hints: [("tag".to_string(), KindHint::Numeric)]
                .into_iter()
                .collect(),
            ..InferOptions::default()
        };
        let e = Schema::infer(&names(&["age", "tag"]), &rows, &forced).expect_err("tag is text");
        assert_eq!(
            e.to_string(),
            "attribute \"tag\": \"a\" is not a number (the 1st value given)"
        );
    }

    #[test]
    fn inferred_kinds_and_blocks() {
        let opts = InferOptions {
            bins: 4,
            ..InferOptions::default()
        };
        let s =
            Schema::infer(&names(&["age", "workclass", "edu"]), &rows(), &opts).expect("schema");
        assert_eq!(
            s.attributes()[0].kind,
            AttributeKind::Numeric {
                min: 17.0,
                max: 90.0,
                bins: 4
            }
        );
        assert_eq!(
            s.attributes()[1].kind,
            AttributeKind::Categorical {
                values: names(&["Private", "State-gov"])
            }
        );
        assert_eq!(s.block_starts(), [0, 4, 6]);
        assert_eq!(s.keyword_space(), 10);
        // (39 - 17) / 73 * 4 = 1.2 -> 1; 90 is max -> last interval 3
        assert_eq!(s.field_keyword(0, "39").expect("age"), Some(1));
        assert_eq!(s.field_keyword(0, "90").expect("age"), Some(3));
        assert_eq!(s.field_keyword(1, " State-gov ").expect("wc"), Some(5));
        assert_eq!(s.field_keyword(1, "?").expect("missing"), None);
        assert!(s.field_keyword(1, "Never-worked").is_err());
        assert!(s.field_keyword(0, "abc").is_err());
        assert!(s.field_keyword(0, "91").is_err());
        assert_eq!(s.raw_interval(0, 200.0), Some(10));
        assert_eq!(s.interval(0, 200.0), Some(3));
        assert_eq!(s.interval_keywords(0, -3, 1), Some((0, 1)));
        assert_eq!(s.interval_keywords(0, 4, 9), None);
    }

    #[test]
    fn hints_and_errors() {
        let mut opts = InferOptions::default();
        opts.hints.insert("edu".into(), KindHint::Categorical);
        let s =
            Schema::infer(&names(&["age", "workclass", "edu"]), &rows(), &opts).expect("schema");
        assert!(!s.attributes()[2].is_numeric());
        opts.hints.insert("workclass".into(), KindHint::Numeric);
        let e = Schema::infer(&names(&["age", "workclass", "edu"]), &rows(), &opts)
            .expect_err("numeric workclass");
        assert!(e.to_string().contains("not a number"), "{e}");
        let mut opts = InferOptions::default();
        opts.hints.insert("nope".into(), KindHint::Numeric);
        let e = Schema::infer(&names(&["age", "workclass", "edu"]), &rows(), &opts)
            .expect_err("unknown");
        assert!(matches!(e, SaError::UnknownAttribute { .. }));
        let ragged = vec![vec!["1", "a"], vec!["2"]];
        let e = Schema::infer(&names(&["x", "y"]), &ragged, &InferOptions::default())
            .expect_err("ragged");
        assert!(matches!(
            e,
            SaError::RaggedRow {
                found: 1,
                expected: 2
            }
        ));
        assert!(s.position("workclass").is_ok());
        let e = s.position("Age").expect_err("case");
        assert_eq!(
            e.to_string(),
            "unknown attribute \"Age\" (known: age, workclass, edu)"
        );
    }

    #[test]
    fn record_round_trip() {
        let s = Schema::infer(
            &names(&["age", "workclass", "edu"]),
            &rows(),
            &InferOptions::default(),
        )
        .expect("schema");
        let json = serde_json::to_string(s.record()).expect("json");
        let back: SchemaRecord = serde_json::from_str(&json).expect("parse");
        assert_eq!(Schema::new(back).expect("schema"), s);
    }
}
