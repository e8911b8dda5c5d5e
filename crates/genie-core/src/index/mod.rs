//! The inverted index (paper section III-B, Fig. 3): the List Array (`postings`, object ids grouped
//! by keyword, ascending within a keyword) and the Position Map (`offsets`, indexed by keyword, with
//! a sentinel), so that a range item `[lo, hi]` is the one contiguous slice
//! `postings[offsets[lo]..offsets[hi + 1]]`. At query time a slice is cut into load-balanced
//! sublists of at most `L` postings ([`Sublists`]).

mod build;
mod checksum;
mod file;
mod legacy;
mod list_array;
pub mod packed;
mod persist;
mod prepare;
mod section;
mod sort;

pub use build::{IndexBuilder, MAX_KEYWORD_SPACE};
pub use checksum::{largest_word, sum_and_largest};
pub use list_array::ListArray;
pub use persist::{ALIGN, FORMAT_VERSION};
pub use prepare::{PreparedQuery, Task, WorkList, MAX_COUNT_BOUND};
pub use section::Section;

use crate::model::{Keyword, ObjectId};

/// Default maximum sublist length `L` (postings per load-balanced sublist).
pub const DEFAULT_SUBLIST_LEN: u32 = 4096;

/// A built inverted index over `num_objects` objects in the keyword space `[0, keyword_space)`.
///
/// Immutable once built; `Send + Sync`, searched through `&self`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvertedIndex {
    pub(crate) num_objects: u32,
    pub(crate) keyword_space: u32,
    /// Position Map: `offsets[kw]..offsets[kw + 1]` are the postings of `kw`; `len == keyword_space + 1`.
    pub(crate) offsets: Section<u64>,
    /// List Array: object ids, grouped by keyword, ascending within each keyword; plain or
    /// packed.
    pub(crate) postings: ListArray,
    /// Start keyword of each block (first is 0); an object's keywords per block are bounded by `block_max`.
    pub(crate) block_starts: Vec<Keyword>,
    /// Per block, the largest number of keywords one object has inside it.
    pub(crate) block_max: Vec<u32>,
    /// The largest number of keywords of one object.
    pub(crate) max_object_len: u32,
    /// Free-form metadata of the plugin that built the index (JSON by convention).
    pub(crate) metadata: String,
}

impl InvertedIndex {
    /// Number of objects (ids `0..num_objects`).
    pub fn num_objects(&self) -> u32 {
        self.num_objects
    }

    /// Size of the keyword space: keywords are `0..keyword_space`.
    pub fn keyword_space(&self) -> u32 {
        self.keyword_space
    }

    /// Total number of postings (sum of object sizes after de-duplication).
    pub fn num_postings(&self) -> u64 {
        self.postings.len() as u64
    }

    /// The largest number of keywords of one object.
    pub fn max_object_len(&self) -> u32 {
        self.max_object_len
    }

    /// The plugin metadata stored with the index.
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    /// The Position Map (length `keyword_space + 1`).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The List Array's ids (unpacked on first use where the index holds them packed:
    /// [`ListArray`]).
    pub fn postings(&self) -> &[ObjectId] {
        self.postings.ids()
    }

    /// The List Array in the form the index holds it.
    pub fn list_array(&self) -> &ListArray {
        &self.postings
    }

    /// The postings of one keyword (empty beyond the keyword space).
    pub fn postings_of(&self, kw: Keyword) -> &[ObjectId] {
        if kw >= self.keyword_space {
            return &[];
        }
        let (a, b) = (self.offsets[kw as usize], self.offsets[kw as usize + 1]);
        &self.postings[a as usize..b as usize]
    }

    /// The postings of one keyword, decoded alone where the List Array is packed and not
    /// unpacked (empty beyond the keyword space).
    pub fn list_of(&self, kw: Keyword) -> std::borrow::Cow<'_, [ObjectId]> {
        if kw >= self.keyword_space {
            return (&[][..]).into();
        }
        let (a, b) = (self.offsets[kw as usize], self.offsets[kw as usize + 1]);
        self.postings.range(a, b)
    }

    /// This index with its List Array packed ([`crate::packed`]; searches give the same
    /// answers); unchanged where the packed words could not be addressed by 32 bits.
    pub fn into_packed(mut self) -> Self {
        if self.postings.packed().is_none() {
            if let Some(p) = ListArray::packing(&self.postings) {
                self.postings = p;
            }
        }
        self
    }

    /// This index with its List Array plain.
    pub fn into_unpacked(mut self) -> Self {
        if let Some(p) = self.postings.packed() {
            self.postings = p.unpack().into();
        }
        self
    }

    /// Bits a posting of the List Array as held (32 plain; headers included packed).
    pub fn bits_per_posting(&self) -> f64 {
        8.0 * self.postings.bytes() as f64 / self.postings.len().max(1) as f64
    }

    /// Bytes held by the index arrays.
    pub fn heap_bytes(&self) -> u64 {
        (self.offsets.len() * 8 + self.block_starts.len() * 8) as u64 + self.postings.bytes()
    }

    /// The contiguous List Array slice `[start, end)` of the range `[lo, hi]`, clipped to the
    /// keyword space; `None` when the range lies wholly beyond it.
    pub fn slice_of(&self, lo: Keyword, hi: Keyword) -> Option<(u64, u64)> {
        if lo >= self.keyword_space || lo > hi {
            return None;
        }
        let hi = hi.min(self.keyword_space - 1);
        Some((self.offsets[lo as usize], self.offsets[hi as usize + 1]))
    }
}

/// Cuts `[start, end)` into sublists of at most `max_len` postings (the load balance of DESIGN.md
/// section 2): yields `(start, len)`.
#[derive(Clone, Debug)]
pub struct Sublists {
    next: u64,
    end: u64,
    max_len: u64,
}

impl Sublists {
    /// Sublists of `[start, end)`; `max_len` of 0 is treated as 1.
    pub fn new(start: u64, end: u64, max_len: u32) -> Self {
        Self {
            next: start,
            end,
            max_len: u64::from(max_len.max(1)),
        }
    }
}

impl Iterator for Sublists {
    type Item = (u64, u32);
    fn next(&mut self) -> Option<(u64, u32)> {
        if self.next >= self.end {
            return None;
        }
        let len = (self.end - self.next).min(self.max_len);
        let start = self.next;
        self.next += len;
        Some((start, len as u32))
    }
}
