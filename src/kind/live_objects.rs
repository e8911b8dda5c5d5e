//! How the objects of a kind enter a live index ([`crate::live`]): what the write-ahead log keeps
//! of an object written in the kind's query form, the keywords it becomes, and how queries are
//! parsed against everything the index has learned. A kind offers this through
//! [`super::Kind::live_objects`]; the keyword, document and table kinds do.

use super::codec;
use super::keywords::{keyword_object, parse_keyword_query};
use super::{no_conditions, AnswerHit, Clause, Options};
use crate::data_error::DataError;
use genie_core::{GenieError, InvertedIndex, Keyword, Query};
use genie_sa::StringTable;
use serde_json::Value;
use std::any::Any;
use std::path::{Path, PathBuf};

/// An object on its way into a live index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    /// What the log keeps of it.
    pub log: Vec<u8>,
    /// Its keywords (sorted, each once) when they do not depend on the writes before it; else
    /// [`LiveObjects::decode`] makes them in the log's order.
    pub keywords: Option<Vec<Keyword>>,
}

impl Encoded {
    /// An object logged as its keywords (sorted, each once, as varint gaps: [`codec`]), the
    /// keywords known now: keyword objects and table rows.
    pub fn of_keywords(keywords: Vec<Keyword>) -> Self {
        let keywords = codec::normalize(keywords);
        let mut log = Vec::with_capacity(keywords.len() * 2);
        codec::encode(&keywords, &mut log);
        Self {
            log,
            keywords: Some(keywords),
        }
    }

    /// The keywords of an object [`Encoded::of_keywords`] logged; `what` names the objects in
    /// the error of bytes it cannot have written.
    pub fn keywords_of(log: &[u8], what: &str) -> Result<Vec<Keyword>, DataError> {
        codec::decode(log).ok_or_else(|| undecodable(what))
    }
}

/// What a live index of a kind starts from.
#[derive(Clone, Debug, Default)]
pub struct LiveSetup {
    /// The metadata of the index (of the file it was made from, or of its creation).
    pub metadata: String,
    /// The index file from `genie build` it was made from, if any (its side files lie beside
    /// it).
    pub base: Option<PathBuf>,
    /// What [`LiveObjects::state`] saved at the last flush, if anything.
    pub state: Option<Vec<u8>>,
}

/// A query of a live index: the keyword query counted in every segment and, for a kind that
/// re-ranks the counted candidates, what its re-rank needs (the query vector).
pub struct LiveQuery {
    /// The query counted.
    pub query: Query,
    /// What the kind's re-rank needs, if it re-ranks.
    pub rerank: Option<Box<dyn Any + Send + Sync>>,
}

impl LiveQuery {
    /// A query answered by its counts alone.
    pub fn counts(query: Query) -> Self {
        Self {
            query,
            rerank: None,
        }
    }

    /// What the kind's re-rank needs, as the type the kind gave it (`None` for another type or
    /// a query that does not re-rank).
    pub fn rerank_as<T: 'static>(&self) -> Option<&T> {
        self.rerank.as_ref()?.downcast_ref::<T>()
    }
}

/// A candidate a re-rank orders: its id, its count and the object as the log held it.
pub type Candidate<'a> = (u64, u32, &'a [u8]);

/// A kind's objects in a live index; one per live index, shared by its writers and searches.
pub trait LiveObjects: Send + Sync {
    /// The kind's name.
    fn kind(&self) -> &str;
    /// Checks an object written in the kind's query form and encodes it for the log (called in
    /// parallel, outside the index's locks); the error says what was wrong with it.
    fn encode(&self, raw: &Value) -> Result<Encoded, DataError>;
    /// The keywords (sorted, each once) of an object the log kept, called in the log's order
    /// (a kind that learns, such as the documents' dictionary, learns here).
    fn decode(&self, log: &[u8]) -> Result<Vec<Keyword>, DataError>;
    /// Parses a query under the kind's search options.
    fn query(&self, raw: &Value, options: &Options) -> Result<LiveQuery, DataError>;
    /// The clauses of a filter's condition on columns (table rows); by default the kind has
    /// no columns.
    fn clauses(&self, condition: &str) -> Result<Vec<Clause>, DataError> {
        let _ = condition;
        Err(no_conditions(self.kind()))
    }
    /// Whether each object's logged form is kept with its segment, for the re-rank (vectors).
    fn keeps_objects(&self) -> bool {
        false
    }
    /// The logged forms of the objects of the index file `base` (with `index`, its loaded
    /// index) a live index was made from, in object order, for a kind that keeps them.
    fn base_objects(
        &self,
        base: &Path,
        index: &InvertedIndex,
    ) -> Result<Option<StringTable>, DataError> {
        let _ = (base, index);
        Ok(None)
    }
    /// The candidates counted in each segment for `k` hits of a query that re-ranks.
    fn candidates(&self, query: &LiveQuery, k: u32) -> u32 {
        let _ = query;
        k
    }
    /// The most candidates a segment is counted for while the answer is not proven (doubling
    /// from [`LiveObjects::candidates`]).
    fn max_candidates(&self, query: &LiveQuery, k: u32) -> u32 {
        self.candidates(query, k)
    }
    /// Whether the kind proves its answers ([`LiveObjects::proves`]; the answers then say
    /// whether they are exact).
    fn proves_answers(&self) -> bool {
        false
    }
    /// Whether no object of count at most `outside` can be closer to the query than `tau`
    /// (sequences: Theorem 5.2's bound on the count of a sequence within an edit distance).
    fn proves(&self, query: &LiveQuery, tau: f64, outside: u32) -> bool {
        let _ = (query, tau, outside);
        false
    }
    /// The best `k` of a segment's `candidates` for a query that re-ranks, in the kind's order
    /// (distance ascending, count descending, id ascending), each with its distance.
    fn rerank(
        &self,
        query: &LiveQuery,
        k: u32,
        candidates: &[Candidate<'_>],
    ) -> Result<Vec<AnswerHit>, DataError> {
        let _ = (query, k, candidates);
        Err(DataError::Unsupported(format!(
            "{} queries are not re-ranked",
            self.kind()
        )))
    }
    /// What the index has learned that its files must keep (saved with each flush that follows
    /// a change, restored through [`LiveSetup::state`]); `None` for a kind that learns nothing.
    fn state(&self) -> Option<Vec<u8>> {
        None
    }
    /// Of the objects written since the index was opened, how many, and how many of them
    /// landed where the kind's trained coding is strained (vectors of a codebook index in
    /// over-full cells: [`super::live_vectors`]); `None` for a kind that watches nothing.
    fn drift(&self) -> Option<(u64, u64)> {
        None
    }
    /// A number that changes whenever [`LiveObjects::state`] does.
    fn state_version(&self) -> u64 {
        0
    }
}

/// Keyword objects: a line of keywords or an array of them, logged as varint gaps.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeywordObjects;

impl LiveObjects for KeywordObjects {
    fn kind(&self) -> &str {
        "keywords"
    }

    fn encode(&self, raw: &Value) -> Result<Encoded, DataError> {
        Ok(Encoded::of_keywords(
            keyword_object(raw).map_err(DataError::BadQuery)?,
        ))
    }

    fn decode(&self, log: &[u8]) -> Result<Vec<Keyword>, DataError> {
        Encoded::keywords_of(log, "keywords")
    }

    fn query(&self, raw: &Value, options: &Options) -> Result<LiveQuery, DataError> {
        options.check(self.kind(), &[])?;
        Ok(LiveQuery::counts(parse_keyword_query(raw)?))
    }
}

/// The error of logged bytes that do not decode (the log's checksums make this a bug).
pub fn undecodable(what: &str) -> DataError {
    DataError::Core(GenieError::Internal(format!(
        "a logged object does not decode as {what}"
    )))
}
