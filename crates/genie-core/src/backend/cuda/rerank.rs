//! Exact distances on the GPU for re-ranking (kernels/lsh.cu `rerank_distance`): the vectors stay
//! resident, each call sends queries and candidate ids and gets the distances back, identical to
//! the CPU's bit for bit.

use super::cuda_err;
use super::{CellCodesRef, CodebookRef, ScanJob, ScanTimes, VectorDistance};
use crate::error::{GenieError, Result};
use crate::{Hit, VerifiedHit};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice,
    PushKernelArg,
};
use rayon::prelude::*;
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
    /// Per object in cell order, its slices' cross products with its codewords (kernels/lsh.cu
    /// `object_terms`), once a codebook is attached too; none where they did not fit.
    terms: Option<CudaSlice<f32>>,
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
    /// The widest slice, in floats.
    widest: usize,
}

/// Most codeword products of queries on the device at once (closeness weights: 256 MiB).
const QW_FLOATS: usize = 1 << 26;

/// Batches of at least this many floats go up through page-locked memory (filled by all cores).
const PINNED_FLOATS: usize = 1 << 20;

/// Rows per block of `nearest_scores` (kernels/lsh.cu `NEAREST_ROWS`).
const NEAREST_ROWS: usize = 16;
/// Queries per block of `codeword_products` (kernels/lsh.cu `PRODUCT_ROWS`).
const PRODUCT_ROWS: usize = 32;
/// Most dynamic shared memory of a block (the rows of `nearest_scores`, the tables of
/// `codebook_scan`).
const MAX_SHARED_BYTES: usize = 200 << 10;
/// Most scores of one `nearest_scores` launch (rows x centres).
const NEAREST_SCRATCH: usize = 1 << 28;

/// Whether `nearest_scores` holds its rows of `dim` floats in shared memory.
fn nearest_fits(dim: usize) -> bool {
    NEAREST_ROWS * dim * 4 <= MAX_SHARED_BYTES
}

/// A batch's probes chosen on the device.
struct DevicePlan {
    cells: CudaSlice<u32>,
    scores: CudaSlice<f32>,
    picks: CudaSlice<u8>,
}

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
    nearest: CudaFunction,
    smallest: CudaFunction,
    plan_picks: CudaFunction,
    products: CudaFunction,
    terms: CudaFunction,
    book: Option<Book>,
    /// Page-locked host memory that large query batches go up through.
    staging: std::sync::Mutex<Option<PinnedHostSlice<f32>>>,
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
                "nearest_scores",
                "smallest_rows",
                "codebook_picks",
                "codeword_products",
                "object_terms",
            ],
        )?;
        let [func, scan, top_k, nearest, smallest, plan_picks, products, terms]: [CudaFunction; 8] =
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
            book: None,
            staging: std::sync::Mutex::new(None),
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
            terms: None,
        });
        s.synchronize().map_err(cuda_err)?;
        self.object_terms()
    }

    /// With both the cells and the codebook attached, each object's cross products with its
    /// codewords (`object_terms`), so that the closeness scan reads them contiguously. Skipped
    /// (the scan gathers from the cells' tables) when the memory is not there.
    fn object_terms(&mut self) -> Result<()> {
        let (Some(cells), Some(book)) = (self.cells.as_mut(), self.book.as_ref()) else {
            return Ok(());
        };
        // a codebook of another index (its own checks refuse the scan): nothing to derive
        if cells.subspaces != book.subspaces || cells.starts.len() != book.ncells as usize + 1 {
            return Ok(());
        }
        let s = &self.stream;
        let len = (cells.ids.len() * cells.subspaces as usize).max(1);
        // SAFETY: object_terms writes every entry
        let Ok(mut terms) = (unsafe { s.alloc::<f32>(len) }) else {
            log::info!("GPU codebook: no memory for the objects' cross terms, gathering instead");
            return Ok(());
        };
        let cfg = LaunchConfig {
            grid_dim: (book.ncells.clamp(1, 65_535), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: argument types and order match kernels/lsh.cu `object_terms`; `terms` holds an
        // entry per object and slice, `cross` `ncells x m x 256` and `starts` `ncells + 1`.
        unsafe {
            s.launch_builder(&self.terms)
                .arg(&cells.starts)
                .arg(&book.ncells)
                .arg(&cells.codes)
                .arg(&cells.subspaces)
                .arg(&book.cross)
                .arg(&mut terms)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        s.synchronize().map_err(cuda_err)?;
        cells.terms = Some(terms);
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
        if !nearest_fits(dim) {
            return bad("vectors too wide to rank the cells in shared memory");
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
            widest: book
                .bounds
                .windows(2)
                .map(|w| (w[1] - w[0]) as usize)
                .max()
                .unwrap_or(dim),
        });
        s.synchronize().map_err(cuda_err)?;
        self.object_terms()
    }

    /// Whether a codebook is attached.
    pub fn has_codebook(&self) -> bool {
        self.book.is_some()
    }

    /// The `top` nearest of `ncells` centres (resident, `ncells x dim`, with their squared norms)
    /// to each of `nrows` rows (resident): `nrows x top` indices, nearest first (`u32::MAX` past
    /// the centres), and their scores `|c|^2 - 2 x.c`. genie-lsh's `Centres::scores` and
    /// `smallest`, bit for bit.
    fn nearest_on_device(
        &self,
        centres: &CudaSlice<f32>,
        cnorms: &CudaSlice<f32>,
        ncells: usize,
        rows: &CudaSlice<f32>,
        nrows: usize,
        top: usize,
    ) -> Result<(CudaSlice<u32>, CudaSlice<f32>)> {
        let s = &self.stream;
        let dim = self.dim as usize;
        let mut idx = s
            .alloc_zeros::<u32>((nrows * top).max(1))
            .map_err(cuda_err)?;
        let mut best = s
            .alloc_zeros::<f32>((nrows * top).max(1))
            .map_err(cuda_err)?;
        if nrows == 0 || top == 0 {
            return Ok((idx, best));
        }
        let shared = NEAREST_ROWS * dim * 4;
        self.nearest
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
            .map_err(cuda_err)?;
        // rows in slices whose score matrix stays under NEAREST_SCRATCH floats
        let per = (NEAREST_SCRATCH / ncells.max(1) / NEAREST_ROWS * NEAREST_ROWS).max(NEAREST_ROWS);
        let mut scores = s
            .alloc_zeros::<f32>(per.min(nrows) * ncells)
            .map_err(cuda_err)?;
        let chunk = 128usize;
        let (nc32, dim32, chunk32, top32) = (ncells as u32, self.dim, chunk as u32, top as u32);
        for lo in (0..nrows).step_by(per) {
            let n = per.min(nrows - lo);
            let n32 = n as u32;
            let part = rows.slice(lo * dim..(lo + n) * dim);
            let cfg = LaunchConfig {
                grid_dim: (
                    n.div_ceil(NEAREST_ROWS) as u32,
                    ncells.div_ceil(chunk) as u32,
                    1,
                ),
                block_dim: (256, 1, 1),
                shared_mem_bytes: shared as u32,
            };
            // SAFETY: argument types and order match kernels/lsh.cu `nearest_scores`; `scores`
            // holds `n x ncells` floats and the shared memory NEAREST_ROWS rows.
            unsafe {
                s.launch_builder(&self.nearest)
                    .arg(centres)
                    .arg(cnorms)
                    .arg(&nc32)
                    .arg(&dim32)
                    .arg(&part)
                    .arg(&n32)
                    .arg(&chunk32)
                    .arg(&mut scores)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
            let mut out_i = idx.slice_mut(lo * top..(lo + n) * top);
            let mut out_s = best.slice_mut(lo * top..(lo + n) * top);
            let cfg = LaunchConfig {
                grid_dim: (n.div_ceil(8).clamp(1, 1 << 20) as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: argument types and order match kernels/lsh.cu `smallest_rows`; the outputs
            // hold `n x top` entries.
            unsafe {
                s.launch_builder(&self.smallest)
                    .arg(&scores)
                    .arg(&n32)
                    .arg(&nc32)
                    .arg(&top32)
                    .arg(&mut out_i)
                    .arg(&mut out_s)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
        }
        Ok((idx, best))
    }

    /// Chooses, on the device, each query's `probes` cells (with their scores) and, when `entries`
    /// is not 0, per (cell, slice) its `entries` codewords: `queries` already there, `nq` of them.
    fn plan_on_device(
        &self,
        queries: &CudaSlice<f32>,
        nq: usize,
        probes: usize,
        entries: usize,
    ) -> Result<DevicePlan> {
        let book = self.book.as_ref().ok_or_else(|| {
            GenieError::InvalidParameter("no codebook on the GPU to plan with".into())
        })?;
        let s = &self.stream;
        let m = book.subspaces as usize;
        let (cells, scores) = self.nearest_on_device(
            &book.centres,
            &book.cnorms,
            book.ncells as usize,
            queries,
            nq,
            probes,
        )?;
        let mut picks = s
            .alloc_zeros::<u8>((nq * probes * m * entries).max(1))
            .map_err(cuda_err)?;
        if entries > 0 {
            let (nq32, p32, e32) = (nq as u32, probes as u32, entries as u32);
            let warps = nq * m;
            let cfg = LaunchConfig {
                grid_dim: (warps.div_ceil(8).clamp(1, 1 << 20) as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: argument types and order match kernels/lsh.cu `codebook_picks`; `picks`
            // holds `nq x probes x subspaces x entries` bytes and entries are at most 256.
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
        }
        Ok(DevicePlan {
            cells,
            scores,
            picks,
        })
    }

    /// The cells (with their scores) and codewords the device chooses for `queries` (for checks
    /// against the CPU's plan): `nq x probes` cells and scores, and `nq x probes x subspaces x
    /// entries` codewords (none for `entries` 0).
    pub fn device_plan(
        &self,
        queries: &[f32],
        probes: usize,
        entries: usize,
    ) -> Result<(Vec<u32>, Vec<f32>, Vec<u8>)> {
        let nq = queries.len() / self.dim as usize;
        if nq == 0 || entries > 256 || probes == 0 {
            return Err(GenieError::InvalidParameter(
                "device plan: queries, probes and at most 256 entries needed".into(),
            ));
        }
        let s = &self.stream;
        let q = s.clone_htod(queries).map_err(cuda_err)?;
        let plan = self.plan_on_device(&q, nq, probes, entries)?;
        let (c, sc, p) = (
            s.clone_dtoh(&plan.cells).map_err(cuda_err)?,
            s.clone_dtoh(&plan.scores).map_err(cuda_err)?,
            s.clone_dtoh(&plan.picks).map_err(cuda_err)?,
        );
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        let p = if entries == 0 { Vec::new() } else { p };
        Ok((c, sc, p))
    }

    /// The nearest of `centres` (`k x dim`, with their squared norms `norms`) to each row of
    /// `rows`: genie-lsh's `Centres::nearest` for every row, computed on this device.
    pub fn nearest_centres(
        &self,
        centres: &[f32],
        norms: &[f32],
        rows: &[f32],
    ) -> Result<Vec<u32>> {
        let dim = self.dim as usize;
        let k = norms.len();
        if k == 0 || centres.len() != k * dim || rows.len() % dim != 0 {
            return Err(GenieError::InvalidParameter(format!(
                "nearest centres: {} centre floats and {k} norms for dimension {dim}",
                centres.len()
            )));
        }
        if !nearest_fits(dim) {
            return Err(GenieError::InvalidParameter(format!(
                "nearest centres: dimension {dim} too wide for the device"
            )));
        }
        let s = &self.stream;
        let (c, n) = (
            s.clone_htod(centres).map_err(cuda_err)?,
            s.clone_htod(norms).map_err(cuda_err)?,
        );
        let mut out = Vec::with_capacity(rows.len() / dim);
        // rows go up in slices of at most 256 MiB
        let per = ((256usize << 20) / (4 * dim)).max(1);
        for part in rows.chunks(per * dim) {
            let r = self.upload(part)?;
            let (idx, _) = self.nearest_on_device(&c, &n, k, &r, part.len() / dim, 1)?;
            out.extend(s.clone_dtoh(&idx).map_err(cuda_err)?);
        }
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        out.truncate(rows.len() / dim);
        Ok(out)
    }

    /// The products of each of `nq` queries (resident) with the codewords of each slice, `nq x
    /// subspaces x 256` into `out` (kernels/lsh.cu `codeword_products`).
    fn codeword_products(
        &self,
        queries: &cudarc::driver::CudaView<'_, f32>,
        nq: usize,
        out: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let book = self.book.as_ref().ok_or_else(|| {
            GenieError::InvalidParameter("no codebook on the GPU for closeness weights".into())
        })?;
        // the queries' slices, then the slice's codewords at an odd stride where they fit
        let rows = PRODUCT_ROWS * book.widest * 4;
        let staged_bytes = rows + 256 * (book.widest | 1) * 4;
        let staged = u32::from(staged_bytes <= MAX_SHARED_BYTES);
        let shared = if staged == 1 { staged_bytes } else { rows };
        self.products
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
            .map_err(cuda_err)?;
        let cfg = LaunchConfig {
            grid_dim: (nq.div_ceil(PRODUCT_ROWS) as u32, book.subspaces, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let nq32 = nq as u32;
        // SAFETY: argument types and order match kernels/lsh.cu `codeword_products`; `out` holds
        // `nq x subspaces x 256` floats and the shared memory PRODUCT_ROWS of the widest slice
        // (and its 256 codewords when staged).
        unsafe {
            self.stream
                .launch_builder(&self.products)
                .arg(&book.books)
                .arg(&book.bounds)
                .arg(&book.subspaces)
                .arg(&self.dim)
                .arg(queries)
                .arg(&nq32)
                .arg(out)
                .arg(&staged)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        Ok(())
    }

    /// `host` copied to the device, a large batch through the page-locked staging memory (copied
    /// there by all cores; pageable copies run at a fraction of the link's speed). Synchronous.
    fn upload(&self, host: &[f32]) -> Result<CudaSlice<f32>> {
        let s = &self.stream;
        if host.len() < PINNED_FLOATS {
            let d = s.clone_htod(host).map_err(cuda_err)?;
            s.synchronize().map_err(cuda_err)?;
            return Ok(d);
        }
        let mut staging = self
            .staging
            .lock()
            .map_err(|_| GenieError::Cuda("the staging memory's lock is poisoned".into()))?;
        if staging.as_ref().is_none_or(|p| p.len() < host.len()) {
            *staging = None;
            // SAFETY: the memory is written below before any of it is read
            *staging = Some(unsafe { self.ctx.alloc_pinned::<f32>(host.len()) }.map_err(cuda_err)?);
        }
        let pinned = staging
            .as_mut()
            .ok_or_else(|| GenieError::Cuda("no staging memory".into()))?;
        let area = &mut pinned.as_mut_slice().map_err(cuda_err)?[..host.len()];
        // SAFETY: every float is copied in below before the stream's next work reads it
        let mut d = unsafe { s.alloc::<f32>(host.len()) }.map_err(cuda_err)?;
        // a piece at a time: the cores fill the next piece while the last one crosses the link
        // (a copy from page-locked memory does not wait for the host)
        let mut at = 0;
        for (piece, from) in area
            .chunks_mut(PINNED_FLOATS)
            .zip(host.chunks(PINNED_FLOATS))
        {
            piece
                .par_chunks_mut(1 << 16)
                .zip(from.par_chunks(1 << 16))
                .for_each(|(d, h)| d.copy_from_slice(h));
            let len = piece.len();
            s.memcpy_htod(&*piece, &mut d.slice_mut(at..at + len))
                .map_err(cuda_err)?;
            at += len;
        }
        // the staging memory is free again only once the copies are done
        s.synchronize().map_err(cuda_err)?;
        Ok(d)
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
        let closeness = job.levels > 0;
        if job.probes == 0 || (!closeness && (job.entries == 0 || job.entries > 256)) {
            return bad("the probes");
        }
        if closeness && (!job.plan_on_device || self.book.is_none()) {
            return Err(GenieError::InvalidParameter(
                "codebook scan: closeness weights need the codebook on the device".into(),
            ));
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
        let entries = if closeness { 0 } else { job.entries };
        n32(nq, "queries")?;
        let (probes32, entries32, cand32) = (
            n32(job.probes, "probes")?,
            n32(entries, "entries")?,
            n32(job.candidates, "candidates")?,
        );
        let t = Instant::now();
        let s = &self.stream;
        let queries = self.upload(job.queries)?;
        let plan = if job.plan_on_device {
            // the upload is synchronous
            times.upload_ms += t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let plan = self.plan_on_device(&queries, nq, job.probes, entries)?;
            s.synchronize().map_err(cuda_err)?;
            times.plan_ms += t.elapsed().as_secs_f64() * 1e3;
            plan
        } else {
            let plan = DevicePlan {
                cells: s.clone_htod(job.cells).map_err(cuda_err)?,
                scores: s.alloc_zeros::<f32>(1).map_err(cuda_err)?,
                picks: s.clone_htod(job.picks).map_err(cuda_err)?,
            };
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
        let most = m * if closeness {
            2 * job.levels as usize
        } else if job.weighted {
            job.entries
        } else {
            1
        };
        let bins = most + 1;
        // a table of rank weights, or the closeness products and lowest scores
        let shared = 4
            * (bins
                + if closeness {
                    m * 256 + m
                } else {
                    (m * 256).div_ceil(2)
                });
        if shared > MAX_SHARED_BYTES {
            return Err(GenieError::InvalidParameter(format!(
                "codebook scan: {m} slices need {shared} bytes of shared memory"
            )));
        }
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
        // SAFETY: the scan writes each scratch entry of a query before it reads it
        let mut sc_ids = unsafe { s.alloc::<u32>(blocks * width) }.map_err(cuda_err)?;
        let mut sc_counts = unsafe { s.alloc::<u32>(blocks * width) }.map_err(cuda_err)?;
        let out_len = (nq * job.candidates).max(1);
        let mut ids = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut counts = s.alloc_zeros::<u32>(out_len).map_err(cuda_err)?;
        let mut n = s.alloc_zeros::<u32>(nq.max(1)).map_err(cuda_err)?;
        let weighted = u32::from(job.weighted);
        // without a codebook on the device (rank weights planned on the host) the kernel reads
        // none of its arrays: any buffer stands in
        let (bnorms, cross) = match &self.book {
            Some(b) => (&b.bnorms, &b.cross),
            None => (&queries, &queries),
        };
        // each object's cross terms where they are resident (any buffer stands in otherwise)
        let (terms, use_terms) = match &cells.terms {
            Some(t) => (t, 1u32),
            None => (cross, 0u32),
        };
        // closeness weights: the codeword products of a slice of the queries at a time, under
        // QW_FLOATS floats
        let per = if closeness {
            (QW_FLOATS / (m * 256)).max(1)
        } else {
            nq.max(1)
        };
        // SAFETY: codeword_products writes every product the scan reads
        let mut qw = unsafe { s.alloc::<f32>(if closeness { per.min(nq) * m * 256 } else { 1 }) }
            .map_err(cuda_err)?;
        // closeness weights take one block of a multiprocessor's shared memory: more threads
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (if closeness { 512 } else { 256 }, 1, 1),
            shared_mem_bytes: shared32,
        };
        let (c, p, pe) = (job.candidates, job.probes, job.probes * m * entries);
        for lo in (0..nq).step_by(per) {
            let len = per.min(nq - lo);
            let len32 = len as u32;
            if closeness {
                self.codeword_products(&queries.slice(lo * dim..(lo + len) * dim), len, &mut qw)?;
            }
            let picks = if pe == 0 {
                plan.picks.slice(..)
            } else {
                plan.picks.slice(lo * pe..(lo + len) * pe)
            };
            let scores = if closeness {
                plan.scores.slice(lo * p..(lo + len) * p)
            } else {
                plan.scores.slice(..)
            };
            let mut ids_v = ids.slice_mut(lo * c..(lo + len) * c);
            let mut counts_v = counts.slice_mut(lo * c..(lo + len) * c);
            let mut n_v = n.slice_mut(lo..lo + len);
            // SAFETY: argument types and order match kernels/lsh.cu `codebook_scan`; the sizes
            // were checked above, the views hold this slice's queries and the scratch `blocks x
            // width` entries.
            unsafe {
                s.launch_builder(&self.scan)
                    .arg(&cells.starts)
                    .arg(&cells.ids)
                    .arg(&cells.codes)
                    .arg(&cells.subspaces)
                    .arg(&plan.cells.slice(lo * p..(lo + len) * p))
                    .arg(&probes32)
                    .arg(&picks)
                    .arg(&entries32)
                    .arg(&weighted)
                    .arg(&job.levels)
                    .arg(&scores)
                    .arg(&qw)
                    .arg(bnorms)
                    .arg(cross)
                    .arg(terms)
                    .arg(&use_terms)
                    .arg(&len32)
                    .arg(&width32)
                    .arg(&mut sc_ids)
                    .arg(&mut sc_counts)
                    .arg(&bins32)
                    .arg(&cand32)
                    .arg(&mut ids_v)
                    .arg(&mut counts_v)
                    .arg(&mut n_v)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
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
            // eight threads per distance
            grid_dim: (total.div_ceil(16).min(1 << 20) as u32, 1, 1),
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
