//! NumPy arrays in and out. Integer inputs are read in place where their type allows (uint64 or
//! non-negative int64 offsets, uint32 or non-negative int32 keywords, in C order), else
//! converted with a range check; answers come out as `(nq, k)` arrays.

use crate::errors::value_error;
use genie::kind::Answer;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;
use std::borrow::Cow;

/// A 1-D integer array of one of the types genie takes.
pub enum Ints<'py> {
    /// uint32
    U32(PyReadonlyArray1<'py, u32>),
    /// int32
    I32(PyReadonlyArray1<'py, i32>),
    /// uint64
    U64(PyReadonlyArray1<'py, u64>),
    /// int64
    I64(PyReadonlyArray1<'py, i64>),
}

impl<'py> Ints<'py> {
    /// The array `a` (`what` names it in errors): a 1-D NumPy array of uint32, int32, uint64 or
    /// int64.
    pub fn of(a: &Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        if let Ok(x) = a.extract::<PyReadonlyArray1<'py, u32>>() {
            return Ok(Self::U32(x));
        }
        if let Ok(x) = a.extract::<PyReadonlyArray1<'py, i32>>() {
            return Ok(Self::I32(x));
        }
        if let Ok(x) = a.extract::<PyReadonlyArray1<'py, u64>>() {
            return Ok(Self::U64(x));
        }
        if let Ok(x) = a.extract::<PyReadonlyArray1<'py, i64>>() {
            return Ok(Self::I64(x));
        }
        Err(value_error(format!(
            "{what}: expected a 1-D array of uint32, int32, uint64 or int64"
        )))
    }

    /// The values as i128, for checks and conversions.
    fn values(&self) -> Vec<i128> {
        match self {
            Self::U32(x) => x.as_array().iter().map(|&v| i128::from(v)).collect(),
            Self::I32(x) => x.as_array().iter().map(|&v| i128::from(v)).collect(),
            Self::U64(x) => x.as_array().iter().map(|&v| i128::from(v)).collect(),
            Self::I64(x) => x.as_array().iter().map(|&v| i128::from(v)).collect(),
        }
    }

    /// The values as u64 (in place for uint64 and non-negative int64 in C order); `what` and
    /// `noun` name them in errors (`offset 3 is -1: expected ...`).
    pub fn as_u64(&self, what: &str, noun: &str) -> PyResult<Cow<'_, [u64]>> {
        let in_place = match self {
            Self::U64(x) => x.as_slice().ok().map(Cow::Borrowed),
            Self::I64(x) => x
                .as_slice()
                .ok()
                .filter(|s| s.iter().all(|&v| v >= 0))
                .map(|s| Cow::Borrowed(bytemuck::cast_slice(s))),
            _ => None,
        };
        match in_place {
            Some(s) => Ok(s),
            None => self
                .converted(what, noun, "an unsigned 64-bit integer".into())
                .map(Cow::Owned),
        }
    }

    /// The values as u32 (in place for uint32 and non-negative int32 in C order), each checked
    /// to be an unsigned 32-bit integer.
    pub fn as_u32(&self, what: &str, noun: &str) -> PyResult<Cow<'_, [u32]>> {
        let in_place = match self {
            Self::U32(x) => x.as_slice().ok().map(Cow::Borrowed),
            Self::I32(x) => x
                .as_slice()
                .ok()
                .filter(|s| s.iter().all(|&v| v >= 0))
                .map(|s| Cow::Borrowed(bytemuck::cast_slice(s))),
            _ => None,
        };
        match in_place {
            Some(s) => Ok(s),
            None => {
                let expected = format!("an unsigned 32-bit integer (0 to {})", u32::MAX);
                self.converted(what, noun, expected).map(Cow::Owned)
            }
        }
    }

    /// The values converted one by one to `T`; the first that does not fit is named
    /// (`{what}: {noun} {i} is {v}: expected {expected}`).
    fn converted<T: TryFrom<i128>>(
        &self,
        what: &str,
        noun: &str,
        expected: String,
    ) -> PyResult<Vec<T>> {
        self.values()
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                T::try_from(v).map_err(|_| {
                    value_error(format!("{what}: {noun} {i} is {v}: expected {expected}"))
                })
            })
            .collect()
    }
}

/// The answers as NumPy arrays of shape `(nq, k)`: `(counts, ids, distances, exact)`: counts
/// uint32 (0 where there is no hit), ids int64 (-1 where there is none), distances float64
/// (`inf` where there is none; `None` for kinds without a distance) and per query whether the
/// hits are proven exact (`None` for kinds other than sequences).
pub fn answer_arrays<'py>(
    py: Python<'py>,
    answers: &[Answer],
    k: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    let nq = answers.len();
    let (mut counts, mut ids) = (vec![0u32; nq * k], vec![-1i64; nq * k]);
    let has_distance = answers
        .iter()
        .any(|a| a.hits.iter().any(|h| h.distance.is_some()));
    let mut distances = vec![f64::INFINITY; if has_distance { nq * k } else { 0 }];
    if k > 0 {
        counts
            .par_chunks_mut(k)
            .zip(ids.par_chunks_mut(k))
            .zip(answers.par_iter())
            .for_each(|((c, i), a)| {
                for (j, h) in a.hits.iter().take(k).enumerate() {
                    c[j] = h.count;
                    i[j] = h.id as i64;
                }
            });
        if has_distance {
            distances
                .par_chunks_mut(k)
                .zip(answers.par_iter())
                .for_each(|(d, a)| {
                    for (j, h) in a.hits.iter().take(k).enumerate() {
                        d[j] = h.distance.unwrap_or(f64::INFINITY);
                    }
                });
        }
    }
    let exact: Option<Vec<bool>> = answers
        .iter()
        .map(|a| a.exact)
        .collect::<Option<Vec<bool>>>()
        .filter(|_| answers.iter().any(|a| a.exact.is_some()));
    let distances = if has_distance {
        Some(rows(nq, k, distances)?.into_pyarray(py))
    } else {
        None
    };
    (
        rows(nq, k, counts)?.into_pyarray(py),
        rows(nq, k, ids)?.into_pyarray(py),
        distances,
        exact,
    )
        .into_pyobject(py)
}

/// `v` as an `nq x k` array, row by row.
pub fn rows<T>(nq: usize, k: usize, v: Vec<T>) -> PyResult<Array2<T>> {
    Array2::from_shape_vec((nq, k), v).map_err(|e| value_error(e.to_string()))
}

/// The answers as the JSON lines `genie search` writes (without the line ends), the first being
/// query `first`.
pub fn answer_lines(answers: &[Answer], first: u64) -> Vec<String> {
    let mut lines = Vec::with_capacity(answers.len());
    let mut buf = Vec::new();
    for (q, a) in (first..).zip(answers) {
        buf.clear();
        a.push_json(&mut buf, q);
        buf.pop();
        lines.push(String::from_utf8_lossy(&buf).into_owned());
    }
    lines
}
