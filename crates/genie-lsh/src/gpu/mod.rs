//! Vectors and LSH hashing on a GPU, launched from this crate: the hashing of many vectors at
//! once ([`project_hash`], [`sign_hash`], [`binning_hash`], in `hashing`; kernels
//! [`crate::kernels::LSH`]), and vectors resident on a device ([`GpuVectors`], in
//! `vectors`; kernels [`crate::kernels::VECTORS`]): re-rank distances, a codebook index's
//! closeness scan and its planning, the nearest centres of rows. Every result is the CPU's, bit for bit.
//!
//! Without the `cuda` feature of this crate (or without a usable GPU) [`GpuVectors::new`] and the
//! hashing return [`GenieError::GpuUnavailable`] with the reason, so callers need no `#[cfg]`.

#[cfg(feature = "cuda")]
mod hashing;
mod jobs;
#[cfg(feature = "cuda")]
mod vectors;

#[cfg(feature = "cuda")]
pub use hashing::{binning_hash, project_hash, sign_hash};
#[cfg(not(feature = "cuda"))]
pub use jobs::{binning_hash, project_hash, sign_hash};
pub use jobs::{BinningJob, ProjectionJob, SignJob};
#[cfg(feature = "cuda")]
pub use vectors::GpuVectors;

use genie_core::{GenieError, Result};

/// Queries of the batches a GPU prepares for: the CLI's default chunk. A codebook index warms up
/// with one such batch when it opens (which pins the query staging, sized for it).
pub const PREPARED_BATCH: usize = 8192;

/// The distance [`GpuVectors::distances`] computes, as the CPU's [`crate::Metric`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorDistance {
    /// Euclidean.
    L2 = 0,
    /// Manhattan.
    L1 = 1,
    /// `1 - cos(angle)` (1 when a vector is zero).
    Cosine = 2,
}

/// The rows a re-rank reads, as [`GpuVectors::from_rows`] puts them on a device: float vectors,
/// or a compact copy (`crate::store`) whose values the device rebuilds as the CPU does.
#[derive(Clone, Copy, Debug)]
pub enum DeviceRows<'a> {
    /// Rows of `dim` floats.
    F32 {
        /// `n x dim` values.
        data: &'a [f32],
        /// The dimension.
        dim: usize,
    },
    /// Rows of `dim` half-precision values (their bits).
    F16 {
        /// `n x dim` values.
        data: &'a [u16],
        /// The dimension.
        dim: usize,
    },
    /// Rows of `dim` 8-bit codes, value `lo[j] + step[j] x code`.
    Sq8 {
        /// Each dimension's least value.
        lo: &'a [f32],
        /// Each dimension's step.
        step: &'a [f32],
        /// `n x dim` codes.
        data: &'a [u8],
        /// The dimension.
        dim: usize,
    },
    /// Rows rebuilt from a codebook index's codes (its cells attached to the device too).
    Codes {
        /// Each object's position in the cells' order.
        pos: &'a [u32],
        /// `cells x dim` centres.
        centres: &'a [f32],
        /// Per slice its 256 codewords, slice after slice.
        books: &'a [f32],
        /// `subspaces + 1` first dimensions of the slices.
        bounds: &'a [usize],
        /// The dimension.
        dim: usize,
    },
}

impl DeviceRows<'_> {
    /// The dimension.
    pub fn dim(&self) -> usize {
        match *self {
            DeviceRows::F32 { dim, .. }
            | DeviceRows::F16 { dim, .. }
            | DeviceRows::Sq8 { dim, .. }
            | DeviceRows::Codes { dim, .. } => dim,
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        let d = self.dim().max(1);
        match self {
            DeviceRows::F32 { data, .. } => data.len() / d,
            DeviceRows::F16 { data, .. } => data.len() / d,
            DeviceRows::Sq8 { data, .. } => data.len() / d,
            DeviceRows::Codes { pos, .. } => pos.len(),
        }
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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

    /// The most objects `p` probed cells can hold, for each `p`: entry `p - 1` is the sum of the
    /// `p` largest cells (a query's scan reads no more).
    pub fn largest_cells(&self) -> Vec<usize> {
        let mut sizes: Vec<usize> = self
            .starts
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        sizes
            .iter()
            .scan(0usize, |sum, &c| {
                *sum += c;
                Some(*sum)
            })
            .collect()
    }
}

/// A codebook's centres and codewords for [`GpuVectors::attach_codebook`], so that the probes of
/// a batch are chosen on the device (the codebook's `plan`, identical to the CPU's).
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

/// The query vectors of a [`ScanJob`]: one row-major buffer, or rows held apart (each `dim`
/// long), which go to the device as they lie.
#[derive(Clone, Copy, Debug)]
pub enum Queries<'a> {
    /// `nq x dim` floats.
    Flat(&'a [f32]),
    /// `nq` rows.
    Rows(&'a [&'a [f32]]),
}

impl Queries<'_> {
    /// The number of queries, for vectors of dimension `dim` (`None` where the floats are not
    /// rows of `dim`).
    pub fn count(&self, dim: usize) -> Option<usize> {
        match *self {
            Self::Flat(v) => (dim > 0 && v.len() % dim == 0).then(|| v.len() / dim),
            Self::Rows(rows) => rows.iter().all(|r| r.len() == dim).then_some(rows.len()),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        match *self {
            Self::Flat(v) => v.is_empty(),
            Self::Rows(rows) => rows.is_empty(),
        }
    }
}

/// A batch of codebook probes for [`GpuVectors::scan_top_k`]: per query its probed cells and, per
/// (probed cell, slice), the codewords within its radius, nearest first (the codebook's
/// `Plan`).
#[derive(Clone, Copy, Debug)]
pub struct ScanJob<'a> {
    /// The query vectors (for the plan, the closeness weights and the re-rank).
    pub queries: Queries<'a>,
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
    /// Closeness weights of `levels` levels (the codebook's `weights`), computed on the
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

    /// Always [`GenieError::GpuUnavailable`] without the `cuda` feature.
    pub fn from_rows(ordinal: usize, rows: DeviceRows<'_>) -> Result<Self> {
        let _ = (ordinal, rows);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn can_rerank(&self) -> bool {
        false
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
    pub fn top_k_among(
        &self,
        queries: &[f32],
        ids: &[u32],
        k: usize,
        metric: VectorDistance,
    ) -> Result<Vec<Vec<genie_core::VerifiedHit>>> {
        let _ = (queries, ids, k, metric);
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
    pub fn keep_freed_memory(&self) -> Result<()> {
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
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
    pub fn nearest_top(
        &self,
        centres: &[f32],
        norms: &[f32],
        rows: &[f32],
        top: usize,
    ) -> Result<(Vec<u32>, Vec<f32>)> {
        let _ = (centres, norms, rows, top);
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
    ) -> Result<(Vec<Vec<genie_core::VerifiedHit>>, ScanTimes)> {
        let _ = (job, k, metric);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn scan_candidates(&self, job: &ScanJob<'_>) -> Result<Vec<Vec<genie_core::Hit>>> {
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

#[cfg(test)]
mod tests {
    use super::CellCodesRef;

    #[test]
    fn largest_cells_sum_the_biggest_first() {
        // cells of 3, 0, 7 and 2 objects
        let cells = CellCodesRef {
            starts: &[0, 3, 3, 10, 12],
            ids: &[0; 12],
            codes: &[0; 12],
            subspaces: 1,
        };
        assert_eq!(cells.largest_cells(), vec![7, 10, 12, 12]);
        let none = CellCodesRef {
            starts: &[0],
            ids: &[],
            codes: &[],
            subspaces: 1,
        };
        assert!(none.largest_cells().is_empty());
    }
}
