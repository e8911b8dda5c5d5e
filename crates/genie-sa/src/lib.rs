//! # genie-sa
//!
//! The "shotgun and assembly" (SA) plugins of GENIE (paper section V): data that has no
//! locality-sensitive hashing is broken into small units ("shotgun"), each unit becomes a keyword
//! of the match-count index of [`genie_core`], and the candidates it returns are assembled into
//! results ("assembly").
//!
//! * **Sequences under edit distance** (section V-A): [`ngram`] cuts sequences into ordered
//!   n-grams (Example 5.1), [`gram_dict`] maps them to keywords, [`sequence`] is the
//!   [`genie_core::Transform`], [`edit_distance`] computes edit distances bit-parallel,
//!   [`mod@verify`] runs Algorithm 2 with the certificate of Theorem 5.2, and [`seq_search`] runs the
//!   whole search, optionally with K doubled until the top-k is proven exact.
//! * **Short documents** (section V-B): [`tokenize`] splits text into words, [`document`] maps
//!   distinct words to keywords; the match count is the number of distinct shared words.
//! * **Relational tables** (section V-C): [`schema`] infers or takes attribute kinds, one
//!   contiguous keyword block per attribute (numeric attributes discretized into equal-width
//!   intervals), [`table_query`] parses queries (exact values, ranges, value +- radius), and
//!   [`table`] is the transform; [`uci`] reads the column names of header-less UCI files.
//!
//! Side data an index needs at search time (sequences, word dictionaries) is kept in [`store`]
//! files beside the index.
//!
//! The edit distances of a sequence search may run on a GPU ([`seq_device`] over [`gpu`], with
//! the kernels of [`kernels`]; the `cuda` feature).
#![deny(missing_docs)]

pub mod document;
pub mod edit_distance;
pub mod error;
pub mod gpu;
pub mod gram_dict;
pub mod kernels;
pub mod ngram;
pub mod schema;
pub mod seq_device;
pub mod seq_search;
pub mod seq_store;
pub mod sequence;
pub mod stopwords;
pub mod store;
pub mod table;
pub mod table_query;
pub mod tokenize;
pub mod uci;
pub mod verify;

pub use document::{DocumentMetadata, DocumentTransform};

pub use error::{Result, SaError};
pub use ngram::{Alphabet, NGramConfig};
pub use schema::{InferOptions, Schema};
pub use seq_device::DeviceSequences;
pub use seq_search::{
    build_sequence_index, SequenceResult, SequenceSearchParams, SequenceSearcher, SequenceStages,
};
pub use seq_store::SequenceStore;
pub use sequence::{SequenceMetadata, SequenceQuery, SequenceTransform};
pub use store::StringTable;
pub use table::{TableMetadata, TableTransform};
pub use table_query::{Condition, TableQuery};
pub use tokenize::Tokenizer;
pub use verify::{verify, Outside, SequenceHit, Verified};
