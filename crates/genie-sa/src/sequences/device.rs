//! The indexed sequences on a GPU, for the edit distances of a sequence search
//! ([`crate::sequences::search`]): each symbol replaced by its rank among the sequences' distinct symbols
//! (a dense id), so that a query's match masks fit in shared memory; then its candidates'
//! distances, or every object within its exact k-th smallest distance, found there by the same
//! bit-parallel algorithm as the CPU's ([`crate::gpu::GpuSequences`]).

use crate::error::{Result, SaError};
use crate::gpu::{GpuSequences, SeqJob, Within, SEQ_BINS};
use crate::sequences::store::SequenceStore;
use genie_core::ObjectId;

/// The sequences of a store on a GPU, with their alphabet.
#[derive(Debug)]
pub struct DeviceSequences {
    gpu: GpuSequences,
    ids: SymbolIds,
}

/// The distinct symbols of the sequences and each one's dense id, its rank among them.
#[derive(Debug)]
struct SymbolIds {
    /// The distinct symbols, ascending.
    symbols: Vec<u32>,
    /// The id of each code point below 2^16 (`u16::MAX` for none).
    small: Vec<u16>,
}

impl SymbolIds {
    /// The ids of the symbols in `all`: a table marks the first 2^16 code points, a sort finds
    /// the rest.
    fn of(all: &[u32]) -> Result<Self> {
        let mut seen = vec![false; 1 << 16];
        let mut large: Vec<u32> = Vec::new();
        for &s in all {
            match seen.get_mut(s as usize) {
                Some(seen) => *seen = true,
                None => large.push(s),
            }
        }
        large.sort_unstable();
        large.dedup();
        let mut symbols: Vec<u32> = (0..1u32 << 16).filter(|&s| seen[s as usize]).collect();
        symbols.extend(large);
        if symbols.len() >= usize::from(u16::MAX) {
            return Err(SaError::InvalidParameter(format!(
                "{} distinct symbols: at most {} on the GPU",
                symbols.len(),
                u16::MAX - 1
            )));
        }
        let mut small = vec![u16::MAX; 1 << 16];
        for (i, &s) in symbols.iter().enumerate().take_while(|(_, &s)| s < 1 << 16) {
            small[s as usize] = i as u16;
        }
        Ok(Self { symbols, small })
    }

    /// The dense id of `s`, `u16::MAX` for a symbol no sequence has.
    fn id(&self, s: u32) -> u16 {
        match self.small.get(s as usize) {
            Some(&id) => id,
            None => self
                .symbols
                .binary_search(&s)
                .map_or(u16::MAX, |i| i as u16),
        }
    }
}

impl DeviceSequences {
    /// Uploads `store` to GPU `ordinal`. Fails without a GPU, or with more than 65,535 distinct
    /// symbols.
    pub fn new(store: &SequenceStore, ordinal: usize) -> Result<Self> {
        let mut all = Vec::new();
        let mut starts = Vec::with_capacity(store.len() + 1);
        starts.push(0u32);
        for id in 0..store.len() {
            store.symbols(id as ObjectId, &mut all)?;
            starts.push(u32::try_from(all.len()).map_err(|_| {
                SaError::InvalidParameter("sequences of more than 2^32 symbols in all".into())
            })?);
        }
        let ids = SymbolIds::of(&all)?;
        let dense: Vec<u16> = all.iter().map(|&s| ids.id(s)).collect();
        drop(all);
        let gpu = GpuSequences::new(ordinal, &dense, &starts, ids.symbols.len().max(1))?;
        Ok(Self { gpu, ids })
    }

    /// `symbols` as dense ids (`u16::MAX` for a symbol no sequence has: it matches nothing).
    pub fn pattern(&self, symbols: &[u32]) -> Vec<u16> {
        symbols.iter().map(|&s| self.ids.id(s)).collect()
    }

    /// For each `(pattern, candidates)`, the edit distance to each candidate (`None` for a
    /// pattern the device does not take: too long for its words, or its masks for its shared
    /// memory).
    pub fn distances(&self, jobs: &[(Vec<u16>, &[u32])]) -> Result<Vec<Option<Vec<u32>>>> {
        let jobs: Vec<(&[u16], &[u32])> = jobs.iter().map(|(p, c)| (p.as_slice(), *c)).collect();
        Ok(self.gpu.distances(&jobs)?)
    }

    /// For each `(pattern, bound)`, every sequence within the exact `k`-th smallest distance as
    /// `(id, distance)`, or `None` where the device cannot tell (see
    /// [`GpuSequences::nearest`]). `bound` is any upper bound of the k-th distance; larger than
    /// the device ranks, it is lowered to its most, which the device checks.
    pub fn nearest(&self, jobs: &[(Vec<u16>, u32)], k: usize) -> Result<Vec<Option<Within>>> {
        let jobs: Vec<SeqJob<'_>> = jobs
            .iter()
            .map(|(p, b)| SeqJob {
                pattern: p,
                bound: (*b).min(SEQ_BINS as u32 - 1),
            })
            .collect();
        Ok(self.gpu.nearest(&jobs, k)?)
    }
}
