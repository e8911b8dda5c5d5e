//! Data the genie-lsh test files share.
#![allow(clippy::unwrap_used)]

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
