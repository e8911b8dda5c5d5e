//! Short-document search against brute force on 500 real tweets: the match count is the number
//! of distinct words shared with the query.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_top_k_is, cpu_engine, data_dir, top_k, Rng};
use genie_core::Hit;
use genie_sa::{DocumentTransform, Tokenizer};
use std::collections::BTreeSet;

fn read_tweets(limit: usize) -> Option<Vec<String>> {
    let dir = data_dir("tweets")?;
    let mut reader = csv::Reader::from_path(dir.join("trump_tweets.csv")).unwrap();
    let column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "text")
        .unwrap();
    Some(
        reader
            .records()
            .take(limit)
            .map(|r| r.unwrap()[column].to_string())
            .collect(),
    )
}

/// Per query, all documents of count >= 1 by (count desc, id asc), cut to k.
fn brute_force(tok: &Tokenizer, docs: &[String], query: &str, k: usize) -> Vec<Hit> {
    let words = |t: &str| tok.words(t).into_iter().collect::<BTreeSet<_>>();
    let q = words(query);
    top_k(docs.iter().map(|d| words(d).intersection(&q).count()), k)
}

#[test]
fn real_tweets_against_brute_force() {
    let Some(tweets) = read_tweets(560) else {
        return;
    };
    let (docs, outside) = tweets.split_at(500);
    for tok in [Tokenizer::new(), Tokenizer::keeping_stop_words()] {
        let t = DocumentTransform::build(tok, docs.iter().map(String::as_str)).unwrap();
        let engine = cpu_engine(&t, docs.iter().map(String::as_str));
        // tweets of the index, halves of them, and tweets it does not hold
        let mut rng = Rng(42);
        let mut queries: Vec<String> = (0..40)
            .map(|_| docs[rng.below(docs.len())].clone())
            .collect();
        queries.extend((0..20).map(|_| {
            let d = &docs[rng.below(docs.len())];
            d.chars().take(d.chars().count() / 2).collect::<String>()
        }));
        queries.extend(outside.iter().cloned());
        let prepared: Vec<_> = queries.iter().map(|q| t.prepare(q)).collect();
        assert_top_k_is(&engine, &queries, &prepared, &[1, 10], |q, k| {
            brute_force(&tok, docs, q, k)
        });
    }
}
