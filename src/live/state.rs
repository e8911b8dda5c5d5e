//! The writer's state of a live index: where each id's object is, the segments with their live
//! bits, the pending objects; applying log records, and publishing snapshots.

use super::{LiveObject, Segment, SegmentView, Snapshot};
use crate::data_error::DataError;
use crate::kind::LiveObjects;
use genie_core::live::wal::Record;
use genie_core::{GenieError, ObjectMask};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Where an id's object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Loc {
    Seg(u64, u32),
    Pending(u32),
}

/// A segment in the writer's state: its live bits (changed in place by deletes) and the mask of
/// the last snapshot.
pub(super) struct Slot {
    pub(super) segment: Arc<Segment>,
    pub(super) bits: Vec<u32>,
    pub(super) deleted: u32,
    pub(super) mask: ObjectMask,
    pub(super) changed: bool,
}

impl Slot {
    pub(super) fn new(segment: Arc<Segment>) -> Result<Self, GenieError> {
        let mask = ObjectMask::all(segment.len());
        Ok(Self {
            bits: mask.words().to_vec(),
            segment,
            deleted: 0,
            mask,
            changed: false,
        })
    }

    pub(super) fn kill(&mut self, local: u32) {
        let w = &mut self.bits[(local / 32) as usize];
        let bit = 1u32 << (local % 32);
        if *w & bit != 0 {
            *w &= !bit;
            self.deleted += 1;
            self.changed = true;
        }
    }

    pub(super) fn live(&self) -> u32 {
        self.segment.len() - self.deleted
    }

    pub(super) fn deleted_locals(&self) -> Vec<u32> {
        (0..self.segment.len())
            .filter(|&i| self.bits[(i / 32) as usize] & (1 << (i % 32)) == 0)
            .collect()
    }
}

pub(super) struct State {
    pub(super) slots: Vec<Slot>,
    pub(super) pending: Vec<Option<LiveObject>>,
    /// Objects of `pending` that are live.
    pub(super) pending_live: usize,
    pub(super) ids: HashMap<u64, Loc>,
    /// The sequence number of the next log record to apply.
    pub(super) next_apply: u64,
    pub(super) next_segment: u64,
    pub(super) wal_gen: u64,
    pub(super) snapshot: Arc<Snapshot>,
    pub(super) published_at: Option<Instant>,
    /// Whether a search has taken the last snapshot published.
    pub(super) searched: bool,
    pub(super) stale: bool,
    pub(super) unflushed: u64,
    pub(super) oldest_unflushed: Option<Instant>,
}

impl State {
    pub(super) fn apply(
        &mut self,
        record: Record,
        objects: &dyn LiveObjects,
    ) -> Result<(), DataError> {
        match record {
            Record::Upsert { id, object } => {
                let keywords = objects.decode(&object).map_err(|e| {
                    DataError::Core(GenieError::Internal(format!(
                        "the logged object of id {id}: {e}"
                    )))
                })?;
                let stored = objects.keeps_objects().then(|| Arc::from(object));
                self.upsert(LiveObject {
                    id,
                    keywords,
                    stored,
                });
            }
            Record::Delete { id } => {
                self.remove(id);
            }
        }
        Ok(())
    }

    pub(super) fn upsert(&mut self, object: LiveObject) {
        let id = object.id;
        self.remove(id);
        let at = self.pending.len() as u32;
        self.pending.push(Some(object));
        self.pending_live += 1;
        self.ids.insert(id, Loc::Pending(at));
        self.unflushed += 1;
    }

    pub(super) fn remove(&mut self, id: u64) -> bool {
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

    /// The live objects: those of the segments and those pending.
    pub(super) fn live_objects(&self) -> u64 {
        self.slots.iter().map(|s| u64::from(s.live())).sum::<u64>() + self.pending_live as u64
    }

    /// Puts in place `segment`, built from the first `frozen` pending objects: those deleted or
    /// replaced meanwhile are dead in it, and the pending objects after them move up.
    pub(super) fn adopt(&mut self, segment: Arc<Segment>, frozen: usize) -> Result<(), DataError> {
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
            if let Some(o) = o {
                self.ids.insert(o.id, Loc::Pending(at as u32));
            }
        }
        slot.changed = true;
        self.slots.push(slot);
        self.stale = true;
        Ok(())
    }

    /// Makes the pending objects a segment and publishes a new snapshot.
    pub(super) fn publish(&mut self, metadata: &str) -> Result<(), DataError> {
        if !self.pending.is_empty() {
            self.pending_live = 0;
            let objects: Vec<LiveObject> = std::mem::take(&mut self.pending)
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
        self.searched = false;
        self.stale = false;
        Ok(())
    }
}
