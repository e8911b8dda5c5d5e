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
    /// The query vectors' upload to the device, where a stage of its own (the codebook's scan on
    /// a GPU); elsewhere it is part of the count.
    pub upload_ms: f64,
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
        self.upload_ms += other.upload_ms;
        self.count_ms += other.count_ms;
        self.rerank_ms += other.rerank_ms;
        self.queries += other.queries;
    }

    /// The stages as (name, milliseconds) pairs (the upload only where it was timed apart).
    pub fn named(&self) -> Vec<(&'static str, f64)> {
        let upload = (self.upload_ms > 0.0).then_some(("upload", self.upload_ms));
        [("hash", self.hash_ms)]
            .into_iter()
            .chain(upload)
            .chain([("count", self.count_ms), ("rerank", self.rerank_ms)])
            .collect()
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
