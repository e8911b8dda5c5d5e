//! Exact distances between vectors, the true measures that re-rank LSH candidates (DESIGN.md
//! section 5) and that the approximation ratio of paper Eqn. 13 is taken in: L2 for E2LSH, L1 for
//! the Cauchy variant and random binning (the Laplacian kernel is a function of L1), the angle's
//! cosine distance for sign random projections, and the Jaccard distance for MinHash sets.

use serde::{Deserialize, Serialize};

/// A distance between vectors (smaller is closer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Euclidean distance.
    L2,
    /// Manhattan distance.
    L1,
    /// `1 - cos(angle)`; 1 when one vector is zero.
    Cosine,
}

impl Metric {
    /// The distance between `a` and `b` (of equal length).
    pub fn distance(self, a: &[f32], b: &[f32]) -> f64 {
        match self {
            Self::L2 => squared_l2(a, b).sqrt(),
            Self::L1 => l1(a, b),
            Self::Cosine => cosine_distance(a, b),
        }
    }

    /// The metric's name as in the index metadata.
    pub fn name(self) -> &'static str {
        match self {
            Self::L2 => "l2",
            Self::L1 => "l1",
            Self::Cosine => "cosine",
        }
    }
}

/// Lanes summed apart so that the loop vectorizes; the sum order is fixed, hence reproducible.
const LANES: usize = 8;

fn lanes<F: Fn(f32, f32) -> f32>(a: &[f32], b: &[f32], f: F) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; LANES];
    let mut ca = a.chunks_exact(LANES);
    let mut cb = b.chunks_exact(LANES);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for l in 0..LANES {
            acc[l] += f(x[l], y[l]);
        }
    }
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| f(x, y))
        .sum();
    acc.iter().map(|&v| f64::from(v)).sum::<f64>() + f64::from(tail)
}

/// The dot product `a . b`.
pub fn dot(a: &[f32], b: &[f32]) -> f64 {
    lanes(a, b, |x, y| x * y)
}

/// The squared Euclidean distance.
pub fn squared_l2(a: &[f32], b: &[f32]) -> f64 {
    lanes(a, b, |x, y| (x - y) * (x - y))
}

/// The Manhattan distance.
pub fn l1(a: &[f32], b: &[f32]) -> f64 {
    lanes(a, b, |x, y| (x - y).abs())
}

/// `1 - cos(angle(a, b))`, in `[0, 2]`; 1 when either vector is zero.
pub fn cosine_distance(a: &[f32], b: &[f32]) -> f64 {
    let (na, nb) = (dot(a, a).sqrt(), dot(b, b).sqrt());
    if na == 0.0 || nb == 0.0 {
        return 1.0;
    }
    (1.0 - dot(a, b) / (na * nb)).clamp(0.0, 2.0)
}

/// The angle between `a` and `b` in radians, `[0, pi]` (`pi / 2` when either is zero).
pub fn angle(a: &[f32], b: &[f32]) -> f64 {
    (1.0 - cosine_distance(a, b)).clamp(-1.0, 1.0).acos()
}

/// The Jaccard similarity `|A n B| / |A u B|` of two sets given as sorted, de-duplicated slices
/// (1 for two empty sets).
pub fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    if union == 0 {
        1.0
    } else {
        common as f64 / union as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..19).map(|i| (i * 2) as f32).collect();
        let l2: f64 = a.iter().map(|&x| f64::from(x * x)).sum::<f64>().sqrt();
        assert!((Metric::L2.distance(&a, &b) - l2).abs() < 1e-9);
        assert_eq!(Metric::L1.distance(&a, &b), 171.0);
        assert!(Metric::Cosine.distance(&a, &b).abs() < 1e-6);
        assert_eq!(Metric::Cosine.distance(&[0.0, 0.0], &[1.0, 0.0]), 1.0);
        assert!((Metric::Cosine.distance(&[1.0, 0.0], &[-1.0, 0.0]) - 2.0).abs() < 1e-12);
        assert!((angle(&[1.0, 0.0], &[0.0, 3.0]) - std::f64::consts::FRAC_PI_2).abs() < 1e-9);
    }

    #[test]
    fn jaccard_sets() {
        assert_eq!(jaccard(&[], &[]), 1.0);
        assert_eq!(jaccard(&[1, 2, 3], &[]), 0.0);
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(jaccard(&[1, 2], &[1, 2]), 1.0);
    }
}
