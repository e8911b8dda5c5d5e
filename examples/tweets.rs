//! Short-document search (paper section V-B): the tweets most similar to sample queries, where
//! similarity is the number of distinct words shared (stop words removed, as in the paper).
//!
//! ```text
//! cargo run --release --example tweets -- [K]
//! ```

mod common;

use anyhow::{Context, Result};
use genie::core::{DeviceChoice, Engine, SearchParams, Transform};
use genie::sa::{DocumentTransform, Tokenizer};
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<()> {
    let k: u32 = std::env::args().nth(1).map_or(Ok(5), |s| s.parse())?;
    let path = common::data_dir("tweets")?.join("trump_tweets.csv");
    let mut reader = csv::ReaderBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_path(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let column = reader
        .headers()?
        .iter()
        .position(|h| h == "text")
        .context("no text column")?;
    let mut tweets = Vec::new();
    for record in reader.records() {
        tweets.push(record?.get(column).unwrap_or("").trim().to_string());
    }

    let t0 = Instant::now();
    let transform = DocumentTransform::build(Tokenizer::new(), tweets.iter().map(String::as_str))?;
    let mut builder = transform.builder();
    let mut keywords = Vec::new();
    for t in &tweets {
        keywords.clear();
        transform.keywords(t, &mut keywords)?;
        builder.push_object(&keywords)?;
    }
    let engine = Engine::new(Arc::new(builder.build()?), DeviceChoice::from_env()?)?;
    println!(
        "{} tweets, {} distinct words, index built in {:.2?} ({})",
        tweets.len(),
        transform.words().len(),
        t0.elapsed(),
        engine.backend_name()
    );

    let mut queries: Vec<String> = [
        "Make America great again!",
        "fake news media",
        "The Apprentice is back on NBC tonight",
        "China trade deal tariffs",
        "golf course in Scotland",
    ]
    .map(String::from)
    .to_vec();
    queries.extend([100, 5_000, 15_000].map(|i| tweets[i % tweets.len()].clone()));
    let prepared: Vec<_> = queries.iter().map(|q| transform.prepare(q)).collect();
    let t1 = Instant::now();
    let results = engine.search(&prepared, &SearchParams::top_k(k))?;
    println!(
        "searched {} queries in {:.2?}\n",
        queries.len(),
        t1.elapsed()
    );
    for (q, hits) in queries.iter().zip(&results) {
        println!("query: {q}");
        println!("  words: {}", Tokenizer::new().words(q).join(" "));
        for h in hits {
            let text: String = tweets[h.id as usize].chars().take(100).collect();
            println!(
                "  {:>6}  shares {:>2}  {}",
                h.id,
                h.count,
                text.replace('\n', " ")
            );
        }
        println!();
    }
    Ok(())
}
