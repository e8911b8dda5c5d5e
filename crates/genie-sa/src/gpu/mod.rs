//! Sequences on a GPU, launched from this crate (kernels: [`crate::kernels::SEQ`],
//! `kernels/seq.cu`): [`GpuSequences`] keeps sequences of dense symbol ids resident on a device
//! and computes edit distances there, the CPU's bit-parallel algorithm
//! ([`crate::edit_distance`]), so the distances are the CPU's. [`crate::DeviceSequences`] puts a
//! store's sequences there.
//!
//! Without the `cuda` feature of this crate (or without a usable GPU) [`GpuSequences::new`]
//! returns [`genie_core::GenieError::GpuUnavailable`] with the reason, so callers need no
//! `#[cfg]`.

#[cfg(feature = "cuda")]
mod sequences;
#[cfg(feature = "cuda")]
pub use sequences::GpuSequences;

#[cfg(not(feature = "cuda"))]
use genie_core::{GenieError, Result};

/// Most 64-symbol words of a pattern [`GpuSequences`] scans (`kernels/seq.cu`
/// `SEQ_MAX_WORDS`).
pub const SEQ_MAX_WORDS: usize = 8;
/// Distances below this are the ones [`GpuSequences`] ranks (`kernels/seq.cu` `SEQ_BINS`).
pub const SEQ_BINS: usize = 1024;

/// The sequences within a query's k-th smallest distance, as `(id, distance)` in no order.
pub type Within = Vec<(u32, u32)>;

/// One query of [`GpuSequences::nearest`]: its symbols as the sequences' dense ids (an id at or
/// past the alphabet matches nothing) and an upper bound of its k-th smallest distance (the
/// k-th distance of any k sequences).
#[derive(Clone, Copy, Debug)]
pub struct SeqJob<'a> {
    /// The pattern's symbols.
    pub pattern: &'a [u16],
    /// At least the k-th smallest distance.
    pub bound: u32,
}

/// Without the `cuda` feature there are no sequences on a GPU: [`GpuSequences::new`] fails.
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub struct GpuSequences(());

#[cfg(not(feature = "cuda"))]
impl GpuSequences {
    /// Always [`GenieError::GpuUnavailable`] without the `cuda` feature.
    pub fn new(ordinal: usize, syms: &[u16], starts: &[u32], alphabet: usize) -> Result<Self> {
        let _ = (ordinal, syms, starts, alphabet);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn len(&self) -> usize {
        0
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn fits(&self, pattern: &[u16]) -> bool {
        let _ = pattern;
        false
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn takes(&self, job: &SeqJob<'_>) -> bool {
        let _ = job;
        false
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn distances(&self, jobs: &[(&[u16], &[u32])]) -> Result<Vec<Option<Vec<u32>>>> {
        let _ = jobs;
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }

    /// Never reached: no value exists without the `cuda` feature.
    pub fn nearest(&self, jobs: &[SeqJob<'_>], k: usize) -> Result<Vec<Option<Within>>> {
        let _ = (jobs, k);
        Err(GenieError::GpuUnavailable(
            "built without the `cuda` feature".into(),
        ))
    }
}
