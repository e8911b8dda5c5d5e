//! Exact distances on the GPU for re-ranking (kernels/lsh.cu `rerank_distance`): the vectors stay
//! resident, each call sends queries and candidate ids and gets the distances back, identical to
//! the CPU's bit for bit.

use super::cuda_err;
use super::{CellCodesRef, CodebookRef, ScanJob, ScanTimes, VectorDistance};
use crate::error::{GenieError, Result};
use crate::{Hit, VerifiedHit};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;
use std::time::Instant;

/// Most scratch of one scan launch (ids and counts of the scanned objects of resident blocks).
const SCAN_SCRATCH_BYTES: usize = 512 << 20;
/// Most blocks of a scan launch.
const SCAN_BLOCKS: usize = 4096;

/// A codebook index's objects by cell, resident beside the vectors.
struct Cells {
    starts: CudaSlice<u32>,
    ids: CudaSlice<u32>,
    codes: CudaSlice<u8>,
    subspaces: u32,
    max_cell: usize,
}

/// A codebook's centres and codewords on the device.
struct Book {
    centres: CudaSlice<f32>,
    cnorms: CudaSlice<f32>,
    books: CudaSlice<f32>,
    bnorms: CudaSlice<f32>,
    cross: CudaSlice<f32>,
    bounds: CudaSlice<u32>,
    ncells: u32,
    subspaces: u32,
}

/// Most dynamic shared memory of `codebook_cells` (keys of the cells and the query).
const CELLS_SHARED_BYTES: usize = 160 << 10;

/// The candidates of a scan on the device.
struct Scanned {
    queries: CudaSlice<f32>,
    ids: CudaSlice<u32>,
    counts: CudaSlice<u32>,
    n: CudaSlice<u32>,
    nq: usize,
}

/// Vectors resident on a GPU, for exact distances to candidates.
pub struct GpuVectors {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    func: CudaFunction,
    scan: CudaFunction,
    top_k: CudaFunction,
    plan_cells: CudaFunction,
    plan_picks: CudaFunction,
    book: Option<Book>,
    vecs: CudaSlice<f32>,
    n: u32,
    dim: u32,
    cells: Option<Cells>,
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
        super::cuda_probe().map_err(GenieError::GpuUnavailable)?;
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
        let (ctx, funcs, stream) = super::lsh::open_all(
            ordinal,
            &[
                "rerank_distance",
                "codebook_scan",
                "rank_top_k",
                "codebook_cells",
                "codebook_picks",
            ],
        )?;
        let [func, scan, top_k, plan_cells, plan_picks]: [CudaFunction; 5] = funcs
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
            plan_cells,
            plan_picks,
            book: None,
            vecs,
            n,
            dim: dim32,
            cells: None,
        })
    }

    /// Keeps a codebook index's objects by cell on the device, for [`GpuVectors::scan_top_k`].
    pub fn attach_cells(&mut self, cells: CellCodesRef<'_>) -> Result<()> {
        cells.check()?;
        if let Some(&bad) = cells.ids.iter().find(|&&id| id >= self.n) {
            return Err(GenieError::InvalidParameter(format!(
                "cell codes: object {bad} of {} vectors",
                self.n
            )));
        }
        let s = &self.stream;
        let up32 = |v: &[u32]| s.clone_htod(if v.is_empty() { &[0u32][..] } else { v });
        let codes = s
            .clone_htod(if cells.codes.is_empty() {
                &[0u8][..]
            } else {
                cells.codes
            })
            .map_err(cuda_err)?;
        self.cells = Some(Cells {
            starts: up32(cells.starts).map_err(cuda_err)?,
            ids: up32(cells.ids).map_err(cuda_err)?,
            codes,
            subspaces: cells.subspaces as u32,
            max_cell: cells.max_cell(),
        });
        s.synchronize().map_err(cuda_err)?;
        Ok(())
    }

    /// Whether a codebook index's cells are attached.
    pub fn has_cells(&self) -> bool {
        self.cells.is_some()
    }

    /// Keeps a codebook's centres and codewords on the device, so that [`ScanJob::plan_on_device`]
    /// jobs choose their cells and codewords there. Refused when the cells' keys and a query do not
    /// fit in shared memory (the host plans then).
    pub fn attach_codebook(&mut self, book: CodebookRef<'_>) -> Result<()> {
        let dim = self.dim as usize;
        let m = book.bounds.len().saturating_sub(1);
        let ncells = book.centre_norms.len();
        let bad = |what: &str| {
            Err(GenieError::InvalidParameter(format!(
                "codebook on the GPU: {what}"
            )))
        };
        if m == 0
            || book.bounds[0] != 0
            || book.bounds[m] as usize != dim
            || book.bounds.windows(2).any(|w| w[0] >= w[1])
        {
            return bad("slice bounds do not cut the dimension");
        }
        if book.centres.len() != ncells * dim
            || book.books.len() != 256 * dim
            || book.book_norms.len() != m * 256
            || book.cross.len() != ncells * m * 256
            || ncells == 0
        {
            return bad("array sizes do not agree");
        }
        if (ncells + dim) * 4 > CELLS_SHARED_BYTES {
            return bad("too many cells to rank in shared memory");
        }
        let s = &self.stream;
        let up = |v: &[f32]| s.clone_htod(v).map_err(cuda_err);
        self.book = Some(Book {
            centres: up(book.centres)?,
            cnorms: up(book.centre_norms)?,
            books: up(book.books)?,
            bnorms: up(book.book_norms)?,
            cross: up(book.cross)?,
            bounds: s.clone_htod(book.bounds).map_err(cuda_err)?,
            ncells: ncells as u32,
            subspaces: m as u32,
        });
        s.synchronize().map_err(cuda_err)?;
        Ok(())
    }

    /// Whether a codebook is attached.
    pub fn has_codebook(&self) -> bool {
        self.book.is_some()
    }

    /// Chooses, on the device, each query's `probes` cells and per (cell, slice) its `entries`
    /// codewords: `queries` already there, `nq` of them.
    fn plan_on_device(
        &self,
        queries: &CudaSlice<f32>,
        nq: usize,
        probes: usize,
        entries: usize,
    ) -> Result<(CudaSlice<u32>, CudaSlice<u8>)> {
        let book = self.book.as_ref().ok_or_else(|| {
            GenieError::InvalidParameter("no codebook on the GPU to plan with".into())
        })?;
        let s = &self.stream;
        let m = book.subspaces as usize;
        let mut cells = s
            .alloc_zeros::<u32>((nq * probes).max(1))
            .map_err(cuda_err)?;
        let mut picks = s
            .alloc_zeros::<u8>((nq * probes * m * entries).max(1))
            .map_err(cuda_err)?;
        let (nq32, p32, e32) = (nq as u32, probes as u32, entries as u32);
        let shared = (book.ncells as usize + self.dim as usize) * 4;
        self.plan_cells
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
            .map_err(cuda_err)?;
        let cfg = LaunchConfig {
            grid_dim: (nq.clamp(1, 1 << 16) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        // SAFETY: argument types and order match kernels/lsh.cu `codebook_cells`; `cells` holds
        // `nq x probes` entries and the shared memory the keys and one query.
        unsafe {
            s.launch_builder(&self.plan_cells)
                .arg(&book.centres)
                .arg(&book.cnorms)
                .arg(&book.ncells)
                .arg(&self.dim)
                .arg(queries)
                .arg(&nq32)
                .arg(&p32)
                .arg(&mut cells)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        let warps = nq * m;
        let cfg = LaunchConfig {
            grid_dim: (warps.div_ceil(8).clamp(1, 1 << 20) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: argument types and order match kernels/lsh.cu `codebook_picks`; `picks` holds
        // `nq x probes x subspaces x entries` bytes and entries are at most 256.
        unsafe {
            s.launch_builder(&self.plan_picks)
                .arg(&book.books)
                .arg(&book.bnorms)
                .arg(&book.cross)
                .arg(&book.bounds)
                .arg(&book.subspaces)
                .arg(&self.dim)
                .arg(queries)
                .arg(&nq32)
                .arg(&cells)
                .arg(&p32)
                .arg(&e32)
                .arg(&mut picks)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        Ok((cells, picks))
    }

    /// The cells and codewords the device chooses for `queries` (for checks against the CPU's
    /// plan): `nq x probes` cells and `nq x probes x subspaces x entries` codewords.
    pub fn device_plan(
        &self,
        queries: &[f32],
        probes: usize,
        entries: usize,
    ) -> Result<(Vec<u32>, Vec<u8>)> {
        let nq = queries.len() / self.dim as usize;
        if nq == 0 || entries == 0 || entries > 256 || probes == 0 {
            return Err(GenieError::InvalidParameter(
                "device plan: queries, probes and 1 to 256 entries needed".into(),
            ));
        }
        let s = &self.stream;
        let q = s.clone_htod(queries).map_err(cuda_err)?;
        let (cells, picks) = self.plan_on_device(&q, nq, probes, entries)?;
        let (c, p) = (
            s.clone_dtoh(&cells).map_err(cuda_err)?,
            s.clone_dtoh(&picks).map_err(cuda_err)?,
        );
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        Ok((c, p))
    }

    fn scan(&self, job: &ScanJob<'_>, times: &mut ScanTimes) -> Result<Scanned> {
        let cells = self.cells.as_ref().ok_or_else(|| {
            GenieError::InvalidParameter("no codebook cells on the GPU to scan".into())
        })?;
        let (dim, m) = (self.dim as usize, cells.subspaces as usize);
        let nq = job.queries.len() / dim;
        let bad = |what: &str| {
            Err(GenieError::InvalidParameter(format!(
                "codebook scan: {what} do not fit {nq} queries"
            )))
        };
        if job.queries.len() % dim != 0 {
            return bad("the query floats");
        }
        if job.entries == 0 || job.entries > 256 || job.probes == 0 {
            return bad("the probes");
        }
        if !job.plan_on_device
            && (job.cells.len() != nq * job.probes
                || job.picks.len() != job.cells.len() * m * job.entries)
        {
            return bad("the probed cells and codewords");
        }
        let n32 = |v: usize, what: &str| {
            u32::try_from(v).map_err(|_| GenieError::InvalidParameter(format!("too many {what}")))
        };
        let (nq32, probes32, entries32, cand32) = (
            n32(nq, "queries")?,
            n32(job.probes, "probes")?,
            n32(job.entries, "entries")?,
            n32(job.candidates, "candidates")?,
        );
        let t = Instant::now();
        let s = &self.stream;
        let queries = s.clone_htod(job.queries).map_err(cuda_err)?;
        let (probed, picks) = if job.plan_on_device {
            s.synchronize().map_err(cuda_err)?;
            times.upload_ms += t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let plan = self.plan_on_device(&queries, nq, job.probes, job.entries)?;
            s.synchronize().map_err(cuda_err)?;
            times.plan_ms += t.elapsed().as_secs_f64() * 1e3;
            plan
        } else {
            let plan = (
                s.clone_htod(job.cells).map_err(cuda_err)?,
                s.clone_htod(job.picks).map_err(cuda_err)?,
            );
            s.synchronize().map_err(cuda_err)?;
            times.upload_ms += t.elapsed().as_secs_f64() * 1e3;
            plan
        };
        let t = Instant::now();
        let width = (job.probes * cells.max_cell).max(1);
        let blocks = nq
            .min(SCAN_BLOCKS)
            .min((SCAN_SCRATCH_BYTES / (8 * width)).max(1))
            .max(1);
        let most = m * if job.weighted { job.entries } else { 1 };
        let bins = most + 1;
        let shared = bins * 4 + m * 256 * 2;
        let (width32, bins32, shared32) = (
            n32(width, "scanned objects")?,
            n32(bins, "counts")?,
            n32(shared, "bytes of shared memory")?,
        );
        self.scan
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
            .map_err(cuda_err)?;
        let mut sc_ids = s.alloc_zeros::<u32>(blocks * width).map_err(cuda_err)?;
        let mut sc_counts = s.alloc_zeros::<u32>(blocks * width).map_err(cuda_err)?;
        let out_len = (nq * job.candidates).max(1);
        let mut ids = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut counts = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut n = s.alloc_zeros::<u32>(nq.max(1)).map_err(cuda_err)?;
        let weighted = u32::from(job.weighted);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: shared32,
        };
        // SAFETY: argument types and order match kernels/lsh.cu `codebook_scan`; the sizes were
        // checked above and the scratch holds `blocks x width` entries.
        unsafe {
            s.launch_builder(&self.scan)
                .arg(&cells.starts)
                .arg(&cells.ids)
                .arg(&cells.codes)
                .arg(&cells.subspaces)
                .arg(&probed)
                .arg(&probes32)
                .arg(&picks)
                .arg(&entries32)
                .arg(&weighted)
                .arg(&nq32)
                .arg(&width32)
                .arg(&mut sc_ids)
                .arg(&mut sc_counts)
                .arg(&bins32)
                .arg(&cand32)
                .arg(&mut ids)
                .arg(&mut counts)
                .arg(&mut n)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        times.scan_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok(Scanned {
            queries,
            ids,
            counts,
            n,
            nq,
        })
    }

    /// Each query's candidates by hit count (the objects of its probed cells, the top
    /// `job.candidates` by count, ties in scan order), in scan order.
    pub fn scan_candidates(&self, job: &ScanJob<'_>) -> Result<Vec<Vec<Hit>>> {
        if job.queries.is_empty() {
            return Ok(Vec::new());
        }
        let got = self.scan(job, &mut ScanTimes::default())?;
        let s = &self.stream;
        let (ids, counts, n) = (
            s.clone_dtoh(&got.ids).map_err(cuda_err)?,
            s.clone_dtoh(&got.counts).map_err(cuda_err)?,
            s.clone_dtoh(&got.n).map_err(cuda_err)?,
        );
        s.synchronize().map_err(cuda_err)?;
        let c = job.candidates;
        Ok((0..got.nq)
            .map(|q| {
                (0..n[q] as usize)
                    .map(|j| Hit {
                        id: ids[q * c + j],
                        count: counts[q * c + j],
                    })
                    .collect()
            })
            .collect())
    }

    /// Per query, its candidates by hit count re-ranked by the exact distance (`metric`) and cut
    /// to `k` (distance ascending, count descending, id ascending): scan, distances and order all
    /// on the device, only the `k` hits copied back.
    pub fn scan_top_k(
        &self,
        job: &ScanJob<'_>,
        k: usize,
        metric: VectorDistance,
    ) -> Result<(Vec<Vec<VerifiedHit>>, ScanTimes)> {
        let mut times = ScanTimes::default();
        if job.queries.is_empty() {
            return Ok((Vec::new(), times));
        }
        let got = self.scan(job, &mut times)?;
        let t = Instant::now();
        let s = &self.stream;
        let nq = got.nq;
        let (c, k) = (job.candidates, k.min(job.candidates));
        let (nq32, c32, k32) = (nq as u32, c as u32, k as u32);
        let mut dist = s.alloc_zeros::<f64>((nq * c).max(1)).map_err(cuda_err)?;
        if nq * c > 0 {
            self.launch_distances(&got.queries, &got.ids, c32, nq32, metric, &mut dist)?;
        }
        let out_len = (nq * k).max(1);
        let mut top_ids = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut top_counts = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut top_dist = s.alloc_zeros::<f64>(out_len).map_err(cuda_err)?;
        let mut top_n = s.alloc_zeros::<u32>(nq.max(1)).map_err(cuda_err)?;
        let cfg = LaunchConfig {
            grid_dim: (nq.min(1 << 16) as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: argument types and order match kernels/lsh.cu `rank_top_k`; every buffer holds
        // `nq x c` or `nq x k` entries.
        unsafe {
            s.launch_builder(&self.top_k)
                .arg(&dist)
                .arg(&got.ids)
                .arg(&got.counts)
                .arg(&got.n)
                .arg(&c32)
                .arg(&nq32)
                .arg(&k32)
                .arg(&mut top_ids)
                .arg(&mut top_counts)
                .arg(&mut top_dist)
                .arg(&mut top_n)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        let (ids, counts, dists, n) = (
            s.clone_dtoh(&top_ids).map_err(cuda_err)?,
            s.clone_dtoh(&top_counts).map_err(cuda_err)?,
            s.clone_dtoh(&top_dist).map_err(cuda_err)?,
            s.clone_dtoh(&top_n).map_err(cuda_err)?,
        );
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        let hits = (0..nq)
            .map(|q| {
                (0..n[q] as usize)
                    .map(|j| VerifiedHit {
                        id: ids[q * k + j],
                        count: counts[q * k + j],
                        distance: dists[q * k + j],
                    })
                    .collect()
            })
            .collect();
        times.rerank_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok((hits, times))
    }

    /// Launches `rerank_distance`: `out[t]` = the distance from query `t / per_query` (rows of
    /// `queries`, `nq` of them) to vector `candidates[t]` (NaN for ids beyond the vectors).
    fn launch_distances(
        &self,
        queries: &CudaSlice<f32>,
        candidates: &CudaSlice<u32>,
        per_query: u32,
        nq: u32,
        metric: VectorDistance,
        out: &mut CudaSlice<f64>,
    ) -> Result<()> {
        let total = nq as usize * per_query as usize;
        let m = metric as u32;
        let cfg = LaunchConfig {
            grid_dim: (total.div_ceil(128).min(1 << 20) as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: argument types and order match kernels/lsh.cu `rerank_distance`; the callers
        // hold `nq x per_query` candidates and outputs and `nq` queries of `dim` floats.
        unsafe {
            self.stream
                .launch_builder(&self.func)
                .arg(&self.vecs)
                .arg(&self.n)
                .arg(&self.dim)
                .arg(queries)
                .arg(candidates)
                .arg(&per_query)
                .arg(&nq)
                .arg(&m)
                .arg(out)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
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
        self.launch_distances(&q, &c, kc32, nq32, metric, &mut out)?;
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
