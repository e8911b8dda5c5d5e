//! Parameters estimated from a sample of the data, so that an index needs no tuning: the number of
//! functions from `epsilon = delta = 0.06` by Eqn. 9 (paper section IV-B2), the kernel width
//! `sigma` of random binning as the mean pairwise L1 distance of a sample (paper section VI-D1,
//! after Jaakkola et al.), and the E2LSH / L1 bucket width `w` as a multiple of the typical
//! nearest-neighbour distance in a sample, the scale at which Eqn. 11 must separate near points
//! from far ones.

use crate::error::{LshError, Result};
use crate::family::{Family, LshParams};
use crate::metric::Metric;
use crate::params::default_functions;
use crate::vectors::VectorSet;
use rayon::prelude::*;

/// Rows drawn for the estimates.
pub const SAMPLE_ROWS: usize = 1000;

/// `w` for E2LSH and L1 as a multiple of the median nearest-neighbour distance in a sample of
/// [`SAMPLE_ROWS`] rows (chosen on Fashion-MNIST; see examples/ann.rs).
pub const WIDTH_PER_NN: f64 = 2.0;

/// The mean distance over all pairs of `sample` (0 with fewer than two rows).
pub fn mean_pairwise(sample: &VectorSet, metric: Metric) -> f64 {
    let n = sample.len();
    if n < 2 {
        return 0.0;
    }
    let total: f64 = (0..n)
        .into_par_iter()
        .map(|i| {
            (i + 1..n)
                .map(|j| metric.distance(sample.row(i), sample.row(j)))
                .sum::<f64>()
        })
        .sum();
    total / (n * (n - 1) / 2) as f64
}

/// The median over the rows of `sample` of the distance to their nearest other row, ignoring
/// exact duplicates (0 with fewer than two distinct rows).
pub fn median_nn_distance(sample: &VectorSet, metric: Metric) -> f64 {
    let n = sample.len();
    let mut nn: Vec<f64> = (0..n)
        .into_par_iter()
        .filter_map(|i| {
            (0..n)
                .filter(|&j| j != i)
                .map(|j| metric.distance(sample.row(i), sample.row(j)))
                .filter(|&d| d > 0.0)
                .min_by(f64::total_cmp)
        })
        .collect();
    if nn.is_empty() {
        return 0.0;
    }
    nn.sort_by(f64::total_cmp);
    nn[nn.len() / 2]
}

/// The default width of `family` for `vectors`: `w` for E2LSH and L1, `sigma` for RBH, 0 for SRP.
pub fn default_width(vectors: &VectorSet, family: Family, seed: u64) -> Result<f64> {
    if !family.has_width() {
        return Ok(0.0);
    }
    let sample = vectors.sample(SAMPLE_ROWS, seed ^ 0x5eed_5a3b_1e00);
    let width = match family {
        Family::Rbh => mean_pairwise(&sample, Metric::L1),
        _ => WIDTH_PER_NN * median_nn_distance(&sample, family.metric()),
    };
    if width.is_finite() && width > 0.0 {
        Ok(width)
    } else {
        Err(LshError::InvalidParameter(format!(
            "cannot estimate the width of {} from {} vectors (need at least two distinct finite \
             vectors); give it explicitly",
            family.name(),
            vectors.len()
        )))
    }
}

/// Default parameters of `family` for `vectors`: [`default_functions`] functions, the default
/// buckets and bits, and the width of [`default_width`].
pub fn estimate(vectors: &VectorSet, family: Family, seed: u64) -> Result<LshParams> {
    let width = default_width(vectors, family, seed)?;
    Ok(LshParams::new(
        family,
        vectors.dim(),
        default_functions(),
        width,
        seed,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sample_statistics() {
        let s = VectorSet::new(1, vec![0.0, 1.0, 3.0, 3.0]).unwrap();
        // pairs: 1, 3, 3, 2, 2, 0 -> 11 / 6
        assert!((mean_pairwise(&s, Metric::L1) - 11.0 / 6.0).abs() < 1e-12);
        // nearest distinct: 0->1, 1->1, 3->2, 3->2 -> sorted 1 1 2 2, median index 2
        assert_eq!(median_nn_distance(&s, Metric::L1), 2.0);
        assert_eq!(mean_pairwise(&s.head(1), Metric::L1), 0.0);
        let same = VectorSet::new(2, vec![1.0; 6]).unwrap();
        assert!(default_width(&same, Family::E2lsh, 0).is_err());
        assert_eq!(default_width(&same, Family::Srp, 0).unwrap(), 0.0);
        let p = estimate(&s, Family::Rbh, 0).unwrap();
        assert!((p.width - 11.0 / 6.0).abs() < 1e-12);
        p.validate().unwrap();
    }
}
