//! Ordered n-grams, the "shotgun" step for sequences (paper section V-A.1, Example 5.1).
//!
//! A sequence is read as a list of **symbols**: its bytes ([`Alphabet::Bytes`]) or its Unicode
//! scalar values ([`Alphabet::Chars`], the input must be UTF-8). A length-`n` window slides over
//! the symbols; the i-th repetition of the same n-gram becomes the ordered n-gram `(gram, i)`
//! (0-based), so a sequence is a *set* of ordered n-grams and the match count of two sequences is
//! the size of the multiset intersection of their n-grams (Lemma 5.1).
//!
//! **Sequences shorter than n.** Without padding, a sequence of `len < n` symbols has no n-gram:
//! it is indexed as an empty object (it keeps its id) and can only be reached through a query
//! that a certificate does not need. With padding ([`NGramConfig::pad`], the default), `n - 1`
//! copies of [`PAD_FRONT`] are put before the symbols and `n - 1` copies of [`PAD_BACK`] after
//! them, so every sequence, the empty one included, has `len + n - 1` n-grams and short
//! sequences are found like long ones. The pad symbols lie outside both alphabets.
//!
//! In both cases `|G(Q)|` ([`NGramConfig::num_grams`]) is the number of ordered n-grams of `Q`,
//! and Theorem 5.1 reads `MC(G(S), G(Q)) >= |G(Q)| - n * ed(S, Q)`: one edit operation destroys at
//! most `n` of the n-grams of `Q` (with padding this is the bound of Gravano et al., "Approximate
//! string joins in a database (almost) for free", 2001).

use crate::error::{Result, SaError};
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

/// The pad symbol put `n - 1` times before a padded sequence (not a byte, not a `char`).
pub const PAD_FRONT: u32 = 0x11_0000;
/// The pad symbol put `n - 1` times after a padded sequence.
pub const PAD_BACK: u32 = 0x11_0001;

/// What the symbols of a sequence are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Alphabet {
    /// Each byte is a symbol (any bytes are accepted).
    Bytes,
    /// Each Unicode scalar value is a symbol (the sequence must be UTF-8).
    #[default]
    Chars,
}

impl Alphabet {
    /// Appends the symbols of `seq` to `out`.
    pub fn symbols_into(self, seq: &[u8], out: &mut Vec<u32>) -> Result<()> {
        match self {
            Self::Bytes => out.extend(seq.iter().map(|&b| u32::from(b))),
            Self::Chars => out.extend(utf8(seq)?.chars().map(u32::from)),
        }
        Ok(())
    }

    /// The symbols of `seq`.
    pub fn symbols(self, seq: &[u8]) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(seq.len());
        self.symbols_into(seq, &mut out)?;
        Ok(out)
    }

    /// The number of symbols of `seq`.
    pub fn len(self, seq: &[u8]) -> Result<usize> {
        match self {
            Self::Bytes => Ok(seq.len()),
            Self::Chars => Ok(utf8(seq)?.chars().count()),
        }
    }

    /// Renders symbols for messages: characters as they are, bytes that are not printable ASCII
    /// as `\xNN`, pads as `^` (front) and `$` (back).
    pub fn render(self, symbols: &[u32]) -> String {
        symbols
            .iter()
            .map(|&s| match s {
                PAD_FRONT => "^".to_string(),
                PAD_BACK => "$".to_string(),
                s if self == Self::Bytes && !(0x20..0x7f).contains(&s) => format!("\\x{s:02x}"),
                s => char::from_u32(s).map_or_else(|| format!("\\u{{{s:x}}}"), String::from),
            })
            .collect()
    }
}

fn utf8(seq: &[u8]) -> Result<&str> {
    std::str::from_utf8(seq).map_err(|e| SaError::NotUtf8 {
        offset: e.valid_up_to(),
    })
}

/// How sequences are cut into ordered n-grams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NGramConfig {
    /// The window length, at least 1.
    pub n: usize,
    /// Bytes or Unicode scalar values.
    pub alphabet: Alphabet,
    /// Whether `n - 1` pad symbols are put at both ends (see the module docs).
    pub pad: bool,
}

/// Largest supported n: a gram is a key of the dictionary, and longer grams only lose matches.
pub const MAX_N: usize = 64;

impl Default for NGramConfig {
    /// `n = 3` over Unicode scalar values, padded: the setting of the `genie` CLI. With the
    /// default search (K = 32, doubled up to 1024 while a query is not proven), 1024 queries made
    /// from an English word list by changing 20% of the letters all found a nearest word (top-1
    /// accuracy 1.000; one round of K = 32 alone: 0.983). See `examples/sequences.rs` and
    /// docs/SA.md.
    fn default() -> Self {
        Self {
            n: 3,
            alphabet: Alphabet::Chars,
            pad: true,
        }
    }
}

impl NGramConfig {
    /// A checked configuration.
    pub fn new(n: usize, alphabet: Alphabet, pad: bool) -> Result<Self> {
        let c = Self { n, alphabet, pad };
        c.validate()?;
        Ok(c)
    }

    /// Checks `1 <= n <= MAX_N`.
    pub fn validate(&self) -> Result<()> {
        if self.n == 0 || self.n > MAX_N {
            return Err(SaError::InvalidParameter(format!(
                "n-gram length {} is outside 1..={MAX_N}",
                self.n
            )));
        }
        Ok(())
    }

    /// `|G(S)|`, the number of ordered n-grams of a sequence of `len` symbols.
    pub fn num_grams(&self, len: usize) -> usize {
        if self.pad {
            len + self.n - 1
        } else {
            (len + 1).saturating_sub(self.n)
        }
    }

    /// The symbols of `seq`, padded when the configuration says so.
    pub fn padded_symbols(&self, seq: &[u8]) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(seq.len() + 2 * self.n);
        let pads = if self.pad { self.n - 1 } else { 0 };
        out.resize(pads, PAD_FRONT);
        self.alphabet.symbols_into(seq, &mut out)?;
        out.resize(out.len() + pads, PAD_BACK);
        Ok(out)
    }

    /// The lower bound of Theorem 5.1 on the match count of any sequence within edit distance
    /// `tau` of a query with `query_grams` ordered n-grams: `|G(Q)| - n * tau` (may be negative).
    pub fn count_bound(&self, query_grams: usize, tau: u32) -> i64 {
        query_grams as i64 - self.n as i64 * i64::from(tau)
    }
}

/// An ordered n-gram: the n symbols and which repetition of them in the sequence it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OrderedGram {
    /// The n symbols.
    pub gram: Vec<u32>,
    /// 0 for the first occurrence of `gram` in the sequence, 1 for the second, ...
    pub occurrence: u32,
}

/// Calls `f(gram, occurrence)` for each length-`n` window of `symbols`, left to right.
pub fn for_each_ordered_gram(symbols: &[u32], n: usize, mut f: impl FnMut(&[u32], u32)) {
    if n == 0 || symbols.len() < n {
        return;
    }
    let mut seen: HashMap<&[u32], u32> =
        HashMap::with_capacity_and_hasher(symbols.len() + 1 - n, Default::default());
    for gram in symbols.windows(n) {
        let occ = seen.entry(gram).or_insert(0);
        f(gram, *occ);
        *occ += 1;
    }
}

/// The ordered n-grams `G(S)` of a sequence, in order of position (Example 5.1).
///
/// ```
/// use genie_sa::sequences::ngram::{ordered_grams, Alphabet, NGramConfig};
/// let config = NGramConfig::new(3, Alphabet::Bytes, false).unwrap();
/// let grams: Vec<(String, u32)> = ordered_grams(&config, b"aabaab")
///     .unwrap()
///     .into_iter()
///     .map(|g| (Alphabet::Bytes.render(&g.gram), g.occurrence))
///     .collect();
/// let expected = [("aab", 0), ("aba", 0), ("baa", 0), ("aab", 1)];
/// assert_eq!(grams, expected.map(|(g, o)| (g.to_string(), o)));
/// ```
pub fn ordered_grams(config: &NGramConfig, seq: &[u8]) -> Result<Vec<OrderedGram>> {
    config.validate()?;
    let symbols = config.padded_symbols(seq)?;
    let mut out = Vec::with_capacity(config.num_grams(symbols.len()));
    for_each_ordered_gram(&symbols, config.n, |gram, occurrence| {
        out.push(OrderedGram {
            gram: gram.to_vec(),
            occurrence,
        });
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(config: &NGramConfig, seq: &[u8]) -> Vec<(String, u32)> {
        ordered_grams(config, seq)
            .expect("grams")
            .into_iter()
            .map(|g| (config.alphabet.render(&g.gram), g.occurrence))
            .collect()
    }

    fn pairs(expected: &[(&str, u32)]) -> Vec<(String, u32)> {
        expected.iter().map(|&(g, o)| (g.to_string(), o)).collect()
    }

    #[test]
    fn example_5_1() {
        for alphabet in [Alphabet::Bytes, Alphabet::Chars] {
            let config = NGramConfig::new(3, alphabet, false).expect("config");
            assert_eq!(
                rendered(&config, b"aabaab"),
                pairs(&[("aab", 0), ("aba", 0), ("baa", 0), ("aab", 1)])
            );
        }
    }

    #[test]
    fn padded_grams() {
        let config = NGramConfig::new(3, Alphabet::Chars, true).expect("config");
        assert_eq!(
            rendered(&config, b"aab"),
            pairs(&[("^^a", 0), ("^aa", 0), ("aab", 0), ("ab$", 0), ("b$$", 0)])
        );
        assert_eq!(rendered(&config, b""), pairs(&[("^^$", 0), ("^$$", 0)]));
        assert_eq!(config.num_grams(0), 2);
        assert_eq!(config.num_grams(3), 5);
    }

    #[test]
    fn bytes_and_chars_differ_beyond_ascii() {
        let seq = "héé".as_bytes();
        let chars = NGramConfig::new(1, Alphabet::Chars, false).expect("config");
        assert_eq!(
            rendered(&chars, seq),
            pairs(&[("h", 0), ("é", 0), ("é", 1)])
        );
        let bytes = NGramConfig::new(2, Alphabet::Bytes, false).expect("config");
        assert_eq!(
            rendered(&bytes, seq),
            pairs(&[
                ("h\\xc3", 0),
                ("\\xc3\\xa9", 0),
                ("\\xa9\\xc3", 0),
                ("\\xc3\\xa9", 1)
            ])
        );
    }

    #[test]
    fn shorter_than_n() {
        let config = NGramConfig::new(4, Alphabet::Bytes, false).expect("config");
        assert!(ordered_grams(&config, b"abc").expect("grams").is_empty());
        assert_eq!(config.num_grams(3), 0);
        assert_eq!(config.num_grams(4), 1);
    }

    #[test]
    fn errors() {
        assert!(NGramConfig::new(0, Alphabet::Bytes, false).is_err());
        assert!(NGramConfig::new(MAX_N + 1, Alphabet::Bytes, false).is_err());
        let config = NGramConfig::new(2, Alphabet::Chars, false).expect("config");
        assert!(matches!(
            ordered_grams(&config, b"ab\xffc"),
            Err(SaError::NotUtf8 { offset: 2 })
        ));
        let bytes = NGramConfig::new(2, Alphabet::Bytes, false).expect("config");
        assert_eq!(ordered_grams(&bytes, b"ab\xffc").expect("bytes").len(), 3);
    }
}
