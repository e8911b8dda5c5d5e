//! [`VectorTransform`]: dense `f32` vectors to match-count objects and queries (paper section
//! IV-A1, Fig. 1 applied to hash functions): function `i` is an attribute whose value is the
//! re-hashed signature `r_i(h_i(v))`, so a vector becomes the object of `m` keywords
//! `i * D + r_i(h_i(v))` and a query the `m` single-keyword items of the same form. The match count
//! of a point is the number of functions on which it collides with the query.

use crate::error::{LshError, Result};
use crate::family::{Family, LshParams};
use crate::hash::rehash::{bucket, keyword};
use crate::hash::{self, GpuParams, VectorHash};
use crate::vectors::VectorSet;
use genie_core::{GenieError, Keyword, Query, Transform};
use rayon::prelude::*;

/// Multiply-adds (grid cells for random binning) above which [`VectorTransform::keywords_of_all`]
/// hashes on a GPU when there is one.
pub const GPU_HASH_MIN_WORK: u64 = 1 << 30;

/// The LSH transform of one parameter set.
pub struct VectorTransform {
    params: LshParams,
    hash: Box<dyn VectorHash>,
}

impl std::fmt::Debug for VectorTransform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorTransform")
            .field("params", &self.params)
            .finish()
    }
}

impl VectorTransform {
    /// The transform of `params` (validated).
    pub fn new(params: LshParams) -> Result<Self> {
        params.validate()?;
        let hash = hash::build(&params);
        Ok(Self { params, hash })
    }

    /// The parameters.
    pub fn params(&self) -> &LshParams {
        &self.params
    }

    /// The hash functions (raw signatures before the re-hash).
    pub fn functions(&self) -> &dyn VectorHash {
        self.hash.as_ref()
    }

    fn check_dim(&self, v: &[f32]) -> Result<()> {
        if v.len() != self.params.dim as usize {
            return Err(LshError::Dimension {
                expected: self.params.dim as usize,
                found: v.len(),
            });
        }
        Ok(())
    }

    /// Appends the `m` keywords of `v`, reusing `buf` for the signatures.
    fn keywords_into(&self, v: &[f32], buf: &mut Vec<u8>, out: &mut [Keyword]) {
        let d = self.params.buckets;
        for (i, slot) in out.iter_mut().enumerate() {
            buf.clear();
            self.hash.signature(i, v, buf);
            *slot = keyword(i as u32, d, bucket(buf, self.hash.rehash_seed(i), d));
        }
    }

    /// The `m` keywords of one vector, in function order.
    pub fn keywords(&self, v: &[f32]) -> Result<Vec<Keyword>> {
        self.check_dim(v)?;
        let mut out = vec![0; self.params.functions as usize];
        self.keywords_into(v, &mut Vec::new(), &mut out);
        Ok(out)
    }

    /// The keywords of every vector on GPU 0, identical to [`VectorTransform::keywords_of_all`] on
    /// the CPU; `None` for a family without a GPU kernel (every built-in family has one).
    pub fn keywords_of_all_gpu(&self, vectors: &VectorSet) -> Result<Option<Vec<Keyword>>> {
        use crate::gpu as cuda;
        let Some(params) = self.hash.gpu_params() else {
            return Ok(None);
        };
        if !vectors.is_empty() {
            self.check_dim(vectors.row(0))?;
        }
        let (data, dim, buckets) = (vectors.as_slice(), self.params.dim, self.params.buckets);
        let keywords = match params {
            GpuParams::Projection(p) => cuda::project_hash(
                0,
                &cuda::ProjectionJob {
                    vectors: data,
                    dim,
                    a: p.a,
                    offsets: p.offsets,
                    width: p.width,
                    seeds: p.seeds,
                    buckets,
                },
            )?,
            GpuParams::Sign(p) => cuda::sign_hash(
                0,
                &cuda::SignJob {
                    vectors: data,
                    dim,
                    bits: p.bits,
                    a: p.a,
                    seeds: p.seeds,
                    buckets,
                },
            )?,
            GpuParams::Binning(p) => cuda::binning_hash(
                0,
                &cuda::BinningJob {
                    vectors: data,
                    dim,
                    inv_width: p.inv_width,
                    shift: p.shift,
                    seeds: p.seeds,
                    buckets,
                },
            )?,
        };
        Ok(Some(keywords))
    }

    /// The arithmetic of hashing `n` vectors: `n x m x dim` multiply-adds (or, for random binning,
    /// grid cells), times the sign bits for SRP.
    fn hash_work(&self, n: usize) -> u64 {
        let bits = if self.params.family == Family::Srp {
            u64::from(self.params.bits.max(1))
        } else {
            1
        };
        (n as u64)
            .saturating_mul(u64::from(self.params.functions))
            .saturating_mul(u64::from(self.params.dim))
            .saturating_mul(bits)
    }

    /// The keywords of every vector, `n x m` row-major: on a GPU for large inputs (at least
    /// [`GPU_HASH_MIN_WORK`] multiply-adds, see `hash_work`, and a usable GPU; a GPU error is
    /// logged and the CPU takes over), on all CPU cores otherwise. Both give the same keywords.
    pub fn keywords_of_all(&self, vectors: &VectorSet) -> Result<Vec<Keyword>> {
        if vectors.is_empty() {
            return Ok(Vec::new());
        }
        self.check_dim(vectors.row(0))?;
        if self.hash_work(vectors.len()) >= GPU_HASH_MIN_WORK
            && genie_core::backend::cuda_probe().is_ok()
        {
            match self.keywords_of_all_gpu(vectors) {
                Ok(Some(k)) => return Ok(k),
                Ok(None) => {}
                Err(e) => log::warn!("hashing on the CPU: the GPU failed: {e}"),
            }
        }
        let m = self.params.functions as usize;
        let mut out = vec![0; vectors.len() * m];
        out.par_chunks_mut(m)
            .zip(vectors.as_slice().par_chunks(vectors.dim()))
            .for_each_init(Vec::new, |buf, (slot, v)| self.keywords_into(v, buf, slot));
        Ok(out)
    }

    /// The queries of every vector, hashed in parallel.
    pub fn queries_of_all(&self, vectors: &VectorSet) -> Result<Vec<Query>> {
        let m = self.params.functions as usize;
        let keywords = self.keywords_of_all(vectors)?;
        Ok(keywords.par_chunks(m).map(Query::from_keywords).collect())
    }
}

impl Transform for VectorTransform {
    type Item = [f32];
    type QueryInput = [f32];

    fn keyword_space(&self) -> u32 {
        self.params.keyword_space()
    }

    fn blocks(&self) -> Vec<Keyword> {
        (0..self.params.functions)
            .map(|i| i * self.params.buckets)
            .collect()
    }

    fn object(&self, item: &[f32], out: &mut Vec<Keyword>) -> genie_core::Result<()> {
        out.extend(self.keywords(item).map_err(GenieError::from)?);
        Ok(())
    }

    fn query(&self, input: &[f32]) -> genie_core::Result<Query> {
        Ok(Query::from_keywords(
            &self.keywords(input).map_err(GenieError::from)?,
        ))
    }

    fn metadata(&self) -> String {
        serde_json::json!({ "plugin": "genie-lsh", "params": self.params }).to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_family_has_gpu_parameters() {
        for family in [Family::E2lsh, Family::L1, Family::Rbh, Family::Srp] {
            let t = VectorTransform::new(LshParams::new(family, 5, 3, 2.0, 1)).unwrap();
            let kind = match t.functions().gpu_params() {
                Some(GpuParams::Projection(p)) => (p.a.len() == 15).then_some("projection"),
                Some(GpuParams::Sign(p)) => {
                    (p.a.len() == 3 * p.bits as usize * 5 && p.bits == 8).then_some("sign")
                }
                Some(GpuParams::Binning(p)) => {
                    (p.inv_width.len() == 15 && p.shift.len() == 15).then_some("binning")
                }
                None => None,
            };
            let want = match family {
                Family::E2lsh | Family::L1 => "projection",
                Family::Srp => "sign",
                Family::Rbh => "binning",
            };
            assert_eq!(kind, Some(want), "{family:?}");
        }
    }

    #[test]
    fn srp_work_counts_its_bits() {
        let srp = VectorTransform::new(LshParams::new(Family::Srp, 10, 4, 0.0, 1)).unwrap();
        assert_eq!(srp.hash_work(100), 100 * 4 * 10 * 8);
        let e2 = LshParams {
            bits: 8,
            ..LshParams::new(Family::E2lsh, 10, 4, 1.0, 1)
        };
        let e2 = VectorTransform::new(e2).unwrap();
        assert_eq!(e2.hash_work(100), 100 * 4 * 10);
        assert_eq!(e2.hash_work(usize::MAX), u64::MAX);
    }
}
