//! The background work of a live index: flushes (segments and deletes to disk, a new log
//! generation, the manifest), the tiered merges, the thread that runs them, and what a crash
//! left behind, removed on open.

use super::manifest::{sync_dir, wal_generation, wal_name};
use super::state::{Loc, Slot};
use super::MAX_PENDING;
use super::{policy, LiveIndex, Manifest, Segment, SegmentEntry, SegmentView, MANIFEST};
use crate::data_error::DataError;
use genie_core::live::wal::Wal;
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

impl LiveIndex {
    /// Writes every segment and delete to disk and starts a new log generation: after it, a
    /// reopening replays nothing written before it.
    pub fn flush(&self) -> Result<(), DataError> {
        let mut manifest = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        // the pending objects become a segment first, writers going on; the rotation below
        // then builds only what came meanwhile
        self.refresh(true, false)?;
        let refreshing = self.refreshing.lock().unwrap_or_else(|e| e.into_inner());
        let (taken, wal_gen, next_segment, learned) = {
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
            // what the kind learned up to this log position (it learns under this lock)
            let version = self.objects.state_version();
            let learned = (version != self.state_saved.load(Ordering::Relaxed))
                .then(|| self.objects.state().map(|bytes| (version, bytes)))
                .flatten();
            let taken: Vec<(Arc<Segment>, Option<Vec<u32>>, bool)> = st
                .slots
                .iter()
                .map(|s| {
                    let del = (s.deleted > 0).then(|| s.deleted_locals());
                    (Arc::clone(&s.segment), del, s.live() == 0)
                })
                .collect();
            (taken, gen, st.next_segment, learned)
        };
        drop(refreshing);
        let mut entries = Vec::with_capacity(taken.len());
        for (segment, deleted, empty) in taken {
            if empty {
                continue;
            }
            let files = segment.write(&self.dir)?.clone();
            let deleted = deleted
                .map(|locals| self.write_deleted(segment.number, &wal_gen.to_string(), &locals))
                .transpose()?;
            entries.push(SegmentEntry {
                number: segment.number,
                index: files.index,
                ids: files.ids,
                deleted,
                objects: Some(u64::from(segment.len())),
                stored: files.stored,
            });
        }
        let mut next = manifest.clone();
        next.segments = entries;
        next.wal = wal_gen;
        next.next_segment = next_segment;
        if let Some((_, bytes)) = &learned {
            let name = format!("state-{wal_gen}.bin");
            let path = self.dir.join(&name);
            genie_core::atomic::write_atomic(&path, bytes)
                .map_err(|error| DataError::Io { path, error })?;
            next.state = Some(name);
        }
        self.commit(&mut manifest, next)?;
        if let Some((version, _)) = learned {
            self.state_saved.store(version, Ordering::Relaxed);
        }
        self.flushes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Writes the deleted objects `locals` of segment `number` to `seg-NUMBER.del-TAG.npy` in
    /// the folder (whole, synced); returns the file's name.
    fn write_deleted(&self, number: u64, tag: &str, locals: &[u32]) -> Result<String, DataError> {
        let name = format!("seg-{number}.del-{tag}.npy");
        crate::npy::write(&self.dir.join(&name), &[locals.len()], locals)?;
        Ok(name)
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
        let objects: Vec<super::LiveObject> = chosen
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
            let deleted = deleted
                .map(|locals| self.write_deleted(number, "m", &locals))
                .transpose()?;
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
                    objects: Some(u64::from(merged.len())),
                    stored: files.stored,
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
            self.refresh(true, false)?;
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

/// How the background thread is woken (a write made a flush due) and stopped (the index was
/// dropped); shared with the thread, which holds the index itself only while it works on it.
#[derive(Default)]
pub(super) struct Wake {
    rung: Mutex<bool>,
    bell: Condvar,
    stopped: AtomicBool,
}

impl Wake {
    pub(super) fn ring(&self) {
        *self.rung.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.bell.notify_all();
    }

    pub(super) fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.ring();
    }

    pub(super) fn stopped(&self) -> bool {
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
pub(super) fn spawn_maintenance(live: Weak<LiveIndex>, wake: Arc<Wake>) {
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
pub(super) fn remove_orphans(dir: &Path, manifest: &Manifest, wal_gen: u64) {
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
            name.starts_with("seg-") && name.ends_with("npy")
                || name.ends_with(".genie")
                || name.starts_with("seg-") && name.ends_with(".objects")
                || name.starts_with("state-") && name.ends_with(".bin")
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
