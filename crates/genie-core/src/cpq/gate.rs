//! The Gate (paper section III-C, Algorithm 1, Lemma 3.1): the ZipperArray `ZA[v]` counts objects
//! whose count reached `v` while `v >= AT`, and the AuditThreshold `AT` is the least `v` with
//! `ZA[v] < k`. Only updates reaching `AT` pass to the hash table. Weighted items can jump a count
//! by more than one: every value crossed at or above `AT` is recorded. AT only grows, by
//! compare-and-swap, so concurrent updaters (sublists in parallel) keep Lemma 3.1.

use std::sync::atomic::{fence, AtomicU32, Ordering};

/// The Gate of one query.
#[derive(Debug)]
pub struct Gate {
    k: u32,
    zipper: Vec<AtomicU32>,
    audit: AtomicU32,
}

impl Gate {
    /// A gate for top-`k` with count bound `bound` (ZipperArray of `bound + 2` entries, AT = 1).
    pub fn new(k: u32, bound: u32) -> Self {
        Self {
            k,
            zipper: (0..bound as usize + 2).map(|_| AtomicU32::new(0)).collect(),
            audit: AtomicU32::new(1),
        }
    }

    /// The current AuditThreshold.
    pub fn audit_threshold(&self) -> u32 {
        self.audit.load(Ordering::SeqCst)
    }

    /// The ZipperArray entry of `v`.
    pub fn zipper(&self, v: u32) -> u32 {
        self.zipper[v as usize].load(Ordering::SeqCst)
    }

    /// Records a count update `old -> new`; returns whether the object passes to the hash table
    /// (`new >= AT`).
    pub fn update(&self, old: u32, new: u32) -> bool {
        let at = self.audit_threshold();
        if new < at {
            return false;
        }
        for v in (old + 1).max(at)..=new {
            self.zipper[v as usize].fetch_add(1, Ordering::SeqCst);
        }
        // Dekker-style: our increments must be visible before we read AT and ZA[AT] below, so that
        // of two racing updaters at least one sees the other's increment and raises AT.
        fence(Ordering::SeqCst);
        self.advance();
        true
    }

    fn advance(&self) {
        let last = self.zipper.len() as u32 - 1;
        loop {
            let at = self.audit.load(Ordering::SeqCst);
            if at >= last || self.zipper[at as usize].load(Ordering::SeqCst) < self.k {
                return;
            }
            let _ = self
                .audit
                .compare_exchange(at, at + 1, Ordering::SeqCst, Ordering::SeqCst);
        }
    }
}
