//! genie: the library behind the `genie` program, its server and any program of one's own that
//! searches GENIE match-count indexes ([`genie_core`], re-exported as `genie::core`).
//!
//! - [`kind`]: the data kinds behind one trait (keyword objects, and through the plugins
//!   [`genie_sa`] and [`genie_lsh`] sequences, documents, table rows and vectors), with a
//!   [`kind::Registry`] to which a user's crate adds its own.
//! - [`open`]: opens an index file of any kind on the chosen devices (replicas, or parts).
//! - [`info`]: what `genie info` tells about an index file.
//! - [`service`]: the batching handle, a cheap-to-clone `Send + Sync` value that gathers queries
//!   from many callers (async tasks or threads) into batches for one runner per device.
//! - [`server`]: the HTTP server of `genie serve` on that handle, and its client.
//! - [`cli`]: what the commands of the `genie` program do (the kinds' flags made from their
//!   declared options, build, search and serve), apart from its command line.
//! - [`input`], [`csv_input`]: the text input files, read line by line with errors that name the
//!   file and line; [`objects`]: keyword objects in text (parsed in parallel), NumPy ([`npy`]),
//!   Parquet and Arrow files.
//!
//! Features: `cuda` (the GPU backend, loaded at run time), `server` (the HTTP server over the
//! service: axum), `client` (its client: reqwest), `cli` (the `genie` program: both, with clap).
//! A program that only searches (the Python package) takes none of the last three.
#![deny(missing_docs)]

pub use genie_core as core;
pub use genie_lsh as lsh;
pub use genie_sa as sa;

#[cfg(feature = "cli")]
pub mod cli;
pub mod csv_input;
pub mod data_error;
pub mod info;
pub mod input;
pub mod kind;
pub mod live;
pub mod npy;
pub mod objects;
pub mod open;
pub mod safety;
pub mod searcher;
#[cfg(feature = "server")]
pub mod server;
pub mod service;

/// Milliseconds since the first call in this process: the clock of the debug log's timeline
/// (`genie -v` with `RUST_LOG=genie=trace`), which places a chunk's reading, queueing, search
/// and output against each other.
pub fn clock_ms() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1e3
}
