//! Vectors resident on a GPU (kernels/vectors.cu): here, exact distances to candidates for
//! re-ranking (`rerank_distance`), identical to the CPU's bit for bit; a codebook index's
//! closeness scan and its planning in [`codebook`]; the nearest centres of rows (k-means, cell
//! assignment) in [`nearest`].

mod among;
mod codebook;
mod compact;
mod nearest;

use super::{VectorDistance, PREPARED_BATCH};
use codebook::{Book, Cells};
use compact::Compact;
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg,
};
use genie_core::backend::cuda::{
    cuda_err, cuda_probe, open_module, Stager, LANES, SLOT_BYTES, WRITE_COMBINED,
};
use genie_core::{GenieError, Hit, Result, VerifiedHit};
use std::sync::Arc;
use std::time::Instant;

/// Most scratch of one scan launch (ids and counts of the scanned objects of resident blocks).
const SCAN_SCRATCH_BYTES: usize = 512 << 20;
/// Most blocks of a scan launch.
const SCAN_BLOCKS: usize = 4096;

/// Most codeword products of queries on the device at once (closeness weights: 256 MiB).
const QW_FLOATS: usize = 1 << 26;

/// Batches of at least this many floats go up through page-locked memory (filled by all cores).
/// On an H200's host the 3.8 MB of 10,000 96-d queries took 2.8-3.6 ms joined on one core and
/// copied from pageable memory.
const PINNED_FLOATS: usize = 1 << 16;
/// Most freed device memory the pool keeps for the next searches ([`GpuVectors::keep_freed_memory`]).
const KEPT_BYTES: u64 = 4 << 30;

/// Rows per block of `nearest_scores` (kernels/vectors.cu `NEAREST_ROWS`).
const NEAREST_ROWS: usize = 16;
/// Queries per block of `codeword_products` (kernels/codebook_scan.cuh `PRODUCT_ROWS`).
const PRODUCT_ROWS: usize = 32;
/// Most dynamic shared memory of a block (the rows of `nearest_scores`, the tables of
/// `codebook_scan`).
const MAX_SHARED_BYTES: usize = 200 << 10;
/// Most scores of one `nearest_scores` launch (rows x centres).
const NEAREST_SCRATCH: usize = 1 << 28;

/// One warp per item over `items` items: blocks of 256 threads (8 warps), at least one block and
/// at most 2^20.
fn warp_per_item(items: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (items.div_ceil(8).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The (query, candidate) pairs of a re-rank launch: `nq` queries on the device, `per_query`
/// candidates each, and the metric's number.
pub(super) struct Pairs<'a> {
    queries: &'a CudaSlice<f32>,
    candidates: &'a CudaSlice<u32>,
    per_query: u32,
    /// 1: every query has the same `per_query` candidates (`candidates` holds them once).
    shared: u32,
    nq: u32,
    metric: u32,
}

/// What a re-rank launch writes: every pair's distance, or each query's top `k` of the shared
/// candidates ([`GpuVectors::top_k_among`], kernels/vectors.cu `among_top`).
pub(super) enum Out<'a> {
    Distances(&'a mut CudaSlice<f64>),
    Top(Top<'a>),
}

/// A fused launch's outputs: `k` hits a query and each query's number of them.
pub(super) struct Top<'a> {
    pub(super) k: u32,
    pub(super) ids: &'a mut CudaSlice<u32>,
    pub(super) dist: &'a mut CudaSlice<f64>,
    pub(super) n: &'a mut CudaSlice<u32>,
}

/// The most hits a query of a fused launch (`AMONG_MAX_K` in kernels/vectors.cu).
pub(super) const AMONG_MAX_K: usize = 32;
/// Queries (one warp each) a block of a fused launch (`AMONG_QUERIES`).
const AMONG_QUERIES: usize = 8;
/// Candidates a tile of a fused launch (`AMONG_TILE`).
const AMONG_TILE: usize = 32;

/// Shared memory a block of a fused launch of `k` hits a query over rows of `dim` floats holds:
/// each query's list and buffer (a key and an id each), the tile's rows at an odd stride and the
/// queries.
pub(super) fn among_shared_bytes(k: usize, dim: usize) -> usize {
    AMONG_QUERIES * (k + AMONG_TILE) * 12 + AMONG_TILE * (dim | 1) * 4 + AMONG_QUERIES * dim * 4
}

/// Eight threads per (query, candidate) pair of a re-rank launch over `pairs` pairs: blocks of
/// 128 threads, at most 2^20.
fn pair_per_8_threads(pairs: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (pairs.div_ceil(16).min(1 << 20) as u32, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Whether `nearest_scores` holds its rows of `dim` floats in shared memory.
fn nearest_fits(dim: usize) -> bool {
    NEAREST_ROWS * dim * 4 <= MAX_SHARED_BYTES
}

/// Vectors resident on a GPU, for exact distances to candidates.
pub struct GpuVectors {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    func: CudaFunction,
    scan: CudaFunction,
    top_k: CudaFunction,
    nearest: CudaFunction,
    smallest: CudaFunction,
    plan_picks: CudaFunction,
    products: CudaFunction,
    terms: CudaFunction,
    compact_fn: CudaFunction,
    book: Option<Book>,
    /// Page-locked lanes that large query batches go up through.
    staging: std::sync::OnceLock<Stager>,
    vecs: CudaSlice<f32>,
    n: u32,
    dim: u32,
    cells: Option<Cells>,
    /// A compact copy re-ranked from instead of `vecs` ([`GpuVectors::from_store`]).
    compact: Option<Compact>,
}

impl std::fmt::Debug for GpuVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuVectors")
            .field("n", &self.n)
            .field("dim", &self.dim)
            .finish()
    }
}

impl GpuVectors {
    /// Uploads `vectors` (rows of `dim` floats) to device `ordinal`.
    pub fn new(ordinal: usize, vectors: &[f32], dim: usize) -> Result<Self> {
        cuda_probe().map_err(GenieError::GpuUnavailable)?;
        if dim == 0 || vectors.len() % dim != 0 {
            return Err(GenieError::InvalidParameter(format!(
                "{} floats are not rows of dimension {dim}",
                vectors.len()
            )));
        }
        let n = u32::try_from(vectors.len() / dim).map_err(|_| {
            GenieError::InvalidParameter("more than 2^32 vectors to re-rank on a GPU".into())
        })?;
        let dim32 = u32::try_from(dim)
            .map_err(|_| GenieError::InvalidParameter(format!("dimension {dim} too large")))?;
        let module = &crate::kernels::VECTORS;
        let (ctx, funcs, stream) = open_module(ordinal, module, module.entry_points)?;
        let [func, scan, top_k, nearest, smallest, plan_picks, products, terms, compact_fn]: [CudaFunction; 9] =
            funcs
                .try_into()
                .map_err(|_| GenieError::Cuda("the re-rank kernels did not load".into()))?;
        let vecs = stream
            .clone_htod(if vectors.is_empty() {
                &[0.0f32][..]
            } else {
                vectors
            })
            .map_err(cuda_err)?;
        stream.synchronize().map_err(cuda_err)?;
        Ok(Self {
            ctx,
            stream,
            func,
            scan,
            top_k,
            nearest,
            smallest,
            plan_picks,
            products,
            terms,
            compact_fn,
            book: None,
            staging: std::sync::OnceLock::new(),
            vecs,
            n,
            dim: dim32,
            cells: None,
            compact: None,
        })
    }
    /// `host` copied to the device, a large batch through the page-locked staging lanes (pinned
    /// at the first such batch: an index's warm-up when it opens).
    fn upload(&self, host: &[f32]) -> Result<CudaSlice<f32>> {
        let s = &self.stream;
        if host.len() < PINNED_FLOATS {
            let d = s.clone_htod(host).map_err(cuda_err)?;
            s.synchronize().map_err(cuda_err)?;
            return Ok(d);
        }
        let (d, _times) = self.stager()?.upload(s, host)?;
        Ok(d)
    }

    /// `rows` (each of the vectors' dimension) copied to the device one after the other, a
    /// large batch straight from the rows through the page-locked staging lanes. Synchronous.
    fn upload_rows(&self, rows: &[&[f32]]) -> Result<CudaSlice<f32>> {
        let dim = self.dim as usize;
        let s = &self.stream;
        if rows.len() * dim < PINNED_FLOATS {
            return self.upload(&rows.concat());
        }
        // SAFETY: every float is written by the copies below before any kernel reads it
        let mut d = unsafe { s.alloc::<f32>(rows.len() * dim) }.map_err(cuda_err)?;
        self.stager()?.copy_rows(s, rows, dim, &mut d)?;
        Ok(d)
    }

    /// The page-locked staging lanes of query uploads, pinned now if they are not yet.
    fn stager(&self) -> Result<&Stager> {
        if let Some(st) = self.staging.get() {
            return Ok(st);
        }
        // a lane (two slots) per two slots' worth of a default batch, so that a small dimension
        // pins little: pinning took 12-19 ms for 32 MiB on an H200's host
        let batch_bytes = self.dim as usize * PREPARED_BATCH * 4;
        let lanes = LANES
            .min(rayon::current_num_threads())
            .min(batch_bytes.div_ceil(2 * SLOT_BYTES))
            .max(1);
        let st = Stager::new(&self.ctx, lanes, SLOT_BYTES, WRITE_COMBINED)?;
        // another thread may have pinned its own meanwhile: either serves
        let _ = self.staging.set(st);
        self.staging
            .get()
            .ok_or_else(|| GenieError::Cuda("no staging memory".into()))
    }

    /// Lets the device's memory pool keep what searches free (up to [`KEPT_BYTES`]), so that
    /// the next search of the same sizes maps no new memory.
    pub fn keep_freed_memory(&self) -> Result<()> {
        genie_core::backend::cuda::keep_freed_memory(&self.ctx, KEPT_BYTES)
    }
    /// Launches `rerank_distance`: `out[t]` = the distance from query `t / per_query` (rows of
    /// `queries`, `nq` of them) to vector `candidates[t]` (NaN for ids beyond the vectors).
    fn launch_distances(
        &self,
        queries: &CudaSlice<f32>,
        candidates: &CudaSlice<u32>,
        (per_query, shared): (u32, bool),
        nq: u32,
        metric: VectorDistance,
        mut out: Out<'_>,
    ) -> Result<()> {
        let pairs = Pairs {
            queries,
            candidates,
            per_query,
            shared: u32::from(shared),
            nq,
            metric: metric as u32,
        };
        if let Some(c) = &self.compact {
            return self.launch_compact(c, &pairs, &mut out);
        }
        // SAFETY: argument types and order match kernels/vectors.cu `rerank_distance`, whose
        // first arguments are the resident vectors; `launch_pairs` pushes the rest
        unsafe {
            self.launch_pairs(
                self.stream.launch_builder(&self.func).arg(&self.vecs),
                &pairs,
                &mut out,
            )
        }
    }

    /// Pushes the arguments every re-rank kernel ends with (the rows' number and dimension, the
    /// queries, the candidates, their number a query, the number of queries, the metric, then
    /// the outputs: the distances, `k` and the top's three arrays, those of `out` and unused
    /// pointers for the others) and launches: eight threads a pair into the distances, or a
    /// block of warps (a query each) into the top.
    ///
    /// # Safety
    /// `args` holds the kernel's arguments before these, of the types it takes; `pairs` holds
    /// `nq x per_query` candidates and `nq` queries of `dim` floats, and `out` room for as many
    /// distances, or (shared candidates) for `nq x k` hits and `nq` lengths.
    unsafe fn launch_pairs<'a, 'b: 'a>(
        &'a self,
        args: &mut LaunchArgs<'a>,
        pairs: &'a Pairs<'a>,
        out: &'a mut Out<'b>,
    ) -> Result<()> {
        let cfg = match out {
            Out::Distances(_) => pair_per_8_threads(pairs.nq as usize * pairs.per_query as usize),
            Out::Top(t) => LaunchConfig {
                grid_dim: (pairs.nq.div_ceil(AMONG_QUERIES as u32), 1, 1),
                block_dim: (32 * AMONG_QUERIES as u32, 1, 1),
                shared_mem_bytes: among_shared_bytes(t.k as usize, self.dim as usize) as u32,
            },
        };
        args.arg(&self.n)
            .arg(&self.dim)
            .arg(pairs.queries)
            .arg(pairs.candidates)
            .arg(&pairs.per_query)
            .arg(&pairs.shared)
            .arg(&pairs.nq)
            .arg(&pairs.metric);
        // the outputs a launch does not write: any device pointer (never read nor written)
        let unused = &self.vecs;
        match out {
            Out::Distances(d) => args
                .arg(&mut **d)
                .arg(&0u32)
                .arg(unused)
                .arg(unused)
                .arg(unused),
            Out::Top(Top { k, ids, dist, n }) => args
                .arg(unused)
                .arg(&*k)
                .arg(&mut **ids)
                .arg(&mut **dist)
                .arg(&mut **n),
        };
        // SAFETY: as the caller promises
        unsafe { args.launch(cfg) }.map_err(cuda_err)?;
        Ok(())
    }

    /// Distances from each query (rows of `queries`) to its `per_query` candidates (`candidates`,
    /// query-major; ids at or beyond the vectors give NaN): `queries x per_query` values.
    pub fn distances(
        &self,
        queries: &[f32],
        candidates: &[u32],
        per_query: usize,
        metric: VectorDistance,
    ) -> Result<Vec<f64>> {
        let dim = self.dim as usize;
        let nq = queries.len() / dim;
        if queries.len() % dim != 0 || candidates.len() != nq * per_query {
            return Err(GenieError::InvalidParameter(format!(
                "re-rank: {} query floats of dimension {dim} and {} candidates for {per_query} per query",
                queries.len(),
                candidates.len()
            )));
        }
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let (nq32, kc32) = (
            u32::try_from(nq)
                .map_err(|_| GenieError::InvalidParameter("too many queries".into()))?,
            u32::try_from(per_query)
                .map_err(|_| GenieError::InvalidParameter("too many candidates".into()))?,
        );
        let s = &self.stream;
        let q = s.clone_htod(queries).map_err(cuda_err)?;
        let c = s.clone_htod(candidates).map_err(cuda_err)?;
        let mut out = s.alloc_zeros::<f64>(candidates.len()).map_err(cuda_err)?;
        self.launch_distances(
            &q,
            &c,
            (kc32, false),
            nq32,
            metric,
            Out::Distances(&mut out),
        )?;
        let d = s.clone_dtoh(&out).map_err(cuda_err)?;
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        Ok(d)
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}
