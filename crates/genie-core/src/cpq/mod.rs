//! The Count Priority Queue (c-PQ, paper section III-C): Bitmap Counter, Gate, Robin Hood hash
//! table with expiry, and extraction, on the CPU. This is the reference implementation the GPU
//! kernels mirror; [`run_query`] drives one query's tasks through it.

mod bitmap;
mod extract;
mod gate;
mod robin_hood;

pub use bitmap::{bits_for_bound, words_for, BitmapCounter};
pub use extract::extract;
pub use gate::Gate;
pub use robin_hood::{hash_id, table_slots, RobinHoodTable, TableFull};

use crate::error::Result;
use crate::index::{InvertedIndex, Task};
use crate::mask::{allowed, ObjectMask};
use crate::model::Hit;
use rayon::prelude::*;

/// Postings of one query above which its sublists are scanned in parallel.
pub const PARALLEL_POSTINGS: u64 = 1 << 16;

/// The c-PQ of one query.
#[derive(Debug)]
pub struct CountPq {
    /// The Bitmap Counter.
    pub bitmap: BitmapCounter,
    /// The Gate.
    pub gate: Gate,
    /// The hash table.
    pub table: RobinHoodTable,
}

impl CountPq {
    /// A c-PQ for `n` objects, top-`k`, count bound `bound`, with `slots` hash table entries.
    pub fn new(n: u32, k: u32, bound: u32, slots: usize) -> Self {
        Self {
            bitmap: BitmapCounter::new(n, bound),
            gate: Gate::new(k, bound),
            table: RobinHoodTable::new(slots),
        }
    }

    /// Algorithm 1 over one sublist; with a `mask`, the postings of objects it does not allow
    /// are skipped (never counted, so the Gate and the table see only allowed objects).
    pub fn scan(
        &self,
        postings: &[u32],
        weight: u32,
        mask: Option<&ObjectMask>,
    ) -> Result<(), TableFull> {
        match mask {
            None => postings.iter().try_for_each(|&id| self.count(id, weight)),
            Some(m) => {
                let words = m.words();
                postings
                    .iter()
                    .filter(|&&id| allowed(words, id))
                    .try_for_each(|&id| self.count(id, weight))
            }
        }
    }

    /// Algorithm 1 for one posting.
    #[inline(always)]
    fn count(&self, id: u32, weight: u32) -> Result<(), TableFull> {
        let (old, new) = self.bitmap.add(id, weight);
        if self.gate.update(old, new) {
            self.table.insert(id, new, || self.gate.audit_threshold())?;
        }
        Ok(())
    }
}

/// Runs one query's tasks through a c-PQ and extracts its top-k; reruns with a table twice as
/// large whenever the table fills (never a wrong answer). With a `mask` (of the index's length),
/// only the objects it allows are counted.
pub fn run_query(
    index: &InvertedIndex,
    tasks: &[Task],
    k: u32,
    bound: u32,
    table_factor: f64,
    mask: Option<&ObjectMask>,
) -> Result<Vec<Hit>> {
    if k == 0 || tasks.is_empty() {
        return Ok(Vec::new());
    }
    let n = index.num_objects();
    let mut slots = table_slots(k, bound, n, table_factor);
    let total: u64 = tasks.iter().map(|t| u64::from(t.len)).sum();
    loop {
        let pq = CountPq::new(n, k, bound, slots);
        let scan = |t: &Task| {
            pq.scan(
                &index.postings[t.start as usize..][..t.len as usize],
                t.weight,
                mask,
            )
        };
        let done = if total >= PARALLEL_POSTINGS && tasks.len() > 1 {
            tasks.par_iter().try_for_each(scan)
        } else {
            tasks.iter().try_for_each(scan)
        };
        match done {
            Ok(()) => return extract(&pq.bitmap, &pq.gate, &pq.table, k as usize, n),
            Err(TableFull) => {
                log::debug!(
                    "c-PQ table of {slots} slots full; rerunning with {}",
                    slots * 2
                );
                slots *= 2;
            }
        }
    }
}
