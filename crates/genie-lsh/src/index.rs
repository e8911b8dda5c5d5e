//! [`VectorIndex`]: vectors, their LSH index and an engine in one value. A search takes the top-K
//! objects by match count (the paper's tau-ANN candidates, section IV-B1) and re-ranks them by the
//! exact distance to k (DESIGN.md section 5); K = k gives the pure tau-ANN answer.
//!
//! On disk an index is the core index file `INDEX`, whose metadata (JSON) holds the LSH parameters
//! and seed, the default number of candidates and what the build's tuning measured (see
//! [`crate::tune`]), and a copy of the vectors beside it, `INDEX.vectors` (see [`crate::io::raw`]).

use crate::error::{LshError, Result};
use crate::family::LshParams;
use crate::io::raw;
use crate::metric::Metric;
use crate::rerank::Reranker;
use crate::stages::{ms_since, SearchStages, StageClock};
use crate::stored::{self, IndexFamily};
use crate::transform::VectorTransform;
use crate::tuning::{SampleRecall, TUNE_K};
use crate::vectors::VectorSet;
use genie_core::{
    select_backend, Backend, DeviceChoice, Engine, Hit, InvertedIndex, Keyword, Method, ObjectMask,
    SearchParams, Transform, VerifiedHit,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What an LSH index records of its build-time tuning ([`crate::tune`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tuned {
    /// The sample's recall and what was asked (flattened: the same record as before).
    #[serde(flatten)]
    pub sample: SampleRecall,
    /// Whether the width was tuned (else given).
    pub width_tuned: bool,
    /// Whether the candidates were tuned (else given).
    pub candidates_tuned: bool,
    /// Whether the recall reaches the target.
    pub reached: bool,
}

/// What the vectors file beside an index must hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorsInfo {
    /// Number of vectors.
    pub rows: u64,
    /// Their dimension.
    pub dim: u32,
    /// CRC-32 of the raw payload.
    pub crc32: u32,
}

/// The metadata of a vector index (stored as JSON in the core index file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexMetadata {
    /// Always [`crate::stored::KIND`].
    pub kind: String,
    /// The LSH family's name ([`crate::stored`]).
    pub family: String,
    /// The transform's parameters.
    pub params: LshParams,
    /// The re-ranking metric.
    pub metric: Metric,
    /// The vectors saved beside the index as `INDEX.vectors`.
    pub vectors: VectorsInfo,
    /// The file the vectors were read from, when known (for information).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The candidates a search re-ranks when it asks for none (tuned for recall@`k` of
    /// [`IndexMetadata::tuned`], or given at build); absent from indexes built without, which
    /// re-rank [`untuned_candidates`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<u32>,
    /// What the build-time tuning chose and measured, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned: Option<Tuned>,
}

/// The candidates re-ranked for `k` hits by an index without defaults of its own: `max(20 k,
/// 200)`. Counting dominates the cost of a search, so a wide re-rank is nearly free; on
/// Fashion-MNIST it lifts recall@10 from 0.935 (K = 100) to about 0.97 (see examples/ann.rs).
pub fn untuned_candidates(k: usize) -> usize {
    k.saturating_mul(20).max(200)
}

impl IndexMetadata {
    /// The metadata of an index of `vectors` by `params`, without defaults of its own.
    pub(crate) fn of(params: &LshParams, vectors: &VectorSet, source: Option<String>) -> Self {
        Self {
            kind: stored::KIND.into(),
            family: params.family.name().into(),
            params: params.clone(),
            metric: params.family.metric(),
            vectors: vectors_info(vectors),
            source,
            candidates: None,
            tuned: None,
        }
    }

    /// The candidates re-ranked for `k` hits when a search asks for none: the index's own
    /// [`IndexMetadata::candidates`] for `k` up to the `k` they were chosen for (that of the
    /// tuning, else 10), the same share of `k` above it; [`untuned_candidates`] without.
    pub fn default_candidates(&self, k: usize) -> usize {
        let Some(c) = self.candidates else {
            return untuned_candidates(k);
        };
        let c = c as usize;
        let base = self
            .tuned
            .as_ref()
            .map_or(TUNE_K, |t| t.sample.k as usize)
            .max(1);
        c.max(c.saturating_mul(k).div_ceil(base)).max(k)
    }

    /// Parses the metadata of a core index (either form, [`crate::stored`]); an error when it is
    /// not a genie-lsh vector index.
    pub fn parse(text: &str) -> Result<Self> {
        IndexFamily::Lsh.parse(text)
    }
}

/// The path of the vectors saved beside `index`: `INDEX.vectors`.
pub fn vectors_path(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".vectors");
    PathBuf::from(name)
}

/// Vectors with an LSH match-count index over them, searched with re-ranking.
///
/// ```
/// use genie_lsh::{estimate, Family, VectorIndex, VectorSet};
/// use genie_core::DeviceChoice;
/// let data: Vec<f32> = (0..200).map(|i| ((i * 37) % 101) as f32).collect();
/// let vectors = VectorSet::new(2, data).unwrap();
/// let params = estimate::estimate(&vectors, Family::E2lsh, 7).unwrap();
/// let index = VectorIndex::build(vectors.clone(), params, DeviceChoice::Cpu).unwrap();
/// let hits = index.search(&vectors.head(1), 1, 10).unwrap();
/// assert_eq!((hits[0][0].id, hits[0][0].distance), (0, 0.0));
/// ```
pub struct VectorIndex {
    /// The indexed vectors (the re-rank's too).
    vectors: Arc<VectorSet>,
    transform: VectorTransform,
    engine: Engine,
    metadata: IndexMetadata,
    /// Exact distances, on the engine's GPU when the index is there.
    reranker: Reranker,
    stages: StageClock,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("metadata", &self.metadata)
            .field("engine", &self.engine)
            .finish()
    }
}

impl VectorIndex {
    /// Hashes `vectors` (in parallel) and builds the index on the backend of `device`.
    pub fn build(vectors: VectorSet, params: LshParams, device: DeviceChoice) -> Result<Self> {
        Self::build_with_source(vectors, params, device, None)
    }

    /// As [`VectorIndex::build`], recording the file the vectors came from in the metadata.
    pub fn build_with_source(
        vectors: VectorSet,
        params: LshParams,
        device: DeviceChoice,
        source: Option<String>,
    ) -> Result<Self> {
        if vectors.dim() != params.dim as usize {
            return Err(LshError::Dimension {
                expected: params.dim as usize,
                found: vectors.dim(),
            });
        }
        let transform = VectorTransform::new(params)?;
        let keywords = transform.keywords_of_all(&vectors)?;
        let metadata = IndexMetadata::of(transform.params(), &vectors, source);
        Self::from_keywords(vectors, transform, keywords, device, metadata)
    }

    /// Builds the index of `vectors` from their `keywords` by `transform` (`n x m`, as
    /// [`VectorTransform::keywords_of_all`] gives them), with `metadata` (its parameters those of
    /// `transform`).
    pub(crate) fn from_keywords(
        vectors: VectorSet,
        transform: VectorTransform,
        keywords: Vec<Keyword>,
        device: DeviceChoice,
        metadata: IndexMetadata,
    ) -> Result<Self> {
        if vectors.dim() != transform.params().dim as usize
            || keywords.len() != vectors.len() * transform.params().functions as usize
            || &metadata.params != transform.params()
        {
            return Err(LshError::InvalidParameter(
                "keywords, vectors and parameters of an index do not match".into(),
            ));
        }
        let text =
            serde_json::to_string(&metadata).map_err(|e| LshError::Metadata(e.to_string()))?;
        let mut builder = transform.builder().metadata(text);
        builder.push_fixed(&keywords, transform.params().functions as usize)?;
        drop(keywords);
        let index = builder.build()?;
        let engine = Engine::new(Arc::new(index), device)?;
        Self::assemble(transform, Arc::new(vectors), engine, metadata)
    }

    fn assemble(
        transform: VectorTransform,
        vectors: Arc<VectorSet>,
        engine: Engine,
        metadata: IndexMetadata,
    ) -> Result<Self> {
        let reranker = Reranker::new(Arc::clone(&vectors), metadata.metric, engine.gpu_ordinal());
        Ok(Self {
            vectors,
            transform,
            engine,
            metadata,
            reranker,
            stages: StageClock::default(),
        })
    }

    /// Saves the index to `path` and the vectors to `path.vectors`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        self.engine.index().save(path)?;
        raw::save(self.vectors(), &vectors_path(path))?;
        Ok(())
    }

    /// Loads an index saved by [`VectorIndex::save`] onto the backend of `device`.
    pub fn load(path: impl AsRef<Path>, device: DeviceChoice) -> Result<Self> {
        load_on(path.as_ref(), device, Self::open_on)
    }

    /// Opens an index saved by [`VectorIndex::save`] whose core index is already loaded, on one
    /// backend (so that several devices can each hold a replica of one loaded index).
    pub fn open_on(path: &Path, index: Arc<InvertedIndex>, backend: &dyn Backend) -> Result<Self> {
        let metadata = IndexMetadata::parse(index.metadata())
            .map_err(|e| LshError::format(path, e.to_string()))?;
        let vectors = Arc::new(load_vectors(path, &metadata.vectors, index.num_objects())?);
        Self::open_with(path, index, backend, vectors)
    }

    /// [`VectorIndex::open_on`] with its vectors already read ([`load_vectors`]): replicas of
    /// one index on several devices share them.
    pub fn open_with(
        path: &Path,
        index: Arc<InvertedIndex>,
        backend: &dyn Backend,
        vectors: Arc<VectorSet>,
    ) -> Result<Self> {
        let metadata = IndexMetadata::parse(index.metadata())
            .map_err(|e| LshError::format(path, e.to_string()))?;
        let transform = VectorTransform::new(metadata.params.clone())?;
        let engine = Engine::with_backend(index, backend)?;
        Self::assemble(transform, vectors, engine, metadata)
    }

    /// The metadata (parameters, metric, vectors, defaults).
    pub fn metadata(&self) -> &IndexMetadata {
        &self.metadata
    }

    /// The candidates re-ranked for `k` hits when a search asks for none (see
    /// [`IndexMetadata::default_candidates`]).
    pub fn default_candidates(&self, k: usize) -> usize {
        self.metadata.default_candidates(k)
    }

    /// The transform.
    pub fn transform(&self) -> &VectorTransform {
        &self.transform
    }

    /// The indexed vectors (object `i` is row `i`).
    pub fn vectors(&self) -> &VectorSet {
        &self.vectors
    }

    /// The time of each stage of the searches since the last call.
    pub fn take_stages(&self) -> SearchStages {
        self.stages.take()
    }

    /// The engine (backend name, core index).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    fn check_queries(&self, queries: &VectorSet) -> Result<()> {
        if !queries.is_empty() && queries.dim() != self.vectors().dim() {
            return Err(LshError::Dimension {
                expected: self.vectors().dim(),
                found: queries.dim(),
            });
        }
        Ok(())
    }

    /// Per query, the top-`k` objects by match count (count desc, id asc), without re-ranking.
    pub fn search_counts(&self, queries: &VectorSet, k: usize) -> Result<Vec<Vec<Hit>>> {
        self.search_counts_with(queries, k, Method::Cpq)
    }

    /// As [`VectorIndex::search_counts`], counting with `method` (same results either way).
    pub fn search_counts_with(
        &self,
        queries: &VectorSet,
        k: usize,
        method: Method,
    ) -> Result<Vec<Vec<Hit>>> {
        self.counts_timed(queries, k, method, None, &mut SearchStages::default())
    }

    fn counts_timed(
        &self,
        queries: &VectorSet,
        k: usize,
        method: Method,
        allowed: Option<&ObjectMask>,
        stages: &mut SearchStages,
    ) -> Result<Vec<Vec<Hit>>> {
        self.check_queries(queries)?;
        let t = Instant::now();
        let qs = self.transform.queries_of_all(queries)?;
        stages.hash_ms += ms_since(t);
        // never more hits than objects (keeps the per-query buffers bounded)
        let k = u32::try_from(k.min(self.vectors().len())).unwrap_or(u32::MAX);
        let mut params = SearchParams::top_k(k).with_method(method);
        if let Some(mask) = allowed {
            params = params.with_mask(mask.clone());
        }
        let t = Instant::now();
        let hits = self.engine.search(&qs, &params)?;
        stages.count_ms += ms_since(t);
        Ok(hits)
    }

    /// Per query, the `candidates` objects of the largest match counts (at least `k`), re-ranked
    /// by the exact distance and cut to `k`: distance ascending, then count descending, then id.
    pub fn search(
        &self,
        queries: &VectorSet,
        k: usize,
        candidates: usize,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        self.search_with(queries, k, candidates, Method::Cpq)
    }

    /// As [`VectorIndex::search`], counting with `method`.
    pub fn search_with(
        &self,
        queries: &VectorSet,
        k: usize,
        candidates: usize,
        method: Method,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let n = queries.len();
        self.search_each(queries, &vec![k; n], &vec![candidates; n], method)
    }

    /// As [`VectorIndex::search_with`], with each query's own `k` and candidates (a server's
    /// batch of requests). One count search at the largest number of candidates serves all:
    /// each query's candidates are a prefix of that contract order, and its `k` hits a prefix
    /// of its re-ranked list.
    pub fn search_each(
        &self,
        queries: &VectorSet,
        ks: &[usize],
        candidates: &[usize],
        method: Method,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        self.search_each_allowed(queries, ks, candidates, method, None)
    }

    /// [`VectorIndex::search_each`] among the objects `allowed` admits (all when `None`): the
    /// count skips the others before its top candidates are taken, as a filter of any count
    /// index does, so the candidates re-ranked are allowed ones, as many more as the share
    /// allowed is small; when that is all of them, the answer is exact.
    pub fn search_each_allowed(
        &self,
        queries: &VectorSet,
        ks: &[usize],
        candidates: &[usize],
        method: Method,
        allowed: Option<&ObjectMask>,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        // no more allowed objects than candidates: each is re-ranked, none left to the count;
        // else the candidates grow by the inverse of the share allowed, since the nearest
        // allowed objects stand that much further down the order of all
        let mut scaled = candidates.to_vec();
        if let Some(mask) = allowed {
            let (admitted, n) = (mask.count() as usize, self.vectors().len());
            let share = admitted as f64 / n.max(1) as f64;
            for c in &mut scaled {
                *c = ((*c as f64 / share.max(1e-9)).ceil() as usize).min(n);
            }
            if admitted <= scaled.iter().copied().max().unwrap_or(0) {
                return self.reranker.rank_allowed(queries, ks, mask, &self.stages);
            }
        }
        self.reranker
            .search_each(queries, ks, &scaled, &self.stages, |most, stages| {
                self.counts_timed(queries, most, method, allowed, stages)
            })
    }
}

impl VectorIndex {
    /// Whether re-ranking runs on the GPU (the vectors are resident there).
    pub fn reranks_on_gpu(&self) -> bool {
        self.reranker.on_gpu()
    }
}

/// Loads the core index at `path` and opens it on the backend of `device` with `open_on` (the
/// `load` of either family).
pub(crate) fn load_on<T>(
    path: &Path,
    device: DeviceChoice,
    open_on: impl FnOnce(&Path, Arc<InvertedIndex>, &dyn Backend) -> Result<T>,
) -> Result<T> {
    let index = Arc::new(InvertedIndex::load(path)?);
    open_on(path, index, select_backend(device)?.as_ref())
}

/// The vectors saved beside the vector index at `path` (either family), as its metadata
/// records them (`"vectors"`), checked as [`load_vectors`] checks them.
pub fn read_vectors(path: &Path, index: &InvertedIndex) -> Result<VectorSet> {
    #[derive(Deserialize)]
    struct Recorded {
        vectors: VectorsInfo,
    }
    let recorded: Recorded = serde_json::from_str(index.metadata()).map_err(|e| {
        LshError::format(
            path,
            format!("the metadata does not describe the index's vectors ({e})"),
        )
    })?;
    load_vectors(path, &recorded.vectors, index.num_objects())
}

/// The vectors saved beside the index at `path` (`INDEX.vectors`), checked against what its
/// metadata records and its number of objects.
pub fn load_vectors(path: &Path, want: &VectorsInfo, objects: u32) -> Result<VectorSet> {
    let vpath = vectors_path(path);
    let (vectors, crc) = raw::load(&vpath)?;
    if vectors.len() as u64 != want.rows
        || vectors.dim() as u32 != want.dim
        || crc != want.crc32
        || u64::from(objects) != want.rows
    {
        return Err(LshError::format(
            &vpath,
            format!(
                "does not belong to {}: {} vectors of dimension {} (checksum {crc:08x}), the \
                 index expects {} of dimension {} (checksum {:08x})",
                path.display(),
                vectors.len(),
                vectors.dim(),
                want.rows,
                want.dim,
                want.crc32
            ),
        ));
    }
    Ok(vectors)
}

/// What the metadata records of `vectors`.
pub fn vectors_info(vectors: &VectorSet) -> VectorsInfo {
    VectorsInfo {
        rows: vectors.len() as u64,
        dim: vectors.dim() as u32,
        crc32: crc_of(vectors),
    }
}

fn crc_of(vectors: &VectorSet) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for x in vectors.as_slice() {
        h.update(&x.to_le_bytes());
    }
    h.finalize()
}
