//! `genie._genie`: the extension module of the Python package `genie`, a thin front end of the
//! genie library (the one the `genie` program and its server are front ends of). It holds an
//! index handle ([`handle::Handle`]) and the library's build and query readers; the pure-Python
//! part of the package (genie-py/python/genie) gives them the API Python users know.

mod arrays;
mod errors;
mod handle;
mod merge;

/// The extension's allocator (see the note in Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use errors::to_py;
use genie::core::Query;
use genie::data_error::DataError;
use genie::kind::{keywords::parse_keyword_query, BuildJob, Registry};
use numpy::ndarray::Array2;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

/// Builds an index of kind `kind` from the file `input` into `output` (with its side files), as
/// `genie build` does, under the kind's build options (JSON text of an object; its `postings`,
/// `plain` or `packed`, is `genie build --postings`). Returns the build's summary line and its
/// side files.
#[pyfunction]
#[pyo3(signature = (kind, input, output, options=""))]
fn build(
    py: Python<'_>,
    kind: &str,
    input: PathBuf,
    output: PathBuf,
    options: &str,
) -> PyResult<(String, Vec<PathBuf>)> {
    let (options, form) = split_postings(options).map_err(to_py)?;
    let options = handle::options_of(&options).map_err(to_py)?;
    py.detach(|| {
        let kind = Registry::default().get(kind)?.clone();
        let job = BuildJob {
            input: &input,
            output: &output,
            options: &options,
            progress: &|_| {},
        };
        let report = kind.build(&job)?;
        genie::kind::store_list_arrays(&output, form)?;
        Ok::<_, DataError>((report.summary, report.side_files))
    })
    .map_err(to_py)
}

/// The build options without their `postings` (not a kind's option), and the form it names.
fn split_postings(options: &str) -> Result<(String, genie::kind::ListForm), DataError> {
    if options.trim().is_empty() {
        return Ok((String::new(), Default::default()));
    }
    let mut value: Value = serde_json::from_str(options).map_err(|e| DataError::BadOption {
        name: "options".into(),
        message: e.to_string(),
    })?;
    // a value that is no string is refused by the form's own parse, as its JSON text
    let form = match value.as_object_mut().and_then(|o| o.remove("postings")) {
        None | Some(Value::Null) => Default::default(),
        Some(Value::String(s)) => s.parse()?,
        Some(other) => other.to_string().parse()?,
    };
    Ok((value.to_string(), form))
}

/// Reads a queries file of kind `kind` as `genie search` does: keyword queries as a CSR of items
/// `(offsets, lo, hi, weight)` (uint64 and uint32 arrays), vectors as a 2-D float32 array, the
/// other kinds as a list of texts. Errors name the file and line.
#[pyfunction]
#[pyo3(signature = (kind, path, options=""))]
fn read_queries<'py>(
    py: Python<'py>,
    kind: &str,
    path: PathBuf,
    options: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let options = handle::options_of(options).map_err(to_py)?;
    let read = py.detach(|| -> Result<Read, DataError> {
        let kind = Registry::default().get(kind)?.clone();
        let mut reader = kind.read_queries(&path, &options)?;
        let keywords = kind.name() == "keywords";
        let (mut items, mut raw) = (Vec::new(), Vec::new());
        while let Some(q) = reader.next_query()? {
            if keywords {
                let query = parse_keyword_query(&q)
                    .map_err(|e| DataError::BadQuery(format!("{}: {e}", reader.location())))?;
                items.push(query);
            } else {
                raw.push(q);
            }
        }
        Ok(if keywords {
            Read::Keywords(items)
        } else {
            Read::Raw(raw)
        })
    });
    read.map_err(to_py)?.into_python(py)
}

/// Queries read from a file.
enum Read {
    /// Keyword queries.
    Keywords(Vec<Query>),
    /// Raw queries of another kind.
    Raw(Vec<Value>),
}

impl Read {
    fn into_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let raw = match self {
            Self::Keywords(queries) => {
                let mut offsets = vec![0u64];
                let (mut lo, mut hi, mut weight) = (Vec::new(), Vec::new(), Vec::new());
                for q in &queries {
                    for item in &q.items {
                        lo.push(item.lo);
                        hi.push(item.hi);
                        weight.push(item.weight);
                    }
                    offsets.push(lo.len() as u64);
                }
                let arrays = (
                    offsets.into_pyarray(py),
                    lo.into_pyarray(py),
                    hi.into_pyarray(py),
                    weight.into_pyarray(py),
                );
                return Ok(arrays.into_pyobject(py)?.into_any());
            }
            Self::Raw(raw) => raw,
        };
        if let Some(Value::Array(first)) = raw.first() {
            let dim = first.len();
            let mut data = Vec::with_capacity(dim * raw.len());
            for v in &raw {
                let row = v.as_array().into_iter().flatten();
                data.extend(row.map(|x| x.as_f64().unwrap_or(f64::NAN) as f32));
            }
            let array = Array2::from_shape_vec((raw.len(), dim), data).map_err(|e| {
                errors::value_error(format!("query vectors of unequal dimension: {e}"))
            })?;
            return Ok(array.into_pyarray(py).into_any());
        }
        let texts: Vec<String> = raw
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect();
        Ok(texts.into_pyobject(py)?.into_any())
    }
}

/// The names of the kinds this genie knows.
#[pyfunction]
fn kinds() -> Vec<String> {
    Registry::default()
        .names()
        .into_iter()
        .map(String::from)
        .collect()
}

/// The extension module.
#[pymodule]
fn _genie(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<handle::Handle>()?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    m.add_function(wrap_pyfunction!(read_queries, m)?)?;
    m.add_function(wrap_pyfunction!(kinds, m)?)?;
    m.add_function(wrap_pyfunction!(merge::merge_counts, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
