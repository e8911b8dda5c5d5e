//! `genie-bench --mode write-keywords`: writes the SIFT-like keyword workload (the objects and
//! queries of [`crate::workloads::attribute_workload`] with 237 attributes of 67 values, radius 0)
//! in every input format of `genie build --kind keywords`, for timing the build from each:
//! `objects.txt`, `offsets.npy` + `keywords.npy`, `objects.parquet`, `objects.arrow` (an Arrow IPC
//! file) and `queries.txt` (one query a line, items `KW` or `LO-HI`). The text is formatted in
//! parallel; every file holds the same objects.

use crate::npy;
use crate::workloads::{attribute_keywords, attribute_queries};
use anyhow::{Context, Result};
use arrow_array::{ListArray, RecordBatch, UInt32Array};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use genie_core::Query;
use rand::Rng;
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Attributes (dimensions) of the SIFT-like workload.
pub const DIMS: u32 = 237;
/// Values per attribute.
pub const VALUES: u32 = 67;
/// Objects per record batch (and Parquet row group) of the columnar files.
const BATCH: usize = 1 << 16;

/// The command line of `genie-bench --mode write-keywords`.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "genie-bench --mode write-keywords",
    about = "writes the SIFT-like keyword workload as text, NumPy CSR, Parquet and Arrow files"
)]
pub struct WriteArgs {
    /// The mode; always `write-keywords` here.
    #[arg(long, default_value = "write-keywords")]
    pub mode: String,
    /// Objects to write.
    #[arg(long, default_value_t = 1_000_000)]
    pub objects: usize,
    /// Queries to write.
    #[arg(long, default_value_t = 1024)]
    pub queries: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// The folder to write into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Attributes (dimensions) per object: 237 is SIFT-like; 128 with `--values 64` is the
    /// issue-3 workload's shape.
    #[arg(long, default_value_t = DIMS, value_parser = clap::value_parser!(u32).range(1..))]
    pub dims: u32,
    /// Values per attribute (keyword `attribute * values + value`).
    #[arg(long, default_value_t = VALUES, value_parser = clap::value_parser!(u32).range(1..))]
    pub values: u32,
    /// The formats to write, comma-separated: text, npy, parquet, arrow (the queries always).
    #[arg(long, value_delimiter = ',', default_value = "text,npy,parquet,arrow")]
    pub formats: Vec<String>,
}

/// Writes the files; prints each with its size and time.
pub fn run(args: &WriteArgs) -> Result<()> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let (dims, values) = (args.dims, args.values);
    let value = |r: &mut rand::rngs::SmallRng| r.random_range(0..values);
    let keywords = attribute_keywords(args.objects, dims, values, args.seed, &value);
    let queries = attribute_queries(&keywords, dims, values, 0, args.queries, args.seed, &value);
    let d = dims as usize;
    let offsets: Vec<u64> = (0..=args.objects as u64).map(|i| i * d as u64).collect();
    let timed = |name: &str, write: &dyn Fn(&Path) -> Result<()>| -> Result<()> {
        let path = args.out.join(name);
        let t = Instant::now();
        write(&path).with_context(|| format!("cannot write {}", path.display()))?;
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        println!(
            "{}: {:.1} MB in {:.2} s",
            path.display(),
            size as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
        Ok(())
    };
    let wants = |f: &str| args.formats.iter().any(|x| x == f);
    if let Some(bad) = args
        .formats
        .iter()
        .find(|f| !["text", "npy", "parquet", "arrow"].contains(&f.as_str()))
    {
        anyhow::bail!("--formats: {bad} is not one of text, npy, parquet, arrow");
    }
    if wants("text") {
        timed("objects.txt", &|p| write_text(p, &offsets, &keywords))?;
    }
    if wants("npy") {
        timed("offsets.npy", &|p| {
            Ok(npy::write(p, &[offsets.len()], &offsets)?)
        })?;
        timed("keywords.npy", &|p| {
            Ok(npy::write(p, &[keywords.len()], &keywords)?)
        })?;
    }
    if wants("parquet") {
        timed("objects.parquet", &|p| {
            write_parquet(p, &offsets, &keywords)
        })?;
    }
    if wants("arrow") {
        timed("objects.arrow", &|p| write_arrow(p, &offsets, &keywords))?;
    }
    timed("queries.txt", &|p| write_queries(p, &queries))?;
    Ok(())
}

/// Appends `v` in decimal.
fn push_u32(out: &mut Vec<u8>, mut v: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// The text lines of objects `range` of a CSR pair.
fn text_lines(offsets: &[u64], keywords: &[u32], range: std::ops::Range<usize>) -> Vec<u8> {
    let mut out = Vec::with_capacity((offsets[range.end] - offsets[range.start]) as usize * 6);
    for i in range {
        let kws = &keywords[offsets[i] as usize..offsets[i + 1] as usize];
        for (j, &k) in kws.iter().enumerate() {
            if j > 0 {
                out.push(b' ');
            }
            push_u32(&mut out, k);
        }
        out.push(b'\n');
    }
    out
}

/// Writes objects as text, one line each, formatted in parallel.
pub fn write_text(path: &Path, offsets: &[u64], keywords: &[u32]) -> Result<()> {
    let n = offsets.len() - 1;
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let group = BATCH * rayon::current_num_threads().max(1);
    for start in (0..n).step_by(group.max(1)) {
        let end = (start + group).min(n);
        let parts: Vec<Vec<u8>> = (start..end)
            .into_par_iter()
            .step_by(BATCH)
            .map(|a| text_lines(offsets, keywords, a..(a + BATCH).min(end)))
            .collect();
        for p in parts {
            w.write_all(&p)?;
        }
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(())
}

/// The schema of the columnar files: one column `keywords` of `list<uint32>`.
pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![Field::new(
        "keywords",
        DataType::List(Arc::new(Field::new("item", DataType::UInt32, false))),
        false,
    )]))
}

/// Objects `a..b` of a CSR pair as a record batch of [`schema`].
pub fn record_batch(offsets: &[u64], keywords: &[u32], a: usize, b: usize) -> Result<RecordBatch> {
    let base = offsets[a];
    let offs: Vec<i32> = offsets[a..=b]
        .iter()
        .map(|&o| i32::try_from(o - base))
        .collect::<Result<_, _>>()
        .context("a batch of more than 2^31 keywords")?;
    let values = UInt32Array::from(keywords[base as usize..offsets[b] as usize].to_vec());
    let list = ListArray::try_new(
        Arc::new(Field::new("item", DataType::UInt32, false)),
        OffsetBuffer::new(ScalarBuffer::from(offs)),
        Arc::new(values),
        None,
    )?;
    Ok(RecordBatch::try_new(schema(), vec![Arc::new(list)])?)
}

/// Writes objects as a Parquet file (a row group per batch of objects).
pub fn write_parquet(path: &Path, offsets: &[u64], keywords: &[u32]) -> Result<()> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(BATCH))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(File::create(path)?, schema(), Some(props))?;
    let n = offsets.len() - 1;
    for a in (0..n).step_by(BATCH) {
        w.write(&record_batch(offsets, keywords, a, (a + BATCH).min(n))?)?;
    }
    w.close()?;
    Ok(())
}

/// Writes objects as an Arrow IPC file (a record batch per batch of objects).
pub fn write_arrow(path: &Path, offsets: &[u64], keywords: &[u32]) -> Result<()> {
    let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut w = arrow_ipc::writer::FileWriter::try_new(file, &schema())?;
    let n = offsets.len() - 1;
    for a in (0..n).step_by(BATCH) {
        w.write(&record_batch(offsets, keywords, a, (a + BATCH).min(n))?)?;
    }
    w.finish()?;
    Ok(())
}

/// Writes queries in the text query format: items `KW` or `LO-HI`, one query a line.
pub fn write_queries(path: &Path, queries: &[Query]) -> Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    for q in queries {
        let mut line = Vec::new();
        for (j, it) in q.items.iter().enumerate() {
            if j > 0 {
                line.push(b' ');
            }
            push_u32(&mut line, it.lo);
            if it.hi != it.lo {
                line.push(b'-');
                push_u32(&mut line, it.hi);
            }
            if it.weight != 1 {
                line.push(b':');
                push_u32(&mut line, it.weight);
            }
        }
        line.push(b'\n');
        w.write_all(&line)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_the_objects() {
        let offsets = [0u64, 2, 2, 5];
        let keywords = [0u32, 4_294_967_295, 10, 7, 100];
        let dir = tempfile::tempdir().expect("temp dir");
        let p = dir.path().join("o.txt");
        write_text(&p, &offsets, &keywords).expect("write");
        assert_eq!(
            std::fs::read_to_string(&p).expect("read"),
            "0 4294967295\n\n10 7 100\n"
        );
        let q = dir.path().join("q.txt");
        let query = Query {
            items: vec![
                genie_core::Item::keyword(5),
                genie_core::Item {
                    lo: 1,
                    hi: 9,
                    weight: 3,
                },
            ],
        };
        write_queries(&q, std::slice::from_ref(&query)).expect("write");
        let line = std::fs::read_to_string(&q).expect("read");
        assert_eq!(line, "5 1-9:3\n");
        assert_eq!(
            genie::input::parse_query_line(line.trim_end()).expect("parses"),
            query
        );
    }
}
