//! Query cohorts on the CPU: tiled queries of a batch that share keyword lists are counted
//! together, each list's slice of a tile read and added once for the whole cohort.
//!
//! A cohort's counters are one 64-bit word an object, its members' counters side by side in the
//! word's lanes: 8 lanes of 8 bits where every member's count bound is at most 255, 4 lanes of 16
//! bits up to 65,535. A keyword list adds one word to each of its objects' words: the sum over the
//! members that hold the keyword of their weight shifted to their lane. A posting that m members
//! share thus takes one add where the members counted alone take m. A lane never carries into the
//! next, since each member's sum stays within its bound. When a tile is complete, each lane's
//! counts are offered to its member's top-k in the contract order, as [`super::cpu_tiles`] offers
//! a query's, so the answers are the same.
//!
//! [`plan`] forms a batch's cohorts: a seed (the query of most postings not yet placed) takes the
//! queries that share the most postings with it, found through the batch's keyword-to-query
//! table; the cohort stands only where the CPU's cost model ([`CpuCosts`]) finds it cheaper than
//! its members counted alone. Where queries share little (lists drawn independently, as
//! SIFT-like's), the plan finds no cohort and every query takes the one-query path.

use super::cpu::CpuCosts;
use super::cpu_tiles::{
    bitmap_runs, clear_denied, count_list, floor, into_hits, offer, prefetch, slice_of_objects,
    Best, DenseBits, AHEAD, SCAN,
};
use crate::index::{InvertedIndex, PreparedQuery};
use crate::mask::ObjectMask;
use crate::model::Hit;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::ops::Range;

/// A cohort of a batch: its members' places in the batch (at most `64 / bits`, ascending) and
/// the width of their lanes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cohort {
    /// The members, one a lane from lane 0.
    pub members: Vec<usize>,
    /// Bits a lane: 8 (every member's count bound at most 255) or 16 (at most 65,535).
    pub bits: u32,
}

impl Cohort {
    /// The lane width for a query of count bound `bound`: `None` where no lane holds it.
    pub fn bits_for(bound: u32) -> Option<u32> {
        match bound {
            0 => None,
            b if b <= u32::from(u8::MAX) => Some(8),
            b if b <= u32::from(u16::MAX) => Some(16),
            _ => None,
        }
    }
}

/// The cohorts of a batch, and what they save.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CohortPlan {
    /// The cohorts (each at least two queries); a query in none is counted alone.
    pub cohorts: Vec<Cohort>,
    /// Sparse postings the cohorts' members would read alone.
    pub postings_alone: u64,
    /// Sparse postings the cohorts read (each shared list once a cohort), as the plan's sample
    /// of the keywords estimates them.
    pub postings_together: u64,
}

/// Users of a keyword scanned when a seed looks for the queries sharing it: the plan's time
/// stays proportional to the batch's lists, not to the square of its queries.
const USERS_SCANNED: usize = 32;

/// Keywords a query the plan samples, about: Adult-x20-like's 1,414 keywords a query would
/// otherwise make the plan cost a fifth of the count.
const SAMPLED_KEYWORDS: u64 = 64;

/// Below this share of the plan's sampled keywords (a keyword for each query that reads it) in
/// keywords that two or more queries read, no cohort is looked for: a cohort pays only where its
/// members' lists are about half shared (OCR-like's lists are 94% one query's).
const MIN_SHARED: f64 = 0.5;

/// Seeds in a row that found no cohort worth its cost, after which the plan stops looking:
/// where the batch's sharing is spread thin (SIFT-like's lists are each read by about 15 of 1,024
/// queries, drawn independently) no seed finds one, and the plan then costs 16 seeds' look.
const FRUITLESS_SEEDS: usize = 16;

/// One candidate query's sparse postings (all of them), its sampled sparse keywords, its dense
/// lists (keyword, postings) and its lane width.
struct Sampled {
    postings: u64,
    keywords: Vec<u32>,
    dense: Vec<(u32, u64)>,
    bits: u32,
}

/// One candidate query's sampled sparse lists (by row of the batch's keyword table, and
/// postings), its sparse postings (all of them), its dense lists (keyword, postings) and its
/// lane width.
struct Lists {
    rows: Vec<(u32, u64)>,
    postings: u64,
    dense: Vec<(u32, u64)>,
    bits: u32,
}

/// Forms the cohorts of `batch`'s queries `candidates` (those the tiled count takes) on `index`
/// with its `dense` bitmaps, keeping each where `costs` finds it cheaper than its members alone.
/// `postings[q]`: the postings query `q` of the batch reads (its items' slices of the List
/// Array).
pub fn plan(
    index: &InvertedIndex,
    dense: &DenseBits,
    batch: &[PreparedQuery],
    candidates: &[usize],
    postings: &[u64],
    costs: &CpuCosts,
) -> CohortPlan {
    // a full cohort of 8 costs its word of lanes an object, whatever it shares: where the
    // candidates read too few postings for the objects to pay for it even if they shared all
    // of them (OCR-like's and Tweets-like's queries: 3% and 15% of the objects), no cohort can
    let n = u64::from(index.num_objects());
    let mean = candidates
        .iter()
        .map(|&q| postings.get(q).copied().unwrap_or(0))
        .sum::<u64>() as f64
        / candidates.len().max(1) as f64;
    if mean * costs.tiled_posting_ns
        < n as f64 * (costs.cohort_object_ns / 8.0 - costs.tiled_object_ns)
    {
        return CohortPlan::default();
    }
    let offsets = index.offsets();
    let space = index.keyword_space();
    let len = |kw: u32| offsets[kw as usize + 1] - offsets[kw as usize];
    let last = space.saturating_sub(1);
    // the candidates' keywords
    let spans: u64 = candidates
        .iter()
        .flat_map(|&q| &batch[q].items)
        .map(|item| u64::from(item.hi.min(last).saturating_sub(item.lo)) + 1)
        .sum();
    // the plan reads every keyword of the candidates (some of its steps on one thread): where
    // that costs more than a quarter of the count's time on the threads at hand, the cohorts
    // could not repay it (Adult-x20-like's 1,414 keywords a query on 16 cores)
    let work = candidates
        .iter()
        .map(|&q| postings.get(q).copied().unwrap_or(0))
        .sum::<u64>() as f64
        * costs.tiled_posting_ns
        / rayon::current_num_threads().max(1) as f64;
    if spans as f64 * costs.plan_keyword_ns > work / 4.0 {
        return CohortPlan::default();
    }
    // the plan looks at a sample of the keywords, the same for every query (those whose hash has
    // its low bits clear), about SAMPLED_KEYWORDS a query: two queries share a sampled keyword
    // exactly when they share it, so the shares it finds stand for the whole lists'. A power of
    // two, so that the test is a mask
    let per_query = spans / (candidates.len() as u64 * SAMPLED_KEYWORDS).max(1);
    let rate_mask = if per_query <= 1 {
        0
    } else {
        (1u32 << per_query.ilog2().min(31)) - 1
    };
    let sampled = |kw: u32| crate::cpq::hash_id(kw) & rate_mask == 0;
    // first the sample's keywords alone (no list read yet): where few of them are in two
    // queries or more, no cohort can pay, and the plan ends having read no list's length
    let sample: Vec<Option<Vec<u32>>> = candidates
        .par_iter()
        .map(|&q| {
            let query = &batch[q];
            Cohort::bits_for(query.bound)?;
            Some(
                query
                    .items
                    .iter()
                    .flat_map(|item| item.lo..=item.hi.min(last))
                    .filter(|&kw| sampled(kw) && !dense.has(kw))
                    .collect(),
            )
        })
        .collect();
    if !sample_shares(&sample) {
        return CohortPlan::default();
    }
    // each candidate's postings, its sampled sparse keywords, its dense lists (keyword,
    // postings) and its lane width
    let keywords: Vec<Option<Sampled>> = candidates
        .par_iter()
        .zip(sample)
        .map(|(&q, sparse)| {
            let sparse = sparse?;
            let query = &batch[q];
            let bits = Cohort::bits_for(query.bound)?;
            let bound = if bits == 8 { 255 } else { 65_535 };
            // the sparse postings: all of the query's but its dense lists'
            let mut dense_lens = Vec::new();
            for item in &query.items {
                for kw in item.lo..=item.hi.min(last) {
                    if dense.by_bitmap(kw, offsets, bound).is_some() {
                        dense_lens.push((kw, len(kw)));
                    }
                }
            }
            let sparse_postings = postings
                .get(q)
                .copied()
                .unwrap_or(0)
                .saturating_sub(dense_lens.iter().map(|&(_, l)| l).sum());
            dense_lens.sort_unstable();
            dense_lens.dedup();
            Some(Sampled {
                postings: sparse_postings,
                keywords: sparse,
                dense: dense_lens,
                bits,
            })
        })
        .collect();
    let entries: usize = keywords.iter().flatten().map(|k| k.keywords.len()).sum();
    if entries < 2 {
        return CohortPlan::default();
    }
    // the batch's table of sampled keywords: a row a keyword, and the candidates that read it.
    // Where the keyword space is small beside the sample, a keyword is its own row; else the
    // rows are the sample's distinct keywords
    let distinct: Option<Vec<u32>> = (space as usize > 8 * entries).then(|| {
        let mut v: Vec<u32> = keywords
            .iter()
            .flatten()
            .flat_map(|k| k.keywords.iter().copied())
            .collect();
        v.par_sort_unstable();
        v.dedup();
        v
    });
    let rows = distinct.as_ref().map_or(space as usize, Vec::len);
    let keyword_of = |row: usize| distinct.as_ref().map_or(row as u32, |d| d[row]);
    let lists: Vec<Option<Lists>> = keywords
        .into_par_iter()
        .map(|k| {
            let Sampled {
                postings,
                keywords,
                dense,
                bits,
            } = k?;
            let rows: Vec<(u32, u64)> = keywords
                .iter()
                .map(|&kw| {
                    // every sampled keyword is among the distinct ones
                    let row = distinct
                        .as_ref()
                        .map_or(kw, |d| d.partition_point(|&r| r < kw) as u32);
                    (row, len(kw))
                })
                .collect();
            Some(Lists {
                rows,
                postings,
                dense,
                bits,
            })
        })
        .collect();
    // the rows' users by a counting sort
    let mut row_start = vec![0u32; rows + 1];
    for l in lists.iter().flatten() {
        for &(row, _) in &l.rows {
            row_start[row as usize + 1] += 1;
        }
    }
    for r in 0..rows {
        row_start[r + 1] += row_start[r];
    }
    let mut fill = row_start.clone();
    let mut users = vec![0u32; entries];
    for (c, l) in lists.iter().enumerate() {
        for &(row, _) in l.iter().flat_map(|l| &l.rows) {
            users[fill[row as usize] as usize] = c as u32;
            fill[row as usize] += 1;
        }
    }
    drop(fill);
    let total: u64 = lists
        .iter()
        .flatten()
        .flat_map(|l| &l.rows)
        .map(|&(_, l)| l)
        .sum();
    let shared: u64 = (0..rows)
        .filter(|&r| row_start[r + 1] - row_start[r] > 1)
        .map(|r| len(keyword_of(r)) * u64::from(row_start[r + 1] - row_start[r]))
        .sum();
    if (shared as f64) < MIN_SHARED * total as f64 {
        return CohortPlan::default();
    }
    group(&lists, &row_start, &users, n, costs, candidates)
}

/// Whether the plan's keyword sample (a candidate's sampled keywords, or `None`) has at least
/// [`MIN_SHARED`] of its entries in keywords that another entry shares (a sketch: a bitmap of
/// hashed keywords, whose collisions count a few entries as shared that are not).
fn sample_shares(sample: &[Option<Vec<u32>>]) -> bool {
    let entries: usize = sample.iter().flatten().map(Vec::len).sum();
    if entries < 2 {
        return false;
    }
    // 16 bits an entry: about 6% of the entries collide
    let bits = (entries * 16).next_power_of_two();
    let mut seen = vec![0u64; bits.div_ceil(64)];
    let mut again = 0usize;
    for &kw in sample.iter().flatten().flatten() {
        let h = crate::cpq::hash_id(kw ^ 0x9E37_79B9) as usize & (bits - 1);
        let (w, b) = (h / 64, 1u64 << (h % 64));
        if seen[w] & b != 0 {
            again += 1;
        } else {
            seen[w] |= b;
        }
    }
    // an entry seen again and the one it repeats are both shared
    (2 * again) as f64 >= MIN_SHARED * entries as f64
}

/// The greedy grouping of [`plan`] over the candidates' `lists` (indexed as `candidates`) and the
/// keyword table (`row_start`, `users`).
fn group(
    lists: &[Option<Lists>],
    row_start: &[u32],
    users: &[u32],
    n: u64,
    costs: &CpuCosts,
    candidates: &[usize],
) -> CohortPlan {
    let m = lists.len();
    let mut order: Vec<usize> = (0..m).filter(|&c| lists[c].is_some()).collect();
    order.sort_by_key(|&c| Reverse(lists[c].as_ref().map_or(0, |l| l.postings)));
    let mut placed = vec![false; m];
    let mut score = vec![0u64; m];
    let mut touched: Vec<usize> = Vec::new();
    // the cohort that last counted each row (0: none yet)
    let mut stamp = vec![0u32; row_start.len().saturating_sub(1)];
    let mut attempts = 0u32;
    let mut fruitless = 0;
    let mut plan = CohortPlan::default();
    for (seed_no, &a) in order.iter().enumerate() {
        let Some(la) = lists[a].as_ref() else {
            continue;
        };
        if placed[a] {
            continue;
        }
        if fruitless == FRUITLESS_SEEDS {
            break;
        }
        placed[a] = true;
        fruitless += 1;
        let lanes = (64 / la.bits) as usize;
        // the queries that read the seed's sampled lists
        for &(row, l) in &la.rows {
            let us = &users[row_start[row as usize] as usize..row_start[row as usize + 1] as usize];
            // a rotating start, so that the queries late in the batch are seen too
            let from = seed_no % us.len();
            let mut seen = 0;
            for &b in us[from..].iter().chain(&us[..from]) {
                let b = b as usize;
                if placed[b] || lists[b].as_ref().is_none_or(|lb| lb.bits != la.bits) {
                    continue;
                }
                if score[b] == 0 {
                    touched.push(b);
                }
                score[b] += l;
                seen += 1;
                if seen == USERS_SCANNED {
                    break;
                }
            }
        }
        let take = (lanes - 1).min(touched.len());
        if take > 0 && take < touched.len() {
            touched.select_nth_unstable_by_key(take - 1, |&b| Reverse((score[b], Reverse(b))));
        }
        let mut members: Vec<usize> = vec![a];
        members.extend(&touched[..take]);
        for &b in &touched {
            score[b] = 0;
        }
        touched.clear();
        if members.len() < 2 {
            continue;
        }
        // the cohort's reads: the share of its members' sampled postings that each sampled row
        // read once leaves, of all their postings
        attempts += 1;
        let id = attempts;
        let (mut sample_together, mut sample_alone, mut alone, mut dense_alone) =
            (0u64, 0u64, 0, 0);
        let mut dense_lists: Vec<(u32, u64)> = Vec::new();
        for &c in &members {
            let lc = lists[c].as_ref().expect("a member has lists");
            alone += lc.postings;
            for &(row, l) in &lc.rows {
                sample_alone += l;
                if stamp[row as usize] != id {
                    stamp[row as usize] = id;
                    sample_together += l;
                }
            }
            // a dense list alone: a word of counters at a time; together: an add a posting
            dense_alone += lc.dense.len() as u64 * n * u64::from(la.bits) / 64;
            dense_lists.extend(&lc.dense);
        }
        let together = if sample_alone == 0 {
            alone
        } else {
            (alone as f64 * sample_together as f64 / sample_alone as f64) as u64
        };
        dense_lists.sort_unstable();
        dense_lists.dedup();
        let dense_together: u64 = dense_lists.iter().map(|&(_, l)| l).sum();
        let alone_ns = costs.tiled_posting_ns * (alone + dense_alone) as f64
            + costs.tiled_object_ns * (n * members.len() as u64) as f64;
        let together_ns = costs.cohort_posting_ns * (together + dense_together) as f64
            + costs.cohort_object_ns * n as f64;
        if together_ns >= alone_ns {
            // the cohort does not pay: the seed alone, the others free for later seeds
            continue;
        }
        fruitless = 0;
        for &c in &members {
            placed[c] = true;
        }
        let mut members: Vec<usize> = members.iter().map(|&c| candidates[c]).collect();
        members.sort_unstable();
        plan.cohorts.push(Cohort {
            members,
            bits: la.bits,
        });
        plan.postings_alone += alone;
        plan.postings_together += together;
    }
    plan
}

/// Per-thread buffers of the cohort count, reused from cohort to cohort.
#[derive(Debug, Default)]
pub struct CohortScratch {
    /// Bytes of counters per tile (0: [`cohort_tile_bytes`]).
    tile_bytes: usize,
    words: Vec<u64>,
    /// Per keyword (or dense bitmap) of the cohort: the word its postings add.
    adds: Vec<(u32, u64)>,
    dense_adds: Vec<(usize, u64)>,
    /// Per sparse list: its next posting, its end and its word.
    lists: Vec<(usize, usize, u64)>,
}

impl CohortScratch {
    /// Buffers for tiles of `tile_bytes` of counters (0: [`cohort_tile_bytes`]).
    pub fn with_tile_bytes(tile_bytes: usize) -> Self {
        Self {
            tile_bytes,
            ..Self::default()
        }
    }
}

/// Bytes of a cohort's counters per tile on this host: the one-query tile's
/// ([`super::cpu_tiles::host_tile_bytes`]) times [`COHORT_TILE_FACTOR`].
pub fn cohort_tile_bytes() -> usize {
    super::cpu_tiles::host_tile_bytes() * COHORT_TILE_FACTOR
}

/// A cohort's tile against a query's: a tile of 64-bit words holds an eighth of the objects of a
/// tile of bytes of the same size, so each list's slice of it is shorter; a larger tile keeps the
/// slices long (the words are still in the core's L2).
pub const COHORT_TILE_FACTOR: usize = 2;

/// The top-`k` hits of each member of `cohort` (of `batch`) among `objects`, counting only the
/// objects `mask` allows: the answers [`super::cpu_tiles::tiled_query`] gives each member alone.
#[allow(clippy::too_many_arguments)]
pub fn cohort_query(
    index: &InvertedIndex,
    dense: &DenseBits,
    batch: &[PreparedQuery],
    cohort: &Cohort,
    k: u32,
    objects: Range<u32>,
    mask: Option<&ObjectMask>,
    scratch: &mut CohortScratch,
) -> Vec<Vec<Hit>> {
    let members = cohort.members.len();
    let n = index.num_objects();
    let objects = objects.start..objects.end.min(n);
    if k == 0 || objects.is_empty() || mask.is_some_and(|m| m.count() == 0) {
        return vec![Vec::new(); members];
    }
    let offsets = index.offsets();
    let postings = index.postings();
    let space = index.keyword_space();
    let bound = if cohort.bits == 8 { 255 } else { 65_535 };
    scratch.adds.clear();
    scratch.dense_adds.clear();
    for (lane, &q) in cohort.members.iter().enumerate() {
        let shift = cohort.bits * lane as u32;
        for item in &batch[q].items {
            let add = u64::from(item.weight) << shift;
            for kw in item.lo..=item.hi.min(space.saturating_sub(1)) {
                match dense.by_bitmap(kw, offsets, bound) {
                    Some(slot) => scratch.dense_adds.push((slot, add)),
                    None => scratch.adds.push((kw, add)),
                }
            }
        }
    }
    // each keyword once, its members' weights in one word (the lanes never carry)
    scratch.adds.sort_unstable_by_key(|&(kw, _)| kw);
    scratch.dense_adds.sort_unstable_by_key(|&(slot, _)| slot);
    merge_adds(&mut scratch.adds);
    merge_adds(&mut scratch.dense_adds);
    scratch.lists.clear();
    for &(kw, add) in &scratch.adds {
        let (a, b) = slice_of_objects(postings, offsets, kw, &objects, n);
        if a < b {
            scratch.lists.push((a, b, add));
        }
    }
    let bytes = if scratch.tile_bytes == 0 {
        cohort_tile_bytes()
    } else {
        scratch.tile_bytes
    };
    let tile = (bytes / 8).max(SCAN) as u32;
    let words = &mut scratch.words;
    words.clear();
    words.resize(tile.min(objects.len() as u32) as usize, 0);
    let mut best: Vec<Best> = (0..members)
        .map(|_| Best::with_capacity(k as usize + 1))
        .collect();
    let live = mask.map(ObjectMask::words);
    let mut tile_start = objects.start;
    while tile_start < objects.end {
        let tile_end = tile_start.saturating_add(tile).min(objects.end);
        let words = &mut words[..(tile_end - tile_start) as usize];
        for &(slot, add) in &scratch.dense_adds {
            add_bitmap(dense.bitmap(slot), tile_start, add, words);
        }
        let lists = &mut scratch.lists;
        for j in 0..lists.len() {
            if let Some(&(ahead, ahead_end, _)) = lists.get(j + AHEAD) {
                prefetch(&postings[ahead..ahead_end]);
            }
            let (next, end, add) = &mut lists[j];
            *next += count_list(&postings[*next..*end], tile_start, tile_end, *add, words);
        }
        if let Some(live) = live {
            clear_denied(words, tile_start, live);
        }
        if cohort.bits == 8 {
            offer_lanes::<8>(words, tile_start, k, &mut best);
        } else {
            offer_lanes::<16>(words, tile_start, k, &mut best);
        }
        tile_start = tile_end;
    }
    best.into_iter().map(into_hits).collect()
}

/// Sums the words of equal keys in `adds` (sorted by key) into one entry.
fn merge_adds<K: PartialEq + Copy>(adds: &mut Vec<(K, u64)>) {
    adds.dedup_by(|next, kept| {
        if next.0 == kept.0 {
            kept.1 = kept.1.wrapping_add(next.1);
            true
        } else {
            false
        }
    });
}

/// Adds `add` to `words[i]` for each object `tile_start + i` set in `bitmap`, a set bit at a time
/// (a branch-free pass over a word's 64 objects was slower on Tweets-like's lists, of a quarter
/// of the objects and less).
#[inline(always)]
fn add_bitmap(bitmap: &[u64], tile_start: u32, add: u64, words: &mut [u64]) {
    bitmap_runs(bitmap, tile_start, words.len(), |i, _, mut bits| {
        while bits != 0 {
            let w = &mut words[i + bits.trailing_zeros() as usize];
            *w = w.wrapping_add(add);
            bits &= bits - 1;
        }
    });
}

/// Offers each lane's counts of a tile (lane j to `best[j]`, lanes of `BITS` bits) and clears
/// the tile. Each run of [`SCAN`] words first takes the lanes' floors (the worst count each lane
/// keeps, once it keeps `k`); a word is looked at lane by lane only where some lane passes its
/// floor (a compare of all lanes at once, which vectorizes). Tiles come in id order, so a later
/// object equal to the worst kept loses the tie.
fn offer_lanes<const BITS: u32>(words: &mut [u64], tile_start: u32, k: u32, best: &mut [Best]) {
    let field = (1u64 << BITS) - 1;
    let mut base = tile_start;
    for run in words.chunks_mut(SCAN) {
        // the count a lane's object needs to enter: past its floor (a lane of no member or
        // of a full floor: the top value, never passed by a count within the bound but by the
        // lane's recheck below)
        let mut need = [field; 8];
        for (j, best) in best.iter().enumerate() {
            need[j] = (u64::from(floor(best, k)) + 1).min(field);
        }
        let need = need_word::<BITS>(&need);
        for (pair, ws) in run.chunks(2).enumerate() {
            if !any_passing::<BITS>(ws, need) {
                continue;
            }
            for (h, &w) in ws.iter().enumerate() {
                let id = base + (2 * pair + h) as u32;
                for (j, best) in best.iter_mut().enumerate() {
                    let count = ((w >> (BITS * j as u32)) & field) as u32;
                    if count != 0 {
                        offer(best, k, count, id);
                    }
                }
            }
        }
        run.fill(0);
        base += run.len() as u32;
    }
}

/// The lanes' needs in one word.
#[inline(always)]
fn need_word<const BITS: u32>(need: &[u64; 8]) -> u64 {
    need.iter()
        .take((64 / BITS) as usize)
        .enumerate()
        .fold(0, |acc, (j, &n)| acc | n << (BITS * j as u32))
}

/// Whether a lane of the words `ws` (one or two) is at or above its need in `need` (a word of
/// lanes): a saturating subtract of the two words at once, zero in a lane exactly where it
/// passes (SSE2, on every x86-64).
#[inline(always)]
fn any_passing<const BITS: u32>(ws: &[u64], need: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let lo = ws[0];
        let hi = ws.get(1).copied().unwrap_or(0);
        // SAFETY: SSE2 is part of the x86-64 baseline; the operations only read their arguments
        unsafe {
            let v = _mm_set_epi64x(hi as i64, lo as i64);
            // the second word's needs only where it exists (an absent word of zeros: none pass)
            let n_hi = if ws.len() == 2 { need } else { u64::MAX };
            let n = _mm_set_epi64x(n_hi as i64, need as i64);
            let short = if BITS == 8 {
                _mm_cmpeq_epi8(_mm_subs_epu8(n, v), _mm_setzero_si128())
            } else {
                _mm_cmpeq_epi16(_mm_subs_epu16(n, v), _mm_setzero_si128())
            };
            _mm_movemask_epi8(short) != 0
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let field = (1u64 << BITS) - 1;
        ws.iter().any(|&w| {
            (0..64 / BITS).any(|j| (w >> (BITS * j)) & field >= (need >> (BITS * j)) & field)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu_tiles::{merge_top_k, test_support};
    use crate::{IndexBuilder, Item, Query};
    use proptest::prelude::*;

    /// `n` objects (ids spread over many tiles, empty objects between) of up to 4 keywords of
    /// 0..64 from `seed`, and a few keywords held by about half of them (dense lists).
    fn objects(n: u32, seed: u64) -> Vec<Vec<u32>> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let spread = n / 3000 + 1;
        (0..n)
            .map(|o| {
                if o % spread != 0 {
                    return Vec::new();
                }
                let mut kws: Vec<u32> = (0..next() % 5).map(|_| (next() % 64) as u32).collect();
                if next() % 2 == 0 {
                    kws.push(64 + (next() % 3) as u32);
                }
                kws
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// Each member's top-k from a cohort is the oracle's: every lane width, cohorts of one to
        /// a full word of lanes, shared and repeated keywords, dense lists by bitmap or not,
        /// tiles of every size, masks, and the objects cut into parts.
        #[test]
        fn a_cohorts_members_get_the_oracles_top_k(
            n in 1u32..150_000,
            seed in 0u64..1000,
            k in 0u32..30,
            queries in prop::collection::vec(
                prop::collection::vec((0u32..67, 0u32..3, 1u32..4), 0..6), 1..9),
            wide in any::<bool>(),
            tile_size in 0usize..3,
            dense_min in 0usize..3,
            mask_kind in 0usize..5,
            cuts in prop::collection::vec(0u32..150_000, 0..3),
        ) {
            let all = objects(n, seed);
            let mut b = IndexBuilder::new();
            for o in &all {
                b.push_object(o).expect("object");
            }
            let index = b.build().expect("index");
            // 16-bit lanes: weights that lift the bounds past 255 (4 lanes a word)
            let (bits, scale, lanes) = if wide { (16, 100, 4) } else { (8, 1, 8) };
            let qs: Vec<Query> = queries
                .iter()
                .take(lanes)
                .map(|items| Query {
                    items: items
                        .iter()
                        .map(|&(lo, span, w)| Item::new(lo, lo + span, w * scale).expect("item"))
                        .collect(),
                })
                .collect();
            let batch: Vec<PreparedQuery> =
                qs.iter().map(|q| index.prepare(q).expect("prepared")).collect();
            prop_assume!(batch.iter().all(|q| q.bound <= if wide { 65_535 } else { 255 }));
            let cohort = Cohort { members: (0..batch.len()).collect(), bits };
            let dense = test_support::dense_variant(&index, dense_min);
            let mask = test_support::mask_variant(n, seed, mask_kind);
            let mask = mask.as_ref();
            let want = match mask {
                Some(m) => crate::oracle::top_k_masked(&all, &qs, k as usize, m),
                None => crate::oracle::top_k(&all, &qs, k as usize),
            };
            let mut scratch = CohortScratch::with_tile_bytes([0, 1024, 40_000][tile_size]);
            let got = cohort_query(&index, &dense, &batch, &cohort, k, 0..n, mask, &mut scratch);
            prop_assert_eq!(&got, &want);
            let mut bounds: Vec<u32> = cuts.iter().map(|c| c % (n + 1)).collect();
            bounds.extend([0, n]);
            bounds.sort_unstable();
            let parts: Vec<Vec<Vec<Hit>>> = bounds
                .windows(2)
                .map(|w| {
                    cohort_query(&index, &dense, &batch, &cohort, k, w[0]..w[1], mask, &mut scratch)
                })
                .collect();
            for (lane, want) in want.iter().enumerate() {
                let merged = merge_top_k(parts.iter().map(|p| p[lane].clone()), k);
                prop_assert_eq!(&merged, want);
            }
        }
    }

    /// Queries that share most of their lists form cohorts, each within a word's lanes and
    /// each query in one at most; queries of lists of their own form none.
    #[test]
    fn the_plan_groups_queries_that_share_lists() {
        // 60,000 objects of 12 keywords of 0..64 each: lists of about 11,000 postings
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut b = IndexBuilder::new();
        for _ in 0..60_000 {
            let kws: Vec<u32> = (0..12)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 64) as u32
                })
                .collect();
            b.push_object(&kws).expect("object");
        }
        let index = b.build().expect("index");
        let dense = DenseBits::build(&index, u64::MAX);
        let costs = CpuCosts::default();
        // 20 queries of 40 keywords each: the same 36 and 4 of their own (with ranges)
        let shared: Vec<Item> = vec![Item::new(0, 35, 1).expect("item")];
        let batch: Vec<PreparedQuery> = (0..20u32)
            .map(|q| {
                let mut items = shared.clone();
                items.push(Item::new(36 + q, 36 + q, 2).expect("item"));
                index.prepare(&Query { items }).expect("prepared")
            })
            .collect();
        let candidates: Vec<usize> = (0..batch.len()).collect();
        let postings_of = |b: &[PreparedQuery]| -> Vec<u64> {
            b.iter()
                .map(|q| {
                    q.items
                        .iter()
                        .filter_map(|i| index.slice_of(i.lo, i.hi))
                        .map(|(a, b)| b - a)
                        .sum()
                })
                .collect()
        };
        let p = plan(
            &index,
            &dense,
            &batch,
            &candidates,
            &postings_of(&batch),
            &costs,
        );
        assert!(!p.cohorts.is_empty(), "{p:?}");
        assert!(p.postings_together * 3 < p.postings_alone, "{p:?}");
        let mut seen = vec![false; batch.len()];
        for c in &p.cohorts {
            assert_eq!(c.bits, 8);
            assert!((2..=8).contains(&c.members.len()), "{c:?}");
            for &q in &c.members {
                assert!(!seen[q], "query {q} in two cohorts");
                seen[q] = true;
            }
        }
        assert!(seen.iter().filter(|&&s| s).count() >= 16, "{p:?}");
        // lists of their own: nothing shared, no cohort
        let alone: Vec<PreparedQuery> = (0..20u32)
            .map(|q| {
                let items = vec![Item::new(3 * q, 3 * q + 2, 1).expect("item")];
                index.prepare(&Query { items }).expect("prepared")
            })
            .collect();
        let p = plan(
            &index,
            &dense,
            &alone,
            &candidates,
            &postings_of(&alone),
            &costs,
        );
        assert_eq!(p, CohortPlan::default());
        // a count bound past 16 bits takes no lane
        assert_eq!(Cohort::bits_for(70_000), None);
        assert_eq!(Cohort::bits_for(0), None);
        assert_eq!(Cohort::bits_for(255), Some(8));
        assert_eq!(Cohort::bits_for(256), Some(16));
    }
}
