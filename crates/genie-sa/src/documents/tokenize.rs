//! The tokenizer of short documents (paper section V-B: documents are "broken down into words").
//!
//! Exactly:
//! 1. a **token** is a maximal run of characters `c` with [`char::is_alphanumeric`] (Unicode
//!    `Alphabetic` or `Numeric`); everything else (spaces, punctuation, apostrophes, `#`, `@`,
//!    symbols, emoji) separates tokens, so `don't` gives `don` and `t`, `U.S.A.` gives `u`, `s`,
//!    `a`, `http://t.co/x1` gives `http`, `t`, `co`, `x1`;
//! 2. each token is **lowercased** with [`str::to_lowercase`] (Unicode's full mapping);
//! 3. tokens on the English stop-word list ([`super::stopwords::ENGLISH`]) are dropped, unless
//!    [`Tokenizer::keep_stop_words`] is set.
//!
//! There is no stemming and no length limit. Tokens are the words of the document; a document is
//! the *set* of its words.

use crate::documents::stopwords::is_stop_word;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Splits text into lowercase words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tokenizer {
    /// Keep English stop words (dropped by default).
    pub keep_stop_words: bool,
}

impl Tokenizer {
    /// The default tokenizer: stop words dropped.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tokenizer that keeps stop words.
    pub fn keeping_stop_words() -> Self {
        Self {
            keep_stop_words: true,
        }
    }

    /// Calls `f` with each word of `text`, in order (repeats included).
    pub fn for_each_word(&self, text: &str, mut f: impl FnMut(&str)) {
        for raw in text.split(|c: char| !c.is_alphanumeric()) {
            if raw.is_empty() {
                continue;
            }
            let word = lowercase(raw);
            if self.keep_stop_words || !is_stop_word(&word) {
                f(&word);
            }
        }
    }

    /// The words of `text`, in order (repeats included).
    ///
    /// ```
    /// use genie_sa::documents::tokenize::Tokenizer;
    /// let words = Tokenizer::new().words("Don't STOP me now: it's 2 a.m. in Zürich!");
    /// assert_eq!(words, ["stop", "2", "zürich"]);
    /// let all = Tokenizer::keeping_stop_words().words("Don't stop");
    /// assert_eq!(all, ["don", "t", "stop"]);
    /// ```
    pub fn words(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_word(text, |w| out.push(w.to_string()));
        out
    }
}

fn lowercase(token: &str) -> Cow<'_, str> {
    if token
        .bytes()
        .all(|b| !b.is_ascii_uppercase() && b.is_ascii())
    {
        Cow::Borrowed(token)
    } else {
        Cow::Owned(token.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_tokens() {
        let t = Tokenizer::keeping_stop_words();
        assert_eq!(
            t.words("RT @realDonaldTrump: U.S.A. #MAGA http://t.co/x1 — 100%  Ünïcödé_ok"),
            [
                "rt",
                "realdonaldtrump",
                "u",
                "s",
                "a",
                "maga",
                "http",
                "t",
                "co",
                "x1",
                "100",
                "ünïcödé",
                "ok"
            ]
        );
        assert_eq!(
            Tokenizer::new().words("RT @realDonaldTrump: U.S.A. #MAGA"),
            ["rt", "realdonaldtrump", "u", "maga"]
        );
        assert!(Tokenizer::new().words("").is_empty());
        assert!(Tokenizer::new().words("the and of!!").is_empty());
        assert_eq!(Tokenizer::new().words("ΣΊΣΥΦΟΣ"), ["σίσυφος"]);
    }
}
