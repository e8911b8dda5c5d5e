//! The buffers of a resident index's batches: device arrays and pinned host arrays that grow,
//! reused by every batch and reallocated only when a batch needs more, and the [`Slot`] of one
//! batch in flight.

use super::cuda_err;
use crate::error::{GenieError, Result};
use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DeviceRepr, PinnedHostSlice,
    ValidAsZeroBits,
};
use std::sync::Arc;

/// A device buffer that grows, never shrinks.
pub(super) struct Grow<T>(pub(super) Option<CudaSlice<T>>);

impl<T: DeviceRepr + ValidAsZeroBits> Grow<T> {
    pub(super) fn get(&mut self, s: &Arc<CudaStream>, len: usize) -> Result<&mut CudaSlice<T>> {
        let len = len.max(1);
        if self.0.as_ref().is_none_or(|b| b.len() < len) {
            self.0 = None; // free first
                           // SAFETY: callers clear or fully write the part they read.
            self.0 = Some(unsafe { s.alloc::<T>(len) }.map_err(cuda_err)?);
        }
        self.0
            .as_mut()
            .ok_or_else(|| GenieError::Internal("buffer".into()))
    }
}

/// A pinned host buffer that grows.
pub(super) struct Pinned<T>(pub(super) Option<PinnedHostSlice<T>>);

impl<T: DeviceRepr + ValidAsZeroBits> Pinned<T> {
    /// `write_combined` suits buffers the host only writes (uploads); read-back buffers use flags 0.
    pub(super) fn get(
        &mut self,
        ctx: &Arc<CudaContext>,
        len: usize,
        write_combined: bool,
    ) -> Result<&mut PinnedHostSlice<T>> {
        let len = len.max(1);
        if self.0.as_ref().is_none_or(|b| b.len() < len) {
            self.0 = None;
            let flags = if write_combined {
                sys::CU_MEMHOSTALLOC_WRITECOMBINED
            } else {
                0
            };
            // SAFETY: written before any copy reads it.
            self.0 =
                Some(unsafe { ctx.alloc_pinned_with_flags::<T>(len, flags) }.map_err(cuda_err)?);
        }
        self.0
            .as_mut()
            .ok_or_else(|| GenieError::Internal("pinned buffer".into()))
    }
}

/// Input and output buffers of one batch in flight.
pub(super) struct Slot {
    pub(super) h_in: Pinned<u32>,
    pub(super) d_in: Grow<u32>,
    pub(super) d_keys: Grow<u64>,
    pub(super) d_counts: Grow<u32>,
    pub(super) d_flags: Grow<u32>,
    pub(super) h_keys: Pinned<u64>,
    pub(super) h_counts: Pinned<u32>,
    pub(super) h_flags: Pinned<u32>,
    /// compute finished reading this slot's inputs
    pub(super) consumed: Option<CudaEvent>,
    /// (first query, queries, kp) of the batch whose results are on their way back
    pub(super) batch: Option<(usize, usize, usize)>,
    pub(super) events: Vec<CudaEvent>,
}

impl Slot {
    pub(super) fn new() -> Self {
        Self {
            h_in: Pinned(None),
            d_in: Grow(None),
            d_keys: Grow(None),
            d_counts: Grow(None),
            d_flags: Grow(None),
            h_keys: Pinned(None),
            h_counts: Pinned(None),
            h_flags: Pinned(None),
            consumed: None,
            batch: None,
            events: Vec::new(),
        }
    }
}
