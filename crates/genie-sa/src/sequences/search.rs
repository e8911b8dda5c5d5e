//! Sequence similarity search end to end (paper section V-A): the index returns the top-K
//! candidates by match count, [`mod@super::verify`] ranks them by edit distance and tells whether the
//! top-k is proven exact (Theorem 5.2); optionally the queries that are not proven are searched
//! again with K doubled until they are or K reaches a cap (the paper's "repeat the search process
//! with larger K", section VI-D3). With [`SequenceSearchParams::exhaustive`], a query still not
//! proven after the last round gets one more: all objects of count 1 or more, by a count table,
//! then the objects of count 0; Algorithm 2 over this whole contract order is exact by
//! construction, and its count and length filters keep the scan short.

use crate::error::{Result, SaError};
use crate::sequences::device::DeviceSequences;
use crate::sequences::store::SequenceStore;
use crate::sequences::transform::{SequenceQuery, SequenceTransform};
use crate::sequences::verify::{verify, verify_by, zero_count_tail, Outside, SequenceHit};
use crate::string_table::StringTable;
use genie_core::{Engine, Hit, InvertedIndex, Method, SearchParams, Transform};
use rayon::prelude::*;
use std::time::Instant;

/// The default number of candidates K taken from the index per query (the paper's setting).
pub const DEFAULT_CANDIDATES: u32 = 32;

/// The default cap of K when unproven queries are repeated with K doubled. With K = 32 alone,
/// about 1.5% of the queries made from an English word list by changing 20% of the letters miss
/// their true nearest word; repeating the unproven ones (about 15%) up to K = 1024 finds it for
/// all of them in our measurements (see the `sequences` example).
pub const DEFAULT_MAX_CANDIDATES: u32 = 1024;

/// Parameters of a sequence search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceSearchParams {
    /// Hits per query (k).
    pub k: u32,
    /// Candidates per query in the first round (K; raised to k when smaller).
    pub candidates: u32,
    /// Largest K of the repeated rounds; no repetition when not above `candidates`.
    pub max_candidates: u32,
    /// Whether queries still unproven after the last round are verified against all objects.
    pub exhaustive: bool,
}

impl SequenceSearchParams {
    /// Top-`k` with K = 32 candidates, repeating unproven queries with K doubled up to 1024.
    pub fn top_k(k: u32) -> Self {
        Self {
            k,
            candidates: DEFAULT_CANDIDATES,
            max_candidates: DEFAULT_MAX_CANDIDATES,
            exhaustive: false,
        }
    }

    /// Verifies queries still unproven after the last round against all objects, so every
    /// result is exact.
    pub fn exhaustive(mut self) -> Self {
        self.exhaustive = true;
        self
    }

    /// One round of K candidates only (the paper's Table VI setting).
    pub fn single_round(mut self) -> Self {
        self.max_candidates = self.candidates;
        self
    }

    /// The same with `candidates` candidates in the first round.
    pub fn with_candidates(mut self, candidates: u32) -> Self {
        self.candidates = candidates;
        self
    }

    /// Repeats unproven queries with K doubled up to `cap`.
    pub fn repeat_until(mut self, cap: u32) -> Self {
        self.max_candidates = cap;
        self
    }
}

/// The result of one query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceResult {
    /// Up to k hits: edit distance ascending, then count descending, then id ascending.
    pub hits: Vec<SequenceHit>,
    /// Whether the hits are proven to be the exact top-k (Theorem 5.2).
    pub exact: bool,
    /// K of the last round.
    pub candidates: u32,
    /// Rounds run (1 without repetition).
    pub rounds: u32,
    /// Edit distances computed in the last round.
    pub verified: usize,
}

/// Where the time of sequence searches went (milliseconds, summed over searches).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SequenceStages {
    /// The match counts and the top-K candidates by count (the engine, every round).
    pub count_ms: f64,
    /// Edit distances of the candidates, Algorithm 2 and the certificate (every round).
    pub verify_ms: f64,
    /// The exhaustive last round (count table and verification), where asked.
    pub exhaustive_ms: f64,
    /// Rounds of K-doubling (the most of any search).
    pub rounds: u32,
    /// Query searches over all rounds (a query repeated counts again).
    pub query_rounds: u64,
    /// Edit distances computed.
    pub verified: u64,
}

impl SequenceStages {
    /// Adds `other` to these.
    pub fn add(&mut self, other: &Self) {
        self.count_ms += other.count_ms;
        self.verify_ms += other.verify_ms;
        self.exhaustive_ms += other.exhaustive_ms;
        self.rounds = self.rounds.max(other.rounds);
        self.query_rounds += other.query_rounds;
        self.verified += other.verified;
    }
}

/// An index of sequences, its transform and the sequences, searched through `&self`.
#[derive(Debug)]
pub struct SequenceSearcher<'a> {
    engine: &'a Engine,
    transform: &'a SequenceTransform,
    store: &'a SequenceStore,
    device: Option<&'a DeviceSequences>,
    count_once: bool,
}

/// Queries of more symbols than this have their candidates' distances computed on the device
/// (when the searcher has one): a query of one 64-bit word costs the cores less than the
/// transfers (on an H200 with 16 cores, 663k words: 23 ms on the cores for 1.9 M distances, 39
/// ms through the device; reads of 200-300 letters: 281 ms on the cores, 21 ms on the device).
pub const DEVICE_VERIFY_MIN: usize = 64;

/// The largest K [`SequenceSearcher::count_once`] fetches at once (beyond it, rounds count again).
pub const COUNT_ONCE_MAX: u32 = 4096;

/// Builds the transform and the inverted index of `sequences` (ids in table order).
pub fn build_sequence_index(
    config: crate::NGramConfig,
    sequences: &StringTable,
) -> Result<(SequenceTransform, InvertedIndex)> {
    let transform = SequenceTransform::build(config, sequences.iter())?;
    let mut builder = transform.builder();
    let mut keywords = Vec::new();
    for seq in sequences.iter() {
        keywords.clear();
        transform.keywords(seq, &mut keywords)?;
        builder.push_object(&keywords)?;
    }
    Ok((transform, builder.build()?))
}

impl<'a> SequenceSearcher<'a> {
    /// A searcher; the engine's index, the transform and the store must describe the same
    /// sequences.
    pub fn new(
        engine: &'a Engine,
        transform: &'a SequenceTransform,
        store: &'a SequenceStore,
    ) -> Result<Self> {
        let objects = engine.index().num_objects() as usize;
        if objects != store.len() {
            return Err(SaError::InvalidParameter(format!(
                "the index has {objects} objects but the store {} sequences",
                store.len()
            )));
        }
        if engine.index().keyword_space() > transform.keyword_space() {
            return Err(SaError::InvalidParameter(
                "the index was built with another n-gram dictionary".into(),
            ));
        }
        Ok(Self {
            engine,
            transform,
            store,
            device: None,
            count_once: false,
        })
    }

    /// Counts each query once, at the largest K of the rounds (at most [`COUNT_ONCE_MAX`]), and
    /// takes each round's candidates as a prefix of that list: the contract order (count
    /// descending, then id) makes a top-K the prefix of every larger top-K', so the answers are
    /// the rounds' exactly. The better choice where a count costs far more than a larger K (the
    /// CPU backend); on a GPU a round of the few unproven queries is cheaper.
    pub fn count_once(mut self, yes: bool) -> Self {
        self.count_once = yes;
        self
    }

    /// Computes edit distances on `device` (the same sequences on a GPU, by the same algorithm):
    /// every round's candidates', and in the exhaustive pass every unproven query's objects
    /// within its exact k-th distance, ranked by the same order; so the answers are the CPU's.
    /// Queries the device cannot take stay on the CPU.
    pub fn with_device(mut self, device: Option<&'a DeviceSequences>) -> Self {
        self.device = device;
        self
    }

    /// The largest K of the rounds when the user sets none: [`DEFAULT_MAX_CANDIDATES`], but
    /// only the first round's `candidates` for an exhaustive search with a device, whose pass
    /// over all sequences costs less than the counts of the rounds it would spare (on an H200,
    /// 663k words, 2,000 queries at k = 10: six rounds counted for 71 ms and proved 130 top-10s).
    pub fn default_max_candidates(&self, candidates: u32, exhaustive: bool) -> u32 {
        if exhaustive && self.device.is_some() {
            candidates
        } else {
            DEFAULT_MAX_CANDIDATES
        }
    }

    /// Prepares query sequences (see [`SequenceTransform::prepare`]).
    pub fn prepare(&self, queries: &[&[u8]]) -> Result<Vec<SequenceQuery>> {
        queries
            .par_iter()
            .map(|q| self.transform.prepare(q))
            .collect()
    }

    /// Searches raw query sequences.
    pub fn search(
        &self,
        queries: &[&[u8]],
        params: &SequenceSearchParams,
    ) -> Result<Vec<SequenceResult>> {
        self.search_prepared(&self.prepare(queries)?, params)
    }

    /// Searches prepared queries: per query the verified top-k and whether it is exact.
    pub fn search_prepared(
        &self,
        queries: &[SequenceQuery],
        params: &SequenceSearchParams,
    ) -> Result<Vec<SequenceResult>> {
        self.search_staged(queries, params, &mut SequenceStages::default())
    }

    /// [`SequenceSearcher::search_prepared`], adding where the time went to `stages`.
    pub fn search_staged(
        &self,
        queries: &[SequenceQuery],
        params: &SequenceSearchParams,
        stages: &mut SequenceStages,
    ) -> Result<Vec<SequenceResult>> {
        let k = params.k as usize;
        let cap = params.max_candidates.max(params.candidates).max(params.k);
        let mut big_k = params.candidates.max(params.k);
        let mut results: Vec<Option<SequenceResult>> = vec![None; queries.len()];
        let mut pending: Vec<usize> = (0..queries.len()).collect();
        let mut round = 1;
        // every query's top-`cap` at once, when counting once
        let mut all: Option<Vec<Vec<Hit>>> = None;
        if self.count_once && cap > big_k && cap <= COUNT_ONCE_MAX && !queries.is_empty() {
            let t = Instant::now();
            let batch: Vec<_> = queries.iter().map(|q| q.query.clone()).collect();
            all = Some(self.engine.search(&batch, &SearchParams::top_k(cap))?);
            stages.count_ms += ms_since(t);
            stages.query_rounds += queries.len() as u64;
        }
        while !pending.is_empty() {
            let t = Instant::now();
            let hits = match &all {
                Some(all) => pending
                    .iter()
                    .map(|&q| all[q][..all[q].len().min(big_k as usize)].to_vec())
                    .collect(),
                None => {
                    let batch: Vec<_> = pending.iter().map(|&q| queries[q].query.clone()).collect();
                    stages.query_rounds += pending.len() as u64;
                    self.engine.search(&batch, &SearchParams::top_k(big_k))?
                }
            };
            stages.count_ms += ms_since(t);
            stages.rounds = stages.rounds.max(round);
            let t = Instant::now();
            let num_objects = self.engine.index().num_objects();
            // the candidates' distances of the longer queries on the device, where there is one
            let mut on_device: Vec<Option<Vec<u32>>> = vec![None; pending.len()];
            if let Some(device) = self.device {
                let long: Vec<usize> = (0..pending.len())
                    .filter(|&i| queries[pending[i]].symbols.len() > DEVICE_VERIFY_MIN)
                    .collect();
                if !long.is_empty() {
                    let ids: Vec<Vec<u32>> = long
                        .iter()
                        .map(|&i| hits[i].iter().map(|h| h.id).collect())
                        .collect();
                    let jobs: Vec<(Vec<u16>, &[u32])> = long
                        .iter()
                        .zip(&ids)
                        .map(|(&i, c)| (device.pattern(&queries[pending[i]].symbols), c.as_slice()))
                        .collect();
                    for (&i, d) in long.iter().zip(device.distances(&jobs)?) {
                        on_device[i] = d;
                    }
                }
            }
            let verified = pending
                .par_iter()
                .zip(hits.par_iter())
                .zip(on_device.par_iter())
                .map(|((&q, cands), known)| {
                    let outside = Outside::of(cands, big_k as usize, num_objects);
                    let config = self.transform.config();
                    let v = match known {
                        Some(d) => verify_by(
                            config,
                            &queries[q],
                            cands.iter().copied(),
                            outside,
                            k,
                            self.store,
                            |at, _| Ok(d[at]),
                        )?,
                        None => verify(
                            config,
                            &queries[q],
                            cands.iter().copied(),
                            outside,
                            k,
                            self.store,
                        )?,
                    };
                    // more candidates help only when K of them came back
                    let done = v.exact || big_k >= cap || cands.len() < big_k as usize;
                    Ok((q, done, v))
                })
                .collect::<Result<Vec<_>>>()?;
            stages.verify_ms += ms_since(t);
            pending.clear();
            for (q, done, v) in verified {
                stages.verified += v.computed as u64;
                results[q] = Some(SequenceResult {
                    hits: v.hits,
                    exact: v.exact,
                    candidates: big_k,
                    rounds: round,
                    verified: v.computed,
                });
                if !done {
                    pending.push(q);
                }
            }
            big_k = big_k.saturating_mul(2).min(cap);
            round += 1;
        }
        let mut results: Vec<SequenceResult> = results.into_iter().flatten().collect();
        if params.exhaustive {
            let t = Instant::now();
            self.finish_exhaustively(queries, k, &mut results)?;
            stages.exhaustive_ms += ms_since(t);
        }
        Ok(results)
    }

    /// The exhaustive pass of `unproven` on the device: each query's objects within its exact
    /// k-th distance, their counts from their keywords, ranked by (distance, count descending,
    /// id), the first k kept: the top-k of Algorithm 2 over all objects. Returns the queries the
    /// device could not answer.
    fn finish_on_device(
        &self,
        device: &DeviceSequences,
        queries: &[SequenceQuery],
        k: usize,
        results: &mut [SequenceResult],
        unproven: &[usize],
    ) -> Result<Vec<usize>> {
        let jobs: Vec<(Vec<u16>, u32)> = unproven
            .iter()
            .map(|&q| {
                let bound = results[q]
                    .hits
                    .get(k.saturating_sub(1))
                    .filter(|_| results[q].hits.len() >= k)
                    .map_or(u32::MAX, |h| h.distance);
                (device.pattern(&queries[q].symbols), bound)
            })
            .collect();
        let found = device.nearest(&jobs, k)?;
        let n = self.engine.index().num_objects();
        let ranked = unproven
            .par_iter()
            .zip(found.into_par_iter())
            .filter_map(|(&q, within)| within.map(|w| (q, w)))
            .map(|(q, within)| {
                let mut keywords = Vec::new();
                let mut hits = within
                    .iter()
                    .map(|&(id, distance)| {
                        keywords.clear();
                        self.transform
                            .keywords(self.store.bytes(id), &mut keywords)?;
                        let count = genie_core::oracle::match_count(&queries[q].query, &keywords);
                        Ok(SequenceHit {
                            id,
                            count: u32::try_from(count).unwrap_or(u32::MAX),
                            distance,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                hits.sort_unstable_by(|a, b| {
                    a.distance
                        .cmp(&b.distance)
                        .then(b.count.cmp(&a.count))
                        .then(a.id.cmp(&b.id))
                });
                let verified = hits.len();
                hits.truncate(k);
                Ok((q, hits, verified))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut answered = vec![false; results.len()];
        for (q, hits, verified) in ranked {
            let r = &mut results[q];
            (r.hits, r.exact, r.verified) = (hits, true, verified);
            r.candidates = n;
            r.rounds += 1;
            answered[q] = true;
        }
        Ok(unproven.iter().copied().filter(|&q| !answered[q]).collect())
    }

    /// Reruns every unproven query over all objects in the contract order.
    fn finish_exhaustively(
        &self,
        queries: &[SequenceQuery],
        k: usize,
        results: &mut [SequenceResult],
    ) -> Result<()> {
        let mut unproven: Vec<usize> = (0..queries.len()).filter(|&q| !results[q].exact).collect();
        if unproven.is_empty() {
            return Ok(());
        }
        let n = self.engine.index().num_objects();
        if let Some(device) = self.device {
            unproven = self.finish_on_device(device, queries, k, results, &unproven)?;
            if unproven.is_empty() {
                return Ok(());
            }
        }
        let batch: Vec<_> = unproven.iter().map(|&q| queries[q].query.clone()).collect();
        let all = SearchParams::top_k(n).with_method(Method::CountTable);
        let hits = self.engine.search(&batch, &all)?;
        let verified = unproven
            .par_iter()
            .zip(hits.par_iter())
            .map(|(&q, cands)| {
                let ordered = cands.iter().copied().chain(zero_count_tail(cands, n));
                verify(
                    self.transform.config(),
                    &queries[q],
                    ordered,
                    Outside::Nothing,
                    k,
                    self.store,
                )
                .map(|v| (q, v))
            })
            .collect::<Result<Vec<_>>>()?;
        for (q, v) in verified {
            let r = &mut results[q];
            (r.hits, r.exact, r.verified) = (v.hits, v.exact, v.computed);
            r.candidates = n;
            r.rounds += 1;
        }
        Ok(())
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
