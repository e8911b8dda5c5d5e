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

mod codec;
mod manifest;
pub mod policy;
mod replica;
mod segment;
#[cfg(test)]
mod tests;

pub use manifest::{Manifest, SegmentEntry, MANIFEST};
pub use replica::{place_live, place_live_on, LiveCountIndex};
pub use segment::{Segment, SegmentFiles, SegmentIds};

use crate::data_error::DataError;
use genie_core::live::wal::{Record, Wal};
use genie_core::{GenieError, Keyword, ObjectMask};
use manifest::{sync_dir, wal_generation, wal_name};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, Weak};
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
}

/// Where an id's object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    Seg(u64, u32),
    Pending(u32),
}

/// A segment in the writer's state: its live bits (changed in place by deletes) and the mask of
/// the last snapshot.
struct Slot {
    segment: Arc<Segment>,
    bits: Vec<u32>,
    deleted: u32,
    mask: ObjectMask,
    changed: bool,
}

impl Slot {
    fn new(segment: Arc<Segment>) -> Result<Self, GenieError> {
        let mask = ObjectMask::all(segment.len());
        Ok(Self {
            bits: mask.words().to_vec(),
            segment,
            deleted: 0,
            mask,
            changed: false,
        })
    }

    fn kill(&mut self, local: u32) {
        let w = &mut self.bits[(local / 32) as usize];
        let bit = 1u32 << (local % 32);
        if *w & bit != 0 {
            *w &= !bit;
            self.deleted += 1;
            self.changed = true;
        }
    }

    fn live(&self) -> u32 {
        self.segment.len() - self.deleted
    }

    fn deleted_locals(&self) -> Vec<u32> {
        (0..self.segment.len())
            .filter(|&i| self.bits[(i / 32) as usize] & (1 << (i % 32)) == 0)
            .collect()
    }
}

struct State {
    slots: Vec<Slot>,
    pending: Vec<Option<(u64, Vec<Keyword>)>>,
    /// Objects of `pending` that are live.
    pending_live: usize,
    ids: HashMap<u64, Loc>,
    /// The sequence number of the next log record to apply.
    next_apply: u64,
    next_segment: u64,
    wal_gen: u64,
    snapshot: Arc<Snapshot>,
    published_at: Option<Instant>,
    stale: bool,
    unflushed: u64,
    oldest_unflushed: Option<Instant>,
}

/// A live index (shared by its replicas, one per device: see [`place_live`]).
pub struct LiveIndex {
    dir: PathBuf,
    kind: String,
    metadata: String,
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

/// Pending objects past which the background thread makes them a segment.
const MAX_PENDING: usize = 1 << 16;

/// The kinds whose objects a live index takes today.
pub const LIVE_KINDS: &[&str] = &["keywords"];

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
        if !LIVE_KINDS.contains(&kind) {
            return Err(DataError::Unsupported(format!(
                "a live index of {kind}: live indexes take {} objects so far",
                LIVE_KINDS.join(", ")
            )));
        }
        if Self::is_live(dir) {
            return Err(DataError::File {
                path: dir.to_path_buf(),
                message: "already holds a live index".into(),
            });
        }
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let metadata = serde_json::json!({
            "built_by": format!("genie {}", env!("CARGO_PKG_VERSION")),
            "live": true,
        })
        .to_string();
        Manifest::new(kind, metadata).write(dir)?;
        Self::open(dir, config)
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
            return Self::open(&dir, config);
        }
        let loaded = crate::open::load(registry, path)?;
        let kind = loaded.kind.info().name;
        let Some(index) = &loaded.source.index else {
            return Err(DataError::Unsupported(format!(
                "{}: a parted index cannot be made live (build it whole)",
                path.display()
            )));
        };
        if !LIVE_KINDS.contains(&kind) {
            return Err(DataError::Unsupported(format!(
                "{}: an index of {kind}: live indexes take {} objects so far",
                path.display(),
                LIVE_KINDS.join(", ")
            )));
        }
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
        });
        m.next_segment = 1;
        m.write(&dir)?;
        Self::open(&dir, config)
    }

    /// Opens the live index in the folder `dir`: its segments, then every log from the
    /// manifest's generation on replayed.
    pub fn open(dir: &Path, config: LiveConfig) -> Result<Arc<Self>, DataError> {
        let manifest = Manifest::read(dir)?;
        if !LIVE_KINDS.contains(&manifest.kind.as_str()) {
            return Err(DataError::Unsupported(format!(
                "{}: a live index of {}",
                dir.display(),
                manifest.kind
            )));
        }
        let mut slots = Vec::with_capacity(manifest.segments.len());
        for e in &manifest.segments {
            let files = SegmentFiles {
                index: e.index.clone(),
                ids: e.ids.clone(),
            };
            let segment = Arc::new(Segment::read(e.number, dir, files)?);
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
            stale: true,
            unflushed: 0,
            oldest_unflushed: None,
        };
        let mut active = None;
        for (i, &g) in gens.iter().enumerate() {
            let (wal, records) = Wal::open(dir.join(wal_name(g)))?;
            for (_, r) in records {
                state.apply(r)?;
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

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds (or replaces: an id written before) the objects given in the kind's query form (a
    /// keyword line or array); returns once they are in the log on disk. The objects of one call
    /// are applied together, in order (a repeated id keeps its last object).
    pub fn add(&self, ids: &[u64], objects: &[serde_json::Value]) -> Result<u64, DataError> {
        if ids.len() != objects.len() {
            return Err(DataError::BadQuery(format!(
                "{} ids for {} objects",
                ids.len(),
                objects.len()
            )));
        }
        let keywords = objects
            .par_iter()
            .enumerate()
            .map(|(i, o)| {
                crate::kind::keywords::keyword_object(o)
                    .map_err(|e| DataError::BadQuery(format!("object {i} (id {}): {e}", ids[i])))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.add_keywords(ids, keywords)
    }

    /// [`LiveIndex::add`] of objects given as their keywords.
    pub fn add_keywords(&self, ids: &[u64], objects: Vec<Vec<Keyword>>) -> Result<u64, DataError> {
        if ids.len() != objects.len() {
            return Err(DataError::BadQuery(format!(
                "{} ids for {} objects",
                ids.len(),
                objects.len()
            )));
        }
        let objects: Vec<Vec<Keyword>> = objects.into_par_iter().map(codec::normalize).collect();
        let records: Vec<Record> = ids
            .par_iter()
            .zip(&objects)
            .map(|(&id, kw)| {
                let mut object = Vec::with_capacity(kw.len() * 2);
                codec::encode(kw, &mut object);
                Record::Upsert { id, object }
            })
            .collect();
        let n = ids.len() as u64;
        self.write(&records, |st| {
            for (&id, kw) in ids.iter().zip(objects) {
                st.upsert(id, kw);
            }
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
        })?;
        self.deleted.fetch_add(gone, Ordering::Relaxed);
        Ok(gone)
    }

    /// Appends `records` to the log, then applies them with `apply` in the log's order.
    fn write(&self, records: &[Record], apply: impl FnOnce(&mut State)) -> Result<(), DataError> {
        if records.is_empty() {
            return Ok(());
        }
        let wal = self.wal.read().unwrap_or_else(|e| e.into_inner());
        let range = wal.append(records)?;
        let mut st = self.lock();
        while st.next_apply != range.start {
            st = self.applied.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        apply(&mut st);
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
        Ok(())
    }

    /// The view searches see: every acknowledged write included (pending objects become a
    /// segment first).
    pub fn snapshot(&self) -> Result<Arc<Snapshot>, DataError> {
        self.refresh(self.config.refresh.is_zero())
    }

    /// Publishes a new snapshot when one is due (`fresh`: whenever anything changed), the
    /// pending objects built into a segment outside the state's lock.
    fn refresh(&self, fresh: bool) -> Result<Arc<Snapshot>, DataError> {
        {
            let st = self.lock();
            let due = fresh
                || st
                    .published_at
                    .is_none_or(|t| t.elapsed() >= self.config.refresh);
            if !due || (!st.stale && st.pending.is_empty()) {
                return Ok(Arc::clone(&st.snapshot));
            }
        }
        // one refresh at a time; with a staleness allowed, a search does not wait for one
        let _refreshing = match self.refreshing.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::WouldBlock) if !fresh => {
                return Ok(Arc::clone(&self.lock().snapshot));
            }
            Err(_) => self.refreshing.lock().unwrap_or_else(|e| e.into_inner()),
        };
        // the pending objects are built into a segment outside the lock: writers and searches
        // go on meanwhile
        let (taken, number) = {
            let mut st = self.lock();
            let taken: Vec<(u64, Vec<Keyword>)> = st.pending.iter().flatten().cloned().collect();
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
            .collect())
    }

    /// The live objects now.
    pub fn live_objects(&self) -> u64 {
        let st = self.lock();
        st.slots.iter().map(|s| u64::from(s.live())).sum::<u64>() + st.pending_live as u64
    }

    /// The counters.
    pub fn stats(&self) -> LiveStats {
        let st = self.lock();
        let wal = self.wal.read().unwrap_or_else(|e| e.into_inner());
        LiveStats {
            written: self.written.load(Ordering::Relaxed),
            deleted: self.deleted.load(Ordering::Relaxed),
            segments: st.slots.len() as u64 + u64::from(!st.pending.is_empty()),
            live_objects: st.slots.iter().map(|s| u64::from(s.live())).sum::<u64>()
                + st.pending_live as u64,
            flushes: self.flushes.load(Ordering::Relaxed),
            merges: self.merges.load(Ordering::Relaxed),
            log_syncs: self.syncs_before.load(Ordering::Relaxed) + wal.syncs(),
        }
    }

    fn wake(&self) {
        self.wake.ring();
    }

    /// Writes every segment and delete to disk and starts a new log generation: after it, a
    /// reopening replays nothing written before it.
    pub fn flush(&self) -> Result<(), DataError> {
        let mut manifest = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        // the pending objects become a segment first, writers going on; the rotation below
        // then builds only what came meanwhile
        self.refresh(true)?;
        let refreshing = self.refreshing.lock().unwrap_or_else(|e| e.into_inner());
        let (taken, wal_gen, next_segment) = {
            let mut wal = self.wal.write().unwrap_or_else(|e| e.into_inner());
            let mut st = self.lock();
            st.publish(&self.metadata)?;
            let gen = st.wal_gen + 1;
            let (fresh, left) = Wal::open(self.dir.join(wal_name(gen)))?;
            if !left.is_empty() {
                return Err(DataError::File {
                    path: self.dir.join(wal_name(gen)),
                    message: "a log of a later generation than the manifest's holds records".into(),
                });
            }
            self.syncs_before.fetch_add(wal.syncs(), Ordering::Relaxed);
            *wal = Arc::new(fresh);
            st.next_apply = wal.next_seq();
            st.wal_gen = gen;
            st.unflushed = 0;
            st.oldest_unflushed = None;
            let taken: Vec<(Arc<Segment>, Option<Vec<u32>>, bool)> = st
                .slots
                .iter()
                .map(|s| {
                    let del = (s.deleted > 0).then(|| s.deleted_locals());
                    (Arc::clone(&s.segment), del, s.live() == 0)
                })
                .collect();
            (taken, gen, st.next_segment)
        };
        drop(refreshing);
        let mut entries = Vec::with_capacity(taken.len());
        for (segment, deleted, empty) in taken {
            if empty {
                continue;
            }
            let files = segment.write(&self.dir)?.clone();
            let deleted = match deleted {
                None => None,
                Some(locals) => {
                    let name = format!("seg-{}.del-{wal_gen}.npy", segment.number);
                    crate::npy::write(&self.dir.join(&name), &[locals.len()], &locals)?;
                    Some(name)
                }
            };
            entries.push(SegmentEntry {
                number: segment.number,
                index: files.index,
                ids: files.ids,
                deleted,
            });
        }
        let mut next = manifest.clone();
        next.segments = entries;
        next.wal = wal_gen;
        next.next_segment = next_segment;
        self.commit(&mut manifest, next)?;
        self.flushes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Replaces the manifest and removes what only the old one named (and older logs).
    fn commit(&self, manifest: &mut Manifest, next: Manifest) -> Result<(), DataError> {
        sync_dir(&self.dir)?;
        next.write(&self.dir)?;
        let keep: Vec<&str> = next.files();
        for f in manifest.files() {
            if !keep.contains(&f) && !f.contains('/') {
                let _ = std::fs::remove_file(self.dir.join(f));
            }
        }
        for g in manifest.wal..next.wal {
            let _ = std::fs::remove_file(self.dir.join(wal_name(g)));
        }
        *manifest = next;
        Ok(())
    }

    /// Runs one merge the policy asks for; `Ok(false)` when there was none.
    pub fn merge_once(&self) -> Result<bool, DataError> {
        self.merge_chosen(|sizes| policy::choose(sizes, self.config.merge_factor))
    }

    /// Flushes, then merges every segment into one (deleted objects dropped).
    pub fn compact(&self) -> Result<(), DataError> {
        self.flush()?;
        self.merge_chosen(|sizes| {
            let all: Vec<usize> = (0..sizes.len()).collect();
            (sizes.len() > 1 || sizes.iter().any(|s| s.deleted > 0)).then_some(all)
        })?;
        Ok(())
    }

    fn merge_chosen(
        &self,
        choose: impl FnOnce(&[policy::SegmentSize]) -> Option<Vec<usize>>,
    ) -> Result<bool, DataError> {
        let mut manifest = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        let (chosen, number) = {
            let _refreshing = self.refreshing.lock().unwrap_or_else(|e| e.into_inner());
            let mut st = self.lock();
            st.publish(&self.metadata)?;
            let sizes: Vec<policy::SegmentSize> = st
                .slots
                .iter()
                .map(|s| policy::SegmentSize {
                    objects: s.segment.len(),
                    deleted: s.deleted,
                    on_disk: s.segment.files().is_some(),
                })
                .collect();
            let Some(picked) = choose(&sizes) else {
                return Ok(false);
            };
            let chosen: Vec<SegmentView> = picked
                .iter()
                .map(|&i| SegmentView {
                    segment: Arc::clone(&st.slots[i].segment),
                    live: st.slots[i].mask.clone(),
                })
                .collect();
            st.next_segment += 1;
            (chosen, st.next_segment - 1)
        };
        let on_disk = chosen.iter().any(|c| c.segment.files().is_some());
        let objects: Vec<(u64, Vec<Keyword>)> = chosen
            .par_iter()
            .flat_map_iter(|c| c.segment.live_objects(&c.live))
            .collect();
        let merged = Arc::new(Segment::build(number, objects, &self.metadata)?);
        if on_disk {
            merged.write(&self.dir)?;
        }
        // swap it in: objects deleted or replaced meanwhile are dead in it
        let numbers: Vec<u64> = chosen.iter().map(|c| c.segment.number).collect();
        let (deleted, manifest_next) = {
            let mut st = self.lock();
            let mut slot = Slot::new(Arc::clone(&merged))?;
            for local in 0..merged.len() {
                let id = merged.id(local);
                match st.ids.get(&id) {
                    Some(Loc::Seg(n, _)) if numbers.contains(n) => {
                        st.ids.insert(id, Loc::Seg(number, local));
                    }
                    _ => slot.kill(local),
                }
            }
            slot.changed = true;
            let deleted = (slot.deleted > 0).then(|| slot.deleted_locals());
            let at = st
                .slots
                .iter()
                .position(|s| numbers.contains(&s.segment.number))
                .unwrap_or(st.slots.len());
            st.slots.retain(|s| !numbers.contains(&s.segment.number));
            let at = at.min(st.slots.len());
            st.slots.insert(at, slot);
            st.stale = true;
            let next_segment = st.next_segment;
            (deleted, on_disk.then_some(next_segment))
        };
        self.merges.fetch_add(1, Ordering::Relaxed);
        if let Some(next_segment) = manifest_next {
            let files = merged
                .files()
                .cloned()
                .ok_or_else(|| DataError::Unsupported("merged segment not written".into()))?;
            let deleted = match deleted {
                None => None,
                Some(locals) => {
                    let name = format!("seg-{number}.del-m.npy");
                    crate::npy::write(&self.dir.join(&name), &[locals.len()], &locals)?;
                    Some(name)
                }
            };
            let mut next = manifest.clone();
            let at = next
                .segments
                .iter()
                .position(|e| numbers.contains(&e.number))
                .unwrap_or(next.segments.len());
            next.segments.retain(|e| !numbers.contains(&e.number));
            next.segments.insert(
                at.min(next.segments.len()),
                SegmentEntry {
                    number,
                    index: files.index,
                    ids: files.ids,
                    deleted,
                },
            );
            next.next_segment = next_segment;
            self.commit(&mut manifest, next)?;
        }
        Ok(true)
    }

    /// Flushes when due (size or age) and merges while the policy asks; what the background
    /// thread runs.
    pub fn maintain(&self) -> Result<(), DataError> {
        // many pending objects (writes and no searches) become a segment without waiting for
        // a search
        if self.lock().pending_live >= MAX_PENDING {
            self.refresh(true)?;
        }
        let due = {
            let st = self.lock();
            st.unflushed >= self.config.flush_objects
                || st
                    .oldest_unflushed
                    .is_some_and(|t| t.elapsed() >= self.config.flush_age)
        };
        if due {
            self.flush()?;
        }
        while !self.wake.stopped() && self.merge_once()? {}
        Ok(())
    }
}

impl Drop for LiveIndex {
    fn drop(&mut self) {
        self.wake.stop();
    }
}

/// How the background thread is woken (a write made a flush due) and stopped (the index was
/// dropped); shared with the thread, which holds the index itself only while it works on it.
#[derive(Default)]
struct Wake {
    rung: Mutex<bool>,
    bell: Condvar,
    stopped: AtomicBool,
}

impl Wake {
    fn ring(&self) {
        *self.rung.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.bell.notify_all();
    }

    fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.ring();
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Waits for a ring or `timeout`.
    fn wait(&self, timeout: Duration) {
        let guard = self.rung.lock().unwrap_or_else(|e| e.into_inner());
        let (mut rung, _) = self
            .bell
            .wait_timeout_while(guard, timeout, |r| !*r)
            .unwrap_or_else(|e| e.into_inner());
        *rung = false;
    }
}

/// The background thread of a live index: maintains it every second or when woken, until the
/// index is dropped.
fn spawn_maintenance(live: Weak<LiveIndex>, wake: Arc<Wake>) {
    // flushes and merges build on a quarter of the cores, so that searches keep the rest
    let threads = std::thread::available_parallelism().map_or(1, |n| (n.get() / 4).max(1));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("genie-live-{i}"))
        .build();
    let spawned = std::thread::Builder::new()
        .name("genie-live".into())
        .spawn(move || loop {
            if wake.stopped() {
                return;
            }
            {
                let Some(index) = live.upgrade() else { return };
                let work = || index.maintain();
                let done = match &pool {
                    Ok(pool) => pool.install(work),
                    Err(_) => work(),
                };
                if let Err(e) = done {
                    log::warn!("live index {}: {e}", index.dir.display());
                }
            }
            wake.wait(Duration::from_secs(1));
        });
    if let Err(e) = spawned {
        log::warn!("no maintenance thread for a live index: {e}");
    }
}

/// Removes what a crash left: segment and delete files the manifest does not name, and logs older
/// than its generation.
fn remove_orphans(dir: &Path, manifest: &Manifest, wal_gen: u64) {
    let named = manifest.files();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let orphan = if let Some(g) = wal_generation(name) {
            g < manifest.wal && g < wal_gen
        } else {
            name.starts_with("seg-") && name.ends_with("npy") || name.ends_with(".genie")
        } && !named.contains(&name);
        if orphan {
            log::info!(
                "{}: removing {name}, left by an interrupted write",
                dir.display()
            );
            let _ = std::fs::remove_file(e.path());
        }
    }
    genie_core::atomic::remove_stale(&dir.join(MANIFEST));
}

impl State {
    fn apply(&mut self, record: Record) -> Result<(), DataError> {
        match record {
            Record::Upsert { id, object } => {
                let kw = codec::decode(&object).ok_or_else(|| {
                    DataError::Core(GenieError::Internal(format!(
                        "a logged object of id {id} does not decode"
                    )))
                })?;
                self.upsert(id, kw);
            }
            Record::Delete { id } => {
                self.remove(id);
            }
        }
        Ok(())
    }

    fn upsert(&mut self, id: u64, keywords: Vec<Keyword>) {
        self.remove(id);
        let at = self.pending.len() as u32;
        self.pending.push(Some((id, keywords)));
        self.pending_live += 1;
        self.ids.insert(id, Loc::Pending(at));
        self.unflushed += 1;
    }

    fn remove(&mut self, id: u64) -> bool {
        match self.ids.remove(&id) {
            None => false,
            Some(Loc::Pending(at)) => {
                self.pending[at as usize] = None;
                self.pending_live -= 1;
                true
            }
            Some(Loc::Seg(n, local)) => {
                if let Some(s) = self.slots.iter_mut().find(|s| s.segment.number == n) {
                    s.kill(local);
                    self.stale = true;
                }
                self.unflushed += 1;
                true
            }
        }
    }

    /// Puts in place `segment`, built from the first `frozen` pending objects: those deleted or
    /// replaced meanwhile are dead in it, and the pending objects after them move up.
    fn adopt(&mut self, segment: Arc<Segment>, frozen: usize) -> Result<(), DataError> {
        let number = segment.number;
        let mut slot = Slot::new(Arc::clone(&segment))?;
        for local in 0..segment.len() {
            let id = segment.id(local);
            let alive =
                matches!(self.ids.get(&id), Some(Loc::Pending(at)) if (*at as usize) < frozen);
            if alive {
                self.ids.insert(id, Loc::Seg(number, local));
            } else {
                slot.kill(local);
            }
        }
        let gone = self.pending.drain(..frozen).flatten().count();
        // the frozen objects still live were adopted; those left pending are renumbered
        self.pending_live -= gone;
        for (at, o) in self.pending.iter().enumerate() {
            if let Some((id, _)) = o {
                self.ids.insert(*id, Loc::Pending(at as u32));
            }
        }
        slot.changed = true;
        self.slots.push(slot);
        self.stale = true;
        Ok(())
    }

    /// Makes the pending objects a segment and publishes a new snapshot.
    fn publish(&mut self, metadata: &str) -> Result<(), DataError> {
        if !self.pending.is_empty() {
            self.pending_live = 0;
            let objects: Vec<(u64, Vec<Keyword>)> = std::mem::take(&mut self.pending)
                .into_iter()
                .flatten()
                .collect();
            if !objects.is_empty() {
                let number = self.next_segment;
                self.next_segment += 1;
                let segment = Arc::new(Segment::build(number, objects, metadata)?);
                for local in 0..segment.len() {
                    self.ids.insert(segment.id(local), Loc::Seg(number, local));
                }
                self.slots.push(Slot::new(segment)?);
            }
        }
        // in-memory segments all of whose objects are gone go at once
        self.slots
            .retain(|s| s.live() > 0 || s.segment.files().is_some());
        let mut views = Vec::with_capacity(self.slots.len());
        let mut live = 0;
        for s in &mut self.slots {
            if s.changed {
                s.mask = ObjectMask::from_words(s.segment.len(), s.bits.clone())?;
                s.changed = false;
            }
            live += u64::from(s.live());
            if s.live() > 0 {
                views.push(SegmentView {
                    segment: Arc::clone(&s.segment),
                    live: s.mask.clone(),
                });
            }
        }
        self.snapshot = Arc::new(Snapshot {
            segments: views,
            live_objects: live,
        });
        self.published_at = Some(Instant::now());
        self.stale = false;
        Ok(())
    }
}
