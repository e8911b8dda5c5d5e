//! Opening an index file of any kind on the chosen devices: the file is loaded once
//! ([`load`]), its kind found by the [`Registry`], and the index placed ([`place`]): an index
//! that fits one device is **replicated** on each device in use (one replica per runner of the
//! [`crate::service`]); one that does not fit, or a parted index, **streams in parts** through
//! all of them (keyword objects only).

use crate::data_error::DataError;
use crate::kind::{IndexSource, Kind, KindIndex, OpenOptions, Placement, Registry};
use crate::searcher::needs_parts;
use genie_core::backend::each_on_a_thread;
use genie_core::parts::{is_manifest, open_parts};
use genie_core::{select_backends, Backend, DeviceChoice, GenieError, InvertedIndex, Method};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Where and how an index is searched.
#[derive(Clone, Debug, Default)]
pub struct OpenSpec {
    /// The device choice.
    pub device: DeviceChoice,
    /// The GPUs to use (default: all).
    pub devices: Option<Vec<usize>>,
    /// Split a single index into this many parts (multi-loading) instead of replicating it.
    pub parts: Option<usize>,
    /// How counts are kept.
    pub method: Method,
}

/// An index file with its kind, ready to be placed.
pub struct Loaded {
    /// The file and the core index.
    pub source: IndexSource,
    /// Its kind.
    pub kind: Arc<dyn Kind>,
}

/// Loads an index file (or reads a parted-index manifest) and finds its kind.
pub fn load(registry: &Registry, path: &Path) -> Result<Loaded, DataError> {
    let start = Instant::now();
    let (index, metadata_text) = if is_manifest(path)? {
        let (manifest, _) = open_parts(path)?;
        (None, manifest.metadata)
    } else {
        let index = InvertedIndex::load(path)?;
        let text = index.metadata().to_string();
        (Some(Arc::new(index)), text)
    };
    log::debug!("opened {} in {:.2?}", path.display(), start.elapsed());
    let metadata: Value = serde_json::from_str(&metadata_text).unwrap_or_default();
    let kind = Arc::clone(registry.of_metadata(&metadata)?);
    Ok(Loaded {
        source: IndexSource::new(path.to_path_buf(), index, metadata),
        kind,
    })
}

/// An index built in memory and not (yet) saved, with its kind, ready to be placed like a loaded
/// file; `path` stands for it in messages and is where its kind would look for side files (the
/// keyword kind has none). For a program that builds indexes from data it holds (the Python
/// package).
pub fn in_memory(
    registry: &Registry,
    index: InvertedIndex,
    path: &Path,
) -> Result<Loaded, DataError> {
    let metadata: Value = serde_json::from_str(index.metadata()).unwrap_or_default();
    let kind = Arc::clone(registry.of_metadata(&metadata)?);
    Ok(Loaded {
        source: IndexSource::new(path.to_path_buf(), Some(Arc::new(index)), metadata),
        kind,
    })
}

/// The devices opened, or why not.
type Opened = Result<Vec<Box<dyn Backend>>, GenieError>;

/// Devices being opened on another thread ([`open_backends`]).
pub struct Opening(Option<std::thread::JoinHandle<Opened>>);

impl Opening {
    /// Waits for the devices.
    pub fn join(mut self) -> Opened {
        self.0
            .take()
            .ok_or_else(|| GenieError::Internal("the devices were already taken".into()))?
            .join()
            .map_err(|_| GenieError::Internal("opening the devices panicked".into()))?
    }
}

impl Drop for Opening {
    /// Not joined (an error came first): waits for the opening all the same, so that the process
    /// does not exit while the other thread is inside the CUDA driver, whose exit handlers would
    /// then pull the ground from under it (a crash by signal after the error was printed).
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            let _ = handle.join();
        }
    }
}

/// Opens the devices of `spec` on another thread (GPU contexts and kernels take a few hundred
/// milliseconds, as long as loading a large index or longer); join it for [`place_on`].
pub fn open_backends(spec: &OpenSpec) -> Opening {
    let (device, devices) = (spec.device, spec.devices.clone());
    Opening(Some(std::thread::spawn(move || {
        select_backends(device, devices.as_deref())
    })))
}

/// Places a loaded index: one replica per device when it fits one (and no parts are asked for),
/// else one index streaming its parts through all devices.
pub fn place(loaded: &Loaded, spec: &OpenSpec) -> Result<Vec<Arc<dyn KindIndex>>, DataError> {
    place_on(
        loaded,
        spec,
        select_backends(spec.device, spec.devices.as_deref())?,
    )
}

/// [`place`] on backends already opened for `spec` (so that opening the devices can overlap
/// loading the index: see [`open_backends`]).
pub fn place_on(
    loaded: &Loaded,
    spec: &OpenSpec,
    backends: Vec<Box<dyn Backend>>,
) -> Result<Vec<Arc<dyn KindIndex>>, DataError> {
    let options = OpenOptions {
        method: spec.method,
    };
    let parted = match (&loaded.source.index, spec.parts) {
        (None, _) => true,
        (Some(_), Some(n)) => n > 1,
        (Some(index), None) => backends
            .first()
            .is_some_and(|b| needs_parts(index.heap_bytes(), b.as_ref())),
    };
    if parted {
        log::info!("multi-loading over {} device(s)", backends.len());
        let placement = Placement::Parted {
            backends,
            parts: spec.parts,
        };
        let index = loaded.kind.open(&loaded.source, placement, &options)?;
        return Ok(vec![Arc::from(index)]);
    }
    // the replicas open at once, one thread per device (context, kernels, upload)
    each_on_a_thread(backends, "a device's opening", |b| {
        loaded
            .kind
            .open(&loaded.source, Placement::Resident(b), &options)
            .map(Arc::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::{keywords::build_csr, Options, Request};

    #[test]
    fn an_index_in_memory_is_placed_and_searched() {
        let index = build_csr(&[0, 3, 3, 7], &[1, 4, 7, 2, 4, 4, 8], "mem").expect("index");
        let loaded = in_memory(&Registry::default(), index, Path::new("mem")).expect("kind");
        assert_eq!(loaded.kind.name(), "keywords");
        let spec = OpenSpec {
            device: DeviceChoice::Cpu,
            ..OpenSpec::default()
        };
        let placed = place(&loaded, &spec).expect("placed");
        let query = placed[0]
            .parse(&serde_json::json!("4 8"), &Options::new())
            .expect("query");
        let request = Request {
            query: query.as_ref(),
            k: 5,
            min_count: None,
            filter: None,
        };
        let answers = placed[0].search(&[request]).expect("search");
        let hits: Vec<(u64, u32)> = answers[0].hits.iter().map(|h| (h.id, h.count)).collect();
        assert_eq!(hits, [(2, 2), (0, 1)]);
    }

    #[test]
    fn columns_hold_the_answers_of_the_search() {
        let index = build_csr(&[0, 3, 3, 7, 9], &[1, 4, 7, 2, 4, 4, 8, 8, 1], "mem").expect("x");
        let loaded = in_memory(&Registry::default(), index, Path::new("mem")).expect("kind");
        let spec = OpenSpec {
            device: DeviceChoice::Cpu,
            ..OpenSpec::default()
        };
        let placed = &place(&loaded, &spec).expect("placed")[0];
        assert!(placed.has_columns());
        let raw = ["4 8", "1", "9", "1 2 4 7 8"];
        let queries: Vec<_> = raw
            .iter()
            .map(|q| placed.parse(&serde_json::json!(q), &Options::new()))
            .collect::<Result<_, _>>()
            .expect("queries");
        let k = 3;
        let batch: Vec<Request<'_>> = queries
            .iter()
            .map(|q| Request {
                query: q.as_ref(),
                k: k as u32,
                min_count: None,
                filter: None,
            })
            .collect();
        let (mut counts, mut ids) = (vec![0u32; raw.len() * k], vec![-1i64; raw.len() * k]);
        assert!(placed
            .search_columns(&batch, k, &mut counts, &mut ids)
            .expect("columns"));
        for (q, answer) in placed.search(&batch).expect("search").iter().enumerate() {
            let mut want_ids = vec![-1i64; k];
            let mut want_counts = vec![0u32; k];
            for (j, h) in answer.hits.iter().enumerate() {
                want_ids[j] = h.id as i64;
                want_counts[j] = h.count;
            }
            assert_eq!(&ids[q * k..(q + 1) * k], &want_ids[..], "query {q}");
            assert_eq!(&counts[q * k..(q + 1) * k], &want_counts[..], "query {q}");
        }
        // "4 8": object 2 twice, then 0 and 3 once (id order)
        assert_eq!(&ids[..3], &[2, 0, 3]);
        // a min_count is not a columns batch: nothing written
        let with_min = [Request {
            min_count: Some(2),
            filter: None,
            ..batch[0]
        }];
        let (mut c, mut i) = (vec![7u32; k], vec![7i64; k]);
        assert!(!placed
            .search_columns(&with_min, k, &mut c, &mut i)
            .expect("no"));
        assert_eq!((c, i), (vec![7u32; k], vec![7i64; k]));
    }
}
