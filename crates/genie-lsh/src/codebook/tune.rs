//! Defaults tuned on the data: a sample of the indexed vectors is held out as queries, their exact
//! neighbours found by brute force (each one's own row left out), and the cheapest probe whose
//! recall@k on the sample reaches the goal (the target with allowances for the sample's size and
//! for queries from outside the data) is chosen, else the cheapest that reaches the target itself.
//! The sample, its exact neighbours and the goal are [`crate::tuning`]'s, shared with the LSH
//! families' tuner.
//!
//! Each number of probes is tried with closeness weights ([`super::weights`]) and with the nearest
//! codewords weighted by rank, fewest first.
//!
//! One count search per (probes, entries) pair at the most candidates gives the recall of every
//! smaller number of candidates too (a prefix of the same contract order). On the CPU the cost of a
//! probe is the measured time of the pair's count with the re-rank scaled to its candidates; on a
//! GPU (an index whose scan and probes run there) it is the measured time of the whole search of a
//! batch that fills the device (the sample repeated), since the device's costs differ from the
//! CPU's: there a probe of more cells and fewer candidates is often the cheaper one.

use super::index::{CodebookIndex, Counting, Tuned};
use super::weights::LEVELS;
use super::{Probe, CODES};
use crate::error::Result;
use crate::metric::squared_l2;
use crate::tuning::goal;
pub use crate::tuning::{exact_neighbours, sample_size, DEFAULT_TARGET};
use crate::vectors::VectorSet;
use genie_core::{rank_verified, VerifiedHit};
use rayon::prelude::*;

/// Numbers of probed cells tried (up to 512: 240,000 word vectors in 980 cells reach the goal at
/// 256, 128 giving 0.95 on held-out rows and 0.948 on other words).
const PROBES: [u32; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/// Codewords per slice tried.
const ENTRIES: [u32; 7] = [2, 4, 8, 16, 32, 64, 128];
/// Most keyword items of one query tried (probes x entries x subspaces).
const MAX_ITEMS: u64 = 8192;
/// Queries of a timed search on a GPU (the sample repeated).
const GPU_BATCH: usize = 8192;
/// Candidates tried (at least `k`).
const CANDIDATES: [u32; 8] = [10, 20, 50, 100, 200, 500, 1000, 2000];

/// What the tuning found.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneReport {
    /// The chosen probe.
    pub probe: Probe,
    /// What the metadata records.
    pub tuned: Tuned,
    /// Every (probe, recall, estimated ms per query) tried, for the log.
    pub tried: Vec<(Probe, f64, f64)>,
    /// Whether the target was reached (if not, the probe of the best recall is chosen).
    pub reached: bool,
}

/// Tunes `index` for recall@`k` at least `target`, on a sample of its vectors drawn with `seed`.
/// The index must hold its float vectors; see [`tune_with`].
pub fn tune(index: &CodebookIndex, k: usize, target: f64, seed: u64) -> Result<TuneReport> {
    let vectors = index.vectors().cloned().ok_or_else(|| {
        crate::error::LshError::InvalidParameter(
            "tuning needs the float vectors: the index re-ranks from a compact copy".into(),
        )
    })?;
    tune_with(index, &vectors, k, target, seed)
}

/// [`tune`] with the exact neighbours taken in `vectors` (the index's own, as floats), while the
/// index re-ranks as it is built to, from a compact copy too: the recall measured is the one its
/// searches will have.
pub fn tune_with(
    index: &CodebookIndex,
    vectors: &VectorSet,
    k: usize,
    target: f64,
    seed: u64,
) -> Result<TuneReport> {
    let n = sample_size(vectors.len(), vectors.dim());
    let ids = vectors.sample_ids(n, seed ^ 0x07e5_75e7);
    // the sample rows as a user's queries would come (an inner-product index's without the
    // coordinate its reduction adds), and their exact neighbours in the index's metric
    let space = index.space();
    let dim = space.user_dim(vectors.dim());
    let mut queries = VectorSet::empty(vectors.dim())?;
    for &i in &ids {
        queries.push(&space.query(&vectors.row(i)[..dim]).0)?;
    }
    let t = std::time::Instant::now();
    let truth = crate::tuning::exact_neighbours_of(
        vectors,
        &ids,
        |j| queries.row(j),
        k,
        crate::metric::squared_l2,
    );
    log::info!(
        "tuning: exact neighbours of {n} sample vectors in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let t = std::time::Instant::now();
    let cells = index.codebook().params().cells;
    let most = CANDIDATES
        .iter()
        .copied()
        .filter(|&c| c as usize >= k)
        .max()
        .unwrap_or(k as u32)
        .min(vectors.len() as u32);
    // aim above the target, so that other queries reach it too
    let goal = goal(target, n, k);
    let mut tried = Vec::new();
    let mut best: Option<(Probe, f64, f64)> = None;
    let mut best_at_target: Option<(Probe, f64, f64)> = None;
    let mut best_recall: Option<(Probe, f64, f64)> = None;
    let mut extra_levels = 1;
    let subspaces = u64::from(index.codebook().params().subspaces);
    let per = n.max(1) as f64;
    let mut rerank_ms: Option<f64> = None;
    // on a GPU the cost of a probe is its measured search of a batch that fills the device
    let timing = if index.scans_on_gpu() && index.plans_on_gpu() {
        let reps: Vec<usize> = (0..GPU_BATCH.max(n)).map(|i| i % n.max(1)).collect();
        Some(queries.select(&reps)?)
    } else {
        None
    };
    for &probes in PROBES.iter().filter(|&&p| p <= cells.max(1)) {
        let mut reached_here = false;
        // closeness weights first, then the nearest codewords by rank, fewest first
        let weightings =
            std::iter::once((CODES as u32, LEVELS)).chain(ENTRIES.iter().map(|&e| (e, 0)));
        for (entries, levels) in weightings {
            let probe = Probe {
                probes,
                entries,
                candidates: most,
                weighted: true,
                levels,
            };
            if levels == 0 && u64::from(probes) * u64::from(entries) * subspaces > MAX_ITEMS {
                break;
            }
            // one more candidate: a sample row finds itself, which is left out
            let t = std::time::Instant::now();
            let counted =
                index.search_counts(&queries, most as usize + 1, &probe, Counting::Scan)?;
            let count_ms = t.elapsed().as_secs_f64() * 1e3 / per;
            let rerank_ms = match rerank_ms {
                Some(ms) => ms,
                None => {
                    index.take_stages();
                    index.search(&queries, k + 1, &probe)?;
                    let ms = index.take_stages().rerank_ms / per;
                    *rerank_ms.insert(ms)
                }
            };
            for &c in CANDIDATES.iter().filter(|&&c| c as usize >= k && c <= most) {
                let recall = recall_at(index, &queries, &ids, &counted, &truth, c as usize, k)?;
                let p = Probe {
                    candidates: c,
                    ..probe
                };
                // only a probe that reaches the target can be chosen for its cost
                let cost = match &timing {
                    Some(batch) if recall >= target => search_ms(index, batch, k, &p)?,
                    _ => count_ms + rerank_ms * f64::from(c) / f64::from(most),
                };
                tried.push((p, recall, cost));
                if recall >= goal && best.as_ref().is_none_or(|b| cost < b.2) {
                    best = Some((p, recall, cost));
                }
                if recall >= target && best_at_target.as_ref().is_none_or(|b| cost < b.2) {
                    best_at_target = Some((p, recall, cost));
                }
                if best_recall
                    .as_ref()
                    .is_none_or(|b| recall > b.1 || (recall == b.1 && cost < b.2))
                {
                    best_recall = Some((p, recall, cost));
                }
                reached_here |= recall >= goal;
            }
            if reached_here && levels == 0 {
                break;
            }
        }
        if best.is_some() {
            if extra_levels == 0 {
                break;
            }
            extra_levels -= 1;
        }
    }
    log::info!(
        "tuning: {} probes tried in {:.2} s, costed by {}",
        tried.len(),
        t.elapsed().as_secs_f64(),
        if timing.is_some() {
            "their searches on the GPU"
        } else {
            "their count and re-rank times on the CPU"
        }
    );
    let best = best.or(best_at_target);
    let reached = best.is_some();
    let (probe, recall, _) = best.or(best_recall).unwrap_or((Probe::default(), 0.0, 0.0));
    Ok(TuneReport {
        probe,
        tuned: Tuned {
            target,
            recall,
            k: k as u32,
            queries: n as u32,
        },
        tried,
        reached,
    })
}

/// Milliseconds per query of searching `batch` with `probe` (the least of three after a warm-up).
fn search_ms(index: &CodebookIndex, batch: &VectorSet, k: usize, probe: &Probe) -> Result<f64> {
    index.search(batch, k, probe)?;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        index.search(batch, k, probe)?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    index.take_stages();
    Ok(best / batch.len().max(1) as f64)
}

/// Recall@k of the first `c` candidates of `counted` re-ranked exactly (each query's own row left
/// out).
fn recall_at(
    index: &CodebookIndex,
    queries: &VectorSet,
    ids: &[usize],
    counted: &[Vec<genie_core::Hit>],
    truth: &[Vec<u32>],
    c: usize,
    k: usize,
) -> Result<f64> {
    let store = index.store();
    let floats = store.floats();
    let found: usize = counted
        .par_iter()
        .zip(queries.as_slice().par_chunks_exact(queries.dim()))
        .zip(ids.par_iter().zip(truth))
        .map(|((hits, q), (&own, want))| {
            let mut row = vec![0f32; q.len()];
            let verified: Vec<VerifiedHit> = hits
                .iter()
                .filter(|h| h.id as usize != own)
                .take(c)
                .map(|h| VerifiedHit {
                    id: h.id,
                    count: h.count,
                    distance: match floats {
                        Some(v) => squared_l2(q, v.row(h.id as usize)),
                        None => match store.row_into(h.id as usize, &mut row) {
                            Some(()) => squared_l2(q, &row),
                            None => f64::INFINITY,
                        },
                    },
                })
                .collect();
            rank_verified(verified, k)
                .iter()
                .filter(|h| want.contains(&h.id))
                .count()
        })
        .sum();
    let total: usize = truth.iter().map(Vec::len).sum();
    Ok(if total == 0 {
        1.0
    } else {
        found as f64 / total as f64
    })
}
