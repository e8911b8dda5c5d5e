//! Live indexes: objects added, replaced and deleted while the index serves, durable, searched on
//! the GPU or the CPU like any index (docs/ARCHITECTURE.md, "Live indexes").
//!
//! A live index is a folder: immutable **segments** (index files, the first of them possibly an
//! index file from `genie build` beside the folder), a **manifest** naming them and the file of
//! each one's deleted objects, and the **write-ahead log** ([`genie_core::live::wal`]). A write is
//! acknowledged once it is in the log (group commit: concurrent writers share one disk sync),
//! then applied in the log's order: added objects wait in a pending list, deletes clear the
//! object's bit in its segment's live mask. A search takes a [`Snapshot`] (the pending objects
//! become a new in-memory segment first, so every acknowledged write is seen), searches every
//! segment with its live mask (and the request's filter) applied on the device before the top-k,
//! and merges the per-segment answers exactly: an object lives in one segment, and a segment's
//! objects are numbered in the order of their ids, so the contract order (count, then id) of each
//! segment is that of the whole.
//!
//! In the background, a **flush** writes the in-memory segments and the deletes to disk and
//! starts a new log generation, and a tiered **merge** combines segments of similar size (see
//! [`policy`]). Both build outside the locks and swap the result in with one pointer change.

mod maintain;
mod manifest;
pub mod policy;
mod replica;
mod segment;
mod state;
#[cfg(test)]
mod tests;

pub use crate::kind::LiveStats;
use maintain::{remove_orphans, spawn_maintenance, Wake};
pub use manifest::{Manifest, SegmentEntry, MANIFEST};
pub use replica::{place_live, place_live_on, LiveCountIndex};
pub use segment::{LiveObject, Segment, SegmentFiles, SegmentIds};
use state::{Loc, Slot, State};

use crate::data_error::DataError;
use crate::kind::{LiveObjects, LiveSetup, Options, Registry};
use genie_core::live::wal::{Record, Wal};
use genie_core::{InvertedIndex, Keyword, ObjectMask};
use manifest::{wal_generation, wal_name};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

/// When a live index flushes and merges.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    /// Flush once this many objects were written since the last flush.
    pub flush_objects: u64,
    /// Flush once the oldest write not flushed is this old.
    pub flush_age: Duration,
    /// Merge once a tier holds this many segments (see [`policy`]).
    pub merge_factor: usize,
    /// Flush and merge on a thread of the index's own (else only when asked).
    pub background: bool,
    /// How stale a search's view may be: writes acknowledged within this time before a search
    /// may not be in it yet (zero: every acknowledged write is). Writes arriving faster than
    /// this are gathered into one new segment rather than one per search.
    pub refresh: Duration,
}

impl Default for LiveConfig {
    fn default() -> Self {
        Self {
            flush_objects: 1 << 20,
            flush_age: Duration::from_secs(60),
            merge_factor: policy::DEFAULT_FACTOR,
            background: true,
            refresh: Duration::ZERO,
        }
    }
}

/// A consistent view of a live index for searches: its segments, each with its live objects.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The segments with live objects.
    pub segments: Vec<SegmentView>,
    /// Live objects in all.
    pub live_objects: u64,
}

/// A segment as a snapshot sees it.
#[derive(Clone, Debug)]
pub struct SegmentView {
    /// The segment.
    pub segment: Arc<Segment>,
    /// Its live objects.
    pub live: ObjectMask,
}

/// A live index (shared by its replicas, one per device: see [`place_live`]).
pub struct LiveIndex {
    dir: PathBuf,
    kind: String,
    metadata: String,
    /// How the kind's objects are written, logged and queried.
    objects: Arc<dyn LiveObjects>,
    /// The [`LiveObjects::state_version`] the manifest's state file holds (`u64::MAX`: none).
    state_saved: AtomicU64,
    config: LiveConfig,
    wal: RwLock<Arc<Wal>>,
    state: Mutex<State>,
    applied: Condvar,
    /// Held while pending objects are built into a segment outside the state's lock.
    refreshing: Mutex<()>,
    /// The manifest on disk; held by a flush or a merge, one at a time.
    maintenance: Mutex<Manifest>,
    wake: Arc<Wake>,
    written: AtomicU64,
    deleted: AtomicU64,
    flushes: AtomicU64,
    merges: AtomicU64,
    syncs_before: AtomicU64,
}

impl std::fmt::Debug for LiveIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveIndex").field("dir", &self.dir).finish()
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> DataError + '_ {
    move |error| DataError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// An error unless there is one id for each of `n` objects.
fn one_id_each(ids: &[u64], n: usize) -> Result<(), DataError> {
    if ids.len() != n {
        return Err(DataError::BadQuery(format!(
            "{} ids for {n} objects",
            ids.len()
        )));
    }
    Ok(())
}

/// Pending objects past which the background thread makes them a segment.
const MAX_PENDING: usize = 1 << 16;

impl LiveIndex {
    /// The folder a live index made from the index file `path` lives in: `PATH.live`.
    pub fn folder_of(path: &Path) -> PathBuf {
        let mut name = path.as_os_str().to_os_string();
        name.push(".live");
        PathBuf::from(name)
    }

    /// Whether `path` is a live index's folder.
    pub fn is_live(path: &Path) -> bool {
        path.join(MANIFEST).is_file()
    }

    /// Creates an empty live index of `kind` in the folder `dir` (which must not hold one).
    pub fn create(dir: &Path, kind: &str, config: LiveConfig) -> Result<Arc<Self>, DataError> {
        Self::create_with(&Registry::default(), dir, kind, &Options::new(), config)
    }

    /// Creates an empty live index of `kind` (one of `registry`'s) with the kind's build
    /// `options` in the folder `dir` (which must not hold one).
    pub fn create_with(
        registry: &Registry,
        dir: &Path,
        kind: &str,
        options: &Options,
        config: LiveConfig,
    ) -> Result<Arc<Self>, DataError> {
        let made = registry.get(kind)?;
        let mut metadata = made.live_metadata(options)?;
        if Self::is_live(dir) {
            return Err(DataError::File {
                path: dir.to_path_buf(),
                message: "already holds a live index".into(),
            });
        }
        if let Some(map) = metadata.as_object_mut() {
            map.insert("kind".into(), kind.into());
            map.insert(
                "built_by".into(),
                format!("genie {}", env!("CARGO_PKG_VERSION")).into(),
            );
            map.insert("live".into(), true.into());
        }
        let metadata = metadata.to_string();
        // the kind's objects are checked before anything is written
        made.live_objects(&LiveSetup {
            metadata: metadata.clone(),
            ..LiveSetup::default()
        })?;
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        Manifest::new(kind, metadata).write(dir)?;
        Self::open_with(registry, dir, config)
    }

    /// Opens the live index of the index file `path` (`PATH.live`), making it on first use with
    /// the file as its first segment (read in place, never changed).
    pub fn open_file(
        registry: &crate::kind::Registry,
        path: &Path,
        config: LiveConfig,
    ) -> Result<Arc<Self>, DataError> {
        let dir = Self::folder_of(path);
        if Self::is_live(&dir) {
            return Self::open_with(registry, &dir, config);
        }
        let loaded = crate::open::load(registry, path)?;
        let kind = loaded.kind.info().name;
        let Some(index) = &loaded.source.index else {
            return Err(DataError::Unsupported(format!(
                "{}: a parted index cannot be made live (build it whole)",
                path.display()
            )));
        };
        loaded
            .kind
            .live_objects(&LiveSetup {
                metadata: index.metadata().to_string(),
                base: Some(path.to_path_buf()),
                state: None,
            })
            .map_err(|e| DataError::File {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| DataError::File {
                path: path.to_path_buf(),
                message: "a file name that is not UTF-8".into(),
            })?;
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let mut m = Manifest::new(kind, index.metadata().to_string());
        m.segments.push(SegmentEntry {
            number: 0,
            index: format!("../{name}"),
            ids: None,
            deleted: None,
            objects: Some(u64::from(index.num_objects())),
            stored: None,
        });
        m.next_segment = 1;
        m.base = Some(format!("../{name}"));
        m.write(&dir)?;
        Self::open_with(registry, &dir, config)
    }

    /// Opens the live index in the folder `dir` (of a built-in kind).
    pub fn open(dir: &Path, config: LiveConfig) -> Result<Arc<Self>, DataError> {
        Self::open_with(&Registry::default(), dir, config)
    }

    /// Opens the live index in the folder `dir` (of a kind of `registry`): its segments, then
    /// every log from the manifest's generation on replayed.
    pub fn open_with(
        registry: &Registry,
        dir: &Path,
        config: LiveConfig,
    ) -> Result<Arc<Self>, DataError> {
        let manifest = Manifest::read(dir)?;
        let state = manifest
            .state
            .as_ref()
            .map(|f| std::fs::read(dir.join(f)).map_err(io_err(&dir.join(f))))
            .transpose()?;
        let state_saved = if state.is_some() { 0 } else { u64::MAX };
        let objects = registry
            .get(&manifest.kind)?
            .live_objects(&LiveSetup {
                metadata: manifest.metadata.clone(),
                base: manifest.base.as_ref().map(|b| dir.join(b)),
                state,
            })
            .map_err(|e| DataError::File {
                path: dir.join(MANIFEST),
                message: e.to_string(),
            })?;
        let state_saved = if state_saved == 0 {
            objects.state_version()
        } else {
            state_saved
        };
        let mut slots = Vec::with_capacity(manifest.segments.len());
        for e in &manifest.segments {
            let files = SegmentFiles {
                index: e.index.clone(),
                ids: e.ids.clone(),
                stored: e.stored.clone(),
            };
            // the built file's objects come from its side files, for a kind that keeps them
            let base_stored = match (&e.stored, objects.keeps_objects()) {
                (None, true) => {
                    let path = dir.join(&e.index);
                    let index = InvertedIndex::load(&path)?;
                    objects.base_objects(&path, &index)?
                }
                _ => None,
            };
            let segment = Arc::new(Segment::read(e.number, dir, files, base_stored)?);
            if let Some(n) = e.objects.filter(|&n| n != u64::from(segment.len())) {
                return Err(DataError::File {
                    path: dir.join(&e.index),
                    message: format!(
                        "holds {} objects where the live index {} recorded {n}: the file was \
                         rebuilt after its live index was made (restore it, or remove the \
                         live index folder to start again from the new file)",
                        segment.len(),
                        dir.display()
                    ),
                });
            }
            let mut slot = Slot::new(segment)?;
            if let Some(del) = &e.deleted {
                let path = dir.join(del);
                let array = crate::npy::NpyArray::open(&path, &[crate::npy::Dtype::U32])?;
                for &local in array.as_u32().unwrap_or(&[]) {
                    if local >= slot.segment.len() {
                        return Err(DataError::File {
                            path,
                            message: format!(
                                "object {local} deleted from a segment of {}",
                                slot.segment.len()
                            ),
                        });
                    }
                    slot.kill(local);
                }
            }
            slot.changed = true;
            slots.push(slot);
        }
        let mut ids = HashMap::with_capacity(slots.iter().map(|s| s.live() as usize).sum());
        for s in &slots {
            for local in 0..s.segment.len() {
                if s.bits[(local / 32) as usize] & (1 << (local % 32)) != 0 {
                    let id = s.segment.id(local);
                    if ids.insert(id, Loc::Seg(s.segment.number, local)).is_some() {
                        return Err(DataError::File {
                            path: dir.join(MANIFEST),
                            message: format!("id {id} is live in two segments"),
                        });
                    }
                }
            }
        }
        // the logs to replay: the manifest's generation and every later one
        let mut gens: Vec<u64> = std::fs::read_dir(dir)
            .map_err(io_err(dir))?
            .filter_map(|e| e.ok()?.file_name().to_str().and_then(wal_generation))
            .filter(|&g| g >= manifest.wal)
            .collect();
        gens.sort_unstable();
        if gens.is_empty() {
            gens.push(manifest.wal);
        }
        let mut state = State {
            slots,
            pending: Vec::new(),
            pending_live: 0,
            ids,
            next_apply: 0,
            next_segment: manifest.next_segment,
            wal_gen: manifest.wal,
            snapshot: Arc::default(),
            published_at: None,
            searched: false,
            stale: true,
            unflushed: 0,
            oldest_unflushed: None,
        };
        let mut active = None;
        for (i, &g) in gens.iter().enumerate() {
            let (wal, records) = Wal::open(dir.join(wal_name(g)))?;
            for (_, r) in records {
                state.apply(r, objects.as_ref())?;
            }
            if i + 1 == gens.len() {
                state.next_apply = wal.next_seq();
                state.wal_gen = g;
                active = Some(wal);
            }
        }
        let wal = active.ok_or_else(|| DataError::Unsupported("no log".into()))?;
        if state.unflushed > 0 {
            state.oldest_unflushed = Some(Instant::now());
        }
        remove_orphans(dir, &manifest, state.wal_gen);
        state.publish(&manifest.metadata)?;
        let live = Arc::new(Self {
            dir: dir.to_path_buf(),
            kind: manifest.kind.clone(),
            metadata: manifest.metadata.clone(),
            objects,
            state_saved: AtomicU64::new(state_saved),
            syncs_before: AtomicU64::new(0),
            config,
            wal: RwLock::new(Arc::new(wal)),
            state: Mutex::new(state),
            applied: Condvar::new(),
            refreshing: Mutex::new(()),
            maintenance: Mutex::new(manifest),
            wake: Arc::default(),
            written: AtomicU64::new(0),
            deleted: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            merges: AtomicU64::new(0),
        });
        if live.config.background {
            spawn_maintenance(Arc::downgrade(&live), Arc::clone(&live.wake));
        }
        Ok(live)
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The kind of the objects.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// How the kind's objects are written and queried.
    pub fn codec(&self) -> &Arc<dyn LiveObjects> {
        &self.objects
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds (or replaces: an id written before) the objects given in the kind's query form (a
    /// keyword line or array, a document, a table row); returns once they are in the log on
    /// disk. The objects of one call are applied together, in order (a repeated id keeps its
    /// last object).
    pub fn add(&self, ids: &[u64], objects: &[serde_json::Value]) -> Result<u64, DataError> {
        one_id_each(ids, objects.len())?;
        let encoded = objects
            .par_iter()
            .enumerate()
            .map(|(i, o)| {
                self.objects
                    .encode(o)
                    .map_err(|e| DataError::BadQuery(format!("object {i} (id {}): {e}", ids[i])))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.add_encoded(ids, encoded)
    }

    /// [`LiveIndex::add`] of objects given as their keywords (an index of keyword objects).
    pub fn add_keywords(&self, ids: &[u64], objects: Vec<Vec<Keyword>>) -> Result<u64, DataError> {
        one_id_each(ids, objects.len())?;
        if self.kind != "keywords" {
            return Err(DataError::Unsupported(format!(
                "objects given as keywords to a live index of {}",
                self.kind
            )));
        }
        let encoded = objects
            .into_par_iter()
            .map(crate::kind::Encoded::of_keywords)
            .collect();
        self.add_encoded(ids, encoded)
    }

    /// Logs the encoded objects of `ids` (one each), then applies them in the log's order.
    fn add_encoded(
        &self,
        ids: &[u64],
        encoded: Vec<crate::kind::Encoded>,
    ) -> Result<u64, DataError> {
        let mut records = Vec::with_capacity(ids.len());
        let mut known = Vec::with_capacity(ids.len());
        for (&id, e) in ids.iter().zip(encoded) {
            known.push(e.keywords);
            records.push(Record::Upsert { id, object: e.log });
        }
        let n = ids.len() as u64;
        let keeps = self.objects.keeps_objects();
        self.write(&records, |st| {
            for ((&id, kw), r) in ids.iter().zip(known).zip(&records) {
                let Record::Upsert { object, .. } = r else {
                    continue;
                };
                let keywords = match kw {
                    Some(kw) => kw,
                    None => self.objects.decode(object)?,
                };
                let stored = keeps.then(|| Arc::from(object.as_slice()));
                st.upsert(LiveObject {
                    id,
                    keywords,
                    stored,
                });
            }
            Ok(())
        })?;
        self.written.fetch_add(n, Ordering::Relaxed);
        Ok(n)
    }

    /// Deletes the objects of `ids` (ids of no object are skipped); returns how many there were,
    /// once the deletes are in the log on disk.
    pub fn delete(&self, ids: &[u64]) -> Result<u64, DataError> {
        let records: Vec<Record> = ids.iter().map(|&id| Record::Delete { id }).collect();
        let mut gone = 0;
        self.write(&records, |st| {
            for &id in ids {
                gone += u64::from(st.remove(id));
            }
            Ok(())
        })?;
        self.deleted.fetch_add(gone, Ordering::Relaxed);
        Ok(gone)
    }

    /// Appends `records` to the log, then applies them with `apply` in the log's order.
    fn write(
        &self,
        records: &[Record],
        apply: impl FnOnce(&mut State) -> Result<(), DataError>,
    ) -> Result<(), DataError> {
        if records.is_empty() {
            return Ok(());
        }
        let wal = self.wal.read().unwrap_or_else(|e| e.into_inner());
        let range = wal.append(records)?;
        let mut st = self.lock();
        while st.next_apply != range.start {
            st = self.applied.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let applied = apply(&mut st);
        st.next_apply = range.end;
        if st.oldest_unflushed.is_none() {
            st.oldest_unflushed = Some(Instant::now());
        }
        let due = st.unflushed >= self.config.flush_objects;
        drop(st);
        self.applied.notify_all();
        drop(wal);
        if due {
            self.wake();
        }
        applied
    }

    /// The view searches see: every acknowledged write included (pending objects become a
    /// segment first).
    pub fn snapshot(&self) -> Result<Arc<Snapshot>, DataError> {
        self.refresh(self.config.refresh.is_zero(), true)
    }

    /// Publishes a new snapshot when one is due (`fresh`: whenever anything changed; else when
    /// the refresh interval has passed since the last, or no search has had the last yet: the
    /// interval only spaces refreshes that searches ask for back to back), the pending objects
    /// built into a segment outside the state's lock. `search`: a search takes the snapshot.
    pub(crate) fn refresh(&self, fresh: bool, search: bool) -> Result<Arc<Snapshot>, DataError> {
        {
            let mut st = self.lock();
            let due = fresh
                || !st.searched
                || st
                    .published_at
                    .is_none_or(|t| t.elapsed() >= self.config.refresh);
            if !due || (!st.stale && st.pending.is_empty()) {
                st.searched |= search;
                return Ok(Arc::clone(&st.snapshot));
            }
        }
        // one refresh at a time; with a staleness allowed, a search does not wait for one
        let _refreshing = match self.refreshing.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::WouldBlock) if !fresh => {
                let mut st = self.lock();
                st.searched |= search;
                return Ok(Arc::clone(&st.snapshot));
            }
            Err(_) => self.refreshing.lock().unwrap_or_else(|e| e.into_inner()),
        };
        // the pending objects are built into a segment outside the lock: writers and searches
        // go on meanwhile
        let (taken, number) = {
            let mut st = self.lock();
            let taken: Vec<LiveObject> = st.pending.iter().flatten().cloned().collect();
            let number = st.next_segment;
            if !taken.is_empty() {
                st.next_segment += 1;
            }
            (taken, (st.pending.len(), number))
        };
        let built = if taken.is_empty() {
            None
        } else {
            Some(Arc::new(Segment::build(number.1, taken, &self.metadata)?))
        };
        let mut st = self.lock();
        if let Some(segment) = built {
            st.adopt(segment, number.0)?;
        }
        st.publish(&self.metadata)?;
        st.searched |= search;
        Ok(Arc::clone(&st.snapshot))
    }

    /// One more than the largest id of a live object (0 for none): where ids of objects added
    /// without ids start.
    pub fn next_free_id(&self) -> u64 {
        self.lock()
            .ids
            .keys()
            .max()
            .map_or(0, |m| m.saturating_add(1))
    }

    /// Every live object with its keywords (sorted, each once), by id: the index read back
    /// (for checks and exports; it reads every segment).
    pub fn objects(&self) -> Result<std::collections::BTreeMap<u64, Vec<Keyword>>, DataError> {
        let snapshot = self.snapshot()?;
        Ok(snapshot
            .segments
            .par_iter()
            .flat_map_iter(|v| v.segment.live_objects(&v.live))
            .map(|o| (o.id, o.keywords))
            .collect())
    }

    /// The live objects now.
    pub fn live_objects(&self) -> u64 {
        self.lock().live_objects()
    }

    /// The counters.
    pub fn stats(&self) -> LiveStats {
        let st = self.lock();
        let wal = self.wal.read().unwrap_or_else(|e| e.into_inner());
        LiveStats {
            written: self.written.load(Ordering::Relaxed),
            deleted: self.deleted.load(Ordering::Relaxed),
            segments: st.slots.len() as u64 + u64::from(!st.pending.is_empty()),
            live_objects: st.live_objects(),
            flushes: self.flushes.load(Ordering::Relaxed),
            merges: self.merges.load(Ordering::Relaxed),
            log_syncs: self.syncs_before.load(Ordering::Relaxed) + wal.syncs(),
            crowded: self.objects.drift().map_or(0, |d| d.1),
        }
    }

    fn wake(&self) {
        self.wake.ring();
    }
}

impl crate::kind::Writes for LiveIndex {
    fn add(&self, ids: &[u64], objects: &[serde_json::Value]) -> Result<u64, DataError> {
        LiveIndex::add(self, ids, objects)
    }

    fn delete(&self, ids: &[u64]) -> Result<u64, DataError> {
        LiveIndex::delete(self, ids)
    }

    fn flush(&self) -> Result<(), DataError> {
        LiveIndex::flush(self)
    }

    fn stats(&self) -> LiveStats {
        LiveIndex::stats(self)
    }
}

impl Drop for LiveIndex {
    fn drop(&mut self) {
        self.wake.stop();
    }
}
