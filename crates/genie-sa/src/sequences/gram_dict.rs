//! The dictionary from ordered n-grams to keywords (paper section V-A.1: "we build an inverted
//! index by treating the ordered n-gram as a keyword").
//!
//! The dictionary is built at index time from the indexed sequences: distinct n-grams are numbered
//! in the order they are first seen (sequence by sequence, left to right), n-gram `g` seen with at
//! most `c_g` repetitions in one sequence owns the `c_g` consecutive keywords
//! `base_g .. base_g + c_g`, and the ordered n-gram `(g, i)` is keyword `base_g + i`. The keyword
//! space is therefore exactly the number of distinct ordered n-grams, with no hash collision, so the
//! match count is exactly Lemma 5.1's `sum_g min(c_s, c_q)`. Ordered n-grams of a query that the
//! dictionary does not know match no object and are left out of the query (they still count in
//! `|G(Q)|` for the certificate).
//!
//! The dictionary is a function of the sequences and the [`NGramConfig`], so it is stored with an
//! index as the sequences themselves (the side file needed for verification anyway) and rebuilt on
//! load; [`GramDictionary::checksum`] (kept in the index metadata) detects a mismatch.

use crate::error::{Result, SaError};
use crate::sequences::ngram::{for_each_ordered_gram, NGramConfig};
use genie_core::index::MAX_KEYWORD_SPACE;
use genie_core::Keyword;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// Ordered n-grams to keywords, built from the indexed sequences.
#[derive(Clone, Debug, Default)]
pub struct GramDictionary {
    config: Option<NGramConfig>,
    /// n-gram -> its number (first-seen order).
    ids: HashMap<Box<[u32]>, u32>,
    /// Per n-gram number: the keyword of occurrence 0 and the number of occurrences.
    slots: Vec<(Keyword, u32)>,
    space: u32,
    checksum: u32,
}

impl GramDictionary {
    /// Builds the dictionary of `sequences` (in id order). Chunks of sequences are read in
    /// parallel, each noting its n-grams in first-seen order with their most occurrences in one
    /// sequence; merged in chunk order, a gram takes the number of its first chunk and place
    /// there, so the numbering is the one of a single pass.
    pub fn build<'a>(
        config: &NGramConfig,
        sequences: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Self> {
        config.validate()?;
        let sequences: Vec<&[u8]> = sequences.into_iter().collect();
        let chunk = (sequences.len() / (rayon::current_num_threads() * 4)).max(MIN_CHUNK);
        let locals: Vec<Result<Local>> = sequences
            .par_chunks(chunk)
            .map(|part| Local::of(config, part))
            .collect();
        let mut ids: HashMap<Box<[u32]>, u32> = HashMap::default();
        let mut counts: Vec<u32> = Vec::new();
        for local in locals {
            let local = local?;
            for (gram, c) in local.grams.into_iter().zip(local.counts) {
                match ids.get(&gram) {
                    Some(&id) => {
                        let old = &mut counts[id as usize];
                        *old = (*old).max(c);
                    }
                    None => {
                        ids.insert(gram, counts.len() as u32);
                        counts.push(c);
                    }
                }
            }
        }
        let mut slots = Vec::with_capacity(counts.len());
        let mut space = 0u64;
        for &c in &counts {
            slots.push((space as Keyword, c));
            space += u64::from(c);
        }
        if space > MAX_KEYWORD_SPACE {
            return Err(SaError::InvalidParameter(format!(
                "{space} distinct ordered n-grams exceed the keyword space limit {MAX_KEYWORD_SPACE}"
            )));
        }
        let checksum = checksum(config, &ids, &slots);
        Ok(Self {
            config: Some(*config),
            ids,
            slots,
            space: space as u32,
            checksum,
        })
    }

    /// The keyword of the ordered n-gram `(gram, occurrence)`, if the indexed data has it.
    pub fn keyword(&self, gram: &[u32], occurrence: u32) -> Option<Keyword> {
        let &id = self.ids.get(gram)?;
        let (base, count) = self.slots[id as usize];
        (occurrence < count).then_some(base + occurrence)
    }

    /// Every n-gram with the keyword of its occurrence 0 and its number of occurrences (their
    /// keywords follow), in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (&[u32], Keyword, u32)> + '_ {
        self.ids.iter().map(|(gram, &id)| {
            let (base, count) = self.slots[id as usize];
            (&gram[..], base, count)
        })
    }

    /// The number of distinct ordered n-grams: keywords are `0..keyword_space()`.
    pub fn keyword_space(&self) -> u32 {
        self.space
    }

    /// The number of distinct n-grams.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the dictionary has no n-gram.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// A CRC-32 of the configuration and of every n-gram with its keywords, in keyword order.
    pub fn checksum(&self) -> u32 {
        self.checksum
    }

    /// The configuration the dictionary was built with.
    pub fn config(&self) -> Option<&NGramConfig> {
        self.config.as_ref()
    }
}

/// Sequences per chunk of [`GramDictionary::build`], at least.
const MIN_CHUNK: usize = 4096;

/// The n-grams of a chunk of sequences in first-seen order, with their most occurrences in one
/// sequence.
struct Local {
    grams: Vec<Box<[u32]>>,
    counts: Vec<u32>,
}

impl Local {
    fn of(config: &NGramConfig, sequences: &[&[u8]]) -> Result<Self> {
        let mut ids: HashMap<Box<[u32]>, u32> = HashMap::default();
        let mut local = Self {
            grams: Vec::new(),
            counts: Vec::new(),
        };
        for seq in sequences {
            let symbols = config.padded_symbols(seq)?;
            for_each_ordered_gram(&symbols, config.n, |gram, occ| {
                let id = match ids.get(gram) {
                    Some(&id) => id as usize,
                    None => {
                        let id = local.counts.len();
                        ids.insert(gram.into(), id as u32);
                        local.grams.push(gram.into());
                        local.counts.push(0);
                        id
                    }
                };
                local.counts[id] = local.counts[id].max(occ + 1);
            });
        }
        Ok(local)
    }
}

fn checksum(config: &NGramConfig, ids: &HashMap<Box<[u32]>, u32>, slots: &[(Keyword, u32)]) -> u32 {
    let mut by_id: Vec<(&[u32], u32)> = ids.iter().map(|(g, &id)| (&**g, id)).collect();
    by_id.sort_unstable_by_key(|&(_, id)| id);
    let mut h = crc32fast::Hasher::new();
    h.update(&(config.n as u64).to_le_bytes());
    h.update(&[u8::from(config.pad), config.alphabet as u8]);
    for (gram, id) in by_id {
        for s in gram {
            h.update(&s.to_le_bytes());
        }
        let (base, count) = slots[id as usize];
        h.update(&base.to_le_bytes());
        h.update(&count.to_le_bytes());
    }
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequences::ngram::Alphabet;

    #[test]
    fn keywords_in_first_seen_order() {
        let config = NGramConfig::new(3, Alphabet::Bytes, false).expect("config");
        let seqs: [&[u8]; 2] = [b"aabaab", b"abaaba"];
        let d = GramDictionary::build(&config, seqs).expect("dictionary");
        // aab: 2 occurrences (0, 1), aba: 2 (2, 3, second from "abaaba"), baa: 4
        assert_eq!(d.keyword(b"aab".map(u32::from).as_slice(), 0), Some(0));
        assert_eq!(d.keyword(b"aab".map(u32::from).as_slice(), 1), Some(1));
        assert_eq!(d.keyword(b"aab".map(u32::from).as_slice(), 2), None);
        assert_eq!(d.keyword(b"aba".map(u32::from).as_slice(), 0), Some(2));
        assert_eq!(d.keyword(b"aba".map(u32::from).as_slice(), 1), Some(3));
        assert_eq!(d.keyword(b"baa".map(u32::from).as_slice(), 0), Some(4));
        assert_eq!(d.keyword(b"bab".map(u32::from).as_slice(), 0), None);
        assert_eq!(d.keyword_space(), 5);
        assert_eq!(d.len(), 3);
    }

    /// The single pass the chunked build must equal: (gram, base, count) in keyword order.
    fn single_pass(config: &NGramConfig, seqs: &[Vec<u8>]) -> Vec<(Vec<u32>, u32, u32)> {
        let mut order: Vec<Vec<u32>> = Vec::new();
        let mut counts: HashMap<Vec<u32>, u32> = HashMap::default();
        for s in seqs {
            let symbols = config.padded_symbols(s).expect("symbols");
            for_each_ordered_gram(&symbols, config.n, |gram, occ| {
                let c = counts.entry(gram.to_vec()).or_insert_with(|| {
                    order.push(gram.to_vec());
                    0
                });
                *c = (*c).max(occ + 1);
            });
        }
        let mut base = 0;
        order
            .into_iter()
            .map(|g| {
                let c = counts[&g];
                base += c;
                (g, base - c, c)
            })
            .collect()
    }

    #[test]
    fn chunks_number_as_one_pass() {
        // enough sequences for several chunks; grams first seen in late chunks too
        let config = NGramConfig::new(3, Alphabet::Bytes, true).expect("config");
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let seqs: Vec<Vec<u8>> = (0..3 * MIN_CHUNK + 17)
            .map(|i| {
                let alphabet = 2 + (i * 7 / MIN_CHUNK) as u64;
                (0..(i % 13))
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        b'a' + (x % alphabet) as u8
                    })
                    .collect()
            })
            .collect();
        let d = GramDictionary::build(&config, seqs.iter().map(Vec::as_slice)).expect("build");
        let want = single_pass(&config, &seqs);
        assert_eq!(d.len(), want.len());
        for (gram, base, count) in &want {
            for occ in 0..*count {
                assert_eq!(d.keyword(gram, occ), Some(base + occ), "{gram:?} {occ}");
            }
            assert_eq!(d.keyword(gram, *count), None);
        }
    }

    #[test]
    fn checksum_follows_content() {
        let config = NGramConfig::new(2, Alphabet::Chars, true).expect("config");
        let a = GramDictionary::build(&config, [&b"abc"[..], b"abd"]).expect("a");
        let b = GramDictionary::build(&config, [&b"abc"[..], b"abd"]).expect("b");
        let c = GramDictionary::build(&config, [&b"abd"[..], b"abc"]).expect("c");
        assert_eq!(a.checksum(), b.checksum());
        assert_ne!(a.checksum(), c.checksum());
    }
}
