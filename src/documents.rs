//! Short-document indexes of the `genie` CLI (paper section V-B): `genie build --kind documents`
//! reads one document per line of a UTF-8 text file, or one per row of a column of a CSV file
//! with a header (`--column NAME`); object id = 0-based line or row number (header excluded). The
//! words (see [`genie_sa::tokenize`]) make the dictionary, saved beside the index as
//! `INDEX.words`. `genie search` reads query documents the same way and writes
//! `{"query":0,"hits":[{"id":12,"count":3}]}` lines, where the count is the number of distinct
//! words a document shares with the query.

use crate::csv_input;
use crate::data_error::DataError;
use crate::input::LineReader;
use crate::kinds::{metadata_with, side_path};
use genie_core::{InvertedIndex, Transform};
use genie_sa::{DocumentMetadata, DocumentTransform, StringTable, Tokenizer};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The extension of the word dictionary side file.
pub const SIDE_EXT: &str = "words";

/// Documents read one at a time from text lines or a CSV column.
pub enum DocumentReader {
    /// One document per line.
    Lines(LineReader),
    /// One document per row, from one column.
    Csv {
        /// The reader.
        reader: csv::Reader<Box<dyn Read>>,
        /// The file.
        path: PathBuf,
        /// The column's position.
        column: usize,
        /// The current record.
        record: csv::StringRecord,
    },
}

impl DocumentReader {
    /// Opens `path`: text lines, or the column `column` of a CSV file with a header.
    pub fn open(path: &Path, column: Option<&str>) -> Result<Self, DataError> {
        match column {
            None => Ok(Self::Lines(LineReader::open(path)?)),
            Some(name) => {
                let mut reader = csv_input::reader(path, true)?;
                let column = csv_input::column(&mut reader, path, name)?;
                Ok(Self::Csv {
                    reader,
                    path: path.to_path_buf(),
                    column,
                    record: csv::StringRecord::new(),
                })
            }
        }
    }

    /// The next document, `None` at the end.
    pub fn next_document(&mut self) -> Result<Option<&str>, DataError> {
        match self {
            Self::Lines(r) => Ok(r.next_line()?),
            Self::Csv {
                reader,
                path,
                column,
                record,
            } => match csv_input::next_record(reader, path, record)? {
                None => Ok(None),
                Some(_) => Ok(Some(record.get(*column).unwrap_or(""))),
            },
        }
    }
}

/// Builds the index of the documents of `input`.
pub fn build(
    input: &Path,
    column: Option<&str>,
    tokenizer: Tokenizer,
) -> Result<(InvertedIndex, DocumentTransform), DataError> {
    let mut reader = DocumentReader::open(input, column)?;
    let mut docs = Vec::new();
    while let Some(d) = reader.next_document()? {
        docs.push(d.to_string());
    }
    let transform = DocumentTransform::build(tokenizer, docs.iter().map(String::as_str))?;
    let mut builder = transform
        .builder()
        .metadata(metadata_with(&transform.metadata(), input));
    let mut keywords = Vec::new();
    for (row, doc) in (1..).zip(&docs) {
        keywords.clear();
        transform
            .keywords(doc, &mut keywords)
            .map_err(|e| DataError::at(input, row, e))?;
        builder.push_object(&keywords)?;
    }
    Ok((builder.build()?, transform))
}

/// Saves the index and its word dictionary (`INDEX.words`).
pub fn save(
    path: &Path,
    index: &InvertedIndex,
    transform: &DocumentTransform,
) -> Result<(), DataError> {
    index.save(path)?;
    let words: StringTable = transform.words().iter().collect();
    words.save(&side_path(path, SIDE_EXT))?;
    Ok(())
}

/// The transform of a loaded index (`index_path` locates `INDEX.words`).
pub fn open(index: &InvertedIndex, index_path: &Path) -> Result<DocumentTransform, DataError> {
    let meta: DocumentMetadata = serde_json::from_str(index.metadata()).map_err(|e| {
        DataError::Sa(genie_sa::SaError::BadMetadata(format!(
            "{}: {e}",
            index_path.display()
        )))
    })?;
    let side = side_path(index_path, SIDE_EXT);
    let table = StringTable::load(&side)?;
    let bad = |message: String| DataError::File {
        path: side.clone(),
        message,
    };
    let words = table
        .iter()
        .map(|w| String::from_utf8(w.to_vec()).map_err(|_| bad("a word is not UTF-8".into())))
        .collect::<Result<Vec<_>, _>>()?;
    DocumentTransform::from_words(&meta, words).map_err(|e| bad(e.to_string()))
}

/// Searches the documents of `queries` (lines, or a CSV column) in chunks of `batch` and writes
/// JSON lines; returns the number of queries.
pub fn search_file(
    engine: &genie_core::Engine,
    transform: &DocumentTransform,
    queries: &Path,
    column: Option<&str>,
    params: &genie_core::SearchParams,
    batch: usize,
    out: &mut dyn std::io::Write,
) -> Result<u64, DataError> {
    let mut reader = DocumentReader::open(queries, column)?;
    let mut first = 0u64;
    loop {
        let mut chunk = Vec::new();
        while chunk.len() < batch {
            match reader.next_document()? {
                Some(d) => chunk.push(transform.prepare(d)),
                None => break,
            }
        }
        if chunk.is_empty() {
            return Ok(first);
        }
        let results = engine.search(&chunk, params)?;
        crate::output::write_results(out, first, &results)
            .and_then(|()| out.flush())
            .map_err(DataError::Write)?;
        first += chunk.len() as u64;
    }
}
