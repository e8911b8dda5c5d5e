//! The library behind the `genie` command-line program: parsing of the objects and queries text
//! files ([`input`]), JSON-lines output of search results ([`output`]) and progress bars
//! ([`progress`]). The index itself is [`genie_core`], re-exported as `genie::core`.
//!
//! Besides keyword objects, `genie` indexes the data kinds of the shotgun-and-assembly plugins
//! ([`genie_sa`], re-exported as `genie::sa`): [`sequences`] under edit distance, short
//! [`documents`] and relational [`table`]s; [`kinds`] tells them apart by the index metadata,
//! [`csv_input`] reads CSV files and [`data_error`] is their error type.
//!
//! Vectors are indexed through the LSH plugin ([`genie_lsh`], re-exported as `genie::lsh`) by
//! [`vectors`].
//!
//! For benchmarks against peer implementations, [`dump`] writes an index, its queries and genie's
//! top-k counts as NumPy files ([`npy`]).
#![deny(missing_docs)]

pub use genie_core as core;
pub use genie_lsh as lsh;
pub use genie_sa as sa;

pub mod csv_input;
pub mod data_error;
pub mod documents;
pub mod dump;
pub mod input;
pub mod kinds;
pub mod npy;
pub mod output;
pub mod progress;
pub mod searcher;
pub mod sequences;
pub mod table;
pub mod vectors;
