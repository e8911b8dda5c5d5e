//! Sequence indexes of the `genie` CLI (paper section V-A): `genie build --kind sequences` reads
//! one sequence per line of a UTF-8 text file (object id = 0-based line number; the line
//! terminator is not part of the sequence), indexes its ordered n-grams and saves the sequences
//! beside the index as `INDEX.seqs`, which `genie search` needs to verify candidates by edit
//! distance and to rebuild the n-gram dictionary (checked against the index metadata).
//!
//! `genie search` reads one query sequence per line and writes one JSON line per query:
//! `{"query":0,"exact":true,"candidates":32,"hits":[{"id":7,"count":9,"distance":1}]}`, hits by
//! edit distance ascending, then count descending, then id ascending; `exact` says whether
//! Theorem 5.2 proves them the true top-k, `candidates` is K of the last round.

use crate::data_error::DataError;
use crate::input::LineReader;
use crate::kinds::{metadata_with, side_path};
use genie_core::{Engine, IndexBuilder, InvertedIndex, Transform};
use genie_sa::{
    NGramConfig, SequenceMetadata, SequenceResult, SequenceSearchParams, SequenceSearcher,
    SequenceStore, SequenceTransform, StringTable,
};
use std::io::{self, Write};
use std::path::Path;

/// The extension of the sequences side file.
pub const SIDE_EXT: &str = "seqs";

/// Reads one sequence per line (UTF-8; errors name the file and line).
pub fn read_sequences(path: &Path) -> Result<StringTable, DataError> {
    let mut reader = LineReader::open(path)?;
    let mut table = StringTable::new();
    while let Some(line) = reader.next_line()? {
        table.push(line.as_bytes());
    }
    Ok(table)
}

/// Builds the index of the sequences of `input` (its metadata names `input`).
pub fn build(input: &Path, config: NGramConfig) -> Result<(InvertedIndex, StringTable), DataError> {
    let table = read_sequences(input)?;
    let transform = SequenceTransform::build(config, table.iter())?;
    let mut builder: IndexBuilder = transform
        .builder()
        .metadata(metadata_with(&transform.metadata(), input));
    let mut keywords = Vec::new();
    for (line, seq) in (1..).zip(table.iter()) {
        keywords.clear();
        transform
            .keywords(seq, &mut keywords)
            .map_err(|e| DataError::at(input, line, e))?;
        builder.push_object(&keywords)?;
    }
    Ok((builder.build()?, table))
}

/// Saves the index and its sequences (`INDEX.seqs`).
pub fn save(path: &Path, index: &InvertedIndex, table: &StringTable) -> Result<(), DataError> {
    index.save(path)?;
    table.save(&side_path(path, SIDE_EXT))?;
    Ok(())
}

/// The transform and sequences of a loaded index (`index_path` locates `INDEX.seqs`).
pub fn open(
    index: &InvertedIndex,
    index_path: &Path,
) -> Result<(SequenceTransform, SequenceStore), DataError> {
    let meta: SequenceMetadata = serde_json::from_str(index.metadata()).map_err(|e| {
        DataError::Sa(genie_sa::SaError::BadMetadata(format!(
            "{}: {e}",
            index_path.display()
        )))
    })?;
    let side = side_path(index_path, SIDE_EXT);
    let table = StringTable::load(&side)?;
    let transform =
        SequenceTransform::rebuild(&meta, table.iter()).map_err(|e| DataError::File {
            path: side.clone(),
            message: e.to_string(),
        })?;
    let store = SequenceStore::new(table, meta.config.alphabet)?;
    Ok((transform, store))
}

/// Searches the sequences of `queries` (one per line) in chunks of `batch` and writes JSON lines;
/// returns the number of queries.
pub fn search_file(
    searcher: &SequenceSearcher<'_>,
    queries: &Path,
    params: &SequenceSearchParams,
    batch: usize,
    out: &mut dyn Write,
) -> Result<u64, DataError> {
    let mut reader = LineReader::open(queries)?;
    let mut first = 0u64;
    loop {
        let mut chunk = StringTable::new();
        while chunk.len() < batch {
            match reader.next_line()? {
                Some(line) => chunk.push(line.as_bytes()),
                None => break,
            }
        }
        if chunk.is_empty() {
            return Ok(first);
        }
        let refs: Vec<&[u8]> = chunk.iter().collect();
        let results = searcher.search(&refs, params)?;
        write_results(out, first, &results)
            .and_then(|()| out.flush())
            .map_err(DataError::Write)?;
        first += refs.len() as u64;
    }
}

/// Writes the JSON lines of consecutive queries, the first being query `first`.
pub fn write_results(w: &mut dyn Write, first: u64, results: &[SequenceResult]) -> io::Result<()> {
    for (q, r) in (first..).zip(results) {
        write!(
            w,
            "{{\"query\":{q},\"exact\":{},\"candidates\":{},\"hits\":[",
            r.exact, r.candidates
        )?;
        for (i, h) in r.hits.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(
                w,
                "{sep}{{\"id\":{},\"count\":{},\"distance\":{}}}",
                h.id, h.count, h.distance
            )?;
        }
        w.write_all(b"]}\n")?;
    }
    Ok(())
}

/// Creates the searcher of an opened index.
pub fn searcher<'a>(
    engine: &'a Engine,
    transform: &'a SequenceTransform,
    store: &'a SequenceStore,
) -> Result<SequenceSearcher<'a>, DataError> {
    Ok(SequenceSearcher::new(engine, transform, store)?)
}
