//! # genie-sa
//!
//! The "shotgun and assembly" (SA) plugins of GENIE (paper section V): data that has no
//! locality-sensitive hashing is broken into small units ("shotgun"), each unit becomes a keyword
//! of the match-count index of [`genie_core`], and the candidates it returns are assembled into
//! results ("assembly").
//!
//! * [`sequences`]: sequences under edit distance (section V-A), from ordered n-grams to the
//!   verified top-k.
//! * [`documents`]: short documents (section V-B), a keyword per distinct word.
//! * [`table`]: relational tables (section V-C), a keyword block per attribute.
//!
//! Side data an index needs at search time (sequences, word dictionaries) is kept in
//! [`string_table`] files beside the index; [`error`] is the crate's one error type.
//!
//! The edit distances of a sequence search may run on a GPU ([`sequences::device`] over
//! [`gpu`], with the kernels of [`kernels`]; the `cuda` feature).
#![deny(missing_docs)]

pub mod documents;
pub mod error;
pub mod gpu;
pub mod kernels;
pub mod sequences;
pub mod string_table;
pub mod table;

pub use documents::transform::{DocumentMetadata, DocumentTransform};

pub use documents::tokenize::Tokenizer;
pub use error::{Result, SaError};
pub use sequences::device::DeviceSequences;
pub use sequences::ngram::{Alphabet, NGramConfig};
pub use sequences::search::{
    build_sequence_index, SequenceResult, SequenceSearchParams, SequenceSearcher, SequenceStages,
};
pub use sequences::store::SequenceStore;
pub use sequences::transform::{SequenceMetadata, SequenceQuery, SequenceTransform};
pub use sequences::verify::{verify, Outside, SequenceHit, Verified};
pub use string_table::StringTable;
pub use table::query::{Condition, TableQuery};
pub use table::schema::{InferOptions, Schema};
pub use table::transform::{TableMetadata, TableTransform};
