//! The `sequences` kind (paper section V-A): `genie build --kind sequences` reads
//! one sequence per line of a UTF-8 text file (object id = 0-based line number; the line
//! terminator is not part of the sequence), indexes its ordered n-grams and saves the sequences
//! beside the index as `INDEX.seqs`, which `genie search` needs to verify candidates by edit
//! distance and to rebuild the n-gram dictionary (checked against the index metadata).
//!
//! `genie search` reads one query sequence per line and writes one JSON line per query:
//! `{"query":0,"exact":true,"candidates":32,"hits":[{"id":7,"count":9,"distance":1}]}`, hits by
//! edit distance ascending, then count descending, then id ascending; `exact` says whether
//! Theorem 5.2 proves them the true top-k, `candidates` is K of the last round.

use super::{
    metadata_with, prepared, side_path, sort_by_distance, Answer, AnswerHit, BuildJob, BuildReport,
    Candidate, Encoded, IndexSource, Kind, KindIndex, KindInfo, LineQueries, LiveObjects,
    LiveQuery, LiveSetup, OpenOptions, Opened, OptionSpec, OptionType, Options, Placement,
    Prepared, QueryFile, QueryReader, Request,
};
use crate::data_error::DataError;
use crate::input::LineReader;
use genie_core::{Engine, IndexBuilder, InvertedIndex, Keyword, Query, Transform};
use genie_sa::sequences::edit_distance::edit_distance;
use genie_sa::sequences::ngram::for_each_ordered_gram;
use genie_sa::sequences::search::{DEFAULT_CANDIDATES, DEFAULT_MAX_CANDIDATES};
use genie_sa::sequences::transform::SequenceQuery;
use genie_sa::{
    Alphabet, DeviceSequences, NGramConfig, SequenceMetadata, SequenceSearchParams,
    SequenceSearcher, SequenceStages, SequenceStore, SequenceTransform, StringTable,
};
use rayon::prelude::*;
use serde_json::Value;
use std::any::Any;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

/// Sequences whose keywords a build computes at once.
const BUILD_BLOCK: usize = 1 << 16;

/// The extension of the sequences side file.
pub const SIDE_EXT: &str = "seqs";

/// Reads one sequence per line: any bytes for [`Alphabet::Bytes`], else UTF-8 text (errors
/// name the file and line).
pub fn read_sequences(path: &Path, alphabet: Alphabet) -> Result<StringTable, DataError> {
    let mut reader = LineReader::open(path)?;
    let mut table = StringTable::new();
    if alphabet == Alphabet::Bytes {
        while let Some(line) = reader.next_line_bytes()? {
            table.push(line);
        }
        return Ok(table);
    }
    loop {
        match reader.next_line() {
            Ok(Some(line)) => table.push(line.as_bytes()),
            Ok(None) => return Ok(table),
            Err(crate::input::InputError::NotUtf8 { path, line, column }) => {
                return Err(DataError::Line {
                    path,
                    line,
                    message: format!(
                        "line is not valid UTF-8 (invalid byte at column {column}); \
                         --alphabet bytes reads sequences of any bytes"
                    ),
                })
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Reads a queries file of sequences as [`LineQueries`] does, but for the lines that are not
/// UTF-8: such a line is an array of its byte values (which only an index of `--alphabet bytes`
/// takes) rather than an error.
pub struct SequenceQueries(LineQueries);

impl QueryReader for SequenceQueries {
    fn next_query(&mut self) -> Result<Option<Value>, DataError> {
        let Some(line) = self.0 .0.next_line_bytes()? else {
            return Ok(None);
        };
        Ok(Some(match std::str::from_utf8(line) {
            Ok(text) => Value::String(text.to_string()),
            Err(_) => Value::Array(line.iter().map(|&b| Value::from(b)).collect()),
        }))
    }

    fn location(&self) -> String {
        self.0.location()
    }

    fn progress(&self) -> (u64, Option<u64>) {
        self.0.progress()
    }
}

/// The bytes of a raw sequence query: a string, or (for an index of `alphabet` bytes) an array
/// of byte values.
pub(crate) fn query_bytes(raw: &Value, alphabet: Alphabet) -> Result<Vec<u8>, DataError> {
    match raw {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Array(items) if alphabet == Alphabet::Bytes => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_u64()
                    .and_then(|b| u8::try_from(b).ok())
                    .ok_or_else(|| {
                        DataError::BadQuery(format!("byte {i}: expected 0 to 255, found {v}"))
                    })
            })
            .collect(),
        Value::Array(_) => Err(DataError::BadQuery(
            "a sequence of bytes (not UTF-8 text) needs an index built with --alphabet bytes"
                .into(),
        )),
        other => Err(DataError::BadQuery(format!(
            "expected a string, found {}",
            super::kind_of(other)
        ))),
    }
}

/// Builds the index of the sequences of `input` (its metadata names `input`).
pub fn build(input: &Path, config: NGramConfig) -> Result<(InvertedIndex, StringTable), DataError> {
    let table = read_sequences(input, config.alphabet)?;
    let transform = SequenceTransform::build(config, table.iter())?;
    let mut builder: IndexBuilder = transform
        .builder()
        .metadata(metadata_with(&transform.metadata(), input));
    // the keywords of a block of sequences on all cores, pushed in order
    let seqs: Vec<&[u8]> = table.iter().collect();
    for (block, part) in seqs.chunks(BUILD_BLOCK).enumerate() {
        let keywords = part
            .par_iter()
            .enumerate()
            .map(|(i, seq)| {
                let mut out = Vec::new();
                transform
                    .keywords(seq, &mut out)
                    .map(|()| out)
                    .map_err(|e| DataError::at(input, (block * BUILD_BLOCK + i + 1) as u64, e))
            })
            .collect::<Vec<_>>()
            .into_iter()
            // the first bad line, as a single pass would report it
            .collect::<Result<Vec<_>, _>>()?;
        for k in &keywords {
            builder.push_object(k)?;
        }
    }
    Ok((builder.build()?, table))
}

/// Saves the index and its sequences (`INDEX.seqs`).
pub fn save(path: &Path, index: &InvertedIndex, table: &StringTable) -> Result<(), DataError> {
    index.save(path)?;
    table.save(&side_path(path, SIDE_EXT))?;
    Ok(())
}

/// The transform and sequences of a loaded index (`index_path` locates `INDEX.seqs`).
pub fn open(
    index: &InvertedIndex,
    index_path: &Path,
) -> Result<(SequenceTransform, SequenceStore), DataError> {
    let meta: SequenceMetadata = serde_json::from_str(index.metadata()).map_err(|e| {
        DataError::Sa(genie_sa::SaError::BadMetadata(format!(
            "{}: {e}",
            index_path.display()
        )))
    })?;
    let side = side_path(index_path, SIDE_EXT);
    let t = std::time::Instant::now();
    let table = StringTable::load(&side)?;
    let read = t.elapsed();
    let transform =
        SequenceTransform::rebuild(&meta, table.iter()).map_err(|e| DataError::File {
            path: side.clone(),
            message: e.to_string(),
        })?;
    let rebuilt = t.elapsed() - read;
    let store = SequenceStore::new(table, meta.config.alphabet)?;
    log::debug!(
        "sequences: {} read in {read:.2?}, n-gram dictionary rebuilt in {rebuilt:.2?}, lengths in {:.2?}",
        side.display(),
        t.elapsed() - read - rebuilt
    );
    Ok((transform, store))
}

/// The build options of sequences.
const BUILD_OPTIONS: &[OptionSpec] = &[
    OptionSpec::u32("ngram", 0, "N", "The n-gram length n [default: 3]."),
    OptionSpec::new(
        "alphabet",
        OptionType::Choice(&["chars", "bytes"]),
        "ALPHABET",
        "n-grams of Unicode characters (UTF-8 text) or of bytes (any bytes but the newline: DNA \
         and other byte data) [default: chars].",
    ),
    OptionSpec::flag(
        "no_pad",
        "No n - 1 pad symbols at both ends (a sequence shorter than n then has no n-gram and is \
         found by no query).",
    ),
];

/// The search options of sequences.
const SEARCH_OPTIONS: &[OptionSpec] = &[
    OptionSpec::u32(
        "candidates",
        1,
        "K2",
        "Candidates K2 taken by match count, then verified by edit distance [default: 32].",
    ),
    OptionSpec::u32(
        "max_candidates",
        1,
        "K",
        "Queries not proven exact are searched again with K doubled, up to this K (no \
         repetition when not above --candidates) [default: 1024; with --exhaustive on a GPU, \
         --candidates: one round, then the device's pass over all sequences].",
    ),
    OptionSpec::flag(
        "exhaustive",
        "Verify queries still not proven after the last round against all sequences, so that \
         every result is exact.",
    ),
];

/// The kind of sequences under edit distance.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sequences;

/// The kind of sequences.
const INFO: KindInfo = KindInfo {
    build_options: BUILD_OPTIONS,
    search_options: SEARCH_OPTIONS,
    side_files: &[SIDE_EXT],
    ..KindInfo::new(
        genie_sa::sequences::transform::KIND,
        "Sequences (one per line) under edit distance, by ordered n-grams",
    )
};

impl Kind for Sequences {
    fn info(&self) -> &KindInfo {
        &INFO
    }

    fn open_queries(&self, path: &Path, _: &Options) -> QueryFile {
        Ok(Box::new(SequenceQueries(LineQueries(LineReader::open(
            path,
        )?))))
    }

    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
        let config = config_of(job.options)?;
        let (index, table) = build(job.input, config)?;
        save(job.output, &index, &table)?;
        Ok(BuildReport {
            summary: super::summary(&index),
            objects: u64::from(index.num_objects()),
            side_files: self.side_files(job.output),
        })
    }

    fn live_objects(
        &self,
        setup: &super::LiveSetup,
    ) -> Result<Arc<dyn super::LiveObjects>, DataError> {
        Ok(Arc::new(LiveSequences::new(setup)?))
    }

    fn live_metadata(&self, options: &Options) -> Result<Value, DataError> {
        let empty = SequenceTransform::build(config_of(options)?, std::iter::empty())?;
        serde_json::to_value(empty.metadata_record())
            .map_err(|e| DataError::Unsupported(format!("sequences metadata: {e}")))
    }

    fn open(&self, source: &IndexSource, placement: Placement, _options: &OpenOptions) -> Opened {
        let index = super::single_index(source, self.name())?;
        // the dictionary and the sequences, read once for every replica
        let side = source.shared("sequences", || open(&index, &source.path))?;
        let (transform, store) = (&side.0, &side.1);
        let engine = placement.engine(index, self.name())?;
        // checks that the index, the dictionary and the sequences belong together
        SequenceSearcher::new(&engine, transform, store)?;
        // the sequences go to the GPU with the index, not with the first query
        let device = engine.gpu_ordinal().and_then(|ordinal| {
            DeviceSequences::new(store, ordinal)
                .map_err(|e| log::info!("sequences: edit distances on the CPU ({e})"))
                .ok()
        });
        let index = SequenceIndex {
            engine,
            side: Arc::clone(&side),
            stages: Mutex::default(),
            device,
        };
        Ok(Box::new(index))
    }
}

/// The n-gram configuration of the build options (checked).
fn config_of(o: &Options) -> Result<NGramConfig, DataError> {
    o.check(Sequences.name(), Sequences.build_options())?;
    // one of the declared words
    let alphabet = match o.str("alphabet")? {
        Some("bytes") => Alphabet::Bytes,
        _ => Alphabet::Chars,
    };
    let n = o
        .u32("ngram")?
        .map_or(NGramConfig::default().n, |n| n as usize);
    Ok(NGramConfig::new(n, alphabet, !o.flag("no_pad")?)?)
}

/// An opened index of sequences with its dictionary and sequences.
pub struct SequenceIndex {
    engine: Engine,
    /// The n-gram dictionary and the sequences, shared by the replicas of the index.
    side: Arc<(SequenceTransform, SequenceStore)>,
    stages: Mutex<SequenceStages>,
    /// The sequences on the engine's GPU, uploaded when the index is opened (none on the CPU, or
    /// where they do not go).
    device: Option<DeviceSequences>,
}

/// A parsed sequence query and its search settings.
struct SeqQuery {
    query: SequenceQuery,
    candidates: u32,
    /// `None`: the searcher's default for these settings.
    max_candidates: Option<u32>,
    exhaustive: bool,
}

impl KindIndex for SequenceIndex {
    fn kind(&self) -> &str {
        genie_sa::sequences::transform::KIND
    }

    fn num_objects(&self) -> u64 {
        u64::from(self.engine.index().num_objects())
    }

    fn backend_name(&self) -> String {
        self.engine.backend_name().to_string()
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        options.check(self.kind(), Sequences.search_options())?;
        let bytes = query_bytes(raw, self.side.1.alphabet())?;
        let query = self.side.0.prepare(&bytes)?;
        Ok(Box::new(SeqQuery {
            query,
            candidates: options.u32("candidates")?.unwrap_or(DEFAULT_CANDIDATES),
            max_candidates: options.u32("max_candidates")?,
            exhaustive: options.flag("exhaustive")?,
        }))
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        query
            .downcast_ref::<SeqQuery>()
            .map_or(0, |q| q.query.query.items.len())
    }

    /// Requests of the same settings are searched together (the rounds of repeated search
    /// depend on them).
    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        super::no_filters(batch, "sequences")?;
        let searcher = SequenceSearcher::new(&self.engine, &self.side.0, &self.side.1)?;
        let searcher = searcher
            .with_device(self.device.as_ref())
            .count_once(self.engine.gpu_ordinal().is_none());
        let queries = batch
            .iter()
            .map(|r| prepared::<SeqQuery>(r.query))
            .collect::<Result<Vec<_>, _>>()?;
        let mut answers = vec![Answer::default(); batch.len()];
        let mut done = vec![false; batch.len()];
        for first in 0..batch.len() {
            if done[first] {
                continue;
            }
            let q0 = queries[first];
            let same = |i: usize| {
                let q = queries[i];
                batch[i].k == batch[first].k
                    && (q.candidates, q.max_candidates, q.exhaustive)
                        == (q0.candidates, q0.max_candidates, q0.exhaustive)
            };
            let group: Vec<usize> = (first..batch.len())
                .filter(|&i| !done[i] && same(i))
                .collect();
            let mut params = SequenceSearchParams::top_k(batch[first].k)
                .with_candidates(q0.candidates)
                .repeat_until(q0.max_candidates.unwrap_or_else(|| {
                    searcher.default_max_candidates(q0.candidates, q0.exhaustive)
                }));
            params.exhaustive = q0.exhaustive;
            let seqs: Vec<SequenceQuery> =
                group.iter().map(|&i| queries[i].query.clone()).collect();
            let mut stages = SequenceStages::default();
            let results = searcher.search_staged(&seqs, &params, &mut stages)?;
            if let Ok(mut all) = self.stages.lock() {
                all.add(&stages);
            }
            for (&i, r) in group.iter().zip(results) {
                let mut a = Answer {
                    hits: r
                        .hits
                        .iter()
                        .map(|h| AnswerHit {
                            id: u64::from(h.id),
                            count: h.count,
                            distance: Some(f64::from(h.distance)),
                        })
                        .collect(),
                    exact: Some(r.exact),
                    candidates: Some(r.candidates),
                };
                a.keep_min_count(batch[i].min_count);
                answers[i] = a;
                done[i] = true;
            }
        }
        Ok(answers)
    }

    fn take_stage_times(&self) -> Option<genie_core::StageTimes> {
        self.engine.take_stage_times()
    }

    fn take_search_stages(&self) -> Vec<(&'static str, f64)> {
        let s = self
            .stages
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        log::info!(
            "sequences: {} rounds at most, {} query searches, {} edit distances",
            s.rounds,
            s.query_rounds,
            s.verified
        );
        vec![
            ("count", s.count_ms),
            ("verify", s.verify_ms),
            ("exhaustive", s.exhaustive_ms),
        ]
    }

    fn gpu_ordinal(&self) -> Option<usize> {
        self.engine.gpu_ordinal()
    }
}

// Sequences in a live index ([`crate::live`]): a written sequence is logged as its bytes and
// kept with its segment for the verification by edit distance; its ordered n-grams become
// keywords when the write is applied, in the log's order, an n-gram (or a further occurrence of
// one) the dictionary lacks getting the next keyword, so a replay numbers them as the first run
// did. A flush saves the whole dictionary, so the live folder needs nothing beside it.
//
// A query counts `candidates` objects in each segment, verifies them by edit distance and keeps
// the best; a segment whose best are not proven by Theorem 5.2 (every object not verified has
// too low a count to be closer than the k-th) is counted again with twice the candidates, up to
// `max_candidates`, as the sequence index does. The answer says whether every segment's was
// proven (`exact`).

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
                let (transform, _) = open(&index, base)?;
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
        options.check(self.kind(), Sequences.search_options())?;
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
        query
            .rerank_as::<SeqRerank>()
            .map_or(k, |r| r.candidates)
            .max(k)
    }

    fn max_candidates(&self, query: &LiveQuery, k: u32) -> u32 {
        let first = self.candidates(query, k);
        query
            .rerank_as::<SeqRerank>()
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
        query
            .rerank_as::<SeqRerank>()
            .is_some_and(|r| self.config.count_bound(r.grams, tau as u32) > i64::from(outside))
    }

    fn rerank(
        &self,
        query: &LiveQuery,
        k: u32,
        candidates: &[Candidate<'_>],
    ) -> Result<Vec<AnswerHit>, DataError> {
        let r = query
            .rerank_as::<SeqRerank>()
            .ok_or_else(|| super::undecodable("a sequence query"))?;
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
