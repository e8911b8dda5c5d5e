//! A brute-force reference, straight from Definition 2.1 (with weights): for tests and benchmarks.
//! It reads the objects, not the index, so it checks the index too.

use crate::mask::ObjectMask;
use crate::model::{sort_and_cut, Hit, Query};

/// The match count of `query` with one object (a set of keywords, duplicates ignored).
pub fn match_count(query: &Query, object: &[u32]) -> u64 {
    let mut obj = object.to_vec();
    obj.sort_unstable();
    obj.dedup();
    query
        .items
        .iter()
        .map(|it| {
            let inside = obj.partition_point(|&k| k <= it.hi) - obj.partition_point(|&k| k < it.lo);
            u64::from(it.weight) * inside as u64
        })
        .sum()
}

/// Per query, the top-k by match count in the contract order.
pub fn top_k(objects: &[Vec<u32>], queries: &[Query], k: usize) -> Vec<Vec<Hit>> {
    queries
        .iter()
        .map(|q| {
            let mut hits: Vec<Hit> = objects
                .iter()
                .enumerate()
                .filter_map(|(id, o)| {
                    let c = match_count(q, o);
                    (c > 0).then_some(Hit {
                        id: id as u32,
                        count: c as u32,
                    })
                })
                .collect();
            sort_and_cut(&mut hits, k);
            hits
        })
        .collect()
}

/// Per query, the top-k of the objects `mask` allows, by match count in the contract order: the
/// answers of a search with that mask.
pub fn top_k_masked(
    objects: &[Vec<u32>],
    queries: &[Query],
    k: usize,
    mask: &ObjectMask,
) -> Vec<Vec<Hit>> {
    let allowed: Vec<Vec<u32>> = objects
        .iter()
        .enumerate()
        .map(|(id, o)| {
            if mask.contains(id as u32) {
                o.clone()
            } else {
                Vec::new()
            }
        })
        .collect();
    top_k(&allowed, queries, k)
}
