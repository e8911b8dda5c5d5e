//! [`Reranker`]: the exact re-ranking shared by every vector index. The vectors stay in memory and,
//! when the index is on a GPU, resident there too; the distances of every (query, candidate) pair
//! of a batch are then computed in one launch, identical to the CPU's bit for bit, and ordered by
//! the CPU's comparator ([`rank_verified`]).

use crate::error::{LshError, Result};
use crate::gpu::{CellCodesRef, CodebookRef, GpuVectors, VectorDistance};
use crate::metric::Metric;
use crate::stages::{ms_since, SearchStages, StageClock};
use crate::store::Store;
use crate::vectors::VectorSet;
use crate::verify::VectorVerifier;
use genie_core::{rank_verified, Hit, VerifiedHit, Verifier};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Candidates whose rows are requested ahead of the one whose distance is computed.
const PREFETCH_AHEAD: usize = 8;

/// Distances to the indexed vectors (exact, or from a compact [`Store`]), on the CPU or the GPU of
/// the index.
pub struct Reranker {
    store: Arc<Store>,
    /// The exact verifier, over float vectors.
    verifier: Option<VectorVerifier>,
    metric: Metric,
    gpu: Option<GpuVectors>,
}

impl std::fmt::Debug for Reranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reranker")
            .field("metric", &self.metric)
            .field("form", &self.store.form())
            .field("gpu", &self.gpu.is_some())
            .finish()
    }
}

impl Reranker {
    /// A re-ranker of `vectors` by `metric`, with the vectors copied to GPU `gpu` when given (a
    /// failed copy is logged and re-ranking stays on the CPU).
    pub fn new(vectors: Arc<VectorSet>, metric: Metric, gpu: Option<usize>) -> Self {
        Self::from_store(Arc::new(Store::F32(vectors)), metric, gpu)
    }

    /// A re-ranker of the rows of `store` (see [`Reranker::new`]).
    pub fn from_store(store: Arc<Store>, metric: Metric, gpu: Option<usize>) -> Self {
        let gpu =
            gpu.and_then(
                |ordinal| match GpuVectors::from_rows(ordinal, store.device_rows()) {
                    Ok(g) => Some(g),
                    Err(e) => {
                        log::warn!(
                            "re-ranking on the CPU: the vectors did not go to the GPU ({e})"
                        );
                        None
                    }
                },
            );
        Self {
            verifier: store
                .floats()
                .map(|v| VectorVerifier::new(Arc::clone(v), metric)),
            store,
            metric,
            gpu,
        }
    }

    /// The float vectors, when the re-rank is from them.
    pub fn vectors(&self) -> Option<&Arc<VectorSet>> {
        self.store.floats()
    }

    /// The rows re-ranked from.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Whether distances are computed on the GPU.
    pub fn on_gpu(&self) -> bool {
        self.gpu.as_ref().is_some_and(GpuVectors::can_rerank)
    }

    /// The vectors on the GPU, when they are there.
    pub fn gpu(&self) -> Option<&GpuVectors> {
        self.gpu.as_ref()
    }

    /// Keeps a codebook index's cells on the GPU beside the vectors (a failure is logged, and
    /// the scan stays on the CPU).
    pub fn attach_cells(&mut self, cells: CellCodesRef<'_>) {
        if let Some(gpu) = self.gpu.as_mut() {
            if let Err(e) = gpu.attach_cells(cells) {
                log::warn!(
                    "the codebook scan stays on the CPU: the cells did not go to the GPU ({e})"
                );
            }
        }
    }

    /// Keeps a codebook's centres and codewords on the GPU, so that probes are chosen there (a
    /// failure is logged, and the host chooses them).
    pub fn attach_codebook(&mut self, book: CodebookRef<'_>) {
        if let Some(gpu) = self.gpu.as_mut() {
            if let Err(e) = gpu.attach_codebook(book) {
                log::warn!("codebook probes are chosen on the host: {e}");
            }
        }
    }

    /// The metric, as the GPU computes it.
    pub fn device_metric(&self) -> VectorDistance {
        match self.metric {
            Metric::L2 => VectorDistance::L2,
            Metric::L1 => VectorDistance::L1,
            Metric::Cosine => VectorDistance::Cosine,
        }
    }

    /// Each query's `hits` re-ranked by the exact distance (distance ascending, count descending,
    /// id ascending) and cut to `k`.
    pub fn rerank(
        &self,
        queries: &VectorSet,
        hits: &[Vec<Hit>],
        k: usize,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        match self.gpu.as_ref().filter(|g| g.can_rerank()) {
            Some(gpu) => self.on_device(gpu, queries, hits, k),
            None => hits
                .par_iter()
                .zip(queries.as_slice().par_chunks(queries.dim().max(1)))
                .map(|(h, q)| self.on_host(q, h, k))
                .collect(),
        }
    }

    /// One query's candidates re-ranked on the CPU: [`genie_core::rerank`] with the rows of the
    /// next candidates prefetched, so that their reads from memory overlap (the candidates' rows
    /// lie anywhere in the vectors; the distances and their order are [`genie_core::rerank`]'s).
    fn on_host(&self, query: &[f32], hits: &[Hit], k: usize) -> Result<Vec<VerifiedHit>> {
        let Some(verifier) = &self.verifier else {
            return self.on_host_compact(query, hits, k);
        };
        let vectors = &self.store;
        for h in hits.iter().take(PREFETCH_AHEAD) {
            vectors.prefetch(h.id as usize);
        }
        let out = hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                if let Some(next) = hits.get(i + PREFETCH_AHEAD) {
                    vectors.prefetch(next.id as usize);
                }
                Ok(VerifiedHit {
                    id: h.id,
                    count: h.count,
                    distance: verifier.distance(query, h.id)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(rank_verified(out, k))
    }

    /// One query's candidates re-ranked on the CPU from the rows a compact store rebuilds.
    fn on_host_compact(&self, query: &[f32], hits: &[Hit], k: usize) -> Result<Vec<VerifiedHit>> {
        let dim = self.store.dim();
        if query.len() != dim {
            return Err(LshError::Dimension {
                expected: dim,
                found: query.len(),
            });
        }
        let mut row = vec![0f32; dim];
        let out = hits
            .iter()
            .map(|h| {
                self.store
                    .row_into(h.id as usize, &mut row)
                    .ok_or_else(|| {
                        LshError::InvalidParameter(format!(
                            "object {} beyond the {} stored vectors",
                            h.id,
                            self.store.len()
                        ))
                    })?;
                Ok(VerifiedHit {
                    id: h.id,
                    count: h.count,
                    distance: self.metric.distance(query, &row),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(rank_verified(out, k))
    }

    /// Every object `allowed` admits re-ranked for each query, cut to its `k`: the exact answer
    /// among them (a filter that admits few objects needs no count). On a GPU the allowed ids go
    /// up once and each query's top `k` is taken there ([`GpuVectors::top_k_among`]); the answers
    /// equal the per-query re-rank's.
    pub fn rank_allowed(
        &self,
        queries: &VectorSet,
        ks: &[usize],
        allowed: &genie_core::ObjectMask,
        clock: &StageClock,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        if let Some(gpu) = self.gpu.as_ref().filter(|g| g.can_rerank()) {
            // every query against the same candidates: uploaded once, ranked on the device
            if ks.len() != queries.len() {
                return Err(LshError::InvalidParameter("one k per query".into()));
            }
            let t = Instant::now();
            let ids: Vec<u32> = allowed.iter().collect();
            let k_max = ks.iter().copied().max().unwrap_or(0);
            let metric = self.device_metric();
            let mut out = gpu.top_k_among(queries.as_slice(), &ids, k_max, metric)?;
            for (o, &k) in out.iter_mut().zip(ks) {
                o.truncate(k);
            }
            clock.record(&SearchStages {
                queries: queries.len() as u64,
                rerank_ms: ms_since(t),
                ..SearchStages::default()
            });
            return Ok(out);
        }
        let all: Vec<Hit> = allowed.iter().map(|id| Hit { id, count: 0 }).collect();
        let every = vec![all.len(); queries.len()];
        self.search_each(queries, ks, &every, clock, |_, _| {
            Ok(vec![all; queries.len()])
        })
    }

    /// A batch with each query's own `k` and candidates (a server's batch of requests): `count`
    /// takes the top objects by match count at the largest number wanted (timing its stages),
    /// each query keeps its own prefix of them, and the re-ranked lists are cut to each `k`.
    /// The stages go to `clock`.
    pub fn search_each(
        &self,
        queries: &VectorSet,
        ks: &[usize],
        candidates: &[usize],
        clock: &StageClock,
        count: impl FnOnce(usize, &mut SearchStages) -> Result<Vec<Vec<Hit>>>,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        if ks.len() != queries.len() || candidates.len() != queries.len() {
            return Err(LshError::InvalidParameter(
                "one k and one number of candidates per query".into(),
            ));
        }
        let wanted = |i: usize| candidates[i].max(ks[i]);
        let most = (0..queries.len()).map(wanted).max().unwrap_or(0);
        let mut stages = SearchStages {
            queries: queries.len() as u64,
            ..SearchStages::default()
        };
        let mut hits = count(most, &mut stages)?;
        for (i, h) in hits.iter_mut().enumerate() {
            h.truncate(wanted(i));
        }
        let k_max = ks.iter().copied().max().unwrap_or(0);
        let t = Instant::now();
        let mut out = self.rerank(queries, &hits, k_max)?;
        for (o, &k) in out.iter_mut().zip(ks) {
            o.truncate(k);
        }
        stages.rerank_ms += ms_since(t);
        clock.record(&stages);
        Ok(out)
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
        let metric = self.device_metric();
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
