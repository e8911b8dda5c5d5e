//! The LSH hashing jobs of a GPU ([`ProjectionJob`], [`SignJob`], [`BinningJob`]): the arrays a
//! launch takes, checked before anything goes to the device.

use genie_core::{GenieError, Result};

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

#[cfg(test)]
mod tests {
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
