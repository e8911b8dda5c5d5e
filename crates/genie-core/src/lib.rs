//! # genie-core
//!
//! A generic match-count inverted index for similarity search, after GENIE (Zhou et al., "A
//! Generic Inverted Index Framework for Similarity Search on the GPU"). An object is a set of
//! keywords; a query is a list of weighted keyword ranges; the match count of an object is the
//! weighted number of its keywords inside the query's ranges. Per query, the engine returns the
//! top-k objects by count, ties broken by ascending id, on the CPU or a GPU with identical results.
//!
//! Modules: [`model`] (Definition 2.1), [`index`] (List Array, Position Map, sublists, build,
//! persistence), [`cpq`] (Count Priority Queue), [`baseline`] (count table), [`backend`] (CPU and
//! CUDA, device selection), [`engine`] (batching), [`parts`] (multi-loading), [`oracle`] (brute force for tests), [`plugin`] (transform and verifier traits),
//! [`npy`] (the NumPy `.npy` header that the vector and keyword readers share), [`live`] (the
//! write-ahead log that live indexes are to be built on), [`mask`] (the objects a search may
//! return: deletes and filters, applied before the top-k selection).
#![deny(missing_docs)]

pub mod atomic;
pub mod backend;
pub mod baseline;
pub mod cpq;
pub mod engine;
pub mod error;
pub mod huge;
pub mod index;
pub mod live;
pub mod mask;
pub mod model;
pub mod npy;
pub mod oracle;
pub use index::packed;
pub mod parts;
pub mod plugin;

pub use backend::StageTimes;
pub use backend::{
    select_backend, select_backends, Backend, CpuBackend, CpuCosts, CudaBackend, DeviceChoice,
    Method, ResidentIndex, SearchParams,
};
pub use engine::Engine;
pub use error::{GenieError, Result};
pub use index::{IndexBuilder, InvertedIndex, PreparedQuery};
pub use mask::ObjectMask;
pub use model::{contract_order, Hit, Item, Keyword, ObjectId, Query};
pub use parts::{IndexPart, PartSource, PartStat, PartedEngine};
pub use plugin::{rank_verified, rerank, Transform, VerifiedHit, Verifier};
