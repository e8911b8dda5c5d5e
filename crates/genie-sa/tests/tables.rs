//! Relational search against brute force on 1,000 rows of the Adult data: the match count is the
//! number of query conditions a row meets, evaluated here on the raw values.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_top_k_is, cpu_engine, data_dir, top_k, Rng};
use genie_core::Hit;
use genie_sa::table::schema::AttributeKind;
use genie_sa::table::uci;
use genie_sa::*;

fn read_adult(limit: usize) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let dir = data_dir("adult")?;
    let names =
        uci::column_names(&std::fs::read_to_string(dir.join("adult.names")).unwrap()).unwrap();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_path(dir.join("adult.data"))
        .unwrap();
    let rows = reader
        .records()
        .take(limit)
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    Some((names, rows))
}

/// The interval of `v`, unclamped (the test's own discretization).
fn interval(min: f64, max: f64, bins: u32, v: f64) -> i64 {
    if max <= min {
        return 0;
    }
    ((v - min) / (max - min) * f64::from(bins)).floor() as i64
}

/// Whether a row's raw field meets a condition.
fn meets(schema: &Schema, attr: usize, cond: &Condition, field: &str) -> bool {
    if schema.is_missing(field) {
        return false;
    }
    match &schema.attributes()[attr].kind {
        AttributeKind::Categorical { .. } => matches!(cond, Condition::Value(v) if v == field),
        &AttributeKind::Numeric { min, max, bins } => {
            let last = i64::from(bins) - 1;
            let at = |v: f64| interval(min, max, bins, v).clamp(0, last);
            let x = at(field.parse().unwrap());
            match cond {
                Condition::Value(v) => {
                    let v: f64 = v.parse().unwrap();
                    (min..=max).contains(&v) && at(v) == x
                }
                Condition::Range { lo, hi } => {
                    let (lo, hi) = (lo.unwrap_or(min).max(min), hi.unwrap_or(max).min(max));
                    lo <= hi && at(lo) <= x && x <= at(hi)
                }
                Condition::Near { value, radius } => {
                    let c = if (min..=max).contains(value) {
                        at(*value)
                    } else {
                        interval(min, max, bins, *value)
                    };
                    (x - c).abs() <= i64::from(*radius)
                }
            }
        }
    }
}

fn brute_force(schema: &Schema, rows: &[Vec<String>], q: &TableQuery, k: usize) -> Vec<Hit> {
    let met = |row: &Vec<String>| {
        q.conditions
            .iter()
            .filter(|(a, c)| meets(schema, *a, c, &row[*a]))
            .count()
    };
    top_k(rows.iter().map(met), k)
}

#[test]
fn real_adult_rows_against_brute_force() {
    let Some((names, rows)) = read_adult(1100) else {
        return;
    };
    let (data, extra) = rows.split_at(1000);
    for bins in [1024, 16] {
        let opts = InferOptions {
            bins,
            ..InferOptions::default()
        };
        let t = TableTransform::new(Schema::infer(&names, data, &opts).unwrap());
        let numeric = t
            .schema()
            .attributes()
            .iter()
            .filter(|a| a.is_numeric())
            .count();
        assert_eq!(numeric, 6);
        let engine = cpu_engine(&t, data.iter().map(Vec::as_slice));
        let mut queries = Vec::new();
        let mut rng = Rng(7);
        for radius in [0, 50] {
            for _ in 0..20 {
                let row = &rows[rng.below(rows.len())];
                queries.push(TableQuery::from_row(row, t.schema(), radius).unwrap());
            }
        }
        for row in &extra[..20] {
            queries.push(TableQuery::from_row(row, t.schema(), 5).unwrap());
        }
        for text in [
            "age=30..40 workclass=Private",
            "age=..25 sex=Female hours-per-week=40~3",
            "education=Doctorate capital-gain=1000.. native-country=India",
            "fnlwgt=200000+-10 race=White class=>50K",
            "workclass=? age=200",
            "occupation=Astronaut",
        ] {
            queries.push(TableQuery::parse(text, t.schema()).unwrap());
        }
        let prepared: Vec<_> = queries.iter().map(|q| t.prepare(q).unwrap()).collect();
        assert_top_k_is(&engine, &queries, &prepared, &[1, 10, 100], |q, k| {
            brute_force(t.schema(), data, q, k)
        });
    }
}

#[test]
fn bad_table_input() {
    let names: Vec<String> = ["a", "b"].map(String::from).to_vec();
    let ragged = vec![vec!["1", "x"], vec!["2"]];
    let e = Schema::infer(&names, &ragged, &InferOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "row has 1 fields, expected 2");
    let rows = vec![vec!["1", "x"], vec!["2", "y"]];
    let t = TableTransform::new(Schema::infer(&names, &rows, &InferOptions::default()).unwrap());
    let e = TableQuery::parse("c=1", t.schema()).unwrap_err();
    assert_eq!(e.to_string(), "unknown attribute \"c\" (known: a, b)");
    let e = t
        .keywords(&["1", "x", "extra"], &mut Vec::new())
        .unwrap_err();
    assert!(matches!(
        e,
        SaError::RaggedRow {
            found: 3,
            expected: 2
        }
    ));
    let e = TableQuery::from_row(&["one", "x"], t.schema(), 0).unwrap_err();
    assert_eq!(e.to_string(), "attribute \"a\": \"one\" is not a number");
}
