//! A workload written out for a peer implementation (`bench/peers/torch_spmm.py --load DIR`):
//! the index, the queries and genie's top-k counts as `.npy` files ([`crate::npy`]) in one folder,
//! so that the peer searches exactly the data genie searched and checks its counts against genie's.
//!
//! Files of a folder (shapes in NumPy's notation; `u4` = u32, `u8` = u64, little-endian on
//! x86-64):
//! - `offsets.npy`, `u8`, `(keyword_space + 1,)`: the Position Map, list `kw` is
//!   `postings[offsets[kw]:offsets[kw + 1]]` ([`InvertedIndex::offsets`]);
//! - `postings.npy`, `u4`, `(num_postings,)`: the List Array, object ids ascending within a list
//!   ([`InvertedIndex::postings`]); together the keyword x object incidence matrix in CSR form;
//! - `query_items.npy`, `u4`, `(items, 3)`: every query's items as rows `(lo, hi, weight)`, the
//!   keyword range `lo..=hi` (`hi` may lie beyond the keyword space: the index clips it);
//! - `query_start.npy`, `u8`, `(queries + 1,)`: query `q`'s items are rows
//!   `query_start[q]:query_start[q + 1]`;
//! - `genie_counts.npy`, `u4`, `(queries, k)`: the counts of genie's top-k hits of each query in
//!   the contract order (count descending), padded with 0 where a query has fewer than `k` hits
//!   (the objects not listed count 0). Ids among equal counts may differ between correct
//!   implementations; the counts may not;
//! - `meta.json`: `workload`, `num_objects`, `keyword_space`, `num_postings`, `queries`, `k`,
//!   `format` (`"genie-peer-dump 1"`).

use crate::npy;
use genie::data_error::DataError;
use genie_core::{Hit, InvertedIndex, Query};
use std::path::Path;

/// The `format` of `meta.json`.
pub const FORMAT: &str = "genie-peer-dump 1";

/// Writes the folder `dir` (created if missing) for the workload `name`: the index, `queries` and
/// the top-`k` counts of `hits` (one list per query, in the contract order).
pub fn dump_workload(
    dir: &Path,
    name: &str,
    index: &InvertedIndex,
    queries: &[Query],
    hits: &[Vec<Hit>],
    k: u32,
) -> Result<(), DataError> {
    if hits.len() != queries.len() {
        return Err(DataError::File {
            path: dir.into(),
            message: format!(
                "expected the hits of {} queries, got {}",
                queries.len(),
                hits.len()
            ),
        });
    }
    std::fs::create_dir_all(dir).map_err(|error| DataError::Io {
        path: dir.into(),
        error,
    })?;
    let offsets = index.offsets();
    npy::write(&dir.join("offsets.npy"), &[offsets.len()], offsets)?;
    let postings = index.postings();
    npy::write(&dir.join("postings.npy"), &[postings.len()], postings)?;

    let mut items = Vec::new();
    let mut start = Vec::with_capacity(queries.len() + 1);
    start.push(0u64);
    for q in queries {
        items.extend(q.items.iter().flat_map(|it| [it.lo, it.hi, it.weight]));
        start.push((items.len() / 3) as u64);
    }
    npy::write(&dir.join("query_items.npy"), &[items.len() / 3, 3], &items)?;
    npy::write(&dir.join("query_start.npy"), &[start.len()], &start)?;

    let k = k as usize;
    let mut counts = vec![0u32; queries.len() * k];
    for (row, h) in counts.chunks_mut(k.max(1)).zip(hits) {
        for (c, hit) in row.iter_mut().zip(h) {
            *c = hit.count;
        }
    }
    npy::write(&dir.join("genie_counts.npy"), &[queries.len(), k], &counts)?;

    let meta = serde_json::json!({
        "format": FORMAT,
        "workload": name,
        "num_objects": index.num_objects(),
        "keyword_space": index.keyword_space(),
        "num_postings": index.num_postings(),
        "queries": queries.len(),
        "k": k,
    });
    let path = dir.join("meta.json");
    std::fs::write(&path, format!("{meta:#}\n")).map_err(|error| DataError::Io { path, error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use genie_core::{CpuBackend, Engine, IndexBuilder, Item, SearchParams};
    use std::sync::Arc;

    /// Reads an `.npy` file written by [`npy::write`]: (descr, shape, raw data).
    fn read(path: &Path) -> (String, Vec<usize>, Vec<u8>) {
        let bytes = std::fs::read(path).expect("an npy file");
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
        let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let dict = std::str::from_utf8(&bytes[10..10 + len]).expect("ASCII");
        let field = |key: &str, close: char| {
            dict.split(key)
                .nth(1)
                .and_then(|s| s.split(close).next())
                .expect("a field")
                .to_string()
        };
        let descr = field("'descr': '", '\'');
        let shape = field("'shape': (", ')')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().expect("a dimension"))
            .collect();
        (descr, shape, bytes[10 + len..].to_vec())
    }

    fn u32s(raw: &[u8]) -> Vec<u32> {
        raw.chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    fn u64s(raw: &[u8]) -> Vec<u64> {
        raw.chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }

    /// A small workload with ranges, weights, a range past the keyword space and an empty query;
    /// its hits from the CPU backend.
    fn workload() -> (InvertedIndex, Vec<Query>, Vec<Vec<Hit>>) {
        let mut b = IndexBuilder::new().keyword_space(40);
        for o in 0..200u32 {
            let kws: Vec<u32> = (0..4).map(|d| d * 10 + (o * 7 + d * 3) % 10).collect();
            b.push_object(&kws).expect("object");
        }
        let index = b.build().expect("index");
        let item = |lo, hi, weight| Item { lo, hi, weight };
        let queries = vec![
            Query::from_keywords(&[1, 12, 23, 34]),
            Query {
                items: vec![item(0, 3, 2), item(10, 19, 1), item(33, 60, 3)],
            },
            Query::default(),
            Query {
                items: vec![item(5, 5, 1), item(5, 5, 1), item(29, 31, 4)],
            },
        ];
        let engine =
            Engine::with_backend(Arc::new(index.clone()), &CpuBackend::new()).expect("cpu engine");
        let hits = engine
            .search(&queries, &SearchParams::top_k(K))
            .expect("search");
        (index, queries, hits)
    }

    const K: u32 = 30;

    /// Writes the dump and reads every file back. With `GENIE_DUMP_TO=DIR` the dump is also kept
    /// in `DIR/small`, for trying the peer on the CPU:
    /// `python3 bench/peers/torch_spmm.py --device cpu --load DIR/small`.
    #[test]
    fn dump_reads_back() {
        let (index, queries, hits) = workload();
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().join("small");
        dump_workload(&dir, "small", &index, &queries, &hits, K).expect("dump");
        if let Some(keep) = std::env::var_os("GENIE_DUMP_TO") {
            dump_workload(
                &Path::new(&keep).join("small"),
                "small",
                &index,
                &queries,
                &hits,
                K,
            )
            .expect("dump to GENIE_DUMP_TO");
        }

        let (d, shape, raw) = read(&dir.join("offsets.npy"));
        assert_eq!((d, shape), (npy::descr::<u64>(), vec![41]));
        assert_eq!(u64s(&raw), index.offsets());
        let (d, shape, raw) = read(&dir.join("postings.npy"));
        assert_eq!((d, shape), (npy::descr::<u32>(), vec![800]));
        assert_eq!(u32s(&raw), index.postings());

        let (_, shape, raw) = read(&dir.join("query_items.npy"));
        assert_eq!(shape, vec![10, 3]);
        let items = u32s(&raw);
        assert_eq!(&items[12..21], &[0, 3, 2, 10, 19, 1, 33, 60, 3]);
        let (d, shape, raw) = read(&dir.join("query_start.npy"));
        assert_eq!((d, shape), (npy::descr::<u64>(), vec![5]));
        assert_eq!(u64s(&raw), vec![0, 4, 7, 7, 10]);

        let (_, shape, raw) = read(&dir.join("genie_counts.npy"));
        assert_eq!(shape, vec![4, K as usize]);
        let counts = u32s(&raw);
        for (q, h) in hits.iter().enumerate() {
            let row = &counts[q * K as usize..(q + 1) * K as usize];
            let want: Vec<u32> = h.iter().map(|x| x.count).collect();
            assert_eq!(&row[..h.len()], want, "query {q}");
            assert!(row[h.len()..].iter().all(|&c| c == 0), "query {q} padding");
        }
        assert!(hits[2].is_empty());
        assert_eq!(hits[1][0].count, 6, "weights and the clipped range count");

        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("meta.json")).expect("meta"))
                .expect("JSON");
        assert_eq!(meta["format"], FORMAT);
        assert_eq!(meta["workload"], "small");
        assert_eq!(meta["num_objects"], 200);
        assert_eq!(meta["keyword_space"], 40);
        assert_eq!(meta["num_postings"], 800);
        assert_eq!(meta["queries"], 4);
        assert_eq!(meta["k"], K);
    }

    #[test]
    fn hits_must_match_queries() {
        let (index, queries, hits) = workload();
        let tmp = tempfile::tempdir().expect("temp dir");
        let err = dump_workload(tmp.path(), "small", &index, &queries, &hits[..2], K)
            .expect_err("2 hit lists for 4 queries");
        assert!(err.to_string().contains("expected the hits of 4"), "{err}");
    }
}

/// The command line of `genie-bench --mode dump`: a keyword index file and text queries written
/// out for the peers, with genie's hits from the chosen backend and its search time.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "genie-bench --mode dump",
    about = "writes an index file and its text queries as a peer dump, searched by genie"
)]
pub struct DumpArgs {
    /// The mode; always `dump` here.
    #[arg(long, default_value = "dump")]
    pub mode: String,
    /// The index file (keyword objects; a single file, not a parted index).
    #[arg(long)]
    pub index: std::path::PathBuf,
    /// The queries, one per line (`KW` and `LO-HI` items with optional `:WEIGHT`).
    #[arg(long)]
    pub queries: std::path::PathBuf,
    /// Hits per query.
    #[arg(long, default_value_t = 100)]
    pub k: u32,
    /// The folder to write (created if missing).
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// The workload's name in `meta.json`.
    #[arg(long, default_value = "keywords")]
    pub name: String,
    /// Where genie searches: cpu or gpu.
    #[arg(long, default_value = "cpu")]
    pub device: String,
}

/// `genie-bench --mode dump`: loads the index, searches the queries (best of three, after one
/// untimed run of the whole batch), prints the time and writes the dump.
pub fn run(args: &DumpArgs) -> anyhow::Result<()> {
    use anyhow::Context;
    use genie_core::{Backend, CpuBackend, CudaBackend, Engine, SearchParams};
    let index = std::sync::Arc::new(
        InvertedIndex::load(&args.index)
            .with_context(|| format!("cannot open {}", args.index.display()))?,
    );
    let mut reader = genie::input::LineReader::open(&args.queries)?;
    let mut queries = Vec::new();
    while let Some(q) = reader.next_query()? {
        queries.push(q);
    }
    let backend: Box<dyn Backend> = match args.device.as_str() {
        "cpu" => Box::new(CpuBackend::new()),
        "gpu" => Box::new(CudaBackend::new(0)?),
        other => anyhow::bail!("--device {other}: expected cpu or gpu"),
    };
    let engine = Engine::with_backend(index.clone(), backend.as_ref())?;
    let params = SearchParams::top_k(args.k);
    // the whole batch once untimed (its buffers allocated: the steady state), then the best of
    // three, as bench/python_search.py times the Python package
    let mut hits = engine.search(&queries, &params)?;
    let mut secs = f64::INFINITY;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        hits = engine.search(&queries, &params)?;
        secs = secs.min(t.elapsed().as_secs_f64());
    }
    println!(
        "genie on {}: {} queries, k {}: best of 3 {:.1} ms ({:.0} queries/s)",
        backend.name(),
        queries.len(),
        args.k,
        secs * 1e3,
        queries.len() as f64 / secs
    );
    dump_workload(&args.out, &args.name, &index, &queries, &hits, args.k)?;
    Ok(())
}
