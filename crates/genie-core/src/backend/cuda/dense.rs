//! The dense keyword lists of a resident index ([`SearchParams::gpu_dense`]): lists holding a
//! large share of the objects, kept on the device as bitmaps of the objects for the tiled kernel.
//!
//! [`SearchParams::gpu_dense`]: crate::backend::SearchParams::gpu_dense

use super::args::push_list_array;
use super::cuda_err;
use super::plan::TILE_WORDS_WIDE;
use super::postings::DevicePostings;
use crate::error::Result;
use crate::index::InvertedIndex;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

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
    /// device's `free_memory`. `fill(first, len, words)` sets them on the device from the
    /// postings already there (each list's first posting and length, `words` words a bitmap),
    /// or answers `None` where a list's ids do not strictly increase; the bitmaps are then made on
    /// the host, of the lists that do, and put on the device by `upload`.
    pub(super) fn build(
        index: &InvertedIndex,
        div: u32,
        free_memory: u64,
        upload: impl FnOnce(&[u32]) -> Result<CudaSlice<u32>>,
        fill: impl FnOnce(&[u64], &[u32], u64) -> Result<Option<CudaSlice<u32>>>,
    ) -> Result<Self> {
        let words =
            (index.num_objects() as u64).div_ceil(DENSE_TILE_OBJECTS) * (DENSE_TILE_OBJECTS / 32);
        let offsets = index.offsets();
        let chosen = longest(index, div, free_memory, words, |_| true);
        let first: Vec<u64> = chosen.iter().map(|&kw| offsets[kw as usize]).collect();
        let len = chosen
            .iter()
            .map(|&kw| u32::try_from(offsets[kw as usize + 1] - offsets[kw as usize]))
            .collect::<std::result::Result<Vec<u32>, _>>();
        let on_device = match len {
            Ok(len) if !chosen.is_empty() => fill(&first, &len, words)?,
            _ => None,
        };
        let (keywords, bits, how) = match on_device {
            Some(bits) => (chosen, bits, "set on the device"),
            None => {
                // a bitmap holds each object once: the ids of a list must strictly increase
                let ascending = |kw: u32| index.list_of(kw).windows(2).all(|w| w[0] < w[1]);
                let keywords = longest(index, div, free_memory, words, ascending);
                let bits = upload(&host_bitmaps(index, &keywords, words))?;
                (keywords, bits, "made on the host")
            }
        };
        log::debug!(
            "{} dense keyword lists (1/{div} of the objects or more), {:.1} MB of bitmaps, {how}",
            keywords.len(),
            (keywords.len() as u64 * words * 4) as f64 / 1e6
        );
        Ok(Self {
            div,
            keywords,
            bits,
            words,
        })
    }
}

/// The keywords, ascending, of the lists holding at least `1 / div` of the objects that `keep`
/// admits, longest first while their bitmaps of `words` words fit in no more bytes than the
/// postings, nor a quarter of the device's `free_memory`.
fn longest(
    index: &InvertedIndex,
    div: u32,
    free_memory: u64,
    words: u64,
    keep: impl Fn(u32) -> bool + Sync,
) -> Vec<u32> {
    use rayon::prelude::*;
    let n = index.num_objects() as u64;
    let offsets = index.offsets();
    let cap = (index.num_postings() * 4).min(free_memory / 4) / (words * 4).max(1);
    let mut chosen: Vec<(u64, u32)> = (0..offsets.len().saturating_sub(1) as u32)
        .into_par_iter()
        .filter_map(|kw| {
            let len = offsets[kw as usize + 1] - offsets[kw as usize];
            let long = div > 0 && len > 0 && len.saturating_mul(u64::from(div)) >= n;
            (long && keep(kw)).then_some((len, kw))
        })
        .collect();
    chosen.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    chosen.truncate(cap as usize);
    let mut keywords: Vec<u32> = chosen.into_iter().map(|c| c.1).collect();
    keywords.sort_unstable();
    keywords
}

/// The bitmaps of `keywords`' lists, `words` words each (at least one word), made on the host.
fn host_bitmaps(index: &InvertedIndex, keywords: &[u32], words: u64) -> Vec<u32> {
    use rayon::prelude::*;
    let mut host = vec![0u32; (keywords.len() as u64 * words).max(1) as usize];
    if !keywords.is_empty() {
        host.par_chunks_mut(words as usize)
            .zip(keywords.par_iter())
            .for_each(|(bm, &kw)| {
                for &o in index.list_of(kw).iter() {
                    bm[(o / 32) as usize] |= 1 << (o % 32);
                }
            });
    }
    host
}

/// [`Dense::build`]'s `fill` on the device: `first.len()` bitmaps of `words` words set from the
/// List Array there (`postings`) by `funcs` (kernel `dense_bitmaps`, plain and packed) on
/// `stream`, waited for; `None` where a list's ids do not strictly increase.
pub(super) fn fill_on_device(
    funcs: &[CudaFunction; 2],
    stream: &Arc<CudaStream>,
    postings: &DevicePostings,
    first: &[u64],
    len: &[u32],
    words: u64,
) -> Result<Option<CudaSlice<u32>>> {
    let lists = u32::try_from(first.len()).unwrap_or(u32::MAX);
    let total = usize::try_from(first.len() as u64 * words).unwrap_or(usize::MAX);
    let mut bits = stream.alloc_zeros::<u32>(total.max(1)).map_err(cuda_err)?;
    let mut unordered = stream.alloc_zeros::<u32>(1).map_err(cuda_err)?;
    let first_dev = stream.clone_htod(first).map_err(cuda_err)?;
    let len_dev = stream.clone_htod(len).map_err(cuda_err)?;
    let longest = len.iter().copied().max().unwrap_or(0);
    let cfg = LaunchConfig {
        grid_dim: (
            longest.div_ceil(256).clamp(1, 1024),
            lists.clamp(1, 65_535),
            1,
        ),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut args = stream.launch_builder(&funcs[postings.kernels()]);
    push_list_array(&mut args, postings);
    args.arg(&first_dev)
        .arg(&len_dev)
        .arg(&lists)
        .arg(&mut bits)
        .arg(&words)
        .arg(&mut unordered);
    // SAFETY: arguments match kernels/cpq.cu's dense_bitmaps(_packed), the kernel of the form
    // `postings` is in; each list's postings lie inside the List Array (its offsets), `bits`
    // holds `lists x words` words and the kernel writes a bit only below `words` a list.
    unsafe { args.launch(cfg) }.map_err(cuda_err)?;
    let flag = stream.clone_dtoh(&unordered).map_err(cuda_err)?;
    stream.synchronize().map_err(cuda_err)?;
    Ok((flag.first() == Some(&0)).then_some(bits))
}
