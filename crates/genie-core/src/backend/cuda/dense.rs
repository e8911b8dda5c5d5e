//! The dense keyword lists of a resident index ([`SearchParams::gpu_dense`]): lists holding a
//! large share of the objects, kept on the device as bitmaps of the objects for the tiled kernel.
//!
//! [`SearchParams::gpu_dense`]: crate::backend::SearchParams::gpu_dense

use super::plan::TILE_WORDS_WIDE;
use crate::error::Result;
use crate::index::InvertedIndex;
use cudarc::driver::CudaSlice;
use std::borrow::Cow;

/// Objects a dense bitmap's whole tiles cover: the widest tile (8-bit counters, wide tiles); every
/// other tile size divides it.
const DENSE_TILE_OBJECTS: u64 = (TILE_WORDS_WIDE as u64) * 4;

/// Keyword lists kept as bitmaps on the device for the tiled kernel ([`SearchParams::gpu_dense`]).
pub(super) struct Dense {
    /// The `gpu_dense` it was built for.
    pub(super) div: u32,
    /// The dense keywords, ascending; bitmap `i` is `keywords[i]`'s.
    pub(super) keywords: Vec<u32>,
    /// `keywords.len() x words` bits (at least one word).
    pub(super) bits: CudaSlice<u32>,
    /// Words per bitmap.
    pub(super) words: u64,
}

impl Dense {
    /// Bitmaps of the lists holding at least `1 / div` of the objects (none for `div == 0`),
    /// longest first while they fit in no more bytes than the postings, nor a quarter of the
    /// device's `free_memory`; the bitmaps put on the device by `upload`.
    pub(super) fn build(
        index: &InvertedIndex,
        div: u32,
        free_memory: u64,
        upload: impl FnOnce(&[u32]) -> Result<CudaSlice<u32>>,
    ) -> Result<Self> {
        use rayon::prelude::*;
        let cap_bytes = (index.num_postings() * 4).min(free_memory / 4);
        let n = index.num_objects() as u64;
        let words = n.div_ceil(DENSE_TILE_OBJECTS) * (DENSE_TILE_OBJECTS / 32);
        let offsets = index.offsets();
        // each list long enough, with its ids (decoded once, where the List Array is packed)
        let mut chosen: Vec<(u64, u32, Cow<'_, [u32]>)> = if div == 0 || n == 0 {
            Vec::new()
        } else {
            (0..offsets.len().saturating_sub(1))
                .into_par_iter()
                .filter_map(|kw| {
                    let len = offsets[kw + 1] - offsets[kw];
                    if len == 0 || len.saturating_mul(u64::from(div)) < n {
                        return None;
                    }
                    let ids = index.list_of(kw as u32);
                    // a bitmap holds each object once: the ids must strictly increase
                    ids.windows(2)
                        .all(|w| w[0] < w[1])
                        .then_some((len, kw as u32, ids))
                })
                .collect()
        };
        chosen.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        chosen.truncate((cap_bytes / (words * 4).max(1)) as usize);
        chosen.sort_unstable_by_key(|c| c.1);
        let keywords: Vec<u32> = chosen.iter().map(|c| c.1).collect();
        let mut host = vec![0u32; (keywords.len() as u64 * words).max(1) as usize];
        if !keywords.is_empty() {
            host.par_chunks_mut(words as usize)
                .zip(chosen.par_iter())
                .for_each(|(bm, (_, _, ids))| {
                    for &o in ids.iter() {
                        bm[(o / 32) as usize] |= 1 << (o % 32);
                    }
                });
        }
        log::debug!(
            "{} dense keyword lists (1/{div} of the objects or more), {:.1} MB of bitmaps",
            keywords.len(),
            (keywords.len() as u64 * words * 4) as f64 / 1e6
        );
        Ok(Self {
            div,
            keywords,
            bits: upload(&host)?,
            words,
        })
    }
}
