//! The backend abstraction (DESIGN.md section 4): a backend uploads an index (part) and runs
//! batches of prepared queries on it, returning per-query top-k in the contract order. The CPU
//! backend is the reference; the CUDA backend must return identical results.

mod cpu;
pub mod cpu_cohorts;
pub mod cpu_tiles;
pub mod cuda;
mod device;

pub use cpu::{CpuBackend, CpuCosts};
pub use cuda::{cuda_probe, kernels, CudaBackend};
pub use device::{each_on_a_thread, select_backend, select_backends, DeviceChoice};

use crate::error::{GenieError, Result};
use crate::index::{InvertedIndex, PreparedQuery};
use crate::mask::ObjectMask;
use crate::model::Hit;
use std::sync::Arc;

/// How counts are kept and the top-k selected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// The Count Priority Queue (bitmap counter + Gate + hash table).
    #[default]
    Cpq,
    /// The count-table baseline (full count array + k-selection).
    CountTable,
}

impl std::str::FromStr for Method {
    type Err = GenieError;
    fn from_str(s: &str) -> std::result::Result<Self, GenieError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpq" => Ok(Self::Cpq),
            "count-table" | "count_table" => Ok(Self::CountTable),
            other => Err(GenieError::InvalidParameter(format!(
                "method {other:?}: expected cpq or count-table"
            ))),
        }
    }
}

/// Parameters of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchParams {
    /// Hits per query (0 gives empty results).
    pub k: u32,
    /// The counting structure.
    pub method: Method,
    /// Maximum postings per sublist (load balance), `L`.
    pub sublist_len: u32,
    /// Hash table slots per `k * count bound` (1.5 by default; smaller forces reruns).
    pub table_factor: f64,
    /// On a GPU, count with byte counters in shared memory over object tiles when every query's
    /// count bound is at most 1023 (default; 8-bit counters up to 255, 16-bit above); `false` forces the global bitmap counter kernel.
    /// Results are identical either way.
    pub gpu_tiles: bool,
    /// On a GPU's tiled path, a keyword list holding at least `1 / gpu_dense` of the objects is
    /// read as a bitmap of the objects (32 objects a word, no atomics) instead of as object ids;
    /// 0 reads every list as ids. Default [`DEFAULT_GPU_DENSE`]. Results are identical either way.
    pub gpu_dense: u32,
    /// On a GPU's tiled path, tiles of 64 K objects at 8 bits (32 K at 16; default `true`) rather
    /// than half that: half the work per (list, tile), which queries of many short lists feel
    /// most. Results are identical either way.
    pub gpu_wide_tiles: bool,
    /// On a GPU's tiled path, the tiles each launch of a sweep counts for every query of the batch
    /// (`Some(0)`: never sweep; default `None`: the rule of `backend::cuda`, or
    /// `GENIE_SWEEP_TILES`). Results are identical either way.
    pub gpu_sweep_tiles: Option<u32>,
    /// On the CPU, count a query over tiles of objects in cache-resident counters when its
    /// postings are many for the objects (see `backend::cpu`; default `true`); `false` forces the
    /// c-PQ. Results are identical either way.
    pub cpu_tiles: bool,
    /// On the CPU's tiled count, bytes of counters per tile (default 0: the host's,
    /// [`cpu_tiles::host_tile_bytes`]): the tile's objects are those whose counters fit. Results
    /// are identical whatever the size.
    pub cpu_tile_bytes: usize,
    /// On the CPU's tiled count, count queries that share keyword lists together, as cohorts of
    /// up to 8 (see `backend::cpu_cohorts`; default `true`): a shared list's posting takes one
    /// add for the cohort. Results are identical either way.
    pub cpu_cohorts: bool,
    /// The objects the search may return (`None`, the default: every object). The others are
    /// never counted: the top-k is that of the allowed objects, k of them whenever k allowed
    /// objects match. Its length must be the index's object count; a parted search gives each
    /// part its slice.
    pub mask: Option<ObjectMask>,
}

/// Default of [`SearchParams::gpu_dense`]: lists holding at least 1/32 of the objects, where a
/// bitmap takes no more bytes than the list's ids.
pub const DEFAULT_GPU_DENSE: u32 = 32;

impl SearchParams {
    /// Top-`k` with the c-PQ and default settings.
    pub fn top_k(k: u32) -> Self {
        Self {
            k,
            method: Method::Cpq,
            sublist_len: crate::index::DEFAULT_SUBLIST_LEN,
            table_factor: 1.5,
            gpu_tiles: true,
            gpu_dense: DEFAULT_GPU_DENSE,
            gpu_wide_tiles: true,
            gpu_sweep_tiles: None,
            cpu_tiles: true,
            cpu_tile_bytes: 0,
            cpu_cohorts: true,
            mask: None,
        }
    }

    /// The same with a mask of the objects the search may return.
    pub fn with_mask(mut self, mask: ObjectMask) -> Self {
        self.mask = Some(mask);
        self
    }

    /// The mask a search of an index of `objects` objects applies: `None` when there is none or
    /// it allows every object (nothing to filter); an error when its length is not `objects`.
    pub fn mask_for(&self, objects: u32) -> Result<Option<&ObjectMask>> {
        match &self.mask {
            None => Ok(None),
            Some(m) if m.len() != objects => Err(GenieError::InvalidParameter(format!(
                "the object mask covers {} objects, the index has {objects}",
                m.len()
            ))),
            Some(m) if m.is_all() => Ok(None),
            Some(m) => Ok(Some(m)),
        }
    }

    /// The same with another method.
    pub fn with_method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }
}

/// A compute backend.
pub trait Backend: Send + Sync {
    /// A name for logs and reports, e.g. `cpu (16 threads)` or the GPU's name.
    fn name(&self) -> String;
    /// Bytes of working memory a batch may use (bitmaps, tables, work lists).
    fn memory_budget(&self) -> u64;
    /// The GPU's ordinal for a GPU backend (`None` on the CPU).
    fn gpu_ordinal(&self) -> Option<usize> {
        None
    }
    /// Makes an index ready to search (on a GPU: uploads it once).
    fn upload(&self, index: Arc<InvertedIndex>) -> Result<Box<dyn ResidentIndex>>;
}

/// An index made ready by a backend: it provides [`Self::host_index`] and
/// [`Self::search_batch`] (and may run consecutive batches better in [`Self::search_planned`]).
pub trait ResidentIndex: Send + Sync {
    /// The index on the host, as the implementation holds it.
    fn host_index(&self) -> &Arc<InvertedIndex>;
    /// The index on the host.
    fn index(&self) -> &InvertedIndex {
        self.host_index()
    }
    /// The index on the host, shared.
    fn shared_index(&self) -> Arc<InvertedIndex> {
        self.host_index().clone()
    }
    /// Runs one batch; the result has one entry per query, in order.
    fn search_batch(&self, batch: &[PreparedQuery], params: &SearchParams)
        -> Result<Vec<Vec<Hit>>>;
    /// Runs consecutive batches (`batches` are ranges of `prepared`) and returns the hits of all
    /// queries in order, calling `progress(queries_done)` as batches finish. By default each
    /// batch runs by [`Self::search_batch`]; a GPU backend overrides this to overlap one batch's
    /// copies with another's kernels.
    fn search_planned(
        &self,
        prepared: &[PreparedQuery],
        batches: &[std::ops::Range<usize>],
        params: &SearchParams,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<Hit>>> {
        let mut out = Vec::with_capacity(prepared.len());
        for range in batches {
            out.extend(self.search_batch(&prepared[range.clone()], params)?);
            progress(range.end);
        }
        Ok(out)
    }
    /// Device time per stage summed over the batches since the last call (GPU backends).
    fn take_stage_times(&self) -> Option<StageTimes> {
        None
    }
}

/// Time spent per stage of the paper's Table I, in milliseconds, summed over batches.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Host-to-device copies of the batch (work list, query metadata).
    pub transfer_in_ms: f64,
    /// Clearing the counters and the match kernel.
    pub match_ms: f64,
    /// The select kernel.
    pub select_ms: f64,
    /// Device-to-host copies of the results.
    pub transfer_out_ms: f64,
    /// Batches run (reruns included).
    pub batches: u64,
    /// Queries rerun after a full hash table or a lost race.
    pub reruns: u64,
    /// Peak device bytes of a batch's working buffers.
    pub peak_batch_bytes: u64,
    /// Host time spent planning batches (keyword lists, metadata).
    pub host_plan_ms: f64,
    /// Host time spent launching batches (the copy into pinned memory, enqueueing copies and
    /// kernels).
    pub host_launch_ms: f64,
    /// Host time spent waiting for and unpacking results.
    pub host_finish_ms: f64,
}
