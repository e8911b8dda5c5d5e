//! Sequences under edit distance (paper section V-A).
//!
//! [`ngram`] cuts sequences into ordered n-grams (Example 5.1), [`gram_dict`] maps them to
//! keywords, [`transform`] is the [`genie_core::Transform`], [`edit_distance`] computes edit
//! distances bit-parallel, [`mod@verify`] runs Algorithm 2 with the certificate of Theorem 5.2,
//! and [`search`] runs the whole search, optionally with K doubled until the top-k is proven
//! exact. [`store`] holds the indexed sequences for verification, [`device`] the same sequences
//! on a GPU.

pub mod device;
pub mod edit_distance;
pub mod gram_dict;
pub mod ngram;
pub mod search;
pub mod store;
pub mod transform;
pub mod verify;
