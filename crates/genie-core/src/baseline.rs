//! The count-table baseline (the paper's SPQ, Fig. 13): a full count array per query, then a
//! k-selection in the contract order. Same results as the c-PQ; kept for comparisons and as a
//! second implementation in the tests.

use crate::cpq::PARALLEL_POSTINGS;
use crate::error::Result;
use crate::index::{InvertedIndex, Task};
use crate::mask::{allowed, ObjectMask};
use crate::model::{sort_and_cut, Hit};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Counts every object of one query in a full table, then selects the top-k. With a `mask` (of
/// the index's length), only the objects it allows are counted.
pub fn run_query_count_table(
    index: &InvertedIndex,
    tasks: &[Task],
    k: u32,
    mask: Option<&ObjectMask>,
) -> Result<Vec<Hit>> {
    if k == 0 || tasks.is_empty() {
        return Ok(Vec::new());
    }
    let counts: Vec<AtomicU32> = (0..index.num_objects())
        .map(|_| AtomicU32::new(0))
        .collect();
    let scan = |t: &Task| {
        let postings = &index.postings[t.start as usize..][..t.len as usize];
        let add = |&id: &u32| {
            counts[id as usize].fetch_add(t.weight, Ordering::Relaxed);
        };
        match mask {
            None => postings.iter().for_each(add),
            Some(m) => postings
                .iter()
                .filter(|&&id| allowed(m.words(), id))
                .for_each(add),
        }
    };
    let total: u64 = tasks.iter().map(|t| u64::from(t.len)).sum();
    if total >= PARALLEL_POSTINGS && tasks.len() > 1 {
        tasks.par_iter().for_each(scan);
    } else {
        tasks.iter().for_each(scan);
    }
    let counts: Vec<u32> = counts.into_iter().map(AtomicU32::into_inner).collect();
    let most = counts.iter().copied().max().unwrap_or(0);
    if k as usize >= BUCKET_K && most as usize <= BUCKET_COUNTS {
        return Ok(by_buckets(&counts, most, k as usize));
    }
    let mut hits: Vec<Hit> = counts
        .into_iter()
        .enumerate()
        .filter_map(|(id, count)| {
            (count > 0).then_some(Hit {
                id: id as u32,
                count,
            })
        })
        .collect();
    sort_and_cut(&mut hits, k as usize);
    Ok(hits)
}

/// From this k on, a count table of small counts is ordered by buckets.
const BUCKET_K: usize = 1024;
/// The most count ordered by buckets.
const BUCKET_COUNTS: usize = 1 << 16;

/// The top-`k` of a count table in the contract order by a counting sort: objects bucketed by
/// count, highest first, each bucket in id order. The order [`sort_and_cut`] gives (count
/// descending, then id), in time linear in the objects, for outputs large enough that a
/// comparison sort dominates (the exhaustive pass of a sequence search asks for every object).
fn by_buckets(counts: &[u32], most: u32, k: usize) -> Vec<Hit> {
    // starts[c]: where objects of count c begin, highest count first
    let mut starts = vec![0usize; most as usize + 2];
    for &c in counts.iter().filter(|&&c| c > 0) {
        starts[c as usize] += 1;
    }
    let mut at = 0;
    for c in (1..=most as usize).rev() {
        let n = starts[c];
        starts[c] = at;
        at += n;
    }
    let mut hits = vec![Hit { id: 0, count: 0 }; at];
    for (id, &count) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
        let slot = &mut starts[count as usize];
        hits[*slot] = Hit {
            id: id as u32,
            count,
        };
        *slot += 1;
    }
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Buckets give sort_and_cut's order, for every k.
        #[test]
        fn buckets_order_as_the_sort(counts in prop::collection::vec(0u32..40, 0..400), k in 0usize..500) {
            let most = counts.iter().copied().max().unwrap_or(0);
            let mut want: Vec<Hit> = counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(id, &count)| Hit { id: id as u32, count })
                .collect();
            sort_and_cut(&mut want, k);
            prop_assert_eq!(by_buckets(&counts, most, k), want);
        }
    }
}
