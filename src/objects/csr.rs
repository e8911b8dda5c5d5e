//! Keyword objects as a NumPy CSR pair: `offsets.npy` (n + 1 ascending entries from 0, int64 or
//! uint64; int32 and uint32 are taken too) and `keywords.npy` (uint32; int32, int64 and uint64
//! are taken when every value is an unsigned 32-bit integer). Object `i` is
//! `keywords[offsets[i]..offsets[i + 1]]`. Both files are memory-mapped; uint64 offsets and
//! uint32 keywords are used in place, without a copy.

use super::{Batch, Sink};
use crate::data_error::DataError;
use crate::npy::{Dtype, NpyArray};
use genie_core::Keyword;
use rayon::prelude::*;
use std::borrow::Cow;
use std::path::Path;

/// Objects per batch handed to the sink.
const BATCH: usize = 1 << 16;

const OFFSET_TYPES: &[Dtype] = &[Dtype::I64, Dtype::U64, Dtype::I32, Dtype::U32];
const KEYWORD_TYPES: &[Dtype] = &[Dtype::U32, Dtype::I32, Dtype::I64, Dtype::U64];

fn bad(path: &Path, message: String) -> DataError {
    DataError::File {
        path: path.to_path_buf(),
        message,
    }
}

/// The number of objects of an offsets file.
pub fn count(offsets: &Path) -> Result<u64, DataError> {
    let off = NpyArray::open(offsets, OFFSET_TYPES)?;
    if off.is_empty() {
        return Err(empty_offsets(offsets));
    }
    Ok(off.len() as u64 - 1)
}

fn empty_offsets(path: &Path) -> DataError {
    bad(
        path,
        "no offsets: expected n + 1 offsets for n objects (the single offset 0 for none)".into(),
    )
}

/// Reads the objects of a CSR pair into `sink`; returns their number.
pub fn read(offsets: &Path, keywords: &Path, sink: &mut Sink<'_>) -> Result<u64, DataError> {
    let off = NpyArray::open(offsets, OFFSET_TYPES)?;
    let kw = NpyArray::open(keywords, KEYWORD_TYPES)?;
    if off.is_empty() {
        return Err(empty_offsets(offsets));
    }
    let n = off.len() - 1;
    if off.get(0) != 0 {
        return Err(bad(
            offsets,
            format!("the first offset is {}: expected 0", off.get(0)),
        ));
    }
    let last = off.get(n);
    if last != kw.len() as i128 {
        return Err(bad(
            offsets,
            format!(
                "the last offset is {last}: expected the number of keywords in {} ({})",
                keywords.display(),
                kw.len()
            ),
        ));
    }
    let mut a = 0;
    while a < n {
        let b = (a + BATCH).min(n);
        let offs = offsets_of(&off, a, b)?;
        let (start, end) = (offs[0] as usize, offs[offs.len() - 1] as usize);
        let bytes = (end * kw.dtype().size()) as u64;
        match kw.as_u32() {
            Some(all) => sink(Batch {
                offsets: &offs,
                keywords: all,
                first: a as u64,
                bytes,
            })?,
            None => {
                let converted = keywords_of(&kw, start, end)?;
                let rebased: Vec<u64> = offs.iter().map(|&o| o - start as u64).collect();
                sink(Batch {
                    offsets: &rebased,
                    keywords: &converted,
                    first: a as u64,
                    bytes,
                })?;
            }
        }
        a = b;
    }
    Ok(n as u64)
}

/// Offsets `a..=b`, checked ascending and within the keywords (the last one was checked).
fn offsets_of(off: &NpyArray, a: usize, b: usize) -> Result<Cow<'_, [u64]>, DataError> {
    let offs: Cow<'_, [u64]> = match off.as_u64() {
        Some(all) => Cow::Borrowed(&all[a..=b]),
        None => Cow::Owned(
            (a..=b)
                .map(|i| {
                    let v = off.get(i);
                    u64::try_from(v).map_err(|_| {
                        bad(
                            off.path(),
                            format!("offset {i} is {v}: expected offsets of at least 0"),
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    if let Some(i) = offs.windows(2).position(|w| w[0] > w[1]) {
        return Err(bad(
            off.path(),
            format!(
                "offset {} is {}, below offset {} ({}): expected ascending offsets",
                a + i + 1,
                offs[i + 1],
                a + i,
                offs[i]
            ),
        ));
    }
    Ok(offs)
}

/// Keywords `start..end` of an array of another type than uint32, checked to be unsigned 32-bit.
fn keywords_of(kw: &NpyArray, start: usize, end: usize) -> Result<Vec<Keyword>, DataError> {
    let ok = |v: i128| (0..=i128::from(u32::MAX)).contains(&v);
    if let Some(i) = (start..end).into_par_iter().find_first(|&i| !ok(kw.get(i))) {
        return Err(bad(
            kw.path(),
            format!(
                "keyword {i} is {}: expected an unsigned 32-bit integer (0 to {})",
                kw.get(i),
                u32::MAX
            ),
        ));
    }
    Ok((start..end)
        .into_par_iter()
        .map(|i| kw.get(i) as Keyword)
        .collect())
}
