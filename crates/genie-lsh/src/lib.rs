//! # genie-lsh
//!
//! Locality-sensitive hashing plugins for the GENIE match-count index (paper section IV, "Generic
//! ANN search with LSH"). A vector becomes an object of `m` keywords, one per hash function:
//! function `i` hashes the vector (E2LSH, its L1 variant, random binning for the Laplacian kernel,
//! or sign random projections), MurmurHash3 re-hashes the signature into `[0, D)` (Fig. 7), and the
//! keyword is `i * D + bucket`. The match count of a point is then the number of functions on which
//! it collides with the query, an estimate of the similarity (Theorem 4.1, Eqn. 7), and the top
//! objects by count are the tau-ANN candidates (Theorem 4.2) that [`VectorIndex`] re-ranks by the
//! exact distance. [`MinHashTransform`] does the same for sets of keywords and the Jaccard
//! similarity.
//!
//! Modules: [`family`] (families and parameters), [`hash`] (the functions and the re-hash),
//! [`transform`] and [`set_transform`] (the [`genie_core::Transform`] impls), [`params`] (the number
//! of functions, Theorem 4.1 and Eqn. 9), [`estimate`] (defaults from a sample), [`metric`] and
//! [`verify`] (exact distances, the [`genie_core::Verifier`]), [`index`] ([`VectorIndex`]),
//! [`stored`] (what an index file records of its family), [`tune`] (the width and candidates
//! tuned at build for a target recall, with [`tuning`], what it shares with the codebook's
//! tuner), [`vectors`] ([`VectorSet`]) and [`io`] (vector files); [`gpu`] launches the GPU
//! kernels of [`kernels`] (the `cuda` feature).
#![deny(missing_docs)]

pub mod codebook;
pub mod error;
pub mod estimate;
pub mod family;
pub mod gpu;
pub mod hash;
pub mod index;
pub mod io;
pub mod kernels;
pub mod metric;
pub mod params;
pub mod rerank;
pub mod searched;
pub mod set_transform;
pub mod stages;
pub mod store;
pub mod stored;
pub mod transform;
pub mod tune;
pub mod tuning;
pub mod vectors;
pub mod verify;

pub use codebook::{CodebookIndex, CodebookParams, Probe};
pub use error::{LshError, Result};
pub use family::{Family, LshParams};
pub use index::{IndexMetadata, VectorIndex};
pub use metric::Metric;
pub use searched::Searched;
pub use set_transform::{MinHashParams, MinHashTransform};
pub use stages::SearchStages;
pub use store::{Form, Store};
pub use transform::VectorTransform;
pub use vectors::VectorSet;
pub use verify::VectorVerifier;
