//! The CPU's tiled count (the GPU's fast path on a core): a query's objects are counted a tile
//! at a time in counters that stay in the core's cache, each keyword list's slice of a tile found
//! by a cursor that only moves forward, and the tile's counts offered to a top-k that keeps the
//! contract order (count descending, then id ascending). Exact, so its answers are the c-PQ's.

use crate::index::{InvertedIndex, PreparedQuery};
use crate::model::Hit;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Objects per tile: 128 K counters of 16 bits (256 KiB, a core's L2) where the query's count
/// bound allows, else 64 K of 32 bits.
pub const TILE: u32 = 1 << 17;

/// Per-thread buffers of the tiled count, reused from query to query.
#[derive(Debug, Default)]
pub struct TileScratch {
    counts: Vec<u32>,
    narrow: Vec<u16>,
    /// Per keyword list of the query: its next posting, its end and its weight.
    lists: Vec<(usize, usize, u32)>,
}

/// The top-`k` hits of `query` over `index` in the contract order.
pub fn tiled_query(
    index: &InvertedIndex,
    query: &PreparedQuery,
    k: u32,
    scratch: &mut TileScratch,
) -> Vec<Hit> {
    let n = index.num_objects();
    if k == 0 || n == 0 || query.items.is_empty() {
        return Vec::new();
    }
    let offsets = index.offsets();
    let postings = index.postings();
    scratch.lists.clear();
    for item in &query.items {
        let hi = item.hi.min(index.keyword_space().saturating_sub(1));
        for kw in item.lo..=hi {
            let (a, b) = (
                offsets[kw as usize] as usize,
                offsets[kw as usize + 1] as usize,
            );
            if a < b {
                scratch.lists.push((a, b, item.weight));
            }
        }
    }
    if scratch.lists.is_empty() {
        return Vec::new();
    }
    let mut best: BinaryHeap<Reverse<(u32, Reverse<u32>)>> =
        BinaryHeap::with_capacity(k as usize + 1);
    if query.bound <= u32::from(u16::MAX) {
        let counts = std::mem::take(&mut scratch.narrow);
        scratch.narrow = count_tiles(postings, &mut scratch.lists, n, TILE, k, counts, &mut best);
    } else {
        let counts = std::mem::take(&mut scratch.counts);
        scratch.counts = count_tiles(
            postings,
            &mut scratch.lists,
            n,
            TILE / 2,
            k,
            counts,
            &mut best,
        );
    }
    let mut hits: Vec<Hit> = best
        .into_iter()
        .map(|Reverse((count, Reverse(id)))| Hit { id, count })
        .collect();
    hits.sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.id.cmp(&b.id)));
    hits
}

/// A counter of a tile: 16 bits where the count bound allows, else 32.
trait Counter: Copy + Default + Send {
    fn add(&mut self, weight: u32);
    fn get(self) -> u32;
}

impl Counter for u16 {
    fn add(&mut self, weight: u32) {
        // the query's count bound fits 16 bits, so no sum overflows
        *self = self.wrapping_add(weight as u16);
    }
    fn get(self) -> u32 {
        u32::from(self)
    }
}

impl Counter for u32 {
    fn add(&mut self, weight: u32) {
        *self = self.wrapping_add(weight);
    }
    fn get(self) -> u32 {
        self
    }
}

/// Counts `lists` (each its next posting, end and weight) over tiles of `tile` objects in
/// `counts` and offers each tile's counts to `best` (the `k` best so far; its top the worst of
/// them); returns the counters for reuse.
fn count_tiles<C: Counter>(
    postings: &[u32],
    lists: &mut [(usize, usize, u32)],
    n: u32,
    tile: u32,
    k: u32,
    mut counts: Vec<C>,
    best: &mut BinaryHeap<Reverse<(u32, Reverse<u32>)>>,
) -> Vec<C> {
    counts.clear();
    counts.resize(tile.min(n) as usize, C::default());
    let mut tile_start = 0u32;
    while tile_start < n {
        let tile_end = tile_start.saturating_add(tile).min(n);
        let counts = &mut counts[..(tile_end - tile_start) as usize];
        for (next, end, weight) in lists.iter_mut() {
            let list = &postings[*next..*end];
            // the list's postings below the tile's end (ids ascend within a list)
            let take = list.partition_point(|&id| id < tile_end);
            for &id in &list[..take] {
                counts[id.wrapping_sub(tile_start) as usize].add(*weight);
            }
            *next += take;
        }
        for (i, c) in counts.iter_mut().enumerate() {
            let count = std::mem::take(c).get();
            if count == 0 {
                continue;
            }
            // tiles come in id order: a later object equal to the worst kept loses the tie
            if best.len() == k as usize {
                match best.peek() {
                    Some(Reverse((worst, _))) if count <= *worst => continue,
                    _ => {
                        best.pop();
                    }
                }
            }
            best.push(Reverse((count, Reverse(tile_start + i as u32))));
        }
        tile_start = tile_end;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IndexBuilder, Item, Query};
    use proptest::prelude::*;

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
            heavy in any::<bool>(),
        ) {
            // heavy weights lift the count bound past 16 bits: the 32-bit counters' path
            let scale = if heavy { 30_000 } else { 1 };
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
            let got = tiled_query(&index, &prepared, k, &mut TileScratch::default());
            let want = crate::oracle::top_k(&all, std::slice::from_ref(&query), k as usize);
            prop_assert_eq!(got, want[0].clone());
        }
    }
}
