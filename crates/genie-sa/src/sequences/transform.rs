//! The sequence transform (paper section V-A): a sequence becomes the set of keywords of its
//! ordered n-grams ([`super::ngram`]), through a [`GramDictionary`] built from the indexed
//! sequences; a query becomes one single-keyword item per ordered n-gram the dictionary knows.

use crate::error::{Result, SaError};
use crate::sequences::gram_dict::GramDictionary;
use crate::sequences::ngram::{for_each_ordered_gram, NGramConfig};
use genie_core::{Keyword, Query, Transform};
use serde::{Deserialize, Serialize};

/// The kind name of sequence indexes in their metadata.
pub const KIND: &str = "sequences";

/// Ordered n-grams of sequences mapped to keywords.
///
/// ```
/// use genie_sa::{NGramConfig, SequenceTransform};
/// use genie_core::Transform;
/// let seqs: [&[u8]; 2] = [b"aabaab", b"abab"];
/// let t = SequenceTransform::build(NGramConfig::default(), seqs).unwrap();
/// let index = {
///     let mut b = t.builder();
///     let mut kws = Vec::new();
///     for s in seqs {
///         kws.clear();
///         t.object(s, &mut kws).unwrap();
///         b.push_object(&kws).unwrap();
///     }
///     b.build().unwrap()
/// };
/// assert_eq!(index.num_objects(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct SequenceTransform {
    config: NGramConfig,
    dict: GramDictionary,
}

/// A query sequence made ready for search and verification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceQuery {
    /// One item per ordered n-gram of the query that the dictionary knows.
    pub query: Query,
    /// The query's symbols (unpadded), for the edit distance.
    pub symbols: Vec<u32>,
    /// `|G(Q)|`: all ordered n-grams of the query, known or not (Theorems 5.1 and 5.2).
    pub grams: usize,
}

/// What a sequence index records about its transform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceMetadata {
    /// Always [`KIND`].
    pub kind: String,
    /// The n-gram configuration.
    #[serde(flatten)]
    pub config: NGramConfig,
    /// Distinct ordered n-grams (the keyword space).
    pub keyword_space: u32,
    /// [`GramDictionary::checksum`].
    pub dictionary_crc32: u32,
}

impl SequenceTransform {
    /// Builds the dictionary of `sequences` (all the sequences to be indexed, in id order).
    pub fn build<'a>(
        config: NGramConfig,
        sequences: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Self> {
        let dict = GramDictionary::build(&config, sequences)?;
        Ok(Self { config, dict })
    }

    /// Rebuilds the transform of an index from its sequences and checks it against the index's
    /// metadata (configuration, keyword space and dictionary checksum).
    pub fn rebuild<'a>(
        metadata: &SequenceMetadata,
        sequences: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Self> {
        if metadata.kind != KIND {
            return Err(SaError::BadMetadata(format!(
                "kind {:?}, expected {KIND:?}",
                metadata.kind
            )));
        }
        let t = Self::build(metadata.config, sequences)?;
        if t.dict.keyword_space() != metadata.keyword_space
            || t.dict.checksum() != metadata.dictionary_crc32
        {
            return Err(SaError::BadMetadata(
                "the sequences do not give the n-gram dictionary the index was built with".into(),
            ));
        }
        Ok(t)
    }

    /// The n-gram configuration.
    pub fn config(&self) -> &NGramConfig {
        &self.config
    }

    /// The n-gram dictionary.
    pub fn dictionary(&self) -> &GramDictionary {
        &self.dict
    }

    /// The metadata stored with an index of this transform.
    pub fn metadata_record(&self) -> SequenceMetadata {
        SequenceMetadata {
            kind: KIND.to_string(),
            config: self.config,
            keyword_space: self.dict.keyword_space(),
            dictionary_crc32: self.dict.checksum(),
        }
    }

    /// Prepares a query sequence: its items, symbols and n-gram count.
    pub fn prepare(&self, seq: &[u8]) -> Result<SequenceQuery> {
        let padded = self.config.padded_symbols(seq)?;
        let mut keywords = Vec::with_capacity(padded.len());
        let mut grams = 0;
        for_each_ordered_gram(&padded, self.config.n, |gram, occ| {
            grams += 1;
            keywords.extend(self.dict.keyword(gram, occ));
        });
        let pads = if self.config.pad {
            self.config.n - 1
        } else {
            0
        };
        Ok(SequenceQuery {
            query: Query::from_keywords(&keywords),
            symbols: padded[pads..padded.len() - pads].to_vec(),
            grams,
        })
    }

    /// Appends the keywords of an indexed sequence to `out`; an n-gram unknown to the dictionary
    /// (a sequence that was not among those the transform was built from) is an error.
    pub fn keywords(&self, seq: &[u8], out: &mut Vec<Keyword>) -> Result<()> {
        let padded = self.config.padded_symbols(seq)?;
        let mut missing = None;
        for_each_ordered_gram(&padded, self.config.n, |gram, occ| {
            match self.dict.keyword(gram, occ) {
                Some(k) => out.push(k),
                None if missing.is_none() => missing = Some((gram.to_vec(), occ)),
                None => {}
            }
        });
        match missing {
            None => Ok(()),
            Some((gram, occ)) => Err(SaError::NotInDictionary(format!(
                "ordered n-gram ({:?}, {occ})",
                self.config.alphabet.render(&gram)
            ))),
        }
    }
}

impl Transform for SequenceTransform {
    type Item = [u8];
    type QueryInput = [u8];

    fn keyword_space(&self) -> u32 {
        self.dict.keyword_space()
    }

    fn object(&self, item: &[u8], out: &mut Vec<Keyword>) -> genie_core::Result<()> {
        Ok(self.keywords(item, out)?)
    }

    fn query(&self, input: &[u8]) -> genie_core::Result<Query> {
        Ok(self.prepare(input)?.query)
    }

    fn metadata(&self) -> String {
        serde_json::to_string(&self.metadata_record()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequences::ngram::Alphabet;

    #[test]
    fn golden_keywords() {
        let config = NGramConfig::new(3, Alphabet::Bytes, false).expect("config");
        let seqs: [&[u8]; 3] = [b"aabaab", b"abaaba", b"ab"];
        let t = SequenceTransform::build(config, seqs).expect("transform");
        let kws = |s: &[u8]| {
            let mut out = Vec::new();
            t.keywords(s, &mut out).expect("known");
            out
        };
        assert_eq!(kws(b"aabaab"), [0, 2, 4, 1]);
        assert_eq!(kws(b"abaaba"), [2, 4, 0, 3]);
        assert_eq!(kws(b"ab"), Vec::<u32>::new());
        let e = t.keywords(b"abb", &mut Vec::new()).expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "ordered n-gram (\"abb\", 0) is not in the dictionary built at index time"
        );
        let q = t.prepare(b"aabxaab").expect("query");
        assert_eq!(q.grams, 5);
        assert_eq!(q.query, Query::from_keywords(&[0, 1]));
        assert_eq!(q.symbols, b"aabxaab".map(u32::from));
    }

    #[test]
    fn golden_padded_keywords() {
        let t = SequenceTransform::build(NGramConfig::default(), [&b"ab"[..], b"ba"])
            .expect("transform");
        // ^^a ^ab ab$ b$$ | ^^b ^ba ba$ a$$
        let mut out = Vec::new();
        t.keywords(b"ba", &mut out).expect("known");
        assert_eq!(out, [4, 5, 6, 7]);
        let q = t.prepare(b"a").expect("query");
        // ^^a a$$ are known, ^a$ is not
        assert_eq!(q.query, Query::from_keywords(&[0, 7]));
        assert_eq!(q.grams, 3);
        assert_eq!(q.symbols, [u32::from(b'a')]);
    }

    #[test]
    fn metadata_round_trip() {
        let seqs: [&[u8]; 2] = [b"hello", b"world"];
        let t = SequenceTransform::build(NGramConfig::default(), seqs).expect("transform");
        let meta: SequenceMetadata = serde_json::from_str(&t.metadata()).expect("json");
        assert_eq!(meta, t.metadata_record());
        assert!(SequenceTransform::rebuild(&meta, seqs).is_ok());
        let other: [&[u8]; 2] = [b"hello", b"word"];
        assert!(matches!(
            SequenceTransform::rebuild(&meta, other),
            Err(SaError::BadMetadata(_))
        ));
    }
}
