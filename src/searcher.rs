//! How a count index (keywords, documents, tables) is searched: resident on one device, or split
//! into parts that stream through one or more devices (multi-loading), with the same results
//! either way; one type for both, made by [`crate::kind::Placement::searcher`].

use genie_core::parts::{open_parts, plan_parts, PartSource};
use genie_core::{
    Backend, Engine, GenieError, Hit, InvertedIndex, PartedEngine, Query, SearchParams,
};
use std::path::Path;
use std::sync::Arc;

/// A ready search: one engine, or parts and the devices they stream through.
pub enum Searcher {
    /// The whole index resident on one device.
    Single(Engine),
    /// Parts searched in turn on each backend and merged.
    Parted {
        /// The parts, in object order.
        parts: Vec<PartSource>,
        /// One backend per device.
        backends: Vec<Box<dyn Backend>>,
        /// Objects in all parts.
        objects: u64,
    },
}

/// Whether an index of `bytes` must be split into parts to be searched on `backend` (a GPU
/// whose memory budget it exceeds; see [`plan_parts`]).
pub fn needs_parts(bytes: u64, backend: &dyn Backend) -> bool {
    backend.gpu_ordinal().is_some() && plan_parts(bytes, backend.memory_budget()) > 1
}

impl Searcher {
    /// A parted-index manifest on the backends.
    pub fn open_manifest(path: &Path, backends: Vec<Box<dyn Backend>>) -> Result<Self, GenieError> {
        let (manifest, parts) = open_parts(path)?;
        Ok(Self::Parted {
            parts,
            backends,
            objects: manifest.num_objects,
        })
    }

    /// A loaded index on the backends: resident when there is one backend and `parts` is
    /// `Some(1)`, else split into `parts` parts (default: as many as the first backend's memory
    /// budget needs, one when the index fits, and at least one per backend).
    pub fn from_backends(
        index: Arc<InvertedIndex>,
        backends: Vec<Box<dyn Backend>>,
        parts: Option<usize>,
    ) -> Result<Self, GenieError> {
        let Some(first) = backends.first() else {
            return Err(GenieError::Internal("no backend to search on".into()));
        };
        let planned = if first.gpu_ordinal().is_some() {
            plan_parts(index.heap_bytes(), first.memory_budget()).max(backends.len())
        } else {
            1
        };
        let n = parts.unwrap_or(planned);
        if n <= 1 && backends.len() == 1 {
            return Ok(Self::Single(Engine::with_backend(index, first.as_ref())?));
        }
        log::info!("multi-loading: {n} parts over {} device(s)", backends.len());
        let objects = u64::from(index.num_objects());
        let parts = index.split(n).into_iter().map(PartSource::Memory).collect();
        Ok(Self::Parted {
            parts,
            backends,
            objects,
        })
    }

    /// The backends' names.
    pub fn backend_name(&self) -> String {
        match self {
            Self::Single(e) => e.backend_name().to_string(),
            Self::Parted {
                parts, backends, ..
            } => format!(
                "{} parts on {}",
                parts.len(),
                backends
                    .iter()
                    .map(|b| b.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The number of objects.
    pub fn num_objects(&self) -> u64 {
        match self {
            Self::Single(e) => u64::from(e.index().num_objects()),
            Self::Parted { objects, .. } => *objects,
        }
    }

    /// The GPU of a resident index.
    pub fn gpu_ordinal(&self) -> Option<usize> {
        match self {
            Self::Single(e) => e.gpu_ordinal(),
            Self::Parted { .. } => None,
        }
    }

    /// An index that prepares queries as the search does (the resident index, or the first part:
    /// all parts share the keyword space and count bounds), to check queries before a search.
    pub fn reference_index(&self) -> Result<Arc<InvertedIndex>, GenieError> {
        match self {
            Self::Single(e) => Ok(e.shared_index()),
            Self::Parted { parts, .. } => match parts.first() {
                Some(p) => p.load(),
                None => Err(GenieError::Internal("an index of no parts".into())),
            },
        }
    }

    /// Device time per stage since the last call (a resident index on a GPU).
    pub fn take_stage_times(&self) -> Option<genie_core::StageTimes> {
        match self {
            Self::Single(e) => e.take_stage_times(),
            Self::Parted { .. } => None,
        }
    }

    /// Per query, the top-k hits.
    pub fn search<Q: std::borrow::Borrow<Query> + Sync>(
        &self,
        queries: &[Q],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>, GenieError> {
        match self {
            Self::Single(e) => e.search(queries, params),
            Self::Parted {
                parts, backends, ..
            } => {
                let engine = PartedEngine::new(
                    parts.clone(),
                    backends.iter().map(|b| b.as_ref()).collect(),
                )?;
                engine.search(queries, params)
            }
        }
    }
}
