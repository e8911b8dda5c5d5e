//! The List Array as an index holds it: the plain ids, or packed in blocks ([`crate::packed`])
//! as an index file of the packed form stores them. A packed List Array is read as ids (every
//! use that takes a slice: the CPU's count, parts, the dense bitmaps) after one unpacking on all
//! cores, done at the first such use and kept; a GPU takes the packed words as they are
//! (`backend::cuda`), so an index opened to be searched on a GPU is never unpacked on the host.

use super::packed::PackedPostings;
use super::section::Section;
use crate::model::ObjectId;
use rayon::prelude::*;
use std::ops::Deref;
use std::sync::OnceLock;

/// The List Array: plain ids, or the packed form with its ids unpacked when first asked for.
#[derive(Clone)]
pub struct ListArray {
    packed: Option<PackedPostings>,
    plain: OnceLock<Section<ObjectId>>,
}

impl ListArray {
    /// The packed form of `ids`, or `None` when it cannot be addressed (see
    /// [`PackedPostings::pack`]).
    pub(crate) fn packing(ids: &[ObjectId]) -> Option<Self> {
        PackedPostings::pack(ids).map(Self::from)
    }

    /// Postings held (without unpacking).
    pub fn len(&self) -> usize {
        match &self.packed {
            Some(p) => p.len() as usize,
            None => self.plain.get().map_or(0, |s| s.len()),
        }
    }

    /// Whether no posting is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The packed form, when the List Array is held packed.
    pub fn packed(&self) -> Option<&PackedPostings> {
        self.packed.as_ref()
    }

    /// The ids, unpacked now if held packed and not yet unpacked.
    ///
    /// The unpacking holds no lock: on a rayon worker it may, while waiting for its own tasks,
    /// run another task that asks for these ids, which a lock held here (a `OnceLock`'s
    /// initialization) would deadlock. Threads that ask at once may each unpack; one copy is
    /// kept. The backends ask once before their parallel work ([`ListArray::unpack_now`]).
    pub fn ids(&self) -> &[ObjectId] {
        if let Some(ids) = self.plain.get() {
            return ids;
        }
        let t = std::time::Instant::now();
        let ids = self.packed.as_ref().map(PackedPostings::unpack);
        let ids = ids.unwrap_or_default();
        log::debug!(
            "unpacked {} postings in {:.1} ms",
            ids.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        let _ = self.plain.set(ids.into());
        self.plain.get().map_or(&[], |ids| ids)
    }

    /// Unpacks a packed List Array now, if not done yet (before parallel work that reads ids).
    pub fn unpack_now(&self) {
        let _ = self.ids();
    }

    /// The ids at positions `[start, end)`: a slice of the ids where they are at hand, else
    /// decoded from the packed form (without unpacking the rest).
    pub fn range(&self, start: u64, end: u64) -> std::borrow::Cow<'_, [ObjectId]> {
        match (&self.packed, self.plain.get()) {
            (Some(p), None) => p.range(start, end).into(),
            _ => self.ids()[start as usize..end as usize].into(),
        }
    }

    /// Whether any id is `limit` or more, without unpacking.
    pub fn any_at_or_above(&self, limit: ObjectId) -> bool {
        match (&self.packed, self.plain.get()) {
            (Some(p), _) => p.any_at_or_above(limit),
            (None, Some(ids)) => ids.par_iter().any(|&id| id >= limit),
            (None, None) => false,
        }
    }

    /// Bytes held in the form the index keeps (the packed words, or 4 a posting).
    pub fn bytes(&self) -> u64 {
        match &self.packed {
            Some(p) => p.bytes(),
            None => 4 * self.len() as u64,
        }
    }

    /// Whether the words held lie in a mapped file.
    pub fn is_mapped(&self) -> bool {
        match &self.packed {
            Some(p) => p.is_mapped(),
            None => self.plain.get().is_some_and(Section::is_mapped),
        }
    }
}

impl Deref for ListArray {
    type Target = [ObjectId];
    fn deref(&self) -> &[ObjectId] {
        self.ids()
    }
}

impl From<Section<ObjectId>> for ListArray {
    fn from(ids: Section<ObjectId>) -> Self {
        Self {
            packed: None,
            plain: OnceLock::from(ids),
        }
    }
}

impl From<Vec<ObjectId>> for ListArray {
    fn from(ids: Vec<ObjectId>) -> Self {
        Section::from(ids).into()
    }
}

impl From<PackedPostings> for ListArray {
    fn from(p: PackedPostings) -> Self {
        Self {
            packed: Some(p),
            plain: OnceLock::new(),
        }
    }
}

/// Two List Arrays are equal when they hold the same ids, in whichever form.
impl PartialEq for ListArray {
    fn eq(&self, other: &Self) -> bool {
        match (&self.packed, &other.packed) {
            (Some(a), Some(b)) => a.len() == b.len() && (a == b || a.unpack() == b.unpack()),
            _ => self.len() == other.len() && self.ids() == other.ids(),
        }
    }
}

impl Eq for ListArray {}

impl std::fmt::Debug for ListArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.packed {
            Some(p) => write!(
                f,
                "ListArray(packed, {} postings, {:.2} bits a posting)",
                p.len(),
                p.bits_per_posting()
            ),
            None => write!(f, "ListArray({:?})", self.plain.get()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Several threads, each asking from many rayon tasks of one pool at once for the ids of its
    /// own packed List Array, get the ids and return. (A lock held while unpacking hung the CPU's
    /// conformance cases on packed files with 16 rayon threads, `RAYON_NUM_THREADS=16`; this
    /// shape of the race did not hang with it, so the cases on 16 threads are the check.)
    #[test]
    fn ids_asked_from_many_rayon_tasks_at_once_do_not_deadlock() {
        let ids: Vec<u32> = (0..1_000_000u32).map(|i| i * 3 % 999_999).collect();
        let ids = std::sync::Arc::new(ids);
        let pool = std::sync::Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(16)
                .build()
                .expect("test setup"),
        );
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..6 {
            let (tx, ids, pool) = (tx.clone(), ids.clone(), pool.clone());
            std::thread::spawn(move || {
                let ok = (0..4).all(|_| {
                    let list = ListArray::packing(&ids).expect("test setup");
                    pool.install(|| {
                        (0..512)
                            .into_par_iter()
                            .all(|i| list.ids()[i * 1900] == ids[i * 1900])
                    })
                });
                let _ = tx.send(ok);
            });
        }
        for _ in 0..6 {
            let got = rx.recv_timeout(std::time::Duration::from_secs(120));
            assert_eq!(got, Ok(true), "the unpacking deadlocked or read wrong ids");
        }
    }
}
