//! The CPU's tiled count (the GPU's fast path on a core): a query's objects are counted a tile
//! at a time in counters that stay in the core's cache, each keyword list's slice of a tile found
//! by a cursor that only moves forward, and the tile's counts offered to a top-k that keeps the
//! contract order (count descending, then id ascending). Exact, so its answers are the c-PQ's.
//!
//! Dense lists (a posting for 1/8 of the objects or more, [`DenseBits`]) are counted from a
//! bitmap of the objects instead: 8 objects' 8-bit counters (4 of 16 bits) take one table lookup
//! and one 64-bit add (a vector of lanes in a word), where their postings would take a random
//! increment each.
//!
//! A search's [`ObjectMask`] applies to each tile's counters once they are final, before the
//! tile is offered to the top-k: a denied object's counter is cleared, whichever lists (by id or
//! by bitmap) counted it, so the top-k is that of the allowed objects.

use crate::index::{InvertedIndex, PreparedQuery};
use crate::mask::ObjectMask;
use crate::model::{contract_order, sort_and_cut, Hit};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

/// Bytes of counters per tile where a core's L2 is not known, and the most on any host: 256 KiB
/// (128 K objects of 16-bit counters, 256 K of 8-bit ones, 64 K of 32-bit ones).
pub const TILE_BYTES: usize = 256 << 10;

/// Bytes of counters per tile on this host ([`SearchParams::cpu_tile_bytes`] 0): an eighth of a
/// core's L2 cache as Linux reports it, a power of two within 32 KiB ..= [`TILE_BYTES`];
/// [`TILE_BYTES`] where it is not known. Measured (docs/journal/cpu.md): on a Xeon with 2 MiB of
/// L2 a core, 256 KiB tiles count as fast as any smaller (32 KiB: 20-25% slower); on an EPYC
/// with 512 KiB, 64 KiB tiles count SIFT-like 1.2-1.8x faster than 256 KiB ones.
///
/// [`SearchParams::cpu_tile_bytes`]: crate::backend::SearchParams::cpu_tile_bytes
pub fn host_tile_bytes() -> usize {
    static TILE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *TILE.get_or_init(|| l2_bytes().map_or(TILE_BYTES, tile_for_l2))
}

/// [`host_tile_bytes`] for an L2 of `l2` bytes a core.
fn tile_for_l2(l2: usize) -> usize {
    let eighth = (l2 / 8).clamp(32 << 10, TILE_BYTES);
    1 << (usize::BITS - 1 - eighth.leading_zeros())
}

/// A core's L2 cache in bytes, from Linux's sysfs (`None` elsewhere or where it is not listed).
fn l2_bytes() -> Option<usize> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    (0..8).find_map(|i| {
        let read = |f: &str| std::fs::read_to_string(dir.join(format!("index{i}/{f}"))).ok();
        let kind = read("type")?;
        if read("level")?.trim() != "2" || kind.trim() == "Instruction" {
            return None;
        }
        parse_cache_size(read("size")?.trim())
    })
}

/// A sysfs cache size (`512K`, `2048K`, `2M`, or bytes) in bytes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(unit)
}

/// Per-thread buffers of the tiled count, reused from query to query.
#[derive(Debug, Default)]
pub struct TileScratch {
    /// Bytes of counters per tile (0: [`host_tile_bytes`]).
    tile_bytes: usize,
    wide: Vec<u32>,
    narrow: Vec<u16>,
    bytes: Vec<u8>,
    /// Per keyword list of the query: its next posting, its end and its weight.
    lists: Vec<(usize, usize, u32)>,
    /// Per dense keyword list of the query: its bitmap's slot in [`DenseBits`] and its weight.
    dense: Vec<(usize, u32)>,
}

/// A dense list's share of the objects from which it is counted from a bitmap with 8-bit
/// counters: a 64-object word takes 8 table lookups and adds, which cost as much as about 6 random
/// increments, the postings of a list of 1/10 of the objects (2 cores of an AMD EPYC, Tweets-like:
/// 1/4 and 1/8 both 1.5x the postings' speed, 1/32 1.2x). With 16-bit counters a word takes twice
/// the adds, so only lists of twice this share go by bitmap; with 32-bit ones none does.
pub const DENSE_SHARE: u64 = 8;

/// The dense keyword lists of an index as bitmaps of its objects (bit `o` of a list's bitmap:
/// object `o` holds the keyword), for the tiled count.
#[derive(Debug, Default, Clone)]
pub struct DenseBits {
    /// The dense keywords, ascending; the i-th one's bitmap is the i-th run of `words` words.
    keywords: Vec<u32>,
    words: usize,
    bits: Vec<u64>,
    /// The fewest postings of a dense list.
    min_postings: u64,
}

impl DenseBits {
    /// Bitmaps of the lists of `index` with at least `min_postings` postings (and at least one).
    pub fn build(index: &InvertedIndex, min_postings: u64) -> Self {
        use rayon::prelude::*;
        let offsets = index.offsets();
        let keywords: Vec<u32> = (0..index.keyword_space())
            .filter(|&kw| {
                let len = offsets[kw as usize + 1] - offsets[kw as usize];
                len > 0 && len >= min_postings
            })
            .collect();
        let words = (index.num_objects() as usize).div_ceil(64);
        let mut bits = vec![0u64; words * keywords.len()];
        if words > 0 {
            bits.par_chunks_mut(words)
                .zip(keywords.par_iter())
                .for_each(|(map, &kw)| {
                    for &o in index.postings_of(kw) {
                        // ids below the object count, as the file's checks guarantee; an
                        // out-of-range one is left out rather than panicking
                        if let Some(w) = map.get_mut(o as usize / 64) {
                            *w |= 1 << (o % 64);
                        }
                    }
                });
        }
        Self {
            keywords,
            words,
            bits,
            min_postings: min_postings.max(1),
        }
    }

    /// Bitmaps of the lists of `index` that hold 1/[`DENSE_SHARE`] of its objects or more.
    pub fn of_index(index: &InvertedIndex) -> Self {
        Self::build(index, (u64::from(index.num_objects()) / DENSE_SHARE).max(1))
    }

    /// The number of dense lists.
    pub fn len(&self) -> usize {
        self.keywords.len()
    }

    /// Whether no list is dense.
    pub fn is_empty(&self) -> bool {
        self.keywords.is_empty()
    }

    /// The bitmaps' bytes.
    pub fn bytes(&self) -> usize {
        self.bits.len() * 8
    }

    /// The slot of keyword `kw`'s bitmap where a query of count bound `bound` counts it from the
    /// bitmap (`offsets` the index's): any dense list with 8-bit counters, the longer ones with
    /// 16-bit counters (a word takes twice the adds), none with 32-bit ones.
    pub(super) fn by_bitmap(&self, kw: u32, offsets: &[u64], bound: u32) -> Option<usize> {
        let slot = self.slot(kw)?;
        let len = offsets[kw as usize + 1] - offsets[kw as usize];
        let by_bitmap = match bound {
            b if b <= u32::from(u8::MAX) => true,
            b if b <= u32::from(u16::MAX) => len >= self.min_postings.saturating_mul(2),
            _ => false,
        };
        by_bitmap.then_some(slot)
    }

    /// Whether keyword `kw`'s list is dense (kept as a bitmap).
    pub(super) fn has(&self, kw: u32) -> bool {
        self.slot(kw).is_some()
    }

    fn slot(&self, kw: u32) -> Option<usize> {
        if self.keywords.is_empty() {
            return None;
        }
        self.keywords.binary_search(&kw).ok()
    }

    pub(super) fn bitmap(&self, slot: usize) -> &[u64] {
        &self.bits[slot * self.words..(slot + 1) * self.words]
    }
}

impl TileScratch {
    /// Buffers for tiles of `tile_bytes` of counters (0: [`host_tile_bytes`]).
    pub fn with_tile_bytes(tile_bytes: usize) -> Self {
        Self {
            tile_bytes,
            ..Self::default()
        }
    }
}

/// The contract order's `k` best so far; its top is the worst of them.
pub(super) type Best = BinaryHeap<Reverse<(u32, Reverse<u32>)>>;

/// The top-`k` hits of `query` among the objects of `objects` (a range of ids) in the contract
/// order, counting only the objects `mask` allows (of the index's length; `None`: all).
/// Disjoint ranges' answers merge into the whole index's with [`merge_top_k`].
pub fn tiled_query(
    index: &InvertedIndex,
    dense: &DenseBits,
    query: &PreparedQuery,
    k: u32,
    objects: Range<u32>,
    mask: Option<&ObjectMask>,
    scratch: &mut TileScratch,
) -> Vec<Hit> {
    let n = index.num_objects();
    let objects = objects.start..objects.end.min(n);
    if k == 0
        || objects.is_empty()
        || query.items.is_empty()
        || mask.is_some_and(|m| m.count() == 0)
    {
        return Vec::new();
    }
    let offsets = index.offsets();
    let postings = index.postings();
    scratch.lists.clear();
    scratch.dense.clear();
    for item in &query.items {
        let hi = item.hi.min(index.keyword_space().saturating_sub(1));
        for kw in item.lo..=hi {
            if let Some(slot) = dense.by_bitmap(kw, offsets, query.bound) {
                scratch.dense.push((slot, item.weight));
                continue;
            }
            let (a, b) = slice_of_objects(postings, offsets, kw, &objects, n);
            if a < b {
                scratch.lists.push((a, b, item.weight));
            }
        }
    }
    if scratch.lists.is_empty() && scratch.dense.is_empty() {
        return Vec::new();
    }
    let mut best = Best::with_capacity(k as usize + 1);
    let lists = Lists {
        postings,
        sparse: &mut scratch.lists,
        dense: &scratch.dense,
        bits: dense,
        live: mask.map(ObjectMask::words),
    };
    let bytes = if scratch.tile_bytes == 0 {
        host_tile_bytes()
    } else {
        scratch.tile_bytes
    };
    // the narrowest counter that holds the query's count bound: no sum overflows it
    if query.bound <= u32::from(u8::MAX) {
        count_tiles(lists, objects, k, bytes, &mut scratch.bytes, &mut best);
    } else if query.bound <= u32::from(u16::MAX) {
        count_tiles(lists, objects, k, bytes, &mut scratch.narrow, &mut best);
    } else {
        count_tiles(lists, objects, k, bytes, &mut scratch.wide, &mut best);
    }
    into_hits(best)
}

/// The hits a top-k kept, in the contract order.
pub(super) fn into_hits(best: Best) -> Vec<Hit> {
    let mut hits: Vec<Hit> = best
        .into_iter()
        .map(|Reverse((count, Reverse(id)))| Hit { id, count })
        .collect();
    hits.sort_unstable_by(contract_order);
    hits
}

/// Keyword `kw`'s postings among `objects` (of an index of `n` objects, `offsets` and
/// `postings` its own): a range of `postings`, found by two binary searches where the objects
/// are a part of the index.
pub(super) fn slice_of_objects(
    postings: &[u32],
    offsets: &[u64],
    kw: u32,
    objects: &Range<u32>,
    n: u32,
) -> (usize, usize) {
    let (mut a, mut b) = (
        offsets[kw as usize] as usize,
        offsets[kw as usize + 1] as usize,
    );
    if objects.end < n {
        b = a + postings[a..b].partition_point(|&id| id < objects.end);
    }
    if objects.start > 0 {
        a += postings[a..b].partition_point(|&id| id < objects.start);
    }
    (a, b)
}

/// The top-`k` of the union of disjoint parts' top-`k` lists.
pub fn merge_top_k(parts: impl IntoIterator<Item = Vec<Hit>>, k: u32) -> Vec<Hit> {
    let mut all: Vec<Hit> = parts.into_iter().flatten().collect();
    sort_and_cut(&mut all, k as usize);
    all
}

/// What a posting adds to its object's counter: a count's weight, or a cohort's word of lanes
/// ([`super::cpu_cohorts`]). Never carries past the counter: the bounds fit.
pub(super) trait Bump: Copy {
    fn bump(&mut self, by: Self);
}

impl Bump for u64 {
    #[inline(always)]
    fn bump(&mut self, by: Self) {
        *self = self.wrapping_add(by);
    }
}

/// A counter of a tile: 8, 16 or 32 bits, the narrowest the query's count bound allows.
trait Counter: Bump + bytemuck::Pod + Default + Ord + Send {
    /// Counters to a 64-bit word.
    const PER_WORD: usize = 8 / std::mem::size_of::<Self>();
    /// `SPREAD[g]`: lane j of a word is bit j of `g` (empty: no word-wise adds for this width).
    const SPREAD: &'static [u64];
    /// The counter's value of a weight (the weight fits, since the bound does).
    fn of(weight: u32) -> Self;
    fn get(self) -> u32;
    /// Adds `weight` to `run[j]` for each bit `j` set in `bits` (`run` at most 64 counters, no
    /// bit set at or past its end): a word of counters at a time through [`Counter::SPREAD`]
    /// when the run is whole, else bit by bit.
    #[inline(always)]
    fn add_bits(run: &mut [Self], mut bits: u64, weight: Self) {
        if !Self::SPREAD.is_empty() && run.len() == 64 {
            add_spread(
                bytemuck::cast_slice_mut(run),
                bits,
                u64::from(weight.get()),
                Self::PER_WORD,
                Self::SPREAD,
            );
            return;
        }
        while bits != 0 {
            run[bits.trailing_zeros() as usize].bump(weight);
            bits &= bits - 1;
        }
    }
}

/// The table spreading `lanes` bits to the lanes of a word (`N` = 2^`lanes` entries): entry `g`
/// has lane j equal to bit j of `g`.
const fn spread<const N: usize>(lanes: usize) -> [u64; N] {
    let width = 64 / lanes;
    let mut t = [0u64; N];
    let mut g = 0;
    while g < N {
        let mut j = 0;
        while j < lanes {
            t[g] |= ((g as u64 >> j) & 1) << (width * j);
            j += 1;
        }
        g += 1;
    }
    t
}

/// 8 objects' 8-bit counters in one word.
const SPREAD8: [u64; 256] = spread::<256>(8);
/// 4 objects' 16-bit counters in one word.
const SPREAD16: [u64; 16] = spread::<16>(4);

/// Adds `spread[group i of bits] * weight` to the i-th little-endian word of a run of 64
/// counters (`run` as bytes), `per` counters a word and `per` bits a group: a lane never carries
/// into the next, as the query's count bound fits the counter and no sum passes it.
#[inline(always)]
fn add_spread(run: &mut [u8], bits: u64, weight: u64, per: usize, spread: &[u64]) {
    let mask = (1u64 << per) - 1;
    for (i, word) in run.chunks_exact_mut(8).enumerate() {
        let group = (bits >> (i * per)) & mask;
        let bytes: &mut [u8; 8] = word.try_into().expect("8 bytes");
        let sum =
            u64::from_le_bytes(*bytes).wrapping_add(spread[group as usize].wrapping_mul(weight));
        *bytes = sum.to_le_bytes();
    }
}

macro_rules! counter {
    ($t:ty, $spread:expr) => {
        impl Bump for $t {
            #[inline(always)]
            fn bump(&mut self, weight: Self) {
                // the query's count bound fits the counter, so no sum overflows
                *self = self.wrapping_add(weight);
            }
        }
        impl Counter for $t {
            const SPREAD: &'static [u64] = $spread;
            #[inline(always)]
            fn of(weight: u32) -> Self {
                weight as $t
            }
            #[inline(always)]
            fn get(self) -> u32 {
                u32::from(self)
            }
        }
    };
}
counter!(u8, &SPREAD8);
counter!(u16, &SPREAD16);
// no bitmap goes to 32-bit counters (see `tiled_query`)
counter!(u32, &[]);

/// Counters scanned at a time for a count above the worst kept (a few vectors' width).
pub(super) const SCAN: usize = 128;

/// A query's lists for the tiled count: the sparse ones by their postings (each its next
/// posting, end and weight), the dense ones by their bitmaps; and the words of the search's
/// mask, if any.
struct Lists<'a> {
    postings: &'a [u32],
    sparse: &'a mut [(usize, usize, u32)],
    dense: &'a [(usize, u32)],
    bits: &'a DenseBits,
    live: Option<&'a [u32]>,
}

/// Counts `lists` over `objects` in tiles of `tile_bytes` of counters and offers each tile's
/// counts to `best`, the `k` best so far.
fn count_tiles<C: Counter>(
    lists: Lists<'_>,
    objects: Range<u32>,
    k: u32,
    tile_bytes: usize,
    counts: &mut Vec<C>,
    best: &mut Best,
) {
    let Lists {
        postings,
        sparse,
        dense,
        bits,
        live,
    } = lists;
    // at least a run of the scan's counters
    let tile = (tile_bytes / std::mem::size_of::<C>()).max(SCAN) as u32;
    counts.clear();
    counts.resize(tile.min(objects.len() as u32) as usize, C::default());
    let mut tile_start = objects.start;
    while tile_start < objects.end {
        let tile_end = tile_start.saturating_add(tile).min(objects.end);
        let counts = &mut counts[..(tile_end - tile_start) as usize];
        for &(slot, weight) in dense {
            count_bitmap(bits.bitmap(slot), tile_start, C::of(weight), counts);
        }
        for j in 0..sparse.len() {
            // the next lists' first lines are on their way while this one counts: each list
            // starts a new stream that the hardware prefetcher would find only after misses
            if let Some(&(ahead, ahead_end, _)) = sparse.get(j + AHEAD) {
                prefetch(&postings[ahead..ahead_end]);
            }
            let (next, end, weight) = &mut sparse[j];
            *next += count_list(
                &postings[*next..*end],
                tile_start,
                tile_end,
                C::of(*weight),
                counts,
            );
        }
        if let Some(live) = live {
            clear_denied(counts, tile_start, live);
        }
        offer_tile(counts, tile_start, k, best);
        tile_start = tile_end;
    }
}

/// Clears the counter `counts[i]` of each object `tile_start + i` that the mask's words `live`
/// deny: a word of 32 objects at a time, none touched where all are allowed.
pub(super) fn clear_denied<C: Copy + Default>(counts: &mut [C], tile_start: u32, live: &[u32]) {
    let (mut i, mut o) = (0usize, tile_start as usize);
    while i < counts.len() {
        let shift = o % 32;
        let take = (32 - shift).min(counts.len() - i);
        let run = u32::MAX >> (32 - take);
        // the objects' bits, from bit 0; past the mask's words none is allowed
        let denied = !(live.get(o / 32).copied().unwrap_or(0) >> shift) & run;
        if denied == run {
            counts[i..i + take].fill(C::default());
        } else {
            let mut d = denied;
            while d != 0 {
                counts[i + d.trailing_zeros() as usize] = C::default();
                d &= d - 1;
            }
        }
        i += take;
        o += take;
    }
}

/// Adds `weight` to `counts[i]` for each object `tile_start + i` set in `bitmap`: whole words of
/// 64 objects at a time where the tile's start allows, a part of a word at its ends.
#[inline(always)]
fn count_bitmap<C: Counter>(bitmap: &[u64], tile_start: u32, weight: C, counts: &mut [C]) {
    bitmap_runs(bitmap, tile_start, counts.len(), |i, take, word| {
        C::add_bits(&mut counts[i..i + take], word, weight);
    });
}

/// Calls `f(i, take, bits)` for each run of objects `tile_start + i .. + take` of a tile of `len`
/// objects that `bitmap` sets any of, `bits` their bits from bit 0: whole words of 64 objects
/// where the tile's start allows, a part of a word at its ends.
#[inline(always)]
pub(super) fn bitmap_runs(
    bitmap: &[u64],
    tile_start: u32,
    len: usize,
    mut f: impl FnMut(usize, usize, u64),
) {
    let (mut i, mut o) = (0usize, tile_start as usize);
    while i < len {
        let shift = o % 64;
        let take = (64 - shift).min(len - i);
        let mut word = bitmap[o / 64] >> shift;
        if take < 64 {
            word &= (1u64 << take) - 1;
        }
        if word != 0 {
            f(i, take, word);
        }
        i += take;
        o += take;
    }
}

/// Lists ahead whose first lines are fetched while a list counts.
pub(super) const AHEAD: usize = 2;

/// Asks for the first lines of `list` into the cache, without waiting for them.
#[inline(always)]
pub(super) fn prefetch(list: &[u32]) {
    for line in list.chunks(16).take(4) {
        prefetch_at(line.as_ptr());
    }
}

/// Postings ahead of the count whose line is asked for: a list's slice of a tile is short (SIFT-
/// like: about 1,000 postings), too short for the hardware's stream prefetcher to run ahead of. On
/// a 2-core EPYC, SIFT-like 200 K through the CLI: 0.56-0.67 G postings/s a core (best of 9) at
/// 256 against 0.48-0.55 without, 128 in between, 512 the same as 256.
const STREAM_AHEAD: usize = 256;

/// Asks for the line at `p` into the cache, without waiting for it.
#[inline(always)]
fn prefetch_at(p: *const u32) {
    // SAFETY: a prefetch has no effect but on the cache, whatever the address
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Adds `weight` to the counter of each posting of `list` below `tile_end` (ids ascend within a
/// list, and those below `tile_start` were counted by earlier tiles); returns how many.
#[inline(always)]
pub(super) fn count_list<C: Bump>(
    list: &[u32],
    tile_start: u32,
    tile_end: u32,
    weight: C,
    counts: &mut [C],
) -> usize {
    // the list's end is found by the count itself, a block at a time: a scan that streams,
    // where a binary search would miss the cache
    const BLOCK: usize = 8;
    let mut blocks = list.chunks_exact(BLOCK);
    let mut done = 0;
    let span = counts.len() as u32;
    for block in &mut blocks {
        if block[BLOCK - 1] >= tile_end {
            break;
        }
        // a line a list's stream ahead, every other block (a line holds 16 postings)
        if done % 16 == 0 {
            prefetch_at(block.as_ptr().wrapping_add(STREAM_AHEAD));
        }
        let at: [u32; BLOCK] = std::array::from_fn(|i| block[i].wrapping_sub(tile_start));
        // one check of the whole block (a list in order always passes) instead of one per
        // posting; a list out of order takes the checked path below
        if at.iter().fold(0, |m, &a| m.max(a)) < span {
            for &a in &at {
                // SAFETY: every `a` of the block is below `span`, the counters' length
                unsafe { counts.get_unchecked_mut(a as usize) }.bump(weight);
            }
        } else {
            for &a in &at {
                counts[a as usize].bump(weight);
            }
        }
        done += BLOCK;
    }
    for &id in &list[done..] {
        if id >= tile_end {
            break;
        }
        counts[id.wrapping_sub(tile_start) as usize].bump(weight);
        done += 1;
    }
    done
}

/// Below this, a count cannot enter `best`, the `k` best so far: its worst once it keeps `k`,
/// else 0.
#[inline(always)]
pub(super) fn floor(best: &Best, k: u32) -> u32 {
    if best.len() == k as usize {
        best.peek().map_or(0, |Reverse((worst, _))| *worst)
    } else {
        0
    }
}

/// Offers object `id` of count `count` to `best`, the `k` best so far (ids come in ascending
/// order, so an equal count loses to the one kept).
#[inline(always)]
pub(super) fn offer(best: &mut Best, k: u32, count: u32, id: u32) {
    if best.len() == k as usize {
        match best.peek() {
            Some(Reverse((worst, _))) if count <= *worst => return,
            _ => {
                best.pop();
            }
        }
    }
    best.push(Reverse((count, Reverse(id))));
}

/// Offers a tile's counts to `best` and clears them. Tiles come in id order, so a later object
/// equal to the worst kept loses the tie; a run of [`SCAN`] counters none above the worst kept is
/// skipped whole (a vectorized max).
fn offer_tile<C: Counter>(counts: &mut [C], tile_start: u32, k: u32, best: &mut Best) {
    let mut base = tile_start;
    for run in counts.chunks_mut(SCAN) {
        // below this, a count cannot enter: 0 while fewer than k are kept
        let floor = floor(best, k);
        let top = run.iter().copied().max().unwrap_or_default().get();
        if top == 0 {
            // nothing counted here: nothing to offer, nothing to clear
            base += run.len() as u32;
            continue;
        }
        if top > floor {
            for (i, c) in run.iter().enumerate() {
                let count = c.get();
                if count != 0 {
                    offer(best, k, count, base + i as u32);
                }
            }
        }
        run.fill(C::default());
        base += run.len() as u32;
    }
}

/// What the tiled counts' property tests (here and in [`super::cpu_cohorts`]) vary.
#[cfg(test)]
pub(super) mod test_support {
    use super::DenseBits;
    use crate::index::InvertedIndex;
    use crate::mask::ObjectMask;

    /// No list as a bitmap (`kind` 0), every list (1), or those of the default share (2).
    pub fn dense_variant(index: &InvertedIndex, kind: usize) -> DenseBits {
        match kind {
            0 => DenseBits::build(index, u64::MAX),
            1 => DenseBits::build(index, 1),
            _ => DenseBits::of_index(index),
        }
    }

    /// No mask (`kind` 0), one allowing every object (1), about half (2), about 1 in 100 (3),
    /// none (4), by a hash of the id and `seed`, over `n` objects.
    pub fn mask_variant(n: u32, seed: u64, kind: usize) -> Option<ObjectMask> {
        let keep = |o: u32| {
            let h = crate::cpq::hash_id(o ^ seed as u32);
            match kind {
                2 => h % 2 == 0,
                3 => h % 100 == 0,
                4 => false,
                _ => true,
            }
        };
        (kind > 0).then(|| ObjectMask::from_allowed(n, (0..n).filter(|&o| keep(o))).expect("mask"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IndexBuilder, Item, Query};
    use proptest::prelude::*;

    #[test]
    fn the_hosts_tile_is_an_eighth_of_its_l2_within_bounds() {
        assert_eq!(parse_cache_size("512K"), Some(512 << 10));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("65536"), Some(65536));
        assert_eq!(parse_cache_size("lots"), None);
        assert_eq!(parse_cache_size(""), None);
        assert_eq!(tile_for_l2(512 << 10), 64 << 10);
        assert_eq!(tile_for_l2(2 << 20), 256 << 10);
        assert_eq!(tile_for_l2(32 << 20), 256 << 10);
        assert_eq!(tile_for_l2(1280 << 10), 128 << 10);
        assert_eq!(tile_for_l2(64 << 10), 32 << 10);
        let host = host_tile_bytes();
        assert!((32 << 10..=TILE_BYTES).contains(&host) && host.is_power_of_two());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The tiled count's top-k is the oracle's: brute-force counts sorted by the contract
        /// order and cut, across tile boundaries, ranges, weights and ties.
        #[test]
        fn tiles_give_the_oracles_top_k(
            n in 1u32..200_000,
            seed in 0u64..1000,
            k in 0u32..40,
            items in prop::collection::vec((0u32..70, 0u32..4, 1u32..4), 0..8),
            width in 0usize..3,
            cuts in prop::collection::vec(0u32..200_000, 0..4),
            tile_size in 0usize..3,
            dense_min in 0usize..3,
            mask_kind in 0usize..5,
        ) {
            // weights that lift the count bound past 8 and 16 bits: each counter width's path
            let scale = [1, 300, 30_000][width];
            let mut b = IndexBuilder::new();
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut objects = Vec::new();
            for _ in 0..n.min(3000) {
                let mut kws = Vec::new();
                for _ in 0..(x % 5) {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                    kws.push((x % 64) as u32);
                }
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                objects.push(kws);
            }
            // the objects spread over many tiles: ids far apart, empty objects between
            let spread = n / 3000 + 1;
            let all: Vec<Vec<u32>> = (0..n)
                .map(|o| {
                    if o % spread == 0 {
                        objects.get((o / spread) as usize).cloned().unwrap_or_default()
                    } else {
                        Vec::new()
                    }
                })
                .collect();
            for o in &all {
                b.push_object(o).expect("object");
            }
            let index = b.build().expect("index");
            let query = Query {
                items: items
                    .iter()
                    .map(|&(lo, span, w)| Item::new(lo, lo + span, w * scale).expect("item"))
                    .collect(),
            };
            let prepared = index.prepare(&query).expect("prepared");
            // tiles of every size: many tiles of few objects, and the default
            let mut scratch = TileScratch::with_tile_bytes([0, 128, 4096][tile_size]);
            // no list as a bitmap, every list, or the default share's
            let dense = test_support::dense_variant(&index, dense_min);
            let mask = test_support::mask_variant(n, seed, mask_kind);
            let mask = mask.as_ref();
            let got = tiled_query(&index, &dense, &prepared, k, 0..n, mask, &mut scratch);
            let one = std::slice::from_ref(&query);
            let want = match mask {
                Some(m) => crate::oracle::top_k_masked(&all, one, k as usize, m),
                None => crate::oracle::top_k(&all, one, k as usize),
            };
            prop_assert_eq!(&got, &want[0]);
            // the objects cut into parts, each counted alone, then merged
            let mut bounds: Vec<u32> = cuts.iter().map(|c| c % (n + 1)).collect();
            bounds.extend([0, n]);
            bounds.sort_unstable();
            let parts = bounds
                .windows(2)
                .map(|w| {
                    tiled_query(&index, &dense, &prepared, k, w[0]..w[1], mask, &mut scratch)
                });
            prop_assert_eq!(merge_top_k(parts, k), want[0].clone());
        }
    }

    /// A bitmap run of 64 counters adds through the spread tables exactly as bit by bit, for
    /// both narrow widths, near the counters' top.
    #[test]
    fn spread_adds_equal_bit_by_bit() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = x;
            let mut a8: Vec<u8> = (0..64).map(|j| (x >> (j % 57)) as u8 & 0x7f).collect();
            let mut b8 = a8.clone();
            u8::add_bits(&mut a8, bits, 128);
            for (j, c) in b8.iter_mut().enumerate() {
                if bits >> j & 1 == 1 {
                    *c += 128;
                }
            }
            assert_eq!(a8, b8);
            let mut a16: Vec<u16> = (0..64).map(|j| (x >> (j % 49)) as u16 & 0x7fff).collect();
            let mut b16 = a16.clone();
            u16::add_bits(&mut a16, bits, 32_768);
            for (j, c) in b16.iter_mut().enumerate() {
                if bits >> j & 1 == 1 {
                    *c += 32_768;
                }
            }
            assert_eq!(a16, b16);
        }
    }
}
