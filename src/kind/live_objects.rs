//! How the objects of a kind enter a live index ([`crate::live`]): what the write-ahead log keeps
//! of an object written in the kind's query form, the keywords it becomes, and how queries are
//! parsed against everything the index has learned. A kind offers this through
//! [`super::Kind::live_objects`]; the keyword, document and table kinds do.

use super::codec;
use super::keywords::{keyword_object, parse_keyword_query};
use super::Options;
use crate::data_error::DataError;
use genie_core::{GenieError, Keyword, Query};
use serde_json::Value;
use std::path::PathBuf;

/// An object on its way into a live index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    /// What the log keeps of it.
    pub log: Vec<u8>,
    /// Its keywords (sorted, each once) when they do not depend on the writes before it; else
    /// [`LiveObjects::decode`] makes them in the log's order.
    pub keywords: Option<Vec<Keyword>>,
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
    fn query(&self, raw: &Value, options: &Options) -> Result<Query, DataError>;
    /// What the index has learned that its files must keep (saved with each flush that follows
    /// a change, restored through [`LiveSetup::state`]); `None` for a kind that learns nothing.
    fn state(&self) -> Option<Vec<u8>> {
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
        let keywords = codec::normalize(keyword_object(raw).map_err(DataError::BadQuery)?);
        let mut log = Vec::with_capacity(keywords.len() * 2);
        codec::encode(&keywords, &mut log);
        Ok(Encoded {
            log,
            keywords: Some(keywords),
        })
    }

    fn decode(&self, log: &[u8]) -> Result<Vec<Keyword>, DataError> {
        codec::decode(log).ok_or_else(|| undecodable("keywords"))
    }

    fn query(&self, raw: &Value, options: &Options) -> Result<Query, DataError> {
        options.check(self.kind(), &[])?;
        parse_keyword_query(raw)
    }
}

/// The error of logged bytes that do not decode (the log's checksums make this a bug).
pub fn undecodable(what: &str) -> DataError {
    DataError::Core(GenieError::Internal(format!(
        "a logged object does not decode as {what}"
    )))
}
