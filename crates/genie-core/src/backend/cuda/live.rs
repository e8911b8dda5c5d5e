//! The search's object mask on the device ([`SearchParams::mask`]): its words, which the match
//! kernels read as `live` (bit `o % 32` of word `o / 32` set = object `o` may be returned).
//! A resident index keeps the last mask it uploaded and uploads again only when a search brings
//! another one, so the words cross the link once per distinct mask, not once per batch.
//!
//! [`SearchParams::mask`]: crate::backend::SearchParams::mask

use super::cuda_err;
use crate::error::Result;
use crate::mask::ObjectMask;
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// A mask's words on the device, with the mask they are (which keeps its words alive, so the
/// cache's identity check cannot be fooled by a new mask at a freed one's address).
pub(super) struct LiveMask {
    mask: ObjectMask,
    words: CudaSlice<u32>,
}

impl LiveMask {
    /// The words on the device.
    pub(super) fn words(&self) -> &CudaSlice<u32> {
        &self.words
    }

    /// `mask` on the device: the cached one when it holds the same words (the same allocation,
    /// or equal words), else `mask` uploaded on `stream` in its place. `stream` runs the
    /// kernels, so they see the upload; it is synchronized before the old words are freed.
    pub(super) fn cached(
        cache: &mut Option<Arc<LiveMask>>,
        mask: &ObjectMask,
        stream: &Arc<CudaStream>,
    ) -> Result<Arc<LiveMask>> {
        if let Some(live) = cache.as_ref().filter(|l| l.mask == *mask) {
            return Ok(live.clone());
        }
        if cache.take().is_some() {
            stream.synchronize().map_err(cuda_err)?;
        }
        let t = std::time::Instant::now();
        let words = stream.clone_htod(mask.words()).map_err(cuda_err)?;
        log::debug!(
            "object mask of {} objects ({} allowed) uploaded in {:.2?}",
            mask.len(),
            mask.count(),
            t.elapsed()
        );
        let live = Arc::new(LiveMask {
            mask: mask.clone(),
            words,
        });
        *cache = Some(live.clone());
        Ok(live)
    }
}
