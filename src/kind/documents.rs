//! The `documents` kind (paper section V-B): `genie build --kind documents`
//! reads one document per line of a UTF-8 text file, or one per row of a column of a CSV file
//! with a header (`--column NAME`); object id = 0-based line or row number (header excluded). The
//! words (see [`genie_sa::documents::tokenize`]) make the dictionary, saved beside the index as
//! `INDEX.words`. `genie search` reads query documents the same way and writes
//! `{"query":0,"hits":[{"id":12,"count":3}]}` lines, where the count is the number of distinct
//! words a document shares with the query.

use super::{
    metadata_with, side_path, text_query, undecodable, BuildJob, BuildReport, CountIndex,
    CountParser, Encoded, IndexSource, Kind, KindInfo, LiveObjects, LiveSetup, OpenOptions, Opened,
    OptionSpec, OptionType, Options, Placement, QueryFile, QueryReader,
};
use crate::csv_input;
use crate::data_error::DataError;
use crate::input::{display_path, LineReader};
use genie_core::{InvertedIndex, Keyword, Query, Transform};
use genie_sa::{DocumentMetadata, DocumentTransform, StringTable, Tokenizer};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

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

impl QueryReader for DocumentReader {
    fn next_query(&mut self) -> Result<Option<Value>, DataError> {
        Ok(self.next_document()?.map(|d| Value::String(d.to_string())))
    }

    fn location(&self) -> String {
        match self {
            Self::Lines(r) => r.location(),
            Self::Csv { path, record, .. } => format!(
                "{}:{}",
                display_path(path),
                record.position().map_or(0, csv::Position::line)
            ),
        }
    }

    fn progress(&self) -> (u64, Option<u64>) {
        match self {
            Self::Lines(r) => (r.bytes_read(), r.len()),
            Self::Csv { .. } => (0, None),
        }
    }
}

/// The kind of short documents.
#[derive(Clone, Copy, Debug, Default)]
pub struct Documents;

/// The build options of documents (the first, the column, is also a search option).
const BUILD_OPTIONS: &[OptionSpec] = &[
    OptionSpec::new(
        "column",
        OptionType::Text,
        "NAME",
        "Read the documents (or the queries) from this column of a CSV file with a header.",
    ),
    OptionSpec::flag(
        "keep_stop_words",
        "Keep English stop words (dropped by default).",
    ),
];

/// The kind of short documents; a search takes the build's `column`.
const INFO: KindInfo = KindInfo {
    build_options: BUILD_OPTIONS,
    search_options: BUILD_OPTIONS.split_at(1).0,
    side_files: &[SIDE_EXT],
    ..KindInfo::new(
        genie_sa::documents::transform::KIND,
        "Short documents (one per line or a CSV column), by shared words",
    )
};

impl Kind for Documents {
    fn info(&self) -> &KindInfo {
        &INFO
    }

    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
        let o = job.options;
        o.check(self.name(), self.build_options())?;
        let tokenizer = Tokenizer {
            keep_stop_words: o.flag("keep_stop_words")?,
        };
        let (index, transform) = build(job.input, o.str("column")?, tokenizer)?;
        save(job.output, &index, &transform)?;
        Ok(BuildReport {
            summary: super::summary(&index),
            objects: u64::from(index.num_objects()),
            side_files: self.side_files(job.output),
        })
    }

    fn open_queries(&self, path: &Path, options: &Options) -> QueryFile {
        Ok(Box::new(DocumentReader::open(
            path,
            options.str("column")?,
        )?))
    }

    fn open(&self, source: &IndexSource, placement: Placement, options: &OpenOptions) -> Opened {
        let index = super::single_index(source, self.name())?;
        // the dictionary is read once and shared by the replicas
        let transform = source.shared("words", || open(&index, &source.path))?;
        Ok(Box::new(CountIndex::new(
            DocumentParser(transform),
            placement.searcher(index)?,
            options.method,
        )))
    }

    fn live_objects(&self, setup: &LiveSetup) -> Result<Arc<dyn LiveObjects>, DataError> {
        Ok(Arc::new(LiveDocuments::new(setup)?))
    }

    fn live_metadata(&self, options: &Options) -> Result<Value, DataError> {
        options.check(self.name(), &BUILD_OPTIONS[1..])?;
        let tokenizer = Tokenizer {
            keep_stop_words: options.flag("keep_stop_words")?,
        };
        let empty = DocumentTransform::build(tokenizer, std::iter::empty())?;
        serde_json::to_value(empty.metadata_record())
            .map_err(|e| DataError::Unsupported(format!("documents metadata: {e}")))
    }
}

/// Parses query documents with the index's dictionary.
pub struct DocumentParser(Arc<DocumentTransform>);

impl CountParser for DocumentParser {
    fn kind(&self) -> &str {
        genie_sa::documents::transform::KIND
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Query, DataError> {
        // the column names where a file's queries come from; a parsed query has no column
        options.check(self.kind(), Documents.search_options())?;
        Ok(self.0.prepare(text_query(raw)?))
    }
}

/// Documents in a live index: the dictionary of the index it started from, and the words learned
/// since, each new word the next keyword in the log's order.
pub struct LiveDocuments {
    tokenizer: Tokenizer,
    /// Base words then learned words: keyword `i` is word `i`.
    words: RwLock<Learned>,
}

#[derive(Default)]
struct Learned {
    words: Vec<String>,
    ids: HashMap<String, Keyword>,
}

impl Learned {
    fn of(words: Vec<String>) -> Self {
        let ids = (0..).zip(&words).map(|(i, w)| (w.clone(), i)).collect();
        Self { words, ids }
    }
}

impl LiveDocuments {
    /// The documents of a live index starting from `setup`: its saved dictionary, else the
    /// dictionary of the index file it was made from, else none (tokenizer settings from the
    /// metadata).
    pub fn new(setup: &LiveSetup) -> Result<Self, DataError> {
        let meta: DocumentMetadata = serde_json::from_str(&setup.metadata)
            .map_err(|e| DataError::Sa(genie_sa::SaError::BadMetadata(e.to_string())))?;
        let words = match (&setup.state, &setup.base) {
            (Some(state), _) => {
                let table = StringTable::from_bytes(state).map_err(|e| {
                    DataError::Sa(genie_sa::SaError::BadMetadata(format!(
                        "the live index's dictionary: {e}"
                    )))
                })?;
                table
                    .iter()
                    .map(|w| String::from_utf8(w.to_vec()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| {
                        DataError::Sa(genie_sa::SaError::BadMetadata(
                            "the live index's dictionary holds a word that is not UTF-8".into(),
                        ))
                    })?
            }
            (None, Some(base)) => {
                let index = InvertedIndex::load(base)?;
                open(&index, base)?.words().to_vec()
            }
            (None, None) => Vec::new(),
        };
        Ok(Self {
            tokenizer: meta.tokenizer,
            words: RwLock::new(Learned::of(words)),
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Learned> {
        self.words.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl LiveObjects for LiveDocuments {
    fn kind(&self) -> &str {
        genie_sa::documents::transform::KIND
    }

    /// Logged as its distinct words, one per line, in order of first appearance.
    fn encode(&self, raw: &Value) -> Result<Encoded, DataError> {
        let text = text_query(raw)?;
        let mut seen = std::collections::HashSet::new();
        let mut log = Vec::with_capacity(text.len());
        self.tokenizer.for_each_word(text, |w| {
            if seen.insert(w.to_string()) {
                log.extend_from_slice(w.as_bytes());
                log.push(b'\n');
            }
        });
        Ok(Encoded {
            log,
            keywords: None,
        })
    }

    fn decode(&self, log: &[u8]) -> Result<Vec<Keyword>, DataError> {
        let text = std::str::from_utf8(log).map_err(|_| undecodable("words"))?;
        let words: Vec<&str> = text.lines().collect();
        let mut out = Vec::with_capacity(words.len());
        let mut missing = Vec::new();
        {
            let learned = self.read();
            for w in &words {
                match learned.ids.get(*w) {
                    Some(&k) => out.push(k),
                    None => missing.push(*w),
                }
            }
        }
        if !missing.is_empty() {
            let mut learned = self.words.write().unwrap_or_else(|e| e.into_inner());
            for w in missing {
                let next = learned.words.len() as Keyword;
                let k = *learned.ids.entry(w.to_string()).or_insert(next);
                if k == next {
                    learned.words.push(w.to_string());
                }
                out.push(k);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn query(&self, raw: &Value, options: &Options) -> Result<super::LiveQuery, DataError> {
        options.check(self.kind(), Documents.search_options())?;
        let learned = self.read();
        let mut kws = Vec::new();
        self.tokenizer
            .for_each_word(text_query(raw)?, |w| kws.extend(learned.ids.get(w)));
        kws.sort_unstable();
        kws.dedup();
        Ok(super::LiveQuery::counts(Query::from_keywords(&kws)))
    }

    /// The whole dictionary, as a string table.
    fn state(&self) -> Option<Vec<u8>> {
        let table: StringTable = self.read().words.iter().collect();
        Some(table.to_bytes())
    }

    fn state_version(&self) -> u64 {
        self.read().words.len() as u64
    }
}
