//! [`VectorSet`]: `n` dense vectors of dimension `d`, `f32`, row-major in one buffer. Rows are the
//! data items of the LSH transforms (paper section IV); a row's index is its object id.

use crate::error::{LshError, Result};
use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `f32` values in a 64-byte cache line.
const LINE_FLOATS: usize = 16;
/// Most cache lines of a row [`VectorSet::prefetch`] asks for.
pub const PREFETCH_LINES: usize = 16;

/// `n x d` vectors of `f32`, row-major.
///
/// ```
/// use genie_lsh::VectorSet;
/// let set = VectorSet::new(2, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// assert_eq!((set.len(), set.dim()), (3, 2));
/// assert_eq!(set.row(1), &[3.0, 4.0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VectorSet {
    dim: usize,
    data: Vec<f32>,
}

impl VectorSet {
    /// Vectors of dimension `dim` from a row-major buffer (its length a multiple of `dim`).
    pub fn new(dim: usize, data: Vec<f32>) -> Result<Self> {
        if dim == 0 {
            return Err(LshError::InvalidParameter(
                "vectors need a dimension of at least 1".into(),
            ));
        }
        if data.len() % dim != 0 {
            return Err(LshError::InvalidParameter(format!(
                "{} values do not split into rows of {dim}",
                data.len()
            )));
        }
        Ok(Self { dim, data })
    }

    /// An empty set of dimension `dim`.
    pub fn empty(dim: usize) -> Result<Self> {
        Self::new(dim, Vec::new())
    }

    /// Vectors from rows, which must all have the same (non-zero) length.
    pub fn from_rows<R: AsRef<[f32]> + Sync>(rows: &[R]) -> Result<Self> {
        let dim = rows.first().map_or(0, |r| r.as_ref().len());
        Self::gather(dim, rows.len(), |i| rows[i].as_ref())
    }

    /// `n` rows of dimension `dim`, row `i` being `row(i)`, gathered on all cores (a batch of
    /// queries held one by one).
    pub fn gather<'a>(
        dim: usize,
        n: usize,
        row: impl Fn(usize) -> &'a [f32] + Sync,
    ) -> Result<Self> {
        use rayon::prelude::*;
        if let Some(bad) = (0..n).map(&row).find(|r| r.len() != dim) {
            return Err(LshError::Dimension {
                expected: dim,
                found: bad.len(),
            });
        }
        let mut data = vec![0.0f32; n * dim];
        if dim > 0 {
            data.par_chunks_mut(dim)
                .enumerate()
                .with_min_len(64)
                .for_each(|(i, out)| out.copy_from_slice(row(i)));
        }
        Self::new(dim, data)
    }

    /// Appends a row of the set's dimension.
    pub fn push(&mut self, row: &[f32]) -> Result<()> {
        if row.len() != self.dim {
            return Err(LshError::Dimension {
                expected: self.dim,
                found: row.len(),
            });
        }
        self.data.extend_from_slice(row);
        Ok(())
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.data.len() / self.dim.max(1)
    }

    /// Whether the set has no vector.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Row `i` (panics when `i >= len`, like slice indexing; see [`VectorSet::get`]).
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Row `i`, or `None` beyond the end.
    pub fn get(&self, i: usize) -> Option<&[f32]> {
        self.data.get(i * self.dim..(i + 1) * self.dim)
    }

    /// Asks the CPU to bring row `i` into its caches ahead of a read (the first
    /// [`PREFETCH_LINES`] cache lines: the hardware streams the rest of a long row). Only a hint:
    /// nothing happens beyond the rows, nor on other architectures than x86-64.
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(row) = self.get(i) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            for line in row.chunks(LINE_FLOATS).take(PREFETCH_LINES) {
                // SAFETY: a prefetch never faults nor writes; the address lies inside `row`
                unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// The rows in order.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f32> {
        self.data.chunks_exact(self.dim)
    }

    /// The row-major buffer.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// The row-major buffer, by value.
    pub fn into_vec(self) -> Vec<f32> {
        self.data
    }

    /// The first `n` rows (all when `n >= len`).
    pub fn head(&self, n: usize) -> Self {
        let n = n.min(self.len());
        Self {
            dim: self.dim,
            data: self.data[..n * self.dim].to_vec(),
        }
    }

    /// The rows at `ids`, in that order (ids beyond the end are an error).
    pub fn select(&self, ids: &[usize]) -> Result<Self> {
        let mut out = Self {
            dim: self.dim,
            data: Vec::with_capacity(ids.len() * self.dim),
        };
        for &i in ids {
            let row = self.get(i).ok_or_else(|| {
                LshError::InvalidParameter(format!("row {i} beyond the {} rows", self.len()))
            })?;
            out.data.extend_from_slice(row);
        }
        Ok(out)
    }

    /// Ids of up to `n` distinct rows drawn uniformly with `seed`, ascending.
    pub fn sample_ids(&self, n: usize, seed: u64) -> Vec<usize> {
        let len = self.len();
        if n >= len {
            return (0..len).collect();
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut ids = sample(&mut rng, len, n).into_vec();
        ids.sort_unstable();
        ids
    }

    /// Up to `n` distinct rows drawn uniformly with `seed`, in ascending row order.
    pub fn sample(&self, n: usize, seed: u64) -> Self {
        let ids = self.sample_ids(n, seed);
        let mut data = Vec::with_capacity(ids.len() * self.dim);
        for i in ids {
            data.extend_from_slice(self.row(i));
        }
        Self {
            dim: self.dim,
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn shape_checks() {
        assert!(VectorSet::new(0, vec![]).is_err());
        assert!(VectorSet::new(3, vec![1.0; 4]).is_err());
        let mut s = VectorSet::empty(2).unwrap();
        assert!(s.is_empty());
        s.push(&[1.0, 2.0]).unwrap();
        assert!(matches!(
            s.push(&[1.0]),
            Err(LshError::Dimension {
                expected: 2,
                found: 1
            })
        ));
        assert_eq!(s.len(), 1);
        assert_eq!(s.get(1), None);
        // a hint only, in the rows or beyond them
        s.prefetch(0);
        s.prefetch(usize::MAX / 4);
        assert!(VectorSet::from_rows(&[vec![1.0, 2.0], vec![3.0]]).is_err());
    }

    #[test]
    fn samples_are_reproducible_and_distinct() {
        let s = VectorSet::new(1, (0..100).map(|i| i as f32).collect()).unwrap();
        let a = s.sample_ids(10, 5);
        assert_eq!(a, s.sample_ids(10, 5));
        assert_ne!(a, s.sample_ids(10, 6));
        let mut d = a.clone();
        d.dedup();
        assert_eq!(d.len(), 10);
        assert_eq!(s.sample(1000, 1).len(), 100);
        assert_eq!(s.select(&[3, 1]).unwrap().as_slice(), &[3.0, 1.0]);
        assert!(s.select(&[100]).is_err());
        assert_eq!(s.head(2).as_slice(), &[0.0, 1.0]);
    }
}
