//! Short documents (paper section V-B).
//!
//! [`tokenize`] splits text into words (dropping the English [`stopwords`]), [`transform`] maps
//! distinct words to keywords; the match count is the number of distinct shared words.

pub mod stopwords;
pub mod tokenize;
pub mod transform;
