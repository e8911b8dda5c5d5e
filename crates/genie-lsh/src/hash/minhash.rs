//! MinHash for sets of keywords (Broder; the Jaccard kernel of paper section II-B1): function `i`
//! ranks the elements by MurmurHash3 with its own seed and keeps the smallest. For a 4-byte input
//! MurmurHash3 x86_32 is a bijection of `u32`, so each function is a random permutation of the
//! universe and two sets collide with probability equal to their Jaccard similarity.

use super::rehash::murmur3_32;
use super::{function_rng, rehash_seed};
use rand::Rng;

/// `m` MinHash functions over sets of `u32`.
#[derive(Clone, Debug)]
pub struct MinHash {
    element_seeds: Vec<u32>,
    rehash_seeds: Vec<u32>,
}

impl MinHash {
    /// `functions` MinHash functions drawn from `seed`.
    pub fn new(functions: u32, seed: u64) -> Self {
        let (mut element_seeds, mut rehash_seeds) = (Vec::new(), Vec::new());
        for i in 0..functions {
            let mut rng = function_rng(seed, i);
            rehash_seeds.push(rehash_seed(&mut rng));
            element_seeds.push(rng.random());
        }
        Self {
            element_seeds,
            rehash_seeds,
        }
    }

    /// Number of functions.
    pub fn functions(&self) -> u32 {
        self.element_seeds.len() as u32
    }

    /// The signature of function `i`: the smallest element hash, `None` for an empty set.
    pub fn value(&self, i: usize, set: &[u32]) -> Option<u32> {
        let seed = self.element_seeds[i];
        set.iter().map(|x| murmur3_32(&x.to_le_bytes(), seed)).min()
    }

    /// The re-hash seed of function `i`.
    pub fn rehash_seed(&self, i: usize) -> u32 {
        self.rehash_seeds[i]
    }
}
