//! The similarity a codebook index answers in. The codebook itself works in L2; cosine and inner
//! product reduce to it on the stored vectors:
//! - **cosine**: every vector and query is scaled to length 1, where `|a - b|^2 = 2 - 2 cos`, so
//!   the L2 order is the cosine order, and the distance reported is `1 - cos = d^2 / 2`;
//! - **inner product** (the maximum inner product reduced to nearest neighbours): with `M` the
//!   largest length of the build's vectors, a vector `x` is stored as `[x, sqrt(M^2 - |x|^2)]` and
//!   a query `q` searched as `[q, 0]`, so `|q' - x'|^2 = |q|^2 + M^2 - 2 q.x` falls as `q.x`
//!   grows; the distance reported is `-q.x` (smaller is closer in every space).

use crate::error::{LshError, Result};
use crate::vectors::VectorSet;
use serde::{Deserialize, Serialize};

/// The space of a codebook index (`"space"` in its metadata; absent is L2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "metric", rename_all = "lowercase")]
pub enum Space {
    /// The Euclidean distance.
    #[default]
    L2,
    /// `1 - cos(angle)`.
    Cosine,
    /// The negated inner product; `norm` is the largest length of the build's vectors.
    Ip {
        /// `M`: the largest length of a stored vector.
        norm: f32,
    },
}

/// The metric names a build takes.
pub const METRICS: &[&str] = &["l2", "cosine", "ip"];

impl Space {
    /// The space of metric `name` (one of [`METRICS`]) for the build's `vectors`.
    pub fn for_vectors(name: &str, vectors: &VectorSet) -> Result<Self> {
        match name {
            "l2" => Ok(Self::L2),
            "cosine" => Ok(Self::Cosine),
            "ip" => {
                let norm = vectors.rows().map(length).fold(0f32, f32::max);
                Ok(Self::Ip { norm })
            }
            other => Err(LshError::InvalidParameter(format!(
                "metric {other:?}: expected one of {}",
                METRICS.join(", ")
            ))),
        }
    }

    /// Whether this is L2 (saved as no entry).
    pub fn is_l2(&self) -> bool {
        *self == Self::L2
    }

    /// The metric's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::L2 => "l2",
            Self::Cosine => "cosine",
            Self::Ip { .. } => "ip",
        }
    }

    /// The dimension of a stored vector for vectors of dimension `dim`.
    pub fn stored_dim(&self, dim: usize) -> usize {
        match self {
            Self::Ip { .. } => dim + 1,
            _ => dim,
        }
    }

    /// The dimension of a user's vector (and query) for stored vectors of dimension `stored`.
    pub fn user_dim(&self, stored: usize) -> usize {
        match self {
            Self::Ip { .. } => stored.saturating_sub(1),
            _ => stored,
        }
    }

    /// A user's vector as stored. A vector longer than an inner-product index's `M` is an error
    /// (the reduction needs every stored vector within `M`).
    pub fn object(&self, v: &[f32]) -> Result<Vec<f32>> {
        match *self {
            Self::L2 => Ok(v.to_vec()),
            Self::Cosine => Ok(unit(v)),
            Self::Ip { norm } => {
                let len = length(v);
                // the build's own vectors give M itself; rounding may put them a hair above
                if len > norm * (1.0 + 1e-5) {
                    return Err(LshError::InvalidParameter(format!(
                        "a vector of length {len} in an inner-product index whose vectors are at \
                         most {norm} long (rebuild the index with the longer vectors among them)"
                    )));
                }
                let mut out = v.to_vec();
                out.push((norm * norm - len * len).max(0.0).sqrt());
                Ok(out)
            }
        }
    }

    /// A user's vectors as stored ([`Space::object`] of each row).
    pub fn objects(&self, vectors: VectorSet) -> Result<VectorSet> {
        if self.is_l2() {
            return Ok(vectors);
        }
        let mut out = VectorSet::empty(self.stored_dim(vectors.dim()))?;
        for row in vectors.rows() {
            out.push(&self.object(row)?)?;
        }
        Ok(out)
    }

    /// A user's queries as searched ([`Space::query`] of each row).
    pub fn queries(&self, queries: VectorSet) -> Result<VectorSet> {
        if self.is_l2() {
            return Ok(queries);
        }
        let mut out = VectorSet::empty(self.stored_dim(queries.dim()))?;
        for row in queries.rows() {
            out.push(&self.query(row).0)?;
        }
        Ok(out)
    }

    /// A user's query as searched, and its squared length (for [`Space::distance`]).
    pub fn query(&self, q: &[f32]) -> (Vec<f32>, f32) {
        self.query_vec(q.to_vec())
    }

    /// The squared length of a user's query `q` (for [`Space::distance`]).
    pub fn query_len2(&self, q: &[f32]) -> f32 {
        q.iter().map(|x| x * x).sum::<f32>()
    }

    /// [`Space::query`] of a vector the caller gives up (not copied where the space keeps it).
    pub fn query_vec(&self, mut q: Vec<f32>) -> (Vec<f32>, f32) {
        let len2 = self.query_len2(&q);
        let searched = match self {
            Self::L2 => q,
            Self::Cosine => unit(&q),
            Self::Ip { .. } => {
                q.push(0.0);
                q
            }
        };
        (searched, len2)
    }

    /// The distance reported for an L2 distance `l2` between stored vectors, for a query of
    /// squared length `query_len2`.
    pub fn distance(&self, l2: f64, query_len2: f32) -> f64 {
        match *self {
            Self::L2 => l2,
            Self::Cosine => l2 * l2 / 2.0,
            Self::Ip { norm } => {
                let m2 = f64::from(norm) * f64::from(norm);
                -(f64::from(query_len2) + m2 - l2 * l2) / 2.0
            }
        }
    }
}

fn length(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// `v` scaled to length 1 (a zero vector stays zero).
fn unit(v: &[f32]) -> Vec<f32> {
    let len = length(v);
    if len > 0.0 {
        v.iter().map(|x| x / len).collect()
    } else {
        v.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum()
    }

    fn l2(a: &[f32], b: &[f32]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from((x - y) * (x - y)))
            .sum::<f64>()
            .sqrt()
    }

    #[test]
    fn the_reductions_report_the_metric_and_keep_its_order() {
        let rows = vec![
            vec![3.0f32, 4.0],
            vec![1.0, 0.0],
            vec![-2.0, 1.0],
            vec![0.5, 0.5],
        ];
        let set = VectorSet::from_rows(&rows).expect("rows");
        let q = [2.0f32, 1.0];
        let ip = Space::for_vectors("ip", &set).expect("ip");
        assert_eq!(ip, Space::Ip { norm: 5.0 });
        let cos = Space::for_vectors("cosine", &set).expect("cosine");
        for space in [ip, cos] {
            let stored = space.objects(set.clone()).expect("stored");
            assert_eq!(stored.dim(), space.stored_dim(2));
            let (sq, len2) = space.query(&q);
            let searched = space
                .queries(VectorSet::from_rows(&[q.to_vec()]).expect("query"))
                .expect("queries");
            assert_eq!(searched.as_slice(), &sq[..]);
            let reported: Vec<f64> = stored
                .rows()
                .map(|x| space.distance(l2(&sq, x), len2))
                .collect();
            for (row, got) in rows.iter().zip(&reported) {
                let want = match space {
                    Space::Ip { .. } => -dot(&q, row),
                    _ => 1.0 - dot(&q, row) / (dot(&q, &q).sqrt() * dot(row, row).sqrt()),
                };
                assert!((got - want).abs() < 1e-5, "{space:?}: {got} against {want}");
            }
        }
        // a vector longer than M cannot join an inner-product index
        let e = ip.object(&[6.0, 0.0]).expect_err("too long");
        assert!(e.to_string().contains("at most 5 long"), "{e}");
        assert!(Space::for_vectors("dot", &set).is_err());
        assert_eq!(Space::default().user_dim(7), 7);
        assert_eq!(ip.user_dim(3), 2);
    }

    #[test]
    fn l2_is_saved_as_nothing_and_the_others_by_name() {
        let json = serde_json::to_value(Space::Ip { norm: 2.0 }).expect("json");
        assert_eq!(json, serde_json::json!({"metric": "ip", "norm": 2.0}));
        let back: Space = serde_json::from_value(json).expect("back");
        assert_eq!(back, Space::Ip { norm: 2.0 });
        assert!(Space::L2.is_l2());
    }
}
