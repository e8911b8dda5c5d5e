//! `letters`: words, matched by the letters they share (a keyword per byte). The smallest whole
//! kind, kept as the template of a kind of one's own: one module declaring its options in its
//! [`KindInfo`] and one `register` call give it `genie build --kind letters` and `genie search`
//! flags, a server's request `options` and Python keywords, with no edit to any front end. The
//! default registry holds it only with the feature `test-kind` (the front ends' tests use it).

use super::{
    prepared, text_query, Answer, BuildJob, BuildReport, IndexSource, Kind, KindIndex, KindInfo,
    LineQueries, OpenOptions, OptionSpec, OptionType, Options, Placement, Prepared, QueryReader,
    Request,
};
use crate::data_error::DataError;
use genie_core::{Engine, IndexBuilder, Query, SearchParams};
use serde_json::Value;
use std::any::Any;
use std::path::Path;

/// The kind of words by their letters.
pub struct Letters;

/// Declared once: `genie search` gets `--case`, a request's `options` and Python's keywords take
/// `case`, and every front end refuses other words or names with no code of its own.
const SEARCH_OPTIONS: &[OptionSpec] = &[OptionSpec::new(
    "case",
    OptionType::Choice(&["keep", "fold"]),
    "CASE",
    "Letters: the letter case of the queries: keep, or fold to lower case.",
)];

const INFO: KindInfo = KindInfo {
    search_options: SEARCH_OPTIONS,
    ..KindInfo::new(
        "letters",
        "words, by the letters they share (a template kind)",
    )
};

/// The keywords of a word: its bytes.
fn keywords(word: &str) -> Vec<u32> {
    word.bytes().map(u32::from).collect()
}

impl Kind for Letters {
    fn info(&self) -> &KindInfo {
        &INFO
    }

    fn build(&self, job: &BuildJob<'_>) -> Result<BuildReport, DataError> {
        job.options.check(self.name(), self.build_options())?;
        let text = std::fs::read_to_string(job.input).map_err(|error| DataError::Io {
            path: job.input.into(),
            error,
        })?;
        let mut builder = IndexBuilder::new()
            .keyword_space(256)
            .metadata(r#"{"kind":"letters"}"#);
        for word in text.lines() {
            builder.push_object(&keywords(word))?;
        }
        let index = builder.build()?;
        index.save(job.output)?;
        Ok(BuildReport {
            summary: format!("{} words", index.num_objects()),
            objects: u64::from(index.num_objects()),
            side_files: Vec::new(),
        })
    }

    fn read_queries(
        &self,
        path: &Path,
        options: &Options,
    ) -> Result<Box<dyn QueryReader>, DataError> {
        options.check(self.name(), SEARCH_OPTIONS)?;
        Ok(Box::new(LineQueries(crate::input::LineReader::open(path)?)))
    }

    fn open(
        &self,
        source: &IndexSource,
        placement: Placement,
        _: &OpenOptions,
    ) -> Result<Box<dyn KindIndex>, DataError> {
        let index = source
            .index
            .clone()
            .ok_or_else(|| DataError::Unsupported("a letters index searched in parts".into()))?;
        Ok(Box::new(LetterIndex(placement.engine(index, "letters")?)))
    }
}

/// An opened letters index.
pub struct LetterIndex(Engine);

impl KindIndex for LetterIndex {
    fn kind(&self) -> &str {
        "letters"
    }

    fn num_objects(&self) -> u64 {
        u64::from(self.0.index().num_objects())
    }

    fn backend_name(&self) -> String {
        self.0.backend_name().into()
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        options.check("letters", SEARCH_OPTIONS)?;
        let mut word = text_query(raw)?.to_string();
        if options.str("case")? == Some("fold") {
            word = word.to_lowercase();
        }
        Ok(Box::new(Query::from_keywords(&keywords(&word))))
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        query.downcast_ref::<Query>().map_or(0, |q| q.items.len())
    }

    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        super::no_filters(batch, "letters")?;
        let k = batch.iter().map(|r| r.k).max().unwrap_or(0);
        let queries = batch
            .iter()
            .map(|r| prepared::<Query>(r.query).cloned())
            .collect::<Result<Vec<_>, _>>()?;
        let hits = self.0.search(&queries, &SearchParams::top_k(k))?;
        Ok(hits
            .iter()
            .zip(batch)
            .map(|(h, r)| Answer::of_hits(&h[..h.len().min(r.k as usize)]))
            .collect())
    }
}
