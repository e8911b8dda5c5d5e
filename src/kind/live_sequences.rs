//! Sequences in a live index ([`crate::live`]): a written sequence is logged as its bytes and
//! kept with its segment for the verification by edit distance; its ordered n-grams become
//! keywords when the write is applied, in the log's order, an n-gram (or a further occurrence of
//! one) the dictionary lacks getting the next keyword, so a replay numbers them as the first run
//! did. A flush saves the whole dictionary, so the live folder needs nothing beside it.
//!
//! A query counts `candidates` objects in each segment, verifies them by edit distance and keeps
//! the best; a segment whose best are not proven by Theorem 5.2 (every object not verified has
//! too low a count to be closer than the k-th) is counted again with twice the candidates, up to
//! `max_candidates`, as the sequence index does. The answer says whether every segment's was
//! proven (`exact`).

use super::sequences::{query_bytes, SIDE_EXT};
use super::{
    side_path, sort_by_distance, AnswerHit, Candidate, Encoded, Kind, LiveObjects, LiveQuery,
    LiveSetup, Options,
};
use crate::data_error::DataError;
use genie_core::{InvertedIndex, Keyword, Query};
use genie_sa::sequences::edit_distance::edit_distance;
use genie_sa::sequences::ngram::for_each_ordered_gram;
use genie_sa::sequences::search::{DEFAULT_CANDIDATES, DEFAULT_MAX_CANDIDATES};
use genie_sa::{NGramConfig, SequenceMetadata, SequenceTransform, StringTable};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::RwLock;

/// The ordered n-grams known: `(gram, occurrence)` to keyword.
type Grams = HashMap<(Box<[u32]>, u32), Keyword>;

/// Sequences in a live index.
pub struct LiveSequences {
    config: NGramConfig,
    grams: RwLock<Grams>,
}

/// What a live sequence query verifies with.
struct SeqRerank {
    /// The query's symbols (unpadded).
    symbols: Vec<u32>,
    /// `|G(Q)|`: its ordered n-grams, known or not.
    grams: usize,
    candidates: u32,
    max_candidates: Option<u32>,
}

fn bad_state(message: &str) -> DataError {
    DataError::Unsupported(format!(
        "a live sequence index's saved dictionary: {message}"
    ))
}

impl LiveSequences {
    /// The sequences of a live index: its saved dictionary, else the dictionary of the index
    /// file it was made from (rebuilt from its sequences), else none.
    pub fn new(setup: &LiveSetup) -> Result<Self, DataError> {
        let meta: SequenceMetadata = serde_json::from_str(&setup.metadata)
            .map_err(|e| DataError::Sa(genie_sa::SaError::BadMetadata(e.to_string())))?;
        let config = meta.config;
        let grams = match (&setup.state, &setup.base) {
            (Some(state), _) => parse_state(state, config.n)?,
            (None, Some(base)) => {
                let index = InvertedIndex::load(base)?;
                let (transform, _) = super::sequences::open(&index, base)?;
                of_dictionary(&transform)
            }
            (None, None) => Grams::new(),
        };
        Ok(Self {
            config,
            grams: RwLock::new(grams),
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Grams> {
        self.grams.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The sequence's padded symbols.
    fn padded(&self, bytes: &[u8]) -> Result<Vec<u32>, DataError> {
        Ok(self.config.padded_symbols(bytes)?)
    }
}

fn of_dictionary(t: &SequenceTransform) -> Grams {
    let mut grams = Grams::new();
    for (gram, base, count) in t.dictionary().entries() {
        for occ in 0..count {
            grams.insert((gram.into(), occ), base + occ);
        }
    }
    grams
}

/// The dictionary as bytes: `n`, then per ordered n-gram its keyword, occurrence and `n`
/// symbols (little-endian 32-bit words).
fn state_bytes(grams: &Grams, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + grams.len() * (2 + n) * 4);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    for ((gram, occ), kw) in grams {
        out.extend_from_slice(&kw.to_le_bytes());
        out.extend_from_slice(&occ.to_le_bytes());
        for s in gram.iter() {
            out.extend_from_slice(&s.to_le_bytes());
        }
    }
    out
}

fn parse_state(bytes: &[u8], n: usize) -> Result<Grams, DataError> {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if bytes.len() % 4 != 0 || words.first().copied() != Some(n as u32) {
        return Err(bad_state("not a dictionary of this n-gram length"));
    }
    let entries = &words[1..];
    if entries.len() % (2 + n) != 0 {
        return Err(bad_state("cut short"));
    }
    let mut grams = Grams::with_capacity(entries.len() / (2 + n));
    for e in entries.chunks_exact(2 + n) {
        grams.insert((e[2..].into(), e[1]), e[0]);
    }
    Ok(grams)
}

impl LiveObjects for LiveSequences {
    fn kind(&self) -> &str {
        genie_sa::sequences::transform::KIND
    }

    /// Logged as its bytes (checked against the alphabet here); keywords when applied.
    fn encode(&self, raw: &Value) -> Result<Encoded, DataError> {
        let bytes = query_bytes(raw, self.config.alphabet)?;
        self.padded(&bytes)?;
        Ok(Encoded {
            log: bytes,
            keywords: None,
        })
    }

    fn decode(&self, log: &[u8]) -> Result<Vec<Keyword>, DataError> {
        let padded = self.padded(log)?;
        let mut out = Vec::with_capacity(padded.len());
        let mut missing: Vec<(Box<[u32]>, u32)> = Vec::new();
        {
            let grams = self.read();
            for_each_ordered_gram(&padded, self.config.n, |gram, occ| {
                match grams.get(&(gram.into(), occ)) {
                    Some(&k) => out.push(k),
                    None => missing.push((gram.into(), occ)),
                }
            });
        }
        if !missing.is_empty() {
            let mut grams = self.grams.write().unwrap_or_else(|e| e.into_inner());
            for key in missing {
                let next = grams.len() as Keyword;
                out.push(*grams.entry(key).or_insert(next));
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn query(&self, raw: &Value, options: &Options) -> Result<LiveQuery, DataError> {
        options.check(self.kind(), super::sequences::Sequences.search_options())?;
        if options.flag("exhaustive")? {
            return Err(DataError::BadOption {
                name: "exhaustive".into(),
                message: "does not apply to a live sequence index (its answers say whether \
                          they are proven: raise max_candidates)"
                    .into(),
            });
        }
        let bytes = query_bytes(raw, self.config.alphabet)?;
        let padded = self.padded(&bytes)?;
        let mut keywords = Vec::with_capacity(padded.len());
        let mut n_grams = 0;
        {
            let grams = self.read();
            for_each_ordered_gram(&padded, self.config.n, |gram, occ| {
                n_grams += 1;
                keywords.extend(grams.get(&(gram.into(), occ)));
            });
        }
        let symbols = self.config.alphabet.symbols(&bytes)?;
        Ok(LiveQuery {
            query: Query::from_keywords(&keywords),
            rerank: Some(Box::new(SeqRerank {
                symbols,
                grams: n_grams,
                candidates: options.u32("candidates")?.unwrap_or(DEFAULT_CANDIDATES),
                max_candidates: options.u32("max_candidates")?,
            })),
        })
    }

    fn keeps_objects(&self) -> bool {
        true
    }

    fn base_objects(
        &self,
        base: &Path,
        index: &InvertedIndex,
    ) -> Result<Option<StringTable>, DataError> {
        let table = StringTable::load(&side_path(base, SIDE_EXT))?;
        if table.len() != index.num_objects() as usize {
            return Err(DataError::File {
                path: side_path(base, SIDE_EXT),
                message: format!(
                    "{} sequences for the {} objects of the index",
                    table.len(),
                    index.num_objects()
                ),
            });
        }
        Ok(Some(table))
    }

    fn candidates(&self, query: &LiveQuery, k: u32) -> u32 {
        rerank_of(query).map_or(k, |r| r.candidates).max(k)
    }

    fn max_candidates(&self, query: &LiveQuery, k: u32) -> u32 {
        let first = self.candidates(query, k);
        rerank_of(query)
            .and_then(|r| r.max_candidates)
            .unwrap_or(DEFAULT_MAX_CANDIDATES)
            .max(first)
    }

    fn proves_answers(&self) -> bool {
        true
    }

    /// Theorem 5.2: a sequence within edit distance `tau` of the query shares at least
    /// `|G(Q)| - n tau` ordered n-grams with it; one of count `outside` or less can neither be
    /// closer than the k-th hit, at `tau`, nor tie with it, when that bound is above `outside`.
    fn proves(&self, query: &LiveQuery, tau: f64, outside: u32) -> bool {
        rerank_of(query)
            .is_some_and(|r| self.config.count_bound(r.grams, tau as u32) > i64::from(outside))
    }

    fn rerank(
        &self,
        query: &LiveQuery,
        k: u32,
        candidates: &[Candidate<'_>],
    ) -> Result<Vec<AnswerHit>, DataError> {
        let r = rerank_of(query).ok_or_else(|| super::undecodable("a sequence query"))?;
        let mut hits = candidates
            .iter()
            .map(|&(id, count, stored)| {
                let symbols = self.config.alphabet.symbols(stored)?;
                Ok(AnswerHit {
                    id,
                    count,
                    distance: Some(f64::from(edit_distance(&r.symbols, &symbols))),
                })
            })
            .collect::<Result<Vec<_>, DataError>>()?;
        sort_by_distance(&mut hits);
        hits.truncate(k as usize);
        Ok(hits)
    }

    fn state(&self) -> Option<Vec<u8>> {
        Some(state_bytes(&self.read(), self.config.n))
    }

    fn state_version(&self) -> u64 {
        self.read().len() as u64
    }
}

fn rerank_of(query: &LiveQuery) -> Option<&SeqRerank> {
    query.rerank.as_ref()?.downcast_ref::<SeqRerank>()
}
