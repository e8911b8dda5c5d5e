//! Sequence similarity search under edit distance (paper section V-A, Table VI): top-1 accuracy
//! of GENIE against brute force for queries made by changing 10% to 40% of the characters of
//! indexed sequences.
//!
//! ```text
//! cargo run --release --example sequences -- [words|titles] [QUERIES] [n] [CSV]
//! ```
//!
//! With CSV, the rows of the table are also written to that file (with the device, the commit
//! and the parameters), e.g. under `bench/runs/`.
//!
//! `words` is an English word list (104,334 words), `titles` 58,788 movie titles (the stand-in
//! for the paper's DBLP titles). A query is a random indexed sequence with `round(p * len)`
//! distinct characters replaced by other random lowercase letters. A query counts as correct when
//! its top-1 hit has the smallest edit distance of all sequences (computed by brute force); the
//! `exact` column is the share of queries that Theorem 5.2 proves exact. Two settings are run:
//! one round of K = 32 candidates (the paper's) and the defaults of `genie search` (K = 32,
//! repeated with K doubled up to 1024 while a query is not proven).

mod common;

use anyhow::{Context, Result};
use genie::core::{DeviceChoice, Engine};
use genie::sa::sequences::edit_distance::Pattern;
use genie::sa::{
    build_sequence_index, NGramConfig, SequenceSearchParams, SequenceSearcher, SequenceStore,
    StringTable,
};
use rand::rngs::StdRng;
use rand::seq::{index::sample, IndexedRandom};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

fn load(dataset: &str) -> Result<Vec<String>> {
    let dir = common::data_dir(dataset)?;
    match dataset {
        "words" => Ok(std::fs::read_to_string(dir.join("american-english"))?
            .lines()
            .map(String::from)
            .collect()),
        "titles" => {
            let mut r = csv::Reader::from_path(dir.join("movies.csv"))?;
            r.records()
                .map(|rec| Ok(rec?.get(0).unwrap_or("").to_string()))
                .collect()
        }
        other => anyhow::bail!("unknown data set {other:?} (words or titles)"),
    }
}

/// `s` with `round(fraction * len)` distinct characters replaced by other lowercase letters.
fn modify(s: &str, fraction: f64, rng: &mut StdRng) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    let changes = ((fraction * chars.len() as f64).round() as usize).min(chars.len());
    let letters: Vec<char> = ('a'..='z').collect();
    for p in sample(rng, chars.len(), changes) {
        let old = chars[p];
        chars[p] = *letters
            .iter()
            .filter(|&&c| c != old)
            .collect::<Vec<_>>()
            .choose(rng)
            .copied()
            .unwrap_or(&'a');
    }
    chars.into_iter().collect()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dataset = args.first().map_or("words", String::as_str);
    let num_queries: usize = args.get(1).map_or(Ok(1024), |s| s.parse())?;
    let n: usize = args
        .get(2)
        .map_or(Ok(NGramConfig::default().n), |s| s.parse())?;
    let mut csv_out = match args.get(3) {
        Some(path) => {
            let mut w =
                csv::Writer::from_path(path).with_context(|| format!("cannot create {path}"))?;
            w.write_record([
                "device",
                "commit",
                "dataset",
                "sequences",
                "n",
                "queries",
                "modified",
                "setting",
                "candidates",
                "max_candidates",
                "accuracy",
                "exact",
                "seconds",
                "seed",
            ])?;
            Some(w)
        }
        None => None,
    };
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".to_string(), |s| s.trim().to_string());
    let seqs = load(dataset).with_context(|| format!("cannot read {dataset}"))?;
    let config = NGramConfig {
        n,
        ..NGramConfig::default()
    };
    println!(
        "{dataset}: {} sequences, {num_queries} queries per row, n = {n}, padded",
        seqs.len()
    );

    let t0 = Instant::now();
    let table: StringTable = seqs.iter().collect();
    let (transform, index) = build_sequence_index(config, &table)?;
    let store = SequenceStore::new(table, config.alphabet)?;
    let engine = Engine::new(Arc::new(index), DeviceChoice::from_env()?)?;
    let searcher = SequenceSearcher::new(&engine, &transform, &store)?;
    println!(
        "index built in {:.2?} ({})\n",
        t0.elapsed(),
        engine.backend_name()
    );

    println!(
        "{:>8}  {:>13}  {:>13}  {:>12}  {:>13}  {:>13}  {:>12}",
        "modified",
        "accuracy K=32",
        "exact K=32",
        "time K=32",
        "accuracy dflt",
        "exact dflt",
        "time dflt"
    );
    const SEED: u64 = 2016;
    let mut rng = StdRng::seed_from_u64(SEED);
    for fraction in [0.1, 0.2, 0.3, 0.4] {
        let queries: Vec<String> = (0..num_queries)
            .map(|_| {
                let s = &seqs[rng.random_range(0..seqs.len())];
                modify(s, fraction, &mut rng)
            })
            .collect();
        let refs: Vec<&[u8]> = queries.iter().map(|q| q.as_bytes()).collect();
        let truth: Vec<u32> = queries
            .par_iter()
            .map(|q| {
                let p = Pattern::new(&q.chars().map(u32::from).collect::<Vec<_>>());
                (0..store.len() as u32)
                    .map(|id| store.distance_to(&p, id).unwrap_or(u32::MAX))
                    .min()
                    .unwrap_or(u32::MAX)
            })
            .collect();
        let mut row = format!("{fraction:>8.1}");
        for params in [
            SequenceSearchParams::top_k(1).single_round(),
            SequenceSearchParams::top_k(1),
        ] {
            let t = Instant::now();
            let results = searcher.search(&refs, &params)?;
            let secs = t.elapsed().as_secs_f64();
            let correct = results
                .iter()
                .zip(&truth)
                .filter(|(r, &d)| r.hits.first().is_some_and(|h| h.distance == d))
                .count();
            let exact = results.iter().filter(|r| r.exact).count();
            let share = |c: usize| c as f64 / num_queries as f64;
            row += &format!(
                "  {:>13.4}  {:>13.4}  {:>11.3}s",
                share(correct),
                share(exact),
                secs
            );
            if let Some(w) = csv_out.as_mut() {
                let setting = if params.max_candidates > params.candidates {
                    "default"
                } else {
                    "single-round"
                };
                w.write_record([
                    engine.backend_name().to_string(),
                    commit.clone(),
                    dataset.to_string(),
                    seqs.len().to_string(),
                    n.to_string(),
                    num_queries.to_string(),
                    fraction.to_string(),
                    setting.to_string(),
                    params.candidates.to_string(),
                    params.max_candidates.to_string(),
                    format!("{:.4}", share(correct)),
                    format!("{:.4}", share(exact)),
                    format!("{secs:.3}"),
                    SEED.to_string(),
                ])?;
            }
        }
        println!("{row}");
    }
    if let Some(mut w) = csv_out {
        w.flush()?;
    }
    Ok(())
}
