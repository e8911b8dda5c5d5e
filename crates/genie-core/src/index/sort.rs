//! The counting sort of the index build (DESIGN.md section 2): keyword counts per chunk of
//! objects ([`count_keywords`]), whose prefix sum gives each (keyword, chunk) its place in the List
//! Array, then passes over keyword ranges of about equal postings ([`keyword_ranges`]), each
//! scattering only its range's postings ([`scatter`]), so ids stay ascending within a keyword and a
//! range's part of the List Array is complete when its pass ends.

use crate::model::{Keyword, ObjectId};
use rayon::prelude::*;

/// Postings bytes per keyword range of the sort. A pass over a range writes only that range's
/// part of the List Array, so a part that stays in the last-level cache is written at cache
/// speed (the sort of 1 M SIFT-like objects takes half the time of one pass on a 2-core EPYC);
/// and in [`IndexBuilder::build_and_save`], the writes start after the first range is sorted.
const RANGE_BYTES: u64 = 32 << 20;
/// The most keyword ranges of the sort: each pass reads a line or two of every object.
const MAX_RANGES: usize = 64;

/// The keyword ranges of a sort of `postings` postings.
pub(super) fn sort_ranges(postings: u64) -> usize {
    (postings * 4)
        .div_ceil(RANGE_BYTES)
        .clamp(1, MAX_RANGES as u64) as usize
}

/// Room for `total` postings, asked for in huge pages: each chunk of the scatter writes to
/// thousands of keywords' places at once, a TLB miss on most postings with 4 KiB pages (35% of the
/// sort's time on a 16-core Xeon).
pub(super) fn list_array_room(total: usize) -> Vec<ObjectId> {
    let mut postings = Vec::with_capacity(total);
    crate::huge::advise_huge_pages(postings.spare_capacity_mut());
    postings
}

/// The List Array of `objects`, counted into `chunks` and `offsets` ([`count_keywords`]), sorted
/// in passes over about `ranges` keyword ranges; with the passes made.
pub(super) fn sort_postings(
    objects: &ObjectView<'_>,
    chunks: &mut [SortChunk],
    offsets: &[u64],
    ranges: usize,
) -> (Vec<ObjectId>, usize) {
    let total = offsets[offsets.len() - 1] as usize;
    let mut postings = list_array_room(total);
    let out = SharedOut(postings.as_mut_ptr());
    let ranges = keyword_ranges(offsets, ranges);
    for keywords in &ranges {
        scatter(chunks, objects, out, keywords.clone());
    }
    // SAFETY: the chunks' places tile 0..total (the prefix sum of `count_keywords`), and the
    // passes over the keyword ranges, which cover the keyword space, wrote every one of them.
    unsafe { postings.set_len(total) };
    (postings, ranges.len())
}

/// About `ranges` consecutive keyword ranges covering `0..offsets.len() - 1`, of about equal
/// postings (a keyword with more than its share makes a range of its own, or of fewer).
pub(super) fn keyword_ranges(offsets: &[u64], ranges: usize) -> Vec<std::ops::Range<Keyword>> {
    let space = offsets.len() - 1;
    let total = offsets[space];
    let mut bounds: Vec<usize> = (1..ranges as u64)
        .map(|r| {
            let target = (u128::from(total) * u128::from(r) / ranges as u128) as u64;
            offsets.partition_point(|&o| o < target).min(space)
        })
        .collect();
    bounds.insert(0, 0);
    bounds.push(space);
    bounds.dedup();
    bounds
        .windows(2)
        .map(|w| w[0] as Keyword..w[1] as Keyword)
        .collect()
}

/// The objects after de-duplication: object `i` is `keywords[starts[i]..starts[i] + lens[i]]`.
pub(super) struct ObjectView<'a> {
    pub(super) starts: &'a [u64],
    pub(super) lens: &'a [u32],
    pub(super) keywords: &'a [Keyword],
}

impl ObjectView<'_> {
    pub(super) fn object(&self, i: usize) -> &[Keyword] {
        let s = self.starts[i] as usize;
        &self.keywords[s..s + self.lens[i] as usize]
    }
    pub(super) fn len(&self) -> usize {
        self.lens.len()
    }
}

/// Sorts and de-duplicates every object in place; returns the new lengths.
pub(super) fn dedup_objects(starts: &[u64], keywords: &mut [Keyword]) -> Vec<u32> {
    let mut slices: Vec<&mut [Keyword]> = Vec::with_capacity(starts.len().saturating_sub(1));
    let mut rest = keywords;
    for w in starts.windows(2) {
        let (head, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
        slices.push(head);
        rest = tail;
    }
    slices
        .par_iter_mut()
        .map(|s| {
            // objects usually arrive sorted (generated data, most files): no sort needed then
            if s.windows(2).all(|w| w[0] < w[1]) {
                return s.len() as u32;
            }
            s.sort_unstable();
            let mut len = 0;
            for i in 0..s.len() {
                if i == 0 || s[i] != s[len - 1] {
                    s[len] = s[i];
                    len += 1;
                }
            }
            len as u32
        })
        .collect()
}

/// A raw pointer that chunks of the scatter write through at disjoint positions.
#[derive(Clone, Copy)]
pub(super) struct SharedOut(pub(super) *mut ObjectId);
// SAFETY: every (keyword, chunk) pair owns a disjoint range of the output (see `count_keywords`).
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}

impl SharedOut {
    // a method, so closures capture the whole wrapper (Send + Sync), not its raw pointer field
    pub(super) fn ptr(self) -> *mut ObjectId {
        self.0
    }
}

/// A chunk of consecutive objects of the counting sort, counted and scattered by one task.
pub(super) struct SortChunk {
    objects: std::ops::Range<usize>,
    /// Per keyword: the chunk's postings of it, then (after the prefix sum) the place of its next.
    cursor: Vec<u64>,
    /// Per object of the chunk: its first keyword not scattered yet (the passes go by keyword
    /// range, and an object's keywords are ascending).
    next: Vec<u32>,
}

/// The counting sort's first half: per chunk of objects, the postings of each keyword; their
/// prefix sum gives the Position Map and each (keyword, chunk) its place in the List Array.
pub(super) fn count_keywords(objects: &ObjectView<'_>, space: u32) -> (Vec<u64>, Vec<SortChunk>) {
    let n = objects.len();
    let u = space as usize;
    let threads = rayon::current_num_threads().max(1);
    // per-chunk histograms of u counters each: keep them under ~1 GiB in all
    let max_chunks = ((1usize << 28) / u.max(1)).max(1);
    let chunks = (threads * 4).min(max_chunks).min(n.max(1));
    let per = n.div_ceil(chunks).max(1);
    let mut chunks: Vec<SortChunk> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (a, b) = ((c * per).min(n), ((c + 1) * per).min(n));
            let mut h = vec![0u64; u];
            for i in a..b {
                for &kw in objects.object(i) {
                    h[kw as usize] += 1;
                }
            }
            SortChunk {
                objects: a..b,
                cursor: h,
                next: vec![0; b - a],
            }
        })
        .collect();
    // offsets[kw] = postings of smaller keywords; a chunk's count becomes its write cursor
    let mut offsets = vec![0u64; u + 1];
    let mut total = 0u64;
    for (kw, offset) in offsets[..u].iter_mut().enumerate() {
        *offset = total;
        for c in chunks.iter_mut() {
            let count = c.cursor[kw];
            c.cursor[kw] = total;
            total += count;
        }
    }
    offsets[u] = total;
    (offsets, chunks)
}

/// The counting sort's second half over the keywords `keywords`: each chunk writes its objects'
/// postings of those keywords at its places in `out`, so ids stay ascending within a keyword.
/// Passes over consecutive ranges, in order, scatter every posting once.
pub(super) fn scatter(
    chunks: &mut [SortChunk],
    objects: &ObjectView<'_>,
    out: SharedOut,
    keywords: std::ops::Range<Keyword>,
) {
    chunks.par_iter_mut().for_each(|c| {
        let first = c.objects.start;
        for j in 0..c.next.len() {
            // a pass after the first reads a line or two of each object, 1 KB apart in a
            // SIFT-like index: too far apart for the hardware prefetcher to follow
            if let Some(&ahead) = c.next.get(j + AHEAD) {
                let object = objects.object(first + j + AHEAD);
                let ahead = ahead as usize;
                if ahead < object.len() {
                    // its next 16 keywords: the line they start in and the next
                    prefetch(&object[ahead]);
                    prefetch(&object[(ahead + 15).min(object.len() - 1)]);
                }
            }
            let (i, next) = (first + j, &mut c.next[j]);
            let object = objects.object(i);
            let mut at = *next as usize;
            while let Some(&kw) = object.get(at) {
                if kw >= keywords.end {
                    break;
                }
                let place = &mut c.cursor[kw as usize];
                // SAFETY: the place lies in the part of the output that the prefix sum gave this
                // (keyword, chunk) pair alone, below the next pair's start; `out` holds them all.
                unsafe { *out.ptr().add(*place as usize) = i as ObjectId };
                *place += 1;
                at += 1;
            }
            *next = at as u32;
        }
    });
}

/// Objects ahead whose next keyword [`scatter`] fetches while it scatters one.
const AHEAD: usize = 16;

/// Asks for the cache line of `kw` without waiting for it.
#[inline(always)]
fn prefetch(kw: &Keyword) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no effect but on the cache, whatever the address; this one is a
    // live reference's.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            std::ptr::from_ref(kw).cast(),
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = kw;
}

pub(super) fn block_maxima(objects: &ObjectView<'_>, block_starts: &[Keyword]) -> Vec<u32> {
    let nb = block_starts.len();
    (0..objects.len())
        .into_par_iter()
        .fold(
            || vec![0u32; nb],
            |mut acc, i| {
                let obj = objects.object(i);
                let mut j = 0;
                while j < obj.len() {
                    let b = block_starts.partition_point(|&s| s <= obj[j]) - 1;
                    let end = block_starts.get(b + 1).copied().unwrap_or(Keyword::MAX);
                    let run = obj[j..].partition_point(|&k| k < end);
                    acc[b] = acc[b].max(run as u32);
                    j += run;
                }
                acc
            },
        )
        .reduce(
            || vec![0u32; nb],
            |a, b| a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect(),
        )
}
