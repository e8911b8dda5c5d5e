//! Helpers of the integration tests: where the real data sets are, small generators, and a CPU
//! engine checked against brute force.
#![allow(dead_code)]

use genie_core::{CpuBackend, Engine, Hit, Query, SearchParams, Transform};
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::Arc;

/// The folder of data set `name` (`words`, `tweets`, `adult`, ...): `$GENIE_DATA/NAME` when the
/// environment variable `GENIE_DATA` names a folder of data sets, else `data/NAME` inside the
/// repository (see scripts/fetch-data.sh); `None` prints `skipped: <reason>`.
pub fn data_dir(name: &str) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates: Vec<PathBuf> = std::env::var_os("GENIE_DATA")
        .map(|d| PathBuf::from(d).join(name))
        .into_iter()
        .collect();
    candidates.push(root.join("data").join(name));
    let found = candidates.into_iter().find(|p| p.is_dir());
    if found.is_none() {
        println!(
            "skipped: data set {name:?} not found in $GENIE_DATA or data/ (run scripts/fetch-data.sh)"
        );
    }
    found
}

/// A small deterministic generator (xorshift), so the tests need no seeded RNG crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `s` with `round(fraction * len)` distinct characters replaced by other lowercase letters.
pub fn modify(s: &str, fraction: f64, rng: &mut Rng) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    let changes = (fraction * chars.len() as f64).round() as usize;
    let mut positions: Vec<usize> = (0..chars.len()).collect();
    for i in 0..changes.min(chars.len()) {
        let j = i + rng.below(positions.len() - i);
        positions.swap(i, j);
        let p = positions[i];
        loop {
            let c = (b'a' + rng.below(26) as u8) as char;
            if c != chars[p] {
                chars[p] = c;
                break;
            }
        }
    }
    chars.into_iter().collect()
}

/// A CPU engine over `items`, each turned into keywords by `t`.
pub fn cpu_engine<'a, T: Transform>(t: &T, items: impl IntoIterator<Item = &'a T::Item>) -> Engine
where
    T::Item: 'a,
{
    let mut b = t.builder();
    let mut kws = Vec::new();
    for item in items {
        kws.clear();
        t.object(item, &mut kws).unwrap();
        b.push_object(&kws).unwrap();
    }
    Engine::with_backend(Arc::new(b.build().unwrap()), &CpuBackend::new()).unwrap()
}

/// The brute-force answer of one query from the match count of each object (by id): the objects
/// of count 1 or more by (count desc, id asc), cut to k.
pub fn top_k(counts: impl Iterator<Item = usize>, k: usize) -> Vec<Hit> {
    let mut hits: Vec<Hit> = counts
        .enumerate()
        .map(|(id, count)| Hit {
            id: id as u32,
            count: count as u32,
        })
        .filter(|h| h.count > 0)
        .collect();
    hits.sort_by_key(|h| (std::cmp::Reverse(h.count), h.id));
    hits.truncate(k);
    hits
}

/// Asserts, for each k of `ks`, that the engine's top-k answers to `prepared` (the queries
/// `queries` made ready) are `brute_force(query, k)`.
pub fn assert_top_k_is<Q: Debug>(
    engine: &Engine,
    queries: &[Q],
    prepared: &[Query],
    ks: &[u32],
    brute_force: impl Fn(&Q, usize) -> Vec<Hit>,
) {
    for &k in ks {
        let results = engine.search(prepared, &SearchParams::top_k(k)).unwrap();
        for (q, r) in queries.iter().zip(&results) {
            assert_eq!(r, &brute_force(q, k as usize), "query {q:?}");
        }
    }
}
