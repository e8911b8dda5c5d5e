//! The indexed sequences, kept for verification (paper section V-A.2: the edit distance of each
//! candidate is computed from the sequence itself). Saved beside an index as `INDEX.seqs`
//! ([`StringTable`] format).

use crate::error::{Result, SaError};
use crate::sequences::edit_distance::Pattern;
use crate::sequences::ngram::Alphabet;
use crate::string_table::StringTable;
use genie_core::{ObjectId, Verifier};

/// Sequences by object id, with their lengths in symbols.
#[derive(Clone, Debug)]
pub struct SequenceStore {
    table: StringTable,
    alphabet: Alphabet,
    lens: Vec<u32>,
}

impl SequenceStore {
    /// A store over `table`, read with `alphabet` (every sequence must be UTF-8 for
    /// [`Alphabet::Chars`]; the error names the first one that is not).
    pub fn new(table: StringTable, alphabet: Alphabet) -> Result<Self> {
        let lens = table
            .iter()
            .enumerate()
            .map(|(id, s)| {
                let len = alphabet
                    .len(s)
                    .map_err(|e| SaError::InvalidParameter(format!("sequence {id}: {e}")))?;
                u32::try_from(len).map_err(|_| {
                    SaError::InvalidParameter(format!("sequence {id} is longer than 2^32 symbols"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            table,
            alphabet,
            lens,
        })
    }

    /// The number of sequences.
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// The bytes of sequence `id`.
    pub fn bytes(&self, id: ObjectId) -> &[u8] {
        self.table.get(id as usize)
    }

    /// The length of sequence `id` in symbols.
    pub fn symbol_len(&self, id: ObjectId) -> u32 {
        self.lens[id as usize]
    }

    /// The underlying table (to save it).
    pub fn table(&self) -> &StringTable {
        &self.table
    }

    /// The alphabet.
    pub fn alphabet(&self) -> Alphabet {
        self.alphabet
    }

    /// Appends the symbols of sequence `id` to `out` (bytes, or the code points of UTF-8 text).
    pub fn symbols(&self, id: ObjectId, out: &mut Vec<u32>) -> Result<()> {
        let bytes = self.bytes(id);
        match self.alphabet {
            Alphabet::Bytes => out.extend(bytes.iter().map(|&b| u32::from(b))),
            Alphabet::Chars => {
                let text = std::str::from_utf8(bytes).map_err(|e| SaError::NotUtf8 {
                    offset: e.valid_up_to(),
                })?;
                out.extend(text.chars().map(u32::from));
            }
        }
        Ok(())
    }

    /// The edit distance between a prepared pattern and sequence `id`.
    pub fn distance_to(&self, pattern: &Pattern, id: ObjectId) -> Result<u32> {
        let bytes = self.bytes(id);
        Ok(match self.alphabet {
            Alphabet::Bytes => pattern.distance(bytes.iter().map(|&b| u32::from(b))),
            Alphabet::Chars => {
                let text = std::str::from_utf8(bytes).map_err(|e| SaError::NotUtf8 {
                    offset: e.valid_up_to(),
                })?;
                pattern.distance(text.chars().map(u32::from))
            }
        })
    }
}

/// The edit distance between a query's symbols and an indexed sequence, for
/// [`genie_core::rerank`]. (The sequence search itself uses [`fn@crate::verify`], which adds the
/// count and length filters of Algorithm 2 and the certificate of Theorem 5.2.)
impl Verifier for SequenceStore {
    type QueryInput = [u32];

    fn distance(&self, query: &[u32], id: ObjectId) -> genie_core::Result<f64> {
        if id as usize >= self.len() {
            return Err(genie_core::GenieError::InvalidParameter(format!(
                "object {id} is not among the {} sequences",
                self.len()
            )));
        }
        Ok(f64::from(self.distance_to(&Pattern::new(query), id)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use genie_core::{rerank, Hit};

    #[test]
    fn lengths_and_distances() {
        let table: StringTable = ["héllo", "hello", "help"].into_iter().collect();
        let chars = SequenceStore::new(table.clone(), Alphabet::Chars).expect("chars");
        let bytes = SequenceStore::new(table, Alphabet::Bytes).expect("bytes");
        assert_eq!(chars.symbol_len(0), 5);
        assert_eq!(bytes.symbol_len(0), 6);
        let q: Vec<u32> = "hello".chars().map(u32::from).collect();
        let hits = [0, 1, 2].map(|id| Hit { id, count: 1 });
        let ranked = rerank(&chars, q.as_slice(), &hits, 3).expect("rerank");
        let order: Vec<(u32, f64)> = ranked.iter().map(|h| (h.id, h.distance)).collect();
        assert_eq!(order, [(1, 0.0), (0, 1.0), (2, 2.0)]);
        assert_eq!(bytes.distance(&q, 0).expect("bytes"), 2.0);
        assert!(chars.distance(&q, 3).is_err());
    }

    #[test]
    fn chars_need_utf8() {
        let table: StringTable = [&b"ok"[..], b"\xff"].into_iter().collect();
        let e = SequenceStore::new(table.clone(), Alphabet::Chars).expect_err("not UTF-8");
        assert!(e.to_string().contains("sequence 1"), "{e}");
        assert!(SequenceStore::new(table, Alphabet::Bytes).is_ok());
    }
}
