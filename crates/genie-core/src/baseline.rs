//! The count-table baseline (the paper's SPQ, Fig. 13): a full count array per query, then a
//! k-selection in the contract order. Same results as the c-PQ; kept for comparisons and as a
//! second implementation in the tests.

use crate::cpq::PARALLEL_POSTINGS;
use crate::error::Result;
use crate::index::{InvertedIndex, Task};
use crate::model::{sort_and_cut, Hit};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Counts every object of one query in a full table, then selects the top-k.
pub fn run_query_count_table(index: &InvertedIndex, tasks: &[Task], k: u32) -> Result<Vec<Hit>> {
    if k == 0 || tasks.is_empty() {
        return Ok(Vec::new());
    }
    let counts: Vec<AtomicU32> = (0..index.num_objects())
        .map(|_| AtomicU32::new(0))
        .collect();
    let scan = |t: &Task| {
        for &id in &index.postings[t.start as usize..][..t.len as usize] {
            counts[id as usize].fetch_add(t.weight, Ordering::Relaxed);
        }
    };
    let total: u64 = tasks.iter().map(|t| u64::from(t.len)).sum();
    if total >= PARALLEL_POSTINGS && tasks.len() > 1 {
        tasks.par_iter().for_each(scan);
    } else {
        tasks.iter().for_each(scan);
    }
    let mut hits: Vec<Hit> = counts
        .into_iter()
        .enumerate()
        .filter_map(|(id, c)| {
            let count = c.into_inner();
            (count > 0).then_some(Hit {
                id: id as u32,
                count,
            })
        })
        .collect();
    sort_and_cut(&mut hits, k as usize);
    Ok(hits)
}
