//! The host-side plan of a batch for the kernels of `kernels/cpq.cu`: its items or keyword
//! ranges, their tasks or lists, the queries' metadata and, for the tiled kernel, the dense lists
//! each query reads as bitmaps; and the table a query gets when its first one filled. No device
//! call: [`super::gpu`] uploads the plan and launches the kernels.

use crate::backend::{Method, SearchParams};
use crate::cpq::{bits_for_bound, words_for};
use crate::error::{GenieError, Result};
use crate::index::{InvertedIndex, PreparedQuery};

/// The host-side plan of one batch (see the comments in kernels/cpq.cu).
pub(super) struct Plan {
    pub(super) nq: usize,
    /// Segment A (items of 6 x u32, or with `tiled` keyword ranges of 4 x u32), segment B (their
    /// prefix sums: tasks per item, or ranges per query), metadata (8 x u32 per query), then with
    /// `tiled` segment C (dense list records of 2 x u32, padded to at least one) and segment D
    /// (their prefix sums per query). Only `input[..len]` is the plan (the buffer is reused).
    pub(super) input: Vec<u32>,
    pub(super) len: usize,
    pub(super) a_len: usize,
    pub(super) b_len: usize,
    pub(super) c_len: usize,
    /// The tiled counting kernel runs this batch (else the global bitmap kernel).
    pub(super) tiled: bool,
    /// Bits per counter of the tiled kernel: 8 or 16.
    pub(super) tile_bits: u32,
    /// Counter words per tile of the tiled kernel.
    pub(super) tile_words: u32,
    pub(super) nitems: u32,
    pub(super) ntasks: u32,
    pub(super) bitmap_words: u64,
    pub(super) table_slots: u64,
    pub(super) zipper: u64,
    /// The postings of the tiled kernel's id lists, all queries together, estimated from a
    /// sample of the queries ([`sampled_postings`]; 0 when not tiled, or when the batch is too
    /// small for [`sweep_tiles`] to sweep it).
    pub(super) postings: u64,
}

impl Plan {
    pub(super) fn task_start_offset(&self) -> usize {
        self.a_len
    }
    pub(super) fn meta_offset(&self) -> usize {
        self.a_len + self.b_len
    }
    pub(super) fn dense_offset(&self) -> usize {
        self.meta_offset() + 8 * self.nq
    }
    pub(super) fn dense_start_offset(&self) -> usize {
        self.dense_offset() + self.c_len
    }
}

/// Largest count bound of the tiled kernel with byte counters, and with 16-bit counters; most
/// keyword lists per query.
pub(super) const TILE_MAX_BOUND_8: u32 = 255;
pub(super) const TILE_MAX_BOUND_16: u32 = 1023;
pub(super) const TILE_MAX_LISTS: usize = 2048;
/// Counter words per tile of the tiled kernels (kernels/cpq.cu TILE_WORDS_NARROW, _WIDE).
pub(super) const TILE_WORDS: u32 = 8192;
pub(super) const TILE_WORDS_WIDE: u32 = 16384;

/// Visits a query's items as the tiled kernel takes them: `range(lo, hi, weight)` for each run of
/// keywords of an item with no dense keyword in it (each keyword one id list, empty ones
/// included), `dense(bitmap, weight)` for each dense keyword (`dense_of`: the keywords kept as
/// bitmaps on the device, ascending; bitmap `i` is `dense_of[i]`'s).
fn visit_ranges(
    index: &InvertedIndex,
    q: &PreparedQuery,
    dense_of: &[u32],
    mut range: impl FnMut(u32, u32, u32),
    mut dense: impl FnMut(u32, u32),
) {
    let space = index.keyword_space();
    for it in &q.items {
        if it.lo >= space || it.lo > it.hi {
            continue;
        }
        let hi = it.hi.min(space - 1);
        let kws = dense_of;
        let (a, b) = (
            kws.partition_point(|&k| k < it.lo),
            kws.partition_point(|&k| k <= hi),
        );
        let mut cur = it.lo;
        for (i, &d) in kws[a..b].iter().enumerate() {
            if d > cur {
                range(cur, d - 1, it.weight);
            }
            dense((a + i) as u32, it.weight);
            cur = d + 1;
        }
        if cur <= hi {
            range(cur, hi, it.weight);
        }
    }
}

/// A query's (ranges, id lists, dense lists).
fn count_lists(
    index: &InvertedIndex,
    q: &PreparedQuery,
    dense_of: &[u32],
) -> (usize, usize, usize) {
    let (mut ranges, mut lists, mut dense) = (0, 0, 0);
    visit_ranges(
        index,
        q,
        dense_of,
        |lo, hi, _| {
            ranges += 1;
            lists += (hi - lo) as usize + 1;
        },
        |_, _| dense += 1,
    );
    (ranges, lists, dense)
}

/// Queries of a batch whose postings [`sampled_postings`] sums.
const POSTINGS_SAMPLE: usize = 32;

/// The postings of the queries' id lists (dense lists aside), for the sweep rule: summed over at
/// most [`POSTINGS_SAMPLE`] queries spread evenly over the batch and scaled to it, exact for a
/// batch no larger. Each range costs two reads of the Position Map at scattered places: summing
/// every query's took nearly all of the plan (1,024 OCR-like queries of 237 lists: 26 ms on one
/// core of a 2-core EPYC, against 0.4 ms for the rest of the lists' counting), and a rule that
/// compares a batch's postings a tile with a threshold needs no more than a sample.
fn sampled_postings(index: &InvertedIndex, queries: &[PreparedQuery], dense_of: &[u32]) -> u64 {
    use rayon::prelude::*;
    let nq = queries.len();
    let taken = nq.min(POSTINGS_SAMPLE);
    if taken == 0 {
        return 0;
    }
    let sum: u64 = (0..taken)
        .into_par_iter()
        .map(|i| {
            let mut postings = 0;
            visit_ranges(
                index,
                &queries[i * nq / taken],
                dense_of,
                |lo, hi, _| {
                    postings += index
                        .slice_of(lo, hi)
                        .map_or(0, |(a, b)| b.saturating_sub(a));
                },
                |_, _| (),
            );
            postings
        })
        .sum();
    (u128::from(sum) * nq as u128 / taken as u128) as u64
}

/// Writes a query's ranges as (lo, hi, weight, first list) into `ranges` and its dense lists as
/// (bitmap, weight) into `dense`; both sized by [`count_lists`].
fn fill_lists(
    index: &InvertedIndex,
    q: &PreparedQuery,
    dense_of: &[u32],
    ranges: &mut [u32],
    dense: &mut [u32],
) {
    let (mut r, mut first, mut d) = (0, 0u32, 0);
    visit_ranges(
        index,
        q,
        dense_of,
        |lo, hi, w| {
            ranges[r..r + 4].copy_from_slice(&[lo, hi, w, first]);
            r += 4;
            first += hi - lo + 1;
        },
        |bitmap, w| {
            dense[d..d + 2].copy_from_slice(&[bitmap, w]);
            d += 2;
        },
    );
}

/// Cuts `buf` into consecutive slices of `lens`.
fn cut(mut buf: &mut [u32], lens: impl Iterator<Item = usize>) -> Vec<&mut [u32]> {
    lens.map(|len| {
        let (head, tail) = std::mem::take(&mut buf).split_at_mut(len);
        buf = tail;
        head
    })
    .collect()
}

/// Queries a pipelined batch holds at most: each of a search's batches (cut to fit the device's
/// memory) is cut again into equal batches of at most this many, so that the host plans the next
/// and unpacks the one before while the device counts one. A search of 4,096 queries in one
/// batch ran its plan, launch, count and unpacking one after the other.
pub(super) const PIPELINED_QUERIES: usize = 2048;

/// `batches` cut into equal consecutive batches of at most [`PIPELINED_QUERIES`] queries;
/// `GENIE_PIPELINED_QUERIES=Q` sets that size (0: the batches as they are).
pub(super) fn pipelined(batches: &[std::ops::Range<usize>]) -> Vec<std::ops::Range<usize>> {
    // read once: the variable is a setting of the process, and this runs for every search
    static SET: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let set = SET.get_or_init(|| {
        std::env::var("GENIE_PIPELINED_QUERIES")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    });
    let most = match *set {
        Some(0) => return batches.to_vec(),
        Some(q) => q,
        None => PIPELINED_QUERIES,
    };
    let mut out = Vec::with_capacity(batches.len());
    for r in batches {
        let parts = r.len().div_ceil(most).max(1);
        let (each, extra) = (r.len() / parts, r.len() % parts);
        let mut start = r.start;
        for p in 0..parts {
            let end = start + each + usize::from(p < extra);
            out.push(start..end);
            start = end;
        }
    }
    out
}

/// Plans a batch into `buf` (reused between batches, so its pages are already mapped; it becomes
/// the plan's input).
pub(super) fn plan(
    index: &InvertedIndex,
    queries: &[PreparedQuery],
    slots_of: &[u64],
    params: &SearchParams,
    dense_of: &[u32],
    mut buf: Vec<u32>,
) -> Result<Plan> {
    use rayon::prelude::*;
    let n = index.num_objects();
    let nq = queries.len();
    let cpq = params.method == Method::Cpq;
    // the tiled fast path: 8- or 16-bit counters in shared memory, for every query of the batch
    let max_bound = queries.iter().map(|q| q.bound).max().unwrap_or(0);
    let mut tiled = cpq && params.gpu_tiles && n > 0 && max_bound <= TILE_MAX_BOUND_16;
    let tile_bits = if max_bound <= TILE_MAX_BOUND_8 { 8 } else { 16 };
    let counts: Vec<(usize, usize, usize)> = if tiled {
        // every query's lists at once (range items of wide tables expand to thousands of lists)
        queries
            .par_iter()
            .map(|q| count_lists(index, q, dense_of))
            .collect()
    } else {
        Vec::new()
    };
    if counts.iter().any(|&(_, lists, _)| lists > TILE_MAX_LISTS) {
        tiled = false;
    }
    let sublist = u64::from(params.sublist_len.max(1));
    let (mut items, mut task_start, mut meta) =
        (Vec::new(), vec![0u32], Vec::with_capacity(nq * 8));
    let (mut ntasks, mut bitmap_words, mut tables, mut zipper) = (0u64, 0u64, 0u64, 0u64);
    for (qi, (q, &slots)) in queries.iter().zip(slots_of).enumerate() {
        if !tiled {
            for it in &q.items {
                let Some((a, b)) = index.slice_of(it.lo, it.hi).filter(|(a, b)| b > a) else {
                    continue;
                };
                items.extend_from_slice(&[
                    a as u32,
                    (a >> 32) as u32,
                    b as u32,
                    (b >> 32) as u32,
                    qi as u32,
                    it.weight,
                ]);
                ntasks += (b - a).div_ceil(sublist);
                task_start.push(
                    u32::try_from(ntasks).map_err(|_| cap("more than 2^32 tasks in one batch"))?,
                );
            }
        }
        let bits = if tiled {
            tile_bits
        } else {
            bits_for_bound(q.bound)
        };
        let words = if cpq {
            (words_for(n, bits) as u64).next_multiple_of(4)
        } else {
            0
        };
        let slots = if cpq { slots } else { 0 };
        let za = u32::try_from(zipper)
            .map_err(|_| cap("ZipperArrays of one batch exceed 2^32 entries"))?;
        let (bw, tb) = (bitmap_words, tables);
        meta.extend_from_slice(&[
            bw as u32,
            (bw >> 32) as u32,
            tb as u32,
            (tb >> 32) as u32,
            za,
            bits.trailing_zeros(),
            slots as u32,
            q.bound,
        ]);
        bitmap_words += words;
        tables += slots;
        zipper += u64::from(q.bound) + 2;
    }
    let nitems = (items.len() / 6) as u32;
    let (a_len, b_len, c_len, len);
    let tile_words = if params.gpu_wide_tiles {
        TILE_WORDS_WIDE
    } else {
        TILE_WORDS
    };
    if tiled {
        // segments A (keyword ranges), B (their starts), meta, C (dense lists, padded to at
        // least one record), D (their starts), written in place
        let (ranges, dense) = counts
            .iter()
            .fold((0usize, 0usize), |(a, b), &(r, _, d)| (a + r, b + d));
        let too_many = |what: &str| cap(&format!("more than 2^32 {what} in one batch"));
        u32::try_from(ranges).map_err(|_| too_many("keyword ranges"))?;
        u32::try_from(dense).map_err(|_| too_many("dense lists"))?;
        (a_len, b_len, c_len) = (4 * ranges, nq + 1, 2 * dense + 2);
        len = a_len + b_len + 8 * nq + c_len + nq + 1;
        if buf.len() < len {
            buf.resize(len, 0);
        }
        let (a, rest) = buf[..len].split_at_mut(a_len);
        let (b, rest) = rest.split_at_mut(b_len);
        let (m, rest) = rest.split_at_mut(8 * nq);
        let (c, d) = rest.split_at_mut(c_len);
        m.copy_from_slice(&meta);
        let (mut si, mut di) = (0u32, 0u32);
        for (q, &(i, _, dn)) in counts.iter().enumerate() {
            b[q] = si;
            d[q] = di;
            si += i as u32;
            di += dn as u32;
        }
        b[nq] = si;
        d[nq] = di;
        c[c_len - 2..].fill(0);
        let a_parts = cut(a, counts.iter().map(|&(r, _, _)| 4 * r));
        let c_parts = cut(&mut c[..c_len - 2], counts.iter().map(|&(_, _, dn)| 2 * dn));
        queries
            .par_iter()
            .zip(a_parts)
            .zip(c_parts)
            .for_each(|((q, ids), dense)| fill_lists(index, q, dense_of, ids, dense));
    } else {
        (a_len, b_len, c_len) = (items.len(), task_start.len(), 0);
        buf.clear();
        buf.extend_from_slice(&items);
        buf.extend_from_slice(&task_start);
        buf.extend_from_slice(&meta);
        len = buf.len();
    }
    Ok(Plan {
        nq,
        input: buf,
        len,
        a_len,
        b_len,
        c_len,
        tiled,
        tile_bits,
        tile_words,
        nitems,
        ntasks: ntasks as u32,
        bitmap_words,
        table_slots: tables,
        zipper,
        // (a batch too small to sweep needs none: a server's lone query reads no sample)
        postings: if tiled && nq >= SWEEP_MIN_QUERIES {
            sampled_postings(index, queries, dense_of)
        } else {
            0
        },
    })
}

fn cap(what: &str) -> GenieError {
    GenieError::Capacity(what.into())
}

/// The table of a query whose table filled. Thousands of threads may pass the Gate before AT
/// rises, all of one count, so a burst can need a slot per object it touches: the first rerun
/// grows the table 16-fold, the next takes two slots per posting the query scans, which no run
/// can fill (each insert adds at most one entry).
pub(super) fn grown_slots(
    index: &InvertedIndex,
    q: &PreparedQuery,
    slots: u64,
    attempt: usize,
) -> u64 {
    let worst: u64 = q
        .items
        .iter()
        .filter_map(|it| index.slice_of(it.lo, it.hi))
        .map(|(a, b)| b - a)
        .sum();
    let worst = (2 * worst).max(16).next_power_of_two();
    if attempt == 0 {
        (slots * 16).min(worst).max(slots)
    } else {
        worst.max(slots)
    }
}

/// The postings a query reads in a tile, on average, from which a sweep pays: the suite on an
/// H200 (1,024 queries) gained with sweeps on SIFT-like (230 K a tile: 35.3 -> 30.1 ms) and
/// Adult-x20-like (8.1 -> 7.9 ms) and lost on OCR-like (about 2 K: 7.0 -> 8.7 ms, a launch per
/// range costs more than so little work a range saves) and Tweets-like (14.0 -> 14.6 ms).
const SWEEP_POSTINGS: u64 = 20_000;

/// The fewest queries a sweeping batch has: a sweep's launch is one block a query, so a small
/// batch leaves most of the GPU idle at each of its launches. Measured on four H100s, SIFT-like
/// 4.5 M: one query at a time answered in 8.7 ms (p50 of the server's single client) with sweeps,
/// where one launch of a block a tile had answered in about 1 ms.
const SWEEP_MIN_QUERIES: usize = 512;

/// Tiles per launch of a sweep of the tiled count over `ntiles` tiles for `nq` queries (each
/// launch counts one range of tiles for every query, each list's cursor carried to the next);
/// `None`: one launch, each block sweeping a range of its own. Measured on the SIFT-like shape
/// (H200, 4.5 M objects, 138 tiles): 1,024 queries took 35.0 ms one way, 29.6 ms in sweeps of 4
/// tiles (1.18x); 8,192 queries 234 and 235-238 ms. Only batches whose queries read at least
/// [`SWEEP_POSTINGS`] a tile sweep. `forced` (the search's `gpu_sweep_tiles`), else
/// `GENIE_SWEEP_TILES=T`, sets T (0: no sweep).
pub(super) fn sweep_tiles(
    nq: usize,
    ntiles: u32,
    postings: u64,
    forced: Option<u32>,
) -> Option<u32> {
    // read once: the variable is a setting of the process, and this runs for every batch
    static SET: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let set = SET.get_or_init(|| {
        std::env::var("GENIE_SWEEP_TILES")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
    });
    if let Some(t) = forced.or(*set) {
        return (t > 0 && ntiles > 1).then_some(t.min(ntiles));
    }
    let per_tile = postings / (nq.max(1) as u64 * u64::from(ntiles.max(1)));
    let queries = (SWEEP_MIN_QUERIES..=4096).contains(&nq);
    (queries && ntiles >= 8 && per_tile >= SWEEP_POSTINGS).then_some(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_batches_cover_the_queries_in_order() {
        use super::PIPELINED_QUERIES as P;
        let cut = pipelined(&[0..2 * P, 2 * P..2 * P + 1, 2 * P + 1..5 * P + 4]);
        let lens: Vec<usize> = cut.iter().map(|r| r.len()).collect();
        // 3P + 3 queries: four batches, as equal as can be
        let q = 3 * P / 4;
        assert_eq!(lens, vec![P, P, 1, q + 1, q + 1, q + 1, q]);
        for w in cut.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert_eq!((cut[0].start, cut[6].end), (0, 5 * P + 4));
    }

    #[test]
    fn sampled_postings_are_exact_for_small_batches_and_scale_for_large() {
        use crate::{IndexBuilder, Query};
        // 1,000 objects of 4 attributes of 10 values each; attribute a's value of object o is
        // (o + a) % 10, so every list holds 100 postings
        let kw: Vec<u32> = (0..1000u32)
            .flat_map(|o| (0..4).map(move |a| a * 10 + (o + a) % 10))
            .collect();
        let index = IndexBuilder::from_fixed(kw, 4)
            .and_then(|b| b.keyword_space(40).build())
            .expect("test index");
        let exact = |qs: &[PreparedQuery]| -> u64 {
            qs.iter()
                .flat_map(|q| &q.items)
                .filter_map(|it| index.slice_of(it.lo, it.hi))
                .map(|(a, b)| b - a)
                .sum()
        };
        // a query of one keyword (100 postings), of a range of 3 (300) and of none in the space
        let shapes = [
            Query::from_keywords(&[5]),
            Query::new(vec![crate::Item::new(11, 13, 2).expect("item")]).expect("query"),
            Query::from_keywords(&[]),
        ];
        let small: Vec<Query> = (0..POSTINGS_SAMPLE)
            .map(|i| shapes[i % 3].clone())
            .collect();
        let small = index.prepare_all(&small).expect("prepared");
        assert_eq!(sampled_postings(&index, &small, &[]), exact(&small));
        // a dense keyword's postings are not the id lists'
        assert_eq!(
            sampled_postings(&index, &small, &[5]),
            exact(&small) - 100 * 11
        );
        // 3,200 queries: the sample takes every 100th, which cycles through the shapes alike
        let large: Vec<Query> = (0..3200).map(|i| shapes[i % 3].clone()).collect();
        let large = index.prepare_all(&large).expect("prepared");
        let (got, want) = (sampled_postings(&index, &large, &[]), exact(&large));
        assert!(
            got.abs_diff(want) * 10 < want,
            "sampled {got}, exact {want}"
        );
        assert_eq!(sampled_postings(&index, &[], &[]), 0);
    }

    #[test]
    fn only_batches_that_read_much_a_tile_sweep() {
        if std::env::var_os("GENIE_SWEEP_TILES").is_some() {
            eprintln!("skipped: GENIE_SWEEP_TILES is set, which overrides the rule");
            return;
        }
        // the SIFT-like shape: 1,024 queries of 237 lists of 67 K postings over 69 tiles
        let sift = 1024 * 237 * 67_000;
        assert_eq!(sweep_tiles(1024, 69, sift, None), Some(4));
        // too many queries, too few tiles, or too little a tile (OCR-like lists of 427 postings)
        assert_eq!(sweep_tiles(8192, 69, 8 * sift, None), None);
        assert_eq!(sweep_tiles(1024, 4, sift, None), None);
        assert_eq!(sweep_tiles(1024, 54, 1024 * 237 * 427, None), None);
        // too few queries to fill the GPU with a block each (a lone query of a server)
        assert_eq!(sweep_tiles(1, 69, sift / 1024, None), None);
        assert_eq!(sweep_tiles(511, 69, sift / 2, None), None);
        assert_eq!(sweep_tiles(512, 69, sift / 2, None), Some(4));
        // the threshold itself
        let at = SWEEP_POSTINGS * 600 * 10;
        assert_eq!(sweep_tiles(600, 10, at, None), Some(4));
        assert_eq!(sweep_tiles(600, 10, at - 1, None), None);
        // a search's own setting overrides the rule, whatever the batch
        assert_eq!(sweep_tiles(1, 69, 0, Some(3)), Some(3));
        assert_eq!(sweep_tiles(1024, 69, sift, Some(0)), None);
        assert_eq!(sweep_tiles(2, 5, 0, Some(8)), Some(5));
        assert_eq!(sweep_tiles(2, 1, 0, Some(8)), None);
    }
}
