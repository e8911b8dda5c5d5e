//! A segment of a live index: an immutable index of keyword objects, the user's ids of its
//! objects in ascending order (so the index's tie order, by object number, is the order of the
//! ids), the objects themselves for a kind that re-ranks (vectors), and where it lies on disk
//! once it is there.

use crate::data_error::DataError;
use genie_core::{IndexBuilder, InvertedIndex, Keyword, ObjectMask};
use genie_sa::StringTable;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The ids of a segment's objects.
#[derive(Clone, Debug)]
pub enum SegmentIds {
    /// Object `i` has id `i` (an index file from `genie build`).
    Rows(u32),
    /// Object `i` has id `ids[i]`, ascending.
    Listed(Arc<[u64]>),
}

/// An object of a live index: its id, its keywords (sorted, each once) and, for a kind that keeps
/// them ([`crate::kind::LiveObjects::keeps_objects`]), the object as the log holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveObject {
    /// The user's id.
    pub id: u64,
    /// Its keywords.
    pub keywords: Vec<Keyword>,
    /// The object, for a kind that re-ranks.
    pub stored: Option<Arc<[u8]>>,
}

/// One immutable segment.
#[derive(Debug)]
pub struct Segment {
    /// Its number in the live index (never reused).
    pub number: u64,
    /// The index of its objects.
    pub index: Arc<InvertedIndex>,
    /// The ids of its objects.
    pub ids: SegmentIds,
    /// Its objects in object order, for a kind that keeps them.
    pub stored: Option<Arc<StringTable>>,
    /// Its files once written: the index file and the ids file (`None` for rows).
    files: OnceLock<SegmentFiles>,
}

/// Where a segment lies on disk, relative to the live index's folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFiles {
    /// The index file.
    pub index: String,
    /// The ids file (`.npy` of uint64), absent for row ids.
    pub ids: Option<String>,
    /// The file of its objects (a string table), for a kind that keeps them.
    pub stored: Option<String>,
}

impl Segment {
    /// A segment of `index` whose objects have `ids`, written nowhere yet.
    pub fn new(
        number: u64,
        index: Arc<InvertedIndex>,
        ids: SegmentIds,
        stored: Option<Arc<StringTable>>,
    ) -> Self {
        Self {
            number,
            index,
            ids,
            stored,
            files: OnceLock::new(),
        }
    }

    /// A segment already on disk.
    pub fn on_disk(
        number: u64,
        index: Arc<InvertedIndex>,
        ids: SegmentIds,
        stored: Option<Arc<StringTable>>,
        files: SegmentFiles,
    ) -> Self {
        let s = Self::new(number, index, ids, stored);
        let _ = s.files.set(files);
        s
    }

    /// The segment of `objects`, which are sorted by id here (ids unique); it keeps their
    /// stored forms when they have them.
    pub fn build(
        number: u64,
        mut objects: Vec<LiveObject>,
        metadata: &str,
    ) -> Result<Self, DataError> {
        objects.sort_unstable_by_key(|o| o.id);
        let mut builder = IndexBuilder::new().metadata(metadata.to_string());
        let mut ids = Vec::with_capacity(objects.len());
        let keeps = objects.first().is_some_and(|o| o.stored.is_some());
        let mut stored = keeps.then(StringTable::new);
        for o in &objects {
            builder.push_object(&o.keywords)?;
            ids.push(o.id);
            if let Some(table) = &mut stored {
                table.push(o.stored.as_deref().unwrap_or(&[]));
            }
        }
        Ok(Self::new(
            number,
            Arc::new(builder.build()?),
            SegmentIds::Listed(ids.into()),
            stored.map(Arc::new),
        ))
    }

    /// The stored form of object `i`, for a kind that keeps them.
    pub fn stored(&self, i: u32) -> Option<&[u8]> {
        self.stored.as_ref().map(|t| t.get(i as usize))
    }

    /// The number of objects (live or not).
    pub fn len(&self) -> u32 {
        self.index.num_objects()
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of object `i`.
    pub fn id(&self, i: u32) -> u64 {
        match &self.ids {
            SegmentIds::Rows(_) => u64::from(i),
            SegmentIds::Listed(ids) => ids[i as usize],
        }
    }

    /// Its ids as a filter sees them.
    pub fn id_space(&self) -> crate::kind::IdSpace<'_> {
        match &self.ids {
            SegmentIds::Rows(n) => crate::kind::IdSpace::Rows(*n),
            SegmentIds::Listed(ids) => crate::kind::IdSpace::Sorted(ids),
        }
    }

    /// Its files, once written.
    pub fn files(&self) -> Option<&SegmentFiles> {
        self.files.get()
    }

    /// Writes its index and ids files into `dir` (each whole or not at all, synced) and records
    /// them; a segment already written is left as it is.
    pub fn write(&self, dir: &Path) -> Result<&SegmentFiles, DataError> {
        if let Some(f) = self.files.get() {
            return Ok(f);
        }
        let index = format!("seg-{}.genie", self.number);
        self.index.save(dir.join(&index))?;
        let ids = match &self.ids {
            SegmentIds::Rows(_) => None,
            SegmentIds::Listed(ids) => {
                let name = format!("seg-{}.ids.npy", self.number);
                crate::npy::write(&dir.join(&name), &[ids.len()], ids)?;
                Some(name)
            }
        };
        let stored = match &self.stored {
            None => None,
            Some(table) => {
                let name = format!("seg-{}.objects", self.number);
                let path = dir.join(&name);
                genie_core::atomic::write_atomic(&path, &table.to_bytes())
                    .map_err(|error| DataError::Io { path, error })?;
                Some(name)
            }
        };
        let _ = self.files.set(SegmentFiles { index, ids, stored });
        self.files
            .get()
            .ok_or_else(|| DataError::Unsupported("segment files not recorded".into()))
    }

    /// Reads a segment written by [`Segment::write`] (or an index file of row ids, whose stored
    /// objects, if the kind keeps them, are `base_stored`).
    pub fn read(
        number: u64,
        dir: &Path,
        files: SegmentFiles,
        base_stored: Option<StringTable>,
    ) -> Result<Self, DataError> {
        let index = Arc::new(InvertedIndex::load(dir.join(&files.index))?);
        let stored = match &files.stored {
            None => base_stored,
            Some(name) => {
                let path = dir.join(name);
                let bytes = std::fs::read(&path).map_err(|error| DataError::Io {
                    path: path.clone(),
                    error,
                })?;
                Some(StringTable::from_bytes(&bytes).map_err(|m| bad(&path, m))?)
            }
        };
        if let Some(t) = stored
            .as_ref()
            .filter(|t| t.len() != index.num_objects() as usize)
        {
            return Err(bad(
                &dir.join(&files.index),
                format!(
                    "{} stored objects for the {} objects of the index",
                    t.len(),
                    index.num_objects()
                ),
            ));
        }
        let stored = stored.map(Arc::new);
        let ids = match &files.ids {
            None => SegmentIds::Rows(index.num_objects()),
            Some(name) => {
                let path = dir.join(name);
                let array = crate::npy::NpyArray::open(&path, &[crate::npy::Dtype::U64])?;
                let ids: Arc<[u64]> = array
                    .as_u64()
                    .ok_or_else(|| bad(&path, "expected an array of uint64".into()))?
                    .into();
                if ids.len() != index.num_objects() as usize {
                    return Err(bad(
                        &path,
                        format!(
                            "{} ids for the {} objects of {}",
                            ids.len(),
                            index.num_objects(),
                            files.index
                        ),
                    ));
                }
                if ids.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(bad(&path, "the ids are not strictly ascending".into()));
                }
                SegmentIds::Listed(ids)
            }
        };
        Ok(Self::on_disk(number, index, ids, stored, files))
    }

    /// The live objects (`live` = their mask): the index read back (an object's keywords are
    /// the lists it is in), with their stored forms, for a merge.
    pub fn live_objects(&self, live: &ObjectMask) -> Vec<LiveObject> {
        let n = self.len() as usize;
        let mut objects: Vec<Vec<Keyword>> = vec![Vec::new(); n];
        let index = &self.index;
        for kw in 0..index.keyword_space() {
            for &o in index.postings_of(kw) {
                if live.contains(o) {
                    objects[o as usize].push(kw);
                }
            }
        }
        objects
            .into_iter()
            .enumerate()
            .filter(|&(i, _)| live.contains(i as u32))
            .map(|(i, keywords)| LiveObject {
                id: self.id(i as u32),
                keywords,
                stored: self.stored(i as u32).map(Arc::from),
            })
            .collect()
    }
}

fn bad(path: &Path, message: String) -> DataError {
    DataError::File {
        path: PathBuf::from(path),
        message,
    }
}
