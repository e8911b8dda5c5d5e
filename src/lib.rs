//! The library behind the `genie` command-line program: parsing of the objects and queries text
//! files ([`input`]), JSON-lines output of search results ([`output`]) and progress bars
//! ([`progress`]). The index itself is [`genie_core`], re-exported as `genie::core`.
#![deny(missing_docs)]

pub use genie_core as core;

pub mod input;
pub mod output;
pub mod progress;
pub mod searcher;
