//! Queries on a relational table (paper section V-C: "a range selection query on a relational
//! table is a set of specific ranges on attributes"): per attribute at most one condition, each
//! one query item over the attribute's keyword block; attributes without a condition (or with a
//! missing value) are not items. The match count of a row is the number of conditions it meets.
//!
//! **Conditions** (`ATTR=SPEC`, separated by whitespace), for a numeric attribute:
//! * `v` — the interval of `v` (a value outside the indexed `[min, max]` matches nothing);
//! * `lo..hi`, `lo..`, `..hi` — the intervals of the values from `lo` to `hi` (inclusive),
//!   clipped to the indexed range;
//! * `v~r` or `v+-r` — the interval of `v` plus or minus `r` intervals (the paper's
//!   `[discretized_value - r, discretized_value + r]`), clipped to the block.
//!
//! For a categorical attribute `SPEC` is the value itself, compared after trimming; a value the
//! data does not have matches nothing. A missing marker (`?`, empty) as `SPEC` means no condition.
//!
//! **Rows**: a row of the table's format queries every attribute it has a value for: a
//! categorical value exactly, a numeric value `v` as `v~r` with a given radius `r`.

use crate::error::{Result, SaError};
use crate::table::schema::{parse_number, AttributeKind, Schema};
use genie_core::{Item, Keyword, Query};

/// A condition on one attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// A categorical value, or a numeric value's interval.
    Value(String),
    /// Numeric values from `lo` to `hi` (inclusive; `None` is unbounded).
    Range {
        /// The lowest value, if bounded.
        lo: Option<f64>,
        /// The highest value, if bounded.
        hi: Option<f64>,
    },
    /// The interval of a numeric value plus or minus `radius` intervals.
    Near {
        /// The value.
        value: f64,
        /// Intervals on each side.
        radius: u32,
    },
}

/// A query on a table: conditions by attribute position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableQuery {
    /// `(attribute position, condition)`, at most one per attribute.
    pub conditions: Vec<(usize, Condition)>,
}

impl TableQuery {
    /// Parses whitespace-separated conditions `ATTR=SPEC` (see the module docs).
    ///
    /// ```
    /// use genie_sa::table::schema::{Schema, InferOptions};
    /// use genie_sa::table::query::TableQuery;
    /// let names = ["age", "workclass"].map(String::from);
    /// let rows = [["20", "Private"], ["60", "State-gov"]];
    /// let schema = Schema::infer(&names, &rows, &InferOptions::default()).unwrap();
    /// let q = TableQuery::parse("age=30..40 workclass=Private", &schema).unwrap();
    /// assert_eq!(q.conditions.len(), 2);
    /// assert!(TableQuery::parse("salary=3", &schema).is_err());
    /// ```
    pub fn parse(text: &str, schema: &Schema) -> Result<Self> {
        let mut q = Self::default();
        for token in text.split_whitespace() {
            let (name, spec) = token.split_once('=').ok_or_else(|| {
                SaError::BadQuery(format!("bad condition {token:?}: expected ATTR=VALUE"))
            })?;
            let attr = schema.position(name)?;
            if schema.is_missing(spec.trim()) {
                continue;
            }
            let cond = match schema.attributes()[attr].kind {
                AttributeKind::Categorical { .. } => Condition::Value(spec.to_string()),
                AttributeKind::Numeric { .. } => parse_numeric_spec(name, spec)?,
            };
            q.push(schema, attr, cond)?;
        }
        Ok(q)
    }

    /// The query of a row: every present field, numeric ones with `radius` intervals each side.
    pub fn from_row<S: AsRef<str>>(fields: &[S], schema: &Schema, radius: u32) -> Result<Self> {
        let attrs = schema.attributes();
        if fields.len() != attrs.len() {
            return Err(SaError::RaggedRow {
                found: fields.len(),
                expected: attrs.len(),
            });
        }
        let mut q = Self::default();
        for (i, (f, a)) in fields.iter().zip(attrs).enumerate() {
            let v = f.as_ref().trim();
            if schema.is_missing(v) {
                continue;
            }
            let cond = match a.kind {
                AttributeKind::Categorical { .. } => Condition::Value(v.to_string()),
                AttributeKind::Numeric { .. } => Condition::Near {
                    value: parse_number(&a.name, v)?,
                    radius,
                },
            };
            q.conditions.push((i, cond));
        }
        Ok(q)
    }

    /// Adds a condition on attribute `attr` (one per attribute).
    pub fn push(&mut self, schema: &Schema, attr: usize, cond: Condition) -> Result<()> {
        let a = &schema.attributes()[attr];
        if self.conditions.iter().any(|&(i, _)| i == attr) {
            return Err(SaError::BadQuery(format!(
                "attribute {:?} has two conditions",
                a.name
            )));
        }
        if !a.is_numeric() && !matches!(cond, Condition::Value(_)) {
            return Err(SaError::BadValue {
                attribute: a.name.clone(),
                reason: "ranges and radii apply to numeric attributes only".into(),
            });
        }
        self.conditions.push((attr, cond));
        Ok(())
    }

    /// The keyword range of each condition, in order: `None` for one that can match nothing
    /// (a category the index has not seen, an interval outside every bin).
    pub fn condition_ranges(&self, schema: &Schema) -> Result<Vec<Option<(Keyword, Keyword)>>> {
        self.conditions
            .iter()
            .map(|(attr, cond)| condition_keywords(schema, *attr, cond))
            .collect()
    }

    /// The match-count query: one item per condition that can match something.
    pub fn to_query(&self, schema: &Schema) -> Result<Query> {
        let mut items = Vec::with_capacity(self.conditions.len());
        for (attr, cond) in &self.conditions {
            if let Some((lo, hi)) = condition_keywords(schema, *attr, cond)? {
                items.push(Item { lo, hi, weight: 1 });
            }
        }
        Ok(Query { items })
    }
}

fn parse_numeric_spec(name: &str, spec: &str) -> Result<Condition> {
    let num = |s: &str| parse_number(name, s.trim());
    let bound = |s: &str| {
        if s.trim().is_empty() {
            Ok(None)
        } else {
            num(s).map(Some)
        }
    };
    if let Some((lo, hi)) = spec.split_once("..") {
        return Ok(Condition::Range {
            lo: bound(lo)?,
            hi: bound(hi)?,
        });
    }
    let near = spec.split_once('~').or_else(|| spec.split_once("+-"));
    if let Some((v, r)) = near {
        let radius = r.trim().parse::<u32>().map_err(|_| SaError::BadValue {
            attribute: name.to_string(),
            reason: format!("radius {r:?} is not a whole number of intervals"),
        })?;
        return Ok(Condition::Near {
            value: num(v)?,
            radius,
        });
    }
    num(spec)?;
    Ok(Condition::Value(spec.to_string()))
}

/// The keyword range of one condition, `None` when it can match nothing.
fn condition_keywords(
    schema: &Schema,
    attr: usize,
    cond: &Condition,
) -> Result<Option<(u32, u32)>> {
    let a = &schema.attributes()[attr];
    let AttributeKind::Numeric { min, max, .. } = a.kind else {
        return Ok(match cond {
            Condition::Value(v) => schema.category_keyword(attr, v.trim()).map(|k| (k, k)),
            _ => None,
        });
    };
    let inside = |v: f64| (min..=max).contains(&v);
    let interval = |v: f64| i64::from(schema.interval(attr, v).unwrap_or(0));
    Ok(match cond {
        Condition::Value(v) => {
            let v = parse_number(&a.name, v.trim())?;
            inside(v)
                .then(|| schema.interval_keywords(attr, interval(v), interval(v)))
                .flatten()
        }
        Condition::Range { lo, hi } => {
            let (lo, hi) = (lo.unwrap_or(min).max(min), hi.unwrap_or(max).min(max));
            (lo <= hi)
                .then(|| schema.interval_keywords(attr, interval(lo), interval(hi)))
                .flatten()
        }
        Condition::Near { value, radius } => {
            let center = if inside(*value) {
                interval(*value)
            } else {
                schema.raw_interval(attr, *value).unwrap_or(0)
            };
            let r = i64::from(*radius);
            schema.interval_keywords(attr, center - r, center + r)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::schema::InferOptions;

    fn schema() -> Schema {
        let names = ["age", "workclass"].map(String::from);
        let rows = [["0", "Private"], ["100", "State-gov"], ["?", "Local-gov"]];
        let opts = InferOptions {
            bins: 10,
            ..InferOptions::default()
        };
        Schema::infer(&names, &rows, &opts).expect("schema")
    }

    fn items(q: &Query) -> Vec<(u32, u32)> {
        q.items.iter().map(|i| (i.lo, i.hi)).collect()
    }

    #[test]
    fn golden_items() {
        let s = schema();
        // age: keywords 0..10 (interval width 10), workclass: 10 Local-gov, 11 Private, 12 State-gov
        let q = |text: &str| {
            items(
                &TableQuery::parse(text, &s)
                    .expect(text)
                    .to_query(&s)
                    .expect(text),
            )
        };
        assert_eq!(q("age=30..40 workclass=Private"), [(3, 4), (11, 11)]);
        assert_eq!(q("age=35"), [(3, 3)]);
        assert_eq!(q("age=100"), [(9, 9)]);
        assert_eq!(q("age=101"), []);
        assert_eq!(q("age=..15"), [(0, 1)]);
        assert_eq!(q("age=95.."), [(9, 9)]);
        assert_eq!(q("age=-50..-10"), []);
        assert_eq!(q("age=35~2"), [(1, 5)]);
        assert_eq!(q("age=35+-2"), [(1, 5)]);
        assert_eq!(q("age=5~3"), [(0, 3)]);
        assert_eq!(q("age=-25~3"), [(0, 0)]);
        assert_eq!(q("age=-50~3"), []);
        assert_eq!(q("workclass=Never-worked"), []);
        assert_eq!(q("workclass=? age=?"), []);
        assert_eq!(q(""), []);
        let row = TableQuery::from_row(&["42", "State-gov"], &s, 1).expect("row");
        assert_eq!(items(&row.to_query(&s).expect("row")), [(3, 5), (12, 12)]);
        let row = TableQuery::from_row(&["?", "Private"], &s, 1).expect("row");
        assert_eq!(items(&row.to_query(&s).expect("row")), [(11, 11)]);
    }

    #[test]
    fn bad_queries() {
        let s = schema();
        let err = |text: &str| TableQuery::parse(text, &s).expect_err(text).to_string();
        assert_eq!(
            err("salary=3"),
            "unknown attribute \"salary\" (known: age, workclass)"
        );
        assert!(err("age").contains("expected ATTR=VALUE"));
        assert!(err("age=x..3").contains("not a number"));
        assert!(err("age=3~x").contains("radius"));
        assert!(err("age=3 age=4").contains("two conditions"));
        assert!(err("age=abc").contains("not a number"));
        let mut q = TableQuery::default();
        let e = q
            .push(
                &s,
                1,
                Condition::Near {
                    value: 1.0,
                    radius: 1,
                },
            )
            .expect_err("categorical radius");
        assert!(e.to_string().contains("numeric attributes only"), "{e}");
        let e = TableQuery::from_row(&["1"], &s, 0).expect_err("ragged");
        assert_eq!(e.to_string(), "row has 1 fields, expected 2");
        assert!(TableQuery::from_row(&["x", "Private"], &s, 0).is_err());
    }
}
