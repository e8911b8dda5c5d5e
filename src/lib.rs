//! The library behind the `genie` command-line program: parsing of the objects and queries text
//! files ([`input`]), JSON-lines output of search results ([`output`]) and progress bars
//! ([`progress`]), and the vector commands over the LSH plugin ([`vectors`]). The index itself is
//! [`genie_core`], re-exported as `genie::core`; the LSH plugin is [`genie_lsh`], re-exported as
//! `genie::lsh`.
#![deny(missing_docs)]

pub use genie_core as core;
pub use genie_lsh as lsh;

pub mod input;
pub mod output;
pub mod progress;
pub mod vectors;
