//! The manifest of a live index's folder (`MANIFEST.json`): its kind, the segments on disk with
//! the file of each one's deleted objects, and the first log to replay. It is replaced whole
//! (a temporary file renamed over it, the folder synced), so a reader sees the old or the new.

use crate::data_error::DataError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The manifest's file name in the folder.
pub const MANIFEST: &str = "MANIFEST.json";
const FORMAT: &str = "genie-live";
const VERSION: u32 = 1;

/// What the manifest records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `genie-live`.
    pub format: String,
    /// The format's version (1).
    pub version: u32,
    /// The kind of the objects (`keywords`).
    pub kind: String,
    /// The metadata every segment's index file gets.
    pub metadata: String,
    /// The number the next new segment gets.
    pub next_segment: u64,
    /// The generation of the first log to replay (`wal-<N>.log`); later ones follow it.
    pub wal: u64,
    /// The segments on disk, in order.
    pub segments: Vec<SegmentEntry>,
    /// The index file from `genie build` the live index was made from, relative to the folder
    /// (the kind's side files lie beside it), even once its segment was merged away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The file of what the kind learned (the documents' dictionary), relative to the folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

/// One segment on disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentEntry {
    /// Its number.
    pub number: u64,
    /// Its index file, relative to the folder.
    pub index: String,
    /// Its ids file (`.npy` of uint64, ascending), relative to the folder; none for row ids.
    pub ids: Option<String>,
    /// The file of its deleted objects (`.npy` of uint32 object numbers), if any.
    pub deleted: Option<String>,
    /// Its number of objects, checked on open (an index file rebuilt under its live index is
    /// refused rather than read with another's ids and deletes).
    #[serde(default)]
    pub objects: Option<u64>,
    /// The file of its objects as the log held them (a string table), for a kind that keeps
    /// them (vectors, for their re-rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<String>,
}

impl Manifest {
    /// The manifest of a new live index of `kind`.
    pub fn new(kind: &str, metadata: String) -> Self {
        Self {
            format: FORMAT.into(),
            version: VERSION,
            kind: kind.into(),
            metadata,
            next_segment: 0,
            wal: 0,
            segments: Vec::new(),
            base: None,
            state: None,
        }
    }

    /// Reads the manifest of the folder `dir`.
    pub fn read(dir: &Path) -> Result<Self, DataError> {
        let path = dir.join(MANIFEST);
        let bytes = std::fs::read(&path).map_err(|error| DataError::Io {
            path: path.clone(),
            error,
        })?;
        let bad = |message: String| DataError::File {
            path: path.clone(),
            message,
        };
        let m: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| bad(format!("not a live index manifest: {e}")))?;
        if m.format != FORMAT || m.version != VERSION {
            return Err(bad(format!(
                "format {} version {}: expected {FORMAT} version {VERSION}",
                m.format, m.version
            )));
        }
        for s in &m.segments {
            for f in [Some(&s.index), s.ids.as_ref(), s.deleted.as_ref()]
                .into_iter()
                .flatten()
            {
                if f.is_empty() || f.contains('\0') {
                    return Err(bad(format!("segment {}: a file name {f:?}", s.number)));
                }
            }
        }
        Ok(m)
    }

    /// Replaces the manifest of `dir` by this one, whole, and syncs the folder.
    pub fn write(&self, dir: &Path) -> Result<(), DataError> {
        let path = dir.join(MANIFEST);
        let io = |error| DataError::Io {
            path: path.clone(),
            error,
        };
        let mut bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| DataError::Unsupported(format!("manifest: {e}")))?;
        bytes.push(b'\n');
        genie_core::atomic::write_atomic(&path, &bytes).map_err(io)?;
        sync_dir(dir)
    }

    /// The files every segment names (relative to the folder).
    pub fn files(&self) -> Vec<&str> {
        self.segments
            .iter()
            .flat_map(|s| {
                [
                    Some(&s.index),
                    s.ids.as_ref(),
                    s.deleted.as_ref(),
                    s.stored.as_ref(),
                ]
            })
            .flatten()
            .chain(&self.state)
            .map(String::as_str)
            .collect()
    }
}

/// The log file of generation `n`.
pub fn wal_name(n: u64) -> String {
    format!("wal-{n}.log")
}

/// The generation of a log file's name.
pub fn wal_generation(name: &str) -> Option<u64> {
    name.strip_prefix("wal-")?
        .strip_suffix(".log")?
        .parse()
        .ok()
}

/// Syncs a folder, so that files created or renamed in it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<(), DataError> {
    let io = |error| DataError::Io {
        path: PathBuf::from(dir),
        error,
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)
}
