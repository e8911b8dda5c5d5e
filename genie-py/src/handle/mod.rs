//! [`Handle`]: an index of any kind, as the `genie` program opens it ([`genie::open`]): loaded
//! from a file or built in memory, or a live index ([`genie::live`]) that takes writes; placed
//! on a device the first time a search asks for it (one placement per device, kept), searched
//! with the GIL released, by as many Python threads at once as like. A placement is served by a
//! [`Service`], as `genie serve` and `genie search` serve theirs: a search hands its chunks to it
//! whole ([`Service::run_whole`]), each request carrying the search's filter
//! ([`Request::filter`]), and the searches of several Python threads share its runners.

use crate::arrays::{answer_arrays, answer_lines, rows, Ints};
use crate::errors::{to_py, value_error};
use genie::core::{DeviceChoice, Item, Query};
use genie::data_error::DataError;
use genie::kind::{Answer, Filter, Kind, KindIndex, Options, Prepared, Registry, Request};
use genie::live::{place_live, LiveConfig, LiveIndex, Manifest, MANIFEST};
use genie::open::{self, Loaded, OpenSpec};
use genie::service::{BatchPolicy, SearchError, Service};
use numpy::{IntoPyArray, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

/// Queries searched at once: the `genie search --batch-queries` default (each batch is split
/// further into batches that fit the device).
const CHUNK: usize = 65_536;

mod inner;
pub use inner::options_of;
use inner::*;

/// What a handle searches.
enum Source {
    /// An index file, or an index built in memory.
    Loaded(Loaded),
    /// A live index: a folder of segments and a write-ahead log.
    Live(Arc<LiveIndex>),
}

/// An index of any kind, placed on devices as searches ask for them.
#[pyclass(frozen, module = "genie._genie")]
pub struct Handle {
    /// The index (`None` once closed).
    source: RwLock<Option<Source>>,
    /// Its kind.
    kind: Arc<dyn Kind>,
    /// Its metadata.
    metadata: Value,
    /// The index file or live index folder (for an index built in memory, the name given).
    path: PathBuf,
    /// Built in memory, not read from a file (saved by writing it).
    in_memory: bool,
    /// A live index.
    live: bool,
    /// A live index opened to take writes.
    writable: bool,
    /// The placements so far, by device, each served by its own [`Service`].
    placed: Mutex<Vec<(String, Service)>>,
    /// Where the last search's time went, in milliseconds, by stage (see `last_timings`).
    timings: Mutex<Vec<(&'static str, f64)>>,
}

/// The device choice of a `device` argument (`None`: the `GENIE_DEVICE` environment variable,
/// else `auto`, as in the `genie` program), with the GPU to use: `gpu:N` is GPU N, `gpu` and
/// `auto` GPU 0.
fn spec_of(device: Option<&str>) -> Result<OpenSpec, DataError> {
    let (device, ordinal) = match device {
        None => (DeviceChoice::from_env()?, None),
        Some(d) => match d.strip_prefix("gpu:") {
            Some(n) => {
                let n = n.parse::<usize>().map_err(|_| DataError::BadOption {
                    name: "device".into(),
                    message: format!("expected auto, cpu, gpu or gpu:N, found {d:?}"),
                })?;
                (DeviceChoice::Gpu, Some(n))
            }
            None => (d.parse::<DeviceChoice>()?, None),
        },
    };
    let devices = match device {
        DeviceChoice::Cpu => None,
        _ => Some(vec![ordinal.unwrap_or(0)]),
    };
    Ok(OpenSpec {
        device,
        devices,
        ..OpenSpec::default()
    })
}

/// The error of a closed index.
fn closed() -> DataError {
    DataError::Unsupported("the index is closed".into())
}

/// How long [`Handle::close`] waits for the background work of a live index (a flush or merge
/// under way) to let go of its files.
const RELEASE_WAIT: Duration = Duration::from_secs(60);

/// The largest id an object added from Python may have: answers give ids as int64.
const MAX_ID: u64 = i64::MAX as u64;

#[pymethods]
impl Handle {
    /// Opens an index: a file written by `genie build` or `save` (memory-mapped and checked, as
    /// `genie search` does), or a live index folder. `writable`: take writes; for an index file,
    /// its live index `PATH.live` (made on first use with the file as its first segment, as
    /// `genie serve --writable` does).
    #[staticmethod]
    #[pyo3(signature = (path, writable=false))]
    fn load(py: Python<'_>, path: PathBuf, writable: bool) -> PyResult<Self> {
        py.detach(|| {
            let registry = Registry::default();
            if LiveIndex::is_live(&path) {
                let live = LiveIndex::open_with(&registry, &path, LiveConfig::default())?;
                return Self::of_live(live, writable);
            }
            if path.is_dir() {
                return Err(DataError::File {
                    path: path.clone(),
                    message: format!(
                        "a folder that holds no live index (no {MANIFEST}); expected an index \
                         file or a live index folder"
                    ),
                });
            }
            if writable {
                let live = LiveIndex::open_file(&registry, &path, LiveConfig::default())?;
                return Self::of_live(live, true);
            }
            Ok(Self::new(open::load(&registry, &path)?, false))
        })
        .map_err(to_py)
    }

    /// Creates an empty live index of `kind` in the folder `path` (made if missing; it must not
    /// hold a live index already), open for writes.
    #[staticmethod]
    #[pyo3(signature = (path, kind="keywords", options="{}"))]
    fn create_live(py: Python<'_>, path: PathBuf, kind: &str, options: &str) -> PyResult<Self> {
        py.detach(|| {
            let options = options_of(options)?;
            let live = LiveIndex::create_with(
                &Registry::default(),
                &path,
                kind,
                &options,
                LiveConfig::default(),
            )?;
            Self::of_live(live, true)
        })
        .map_err(to_py)
    }

    /// The index of keyword objects of a CSR pair (object `i` is
    /// `keywords[offsets[i]:offsets[i + 1]]`); `name` stands for the input in the metadata and
    /// in messages.
    #[staticmethod]
    fn from_csr(
        py: Python<'_>,
        offsets: &Bound<'_, PyAny>,
        keywords: &Bound<'_, PyAny>,
        name: String,
    ) -> PyResult<Self> {
        let offsets = Ints::of(offsets, "offsets")?;
        let keywords = Ints::of(keywords, "keywords")?;
        let offsets = offsets.as_u64("offsets", "offset")?;
        let keywords = keywords.as_u32("keywords", "keyword")?;
        let loaded = py
            .detach(|| {
                let index = genie::kind::keywords::build_csr(&offsets, &keywords, &name)?;
                open::in_memory(&Registry::default(), index, Path::new(&name))
            })
            .map_err(to_py)?;
        Ok(Self::new(loaded, true))
    }

    /// The kind of data the index holds (`keywords`, `vectors`, `sequences`, `documents`,
    /// `table`).
    #[getter]
    fn kind(&self) -> String {
        self.kind.name().to_string()
    }

    /// The index's metadata, as JSON text.
    #[getter]
    fn metadata(&self) -> String {
        self.metadata.to_string()
    }

    /// The index file or live index folder (for an index built in memory, the name given).
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether it is a live index.
    #[getter]
    fn live(&self) -> bool {
        self.live
    }

    /// Whether it takes writes (a live index opened writable).
    #[getter]
    fn writable(&self) -> bool {
        self.writable
    }

    /// Whether it is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.source
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// The number of objects (a live index's live objects; `None` for a parted index not yet
    /// placed).
    #[getter]
    fn num_objects(&self) -> PyResult<Option<u64>> {
        let placed = || {
            self.placed
                .lock()
                .ok()?
                .first()
                .and_then(|(_, s)| s.index(NAME).ok().map(|i| i.num_objects()))
        };
        self.with_source(|source| {
            Ok(match source {
                Source::Live(live) => Some(live.live_objects()),
                Source::Loaded(loaded) => match &loaded.source.index {
                    Some(index) => Some(u64::from(index.num_objects())),
                    None => placed(),
                },
            })
        })
        .map_err(to_py)
    }

    /// The search options the kind takes.
    #[getter]
    fn search_options(&self) -> Vec<String> {
        let options = self.kind.search_options();
        options.iter().map(|s| s.name.to_string()).collect()
    }

    /// Where a search on `device` runs (placing the index there if it is not yet).
    #[pyo3(signature = (device=None))]
    fn backend(&self, py: Python<'_>, device: Option<&str>) -> PyResult<String> {
        py.detach(|| {
            let service = self.placed(device)?;
            Ok(service.index(NAME).map_err(from_service)?.backend_name())
        })
        .map_err(to_py)
    }

    /// Where the last search on this index spent its time, in milliseconds: `parse` (the
    /// queries read into the engine's form), `search` (the engine), `output` (the answers made
    /// arrays), and on a GPU the device's stages (`device_match`, ...) and the host's around
    /// them (`host_plan`, ...). With searches from several threads at once, the last to end.
    fn last_timings(&self) -> Vec<(&'static str, f64)> {
        self.timings.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Searches keyword queries given as a CSR of items: query `i` is the items
    /// `offsets[i]:offsets[i + 1]` of `lo`, `hi` and `weight`. Every search takes `filter` (a
    /// 1-D integer array: only the objects of these ids) and `exclude` (never these), applied
    /// before the top-k.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (offsets, lo, hi, weight, k, min_count=None, device=None, json=false,
                        filter=None, exclude=None, condition=None))]
    fn search_items<'py>(
        &self,
        py: Python<'py>,
        offsets: &Bound<'py, PyAny>,
        lo: &Bound<'py, PyAny>,
        hi: &Bound<'py, PyAny>,
        weight: &Bound<'py, PyAny>,
        k: u64,
        min_count: Option<u32>,
        device: Option<&str>,
        json: bool,
        filter: Option<&Bound<'py, PyAny>>,
        exclude: Option<&Bound<'py, PyAny>>,
        condition: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = filter_of(filter, exclude, condition)?;
        let (o, l, h, w) = (
            Ints::of(offsets, "offsets")?,
            Ints::of(lo, "lo")?,
            Ints::of(hi, "hi")?,
            Ints::of(weight, "weight")?,
        );
        let offsets = o.as_u64("offsets", "offset")?;
        let (lo, hi, weight) = (
            l.as_u32("lo", "item")?,
            h.as_u32("hi", "item")?,
            w.as_u32("weight", "item")?,
        );
        let items = lo.len();
        if hi.len() != items || weight.len() != items {
            return Err(value_error(format!(
                "lo, hi and weight differ in length ({items}, {}, {})",
                hi.len(),
                weight.len()
            )));
        }
        let n = offsets.len().saturating_sub(1);
        if !offsets.is_empty() || items > 0 {
            check_offsets(&offsets, items, "items")?;
        }
        let (offsets, lo, hi, weight) = (&offsets[..], &lo[..], &hi[..], &weight[..]);
        let parse = |_: &dyn KindIndex, i: usize| -> Result<Prepared, DataError> {
            let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
            let items = (a..b)
                .map(|j| {
                    Item::new(lo[j], hi[j], weight[j]).map_err(|e| {
                        at_query(i, DataError::BadQuery(format!("item {}: {e}", j - a)))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Box::new(Query { items }))
        };
        self.search_out(py, n, parse, k, min_count, filter, device, json)
    }

    /// Searches queries in the kind's raw form, as JSON texts (a keyword line `"7 10-20 3:2"` is
    /// `"\"7 10-20 3:2\""`; a sequence, document or table row is a JSON string), under the
    /// kind's search options (JSON text of an object).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (queries, k, min_count=None, device=None, options="", json=false,
                        filter=None, exclude=None, condition=None))]
    fn search_json<'py>(
        &self,
        py: Python<'py>,
        queries: Vec<String>,
        k: u64,
        min_count: Option<u32>,
        device: Option<&str>,
        options: &str,
        json: bool,
        filter: Option<&Bound<'py, PyAny>>,
        exclude: Option<&Bound<'py, PyAny>>,
        condition: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = filter_of(filter, exclude, condition)?;
        let raw = |i: usize| {
            serde_json::from_str(&queries[i]).map_err(|e| DataError::BadQuery(e.to_string()))
        };
        let n = queries.len();
        self.search_raw(py, n, raw, k, min_count, filter, device, options, json)
    }

    /// Searches texts (sequences, documents, table rows or conditions, keyword lines), one query
    /// each, under the kind's search options (JSON text of an object).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (queries, k, min_count=None, device=None, options="", json=false,
                        filter=None, exclude=None, condition=None))]
    fn search_texts<'py>(
        &self,
        py: Python<'py>,
        queries: Vec<String>,
        k: u64,
        min_count: Option<u32>,
        device: Option<&str>,
        options: &str,
        json: bool,
        filter: Option<&Bound<'py, PyAny>>,
        exclude: Option<&Bound<'py, PyAny>>,
        condition: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = filter_of(filter, exclude, condition)?;
        let raw = |i: usize| Ok(Value::String(queries[i].clone()));
        let n = queries.len();
        self.search_raw(py, n, raw, k, min_count, filter, device, options, json)
    }

    /// Searches query vectors, the rows of a 2-D float32 array, under the kind's search options.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (queries, k, min_count=None, device=None, options="", json=false,
                        filter=None, exclude=None, condition=None))]
    fn search_vectors<'py>(
        &self,
        py: Python<'py>,
        queries: PyReadonlyArray2<'py, f32>,
        k: u64,
        min_count: Option<u32>,
        device: Option<&str>,
        options: &str,
        json: bool,
        filter: Option<&Bound<'py, PyAny>>,
        exclude: Option<&Bound<'py, PyAny>>,
        condition: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = filter_of(filter, exclude, condition)?;
        let options = options_of(options).map_err(to_py)?;
        let (n, dim) = (queries.shape()[0], queries.shape()[1]);
        // the rows read in place when the array is in C order, else copied once
        let owned;
        let data: &[f32] = match queries.as_slice() {
            Ok(s) => s,
            Err(_) => {
                owned = queries.as_array().iter().copied().collect::<Vec<f32>>();
                &owned
            }
        };
        let parse = |index: &dyn KindIndex, i: usize| -> Result<Prepared, DataError> {
            let row = &data[i * dim..(i + 1) * dim];
            // JSON has no NaN or infinity: such an element is named here, not as a JSON null
            if let Some((j, x)) = row.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                return Err(DataError::BadQuery(format!(
                    "queries[{i}]: element {j} is {x}; expected a finite number"
                )));
            }
            let raw = Value::Array(
                row.iter()
                    .filter_map(|&x| serde_json::Number::from_f64(f64::from(x)))
                    .map(Value::Number)
                    .collect(),
            );
            index.parse(&raw, &options).map_err(|e| at_query(i, e))
        };
        self.search_out(py, n, parse, k, min_count, filter, device, json)
    }

    /// Adds keyword objects to a live index opened writable, or replaces those of ids it holds:
    /// the CSR `(offsets, keywords)` (object `i` is `keywords[offsets[i]:offsets[i + 1]]`) with
    /// one id each (`ids`, below 2^63). Returns the objects written, once they are in the log on
    /// disk. The GIL is released while they are written.
    fn add_csr(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        offsets: &Bound<'_, PyAny>,
        keywords: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        let live = self.writer().map_err(to_py)?;
        let (o, kw) = (
            Ints::of(offsets, "offsets")?,
            Ints::of(keywords, "keywords")?,
        );
        let offsets = o.as_u64("offsets", "offset")?;
        let keywords = kw.as_u32("keywords", "keyword")?;
        check_offsets(&offsets, keywords.len(), "keywords")?;
        let ids = object_ids(ids, offsets.len() - 1)?;
        let (offsets, keywords) = (&offsets[..], &keywords[..]);
        py.detach(|| {
            let objects: Vec<Vec<u32>> = offsets
                .par_windows(2)
                .map(|w| keywords[w[0] as usize..w[1] as usize].to_vec())
                .collect();
            live.add_keywords(&ids, objects)
        })
        .map_err(to_py)
    }

    /// [`Handle::add_csr`] of objects given as keyword lines (`"3 17 40"`, as `genie add`
    /// reads them).
    fn add_lines(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        lines: Vec<String>,
    ) -> PyResult<u64> {
        let live = self.writer().map_err(to_py)?;
        let ids = object_ids(ids, lines.len())?;
        py.detach(|| {
            let objects: Vec<Value> = lines.into_iter().map(Value::String).collect();
            live.add(&ids, &objects)
        })
        .map_err(to_py)
    }

    /// Adds vectors, the rows of a 2-D float32 array, with the ids `ids`, to a live vector
    /// index opened for writes.
    fn add_vectors<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        vectors: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<u64> {
        let live = self.writer().map_err(to_py)?;
        let (n, dim) = (vectors.shape()[0], vectors.shape()[1]);
        let ids = object_ids(ids, n)?;
        let data: Vec<f32> = match vectors.as_slice() {
            Ok(s) => s.to_vec(),
            Err(_) => vectors.as_array().iter().copied().collect(),
        };
        py.detach(|| {
            let objects = (0..n)
                .map(|i| {
                    let row = &data[i * dim..(i + 1) * dim];
                    if let Some((j, x)) = row.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                        return Err(DataError::BadQuery(format!(
                            "x[{i}]: element {j} is {x}; expected a finite number"
                        )));
                    }
                    Ok(Value::Array(
                        row.iter()
                            .filter_map(|&x| serde_json::Number::from_f64(f64::from(x)))
                            .map(Value::Number)
                            .collect(),
                    ))
                })
                .collect::<Result<Vec<_>, _>>()?;
            live.add(&ids, &objects)
        })
        .map_err(to_py)
    }

    /// Adds objects given as a JSON array in the kind's query form (table rows as objects by
    /// column), with the ids `ids`, to a live index opened for writes.
    fn add_json(&self, py: Python<'_>, ids: &Bound<'_, PyAny>, objects: &str) -> PyResult<u64> {
        let live = self.writer().map_err(to_py)?;
        let objects: Vec<Value> = serde_json::from_str(objects)
            .map_err(|e| to_py(DataError::BadQuery(format!("objects: {e}"))))?;
        let ids = object_ids(ids, objects.len())?;
        py.detach(|| live.add(&ids, &objects)).map_err(to_py)
    }

    /// Deletes the objects of `ids` (a 1-D integer array; ids of no object are skipped) from a
    /// live index opened writable; returns how many there were, once the deletes are in the log
    /// on disk.
    fn delete(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<u64> {
        let live = self.writer().map_err(to_py)?;
        let ids = Ints::of(ids, "ids")?.as_u64("ids", "id")?.into_owned();
        py.detach(|| live.delete(&ids)).map_err(to_py)
    }

    /// Writes a live index's objects and deletes to its segment files and starts a new log.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let live = self.writer().map_err(to_py)?;
        py.detach(|| live.flush()).map_err(to_py)
    }

    /// Flushes a live index, then merges all its segments into one (deleted objects dropped).
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        let live = self.writer().map_err(to_py)?;
        py.detach(|| live.compact()).map_err(to_py)
    }

    /// A live index's counters: `written`, `deleted`, `segments`, `live_objects`, `flushes`,
    /// `merges`, `log_syncs`.
    fn live_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.live_index().map_err(to_py)?.stats();
        let d = PyDict::new(py);
        d.set_item("written", s.written)?;
        d.set_item("deleted", s.deleted)?;
        d.set_item("segments", s.segments)?;
        d.set_item("live_objects", s.live_objects)?;
        d.set_item("flushes", s.flushes)?;
        d.set_item("merges", s.merges)?;
        d.set_item("log_syncs", s.log_syncs)?;
        d.set_item("crowded", s.crowded)?;
        Ok(d)
    }

    /// Closes the index: its searches' services stop (after the searches under way) and its
    /// files are let go (a live index's log, so that it can be opened again); every later call
    /// but `close` raises ValueError. A live index keeps every acknowledged write in its log.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.release());
    }

    /// Saves the index to `path` with its side files: the files `genie build` writes (an index
    /// built in memory is written; one read from a file is copied with its side files).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| {
            self.with_source(|source| match source {
                Source::Loaded(loaded) => save(loaded, self.in_memory, &path),
                Source::Live(live) => Err(DataError::Unsupported(format!(
                    "{}: a live index is its folder, written as it changes (flush() writes \
                     what is in its log to its segments, compact() merges them into one)",
                    live.dir().display()
                ))),
            })
        })
        .map_err(to_py)
    }

    fn __repr__(&self) -> String {
        let objects = match self.num_objects() {
            Ok(Some(n)) => format!("{n} objects"),
            Ok(None) => "? objects".into(),
            Err(_) => "closed".into(),
        };
        format!(
            "<genie {}index of {} ({objects}) at {}>",
            if self.live { "live " } else { "" },
            self.kind.name(),
            self.path.display()
        )
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.release();
    }
}

/// Writes `loaded` to `path`: the core index (built in memory), or a copy of its file and side
/// files.
fn save(loaded: &Loaded, in_memory: bool, path: &Path) -> Result<(), DataError> {
    let source = &loaded.source;
    if in_memory {
        let Some(index) = &source.index else {
            return Err(DataError::Unsupported(
                "an index in memory without its data".into(),
            ));
        };
        return Ok(index.save(path)?);
    }
    if source.index.is_none() {
        return Err(DataError::Unsupported(format!(
            "{}: a parted index is written by genie build --parts",
            source.path.display()
        )));
    }
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same(&source.path, path) {
        return Ok(());
    }
    let copy = |from: &Path, to: &Path| {
        std::fs::copy(from, to)
            .map(|_| ())
            .map_err(|error| DataError::Io {
                path: to.to_path_buf(),
                error,
            })
    };
    copy(&source.path, path)?;
    let kind = &loaded.kind;
    for (from, to) in kind
        .side_files(&source.path)
        .iter()
        .zip(kind.side_files(path))
    {
        if from.exists() {
            copy(from, &to)?;
        }
    }
    Ok(())
}
