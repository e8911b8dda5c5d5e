//! [`Reranker`]: the exact re-ranking shared by every vector index. The vectors stay in memory and,
//! when the index is on a GPU, resident there too; the distances of every (query, candidate) pair
//! of a batch are then computed in one launch, identical to the CPU's bit for bit, and ordered by
//! the CPU's comparator ([`rank_verified`]).

use crate::error::Result;
use crate::metric::Metric;
use crate::vectors::VectorSet;
use crate::verify::VectorVerifier;
use genie_core::backend::{GpuVectors, VectorDistance};
use genie_core::{rank_verified, rerank, Hit, VerifiedHit};
use rayon::prelude::*;
use std::sync::Arc;

/// Exact distances to the indexed vectors, on the CPU or the GPU of the index.
pub struct Reranker {
    vectors: Arc<VectorSet>,
    verifier: VectorVerifier,
    metric: Metric,
    gpu: Option<GpuVectors>,
}

impl std::fmt::Debug for Reranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reranker")
            .field("metric", &self.metric)
            .field("gpu", &self.gpu.is_some())
            .finish()
    }
}

impl Reranker {
    /// A re-ranker of `vectors` by `metric`, with the vectors copied to GPU `gpu` when given (a
    /// failed copy is logged and re-ranking stays on the CPU).
    pub fn new(vectors: Arc<VectorSet>, metric: Metric, gpu: Option<usize>) -> Self {
        let gpu = gpu.and_then(|ordinal| {
            match GpuVectors::new(ordinal, vectors.as_slice(), vectors.dim()) {
                Ok(g) => Some(g),
                Err(e) => {
                    log::warn!("re-ranking on the CPU: the vectors did not go to the GPU ({e})");
                    None
                }
            }
        });
        Self {
            verifier: VectorVerifier::new(Arc::clone(&vectors), metric),
            vectors,
            metric,
            gpu,
        }
    }

    /// The vectors.
    pub fn vectors(&self) -> &Arc<VectorSet> {
        &self.vectors
    }

    /// Whether distances are computed on the GPU.
    pub fn on_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// Each query's `hits` re-ranked by the exact distance (distance ascending, count descending,
    /// id ascending) and cut to `k`.
    pub fn rerank(
        &self,
        queries: &VectorSet,
        hits: &[Vec<Hit>],
        k: usize,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        match &self.gpu {
            Some(gpu) => self.on_device(gpu, queries, hits, k),
            None => hits
                .par_iter()
                .zip(queries.as_slice().par_chunks(queries.dim().max(1)))
                .map(|(h, q)| Ok(rerank(&self.verifier, q, h, k)?))
                .collect(),
        }
    }

    fn on_device(
        &self,
        gpu: &GpuVectors,
        queries: &VectorSet,
        hits: &[Vec<Hit>],
        k: usize,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let per_query = hits.iter().map(Vec::len).max().unwrap_or(0);
        let mut candidates = vec![u32::MAX; hits.len() * per_query];
        for (row, h) in candidates.chunks_mut(per_query.max(1)).zip(hits) {
            for (c, hit) in row.iter_mut().zip(h) {
                *c = hit.id;
            }
        }
        let metric = match self.metric {
            Metric::L2 => VectorDistance::L2,
            Metric::L1 => VectorDistance::L1,
            Metric::Cosine => VectorDistance::Cosine,
        };
        let distances = gpu.distances(queries.as_slice(), &candidates, per_query, metric)?;
        Ok(hits
            .par_iter()
            .enumerate()
            .map(|(q, h)| {
                let out = h
                    .iter()
                    .zip(&distances[q * per_query..])
                    .map(|(hit, &distance)| VerifiedHit {
                        id: hit.id,
                        count: hit.count,
                        distance,
                    })
                    .collect();
                rank_verified(out, k)
            })
            .collect())
    }
}
