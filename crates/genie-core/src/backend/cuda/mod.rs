//! The CUDA backend (DESIGN.md section 4): kernels from `kernels/*.cu` compiled by NVRTC at run
//! time for the device's compute capability, the index uploaded once, batches of queries run
//! through the c-PQ kernels (or the count-table baseline), results identical to the CPU backend.
//!
//! Without the `cuda` feature, or on a machine without a usable GPU, [`CudaBackend::new`] returns
//! [`GenieError::GpuUnavailable`] with the reason, so callers need no `#[cfg]`.

/// A CUDA driver or NVRTC error as the crate's error.
#[cfg(feature = "cuda")]
fn cuda_err(e: impl std::fmt::Debug) -> GenieError {
    GenieError::Cuda(format!("{e:?}"))
}

#[cfg(feature = "cuda")]
mod ceilings;
#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
mod lsh;
#[cfg(feature = "cuda")]
mod plan;
#[cfg(feature = "cuda")]
mod upload;
#[cfg(feature = "cuda")]
pub use lsh::{binning_hash, project_hash, sign_hash};
#[cfg(feature = "cuda")]
mod vectors;
#[cfg(feature = "cuda")]
pub use vectors::GpuVectors;
#[cfg(feature = "cuda")]
mod sequences;
#[cfg(feature = "cuda")]
pub use sequences::GpuSequences;

/// Most 64-symbol words of a pattern [`GpuSequences`] scans (kernels/seq.cu `SEQ_MAX_WORDS`).
pub const SEQ_MAX_WORDS: usize = 8;
/// Distances below this are the ones [`GpuSequences`] ranks (kernels/seq.cu `SEQ_BINS`).
pub const SEQ_BINS: usize = 1024;

/// The sequences within a query's k-th smallest distance, as `(id, distance)` in no order.
pub type Within = Vec<(u32, u32)>;

/// One query of [`GpuSequences::nearest`]: its symbols as the sequences' dense ids (an id at or
/// past the alphabet matches nothing) and an upper bound of its k-th smallest distance (the
/// k-th distance of any k sequences).
#[derive(Clone, Copy, Debug)]
pub struct SeqJob<'a> {
    /// The pattern's symbols.
    pub pattern: &'a [u16],
    /// At least the k-th smallest distance.
    pub bound: u32,
}

/// The distance [`GpuVectors::distances`] computes, as genie-lsh's CPU metric does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorDistance {
    /// Euclidean.
    L2 = 0,
    /// Manhattan.
    L1 = 1,
    /// `1 - cos(angle)` (1 when a vector is zero).
    Cosine = 2,
}

/// The objects of a codebook index grouped by coarse cell, for [`GpuVectors::attach_cells`]: the
/// objects of cell `c` are `ids[starts[c]..starts[c + 1]]` (ascending), their codes the rows
/// `codes[i * subspaces..(i + 1) * subspaces]` of the same positions.
#[derive(Clone, Copy, Debug)]
pub struct CellCodesRef<'a> {
    /// `cells + 1` offsets into `ids`.
    pub starts: &'a [u32],
    /// Object ids by cell.
    pub ids: &'a [u32],
    /// One code per slice of each object, in the order of `ids`.
    pub codes: &'a [u8],
    /// Slices per object.
    pub subspaces: usize,
}

impl CellCodesRef<'_> {
    /// Checks that the arrays agree.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(GenieError::InvalidParameter(format!("cell codes: {m}")));
        if self.subspaces == 0 || self.subspaces > 64 * 1024 {
            return bad(format!("{} slices", self.subspaces));
        }
        if self.starts.first() != Some(&0)
            || self.starts.last().map(|&e| e as usize) != Some(self.ids.len())
            || self.starts.windows(2).any(|w| w[0] > w[1])
        {
            return bad("offsets do not cover the ids in order".into());
        }
        if self.codes.len() != self.ids.len() * self.subspaces {
            return bad(format!(
                "{} codes for {} objects of {} slices",
                self.codes.len(),
                self.ids.len(),
                self.subspaces
            ));
        }
        Ok(())
    }

    /// The most objects of one cell.
    pub fn max_cell(&self) -> usize {
        self.starts
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }
}

/// A codebook's centres and codewords for [`GpuVectors::attach_codebook`], so that the probes of
/// a batch are chosen on the device (genie-lsh's codebook `plan`, identical to the CPU's).
#[derive(Clone, Copy, Debug)]
pub struct CodebookRef<'a> {
    /// `cells x dim` centres.
    pub centres: &'a [f32],
    /// `|c|^2` of each centre.
    pub centre_norms: &'a [f32],
    /// Per slice `s`, its 256 codewords of `bounds[s + 1] - bounds[s]` floats, the slices one
    /// after the other (`256 x dim` floats).
    pub books: &'a [f32],
    /// `subspaces x 256` squared norms of the codewords.
    pub book_norms: &'a [f32],
    /// `cells x subspaces x 256`: centre slice . codeword.
    pub cross: &'a [f32],
    /// `subspaces + 1` first dimensions of the slices (the last is `dim`).
    pub bounds: &'a [u32],
}

/// A batch of codebook probes for [`GpuVectors::scan_top_k`]: per query its probed cells and, per
/// (probed cell, slice), the codewords within its radius, nearest first (genie-lsh's codebook
/// `Plan`).
#[derive(Clone, Copy, Debug)]
pub struct ScanJob<'a> {
    /// `nq x dim` query vectors (for the re-rank).
    pub queries: &'a [f32],
    /// `nq x probes` cells, nearest first (`u32::MAX` where a query has fewer).
    pub cells: &'a [u32],
    /// Cells probed per query.
    pub probes: usize,
    /// `nq x probes x subspaces x entries` codewords.
    pub picks: &'a [u8],
    /// Codewords per (cell, slice).
    pub entries: usize,
    /// Whether the `r`-th nearest codeword weighs `entries - r` (else 1).
    pub weighted: bool,
    /// Closeness weights of `levels` levels (genie-lsh's codebook `weights`), computed on the
    /// device from the query and the probed cells; 0: the picks' rank weights. Needs
    /// `plan_on_device`.
    pub levels: u32,
    /// Candidates per query for the re-rank.
    pub candidates: usize,
    /// Whether the device chooses the cells and codewords itself (an attached codebook), leaving
    /// `cells` and `picks` unread.
    pub plan_on_device: bool,
}

/// Milliseconds of the device stages of a codebook scan.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScanTimes {
    /// The cells and codewords chosen on the device.
    pub plan_ms: f64,
    /// Queries and probes to the device.
    pub upload_ms: f64,
    /// Hit counts and candidates.
    pub scan_ms: f64,
    /// Exact distances, the top `k` and the copy back.
    pub rerank_ms: f64,
}

/// Without the `cuda` feature there are no sequences on a GPU: [`GpuSequences::new`] fails.
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub struct GpuSequences(());

#[cfg(not(feature = "cuda"))]
impl GpuSequences {
    /// Always [`GenieError::GpuUnavailable`] without the `cuda` feature.
    pub fn new(ordinal: usize, syms: &[u16], starts: &[u32], alphabet: usize) -> Result<Self> {
        let _ = (ordinal, syms, starts, alphabet);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn len(&self) -> usize {
        0
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn fits(&self, pattern: &[u16]) -> bool {
        let _ = pattern;
        false
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn takes(&self, job: &SeqJob<'_>) -> bool {
        let _ = job;
        false
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn distances(&self, jobs: &[(&[u16], &[u32])]) -> Result<Vec<Option<Vec<u32>>>> {
        let _ = jobs;
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn nearest(&self, jobs: &[SeqJob<'_>], k: usize) -> Result<Vec<Option<Within>>> {
        let _ = (jobs, k);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }
}

/// Without the `cuda` feature there are no vectors on a GPU: [`GpuVectors::new`] fails.
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub struct GpuVectors(());

#[cfg(not(feature = "cuda"))]
impl GpuVectors {
    /// Always [`GenieError::GpuUnavailable`] without the `cuda` feature.
    pub fn new(ordinal: usize, vectors: &[f32], dim: usize) -> Result<Self> {
        let _ = (ordinal, vectors, dim);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn distances(
        &self,
        queries: &[f32],
        candidates: &[u32],
        per_query: usize,
        metric: VectorDistance,
    ) -> Result<Vec<f64>> {
        let _ = (queries, candidates, per_query, metric);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn attach_cells(&mut self, cells: CellCodesRef<'_>) -> Result<()> {
        let _ = cells;
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn has_cells(&self) -> bool {
        false
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn attach_codebook(&mut self, book: CodebookRef<'_>) -> Result<()> {
        let _ = book;
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn has_codebook(&self) -> bool {
        false
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn device_plan(
        &self,
        queries: &[f32],
        probes: usize,
        entries: usize,
    ) -> Result<(Vec<u32>, Vec<f32>, Vec<u8>)> {
        let _ = (queries, probes, entries);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn nearest_centres(
        &self,
        centres: &[f32],
        norms: &[f32],
        rows: &[f32],
    ) -> Result<Vec<u32>> {
        let _ = (centres, norms, rows);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn scan_top_k(
        &self,
        job: &ScanJob<'_>,
        k: usize,
        metric: VectorDistance,
    ) -> Result<(Vec<Vec<crate::VerifiedHit>>, ScanTimes)> {
        let _ = (job, k, metric);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn scan_candidates(&self, job: &ScanJob<'_>) -> Result<Vec<Vec<crate::Hit>>> {
        let _ = job;
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        0
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        true
    }
}

/// LSH projection hashing of many vectors at once on a GPU (kernels/lsh.cu): for function `i`,
/// `floor((a_i . v + offsets[i]) / width)` re-hashed by MurmurHash3 with `seeds[i]` into
/// `[0, buckets)`, keyword `i * buckets + bucket`; the same arithmetic as genie-lsh's CPU code.
#[derive(Clone, Copy, Debug)]
pub struct ProjectionJob<'a> {
    /// `n x dim` vectors, row-major.
    pub vectors: &'a [f32],
    /// Their dimension.
    pub dim: u32,
    /// `m x dim` projection vectors, row-major.
    pub a: &'a [f32],
    /// `m` offsets b.
    pub offsets: &'a [f64],
    /// The bucket width w.
    pub width: f64,
    /// `m` MurmurHash3 seeds.
    pub seeds: &'a [u32],
    /// Buckets D of the re-hash.
    pub buckets: u32,
}

impl ProjectionJob<'_> {
    /// Checks that the arrays agree in size.
    pub fn check(&self) -> Result<()> {
        let m = self.seeds.len();
        check_common("projection", self.vectors, self.dim, m, self.buckets)?;
        check_len(
            "projection",
            "projection values (m x dim)",
            self.a.len(),
            &[m, self.dim as usize],
        )?;
        check_len("projection", "offsets (m)", self.offsets.len(), &[m])?;
        if self.width > 0.0 {
            Ok(())
        } else {
            Err(job_error(
                "projection",
                format!("expected a positive bucket width, got {}", self.width),
            ))
        }
    }
}

/// Sign random projection hashing of many vectors at once on a GPU (kernels/lsh.cu): function `i`
/// sets bit `j` of a `u64` when `a_ij . v >= 0`, re-hashes its 8 little-endian bytes by
/// MurmurHash3 with `seeds[i]` into `[0, buckets)`, keyword `i * buckets + bucket`; the same
/// arithmetic as genie-lsh's CPU code.
#[derive(Clone, Copy, Debug)]
pub struct SignJob<'a> {
    /// `n x dim` vectors, row-major.
    pub vectors: &'a [f32],
    /// Their dimension.
    pub dim: u32,
    /// Sign bits per function, 1 to 64.
    pub bits: u32,
    /// `m x bits x dim` hyperplane normals, row-major.
    pub a: &'a [f32],
    /// `m` MurmurHash3 seeds.
    pub seeds: &'a [u32],
    /// Buckets D of the re-hash.
    pub buckets: u32,
}

impl SignJob<'_> {
    /// Checks that the arrays agree in size and that `bits` lies in 1..=64.
    pub fn check(&self) -> Result<()> {
        let m = self.seeds.len();
        check_common("sign projection", self.vectors, self.dim, m, self.buckets)?;
        if !(1..=64).contains(&self.bits) {
            return Err(job_error(
                "sign projection",
                format!("expected 1 to 64 bits per function, got {}", self.bits),
            ));
        }
        check_len(
            "sign projection",
            "hyperplane values (m x bits x dim)",
            self.a.len(),
            &[m, self.bits as usize, self.dim as usize],
        )
    }
}

/// Random binning hashing of many vectors at once on a GPU (kernels/lsh.cu): function `i` writes
/// the cell `floor((x_j - shift[i][j]) * inv_width[i][j])` of every dimension `j` as a zigzag
/// LEB128 varint and re-hashes the byte string by MurmurHash3 with `seeds[i]` into
/// `[0, buckets)`, keyword `i * buckets + bucket`; the same arithmetic as genie-lsh's CPU code.
#[derive(Clone, Copy, Debug)]
pub struct BinningJob<'a> {
    /// `n x dim` vectors, row-major.
    pub vectors: &'a [f32],
    /// Their dimension.
    pub dim: u32,
    /// `m x dim` reciprocal grid widths, row-major.
    pub inv_width: &'a [f64],
    /// `m x dim` grid shifts, row-major.
    pub shift: &'a [f64],
    /// `m` MurmurHash3 seeds.
    pub seeds: &'a [u32],
    /// Buckets D of the re-hash.
    pub buckets: u32,
}

impl BinningJob<'_> {
    /// Checks that the arrays agree in size.
    pub fn check(&self) -> Result<()> {
        let m = self.seeds.len();
        let shape = [m, self.dim as usize];
        check_common("random binning", self.vectors, self.dim, m, self.buckets)?;
        check_len(
            "random binning",
            "reciprocal grid widths (m x dim)",
            self.inv_width.len(),
            &shape,
        )?;
        check_len(
            "random binning",
            "grid shifts (m x dim)",
            self.shift.len(),
            &shape,
        )
    }
}

fn job_error(job: &str, what: String) -> GenieError {
    GenieError::InvalidParameter(format!("{job} hashing job: {what}"))
}

/// The checks every hashing job shares: a dimension, whole rows, at most `u32::MAX` vectors (the
/// kernels count in 32 bits), buckets, and a keyword space `m x buckets` within 32 bits.
fn check_common(job: &str, vectors: &[f32], dim: u32, m: usize, buckets: u32) -> Result<()> {
    if dim == 0 {
        return Err(job_error(job, "expected a dimension of at least 1".into()));
    }
    if vectors.len() % dim as usize != 0 {
        return Err(job_error(
            job,
            format!("expected whole rows of {dim}, got {} values", vectors.len()),
        ));
    }
    let n = vectors.len() / dim as usize;
    if u32::try_from(n).is_err() {
        return Err(job_error(
            job,
            format!("expected at most {} vectors, got {n}", u32::MAX),
        ));
    }
    if buckets == 0 {
        return Err(job_error(job, "expected at least 1 bucket".into()));
    }
    if (m as u64).saturating_mul(u64::from(buckets)) > u64::from(u32::MAX) {
        return Err(job_error(
            job,
            format!("{m} functions x {buckets} buckets exceed 32-bit keywords"),
        ));
    }
    Ok(())
}

/// Checks that an array holds the product of `shape` values.
fn check_len(job: &str, what: &str, len: usize, shape: &[usize]) -> Result<()> {
    let want = shape.iter().try_fold(1usize, |p, &x| p.checked_mul(x));
    if want == Some(len) {
        return Ok(());
    }
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    Err(job_error(
        job,
        format!("expected {} {what}, got {len}", dims.join(" x ")),
    ))
}

/// Without the `cuda` feature there is no GPU hashing.
#[cfg(not(feature = "cuda"))]
pub fn project_hash(ordinal: usize, job: &ProjectionJob<'_>) -> Result<Vec<u32>> {
    let _ = (ordinal, job);
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}

/// Without the `cuda` feature there is no GPU hashing.
#[cfg(not(feature = "cuda"))]
pub fn sign_hash(ordinal: usize, job: &SignJob<'_>) -> Result<Vec<u32>> {
    let _ = (ordinal, job);
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}

/// Without the `cuda` feature there is no GPU hashing.
#[cfg(not(feature = "cuda"))]
pub fn binning_hash(ordinal: usize, job: &BinningJob<'_>) -> Result<Vec<u32>> {
    let _ = (ordinal, job);
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}
pub mod kernels;

use super::{Backend, ResidentIndex};
#[cfg(feature = "cuda")]
pub use ceilings::{measure_ceilings, measure_staged_uploads};

/// Hardware ceilings measured on the device (see [`measure_ceilings`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ceilings {
    /// Device-to-device copy, GB/s counting bytes read plus bytes written.
    pub copy_gbs: f64,
    /// Random 32-bit atomic adds into a 1 GiB table, G operations/s.
    pub atomic_gops: f64,
    /// Host-to-device copy from pinned memory, GB/s.
    pub h2d_pinned_gbs: f64,
    /// Host-to-device copy from pageable memory, GB/s.
    pub h2d_pageable_gbs: f64,
}

/// Without the `cuda` feature there is nothing to measure.
#[cfg(not(feature = "cuda"))]
pub fn measure_ceilings(ordinal: usize) -> Result<Ceilings> {
    let _ = ordinal;
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}

/// The bandwidth of an upload through one layout of pinned staging ([`measure_staged_uploads`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StagedUpload {
    /// Lanes copying in parallel, each with two slots.
    pub lanes: usize,
    /// Bytes per staging slot.
    pub slot_bytes: usize,
    /// Write-combined (uncached) staging, or cached.
    pub write_combined: bool,
    /// Whether this is the layout index uploads use.
    pub default: bool,
    /// Host-to-device GB/s, from the first host copy to the last transfer done.
    pub gbs: f64,
}

/// Without the `cuda` feature there is nothing to measure.
#[cfg(not(feature = "cuda"))]
pub fn measure_staged_uploads(ordinal: usize, bytes: usize) -> Result<Vec<StagedUpload>> {
    let _ = (ordinal, bytes);
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}
use crate::error::{GenieError, Result};
use crate::index::InvertedIndex;
use std::sync::Arc;

/// Checks that the CUDA driver library and a device are present, and that every device has its
/// kernels: built ahead for its architecture (`kernels::shipped`) or compiled by NVRTC. cudarc is
/// never let panic on a missing library. The error says what is missing.
pub fn cuda_probe() -> std::result::Result<(), String> {
    #[cfg(feature = "cuda")]
    {
        let t = std::time::Instant::now();
        // SAFETY: only tries to load the shared libraries to see whether they exist.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err("the CUDA driver library (libcuda) is not installed".into());
        }
        let driver = t.elapsed();
        let nvrtc = kernels::nvrtc_available();
        let nvrtc_time = t.elapsed() - driver;
        let count = cudarc::driver::CudaContext::device_count();
        log::trace!(
            "CUDA probe: driver library {driver:.1?}, NVRTC {nvrtc_time:.1?}, devices counted {:.1?}",
            t.elapsed() - driver - nvrtc_time
        );
        let n = match count {
            Ok(0) => return Err("no CUDA device is visible".into()),
            Ok(n) => n,
            Err(e) => return Err(format!("the CUDA driver failed to start: {e}")),
        };
        if !nvrtc {
            for ordinal in 0..n {
                let arch = arch_of(ordinal)
                    .map_err(|e| format!("GPU {ordinal}'s architecture is unknown: {e}"))?;
                if kernels::shipped(kernels::Kernel::Cpq, &arch).is_none() {
                    return Err(format!(
                        "{}, and GPU {ordinal} ({arch}) has no kernels built ahead: only {} has",
                        kernels::nvrtc_missing(),
                        kernels::SHIPPED_ARCH
                    ));
                }
            }
        }
        Ok(())
    }
    #[cfg(not(feature = "cuda"))]
    Err("genie-core was built without the `cuda` feature".into())
}

/// The architecture of GPU `ordinal`, as `sm_XY`, without a context.
#[cfg(feature = "cuda")]
fn arch_of(ordinal: i32) -> std::result::Result<String, cudarc::driver::DriverError> {
    use cudarc::driver::{result::device, sys::CUdevice_attribute as A};
    let dev = device::get(ordinal)?;
    // SAFETY: `dev` comes from `device::get`.
    let (major, minor) = unsafe {
        (
            device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        )
    };
    Ok(format!("sm_{major}{minor}"))
}

/// Number of CUDA devices visible (0 when there is no usable GPU).
pub fn device_count() -> usize {
    if cuda_probe().is_err() {
        return 0;
    }
    #[cfg(feature = "cuda")]
    return cudarc::driver::CudaContext::device_count().map_or(0, |n| n.max(0) as usize);
    #[cfg(not(feature = "cuda"))]
    0
}

/// Free and total bytes of a GPU's memory (`None` without a usable GPU of that ordinal): what a
/// server reports as device memory in use.
pub fn device_memory(ordinal: usize) -> Option<(u64, u64)> {
    if ordinal >= device_count() {
        return None;
    }
    #[cfg(feature = "cuda")]
    return cudarc::driver::CudaContext::new(ordinal)
        .and_then(|ctx| ctx.mem_get_info())
        .ok()
        .map(|(free, total)| (free as u64, total as u64));
    #[cfg(not(feature = "cuda"))]
    None
}

/// The CUDA backend on one device.
pub struct CudaBackend {
    #[cfg(feature = "cuda")]
    inner: Arc<gpu::Gpu>,
    /// An explicit batch budget; `None` takes a share of the memory free at the time.
    budget: Option<u64>,
    /// The device's ordinal.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    ordinal: usize,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("name", &self.name())
            .field("budget", &self.budget)
            .finish()
    }
}

/// Default share of the device's free memory a batch may use.
pub const GPU_BUDGET_FRACTION: f64 = 0.5;

impl CudaBackend {
    /// Opens device `ordinal` and compiles the kernels (cached on disk). The batch budget is
    /// half the device memory free when it is asked for (after the index is uploaded), or
    /// `GENIE_GPU_BUDGET_MB` when set.
    pub fn new(ordinal: usize) -> Result<Self> {
        cuda_probe().map_err(GenieError::GpuUnavailable)?;
        #[cfg(feature = "cuda")]
        {
            let inner = Arc::new(gpu::Gpu::open(ordinal)?);
            let budget = std::env::var("GENIE_GPU_BUDGET_MB")
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .map(|mb| mb << 20);
            Ok(Self {
                inner,
                budget,
                ordinal,
            })
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = ordinal;
            Err(GenieError::GpuUnavailable(
                "built without the `cuda` feature".into(),
            ))
        }
    }

    /// Sets the batch memory budget in bytes.
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = Some(bytes.max(1));
        self
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> String {
        #[cfg(feature = "cuda")]
        return self.inner.name();
        #[cfg(not(feature = "cuda"))]
        "cuda (unavailable)".into()
    }

    fn memory_budget(&self) -> u64 {
        #[cfg(feature = "cuda")]
        return self
            .budget
            .unwrap_or_else(|| (self.inner.free_memory() as f64 * GPU_BUDGET_FRACTION) as u64);
        #[cfg(not(feature = "cuda"))]
        self.budget.unwrap_or(0)
    }

    fn gpu_ordinal(&self) -> Option<usize> {
        Some(self.ordinal)
    }

    fn upload(&self, index: Arc<InvertedIndex>) -> Result<Box<dyn ResidentIndex>> {
        #[cfg(feature = "cuda")]
        return Ok(Box::new(gpu::GpuResident::new(self.inner.clone(), index)?));
        #[cfg(not(feature = "cuda"))]
        {
            let _ = index;
            Err(GenieError::GpuUnavailable(
                "built without the `cuda` feature".into(),
            ))
        }
    }
}

#[cfg(test)]
mod job_tests {
    use super::*;

    fn invalid(r: Result<()>) -> String {
        match r {
            Err(GenieError::InvalidParameter(msg)) => msg,
            other => panic!("expected an invalid-parameter error, got {other:?}"),
        }
    }

    #[test]
    fn hashing_jobs_check_their_sizes() {
        let (v, seeds) = ([0f32; 6], [1u32, 2]);
        let p = ProjectionJob {
            vectors: &v,
            dim: 3,
            a: &[0.0; 6],
            offsets: &[0.0; 2],
            width: 1.0,
            seeds: &seeds,
            buckets: 10,
        };
        assert!(p.check().is_ok());
        assert!(invalid(ProjectionJob { dim: 4, ..p }.check()).contains("whole rows of 4"));
        assert!(invalid(ProjectionJob { dim: 0, ..p }.check()).contains("dimension"));
        assert!(invalid(ProjectionJob { a: &[0.0; 5], ..p }.check()).contains("expected 2 x 3"));
        assert!(invalid(
            ProjectionJob {
                offsets: &[0.0],
                ..p
            }
            .check()
        )
        .contains("offsets"));
        assert!(invalid(
            ProjectionJob {
                width: f64::NAN,
                ..p
            }
            .check()
        )
        .contains("width"));
        assert!(invalid(ProjectionJob { buckets: 0, ..p }.check()).contains("bucket"));
        let wide = ProjectionJob {
            buckets: u32::MAX,
            ..p
        };
        assert!(invalid(wide.check()).contains("32-bit keywords"));

        let s = SignJob {
            vectors: &v,
            dim: 3,
            bits: 2,
            a: &[0.0; 12],
            seeds: &seeds,
            buckets: 10,
        };
        assert!(s.check().is_ok());
        assert!(invalid(SignJob { bits: 0, ..s }.check()).contains("1 to 64 bits"));
        assert!(invalid(SignJob { bits: 65, ..s }.check()).contains("1 to 64 bits"));
        assert!(invalid(SignJob { bits: 3, ..s }.check()).contains("expected 2 x 3 x 3"));

        let b = BinningJob {
            vectors: &v,
            dim: 3,
            inv_width: &[1.0; 6],
            shift: &[0.0; 6],
            seeds: &seeds,
            buckets: 10,
        };
        assert!(b.check().is_ok());
        assert!(invalid(
            BinningJob {
                shift: &[0.0; 3],
                ..b
            }
            .check()
        )
        .contains("grid shifts"));
        assert!(invalid(
            BinningJob {
                inv_width: &[],
                ..b
            }
            .check()
        )
        .contains("reciprocal grid widths"));
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn without_cuda_the_hashing_says_so() {
        let job = SignJob {
            vectors: &[],
            dim: 1,
            bits: 1,
            a: &[],
            seeds: &[],
            buckets: 1,
        };
        assert!(matches!(
            sign_hash(0, &job),
            Err(GenieError::GpuUnavailable(_))
        ));
    }
}
