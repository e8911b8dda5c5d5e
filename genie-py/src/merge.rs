//! The exact top-k of several shards' answers by match count, for `genie.dask`: each query's hits
//! of every shard gathered, cut to the `k` best (count descending, then id ascending; id `-1` is
//! no hit and sorts last), the queries on all cores with the GIL released. A shard's rows need not
//! be in order: a shard of several runs of global ids ties its counts in local order.

use crate::errors::value_error;
use numpy::ndarray::{Array2, ArrayView2};
use numpy::{IntoPyArray, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::prelude::*;
use rayon::prelude::*;

/// One shard's answers: `(counts, ids)`, each `(nq, width)`.
type Part<'a> = (ArrayView2<'a, u32>, ArrayView2<'a, i64>);

/// The merged `(counts, ids)` as NumPy arrays.
type Merged<'py> = (Bound<'py, PyArray2<u32>>, Bound<'py, PyArray2<i64>>);

/// Queries merged by one task: enough to spread a chunk's queries over the cores.
const QUERIES_A_TASK: usize = 256;

/// The exact top-`k` of the shards' answers `(counts, ids)` (`counts`: uint32, `ids`: int64, each
/// `(nq, width)`, the width may differ between shards): `(counts, ids)` of shape `(nq, k)`, padded
/// with count 0 and id -1 where the shards hold fewer than `k` hits together.
#[pyfunction]
pub fn merge_counts<'py>(
    py: Python<'py>,
    counts: Vec<PyReadonlyArray2<'py, u32>>,
    ids: Vec<PyReadonlyArray2<'py, i64>>,
    k: usize,
) -> PyResult<Merged<'py>> {
    if counts.is_empty() || counts.len() != ids.len() {
        return Err(value_error(format!(
            "merge_counts: {} count arrays and {} id arrays; expected as many of each, at least one",
            counts.len(),
            ids.len()
        )));
    }
    let nq = counts[0].as_array().nrows();
    let mut parts: Vec<Part<'_>> = Vec::with_capacity(counts.len());
    for (s, (c, i)) in counts.iter().zip(&ids).enumerate() {
        if !aligned(c.data()) || !aligned(i.data()) {
            return Err(value_error(format!(
                "merge_counts: shard {s}'s arrays are not aligned; expected aligned arrays \
                 (numpy.require(a, requirements='CA'))"
            )));
        }
        let (c, i) = (c.as_array(), i.as_array());
        if c.dim() != i.dim() || c.nrows() != nq {
            return Err(value_error(format!(
                "merge_counts: shard {s}'s counts are {:?} and ids {:?}; expected both \
                 ({nq}, width)",
                c.dim(),
                i.dim()
            )));
        }
        parts.push((c, i));
    }
    let (out_counts, out_ids) = py.detach(|| merge(&parts, nq, k));
    Ok((out_counts.into_pyarray(py), out_ids.into_pyarray(py)))
}

/// Whether `p` is aligned for its type (NumPy arrays may not be: `as_array` would panic).
fn aligned<T>(p: *const T) -> bool {
    (p as usize) % std::mem::align_of::<T>() == 0
}

/// [`merge_counts`] on the arrays.
fn merge(parts: &[Part<'_>], nq: usize, k: usize) -> (Array2<u32>, Array2<i64>) {
    let mut counts = Array2::<u32>::zeros((nq, k));
    let mut ids = Array2::<i64>::from_elem((nq, k), -1);
    if k == 0 {
        return (counts, ids);
    }
    let width: usize = parts.iter().map(|p| p.0.ncols()).sum();
    let rows = QUERIES_A_TASK * k;
    counts
        .as_slice_mut()
        .expect("a new array is contiguous")
        .par_chunks_mut(rows)
        .zip(
            ids.as_slice_mut()
                .expect("a new array is contiguous")
                .par_chunks_mut(rows),
        )
        .enumerate()
        .for_each(|(t, (c_out, i_out))| {
            let mut hits: Vec<(u32, i64)> = Vec::with_capacity(width);
            for (r, (c_row, i_row)) in c_out.chunks_mut(k).zip(i_out.chunks_mut(k)).enumerate() {
                let q = t * QUERIES_A_TASK + r;
                hits.clear();
                for (c, i) in parts {
                    let (c, i) = (c.row(q), i.row(q));
                    hits.extend(
                        c.iter()
                            .zip(i.iter())
                            .filter(|h| *h.1 >= 0)
                            .map(|(&c, &i)| (c, i)),
                    );
                }
                let key = |h: &(u32, i64)| (std::cmp::Reverse(h.0), h.1);
                if hits.len() > k {
                    hits.select_nth_unstable_by_key(k - 1, key);
                    hits.truncate(k);
                }
                hits.sort_unstable_by_key(key);
                for (x, &(c, i)) in hits.iter().enumerate() {
                    c_row[x] = c;
                    i_row[x] = i;
                }
            }
        });
    (counts, ids)
}
