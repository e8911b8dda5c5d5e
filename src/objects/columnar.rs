//! Keyword objects as a list column of a Parquet file or an Arrow IPC file or stream: one object
//! per row, its keywords the row's list. The column is `list<uint32>` or `large_list<uint32>`;
//! lists of int32, int64 or uint64 are taken when every value is an unsigned 32-bit integer. A
//! null row or a null keyword is an error (an object without keywords is an empty list).
//! `--column NAME` picks the column; by default the file's only list column. Only that column is
//! read, in record batches (Parquet row groups decoded in parallel); uint32 values go to the sink
//! without a copy.

use super::{Batch, Sink};
use crate::data_error::DataError;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, GenericListArray, OffsetSizeTrait, RecordBatch};
use arrow_schema::{ArrowError, DataType, Schema};
use genie_core::Keyword;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;
use rayon::prelude::*;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

/// Rows per record batch read from a Parquet file.
const PARQUET_BATCH: usize = 1 << 16;

fn bad(path: &Path, message: String) -> DataError {
    DataError::File {
        path: path.to_path_buf(),
        message,
    }
}

fn open(path: &Path) -> Result<File, DataError> {
    File::open(path).map_err(|error| DataError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// The rows of a Parquet file, from its metadata.
pub fn count_parquet(path: &Path) -> Result<u64, DataError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(open(path)?)
        .map_err(|e| bad(path, format!("not a readable Parquet file: {e}")))?;
    Ok(builder.metadata().file_metadata().num_rows().max(0) as u64)
}

/// Reads the objects of a Parquet file's list column into `sink`; returns their number. Row
/// groups are decoded in parallel, as many at a time as there are threads, and handed to the sink
/// in order.
pub fn read_parquet(
    path: &Path,
    column: Option<&str>,
    sink: &mut Sink<'_>,
) -> Result<u64, DataError> {
    let not_readable = |e: ParquetError| bad(path, format!("not a readable Parquet file: {e}"));
    let file = open(path)?;
    let size = file.metadata().map_or(0, |m| m.len());
    let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(not_readable)?;
    let (index, name) = pick_column(path, meta.schema(), column)?;
    let mask = ProjectionMask::roots(meta.metadata().file_metadata().schema_descr(), [index]);
    let groups = meta.metadata().num_row_groups();
    let rows = meta.metadata().file_metadata().num_rows().max(1) as u64;
    let decode = |group: usize| -> Result<Vec<RecordBatch>, DataError> {
        let unreadable = |e: &dyn std::fmt::Display| {
            bad(
                path,
                format!("not a readable Parquet file (column {name:?}, row group {group}): {e}"),
            )
        };
        ParquetRecordBatchReaderBuilder::new_with_metadata(open(path)?, meta.clone())
            .with_row_groups(vec![group])
            .with_projection(mask.clone())
            .with_batch_size(PARQUET_BATCH)
            .build()
            .map_err(|e| unreadable(&e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| unreadable(&e))
    };
    let mut first = 0u64;
    let window = rayon::current_num_threads().max(1);
    for start in (0..groups).step_by(window) {
        let decoded: Vec<_> = (start..(start + window).min(groups))
            .into_par_iter()
            .map(decode)
            .collect();
        for batches in decoded {
            for batch in batches? {
                let bytes = size * (first + batch.num_rows() as u64).min(rows) / rows;
                first += feed(path, &name, batch.column(0), first, bytes, sink)?;
            }
        }
    }
    Ok(first)
}

/// Reads the objects of an Arrow IPC file (or `stream`) into `sink`; returns their number.
pub fn read_arrow(
    path: &Path,
    stream: bool,
    column: Option<&str>,
    sink: &mut Sink<'_>,
) -> Result<u64, DataError> {
    let what = if stream {
        "Arrow IPC stream"
    } else {
        "Arrow IPC file"
    };
    let not_readable = |e: ArrowError| bad(path, format!("not a readable {what}: {e}"));
    let batches: Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>>>;
    let schema;
    if stream {
        let r = arrow_ipc::reader::StreamReader::try_new_buffered(open(path)?, None)
            .map_err(not_readable)?;
        schema = r.schema();
        batches = Box::new(r);
    } else {
        let r = arrow_ipc::reader::FileReader::try_new(BufReader::new(open(path)?), None)
            .map_err(not_readable)?;
        schema = r.schema();
        batches = Box::new(r);
    }
    let (index, name) = pick_column(path, &schema, column)?;
    let (mut first, mut bytes) = (0u64, 0u64);
    for batch in batches {
        let batch = batch.map_err(|e| {
            bad(
                path,
                format!("not a readable {what} (column {name:?} after {first} rows): {e}"),
            )
        })?;
        let col = batch.column(index);
        bytes += col.get_buffer_memory_size() as u64;
        first += feed(path, &name, col, first, bytes, sink)?;
    }
    Ok(first)
}

/// The list column to read: `column`, else the only list column; (its index, its name).
fn pick_column(
    path: &Path,
    schema: &Schema,
    column: Option<&str>,
) -> Result<(usize, String), DataError> {
    let names = || {
        schema
            .fields()
            .iter()
            .map(|f| format!("{} ({})", f.name(), f.data_type()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let is_list = |t: &DataType| matches!(t, DataType::List(_) | DataType::LargeList(_));
    let index = match column {
        Some(c) => schema
            .fields()
            .iter()
            .position(|f| f.name() == c)
            .ok_or_else(|| bad(path, format!("no column {c:?} (the columns: {})", names())))?,
        None => {
            let lists: Vec<usize> = (0..schema.fields().len())
                .filter(|&i| is_list(schema.field(i).data_type()))
                .collect();
            match lists[..] {
                [i] => i,
                [] => {
                    return Err(bad(
                        path,
                        format!(
                            "no list column: expected a column of keyword lists \
                             (list<uint32>) (the columns: {})",
                            names()
                        ),
                    ))
                }
                _ => {
                    return Err(bad(
                        path,
                        format!(
                            "several list columns, pick one with --column (the columns: {})",
                            names()
                        ),
                    ))
                }
            }
        }
    };
    let field = schema.field(index);
    let item_ok = match field.data_type() {
        DataType::List(item) | DataType::LargeList(item) => matches!(
            item.data_type(),
            DataType::UInt32 | DataType::Int32 | DataType::Int64 | DataType::UInt64
        ),
        _ => false,
    };
    if !item_ok {
        return Err(bad(
            path,
            format!(
                "column {:?} is {}: expected a list of unsigned 32-bit keywords (list<uint32> \
                 or large_list<uint32>; int32, int64, uint64 items are taken too)",
                field.name(),
                field.data_type()
            ),
        ));
    }
    Ok((index, field.name().clone()))
}

/// Hands the rows of one batch of the list column to `sink`; returns their number.
fn feed(
    path: &Path,
    name: &str,
    col: &ArrayRef,
    first: u64,
    bytes: u64,
    sink: &mut Sink<'_>,
) -> Result<u64, DataError> {
    match col.data_type() {
        DataType::List(_) => feed_list(path, name, col.as_list::<i32>(), first, bytes, sink),
        DataType::LargeList(_) => feed_list(path, name, col.as_list::<i64>(), first, bytes, sink),
        other => Err(bad(
            path,
            format!("column {name:?} is {other}: expected a list of keywords"),
        )),
    }
}

fn feed_list<O: OffsetSizeTrait>(
    path: &Path,
    name: &str,
    list: &GenericListArray<O>,
    first: u64,
    bytes: u64,
    sink: &mut Sink<'_>,
) -> Result<u64, DataError> {
    if let Some(row) = list
        .nulls()
        .and_then(|n| (0..list.len()).find(|&i| n.is_null(i)))
    {
        return Err(bad(
            path,
            format!(
                "column {name:?}, row {}: null, expected a list of keywords (an empty list for \
                 an object without keywords)",
                first + row as u64
            ),
        ));
    }
    let offsets: Vec<u64> = list
        .value_offsets()
        .iter()
        .map(|o| o.as_usize() as u64)
        .collect();
    let values = list.values();
    let (start, end) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    let values = values.slice(start, end - start);
    let rebased: Vec<u64> = offsets.iter().map(|&o| o - start as u64).collect();
    if let Some(i) = values
        .nulls()
        .and_then(|n| (0..values.len()).find(|&i| n.is_null(i)))
    {
        let row = rebased.partition_point(|&o| o <= i as u64) - 1;
        return Err(bad(
            path,
            format!(
                "column {name:?}, row {}: a null keyword, expected unsigned 32-bit integers",
                first + row as u64
            ),
        ));
    }
    let converted: Vec<Keyword>;
    let keywords: &[Keyword] = match values.data_type() {
        DataType::UInt32 => values.as_primitive::<UInt32Type>().values(),
        t => {
            let narrowed = match t {
                DataType::Int32 => narrow(values.as_primitive::<Int32Type>().values()),
                DataType::Int64 => narrow(values.as_primitive::<Int64Type>().values()),
                DataType::UInt64 => narrow(values.as_primitive::<UInt64Type>().values()),
                other => {
                    return Err(bad(
                        path,
                        format!("column {name:?} holds lists of {other}: expected uint32"),
                    ))
                }
            };
            converted = narrowed.map_err(|(i, v)| {
                let row = rebased.partition_point(|&o| o <= i as u64) - 1;
                bad(
                    path,
                    format!(
                        "column {name:?}, row {}: keyword {v} is not an unsigned 32-bit integer \
                         (0 to {})",
                        first + row as u64,
                        u32::MAX
                    ),
                )
            })?;
            &converted
        }
    };
    sink(Batch {
        offsets: &rebased,
        keywords,
        first,
        bytes,
    })?;
    Ok(list.len() as u64)
}

/// Values of a wider or signed integer type as keywords; else the first one out of range (its
/// index and value).
fn narrow<T>(values: &[T]) -> Result<Vec<Keyword>, (usize, String)>
where
    T: Copy + std::fmt::Display + Sync,
    Keyword: TryFrom<T>,
{
    values
        .par_iter()
        .map(|&v| Keyword::try_from(v).ok())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            let i = values
                .iter()
                .position(|&v| Keyword::try_from(v).is_err())
                .unwrap_or(0);
            (i, values[i].to_string())
        })
}
