//! Search on relational data (paper section V-C): the Adult census rows matching the most
//! conditions of a query. Numeric attributes are discretized into 1024 equal-width intervals;
//! a row query searches each numeric value +- 50 intervals (the paper's setting) and each
//! categorical value exactly.
//!
//! ```text
//! cargo run --release --example relational -- [K]
//! ```

mod common;

use anyhow::{Context, Result};
use genie::core::{DeviceChoice, Engine, SearchParams, Transform};
use genie::sa::table::uci;
use genie::sa::{InferOptions, Schema, TableQuery, TableTransform};
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<()> {
    let k: u32 = std::env::args().nth(1).map_or(Ok(5), |s| s.parse())?;
    let dir = common::data_dir("adult")?;
    let names = uci::column_names(&std::fs::read_to_string(dir.join("adult.names"))?)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_path(dir.join("adult.data"))
        .context("cannot open adult.data")?;
    let mut rows: Vec<Vec<String>> = Vec::new();
    for record in reader.records() {
        rows.push(record?.iter().map(String::from).collect());
    }

    let t0 = Instant::now();
    let schema = Schema::infer(&names, &rows, &InferOptions::default())?;
    let transform = TableTransform::new(schema);
    let mut builder = transform.builder();
    let mut keywords = Vec::new();
    for r in &rows {
        keywords.clear();
        transform.keywords(r, &mut keywords)?;
        builder.push_object(&keywords)?;
    }
    let engine = Engine::new(Arc::new(builder.build()?), DeviceChoice::from_env()?)?;
    let kinds: Vec<String> = transform
        .schema()
        .attributes()
        .iter()
        .map(|a| format!("{}{}", a.name, if a.is_numeric() { "#" } else { "" }))
        .collect();
    println!(
        "{} rows, attributes (# numeric): {}\nindex built in {:.2?} ({})\n",
        rows.len(),
        kinds.join(" "),
        t0.elapsed(),
        engine.backend_name()
    );

    // 1024 row queries with radius 50, as in the paper's experiments
    let batch: Vec<_> = (0..1024)
        .map(|i| TableQuery::from_row(&rows[(i * 31) % rows.len()], transform.schema(), 50))
        .map(|q| q.and_then(|q| transform.prepare(&q)))
        .collect::<Result<_, _>>()?;
    let t1 = Instant::now();
    engine.search(&batch, &SearchParams::top_k(100))?;
    println!(
        "1024 row queries (radius 50), top-100: {:.2?}\n",
        t1.elapsed()
    );

    let mut queries: Vec<(String, TableQuery)> = Vec::new();
    for text in [
        "age=30..40 workclass=Private education=Masters",
        "age=60.. hours-per-week=50.. sex=Female occupation=Exec-managerial",
        "capital-gain=10000.. native-country=India class=>50K",
    ] {
        queries.push((
            text.to_string(),
            TableQuery::parse(text, transform.schema())?,
        ));
    }
    for id in [0usize, 7] {
        let q = TableQuery::from_row(&rows[id], transform.schema(), 50)?;
        queries.push((
            format!("row {id} +- 50 intervals: {}", rows[id].join(", ")),
            q,
        ));
    }
    let prepared = queries
        .iter()
        .map(|(_, q)| transform.prepare(q))
        .collect::<Result<Vec<_>, _>>()?;
    let results = engine.search(&prepared, &SearchParams::top_k(k))?;
    for ((text, q), hits) in queries.iter().zip(&results) {
        println!("query: {text} ({} conditions)", q.conditions.len());
        for h in hits {
            println!(
                "  {:>6}  meets {:>2}  {}",
                h.id,
                h.count,
                rows[h.id as usize].join(", ")
            );
        }
        println!();
    }
    Ok(())
}
