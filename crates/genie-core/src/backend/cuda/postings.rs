//! The List Array on a GPU: the plain ids, or packed in blocks (`crate::packed`), as
//! [`PostingsForm`] chooses at upload.

use super::gpu::Gpu;
use super::PostingsForm;
use crate::error::Result;
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// The List Array on the device: its ids, or packed in blocks (`crate::packed`).
pub(super) enum DevicePostings {
    /// The ids as they are.
    Plain(CudaSlice<u32>),
    /// The packed form's headers and bits.
    Packed {
        headers: CudaSlice<u32>,
        data: CudaSlice<u32>,
    },
}

impl DevicePostings {
    /// Bytes on the device.
    pub(super) fn bytes(&self) -> usize {
        match self {
            Self::Plain(ids) => ids.len() * 4,
            Self::Packed { headers, data } => (headers.len() + data.len()) * 4,
        }
    }
}

/// Uploads the List Array in `form`: packed on the host on all cores where the form says so
/// ([`PostingsForm::tries_packing`], [`PostingsForm::keeps`]), then copied.
pub(super) fn device_postings(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    ids: &[u32],
    form: PostingsForm,
) -> Result<DevicePostings> {
    use crate::packed::PackedPostings;
    let plain_bytes = std::mem::size_of_val(ids) as u64;
    if !ids.is_empty() && form.tries_packing(plain_bytes, gpu.free_memory()) {
        let t = std::time::Instant::now();
        if let Some(packed) = PackedPostings::pack(ids) {
            log::debug!(
                "packed {} postings in {:.1} ms: {:.2} bits a posting",
                ids.len(),
                t.elapsed().as_secs_f64() * 1e3,
                packed.bits_per_posting()
            );
            if form.keeps(&packed) {
                return Ok(DevicePostings::Packed {
                    headers: gpu.upload(stream, packed.headers())?,
                    data: gpu.upload(stream, packed.data())?,
                });
            }
        }
    }
    Ok(DevicePostings::Plain(gpu.upload(stream, ids)?))
}
