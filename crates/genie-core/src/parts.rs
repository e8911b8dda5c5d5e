//! Multi-loading (paper section III-D; DESIGN.md section 4): an index larger than the device
//! memory budget is split into parts over contiguous object ranges, each a complete inverted index
//! over its objects (local ids). Parts stream through each device in turn: while the kernels of
//! part i run, part i + 1 is read (from memory or its file) and uploaded by another host thread on
//! its own streams, so its copy overlaps the matching. Per-part top-k are merged exactly on the
//! host (ids offset by the part's base) in the contract order: the result equals the one-part
//! result bit for bit, whatever the number of parts or devices.
//!
//! A parted index on disk is a manifest (JSON) beside one index file per part; a search reads one
//! part at a time (two with the prefetch), so the whole index never sits in host memory at once.

use crate::backend::{Backend, SearchParams};
use crate::engine::Engine;
use crate::error::{GenieError, Result};
use crate::index::{IndexBuilder, InvertedIndex};
use crate::model::{sort_and_cut, Hit, Query};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One part: an index over objects `base..base + index.num_objects()` with local ids.
#[derive(Clone, Debug)]
pub struct IndexPart {
    /// Global id of the part's object 0.
    pub base: u32,
    /// The part's index (local ids).
    pub index: Arc<InvertedIndex>,
}

impl InvertedIndex {
    /// Splits the index into `parts` parts of nearly equal object ranges (at least one part, at
    /// most one per object). Each keyword's postings are sorted, so a part's postings of a keyword
    /// are one sub-slice found by binary search.
    pub fn split(&self, parts: usize) -> Vec<IndexPart> {
        let n = self.num_objects as usize;
        let parts = parts.clamp(1, n.max(1));
        let per = n.div_ceil(parts).max(1);
        (0..parts)
            .map(|p| ((p * per).min(n) as u32, (((p + 1) * per).min(n)) as u32))
            .filter(|(a, b)| b > a || n == 0)
            .map(|(a, b)| IndexPart {
                base: a,
                index: Arc::new(self.object_range(a, b)),
            })
            .collect()
    }

    /// The index of objects `lo..hi`, ids shifted to start at 0; bounds (block maxima, longest
    /// object) are kept from the whole index, which bounds every part.
    fn object_range(&self, lo: u32, hi: u32) -> InvertedIndex {
        let u = self.keyword_space as usize;
        let mut offsets = Vec::with_capacity(u + 1);
        let mut postings = Vec::new();
        offsets.push(0u64);
        for kw in 0..u {
            let list = &self.postings[self.offsets[kw] as usize..self.offsets[kw + 1] as usize];
            let a = list.partition_point(|&id| id < lo);
            let b = list.partition_point(|&id| id < hi);
            postings.extend(list[a..b].iter().map(|&id| id - lo));
            offsets.push(postings.len() as u64);
        }
        InvertedIndex {
            num_objects: hi - lo,
            keyword_space: self.keyword_space,
            offsets: offsets.into(),
            postings: postings.into(),
            block_starts: self.block_starts.clone(),
            block_max: self.block_max.clone(),
            max_object_len: self.max_object_len,
            metadata: self.metadata.clone(),
        }
    }
}

/// Where a part comes from.
#[derive(Clone, Debug)]
pub enum PartSource {
    /// A part held in memory.
    Memory(IndexPart),
    /// A part file of a parted index, read when its turn comes.
    File {
        /// Global id of the part's object 0.
        base: u32,
        /// Objects in the part.
        objects: u32,
        /// The part's index file.
        path: PathBuf,
    },
}

impl PartSource {
    /// Global id of the part's object 0.
    pub fn base(&self) -> u32 {
        match self {
            PartSource::Memory(p) => p.base,
            PartSource::File { base, .. } => *base,
        }
    }

    /// Objects in the part (for a file part, as its manifest says; the load checks it).
    pub fn objects(&self) -> u32 {
        match self {
            PartSource::Memory(p) => p.index.num_objects(),
            PartSource::File { objects, .. } => *objects,
        }
    }

    /// The part's index (reads the file for a file part).
    pub fn load(&self) -> Result<Arc<InvertedIndex>> {
        match self {
            PartSource::Memory(p) => Ok(p.index.clone()),
            PartSource::File { path, objects, .. } => {
                let index = InvertedIndex::load(path)?;
                if index.num_objects() != *objects {
                    return Err(GenieError::BadIndexFile {
                        path: path.clone(),
                        reason: format!(
                            "has {} objects, the manifest says {objects}",
                            index.num_objects()
                        ),
                    });
                }
                Ok(Arc::new(index))
            }
        }
    }
}

/// The manifest of a parted index file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// Always `genie-parts`.
    pub format: String,
    /// Manifest version (1).
    pub version: u32,
    /// Objects in all parts.
    pub num_objects: u64,
    /// The keyword space shared by all parts.
    pub keyword_space: u32,
    /// The parts, in object order.
    pub parts: Vec<ManifestPart>,
    /// Plugin metadata of the index.
    pub metadata: String,
}

/// One part of a manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ManifestPart {
    /// The part file, relative to the manifest's folder.
    pub file: String,
    /// Global id of the part's object 0.
    pub base: u32,
    /// Objects in the part.
    pub objects: u32,
}

const MANIFEST_FORMAT: &str = "genie-parts";

/// Writes a parted index one part at a time, so a build never holds more than one part: each
/// [`PartWriter::add`] saves `path.partN` at once; [`PartWriter::finish`] writes the manifest.
#[derive(Debug)]
pub struct PartWriter {
    path: PathBuf,
    manifest: Manifest,
}

impl PartWriter {
    /// A writer whose manifest will be `path`.
    pub fn new(path: impl AsRef<Path>) -> Self {
        let manifest = Manifest {
            format: MANIFEST_FORMAT.into(),
            version: 1,
            num_objects: 0,
            keyword_space: 0,
            parts: Vec::new(),
            metadata: String::new(),
        };
        Self {
            path: path.as_ref().to_path_buf(),
            manifest,
        }
    }

    /// Saves the next part (its objects follow the previous part's).
    pub fn add(&mut self, index: &InvertedIndex) -> Result<()> {
        let (file, base) = self.next_part()?;
        index.save(self.path.with_file_name(&file))?;
        self.record(index, file, base);
        Ok(())
    }

    /// Builds the next part and saves it while it is built ([`IndexBuilder::build_and_save`]);
    /// the same files as [`PartWriter::add`] of the built part. Returns the part.
    pub fn build_and_add(&mut self, builder: IndexBuilder) -> Result<InvertedIndex> {
        let (file, base) = self.next_part()?;
        let index = builder.build_and_save(self.path.with_file_name(&file))?;
        self.record(&index, file, base);
        Ok(index)
    }

    /// The next part's file name and base.
    fn next_part(&self) -> Result<(String, u32)> {
        let name = self
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("index");
        let file = format!("{name}.part{}", self.manifest.parts.len());
        let base = u32::try_from(self.manifest.num_objects)
            .map_err(|_| GenieError::Capacity(format!("more than {} objects", u32::MAX)))?;
        Ok((file, base))
    }

    /// Enters a saved part in the manifest.
    fn record(&mut self, index: &InvertedIndex, file: String, base: u32) {
        self.manifest.num_objects += u64::from(index.num_objects());
        self.manifest.keyword_space = self.manifest.keyword_space.max(index.keyword_space());
        if self.manifest.parts.is_empty() {
            self.manifest.metadata = index.metadata().to_string();
        }
        self.manifest.parts.push(ManifestPart {
            file,
            base,
            objects: index.num_objects(),
        });
    }

    /// Writes the manifest and returns it.
    pub fn finish(self) -> Result<Manifest> {
        let json = serde_json::to_string_pretty(&self.manifest)
            .map_err(|e| GenieError::Internal(e.to_string()))?;
        crate::atomic::write_atomic(&self.path, json.as_bytes()).map_err(|source| {
            GenieError::Io {
                path: self.path.clone(),
                error: source,
            }
        })?;
        Ok(self.manifest)
    }
}

/// Writes `parts` (consecutive, from [`InvertedIndex::split`]) as a parted index: `path` is the
/// manifest, `path.partN` the part files.
pub fn save_parts(path: impl AsRef<Path>, parts: &[IndexPart]) -> Result<()> {
    let mut w = PartWriter::new(path);
    for p in parts {
        w.add(&p.index)?;
    }
    w.finish().map(|_| ())
}

/// Whether `path` is a parted-index manifest (rather than a single index file).
pub fn is_manifest(path: impl AsRef<Path>) -> Result<bool> {
    use std::io::Read;
    let path = path.as_ref();
    let mut head = [0u8; 1];
    let mut f = std::fs::File::open(path).map_err(|source| GenieError::Io {
        path: path.to_path_buf(),
        error: source,
    })?;
    let read = f.read(&mut head).map_err(|source| GenieError::Io {
        path: path.to_path_buf(),
        error: source,
    })?;
    Ok(read == 1 && head[0] == b'{')
}

/// Reads a manifest and returns its parts as file sources (no part is read yet).
pub fn open_parts(path: impl AsRef<Path>) -> Result<(Manifest, Vec<PartSource>)> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| GenieError::Io {
        path: path.to_path_buf(),
        error: source,
    })?;
    parse_manifest(&text, path)
}

/// Parses the text of the manifest at `path` (which names it in errors and locates the parts):
/// the format, contiguous parts that add up to the objects, and part files that are plain names
/// in the manifest's folder.
pub fn parse_manifest(text: &str, path: &Path) -> Result<(Manifest, Vec<PartSource>)> {
    let bad = |reason: String| GenieError::BadIndexFile {
        path: path.to_path_buf(),
        reason,
    };
    let m: Manifest =
        serde_json::from_str(text).map_err(|e| bad(format!("not a parted-index manifest: {e}")))?;
    if m.format != MANIFEST_FORMAT || m.version != 1 {
        return Err(bad(format!(
            "manifest format {} version {}, expected {MANIFEST_FORMAT} version 1",
            m.format, m.version
        )));
    }
    let mut next = 0u64;
    let mut sources = Vec::with_capacity(m.parts.len());
    for p in &m.parts {
        let plain = Path::new(&p.file)
            .file_name()
            .is_some_and(|n| n == p.file.as_str());
        if !plain || p.file == ".." {
            return Err(bad(format!(
                "part file {:?} is not a plain file name in the manifest's folder",
                p.file
            )));
        }
        if u64::from(p.base) != next {
            return Err(bad(format!(
                "part {} starts at object {}, expected {next}",
                p.file, p.base
            )));
        }
        next += u64::from(p.objects);
        sources.push(PartSource::File {
            base: p.base,
            objects: p.objects,
            path: path.with_file_name(&p.file),
        });
    }
    if next != m.num_objects {
        return Err(bad(format!(
            "parts hold {next} objects, the manifest says {}",
            m.num_objects
        )));
    }
    Ok((m, sources))
}

/// Parts needed so that two parts (the one searched and the one being uploaded) and the batch
/// working memory fit `budget` bytes: each part at most a quarter of it.
pub fn plan_parts(index_bytes: u64, budget: u64) -> usize {
    index_bytes.div_ceil((budget / 4).max(1)).max(1) as usize
}

/// Searches parts that stream through one or more devices and merges their top-k exactly.
pub struct PartedEngine<'b> {
    parts: Vec<PartSource>,
    backends: Vec<&'b dyn Backend>,
    budget: Option<u64>,
    stats: std::sync::Mutex<Vec<PartStat>>,
}

/// Timings of one part in the last search.
#[derive(Clone, Debug, PartialEq)]
pub struct PartStat {
    /// The part's base id.
    pub base: u32,
    /// Index of the device (backend) that searched it.
    pub device: usize,
    /// Bytes of the part's postings.
    pub bytes: u64,
    /// Seconds to read (if from a file) and upload the part, on the prefetch thread.
    pub load_s: f64,
    /// Seconds of the part's search.
    pub search_s: f64,
}

impl std::fmt::Debug for PartedEngine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartedEngine")
            .field("parts", &self.parts.len())
            .field("devices", &self.backends.len())
            .finish()
    }
}

impl<'b> PartedEngine<'b> {
    /// Parts in object order, searched on `backends` (one per device; parts go to them in turn).
    pub fn new(parts: Vec<PartSource>, backends: Vec<&'b dyn Backend>) -> Result<Self> {
        if backends.is_empty() {
            return Err(GenieError::InvalidParameter(
                "a parted search needs at least one backend".into(),
            ));
        }
        Ok(Self {
            parts,
            backends,
            budget: None,
            stats: Default::default(),
        })
    }

    /// Overrides the batch memory budget of every part's engine (bytes).
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = Some(bytes.max(1));
        self
    }

    /// Per-part timings of the last search, in completion order.
    pub fn last_stats(&self) -> Vec<PartStat> {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Number of parts.
    pub fn num_parts(&self) -> usize {
        self.parts.len()
    }

    /// The objects of all parts: one past the last part's last global id.
    pub fn num_objects(&self) -> u64 {
        self.parts
            .iter()
            .map(|p| u64::from(p.base()) + u64::from(p.objects()))
            .max()
            .unwrap_or(0)
    }

    /// Per query, the top-k hits over all parts in the contract order; with `params.mask` (of
    /// [`Self::num_objects`] objects, else an error), among the objects it allows, each part
    /// searched with its slice of the mask.
    pub fn search<Q: std::borrow::Borrow<Query> + Sync>(
        &self,
        queries: &[Q],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>> {
        if let Some(m) = &params.mask {
            if u64::from(m.len()) != self.num_objects() {
                return Err(GenieError::InvalidParameter(format!(
                    "the object mask covers {} objects, the parts hold {}",
                    m.len(),
                    self.num_objects()
                )));
            }
        }
        if let Ok(mut s) = self.stats.lock() {
            s.clear();
        }
        let nb = self.backends.len();
        let per_device: Vec<Result<Vec<Vec<Hit>>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..nb)
                .map(|d| {
                    let mine: Vec<&PartSource> = self.parts.iter().skip(d).step_by(nb).collect();
                    let backend = self.backends[d];
                    s.spawn(move || self.search_on(d, backend, &mine, queries, params))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(GenieError::Internal("a device thread panicked".into()))
                    })
                })
                .collect()
        });
        let mut merged = vec![Vec::new(); queries.len()];
        for hits in per_device {
            merge_into(&mut merged, hits?, 0, params.k as usize);
        }
        Ok(merged)
    }

    /// One device's parts in turn, the next part loaded and uploaded while this one is searched.
    fn search_on<Q: std::borrow::Borrow<Query> + Sync>(
        &self,
        device: usize,
        backend: &dyn Backend,
        parts: &[&PartSource],
        queries: &[Q],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>> {
        let mut merged = vec![Vec::new(); queries.len()];
        let prepare = |p: &PartSource| -> Result<(Engine, f64)> {
            let t = std::time::Instant::now();
            let engine = Engine::with_backend(p.load()?, backend)?;
            let engine = match self.budget {
                Some(b) => engine.with_budget(b),
                None => engine,
            };
            Ok((engine, t.elapsed().as_secs_f64()))
        };
        std::thread::scope(|s| -> Result<()> {
            let mut next = parts.first().map(|&p| s.spawn(move || prepare(p)));
            for (i, part) in parts.iter().enumerate() {
                let (engine, load_s) = join(next.take())?;
                next = parts.get(i + 1).map(|&p| s.spawn(move || prepare(p)));
                let t = std::time::Instant::now();
                let hits = engine.search(queries, &part_params(params, part))?;
                let stat = PartStat {
                    base: part.base(),
                    device,
                    bytes: engine.index().num_postings() * 4,
                    load_s,
                    search_s: t.elapsed().as_secs_f64(),
                };
                drop(engine);
                if let Ok(mut st) = self.stats.lock() {
                    st.push(stat);
                }
                merge_into(&mut merged, hits, part.base(), params.k as usize);
            }
            if let Some(h) = next {
                join(Some(h))?;
            }
            Ok(())
        })?;
        Ok(merged)
    }
}

/// The parameters of one part's search: the part's slice of the mask, renumbered from 0 as its
/// ids are.
fn part_params<'p>(params: &'p SearchParams, part: &PartSource) -> Cow<'p, SearchParams> {
    match &params.mask {
        None => Cow::Borrowed(params),
        Some(m) => {
            let base = part.base();
            Cow::Owned(SearchParams {
                mask: Some(m.slice(base..base.saturating_add(part.objects()))),
                ..params.clone()
            })
        }
    }
}

fn join<T>(h: Option<std::thread::ScopedJoinHandle<'_, Result<T>>>) -> Result<T> {
    h.ok_or_else(|| GenieError::Internal("no part to join".into()))?
        .join()
        .unwrap_or_else(|_| Err(GenieError::Internal("a part loader panicked".into())))
}

/// Merges per-query hits of a part (local ids, offset by `base`) into `into`, keeping the top `k`
/// in the contract order. Exact: every object of the global top-k is in its part's top-k.
pub fn merge_into(into: &mut [Vec<Hit>], part: Vec<Vec<Hit>>, base: u32, k: usize) {
    for (acc, hits) in into.iter_mut().zip(part) {
        acc.extend(hits.into_iter().map(|h| Hit {
            id: h.id + base,
            count: h.count,
        }));
        sort_and_cut(acc, k);
    }
}
