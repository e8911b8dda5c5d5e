//! Query preparation against one index: items clipped to the keyword space, the per-query count
//! bound (DESIGN.md section 1), and the work list of (query, sublist) tasks that the CPU and GPU
//! backends both consume.

use super::{InvertedIndex, Sublists};
use crate::error::{GenieError, Result};
use crate::model::{Item, Query};

/// The largest per-query count bound accepted (the Gate's ZipperArray has bound + 2 entries).
pub const MAX_COUNT_BOUND: u32 = 1 << 24;

/// A query made ready for one index: clipped items and the largest count it can produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedQuery {
    /// Items clipped to the keyword space; items wholly outside are dropped.
    pub items: Vec<Item>,
    /// The largest match count any object can reach (0 for a query that matches nothing).
    pub bound: u32,
}

/// One unit of work: a sublist of the List Array scanned for one query item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    /// Index of the query in its batch.
    pub query: u32,
    /// The item's weight.
    pub weight: u32,
    /// First posting of the sublist.
    pub start: u64,
    /// Number of postings (at most the sublist length L).
    pub len: u32,
}

/// The tasks of a batch of queries.
#[derive(Clone, Debug, Default)]
pub struct WorkList {
    /// All tasks, grouped by query in batch order.
    pub tasks: Vec<Task>,
    /// `tasks[query_starts[q]..query_starts[q + 1]]` are query q's tasks.
    pub query_starts: Vec<usize>,
}

impl WorkList {
    /// Total postings the batch scans.
    pub fn postings(&self) -> u64 {
        self.tasks.iter().map(|t| u64::from(t.len)).sum()
    }

    /// Query q's tasks.
    pub fn of_query(&self, q: usize) -> &[Task] {
        &self.tasks[self.query_starts[q]..self.query_starts[q + 1]]
    }
}

impl InvertedIndex {
    /// The largest number of keywords one object can have in `[lo, hi]` (clipped).
    fn range_multiplicity(&self, lo: u32, hi: u32) -> u64 {
        let width = u64::from(hi - lo) + 1;
        let block = |kw: u32| {
            self.block_starts
                .partition_point(|&s| s <= kw)
                .saturating_sub(1)
        };
        let first = block(lo);
        // (a plain keyword, the usual item, is one block: one search)
        let last = if hi == lo { first } else { block(hi) };
        let blocks: u64 = self.block_max[first..=last]
            .iter()
            .map(|&m| u64::from(m))
            .sum();
        width.min(blocks).min(u64::from(self.max_object_len))
    }

    /// Validates a query, clips it to the keyword space and computes its count bound.
    pub fn prepare(&self, query: &Query) -> Result<PreparedQuery> {
        let mut items = Vec::with_capacity(query.items.len());
        let bound = self.clip(query, |item| items.push(item))?;
        Ok(PreparedQuery { items, bound })
    }

    /// What [`InvertedIndex::prepare`] checks of a query, without making the prepared query:
    /// the error it would return, else the count bound. A front end checks each query so as it
    /// reads it (a bad query fails alone) and the search prepares it again, so the check keeps
    /// nothing (65,536 queries of 237 keywords: 170 MB less to allocate and fill).
    pub fn check(&self, query: &Query) -> Result<u32> {
        self.clip(query, |_| {})
    }

    /// Validates `query`'s items, hands each one that can match, clipped to the keyword space,
    /// to `keep`, and returns the count bound.
    fn clip(&self, query: &Query, mut keep: impl FnMut(Item)) -> Result<u32> {
        let mut bound = 0u64;
        for item in &query.items {
            item.validate()?;
            if item.lo >= self.keyword_space {
                continue;
            }
            let hi = item.hi.min(self.keyword_space - 1);
            let m = self.range_multiplicity(item.lo, hi);
            if m == 0 {
                continue;
            }
            bound += u64::from(item.weight) * m;
            keep(Item {
                lo: item.lo,
                hi,
                weight: item.weight,
            });
        }
        if bound > u64::from(MAX_COUNT_BOUND) {
            return Err(GenieError::CountBoundTooLarge {
                bound,
                max: u64::from(MAX_COUNT_BOUND),
            });
        }
        Ok(bound as u32)
    }

    /// Prepares a batch of queries (owned or borrowed: `&[Query]` or `&[&Query]`).
    pub fn prepare_all<Q: std::borrow::Borrow<Query> + Sync>(
        &self,
        queries: &[Q],
    ) -> Result<Vec<PreparedQuery>> {
        use rayon::prelude::*;
        queries
            .par_iter()
            .map(|q| self.prepare(q.borrow()))
            .collect()
    }

    /// The work list of a prepared batch with sublists of at most `sublist_len` postings.
    pub fn work_list(&self, batch: &[PreparedQuery], sublist_len: u32) -> WorkList {
        let mut wl = WorkList {
            tasks: Vec::new(),
            query_starts: Vec::with_capacity(batch.len() + 1),
        };
        for (q, pq) in batch.iter().enumerate() {
            wl.query_starts.push(wl.tasks.len());
            for item in &pq.items {
                if let Some((a, b)) = self.slice_of(item.lo, item.hi) {
                    wl.tasks
                        .extend(Sublists::new(a, b, sublist_len).map(|(start, len)| Task {
                            query: q as u32,
                            weight: item.weight,
                            start,
                            len,
                        }));
                }
            }
        }
        wl.query_starts.push(wl.tasks.len());
        wl
    }
}
