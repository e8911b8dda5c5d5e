//! Data kinds (DESIGN.md section 6, layer 3): everything that differs between keyword objects,
//! sequences, documents, table rows and vectors, behind one trait, so that the CLI, the server,
//! the batching handle and a user's own program share one code path.
//!
//! A [`Kind`] knows how its input is built into an index (with its side files), how its query
//! files are read ([`QueryReader`], one raw query at a time as a JSON value: a text line for the
//! text kinds, an array of numbers for vectors) and how an index of it is opened on a device
//! ([`KindIndex`]). An opened index parses raw queries into [`Prepared`] queries (errors name what
//! was wrong) and searches batches of them, each request with its own `k` and optional
//! `min_count`, returning [`Answer`]s that print as the JSON lines of `genie search`.
//!
//! A [`Registry`] maps the kind recorded in an index's metadata to its implementation; the
//! default one holds the five built-in kinds, and a user's crate adds its own with
//! [`Registry::register`], without touching any `match` here.

pub mod documents;
pub mod keywords;
pub mod sequences;
pub mod table;
pub mod vectors;

use crate::data_error::DataError;
use crate::input::display_path;
use crate::searcher::Searcher;
use genie_core::{Backend, Hit, InvertedIndex, Method, Query, SearchParams, StageTimes};
use serde_json::Value;
use std::any::Any;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A query parsed by a [`KindIndex`], ready to search; only its kind knows its type.
pub type Prepared = Box<dyn Any + Send + Sync>;

/// One query of a batch with its own result size.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The query, as parsed by the same index.
    pub query: &'a (dyn Any + Send + Sync),
    /// Hits wanted (at most).
    pub k: u32,
    /// Only hits whose match count is at least this (the range output of the LSC paper); with
    /// `k` as the cap, every object of count `>= min_count` up to `k` of them.
    pub min_count: Option<u32>,
}

/// One hit of an answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnswerHit {
    /// The object id.
    pub id: u32,
    /// Its match count.
    pub count: u32,
    /// The verified measure, for kinds that verify (edit distance, vector distance).
    pub distance: Option<f64>,
}

/// The result of one query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answer {
    /// The hits in the kind's order (count descending then id, or distance first).
    pub hits: Vec<AnswerHit>,
    /// Sequences: whether the hits are proven the exact top-k.
    pub exact: Option<bool>,
    /// Sequences: candidates K of the last round.
    pub candidates: Option<u32>,
}

impl Answer {
    /// An answer of plain count hits.
    pub fn of_hits(hits: &[Hit]) -> Self {
        Self {
            hits: hits
                .iter()
                .map(|h| AnswerHit {
                    id: h.id,
                    count: h.count,
                    distance: None,
                })
                .collect(),
            ..Self::default()
        }
    }

    /// Keeps the hits of count `>= min_count`.
    pub fn keep_min_count(&mut self, min_count: Option<u32>) {
        if let Some(t) = min_count {
            self.hits.retain(|h| h.count >= t);
        }
    }

    /// Writes the JSON line of query `query`: `{"query":0,"hits":[{"id":12,"count":3}]}`, with
    /// `"exact"` and `"candidates"` before the hits and `"distance"` in each hit where the kind
    /// has them (a distance that is not finite is `null`).
    pub fn write_json(&self, w: &mut dyn Write, query: u64) -> io::Result<()> {
        write!(w, "{{\"query\":{query}")?;
        if let Some(exact) = self.exact {
            write!(w, ",\"exact\":{exact}")?;
        }
        if let Some(c) = self.candidates {
            write!(w, ",\"candidates\":{c}")?;
        }
        w.write_all(b",\"hits\":[")?;
        for (i, h) in self.hits.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(w, "{sep}{{\"id\":{},\"count\":{}", h.id, h.count)?;
            match h.distance {
                Some(d) if d.is_finite() => write!(w, ",\"distance\":{d}")?,
                Some(_) => w.write_all(b",\"distance\":null")?,
                None => {}
            }
            w.write_all(b"}")?;
        }
        w.write_all(b"]}\n")
    }
}

/// Writes the JSON lines of consecutive answers, the first being query `first`.
pub fn write_answers(w: &mut dyn Write, first: u64, answers: &[Answer]) -> io::Result<()> {
    for (q, a) in (first..).zip(answers) {
        a.write_json(w, q)?;
    }
    Ok(())
}

/// Named options of a kind (`radius`, `candidates`, ...): what the CLI's kind flags and a server
/// request's `options` object become. Each kind says which names it takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options(serde_json::Map<String, Value>);

impl Options {
    /// No options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Options from a JSON object (`null` is none); anything else is an error.
    pub fn from_json(value: &Value) -> Result<Self, DataError> {
        match value {
            Value::Null => Ok(Self::new()),
            Value::Object(map) => Ok(Self(map.clone())),
            _ => Err(DataError::BadOption {
                name: "options".into(),
                message: "expected an object of named options".into(),
            }),
        }
    }

    /// Sets an option.
    pub fn set(&mut self, name: &str, value: impl Into<Value>) -> &mut Self {
        self.0.insert(name.to_string(), value.into());
        self
    }

    /// The options as a JSON object.
    pub fn to_json(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// The names given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Whether no option is given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An error unless every name given is one of `accepted` (for kind `kind`).
    pub fn check(&self, kind: &str, accepted: &[&str]) -> Result<(), DataError> {
        match self.names().find(|n| !accepted.contains(n)) {
            None => Ok(()),
            Some(n) => Err(DataError::BadOption {
                name: n.to_string(),
                message: if accepted.is_empty() {
                    format!("kind {kind} takes no options")
                } else {
                    format!(
                        "not an option of kind {kind} (it takes {})",
                        accepted.join(", ")
                    )
                },
            }),
        }
    }

    fn bad(name: &str, expected: &str, found: &Value) -> DataError {
        DataError::BadOption {
            name: name.to_string(),
            message: format!("expected {expected}, found {found}"),
        }
    }

    /// An unsigned 32-bit option.
    pub fn u32(&self, name: &str) -> Result<Option<u32>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| Self::bad(name, "an unsigned 32-bit integer", v)),
        }
    }

    /// An unsigned 64-bit option.
    pub fn u64(&self, name: &str) -> Result<Option<u64>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| Self::bad(name, "an unsigned 64-bit integer", v)),
        }
    }

    /// A floating-point option (finite).
    pub fn f64(&self, name: &str) -> Result<Option<f64>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| Self::bad(name, "a finite number", v)),
        }
    }

    /// A boolean option (absent is `false`).
    pub fn flag(&self, name: &str) -> Result<bool, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(Self::bad(name, "true or false", v)),
        }
    }

    /// A string option.
    pub fn str(&self, name: &str) -> Result<Option<&str>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(Self::bad(name, "a string", v)),
        }
    }

    /// A list of strings (a JSON array of strings, or one string of comma-separated names).
    pub fn strings(&self, name: &str) -> Result<Option<Vec<String>>, DataError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.split(',').map(str::to_string).collect())),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| Self::bad(name, "a list of strings", &Value::Array(a.clone()))),
            Some(v) => Err(Self::bad(name, "a list of strings", v)),
        }
    }
}

/// What a build is asked to do.
pub struct BuildJob<'a> {
    /// The input file (`-` is standard input where the kind streams it).
    pub input: &'a Path,
    /// The index file to write (side files go beside it).
    pub output: &'a Path,
    /// The kind's build options.
    pub options: &'a Options,
    /// Called now and then with the bytes of input read so far.
    pub progress: &'a (dyn Fn(u64) + Sync),
}

/// What a build wrote.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    /// A summary of what was indexed, e.g. `3 objects, 9 postings, keyword space 10`.
    pub summary: String,
    /// Side files written beside the index.
    pub side_files: Vec<PathBuf>,
}

/// Reads the queries of a file one at a time, as raw JSON values that [`KindIndex::parse`]
/// takes (the same form a server request carries).
pub trait QueryReader {
    /// The next raw query, `None` at the end.
    fn next_query(&mut self) -> Result<Option<Value>, DataError>;
    /// Where the last query came from, for messages (`queries.txt:3`).
    fn location(&self) -> String;
    /// Bytes read so far, and the file's size when known (for progress bars).
    fn progress(&self) -> (u64, Option<u64>) {
        (0, None)
    }
}

/// Where an opened index searches.
pub enum Placement {
    /// Resident on one backend (a GPU or the CPU).
    Resident(Box<dyn Backend>),
    /// Split into parts that stream through the backends in turn (multi-loading); only indexes
    /// of keyword objects are searched so.
    Parted {
        /// One backend per device.
        backends: Vec<Box<dyn Backend>>,
        /// The number of parts for a single index file (`None`: the manifest's parts, or one
        /// per device).
        parts: Option<usize>,
    },
}

impl Placement {
    /// The engine of an index resident on this placement's backend; a parted placement is an
    /// error naming the kind.
    pub fn engine(
        &self,
        index: Arc<InvertedIndex>,
        kind: &str,
    ) -> Result<genie_core::Engine, DataError> {
        match self {
            Self::Resident(b) => Ok(genie_core::Engine::with_backend(index, b.as_ref())?),
            Self::Parted { .. } => Err(DataError::Unsupported(format!(
                "an index of {kind} cannot be split into parts: it must fit one device"
            ))),
        }
    }
}

/// An index to open: its file, and the loaded core index (`None` for a parted-index manifest).
pub struct IndexSource {
    /// The index file (side files are found beside it).
    pub path: PathBuf,
    /// The core index, loaded once and shared by every replica.
    pub index: Option<Arc<InvertedIndex>>,
    /// The index's metadata (JSON).
    pub metadata: Value,
}

/// What [`Kind::open`] is given besides the index.
pub struct OpenOptions {
    /// How counts are kept (same results either way).
    pub method: Method,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            method: Method::Cpq,
        }
    }
}

/// A kind of data: builds its indexes, reads its query files and opens its indexes.
pub trait Kind: Send + Sync {
    /// The name, as given to `--kind` and recorded in an index's metadata.
    fn name(&self) -> &str;
    /// One line for help texts.
    fn about(&self) -> &str;
    /// Whether an index with this metadata holds this kind.
    fn holds(&self, metadata: &Value) -> bool;
    /// The names of the options its builds take.
    fn build_options(&self) -> &[&str] {
        &[]
    }
    /// The names of the options its query files and searches take.
    fn search_options(&self) -> &[&str] {
        &[]
    }
    /// The side files an index of this kind keeps beside `index` (read by a search, written by
    /// a build).
    fn side_files(&self, index: &Path) -> Vec<PathBuf> {
        let _ = index;
        Vec::new()
    }
    /// Builds an index of the input and saves it with its side files.
    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError>;
    /// A reader of a queries file of this kind.
    fn read_queries(
        &self,
        path: &Path,
        options: &Options,
    ) -> Result<Box<dyn QueryReader>, DataError>;
    /// Opens an index of this kind on a placement.
    fn open(
        &self,
        source: &IndexSource,
        placement: Placement,
        options: &OpenOptions,
    ) -> Result<Box<dyn KindIndex>, DataError>;
}

/// An index of some kind, resident where it searches, searched through `&self`.
pub trait KindIndex: Send + Sync {
    /// The kind's name.
    fn kind(&self) -> &str;
    /// The number of objects.
    fn num_objects(&self) -> u64;
    /// Where it searches (the backend's name).
    fn backend_name(&self) -> String;
    /// Parses one raw query (a text line as a JSON string, or the kind's JSON form) under the
    /// kind's search options; the error says what was wrong with it.
    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError>;
    /// The keyword items a parsed query became (for limits).
    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize;
    /// Searches a batch; one answer per request, in order.
    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError>;
    /// Device time per stage since the last call (a GPU), for logs.
    fn take_stage_times(&self) -> Option<StageTimes> {
        None
    }
    /// The GPU it searches on, if any.
    fn gpu_ordinal(&self) -> Option<usize> {
        None
    }
}

/// The parsed query of type `T` behind a request; a wrong type is an internal error.
pub fn prepared<T: 'static>(query: &(dyn Any + Send + Sync)) -> Result<&T, DataError> {
    query.downcast_ref::<T>().ok_or_else(|| {
        DataError::Core(genie_core::GenieError::Internal(
            "a query parsed by another index".into(),
        ))
    })
}

/// The kinds known to a program.
#[derive(Clone)]
pub struct Registry {
    kinds: Vec<Arc<dyn Kind>>,
}

impl Default for Registry {
    /// The five built-in kinds.
    fn default() -> Self {
        Self {
            kinds: vec![
                Arc::new(keywords::Keywords),
                Arc::new(sequences::Sequences),
                Arc::new(documents::Documents),
                Arc::new(table::Table),
                Arc::new(vectors::Vectors),
            ],
        }
    }
}

impl Registry {
    /// No kinds.
    pub fn empty() -> Self {
        Self { kinds: Vec::new() }
    }

    /// Adds a kind; a later kind of the same name replaces the earlier one.
    pub fn register(&mut self, kind: Arc<dyn Kind>) -> &mut Self {
        self.kinds.retain(|k| k.name() != kind.name());
        self.kinds.push(kind);
        self
    }

    /// The kinds, in registration order.
    pub fn kinds(&self) -> impl Iterator<Item = &Arc<dyn Kind>> {
        self.kinds.iter()
    }

    /// The kind of this name.
    pub fn get(&self, name: &str) -> Result<&Arc<dyn Kind>, DataError> {
        self.kinds.iter().find(|k| k.name() == name).ok_or_else(|| {
            DataError::Unsupported(format!(
                "no kind {name:?} (known: {})",
                self.names().join(", ")
            ))
        })
    }

    /// The names of the kinds.
    pub fn names(&self) -> Vec<&str> {
        self.kinds.iter().map(|k| k.name()).collect()
    }

    /// The kind of an index with this metadata: the last registered that holds it.
    pub fn of_metadata(&self, metadata: &Value) -> Result<&Arc<dyn Kind>, DataError> {
        self.kinds
            .iter()
            .rev()
            .find(|k| k.holds(metadata))
            .ok_or_else(|| {
                let named = metadata.get("kind").and_then(Value::as_str).unwrap_or("?");
                DataError::Unsupported(format!(
                    "the index holds data of kind {named:?}, which this genie does not know \
                     (known: {})",
                    self.names().join(", ")
                ))
            })
    }

    /// The kinds whose options include `option` (build or search), for messages.
    pub fn kinds_taking(&self, option: &str) -> Vec<&str> {
        self.kinds
            .iter()
            .filter(|k| k.build_options().contains(&option) || k.search_options().contains(&option))
            .map(|k| k.name())
            .collect()
    }
}

/// The metadata of an index built from `input`: the plugin's JSON record (an object) with
/// `built_by` and `input` added.
pub fn metadata_with(record: &str, input: &Path) -> String {
    let mut value: Value = serde_json::from_str(record).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "built_by".into(),
            format!("genie {}", env!("CARGO_PKG_VERSION")).into(),
        );
        map.insert("input".into(), display_path(input).into());
    }
    value.to_string()
}

/// The side file `INDEX.EXT` of an index (e.g. `words.genie.seqs`).
pub fn side_path(index: &Path, ext: &str) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

/// How a kind whose answers are plain count hits turns raw queries into core queries: all such a
/// kind needs besides its [`Kind`] (the keyword, document and table kinds are three of them).
pub trait CountParser: Send + Sync {
    /// The kind's name.
    fn kind(&self) -> &str;
    /// The core query of a raw query under the kind's search options.
    fn parse(&self, raw: &Value, options: &Options) -> Result<Query, DataError>;
}

/// An opened index of a kind whose answers are count hits: a [`CountParser`] and the search.
pub struct CountIndex<P> {
    parser: P,
    searcher: Searcher,
    method: Method,
}

impl<P: CountParser> CountIndex<P> {
    /// The index searched by `searcher`, its queries parsed by `parser`.
    pub fn new(parser: P, searcher: Searcher, method: Method) -> Self {
        Self {
            parser,
            searcher,
            method,
        }
    }
}

impl<P: CountParser> KindIndex for CountIndex<P> {
    fn kind(&self) -> &str {
        self.parser.kind()
    }

    fn num_objects(&self) -> u64 {
        self.searcher.num_objects()
    }

    fn backend_name(&self) -> String {
        self.searcher.backend_name()
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        Ok(Box::new(self.parser.parse(raw, options)?))
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        query.downcast_ref::<Query>().map_or(0, |q| q.items.len())
    }

    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        let queries = batch
            .iter()
            .map(|r| prepared::<Query>(r.query))
            .collect::<Result<Vec<_>, _>>()?;
        search_counts(&self.searcher, &queries, batch, self.method)
    }

    fn take_stage_times(&self) -> Option<StageTimes> {
        self.searcher.take_stage_times()
    }

    fn gpu_ordinal(&self) -> Option<usize> {
        self.searcher.gpu_ordinal()
    }
}

/// The search of count hits: one run of the engine at the batch's largest `k`, each request cut
/// to its own (a prefix of the contract order is the smaller top-k). A request with `min_count`
/// and a large `k` starts at [`MIN_COUNT_FIRST_K`] and doubles only while its last hit still
/// reaches `min_count`.
fn search_counts(
    searcher: &Searcher,
    queries: &[&Query],
    batch: &[Request<'_>],
    method: Method,
) -> Result<Vec<Answer>, DataError> {
    let first_k = |r: &Request<'_>| match r.min_count {
        Some(_) => r.k.min(MIN_COUNT_FIRST_K),
        None => r.k,
    };
    let mut k_run = batch.iter().map(first_k).max().unwrap_or(0);
    let owned: Vec<Query> = queries.iter().map(|q| (*q).clone()).collect();
    let mut hits = searcher.search(&owned, &SearchParams::top_k(k_run).with_method(method))?;
    loop {
        // requests whose range output may go on past what was fetched
        let more: Vec<usize> = (0..batch.len())
            .filter(|&i| {
                let r = &batch[i];
                match (r.min_count, hits[i].last()) {
                    (Some(t), Some(last)) => {
                        hits[i].len() as u32 == k_run && last.count >= t && r.k > k_run
                    }
                    _ => false,
                }
            })
            .collect();
        if more.is_empty() {
            break;
        }
        let cap = more.iter().map(|&i| batch[i].k).max().unwrap_or(k_run);
        k_run = k_run.saturating_mul(2).min(cap);
        let again: Vec<Query> = more.iter().map(|&i| owned[i].clone()).collect();
        let found = searcher.search(&again, &SearchParams::top_k(k_run).with_method(method))?;
        for (i, h) in more.into_iter().zip(found) {
            hits[i] = h;
        }
    }
    Ok(batch
        .iter()
        .zip(hits)
        .map(|(r, mut h)| {
            h.truncate(r.k as usize);
            let mut a = Answer::of_hits(&h);
            a.keep_min_count(r.min_count);
            a
        })
        .collect())
}

/// The summary line of a built index: `N objects, P postings, keyword space S`.
pub fn summary(index: &InvertedIndex) -> String {
    format!(
        "{} objects, {} postings, keyword space {}",
        index.num_objects(),
        index.num_postings(),
        index.keyword_space()
    )
}

/// The core index of a source that must be a single index file (not a parted manifest).
pub fn single_index(source: &IndexSource, kind: &str) -> Result<Arc<InvertedIndex>, DataError> {
    source.index.clone().ok_or_else(|| {
        DataError::Unsupported(format!(
            "{}: a parted index holds keyword objects only, not {kind}",
            display_path(&source.path)
        ))
    })
}

/// The `k` a `min_count` request is first searched with (then doubled while needed).
pub const MIN_COUNT_FIRST_K: u32 = 256;

/// A reader of one raw query per text line (keywords, sequences, table rows and conditions).
pub struct LineQueries(pub crate::input::LineReader);

impl QueryReader for LineQueries {
    fn next_query(&mut self) -> Result<Option<Value>, DataError> {
        Ok(self.0.next_line()?.map(|l| Value::String(l.to_string())))
    }

    fn location(&self) -> String {
        format!("{}:{}", display_path(self.0.path()), self.0.lines_read())
    }

    fn progress(&self) -> (u64, Option<u64>) {
        (self.0.bytes_read(), self.0.len())
    }
}

/// The text of a raw query that must be a string.
pub fn text_query(raw: &Value) -> Result<&str, DataError> {
    raw.as_str()
        .ok_or_else(|| DataError::BadQuery(format!("expected a string, found {}", kind_of(raw))))
}

/// What sort of JSON value this is, for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_finds_kinds_by_metadata() {
        let r = Registry::default();
        let kind = |m: &str| {
            let v: Value = serde_json::from_str(m).unwrap_or_default();
            r.of_metadata(&v).map(|k| k.name().to_string())
        };
        assert_eq!(kind("").ok().as_deref(), Some("keywords"));
        assert_eq!(
            kind(r#"{"built_by":"genie 0.1.0"}"#).ok().as_deref(),
            Some("keywords")
        );
        assert_eq!(
            kind(r#"{"kind":"sequences","n":3}"#).ok().as_deref(),
            Some("sequences")
        );
        let e = kind(r#"{"kind":"graphs"}"#).expect_err("unknown kind");
        assert!(e.to_string().contains("\"graphs\""), "{e}");
        let m = metadata_with(r#"{"kind":"table"}"#, Path::new("a.csv"));
        assert_eq!(kind(&m).ok().as_deref(), Some("table"));
        assert!(m.contains("\"input\":\"a.csv\""));
        assert_eq!(
            side_path(Path::new("x/w.genie"), "seqs"),
            PathBuf::from("x/w.genie.seqs")
        );
        assert_eq!(r.kinds_taking("radius"), ["table"]);
    }

    #[test]
    fn answers_print_as_json_lines() {
        let mut out = Vec::new();
        let a = Answer {
            hits: vec![
                AnswerHit {
                    id: 3,
                    count: 7,
                    distance: Some(1.5),
                },
                AnswerHit {
                    id: 0,
                    count: 2,
                    distance: Some(f64::INFINITY),
                },
            ],
            ..Answer::default()
        };
        a.write_json(&mut out, 4).expect("to a Vec");
        let seq = Answer {
            hits: vec![AnswerHit {
                id: 7,
                count: 9,
                distance: Some(1.0),
            }],
            exact: Some(true),
            candidates: Some(32),
        };
        seq.write_json(&mut out, 5).expect("to a Vec");
        Answer::of_hits(&[Hit { id: 12, count: 3 }])
            .write_json(&mut out, 6)
            .expect("to a Vec");
        assert_eq!(
            String::from_utf8(out).expect("ASCII"),
            "{\"query\":4,\"hits\":[{\"id\":3,\"count\":7,\"distance\":1.5},{\"id\":0,\"count\":2,\"distance\":null}]}\n\
             {\"query\":5,\"exact\":true,\"candidates\":32,\"hits\":[{\"id\":7,\"count\":9,\"distance\":1}]}\n\
             {\"query\":6,\"hits\":[{\"id\":12,\"count\":3}]}\n"
        );
    }

    #[test]
    fn line_queries_say_where_they_came_from() {
        let text: &'static [u8] = b"1\n2-3:4\n\n1-0\n";
        let r = crate::input::LineReader::new(Box::new(text), Path::new("q.txt"), Some(13));
        let mut q = LineQueries(r);
        let mut parsed = Vec::new();
        let e = loop {
            let raw = q.next_query().expect("a line").expect("not yet the end");
            match keywords::parse_keyword_query(&raw) {
                Ok(p) => parsed.push(p),
                Err(e) => break format!("{}: {e}", q.location()),
            }
        };
        assert_eq!(parsed.len(), 3);
        assert_eq!(
            parsed[1].items,
            [genie_core::Item {
                lo: 2,
                hi: 3,
                weight: 4
            }]
        );
        assert!(parsed[2].items.is_empty());
        assert!(e.starts_with("q.txt:4: bad item \"1-0\""), "{e}");
        assert_eq!(q.progress(), (13, Some(13)));
        assert!(q.next_query().expect("end").is_none());
    }

    #[test]
    fn options_are_typed_and_checked() {
        let v: Value = serde_json::json!({"radius": 2, "column": "text", "bad": -1, "x": true});
        let o = Options::from_json(&v).expect("object");
        assert_eq!(o.u32("radius").ok(), Some(Some(2)));
        assert_eq!(o.u32("missing").ok(), Some(None));
        let e = o.u32("bad").expect_err("negative");
        assert_eq!(
            e.to_string(),
            "option bad: expected an unsigned 32-bit integer, found -1"
        );
        assert_eq!(o.str("column").ok(), Some(Some("text")));
        assert!(o.flag("x").expect("bool"));
        let e = o
            .check("table", &["radius", "column", "x"])
            .expect_err("bad is unknown");
        assert_eq!(
            e.to_string(),
            "option bad: not an option of kind table (it takes radius, column, x)"
        );
        assert!(Options::from_json(&serde_json::json!([1])).is_err());
    }
}
