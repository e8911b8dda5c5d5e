//! A codebook index's closeness scan on the GPU (kernels/codebook_scan.cuh `codebook_scan`,
//! `scan_top_k`): its cells and codebook resident beside the vectors, each batch's probes and
//! codewords chosen there, the candidates counted and re-ranked there.

use super::super::{CellCodesRef, CodebookRef, Queries, ScanJob, ScanTimes};
use super::*;

/// A codebook index's objects by cell, resident beside the vectors.
pub(super) struct Cells {
    starts: CudaSlice<u32>,
    ids: CudaSlice<u32>,
    codes: CudaSlice<u8>,
    subspaces: u32,
    /// Entry `p - 1`: the most objects of `p` probed cells (`CellCodesRef::largest_cells`).
    largest: Vec<usize>,
    /// Per object in cell order, its slices' cross products with its codewords
    /// (kernels/codebook_scan.cuh `object_terms`), once a codebook is attached too; none where
    /// they did not fit.
    terms: Option<CudaSlice<f32>>,
}

/// A codebook's centres and codewords on the device.
pub(super) struct Book {
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

impl GpuVectors {
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
            largest: cells.largest_cells(),
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
        // SAFETY: argument types and order match kernels/codebook_scan.cuh `object_terms`; `terms`
        // holds an entry per object and slice, `cross` `ncells x m x 256` and `starts`
        // `ncells + 1`.
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

    /// The attached cells' starts and codes, with the number of cells and of slices.
    pub(super) fn cell_arrays(&self) -> Option<(&CudaSlice<u32>, &CudaSlice<u8>, u32, u32)> {
        let c = self.cells.as_ref()?;
        let ncells = u32::try_from(c.starts.len().saturating_sub(1)).ok()?;
        Some((&c.starts, &c.codes, ncells, c.subspaces))
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
            let cfg = super::warp_per_item(nq * m);
            // SAFETY: argument types and order match kernels/vectors.cu `codebook_picks`; `picks`
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
    /// The products of each of `nq` queries (resident) with the codewords of each slice, `nq x
    /// subspaces x 256` into `out` (kernels/codebook_scan.cuh `codeword_products`).
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
        // SAFETY: argument types and order match kernels/codebook_scan.cuh `codeword_products`;
        // `out` holds `nq x subspaces x 256` floats and the shared memory PRODUCT_ROWS of the
        // widest slice (and its 256 codewords when staged).
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
    fn scan(&self, job: &ScanJob<'_>, times: &mut ScanTimes) -> Result<Scanned> {
        let cells = self.cells.as_ref().ok_or_else(|| {
            GenieError::InvalidParameter("no codebook cells on the GPU to scan".into())
        })?;
        let (dim, m) = (self.dim as usize, cells.subspaces as usize);
        let Some(nq) = job.queries.count(dim) else {
            return Err(GenieError::InvalidParameter(format!(
                "codebook scan: the query floats are not rows of dimension {dim}"
            )));
        };
        let bad = |what: &str| {
            Err(GenieError::InvalidParameter(format!(
                "codebook scan: {what} do not fit {nq} queries"
            )))
        };
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
        // a query's cells given by the host: each a cell of the index, none twice (the scratch
        // holds the largest distinct cells' objects)
        if !job.plan_on_device {
            let ncells = cells.largest.len();
            let mut seen = Vec::with_capacity(job.probes);
            for probed in job.cells.chunks(job.probes) {
                seen.clear();
                seen.extend(probed.iter().copied().filter(|&c| c != u32::MAX));
                seen.sort_unstable();
                if seen.last().is_some_and(|&c| c as usize >= ncells)
                    || seen.windows(2).any(|w| w[0] == w[1])
                {
                    return bad("the probed cells (each a cell of the index, none twice)");
                }
            }
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
        let queries = match job.queries {
            Queries::Flat(v) => self.upload(v)?,
            Queries::Rows(rows) => self.upload_rows(rows)?,
        };
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
        // each block's scratch holds the most objects the probed cells can hold: the largest
        // cells', not probes x the largest cell (word vectors' cells differ many times in size,
        // and the scratch would leave a launch too few blocks to fill the device)
        let width = match cells.largest.len() {
            0 => 1,
            n => cells.largest[job.probes.min(n) - 1].max(1),
        };
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
        log::debug!("codebook scan: {nq} queries, {blocks} blocks of {width} objects of scratch");
        // a table of rank weights, or the closeness products and lowest scores
        // (the tables start past the histogram rounded up to 4 words)
        let shared = 4
            * (bins.next_multiple_of(4)
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
            // SAFETY: argument types and order match kernels/codebook_scan.cuh `codebook_scan`; the
            // sizes were checked above, the views hold this slice's queries and the scratch
            // `blocks x width` entries.
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
        let (nq32, c32) = (nq as u32, c as u32);
        let mut dist = s.alloc_zeros::<f64>((nq * c).max(1)).map_err(cuda_err)?;
        if nq * c > 0 {
            self.launch_distances(
                &got.queries,
                &got.ids,
                (c32, false),
                nq32,
                metric,
                Out::Distances(&mut dist),
            )?;
        }
        let hits = self.rank_on_device(
            &dist,
            (&got.ids, &got.counts, &got.n),
            (c32, false),
            nq,
            k,
            128,
        )?;
        times.rerank_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok((hits, times))
    }
}
