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

mod answer;
#[macro_use]
mod vector_methods;
pub mod codebook;
pub(crate) mod codec;
mod count;
pub mod documents;
mod filter;
pub mod keywords;
pub mod letters;
mod list_form;
mod live_objects;
pub mod live_vectors;
mod options;
mod raw;
pub mod sequences;
pub mod table;
pub mod vectors;
mod writes;

pub use answer::{sort_by_distance, write_answers, Answer, AnswerHit};
pub use count::{
    by_filter, core_queries, search_counts, CountIndex, CountParser, MIN_COUNT_FIRST_K,
};
pub use filter::{condition_mask, ids_field, no_conditions, Clause, Filter, IdSpace};
pub use list_form::{store_list_arrays, ListForm, Stored};
pub use live_objects::{
    undecodable, Candidate, Encoded, KeywordObjects, LiveObjects, LiveQuery, LiveSetup,
};
pub use options::{OptionSpec, OptionType, Options};
pub use raw::{PlacedError, RawBlock, VectorRows};
pub use writes::{LiveStats, Writes};

use crate::data_error::DataError;
use crate::input::display_path;
use crate::searcher::Searcher;
use genie_core::{Backend, InvertedIndex, Method, StageTimes};
use serde_json::Value;
use std::any::Any;
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
    /// The objects it may return (`None`: all); kinds that cannot filter refuse a filter.
    pub filter: Option<&'a Filter>,
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
    /// The objects indexed (a front end warns when there are none).
    pub objects: u64,
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
    /// The next `max` raw queries at most (fewer at the end), each with where it came from; a
    /// reader holding its queries already may make them at once.
    fn next_queries(&mut self, max: usize) -> Result<(Vec<Value>, Vec<String>), DataError> {
        let (mut raws, mut places) = (Vec::new(), Vec::new());
        while raws.len() < max {
            let Some(raw) = self.next_query()? else {
                break;
            };
            raws.push(raw);
            places.push(self.location());
        }
        Ok((raws, places))
    }
    /// The next `max` raw queries at most, as a block ([`RawBlock`]): a reader of text lines
    /// hands the lines themselves, for [`KindIndex::parse_line`].
    fn next_block(&mut self, max: usize) -> Result<RawBlock, DataError> {
        let (raws, places) = self.next_queries(max)?;
        Ok(RawBlock::Values(raws, places))
    }
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

    /// A count search of `index` placed so: resident on its device, or split into parts that
    /// stream through the devices (for a kind whose queries are counted alone, with nothing
    /// beside the index on the device).
    pub fn searcher(self, index: Arc<InvertedIndex>) -> Result<Searcher, DataError> {
        Ok(match self {
            Self::Resident(backend) => Searcher::from_backends(index, vec![backend], Some(1))?,
            Self::Parted { backends, parts } => Searcher::from_backends(index, backends, parts)?,
        })
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
    /// What a kind reads beside the index (vectors, sequences, a dictionary), read once and
    /// shared by every replica ([`IndexSource::shared`]).
    pub side: SideData,
}

/// Side data of an index by name, each loaded once ([`IndexSource::shared`]).
#[derive(Default)]
pub struct SideData(std::sync::Mutex<Vec<(&'static str, Arc<dyn Any + Send + Sync>)>>);

impl IndexSource {
    /// An index file's source, with no side data loaded yet.
    pub fn new(path: PathBuf, index: Option<Arc<InvertedIndex>>, metadata: Value) -> Self {
        Self {
            path,
            index,
            metadata,
            side: SideData::default(),
        }
    }

    /// The side data `name`, loaded by `load` the first time any replica asks for it (replicas
    /// that open at once wait for that load) and shared after; an error is not kept, so that
    /// a later opening tries again.
    pub fn shared<T: Any + Send + Sync>(
        &self,
        name: &'static str,
        load: impl FnOnce() -> Result<T, DataError>,
    ) -> Result<Arc<T>, DataError> {
        let mut loaded = self.side.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, data)) = loaded.iter().find(|(n, _)| *n == name) {
            return Arc::clone(data).downcast::<T>().map_err(|_| {
                DataError::Core(genie_core::GenieError::Internal(format!(
                    "side data {name} of another type"
                )))
            });
        }
        let data = Arc::new(load()?);
        loaded.push((name, Arc::clone(&data) as Arc<dyn Any + Send + Sync>));
        Ok(data)
    }
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

/// What a kind declares of itself, once: its name, its help line, its options and its side
/// files. The CLI's flags, the server's and Python's options, `--kind`'s choices and the files a
/// build writes all come from it.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    /// The name, as given to `--kind` and recorded in an index's metadata.
    pub name: &'static str,
    /// One line for help texts.
    pub about: &'static str,
    /// The options its builds take (the CLI's flags of `genie build`, Python's keywords).
    pub build_options: &'static [OptionSpec],
    /// The options its query files and searches take (flags of `genie search`, a request's
    /// `options`, Python's keywords).
    pub search_options: &'static [OptionSpec],
    /// The extensions of the side files an index keeps beside itself (`INDEX.EXT`: read by a
    /// search, written by a build).
    pub side_files: &'static [&'static str],
}

impl KindInfo {
    /// A kind of this name and help line, without options or side files (fill them in with
    /// struct update syntax: `KindInfo { build_options: ..., ..KindInfo::new(name, about) }`).
    pub const fn new(name: &'static str, about: &'static str) -> Self {
        Self {
            name,
            about,
            build_options: &[],
            search_options: &[],
            side_files: &[],
        }
    }
}

/// What [`Kind::open`] gives: the index placed, or why not.
pub type Opened = Result<Box<dyn KindIndex>, DataError>;

/// What [`Kind::read_queries`] gives: a reader of the queries file, or why not.
pub type QueryFile = Result<Box<dyn QueryReader>, DataError>;

/// A kind of data: builds its indexes, reads its query files and opens its indexes.
pub trait Kind: Send + Sync {
    /// What the kind declares of itself.
    fn info(&self) -> &KindInfo;
    /// The name ([`KindInfo::name`]).
    fn name(&self) -> &str {
        self.info().name
    }
    /// The help line ([`KindInfo::about`]).
    fn about(&self) -> &str {
        self.info().about
    }
    /// Whether an index with this metadata holds this kind: by default, when its `kind` field
    /// is this kind's name.
    fn holds(&self, metadata: &Value) -> bool {
        metadata.get("kind").and_then(Value::as_str) == Some(self.name())
    }
    /// The options of its builds ([`KindInfo::build_options`]).
    fn build_options(&self) -> &[OptionSpec] {
        self.info().build_options
    }
    /// The options of its searches ([`KindInfo::search_options`]).
    fn search_options(&self) -> &[OptionSpec] {
        self.info().search_options
    }
    /// The side files an index of this kind keeps beside `index` ([`KindInfo::side_files`]).
    fn side_files(&self, index: &Path) -> Vec<PathBuf> {
        let exts = self.info().side_files;
        exts.iter().map(|ext| side_path(index, ext)).collect()
    }
    /// Builds an index of the input and saves it with its side files.
    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError>;
    /// A reader of a queries file of this kind: by default one query per text line, after the
    /// options are checked against [`Kind::search_options`].
    fn read_queries(&self, path: &Path, options: &Options) -> QueryFile {
        options.check(self.name(), self.search_options())?;
        self.open_queries(path, options)
    }
    /// The reader of [`Kind::read_queries`], its options checked: by default one query per
    /// text line.
    fn open_queries(&self, path: &Path, options: &Options) -> QueryFile {
        let _ = options;
        Ok(Box::new(LineQueries(crate::input::LineReader::open(path)?)))
    }
    /// Opens an index of this kind on a placement.
    fn open(&self, source: &IndexSource, placement: Placement, options: &OpenOptions) -> Opened;
    /// How its objects enter a live index ([`crate::live`]) made from `setup`; by default the
    /// kind takes no writes.
    fn live_objects(&self, setup: &LiveSetup) -> Result<Arc<dyn LiveObjects>, DataError> {
        let _ = setup;
        Err(no_live(self.name()))
    }
    /// The metadata of an empty live index of this kind created with the build `options` (the
    /// server's `PUT`, Python's `Index.create_live`); by default the kind cannot start empty.
    fn live_metadata(&self, options: &Options) -> Result<Value, DataError> {
        let _ = options;
        Err(DataError::Unsupported(format!(
            "an empty live index of {} cannot be created (what its objects become is learned \
             from data): make one from an index file built by `genie build` (`genie serve \
             --writable`, `genie.load(path, writable=True)`), if the kind takes writes",
            self.name()
        )))
    }
}

/// The error of a kind that takes no writes.
pub fn no_live(kind: &str) -> DataError {
    DataError::Unsupported(format!(
        "indexes of {kind} do not take writes: the kind offers no live objects \
         (`Kind::live_objects`)"
    ))
}

/// An index of some kind, resident where it searches, searched through `&self`.
pub trait KindIndex: Send + Sync {
    /// The kind's name.
    fn kind(&self) -> &str;
    /// The number of objects.
    fn num_objects(&self) -> u64;
    /// Where it searches (the backend's name).
    fn backend_name(&self) -> String;
    /// An error naming the first search option that does not apply to this index (an option of
    /// another family of the kind) or whose value cannot work; [`KindIndex::parse`] checks the
    /// same, and front ends call this first to refuse options once, before any query.
    fn check_options(&self, options: &Options) -> Result<(), DataError> {
        let _ = options;
        Ok(())
    }
    /// An error when `filter` cannot apply to this index (a condition on columns of an index
    /// without columns, or one naming a column it lacks); front ends call this before the
    /// search, for a message of their own.
    fn check_filter(&self, filter: &Filter) -> Result<(), DataError> {
        match filter.condition() {
            None => Ok(()),
            Some(_) => Err(no_conditions(self.kind())),
        }
    }
    /// Parses one raw query (a text line as a JSON string, or the kind's JSON form) under the
    /// kind's search options; the error says what was wrong with it.
    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError>;
    /// [`KindIndex::parse`] of a text line (the raw query `Value::String(line)`), for kinds
    /// that read a line without making that string.
    fn parse_line(&self, line: &str, options: &Options) -> Result<Prepared, DataError> {
        self.parse(&Value::String(line.to_owned()), options)
    }
    /// [`KindIndex::parse_vector`] of row `at` of a query file's vectors, which a kind may keep
    /// rather than copy.
    fn parse_row(
        &self,
        rows: &Arc<genie_lsh::VectorSet>,
        at: usize,
        options: &Options,
    ) -> Result<Prepared, DataError> {
        self.parse_vector(rows.row(at), options)
    }
    /// [`KindIndex::parse`] of a vector of finite floats (the raw query, a JSON array of its
    /// numbers), for kinds that take the floats without making that array.
    fn parse_vector(&self, row: &[f32], options: &Options) -> Result<Prepared, DataError> {
        self.parse(&vector_json(row)?, options)
    }
    /// The keyword items a parsed query became (for limits).
    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize;
    /// Searches a batch; one answer per request, in order.
    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError>;
    /// Whether [`KindIndex::search_columns`] answers batches without a `min_count`.
    fn has_columns(&self) -> bool {
        false
    }
    /// Searches a batch straight into columns, for callers that want arrays (the Python
    /// package): row `i` (`k` wide) of `counts` and `ids` gets request `i`'s hits in order; the
    /// rest of the row is left as the caller set it. `Ok(false)`: this kind or batch has no
    /// such path (hits with distances or exactness, a `min_count`), and nothing was written;
    /// the caller then uses [`KindIndex::search`].
    fn search_columns(
        &self,
        batch: &[Request<'_>],
        k: usize,
        counts: &mut [u32],
        ids: &mut [i64],
    ) -> Result<bool, DataError> {
        let _ = (batch, k, counts, ids);
        Ok(false)
    }
    /// Device time per stage since the last call (a GPU), for logs.
    fn take_stage_times(&self) -> Option<StageTimes> {
        None
    }
    /// The GPU it searches on, if any.
    fn gpu_ordinal(&self) -> Option<usize> {
        None
    }
    /// Host milliseconds per stage of the searches since the last call, by name (vectors: hash,
    /// count, rerank), for `genie search -v` and benchmarks.
    fn take_search_stages(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Its writes, for an index that takes them (a live index: [`crate::live`]); `None` for
    /// an index file opened read-only.
    fn writes(&self) -> Option<Arc<dyn Writes>> {
        None
    }
}

/// The error of a request with a filter on an index of a kind that cannot filter.
pub fn no_filters(batch: &[Request<'_>], kind: &str) -> Result<(), DataError> {
    if batch.iter().any(|r| r.filter.is_some()) {
        return Err(DataError::Unsupported(format!(
            "filters are not supported by indexes of {kind} yet"
        )));
    }
    Ok(())
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

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Default for Registry {
    /// The five built-in kinds (and, with the feature `test-kind`, [`letters::Letters`]).
    fn default() -> Self {
        let mut registry = Self {
            kinds: vec![
                Arc::new(keywords::Keywords),
                Arc::new(sequences::Sequences),
                Arc::new(documents::Documents),
                Arc::new(table::Table),
                Arc::new(vectors::Vectors),
            ],
        };
        if cfg!(feature = "test-kind") {
            registry.register(Arc::new(letters::Letters));
        }
        registry
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
            .filter(|k| {
                k.build_options()
                    .iter()
                    .chain(k.search_options())
                    .any(|o| o.name == option)
            })
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

/// A reader of one raw query per text line (keywords, sequences, table rows and conditions).
pub struct LineQueries(pub crate::input::LineReader);

impl QueryReader for LineQueries {
    fn next_query(&mut self) -> Result<Option<Value>, DataError> {
        Ok(self.0.next_line()?.map(|l| Value::String(l.to_string())))
    }

    fn next_block(&mut self, max: usize) -> Result<RawBlock, DataError> {
        Ok(RawBlock::Lines(self.0.next_block(max)?))
    }

    fn location(&self) -> String {
        self.0.location()
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

/// A query vector of `dim` finite numbers from its JSON array.
pub fn vector_query(raw: &Value, dim: usize) -> Result<Vec<f32>, DataError> {
    let Value::Array(values) = raw else {
        return Err(DataError::BadQuery(format!(
            "expected an array of {dim} numbers, found {}",
            kind_of(raw)
        )));
    };
    query_dimension(values.len(), dim)?;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_f64()
                .map(|x| x as f32)
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    DataError::BadQuery(format!(
                        "element {i}: expected a finite 32-bit number, found {v}"
                    ))
                })
        })
        .collect()
}

/// A query vector of finite floats checked against the index's dimension `dim` (the message
/// [`vector_query`] gives).
pub fn vector_row(row: &[f32], dim: usize) -> Result<Vec<f32>, DataError> {
    query_dimension(row.len(), dim)?;
    Ok(row.to_vec())
}

/// A query of dimension `found` for an index of dimension `dim`: refused unless they agree.
fn query_dimension(found: usize, dim: usize) -> Result<(), DataError> {
    if found != dim {
        return Err(DataError::BadQuery(format!(
            "a query of dimension {found}, the index holds vectors of dimension {dim}"
        )));
    }
    Ok(())
}

/// A vector of finite floats as the raw query a request would carry: a JSON array of its numbers.
pub fn vector_json(row: &[f32]) -> Result<Value, DataError> {
    row.iter()
        .map(|&x| serde_json::Number::from_f64(f64::from(x)).map(Value::Number))
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
        .ok_or_else(|| DataError::BadQuery("a vector value is not a finite number".into()))
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
    fn a_kind_names_the_side_files_its_library_writes() {
        let p = Path::new("x.genie");
        assert_eq!(
            vectors::Vectors.side_files(p),
            [
                genie_lsh::index::vectors_path(p),
                genie_lsh::codebook::index::codebook_path(p)
            ]
        );
        assert_eq!(
            documents::Documents.side_files(p),
            [PathBuf::from("x.genie.words")]
        );
        assert_eq!(
            sequences::Sequences.side_files(p),
            [PathBuf::from("x.genie.seqs")]
        );
        assert!(table::Table.side_files(p).is_empty());
    }

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
    fn side_data_is_loaded_once_for_every_replica() {
        let source = IndexSource::new(PathBuf::from("x.genie"), None, Value::Null);
        let loads = std::sync::atomic::AtomicUsize::new(0);
        let load = || {
            loads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok(vec![1u32, 2, 3])
        };
        // replicas opening at once, on threads of their own
        let got: Vec<Arc<Vec<u32>>> = std::thread::scope(|s| {
            let running: Vec<_> = (0..4)
                .map(|_| s.spawn(|| source.shared("data", load).expect("loaded")))
                .collect();
            running
                .into_iter()
                .map(|h| h.join().expect("joined"))
                .collect()
        });
        assert_eq!(loads.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(got.iter().all(|g| Arc::ptr_eq(g, &got[0])));
        // a failed load is not kept; another name is another load; a type mismatch is an error
        let failed: Result<Arc<u8>, _> =
            source.shared("other", || Err(DataError::Unsupported("no".into())));
        assert!(failed.is_err());
        assert_eq!(*source.shared("other", || Ok(7u8)).expect("again"), 7);
        assert!(source.shared("data", || Ok(0u8)).is_err());
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
}
