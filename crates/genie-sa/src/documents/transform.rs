//! The short-document transform (paper section V-B): a document is the set of its words
//! ([`super::tokenize`]), each distinct word a keyword, so the match count of a query document
//! with an object document is the number of distinct words they share (the inner product of their
//! binary word vectors).
//!
//! The word dictionary is built at index time: words are numbered in the order they are first
//! seen (document by document, left to right). Query words the dictionary does not know match no
//! document and are left out. The dictionary is saved beside the index (one word per keyword,
//! `INDEX.words`), with its size and checksum in the index metadata.

use crate::documents::tokenize::Tokenizer;
use crate::error::{Result, SaError};
use genie_core::index::MAX_KEYWORD_SPACE;
use genie_core::{Keyword, Query, Transform};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The kind name of document indexes in their metadata.
pub const KIND: &str = "documents";

/// Documents to sets of word keywords.
///
/// ```
/// use genie_sa::documents::transform::DocumentTransform;
/// use genie_sa::documents::tokenize::Tokenizer;
/// let docs = ["Make America great again", "Great news: America first!"];
/// let t = DocumentTransform::build(Tokenizer::new(), docs).unwrap();
/// assert_eq!(t.words(), ["make", "america", "great", "news", "first"]);
/// let q = t.prepare("america is GREAT, great!");
/// assert_eq!(q.items.len(), 2); // america, great: distinct words
/// ```
#[derive(Clone, Debug)]
pub struct DocumentTransform {
    tokenizer: Tokenizer,
    words: Vec<String>,
    ids: HashMap<String, Keyword>,
    checksum: u32,
}

/// What a document index records about its transform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentMetadata {
    /// Always [`KIND`].
    pub kind: String,
    /// The tokenizer's settings.
    #[serde(flatten)]
    pub tokenizer: Tokenizer,
    /// Distinct words (the keyword space).
    pub keyword_space: u32,
    /// [`DocumentTransform::checksum`].
    pub dictionary_crc32: u32,
}

impl DocumentTransform {
    /// Builds the word dictionary of `documents` (all documents to be indexed, in id order).
    pub fn build<'a>(
        tokenizer: Tokenizer,
        documents: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self> {
        let mut words = Vec::new();
        let mut ids = HashMap::new();
        for doc in documents {
            tokenizer.for_each_word(doc, |w| {
                if !ids.contains_key(w) {
                    ids.insert(w.to_string(), words.len() as Keyword);
                    words.push(w.to_string());
                }
            });
        }
        Self::finish(tokenizer, words, ids)
    }

    /// The transform of a saved dictionary (`words` in keyword order), checked against the index
    /// metadata.
    pub fn from_words(metadata: &DocumentMetadata, words: Vec<String>) -> Result<Self> {
        if metadata.kind != KIND {
            return Err(SaError::BadMetadata(format!(
                "kind {:?}, expected {KIND:?}",
                metadata.kind
            )));
        }
        let ids: HashMap<String, Keyword> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.clone(), i as Keyword))
            .collect();
        let t = Self::finish(metadata.tokenizer, words, ids)?;
        if t.keyword_space() != metadata.keyword_space || t.checksum != metadata.dictionary_crc32 {
            return Err(SaError::BadMetadata(
                "the word list does not match the dictionary the index was built with".into(),
            ));
        }
        Ok(t)
    }

    fn finish(
        tokenizer: Tokenizer,
        words: Vec<String>,
        ids: HashMap<String, Keyword>,
    ) -> Result<Self> {
        if words.len() as u64 > MAX_KEYWORD_SPACE || ids.len() != words.len() {
            return Err(SaError::InvalidParameter(format!(
                "{} words ({} distinct) do not make a dictionary of at most {MAX_KEYWORD_SPACE}",
                words.len(),
                ids.len()
            )));
        }
        let mut h = crc32fast::Hasher::new();
        h.update(&[u8::from(tokenizer.keep_stop_words)]);
        for w in &words {
            h.update(w.as_bytes());
            h.update(&[0xff]); // not in UTF-8: separates words
        }
        Ok(Self {
            tokenizer,
            words,
            ids,
            checksum: h.finalize(),
        })
    }

    /// The words in keyword order.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// A CRC-32 of the tokenizer setting and the words in keyword order.
    pub fn checksum(&self) -> u32 {
        self.checksum
    }

    /// The metadata stored with an index of this transform.
    pub fn metadata_record(&self) -> DocumentMetadata {
        DocumentMetadata {
            kind: KIND.to_string(),
            tokenizer: self.tokenizer,
            keyword_space: self.keyword_space(),
            dictionary_crc32: self.checksum,
        }
    }

    /// The keyword of a (lowercase) word, if the dictionary has it.
    pub fn keyword(&self, word: &str) -> Option<Keyword> {
        self.ids.get(word).copied()
    }

    /// Appends the keywords of an indexed document's words to `out` (repeats included; the index
    /// keeps one); a word unknown to the dictionary is an error.
    pub fn keywords(&self, doc: &str, out: &mut Vec<Keyword>) -> Result<()> {
        let mut missing = None;
        self.tokenizer
            .for_each_word(doc, |w| match self.keyword(w) {
                Some(k) => out.push(k),
                None if missing.is_none() => missing = Some(w.to_string()),
                None => {}
            });
        match missing {
            None => Ok(()),
            Some(w) => Err(SaError::NotInDictionary(format!("word {w:?}"))),
        }
    }

    /// The query of a document: one item per distinct known word, keywords ascending.
    pub fn prepare(&self, doc: &str) -> Query {
        let mut kws = Vec::new();
        self.tokenizer
            .for_each_word(doc, |w| kws.extend(self.keyword(w)));
        kws.sort_unstable();
        kws.dedup();
        Query::from_keywords(&kws)
    }
}

impl Transform for DocumentTransform {
    type Item = str;
    type QueryInput = str;

    fn keyword_space(&self) -> u32 {
        self.words.len() as u32
    }

    fn object(&self, item: &str, out: &mut Vec<Keyword>) -> genie_core::Result<()> {
        Ok(self.keywords(item, out)?)
    }

    fn query(&self, input: &str) -> genie_core::Result<Query> {
        Ok(self.prepare(input))
    }

    fn metadata(&self) -> String {
        serde_json::to_string(&self.metadata_record()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_keywords() {
        let docs = [
            "The cat sat on the mat.",
            "A dog; the DOG sat!",
            "Cats & dogs",
        ];
        let t = DocumentTransform::build(Tokenizer::new(), docs).expect("transform");
        assert_eq!(t.words(), ["cat", "sat", "mat", "dog", "cats", "dogs"]);
        let mut out = Vec::new();
        t.keywords(docs[1], &mut out).expect("known");
        assert_eq!(out, [3, 3, 1]);
        assert_eq!(t.prepare("dog cat DOG bird"), Query::from_keywords(&[0, 3]));
        assert!(t.keywords("bird", &mut out).is_err());

        let all = DocumentTransform::build(Tokenizer::keeping_stop_words(), docs).expect("all");
        assert_eq!(&all.words()[..3], ["the", "cat", "sat"]);
        assert_ne!(all.checksum(), t.checksum());
    }

    #[test]
    fn metadata_round_trip() {
        let docs = ["alpha beta", "beta gamma"];
        let t = DocumentTransform::build(Tokenizer::new(), docs).expect("transform");
        let meta: DocumentMetadata = serde_json::from_str(&t.metadata()).expect("json");
        let back = DocumentTransform::from_words(&meta, t.words().to_vec()).expect("back");
        assert_eq!(back.prepare("gamma alpha"), t.prepare("gamma alpha"));
        let swapped = vec!["beta".into(), "alpha".into(), "gamma".into()];
        assert!(DocumentTransform::from_words(&meta, swapped).is_err());
        let dup = vec!["alpha".into(), "alpha".into(), "gamma".into()];
        assert!(DocumentTransform::from_words(&meta, dup).is_err());
    }
}
