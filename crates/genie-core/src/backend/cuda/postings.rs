//! The List Array on a GPU: the plain ids, or packed in blocks (`crate::packed`), as
//! [`PostingsForm`] chooses at upload.

use super::PostingsForm;
use crate::error::Result;
use cudarc::driver::CudaSlice;

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
    /// The form's name in logs: `plain` or `packed`.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Self::Plain(_) => "plain",
            Self::Packed { .. } => "packed",
        }
    }

    /// Which of each match kernel's pair reads this form: 0 plain, 1 packed (`..._packed`).
    pub(super) fn kernels(&self) -> usize {
        usize::from(matches!(self, Self::Packed { .. }))
    }

    /// Bytes on the device.
    pub(super) fn bytes(&self) -> usize {
        match self {
            Self::Plain(ids) => ids.len() * 4,
            Self::Packed { headers, data } => (headers.len() + data.len()) * 4,
        }
    }
}

/// Uploads the List Array in `form` by `upload`, on a device with `free_memory` bytes free: packed
/// on the host on all cores where the form, resolved against the environment, says so
/// ([`PostingsForm::tries_packing`], [`PostingsForm::keeps`]), then copied.
pub(super) fn device_postings(
    ids: &[u32],
    form: PostingsForm,
    free_memory: u64,
    upload: impl Fn(&[u32]) -> Result<CudaSlice<u32>>,
) -> Result<DevicePostings> {
    use crate::packed::PackedPostings;
    let form = form.resolved();
    let plain_bytes = std::mem::size_of_val(ids) as u64;
    if !ids.is_empty() && form.tries_packing(plain_bytes, free_memory) {
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
                    headers: upload(packed.headers())?,
                    data: upload(packed.data())?,
                });
            }
        }
    }
    Ok(DevicePostings::Plain(upload(ids)?))
}
