//! [`MinHashTransform`]: sets of `u32` keywords to match-count objects and queries by MinHash
//! (paper section II-B1, the Jaccard kernel; section IV-A1 for the layout): function `i`'s
//! smallest element hash is re-hashed into `[0, D)` and becomes keyword `i * D + bucket`. An empty
//! set has no keywords (it matches nothing).

use crate::error::{LshError, Result};
use crate::hash::minhash::MinHash;
use crate::hash::rehash::{bucket, keyword};
use genie_core::index::MAX_KEYWORD_SPACE;
use genie_core::{Keyword, Query, Transform};
use serde::{Deserialize, Serialize};

/// Parameters of a MinHash transform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinHashParams {
    /// Number of functions `m`.
    pub functions: u32,
    /// Buckets `D` of the re-hash.
    pub buckets: u32,
    /// Seed of the functions.
    pub seed: u64,
}

/// The MinHash transform over sets of keywords.
#[derive(Clone, Debug)]
pub struct MinHashTransform {
    params: MinHashParams,
    hash: MinHash,
}

impl MinHashTransform {
    /// The transform of `params`.
    pub fn new(params: MinHashParams) -> Result<Self> {
        if params.functions == 0 || params.buckets == 0 {
            return Err(LshError::InvalidParameter(
                "MinHash needs at least one function and one bucket".into(),
            ));
        }
        let space = u64::from(params.functions) * u64::from(params.buckets);
        if space > MAX_KEYWORD_SPACE {
            return Err(LshError::InvalidParameter(format!(
                "{space} keywords exceed the index's {MAX_KEYWORD_SPACE}"
            )));
        }
        let hash = MinHash::new(params.functions, params.seed);
        Ok(Self { params, hash })
    }

    /// The parameters.
    pub fn params(&self) -> &MinHashParams {
        &self.params
    }

    /// The MinHash functions (raw signatures).
    pub fn functions(&self) -> &MinHash {
        &self.hash
    }

    /// The keywords of a set (none for an empty set).
    pub fn keywords(&self, set: &[u32]) -> Vec<Keyword> {
        let d = self.params.buckets;
        (0..self.params.functions)
            .filter_map(|i| {
                let sig = self.hash.value(i as usize, set)?;
                let b = bucket(&sig.to_le_bytes(), self.hash.rehash_seed(i as usize), d);
                Some(keyword(i, d, b))
            })
            .collect()
    }
}

impl Transform for MinHashTransform {
    type Item = [u32];
    type QueryInput = [u32];

    fn keyword_space(&self) -> u32 {
        self.params.functions * self.params.buckets
    }

    fn blocks(&self) -> Vec<Keyword> {
        (0..self.params.functions)
            .map(|i| i * self.params.buckets)
            .collect()
    }

    fn object(&self, item: &[u32], out: &mut Vec<Keyword>) -> genie_core::Result<()> {
        out.extend(self.keywords(item));
        Ok(())
    }

    fn query(&self, input: &[u32]) -> genie_core::Result<Query> {
        Ok(Query::from_keywords(&self.keywords(input)))
    }

    fn metadata(&self) -> String {
        serde_json::json!({ "plugin": "genie-lsh", "minhash": self.params }).to_string()
    }
}
