//! Defaults of the LSH families tuned on the data: the width (E2LSH and L1 bucket width `w`, RBH
//! kernel width `sigma`; SRP has none) and the number of candidates re-ranked, chosen at build time
//! for a target recall@10 on a held-out sample of the vectors, as [`crate::codebook::tune`] does
//! for the codebook family (the sample, its exact neighbours and the margin are
//! [`crate::tuning`]'s).
//!
//! **How.** A seeded sample of the rows is held out as queries and their exact neighbours found
//! by the family's measure (each one's own row left out). A true neighbour `x` of a query is in
//! the answer when fewer than `K` other rows come before it in the order of a count search (count
//! descending, then id), since the re-rank by the exact distance then keeps it among the `k`
//! best; a neighbour of count 0 is never a candidate. So the rank of every true neighbour gives
//! the recall of every `K` at once, and the counts give the postings a query visits.
//!
//! - *Width*: widths `w0 * sqrt(2)^i` around the estimate `w0` of [`crate::estimate`] (up to 32
//!   times it or a 32nd) are compared by a descent from `w0`, doubling (or halving) while it gets
//!   cheaper, then a factor `sqrt(2)` either side of the best. Each is hashed only on a
//!   subsample: the sample, its true neighbours and a seeded uniform eighth of the rows (at least
//!   4,000; all rows of a small set). A neighbour's rank in the full data is estimated from the
//!   uniform rows before it, scaled by their share of the data, plus the true neighbours before
//!   it; so are the postings. Cost of a width: the fewest candidates reaching the goal, at
//!   [`CANDIDATE_COST`] postings each, plus its postings per query.
//! - *Candidates*: the data are then hashed at the chosen width (the keywords of the index, built
//!   from them), and the ranks of the sample's neighbours counted exactly, so the recall printed
//!   and stored is the sample's on the index itself: the fewest candidates whose recall@10 reaches
//!   the goal of [`crate::tuning::goal`] (the target with allowances for sampling and for queries
//!   from outside the data; else the target itself,
//!   else the most tried, [`MAX_CANDIDATES`]).
//!
//! A width or candidates given at build are kept and not tuned. The choice depends on the data,
//! the parameters and the seed only (costs are counted, not timed), so a build is reproducible.
//!
//! **The tau-ANN guarantee** (paper section IV-B) is kept. The number of functions `m` is not
//! tuned: it stays the one of Eqn. 9 for `epsilon = delta = 0.06` ([`crate::params`], or the
//! given `--functions`), the smallest `m` from which `Pr[|c/m - s| <= epsilon] >= 1 - delta` for
//! every similarity `s = Pr[h(p) = h(q)]` in `[0, 1]` (Fig. 8): it depends on neither the data nor
//! the width. The width only chooses which similarity the functions estimate: Eqn. 11's
//! `psi_w(||p - q||)` for E2LSH and L1 (Eqn. 12), the Laplacian kernel `exp(-||p - q||_1 / sigma)`
//! for RBH, each strictly decreasing in the distance whatever the width, so nearest by distance is
//! most similar. For the chosen width the count of every point therefore estimates its similarity
//! within `epsilon` (plus the re-hash's `1/D`, Theorem 4.1) with probability `1 - delta`, and
//! Theorem 4.2 makes the top object by count a `2 epsilon`-ANN with probability `1 - 2 delta`.
//! Re-ranking `K >= 1` candidates keeps that: the top object by count is among them, and the
//! answer is at least as close, hence at least as similar. The hash arithmetic is untouched (only
//! its parameters change), so the GPU and the CPU still give the same keywords.

use crate::error::{LshError, Result};
use crate::family::LshParams;
use crate::index::{IndexMetadata, VectorIndex};
use crate::transform::VectorTransform;
use crate::tuning::{check_target, exact_neighbours_by, goal, SampleRecall};
use crate::vectors::VectorSet;
use genie_core::{DeviceChoice, Keyword};
use rayon::prelude::*;
use std::time::Instant;

pub use crate::index::Tuned;
pub use crate::tuning::TUNE_K;
/// The most candidates the tuning gives a search.
pub const MAX_CANDIDATES: u32 = 4096;
/// What one candidate costs in postings visited, per hash function: the Count Priority Queue's
/// hash table grows with `candidates x m` and every candidate is re-ranked. Measured with the CPU
/// backend on Fashion-MNIST (E2LSH, 258 functions, 500 queries): 4.4 ns a posting, 1.7 us a
/// candidate (K from 100 to 4,000), about 1.5 postings per function.
pub const CANDIDATE_COST: f64 = 1.5;
/// Widths tried on either side of the estimate: up to `2^this` times it, or its `2^-this`.
const WIDTH_DOUBLINGS: i32 = 5;
/// The share of the rows the widths are compared on (1 / this).
const WIDTH_ROWS_SHARE: usize = 8;
/// The fewest uniform rows the widths are compared on.
const MIN_WIDTH_ROWS: usize = 4000;
/// Seeds of the sample and of the width search's rows, apart from the functions'.
const SAMPLE_SALT: u64 = 0x15b7_0e5a_3c11;
const ROWS_SALT: u64 = 0x2d4a_91c7_77b3;

/// What a tuned build is asked.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneSpec {
    /// The recall@[`TUNE_K`] aimed at, in `(0, 1]`.
    pub target: f64,
    /// Whether the width of the parameters is kept (given), else tuned from it.
    pub keep_width: bool,
    /// The candidates when given, else tuned.
    pub candidates: Option<u32>,
}

impl TuneSpec {
    /// Whether anything is left to tune for `params`.
    pub fn tunes(&self, params: &LshParams) -> bool {
        self.candidates.is_none() || (params.family.has_width() && !self.keep_width)
    }
}

/// One width compared on the subsample.
#[derive(Clone, Debug, PartialEq)]
pub struct WidthTrial {
    /// The width.
    pub width: f64,
    /// The fewest candidates estimated to reach the goal (the given ones when they do); `None`
    /// when none up to [`MAX_CANDIDATES`] does.
    pub candidates: Option<u32>,
    /// The estimated recall at those candidates (at the given or the most when none reach).
    pub recall: f64,
    /// The estimated postings a query visits in the full index.
    pub postings: f64,
}

impl WidthTrial {
    /// The estimated cost of a query, in postings (infinite when the goal is not reached).
    pub fn cost(&self, functions: u32) -> f64 {
        self.candidates.map_or(f64::INFINITY, |c| {
            self.postings + CANDIDATE_COST * f64::from(functions) * f64::from(c)
        })
    }
}

/// What the tuning chose and measured.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneReport {
    /// The parameters of the index (the chosen width).
    pub params: LshParams,
    /// The default candidates of the index.
    pub candidates: u32,
    /// What the index records.
    pub tuned: Tuned,
    /// The width the search started from (the estimate, or the given width).
    pub start_width: f64,
    /// The widths compared, in the order tried (empty when the width was not tuned).
    pub trials: Vec<WidthTrial>,
    /// The rows the widths were compared on (0 when the width was not tuned).
    pub width_rows: usize,
    /// The postings a sample query visits in the index, on average.
    pub postings: f64,
    /// Seconds spent tuning (exact neighbours, widths, the sample's counts).
    pub seconds: f64,
}

/// Sample queries for `rows` vectors of dimension `dim`: 300, fewer for large data (their exact
/// neighbours cost `queries x rows x dim`), at least 100, at most half the rows.
pub fn sample_size(rows: usize, dim: usize) -> usize {
    let work = (rows as f64) * (dim as f64);
    ((4e9 / work.max(1.0)) as usize)
        .clamp(100, 300)
        .min(rows / 2)
}

/// Builds the index of `vectors` with `params`, tuning what `spec` leaves open (see the module
/// docs); the width of `params` is the given one or the estimate the search starts from. A set
/// too small to hold out a sample (fewer than `2 (k + 1)` rows) is built untuned, with `None`.
pub fn build_tuned(
    vectors: VectorSet,
    params: LshParams,
    spec: &TuneSpec,
    device: DeviceChoice,
    source: Option<String>,
) -> Result<(VectorIndex, Option<TuneReport>)> {
    check_target(spec.target)?;
    if let Some(0) = spec.candidates {
        return Err(LshError::InvalidParameter(
            "the candidates must be at least 1".into(),
        ));
    }
    params.validate()?;
    if vectors.dim() != params.dim as usize {
        return Err(LshError::Dimension {
            expected: params.dim as usize,
            found: vectors.dim(),
        });
    }
    let too_few = vectors.len() < 2 * (TUNE_K + 1);
    if too_few || !spec.tunes(&params) {
        let transform = VectorTransform::new(params)?;
        let keywords = transform.keywords_of_all(&vectors)?;
        let mut meta = IndexMetadata::of(transform.params(), &vectors, source);
        meta.candidates = spec.candidates;
        let index = VectorIndex::from_keywords(vectors, transform, keywords, device, meta)?;
        return Ok((index, None));
    }
    let (report, transform, keywords) = tune(&vectors, params, spec)?;
    let mut meta = IndexMetadata::of(transform.params(), &vectors, source);
    meta.candidates = Some(report.candidates);
    meta.tuned = Some(report.tuned.clone());
    let index = VectorIndex::from_keywords(vectors, transform, keywords, device, meta)?;
    Ok((index, Some(report)))
}

/// Tunes the width and the candidates for `vectors` (at least `2 (k + 1)` rows); also gives the
/// transform of the chosen parameters and the keywords of every row by it.
pub fn tune(
    vectors: &VectorSet,
    params: LshParams,
    spec: &TuneSpec,
) -> Result<(TuneReport, VectorTransform, Vec<Keyword>)> {
    check_target(spec.target)?;
    let start = Instant::now();
    let k = TUNE_K;
    let n = vectors.len();
    let queries = sample_size(n, vectors.dim());
    if queries == 0 || n < 2 * (k + 1) {
        return Err(LshError::InvalidParameter(format!(
            "{n} vectors are too few to tune on a held-out sample"
        )));
    }
    let ids = vectors.sample_ids(queries, params.seed ^ SAMPLE_SALT);
    let truth = exact_neighbours_by(vectors, &ids, k, params.family.metric());
    log::info!(
        "tuning: exact neighbours of {queries} sample vectors in {:.2} s",
        start.elapsed().as_secs_f64()
    );
    let goal = goal(spec.target, queries, k);
    let most = MAX_CANDIDATES.min(n as u32);
    let start_width = params.width;
    let mut trials = Vec::new();
    let mut width_rows = 0;
    let mut params = params;
    if params.family.has_width() && !spec.keep_width {
        let pool = Pool::subsample(vectors, &ids, &truth, params.seed ^ ROWS_SALT)?;
        width_rows = pool.ids.len();
        let chosen = search_width(&pool, &params, spec, goal, most, &mut trials)?;
        log::info!(
            "tuning: {} widths compared on {width_rows} rows in {:.2} s",
            trials.len(),
            start.elapsed().as_secs_f64()
        );
        params.width = chosen;
    }
    let transform = VectorTransform::new(params.clone())?;
    let t = Instant::now();
    let keywords = transform.keywords_of_all(vectors)?;
    let hashing = t.elapsed().as_secs_f64();
    let pool = Pool::everything(n, keywords);
    let ranks = pool.ranks(vectors.len(), &ids, &truth, params.functions as usize)?;
    let (candidates, candidates_tuned) = match spec.candidates {
        Some(c) => (c, false),
        None => {
            let c = ranks
                .fewest(goal, most)
                .or_else(|| ranks.fewest(spec.target, most))
                .unwrap_or(most);
            (c.max(k as u32), true)
        }
    };
    let recall = ranks.recall(candidates);
    let report = TuneReport {
        candidates,
        tuned: Tuned {
            sample: SampleRecall {
                target: spec.target,
                recall,
                k: k as u32,
                queries: queries as u32,
            },
            width_tuned: !trials.is_empty(),
            candidates_tuned,
            reached: recall >= spec.target,
        },
        start_width,
        trials,
        width_rows,
        postings: ranks.postings,
        seconds: start.elapsed().as_secs_f64() - hashing,
        params,
    };
    Ok((report, transform, pool.keywords))
}

/// Compares widths by a descent from `params.width` and gives the cheapest (the best recall when
/// none reaches the goal).
fn search_width(
    pool: &Pool,
    params: &LshParams,
    spec: &TuneSpec,
    goal: f64,
    most: u32,
    trials: &mut Vec<WidthTrial>,
) -> Result<f64> {
    let m = params.functions;
    let better = |a: &WidthTrial, b: &WidthTrial| match (a.candidates, b.candidates) {
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (Some(_), Some(_)) => a.cost(m) < b.cost(m),
        (None, None) => a.recall > b.recall,
    };
    let mut eval = |step: i32| -> Result<WidthTrial> {
        let width = params.width * std::f64::consts::SQRT_2.powi(step);
        let p = LshParams {
            width,
            ..params.clone()
        };
        let transform = VectorTransform::new(p)?;
        let hashed = pool.hashed(&transform)?;
        let ranks = hashed.ranks(pool.rows, &pool.queries, &pool.truth, m as usize)?;
        let trial = match spec.candidates {
            Some(c) => {
                let recall = ranks.recall(c);
                WidthTrial {
                    width,
                    candidates: (recall >= goal).then_some(c),
                    recall,
                    postings: ranks.postings,
                }
            }
            None => {
                let c = ranks.fewest(goal, most).map(|c| c.max(TUNE_K as u32));
                WidthTrial {
                    width,
                    candidates: c,
                    recall: ranks.recall(c.unwrap_or(most)),
                    postings: ranks.postings,
                }
            }
        };
        log::debug!("tuning: {trial:?}");
        trials.push(trial.clone());
        Ok(trial)
    };
    // in half steps (sqrt 2) from the start: doublings while they get cheaper, up first, else
    // down; then a half step either side of the best
    let mut best = (0, eval(0)?);
    for dir in [2i32, -2] {
        let mut step = dir;
        while step.abs() <= 2 * WIDTH_DOUBLINGS {
            let t = eval(step)?;
            if !better(&t, &best.1) {
                break;
            }
            best = (step, t);
            step += dir;
        }
        if best.0 != 0 {
            break;
        }
    }
    let centre = best.0;
    for step in [centre + 1, centre - 1] {
        if step.abs() > 2 * WIDTH_DOUBLINGS {
            continue;
        }
        let t = eval(step)?;
        if better(&t, &best.1) {
            best = (step, t);
        }
    }
    Ok(best.1.width)
}

/// Rows hashed for the tuning: every row, or the width search's subsample.
struct Pool {
    /// The rows (ascending ids), and for the subsample the vectors of those rows.
    ids: Vec<usize>,
    vectors: Option<VectorSet>,
    /// Whether each row is one of the uniform draw (its share of the other rows scales ranks).
    uniform: Vec<bool>,
    /// `ids.len() x m` keywords, when hashed.
    keywords: Vec<Keyword>,
    /// Rows of the whole data.
    rows: usize,
    /// The sample and its true neighbours (for the subsample).
    queries: Vec<usize>,
    truth: Vec<Vec<u32>>,
}

/// The ranks of the sample's true neighbours in a count search, and the postings of the queries.
struct Ranks {
    /// Every true neighbour's (estimated) number of rows before it; infinite at count 0.
    sorted: Vec<f64>,
    /// Average postings a query visits.
    postings: f64,
}

impl Ranks {
    /// Recall@k with `c` candidates: the share of true neighbours with fewer than `c` rows before.
    fn recall(&self, c: u32) -> f64 {
        if self.sorted.is_empty() {
            return 1.0;
        }
        let found = self.sorted.partition_point(|&r| r < f64::from(c));
        found as f64 / self.sorted.len() as f64
    }

    /// The fewest candidates (at most `most`) whose recall reaches `goal`.
    fn fewest(&self, goal: f64, most: u32) -> Option<u32> {
        let total = self.sorted.len();
        let need = ((goal * total as f64) - 1e-9).ceil().max(0.0) as usize;
        if need == 0 {
            return Some(1);
        }
        let r = *self.sorted.get(need - 1)?;
        // found with c candidates when r < c
        let c = r.floor() + 1.0;
        (c.is_finite() && c <= f64::from(most)).then_some(c as u32)
    }
}

impl Pool {
    /// All `n` rows, hashed into `keywords`.
    fn everything(n: usize, keywords: Vec<Keyword>) -> Self {
        Self {
            ids: (0..n).collect(),
            vectors: None,
            uniform: vec![true; n],
            keywords,
            rows: n,
            queries: Vec::new(),
            truth: Vec::new(),
        }
    }

    /// The width search's rows: the sample, its true neighbours and a uniform draw of the rest.
    fn subsample(
        vectors: &VectorSet,
        queries: &[usize],
        truth: &[Vec<u32>],
        seed: u64,
    ) -> Result<Self> {
        let n = vectors.len();
        let draw = (n / WIDTH_ROWS_SHARE).max(MIN_WIDTH_ROWS);
        let uniform_ids = vectors.sample_ids(draw, seed);
        let mut ids: Vec<usize> = uniform_ids.clone();
        ids.extend_from_slice(queries);
        ids.extend(truth.iter().flatten().map(|&x| x as usize));
        ids.sort_unstable();
        ids.dedup();
        let uniform = ids
            .iter()
            .map(|i| uniform_ids.binary_search(i).is_ok())
            .collect();
        Ok(Self {
            vectors: Some(vectors.select(&ids)?),
            ids,
            uniform,
            keywords: Vec::new(),
            rows: n,
            queries: queries.to_vec(),
            truth: truth.to_vec(),
        })
    }

    /// This pool's rows hashed by `transform`.
    fn hashed(&self, transform: &VectorTransform) -> Result<Self> {
        let vectors = self.vectors.as_ref().ok_or_else(|| {
            LshError::InvalidParameter("a tuning pool without its vectors".into())
        })?;
        Ok(Self {
            ids: self.ids.clone(),
            vectors: None,
            uniform: self.uniform.clone(),
            keywords: transform.keywords_of_all(vectors)?,
            rows: self.rows,
            queries: Vec::new(),
            truth: Vec::new(),
        })
    }

    fn position(&self, id: usize) -> Result<usize> {
        self.ids
            .binary_search(&id)
            .map_err(|_| LshError::InvalidParameter(format!("row {id} is not in the pool")))
    }

    /// The ranks of the `truth` of each query row in `queries` among the other rows of a count
    /// search of the `rows` rows of the data, estimated from this pool (exact when it holds every
    /// row); the query's own row is left out, as if held out.
    fn ranks(&self, rows: usize, queries: &[usize], truth: &[Vec<u32>], m: usize) -> Result<Ranks> {
        let positions = queries
            .iter()
            .zip(truth)
            .map(|(&q, t)| {
                let nn = t
                    .iter()
                    .map(|&x| Ok((x, self.position(x as usize)?)))
                    .collect::<Result<Vec<_>>>()?;
                Ok((self.position(q)?, nn))
            })
            .collect::<Result<Vec<_>>>()?;
        let per_query: Vec<(Vec<f64>, f64)> = positions
            .par_iter()
            .map(|(qpos, nn)| self.query_ranks(rows, *qpos, nn, m))
            .collect();
        let mut sorted: Vec<f64> = per_query.iter().flat_map(|r| r.0.clone()).collect();
        sorted.sort_by(f64::total_cmp);
        let postings = per_query.iter().map(|r| r.1).sum::<f64>() / queries.len().max(1) as f64;
        Ok(Ranks { sorted, postings })
    }

    /// One query's ranks of its neighbours `nn` (ids and pool positions) and postings.
    fn query_ranks(
        &self,
        rows: usize,
        qpos: usize,
        nn: &[(u32, usize)],
        m: usize,
    ) -> (Vec<f64>, f64) {
        let kq = &self.keywords[qpos * m..(qpos + 1) * m];
        let counts: Vec<u32> = self
            .keywords
            .chunks_exact(m)
            .map(|row| row.iter().zip(kq).filter(|(a, b)| a == b).count() as u32)
            .collect();
        let is_nn = |p: usize| nn.iter().any(|&(_, np)| np == p);
        // the uniform rows other than the query and its neighbours, and their share of the data
        let mut before = vec![0usize; nn.len()];
        let (mut others, mut collisions) = (0usize, 0u64);
        for (p, &c) in counts.iter().enumerate() {
            if !self.uniform[p] || p == qpos || is_nn(p) {
                continue;
            }
            others += 1;
            collisions += u64::from(c);
            let id = self.ids[p];
            for (b, &(x, xp)) in before.iter_mut().zip(nn) {
                let cx = counts[xp];
                *b += usize::from(c > cx || (c == cx && id < x as usize));
            }
        }
        let rest = rows.saturating_sub(1 + nn.len());
        let scale = if others == 0 {
            0.0
        } else {
            rest as f64 / others as f64
        };
        let mut nn_collisions = 0u64;
        let ranks = nn
            .iter()
            .zip(&before)
            .map(|(&(x, xp), &b)| {
                let cx = counts[xp];
                nn_collisions += u64::from(cx);
                if cx == 0 {
                    return f64::INFINITY;
                }
                let ahead = nn
                    .iter()
                    .filter(|&&(y, yp)| {
                        let cy = counts[yp];
                        y != x && (cy > cx || (cy == cx && y < x))
                    })
                    .count();
                ahead as f64 + b as f64 * scale
            })
            .collect();
        let postings = collisions as f64 * scale + nn_collisions as f64;
        (ranks, postings)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ranks_give_recall_and_fewest_candidates() {
        let r = Ranks {
            sorted: vec![0.0, 0.0, 1.5, 3.0, f64::INFINITY],
            postings: 0.0,
        };
        assert_eq!(r.recall(1), 0.4);
        assert_eq!(r.recall(2), 0.6);
        assert_eq!(r.recall(4), 0.8);
        assert_eq!(r.recall(u32::MAX), 0.8);
        assert_eq!(r.fewest(0.4, 100), Some(1));
        assert_eq!(r.fewest(0.6, 100), Some(2));
        assert_eq!(r.fewest(0.8, 100), Some(4));
        assert_eq!(r.fewest(0.8, 3), None);
        assert_eq!(r.fewest(0.9, 100), None);
        assert_eq!(r.fewest(0.0, 100), Some(1));
    }

    #[test]
    fn sample_sizes() {
        assert_eq!(sample_size(60_000, 784), 100);
        assert_eq!(sample_size(8000, 24), 300);
        assert_eq!(sample_size(40, 4), 20);
    }
}
