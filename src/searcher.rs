//! How `genie search` runs an index: resident on one device, or split into parts that stream
//! through one or more devices (multi-loading), with the same results either way.

use genie_core::backend::cuda::device_count;
use genie_core::parts::{is_manifest, open_parts, plan_parts, PartSource};
use genie_core::{
    Backend, CpuBackend, CudaBackend, DeviceChoice, Engine, GenieError, Hit, InvertedIndex,
    PartedEngine, Query, SearchParams,
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
    },
}

/// The backends for a device choice: the listed GPUs (default all), or the CPU.
fn backends(
    device: DeviceChoice,
    devices: Option<&[usize]>,
) -> Result<Vec<Box<dyn Backend>>, GenieError> {
    let gpus = || -> Result<Vec<Box<dyn Backend>>, GenieError> {
        let list: Vec<usize> = match devices {
            Some(l) => l.to_vec(),
            None => (0..device_count().max(1)).collect(),
        };
        list.into_iter()
            .map(|i| CudaBackend::new(i).map(|b| Box::new(b) as Box<dyn Backend>))
            .collect()
    };
    match device {
        DeviceChoice::Cpu => Ok(vec![Box::new(CpuBackend::new())]),
        DeviceChoice::Gpu => gpus(),
        DeviceChoice::Auto => gpus().or_else(|e| {
            log::info!("using the CPU backend: {e}");
            Ok(vec![Box::new(CpuBackend::new()) as Box<dyn Backend>])
        }),
    }
}

impl Searcher {
    /// Opens `path` (an index file or a parted-index manifest) on the chosen devices. `parts`
    /// forces a split of a single index file; by default a GPU search splits only when the index
    /// exceeds a quarter of the memory budget, and into at least one part per GPU.
    pub fn open(
        path: &Path,
        device: DeviceChoice,
        parts: Option<usize>,
        devices: Option<&[usize]>,
    ) -> Result<Self, GenieError> {
        if is_manifest(path)? {
            let backends = backends(device, devices)?;
            let (_, sources) = open_parts(path)?;
            return Ok(Self::Parted {
                parts: sources,
                backends,
            });
        }
        Self::from_index(InvertedIndex::load(path)?, device, parts, devices)
    }

    /// A loaded index on the chosen devices, split as [`Searcher::open`] says.
    pub fn from_index(
        index: InvertedIndex,
        device: DeviceChoice,
        parts: Option<usize>,
        devices: Option<&[usize]>,
    ) -> Result<Self, GenieError> {
        let backends = backends(device, devices)?;
        let on_gpu = !backends[0].name().starts_with("cpu");
        let planned = if on_gpu {
            plan_parts(index.heap_bytes(), backends[0].memory_budget()).max(backends.len())
        } else {
            1
        };
        let n = parts.unwrap_or(planned);
        if n <= 1 && backends.len() == 1 {
            return Ok(Self::Single(Engine::with_backend(
                Arc::new(index),
                backends[0].as_ref(),
            )?));
        }
        log::info!("multi-loading: {n} parts over {} device(s)", backends.len());
        let parts = index.split(n).into_iter().map(PartSource::Memory).collect();
        Ok(Self::Parted { parts, backends })
    }

    /// The backends' names.
    pub fn backend_name(&self) -> String {
        match self {
            Self::Single(e) => e.backend_name().to_string(),
            Self::Parted { parts, backends } => format!(
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

    /// An index that prepares queries as the search does (the resident index, or the first part:
    /// all parts share the keyword space and count bounds), to find which query an error is about.
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

    /// Per query, the top-k hits; `progress(queries_done)` is called as work finishes.
    pub fn search_with_progress(
        &self,
        queries: &[Query],
        params: &SearchParams,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<Hit>>, GenieError> {
        match self {
            Self::Single(e) => e.search_with_progress(queries, params, progress),
            Self::Parted { parts, backends } => {
                let engine = PartedEngine::new(
                    parts.clone(),
                    backends.iter().map(|b| b.as_ref()).collect(),
                )?;
                let hits = engine.search(queries, params)?;
                progress(queries.len());
                Ok(hits)
            }
        }
    }
}
