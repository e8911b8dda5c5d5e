//! What an index that takes writes (a live index, [`crate::live`]) offers the front ends that
//! write through [`super::KindIndex::writes`]: the server's write routes and its metrics.

use crate::data_error::DataError;
use serde_json::Value;

/// Writes to an index, each durable when it returns.
pub trait Writes: Send + Sync {
    /// Adds or replaces the objects (the kind's query form) of `ids`; the objects written.
    fn add(&self, ids: &[u64], objects: &[Value]) -> Result<u64, DataError>;
    /// Deletes the objects of `ids`; how many there were.
    fn delete(&self, ids: &[u64]) -> Result<u64, DataError>;
    /// Writes what only the log holds to the index's files.
    fn flush(&self) -> Result<(), DataError>;
    /// The counters.
    fn stats(&self) -> LiveStats;
}

/// Counters of a live index, for `/metrics` and logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Objects written (added or replaced).
    pub written: u64,
    /// Objects deleted.
    pub deleted: u64,
    /// Segments now.
    pub segments: u64,
    /// Live objects now.
    pub live_objects: u64,
    /// Flushes done.
    pub flushes: u64,
    /// Merges done.
    pub merges: u64,
    /// Disk syncs of the log (shared by concurrent writers).
    pub log_syncs: u64,
    /// Objects written where the kind's trained coding is strained (vectors of a codebook
    /// index into over-full cells: the data drifting from what it was trained on).
    pub crowded: u64,
}
