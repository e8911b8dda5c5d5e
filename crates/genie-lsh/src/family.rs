//! The hash families of the vector transform and their parameters (paper section IV-A): E2LSH
//! for L2 and its Cauchy variant for L1 (Eqn. 10), random binning hashing for the Laplacian kernel
//! (Eqn. 2), and sign random projections for the angle. [`LshParams`] is what an index stores to
//! rebuild the same functions.

use crate::error::{LshError, Result};
use crate::metric::Metric;
use genie_core::index::MAX_KEYWORD_SPACE;
use serde::{Deserialize, Serialize};

/// A family of locality-sensitive hash functions over dense vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// p-stable LSH for L2 (E2LSH): `h(v) = floor((a.v + b) / w)`, `a ~ N(0, 1)^d`, `b ~ U[0, w)`.
    E2lsh,
    /// The same with Cauchy `a` (1-stable), for L1.
    L1,
    /// Random binning hashing for the Laplacian kernel `exp(-||p - q||_1 / sigma)`: per dimension a
    /// grid of width `g ~ Gamma(2, sigma)` shifted by `u ~ U[0, g)`; the signature is the cell.
    Rbh,
    /// Sign random projections: `bits` signs of `a.v`, `a ~ N(0, 1)^d`; collision `1 - theta/pi`
    /// per bit.
    Srp,
}

impl Family {
    /// The measure that re-ranks this family's candidates.
    pub fn metric(self) -> Metric {
        match self {
            Self::E2lsh => Metric::L2,
            Self::L1 | Self::Rbh => Metric::L1,
            Self::Srp => Metric::Cosine,
        }
    }

    /// The family's name as on the command line and in the index metadata.
    pub fn name(self) -> &'static str {
        match self {
            Self::E2lsh => "e2lsh",
            Self::L1 => "l1",
            Self::Rbh => "rbh",
            Self::Srp => "srp",
        }
    }

    /// Whether [`LshParams::width`] is used (E2LSH, L1: bucket width `w`; RBH: kernel width `sigma`).
    pub fn has_width(self) -> bool {
        !matches!(self, Self::Srp)
    }
}

impl std::str::FromStr for Family {
    type Err = LshError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "e2lsh" | "l2" => Ok(Self::E2lsh),
            "l1" => Ok(Self::L1),
            "rbh" => Ok(Self::Rbh),
            "srp" => Ok(Self::Srp),
            other => Err(LshError::InvalidParameter(format!(
                "unknown LSH family {other:?} (expected e2lsh, l1, rbh or srp)"
            ))),
        }
    }
}

/// Default number of buckets `D` a signature is re-hashed into.
pub const DEFAULT_BUCKETS: u32 = 8192;
/// Default sign bits per SRP function.
pub const DEFAULT_SRP_BITS: u32 = 8;

/// Everything that determines a vector transform: same parameters, same keywords.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LshParams {
    /// The family.
    pub family: Family,
    /// Dimension of the vectors.
    pub dim: u32,
    /// Number of hash functions `m` (one keyword per function and vector).
    pub functions: u32,
    /// E2LSH and L1: the bucket width `w`; RBH: the kernel width `sigma`; unused by SRP.
    pub width: f64,
    /// SRP: sign bits per function (1 to 64); 1 for the other families.
    pub bits: u32,
    /// Buckets `D` of the re-hash: function `i` owns keywords `[i * D, (i + 1) * D)`.
    pub buckets: u32,
    /// Seed of every random draw (projections, shifts, grids, re-hash seeds).
    pub seed: u64,
}

impl LshParams {
    /// Parameters with the default buckets and bits; `width` must suit the data (see
    /// [`crate::estimate`]).
    pub fn new(family: Family, dim: usize, functions: u32, width: f64, seed: u64) -> Self {
        Self {
            family,
            dim: dim as u32,
            functions,
            width,
            bits: if family == Family::Srp {
                DEFAULT_SRP_BITS
            } else {
                1
            },
            buckets: DEFAULT_BUCKETS,
            seed,
        }
    }

    /// Checks the ranges and that the keyword space `functions * buckets` fits the index.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(LshError::InvalidParameter(what));
        if self.dim == 0 {
            return bad("the dimension must be at least 1".into());
        }
        if self.functions == 0 {
            return bad("the number of functions must be at least 1".into());
        }
        if self.buckets == 0 {
            return bad("the number of buckets must be at least 1".into());
        }
        if self.family.has_width() && !(self.width.is_finite() && self.width > 0.0) {
            return bad(format!(
                "the width of {} must be a positive number, got {}",
                self.family.name(),
                self.width
            ));
        }
        if self.family == Family::Srp && !(1..=64).contains(&self.bits) {
            return bad(format!("SRP bits must lie in 1..=64, got {}", self.bits));
        }
        let space = u64::from(self.functions) * u64::from(self.buckets);
        if space > MAX_KEYWORD_SPACE {
            return bad(format!(
                "{} functions x {} buckets = {space} keywords exceed the index's {MAX_KEYWORD_SPACE}",
                self.functions, self.buckets
            ));
        }
        Ok(())
    }

    /// The keyword space `functions * buckets`.
    pub fn keyword_space(&self) -> u32 {
        self.functions.saturating_mul(self.buckets)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn validation() {
        let ok = LshParams::new(Family::E2lsh, 4, 10, 1.0, 0);
        ok.validate().unwrap();
        assert_eq!(ok.keyword_space(), 10 * DEFAULT_BUCKETS);
        for bad in [
            LshParams {
                dim: 0,
                ..ok.clone()
            },
            LshParams {
                functions: 0,
                ..ok.clone()
            },
            LshParams {
                buckets: 0,
                ..ok.clone()
            },
            LshParams {
                width: 0.0,
                ..ok.clone()
            },
            LshParams {
                width: f64::NAN,
                ..ok.clone()
            },
            LshParams {
                functions: 1 << 20,
                buckets: 1 << 20,
                ..ok.clone()
            },
            LshParams {
                bits: 65,
                ..LshParams::new(Family::Srp, 4, 10, 0.0, 0)
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        LshParams::new(Family::Srp, 4, 10, 0.0, 0)
            .validate()
            .unwrap();
    }

    #[test]
    fn names() {
        for f in [Family::E2lsh, Family::L1, Family::Rbh, Family::Srp] {
            assert_eq!(f.name().parse::<Family>().unwrap(), f);
        }
        assert!("x".parse::<Family>().is_err());
        let json = serde_json::to_string(&Family::Rbh).unwrap();
        assert_eq!(json, "\"rbh\"");
    }
}
