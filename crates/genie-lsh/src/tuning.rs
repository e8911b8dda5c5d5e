//! What every build-time tuner shares (the codebook's [`crate::codebook::tune`] and the LSH
//! families' [`crate::tune`]): the target recall and its check, the held-out sample's size, the
//! exact neighbours of the sample (each one's own row left out), and the goal a sample's recall
//! must reach so that other queries reach the target too.

use crate::error::{LshError, Result};
use crate::metric::{cosine_distance, l1, squared_l2, Metric};
use crate::vectors::VectorSet;
use genie_core::{rank_verified, VerifiedHit};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Recall@10 a build aims at when none is given.
pub const DEFAULT_TARGET: f64 = 0.95;

/// `k` of the recall a build tunes for.
pub const TUNE_K: usize = 10;

/// What a build-time tuning measured on its held-out sample (the codebook's record whole, the LSH
/// families' within theirs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleRecall {
    /// The recall@k asked for.
    pub target: f64,
    /// The recall@k of the stored defaults on the sample.
    pub recall: f64,
    /// `k` of the recall.
    pub k: u32,
    /// Sample queries.
    pub queries: u32,
}

/// An error unless `target` is a recall in `(0, 1]`.
pub fn check_target(target: f64) -> Result<()> {
    if target > 0.0 && target <= 1.0 {
        Ok(())
    } else {
        Err(LshError::InvalidParameter(format!(
            "the target recall must lie in (0, 1], got {target}"
        )))
    }
}

/// Sample queries for `rows` vectors of dimension `dim`: 500, fewer for large data (the exact
/// neighbours cost `queries x rows x dim`), at least 100.
pub fn sample_size(rows: usize, dim: usize) -> usize {
    let work = (rows as f64) * (dim as f64);
    ((2e10 / work.max(1.0)) as usize)
        .clamp(100, 500)
        .min(rows / 2)
}

/// The recall a sample of `queries` queries must reach for recall@`k` `target`. Two allowances,
/// the larger taken (at most 1):
/// - sampling: the sample's recall estimates the queries' with a standard error of
///   `sqrt(t (1 - t) / (queries k))`, so aim one-sided 95% above the target;
/// - queries from outside the data: held-out rows sit where the data is dense, and real queries
///   need not (100,000 word vectors tuned on 500 of their rows to 0.960 gave 0.923 on 500 other,
///   rarer words), so aim to halve the sample's misses: `target + (1 - target) / 2`.
pub fn goal(target: f64, queries: usize, k: usize) -> f64 {
    let margin = 1.645 * (target * (1.0 - target) / (queries.max(1) * k.max(1)) as f64).sqrt();
    let shift = target + (1.0 - target) / 2.0;
    (target + margin).max(shift).min(1.0)
}

/// The exact `k` nearest rows of `vectors` to each sample row by squared L2, its own row left
/// out (distance ascending, then id).
pub fn exact_neighbours(vectors: &VectorSet, ids: &[usize], k: usize) -> Vec<Vec<u32>> {
    exact_neighbours_by(vectors, ids, k, Metric::L2)
}

/// As [`exact_neighbours`], by `metric` (L2 ranked by its square, the same order).
pub fn exact_neighbours_by(
    vectors: &VectorSet,
    ids: &[usize],
    k: usize,
    metric: Metric,
) -> Vec<Vec<u32>> {
    let distance: fn(&[f32], &[f32]) -> f64 = match metric {
        Metric::L2 => squared_l2,
        Metric::L1 => l1,
        Metric::Cosine => cosine_distance,
    };
    exact_neighbours_of(vectors, ids, |p| vectors.row(ids[p]), k, distance)
}

/// The `k` nearest neighbours of the query `query(p)` of each sample row `ids[p]` of `vectors`
/// (the row itself left out), by `distance`.
pub fn exact_neighbours_of<'a>(
    vectors: &VectorSet,
    ids: &[usize],
    query: impl Fn(usize) -> &'a [f32] + Sync,
    k: usize,
    distance: fn(&[f32], &[f32]) -> f64,
) -> Vec<Vec<u32>> {
    ids.par_iter()
        .enumerate()
        .map(|(p, &i)| {
            let q = query(p);
            let all: Vec<VerifiedHit> = vectors
                .rows()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(j, x)| VerifiedHit {
                    id: j as u32,
                    count: 0,
                    distance: distance(q, x),
                })
                .collect();
            top_k(all, k)
        })
        .collect()
}

fn top_k(mut all: Vec<VerifiedHit>, k: usize) -> Vec<u32> {
    if all.len() > k && k > 0 {
        all.select_nth_unstable_by(k - 1, |a, b| {
            a.distance.total_cmp(&b.distance).then(a.id.cmp(&b.id))
        });
        all.truncate(k);
    }
    rank_verified(all, k).into_iter().map(|h| h.id).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn targets_and_goals() {
        for bad in [0.0, -0.5, 1.01, f64::NAN] {
            assert!(check_target(bad).is_err(), "{bad}");
        }
        check_target(1.0).unwrap();
        check_target(0.5).unwrap();
        // 500 queries, k = 10: sampling margin 1.645 sqrt(0.95 0.05 / 5000) = 0.00507, below
        // the half of the misses, 0.025
        assert!((goal(0.95, 500, 10) - 0.975).abs() < 1e-12);
        // one query, k = 1: the sampling margin 1.645 sqrt(0.5 0.5) = 0.82 caps at 1
        assert_eq!(goal(0.5, 1, 1), 1.0);
        // 10 queries, k = 1: 0.6 + 1.645 sqrt(0.24 / 10) = 0.855 above 0.6 + 0.2
        assert!((goal(0.6, 10, 1) - (0.6 + 1.645 * 0.024f64.sqrt())).abs() < 1e-12);
        assert_eq!(goal(1.0, 10, 10), 1.0);
        assert!(goal(0.99, 1, 1) <= 1.0);
    }

    #[test]
    fn neighbours_leave_out_their_own_row() {
        let v = VectorSet::new(1, vec![0.0, 1.0, 3.0, 3.0, 10.0]).unwrap();
        assert_eq!(
            exact_neighbours(&v, &[0, 2], 2),
            vec![vec![1, 2], vec![3, 1]]
        );
        assert_eq!(
            exact_neighbours_by(&v, &[4], 1, Metric::L1),
            exact_neighbours(&v, &[4], 1)
        );
    }
}
