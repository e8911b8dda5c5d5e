//! [`SearchStages`]: where the time of vector searches went, summed over searches until taken:
//! turning query vectors into keyword items (hashing or codebook probing), counting (the engine,
//! candidates included), and the exact re-rank. The front ends add reading and output.

use std::sync::Mutex;
use std::time::Instant;

/// Milliseconds per stage of the vector searches since the last take.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchStages {
    /// Query vectors to keyword items (hash functions, or cells and codebook entries).
    pub hash_ms: f64,
    /// The match count and the top candidates by count (the engine, copies included).
    pub count_ms: f64,
    /// Exact distances to the candidates and their order.
    pub rerank_ms: f64,
    /// Queries searched.
    pub queries: u64,
}

impl SearchStages {
    /// Adds `other` to these.
    pub fn add(&mut self, other: &Self) {
        self.hash_ms += other.hash_ms;
        self.count_ms += other.count_ms;
        self.rerank_ms += other.rerank_ms;
        self.queries += other.queries;
    }

    /// The stages as (name, milliseconds) pairs.
    pub fn named(&self) -> [(&'static str, f64); 3] {
        [
            ("hash", self.hash_ms),
            ("count", self.count_ms),
            ("rerank", self.rerank_ms),
        ]
    }
}

/// A running sum of [`SearchStages`], shared by the searches of one index.
#[derive(Debug, Default)]
pub struct StageClock {
    sum: Mutex<SearchStages>,
}

impl StageClock {
    /// Adds one search's stages.
    pub fn record(&self, stages: &SearchStages) {
        if let Ok(mut s) = self.sum.lock() {
            s.add(stages);
        }
    }

    /// The sum since the last take, reset to zero.
    pub fn take(&self) -> SearchStages {
        self.sum
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }
}

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
