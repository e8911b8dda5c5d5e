//! Data and measures the genie-lsh test files share.
#![allow(clippy::unwrap_used)]
#![allow(dead_code)] // each test file uses its part

use genie_core::VerifiedHit;
use genie_lsh::VectorSet;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// `n` points around 50 centres in 24 dimensions (seeded; the same centres for every seed).
pub fn clusters(n: usize, seed: u64) -> VectorSet {
    let d = 24;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let wide = Normal::new(0.0f32, 10.0).unwrap();
    let centres: Vec<f32> = (0..50 * d).map(|_| wide.sample(&mut rng)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let narrow = Normal::new(0.0f32, 2.0).unwrap();
    let mut data = Vec::with_capacity(n * d);
    for _ in 0..n {
        let c = rng.random_range(0..50) * d;
        data.extend((0..d).map(|j| centres[c + j] + narrow.sample(&mut rng)));
    }
    VectorSet::new(d, data).unwrap()
}

/// `base` with `queries` after it, and the rows of the queries in it.
pub fn joined(base: &VectorSet, queries: &VectorSet) -> (VectorSet, Vec<usize>) {
    let mut all = base.as_slice().to_vec();
    all.extend_from_slice(queries.as_slice());
    let joined = VectorSet::new(base.dim(), all).unwrap();
    let ids = (base.len()..joined.len()).collect();
    (joined, ids)
}

/// Recall@10: the share of each query's first 10 neighbours among the base rows (ids below
/// `base_len`, in the order of `truth`) that its hits hold.
pub fn recall_at_10(hits: &[Vec<VerifiedHit>], truth: &[Vec<u32>], base_len: usize) -> f64 {
    let found: usize = hits
        .iter()
        .zip(truth)
        .map(|(h, t)| {
            let t: Vec<u32> = t
                .iter()
                .copied()
                .filter(|&i| (i as usize) < base_len)
                .take(10)
                .collect();
            h.iter().filter(|x| t.contains(&x.id)).count()
        })
        .sum();
    found as f64 / (10 * hits.len()) as f64
}
