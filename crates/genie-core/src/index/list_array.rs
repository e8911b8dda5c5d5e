//! The List Array as an index holds it: the plain ids, or packed in blocks ([`crate::packed`])
//! as an index file of the packed form stores them. A packed List Array is read as ids (every
//! use that takes a slice: the CPU's count, parts, the dense bitmaps) after one unpacking on all
//! cores, done at the first such use and kept; a GPU takes the packed words as they are
//! (`backend::cuda`), so an index opened to be searched on a GPU is never unpacked on the host.

use super::Section;
use crate::model::ObjectId;
use crate::packed::PackedPostings;
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
    pub fn ids(&self) -> &[ObjectId] {
        self.plain.get_or_init(|| {
            let p = self.packed.as_ref();
            let t = std::time::Instant::now();
            let ids = p.map(PackedPostings::unpack).unwrap_or_default();
            log::debug!(
                "unpacked {} postings in {:.1} ms",
                ids.len(),
                t.elapsed().as_secs_f64() * 1e3
            );
            ids.into()
        })
    }

    /// The ids at positions `[start, end)`: a slice of the ids where they are at hand, else
    /// decoded from the packed form (without unpacking the rest).
    pub fn range(&self, start: u64, end: u64) -> std::borrow::Cow<'_, [ObjectId]> {
        match (&self.packed, self.plain.get()) {
            (Some(p), None) => p.range(start, end).into(),
            _ => self.ids()[start as usize..end as usize].into(),
        }
    }

    /// The largest id (`None` when empty), without unpacking.
    pub fn largest(&self) -> Option<ObjectId> {
        match (&self.packed, self.plain.get()) {
            (Some(p), _) => p.largest(),
            (None, Some(ids)) => ids.par_iter().copied().max(),
            (None, None) => None,
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
