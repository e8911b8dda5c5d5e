//! [`CodebookIndex`]: vectors, their codebook keywords, an engine and the exact re-rank.
//!
//! On disk: the core index file `INDEX` (metadata JSON: the parameters, the tuned probe and what
//! the tuning measured), the vectors `INDEX.vectors` and the centres and codewords
//! `INDEX.codebook` (both in the raw vector format, checksummed).

mod batch;
use super::scan::{CellCodes, Plan};
use super::space::Space;
use super::{Codebook, CodebookParams, Probe};
use crate::error::{LshError, Result};
use crate::gpu::{CellCodesRef, CodebookRef, Queries, ScanJob};
use crate::index::{load_on, read_vectors, vectors_info, vectors_path, VectorsInfo};
use crate::io::raw;
use crate::metric::Metric;
use crate::rerank::Reranker;
use crate::stages::{ms_since, SearchStages, StageClock};
use crate::store::{Form, Store};
use crate::stored::{self, IndexFamily};
use crate::vectors::VectorSet;
use genie_core::{
    Backend, DeviceChoice, Engine, Hit, IndexBuilder, InvertedIndex, Method, ObjectMask,
    SearchParams, VerifiedHit,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What the build-time tuning measured on its held-out sample.
pub use crate::tuning::SampleRecall as Tuned;

/// The metadata of a codebook index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodebookMetadata {
    /// Always [`crate::stored::KIND`].
    pub kind: String,
    /// Always [`crate::stored::CODEBOOK`].
    pub family: String,
    /// The build's parameters.
    pub params: CodebookParams,
    /// The default probe of a search.
    pub probe: Probe,
    /// The tuning that chose the probe, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned: Option<Tuned>,
    /// The vectors saved beside the index.
    pub vectors: VectorsInfo,
    /// The file the vectors were read from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The similarity answered (absent: L2), reduced to L2 on the stored vectors.
    #[serde(default, skip_serializing_if = "Space::is_l2")]
    pub space: Space,
    /// What a search re-ranks from (absent: the float vectors); `vectors` then describes that
    /// copy's payload.
    #[serde(default, skip_serializing_if = "is_f32")]
    pub rerank: Form,
}

fn is_f32(form: &Form) -> bool {
    *form == Form::F32
}

impl CodebookMetadata {
    /// Parses the metadata of a core index (either form, [`crate::stored`]); an error when it is
    /// not a codebook index.
    pub fn parse(text: &str) -> Result<Self> {
        let meta: Self = IndexFamily::Codebook.parse(text)?;
        meta.params.validate()?;
        meta.probe.validate()?;
        Ok(meta)
    }
}

/// The path of the centres and codewords beside `index`: `INDEX.codebook`.
pub fn codebook_path(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".codebook");
    PathBuf::from(name)
}

/// How a search counts the hits of its probed cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Counting {
    /// The codes of the probed cells' objects, one lookup per object and slice (on the GPU when
    /// the index is there): [`super::scan`].
    #[default]
    Scan,
    /// The inverted lists of the query's keywords, through the engine's method.
    Lists(Method),
}

/// A filtered search re-ranks every allowed object, rather than counting, while their vectors
/// hold at most this many floats (16 MB; [`CodebookIndex::search_each_filtered`]).
pub const EXACT_FLOATS: usize = 1 << 22;

/// [`EXACT_FLOATS`] where the index re-ranks on a GPU (64 MB): there every query is measured
/// against the allowed objects, uploaded once, and ranked on the device
/// (`GpuVectors::top_k_among`). On one H200, 10,000 queries against 1% of 1 M x 96 took 22 ms
/// this way, against 9 ms unfiltered and 780 ms counted with grown probes at 10% allowed.
pub const EXACT_FLOATS_GPU: usize = 1 << 24;

/// The most a filtered search's candidates grow ([`CodebookIndex::search_each_filtered`]): each
/// is a counted object brought back to the host and checked against the filter.
pub const MAX_GROWTH: f64 = 8.0;

/// Vectors with a codebook match-count index over them, searched with re-ranking.
pub struct CodebookIndex {
    codebook: Codebook,
    cells: Arc<CellCodes>,
    engine: Engine,
    metadata: CodebookMetadata,
    reranker: Reranker,
    stages: StageClock,
}

/// What the metadata records of the saved re-rank copy: form, rows, dimension and checksum.
fn saved_form(metadata: &CodebookMetadata) -> (Form, u64, u32, u32) {
    let v = &metadata.vectors;
    (metadata.rerank, v.rows, v.dim, v.crc32)
}

/// The re-rank copy saved beside a codebook index at `path`, checked against its metadata: the
/// float vectors or a compact copy, shared by the index's replicas; `None` for the `codes` form,
/// which each opening rebuilds from its cells.
pub fn read_saved(path: &Path, index: &InvertedIndex) -> Result<Option<Arc<Store>>> {
    let metadata = CodebookMetadata::parse(index.metadata())
        .map_err(|e| LshError::format(path, e.to_string()))?;
    Ok(match metadata.rerank {
        Form::F32 => Some(Arc::new(Store::F32(Arc::new(read_vectors(path, index)?)))),
        Form::Codes => None,
        _ => Some(Arc::new(Store::load_compact(
            &vectors_path(path),
            saved_form(&metadata),
            None,
        )?)),
    })
}

/// The rows a codebook index at `path` re-ranks from, as floats: its vectors, or the rows its
/// compact copy rebuilds (what a live index over it compacts from).
pub fn read_rows(path: &Path, index: &InvertedIndex) -> Result<VectorSet> {
    let store = match read_saved(path, index)? {
        Some(store) => store,
        None => {
            let metadata = CodebookMetadata::parse(index.metadata())
                .map_err(|e| LshError::format(path, e.to_string()))?;
            let (codebook, cells) = codebook_and_cells(path, index, &metadata)?;
            store_of(path, &metadata, None, &codebook, &cells)?
        }
    };
    match Arc::try_unwrap(store) {
        Ok(Store::F32(v)) => Ok(Arc::unwrap_or_clone(v)),
        Ok(store) => store.to_vectors(),
        Err(store) => store.to_vectors(),
    }
}

/// The codebook saved beside the index at `path` (`INDEX.codebook`) and the index's objects by
/// cell, checked against the metadata.
fn codebook_and_cells(
    path: &Path,
    index: &InvertedIndex,
    metadata: &CodebookMetadata,
) -> Result<(Codebook, Arc<CellCodes>)> {
    let cpath = codebook_path(path);
    let (rows, _) = raw::load(&cpath)?;
    let codebook = Codebook::from_rows(metadata.params.clone(), &rows)
        .map_err(|e| LshError::format(&cpath, e.to_string()))?;
    if u64::from(index.keyword_space()) != metadata.params.keyword_space() {
        return Err(LshError::format(
            path,
            "the keyword space does not match the codebook's cells and subspaces",
        ));
    }
    let p = &metadata.params;
    let cells = CellCodes::from_index(index, p.subspaces as usize, p.cells as usize)
        .map_err(|e| LshError::format(path, e.to_string()))?;
    Ok((codebook, Arc::new(cells)))
}

/// The re-rank rows of the index at `path`: `saved` ([`read_saved`]), or for the codes form the
/// rows its `codebook` and `cells` rebuild.
fn store_of(
    path: &Path,
    metadata: &CodebookMetadata,
    saved: Option<Arc<Store>>,
    codebook: &Codebook,
    cells: &Arc<CellCodes>,
) -> Result<Arc<Store>> {
    match saved {
        Some(store) => Ok(store),
        None => Ok(Arc::new(Store::load_compact(
            &vectors_path(path),
            saved_form(metadata),
            Some((codebook, Arc::clone(cells))),
        )?)),
    }
}

impl std::fmt::Debug for CodebookIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodebookIndex")
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl CodebookIndex {
    /// Trains the codebook on `vectors`, encodes them and builds the index on `device`, with
    /// `probe` as the default of searches.
    pub fn build(
        vectors: VectorSet,
        params: CodebookParams,
        probe: Probe,
        device: DeviceChoice,
        source: Option<String>,
    ) -> Result<Self> {
        Self::build_on(vectors, params, probe, device, device, source)
    }

    /// [`CodebookIndex::build`] with the nearest-centre searches of training and encoding on
    /// `train_on` (a GPU finds the centres the CPU would), the index on `device`.
    pub fn build_on(
        vectors: VectorSet,
        params: CodebookParams,
        probe: Probe,
        device: DeviceChoice,
        train_on: DeviceChoice,
        source: Option<String>,
    ) -> Result<Self> {
        probe.validate()?;
        let t = Instant::now();
        let assigner = super::assign::Assigner::new(train_on, vectors.dim())?;
        let codebook = Codebook::train(&vectors, params, &assigner)?;
        log::info!(
            "codebook: trained in {:.2} s ({})",
            t.elapsed().as_secs_f64(),
            if assigner.on_gpu() {
                "nearest centres on the GPU"
            } else {
                "on the CPU"
            }
        );
        let params = codebook.params().clone();
        let metadata = CodebookMetadata {
            kind: stored::KIND.into(),
            family: stored::CODEBOOK.into(),
            params,
            probe,
            tuned: None,
            vectors: vectors_info(&vectors),
            source,
            space: Space::L2,
            rerank: Form::F32,
        };
        let t = Instant::now();
        let keywords = codebook.encode_all(&vectors, &assigner)?;
        log::info!(
            "codebook: vectors encoded in {:.2} s",
            t.elapsed().as_secs_f64()
        );
        let cells = CellCodes::from_keywords(
            &keywords,
            metadata.params.subspaces as usize,
            metadata.params.cells as usize,
        )?;
        let t = Instant::now();
        let index = Self::core_index(&codebook, &metadata, keywords)?;
        let engine = Engine::new(Arc::new(index), device)?;
        log::info!(
            "codebook: index built in {:.2} s",
            t.elapsed().as_secs_f64()
        );
        let store = Arc::new(Store::F32(Arc::new(vectors)));
        Ok(Self::assemble(
            codebook,
            Arc::new(cells),
            store,
            engine,
            metadata,
        ))
    }

    fn core_index(
        codebook: &Codebook,
        metadata: &CodebookMetadata,
        keywords: Vec<u32>,
    ) -> Result<InvertedIndex> {
        let p = codebook.params();
        let text =
            serde_json::to_string(metadata).map_err(|e| LshError::Metadata(e.to_string()))?;
        let space = u32::try_from(p.keyword_space())
            .map_err(|_| LshError::InvalidParameter("codebook: keyword space too large".into()))?;
        let mut builder = IndexBuilder::new().keyword_space(space).metadata(text);
        builder.push_fixed(&keywords, p.subspaces as usize)?;
        Ok(builder.build()?)
    }

    fn assemble(
        codebook: Codebook,
        cells: Arc<CellCodes>,
        store: Arc<Store>,
        engine: Engine,
        metadata: CodebookMetadata,
    ) -> Self {
        let reranker = Self::reranker(&codebook, &cells, store, &engine);
        Self {
            codebook,
            cells,
            engine,
            metadata,
            reranker,
            stages: StageClock::default(),
        }
    }

    /// The re-ranker of `store`, with the cells and the codebook beside it on the engine's GPU.
    fn reranker(
        codebook: &Codebook,
        cells: &CellCodes,
        store: Arc<Store>,
        engine: &Engine,
    ) -> Reranker {
        let mut reranker = Reranker::from_store(store, Metric::L2, engine.gpu_ordinal());
        reranker.attach_cells(CellCodesRef {
            starts: &cells.starts,
            ids: &cells.ids,
            codes: &cells.codes,
            subspaces: cells.subspaces,
        });
        if reranker.on_gpu() {
            let a = codebook.device_arrays();
            reranker.attach_codebook(CodebookRef {
                centres: a.centres,
                centre_norms: a.centre_norms,
                books: &a.books,
                book_norms: &a.book_norms,
                cross: a.cross,
                bounds: &a.bounds,
            });
        }
        reranker
    }

    /// Re-ranks from `form` from now on (and [`save`] writes that form): a compact copy made
    /// from the float vectors, which the index then drops. Only an index that still holds its
    /// float vectors changes form.
    ///
    /// [`save`]: CodebookIndex::save
    pub fn set_rerank(&mut self, form: Form) -> Result<()> {
        if form == self.metadata.rerank {
            return Ok(());
        }
        let Some(floats) = self.reranker.vectors().cloned() else {
            return Err(LshError::InvalidParameter(format!(
                "re-rank form {}: the index re-ranks from {}, not from its float vectors",
                form.name(),
                self.metadata.rerank.name()
            )));
        };
        let store = Store::encode(
            &floats,
            form,
            Some((&self.codebook, Arc::clone(&self.cells))),
        )?;
        self.metadata.vectors.crc32 = store.crc32();
        self.metadata.rerank = form;
        self.reranker = Self::reranker(&self.codebook, &self.cells, Arc::new(store), &self.engine);
        Ok(())
    }

    /// What a search re-ranks from.
    pub fn store(&self) -> &Arc<Store> {
        self.reranker.store()
    }

    /// Records the space the stored vectors were prepared for ([`Space::objects`]), saved with
    /// the index; searches take queries in it ([`Space::query`]).
    pub fn set_space(&mut self, space: Space) {
        self.metadata.space = space;
    }

    /// The space of the index (L2 unless built for another metric).
    pub fn space(&self) -> Space {
        self.metadata.space
    }

    /// Records `probe` (and the tuning that chose it) as the default of searches; [`save`]
    /// writes it into the index file.
    ///
    /// [`save`]: CodebookIndex::save
    pub fn set_defaults(&mut self, probe: Probe, tuned: Option<Tuned>) -> Result<()> {
        probe.validate()?;
        self.metadata.probe = probe;
        self.metadata.tuned = tuned;
        Ok(())
    }

    /// Saves the index to `path`, the vectors to `path.vectors` and the codebook to
    /// `path.codebook`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let text =
            serde_json::to_string(&self.metadata).map_err(|e| LshError::Metadata(e.to_string()))?;
        self.store().save(&vectors_path(path))?;
        raw::save(&self.codebook.to_rows()?, &codebook_path(path))?;
        self.engine.index().save_with_metadata(path, &text)?;
        Ok(())
    }

    /// Loads an index saved by [`CodebookIndex::save`] onto the backend of `device`.
    pub fn load(path: impl AsRef<Path>, device: DeviceChoice) -> Result<Self> {
        load_on(path.as_ref(), device, Self::open_on)
    }

    /// Opens an index whose core index is already loaded, on one backend.
    pub fn open_on(path: &Path, index: Arc<InvertedIndex>, backend: &dyn Backend) -> Result<Self> {
        CodebookMetadata::parse(index.metadata())
            .map_err(|e| LshError::format(path, e.to_string()))?;
        let saved = read_saved(path, &index)?;
        Self::open_with(path, index, backend, saved)
    }

    /// [`CodebookIndex::open_on`] with its saved re-rank copy already read ([`read_saved`]):
    /// replicas of one index on several devices share it.
    pub fn open_with(
        path: &Path,
        index: Arc<InvertedIndex>,
        backend: &dyn Backend,
        saved: Option<Arc<Store>>,
    ) -> Result<Self> {
        let metadata = CodebookMetadata::parse(index.metadata())
            .map_err(|e| LshError::format(path, e.to_string()))?;
        let (codebook, cells) = codebook_and_cells(path, &index, &metadata)?;
        let p = &metadata.params;
        let store = store_of(path, &metadata, saved, &codebook, &cells)?;
        if store.len() != cells.ids.len() || store.dim() != p.dim as usize {
            return Err(LshError::format(
                path,
                format!(
                    "{} vectors of dimension {} to re-rank from, the index holds {} of dimension {}",
                    store.len(),
                    store.dim(),
                    cells.ids.len(),
                    p.dim
                ),
            ));
        }
        let engine = Engine::with_backend(index, backend)?;
        let index = Self::assemble(codebook, cells, store, engine, metadata);
        // a failed warm-up costs the first search its first-use costs, nothing more
        if let Err(e) = index.warm_up() {
            log::warn!("{}: the GPU did not warm up ({e})", path.display());
        }
        Ok(index)
    }

    /// The metadata.
    pub fn metadata(&self) -> &CodebookMetadata {
        &self.metadata
    }

    /// The default probe (tuned at build time when the build tuned).
    pub fn probe(&self) -> Probe {
        self.metadata.probe
    }

    /// The codebook.
    pub fn codebook(&self) -> &Codebook {
        &self.codebook
    }

    /// The indexed float vectors, when the index re-ranks from them.
    pub fn vectors(&self) -> Option<&Arc<VectorSet>> {
        self.reranker.vectors()
    }

    /// The number of indexed vectors.
    pub fn len(&self) -> usize {
        self.cells.ids.len()
    }

    /// Whether no vector is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The dimension of the stored vectors.
    pub fn dim(&self) -> usize {
        self.metadata.params.dim as usize
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Whether re-ranking runs on the GPU.
    pub fn reranks_on_gpu(&self) -> bool {
        self.reranker.on_gpu()
    }

    /// The time of each stage of the searches since the last call.
    pub fn take_stages(&self) -> SearchStages {
        self.stages.take()
    }

    /// The objects by cell with their codes.
    pub fn cells(&self) -> &CellCodes {
        &self.cells
    }

    /// Whether the scan runs on the GPU.
    pub fn scans_on_gpu(&self) -> bool {
        self.reranker.gpu().is_some_and(|g| g.has_cells())
    }

    /// Per query, the top `probe.candidates` (at least `k`) by hit count, re-ranked by the exact
    /// L2 distance and cut to `k`.
    pub fn search(
        &self,
        queries: &VectorSet,
        k: usize,
        probe: &Probe,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let n = queries.len();
        self.search_each(
            queries,
            &vec![k; n],
            &vec![probe.candidates as usize; n],
            probe,
            Counting::Scan,
        )
    }

    /// Per query, the top `k` objects by hit count, no re-rank: count descending, then scan order
    /// ([`Counting::Scan`]) or id ([`Counting::Lists`]).
    pub fn search_counts(
        &self,
        queries: &VectorSet,
        k: usize,
        probe: &Probe,
        counting: Counting,
    ) -> Result<Vec<Vec<Hit>>> {
        let t = Instant::now();
        let plan = self.codebook.plan(queries, probe)?;
        let mut stages = SearchStages {
            hash_ms: ms_since(t),
            ..SearchStages::default()
        };
        self.counts_of(queries, &plan, k, counting, &mut stages)
    }

    fn counts_of(
        &self,
        queries: &VectorSet,
        plan: &Plan,
        k: usize,
        counting: Counting,
        stages: &mut SearchStages,
    ) -> Result<Vec<Vec<Hit>>> {
        let t = Instant::now();
        let hits = match counting {
            Counting::Lists(method) => {
                let qs = self.codebook.queries_of_plan(plan, queries);
                stages.hash_ms += ms_since(t);
                let t = Instant::now();
                let k = u32::try_from(k.min(self.len())).unwrap_or(u32::MAX);
                let params = SearchParams::top_k(k).with_method(method);
                let hits = self.engine.search(&qs, &params)?;
                stages.count_ms += ms_since(t);
                return Ok(hits);
            }
            Counting::Scan => match self.scanning_gpu(plan.levels) {
                Some(gpu) => {
                    let job = ScanJob {
                        plan_on_device: plan.levels > 0,
                        ..self.job(Queries::Flat(queries.as_slice()), plan, k)
                    };
                    let mut hits = gpu.scan_candidates(&job)?;
                    // the device writes them in scan order; the CPU's order is by count first
                    hits.par_iter_mut()
                        .for_each(|h| h.sort_by_key(|x| std::cmp::Reverse(x.count)));
                    hits
                }
                None if plan.levels > 0 => {
                    // every entry is written for each cell: nothing to clear
                    self.cells.candidates_with(
                        plan,
                        k,
                        &|q, p, state, lut| {
                            self.codebook
                                .closeness_fill(plan, queries.row(q), q, p, state, lut)
                        },
                        &|_, _, _| {},
                    )
                }
                None => self.cells.candidates(plan, k),
            },
        };
        stages.count_ms += ms_since(t);
        Ok(hits)
    }

    fn job<'a>(&self, queries: Queries<'a>, plan: &'a Plan, candidates: usize) -> ScanJob<'a> {
        ScanJob {
            queries,
            cells: &plan.cells,
            probes: plan.probes,
            picks: &plan.picks,
            entries: plan.entries,
            weighted: plan.weighted,
            levels: plan.levels,
            candidates,
            plan_on_device: false,
        }
    }

    /// The probes of `queries` as the GPU chooses them, when it does (for checks against
    /// [`Codebook::plan`]).
    pub fn gpu_plan(&self, queries: &VectorSet, probe: &Probe) -> Result<Option<Plan>> {
        let Some(gpu) = self.reranker.gpu().filter(|g| g.has_codebook()) else {
            return Ok(None);
        };
        let shape = self.codebook.plan_shape(probe)?;
        let (cells, scores, picks) =
            gpu.device_plan(queries.as_slice(), shape.probes, shape.picked())?;
        Ok(Some(Plan {
            cells,
            scores,
            picks,
            ..shape
        }))
    }

    /// [`CodebookIndex::search_each`] among the objects `allowed` admits: the answers are the
    /// nearest allowed objects. A filter whose objects' vectors hold at most `exact_floats`
    /// floats ([`EXACT_FLOATS`] in the kind's searches), or that admits at most four times the
    /// candidates asked, is answered exactly, every allowed object re-ranked. Otherwise the
    /// nearest allowed objects stand about `1 / share` times further down the order of all
    /// (`share`: the part of the objects allowed), so the probe's cells grow by that factor (at
    /// most every cell) and its candidates by it too, up to [`MAX_GROWTH`]; the allowed ones
    /// among the candidates are re-ranked.
    #[allow(clippy::too_many_arguments)]
    pub fn search_each_filtered(
        &self,
        queries: &VectorSet,
        ks: &[usize],
        candidates: &[usize],
        probe: &Probe,
        counting: Counting,
        allowed: &ObjectMask,
        exact_floats: usize,
    ) -> Result<Vec<Vec<VerifiedHit>>> {
        let n = self.len();
        if allowed.len() as usize != n {
            return Err(LshError::InvalidParameter(format!(
                "a mask of {} objects for an index of {n}",
                allowed.len()
            )));
        }
        let admitted = allowed.count() as usize;
        let most_asked = candidates.iter().copied().max().unwrap_or(0);
        if admitted * self.dim() <= exact_floats || admitted <= 4 * most_asked {
            return self
                .reranker
                .rank_allowed(queries, ks, allowed, &self.stages);
        }
        let grow = n as f64 / admitted.max(1) as f64;
        let scaled: Vec<usize> = candidates
            .iter()
            .map(|&c| ((c as f64 * grow.min(MAX_GROWTH)).ceil() as usize).min(n))
            .collect();
        let cells = self.codebook.params().cells.max(1);
        let probe = Probe {
            probes: ((f64::from(probe.probes) * grow).ceil() as u32).min(cells),
            ..*probe
        };
        // the candidates counted (on the device when it scans), filtered here, then re-ranked
        let plan = self.codebook.plan(queries, &probe)?;
        self.reranker
            .search_each(queries, ks, candidates, &self.stages, |_, stages| {
                let most = scaled.iter().copied().max().unwrap_or(0);
                let mut hits = self.counts_of(queries, &plan, most, counting, stages)?;
                for (h, &c) in hits.iter_mut().zip(&scaled) {
                    h.truncate(c);
                    h.retain(|x| allowed.contains(x.id));
                }
                Ok(hits)
            })
    }

    /// The GPU that scans a probe of `levels` closeness levels: one with the cells, and the
    /// codebook too for closeness weights (computed on the device only).
    fn scanning_gpu(&self, levels: u32) -> Option<&crate::gpu::GpuVectors> {
        self.reranker
            .gpu()
            .filter(|g| g.has_cells() && (levels == 0 || g.has_codebook()))
    }

    /// The `exact_floats` of [`CodebookIndex::search_each_filtered`] for where this index
    /// re-ranks: [`EXACT_FLOATS_GPU`] on a GPU, else [`EXACT_FLOATS`].
    pub fn exact_floats(&self) -> usize {
        if self.reranks_on_gpu() {
            EXACT_FLOATS_GPU
        } else {
            EXACT_FLOATS
        }
    }

    /// Whether the probes are chosen on the GPU.
    pub fn plans_on_gpu(&self) -> bool {
        self.reranker.gpu().is_some_and(|g| g.has_codebook())
    }
}
