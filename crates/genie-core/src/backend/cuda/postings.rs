//! The List Array on a GPU: the plain ids, or packed in blocks (`crate::packed`), as
//! [`PostingsForm`] chooses at upload.

use super::cuda_err;
use super::PostingsForm;
use crate::error::Result;
use crate::index::ListArray;
use crate::packed::PackedPostings;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
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

/// Puts the List Array `list` on the device in `form` (resolved against the environment), on a
/// device with `free_memory` bytes free, by `upload`:
/// - plain ids are packed on the host on all cores where the form says so
///   ([`PostingsForm::tries_packing`], [`PostingsForm::keeps`]), then copied;
/// - a packed List Array (of a packed index file) is copied as it is, and unpacked on the device
///   by `unpack` where the form would not keep it packed: the copy over the bus shrinks by the
///   packing's ratio and the count reads plain ids.
pub(super) fn device_postings(
    list: &ListArray,
    form: PostingsForm,
    free_memory: u64,
    upload: impl Fn(&[u32]) -> Result<CudaSlice<u32>>,
    unpack: impl FnOnce(&CudaSlice<u32>, &CudaSlice<u32>, u64) -> Result<CudaSlice<u32>>,
) -> Result<DevicePostings> {
    let form = form.resolved();
    let plain_bytes = 4 * list.len() as u64;
    if let Some(packed) = list.packed() {
        let headers = upload(packed.headers())?;
        let data = upload(packed.data())?;
        if form.tries_packing(plain_bytes, free_memory) && form.keeps(packed) {
            return Ok(DevicePostings::Packed { headers, data });
        }
        let t = std::time::Instant::now();
        let ids = unpack(&headers, &data, packed.len())?;
        log::debug!(
            "unpacked {} postings on the device in {:.1} ms",
            packed.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        return Ok(DevicePostings::Plain(ids));
    }
    let ids: &[u32] = list;
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

/// Unpacks `n` packed postings (their `headers` and `data` on the device) into a new array of
/// ids, on `stream`, and waits for it.
pub(super) fn unpack(
    func: &CudaFunction,
    stream: &Arc<CudaStream>,
    headers: &CudaSlice<u32>,
    data: &CudaSlice<u32>,
    n: u64,
) -> Result<CudaSlice<u32>> {
    // SAFETY: the kernel writes each of the `n` words before anything reads them (the one word
    // of an empty array is never read)
    let mut ids = unsafe { stream.alloc::<u32>(n.max(1) as usize) }.map_err(cuda_err)?;
    if n > 0 {
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(256).min(1 << 20) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args = stream.launch_builder(func);
        args.arg(headers).arg(data).arg(&mut ids).arg(&n);
        // SAFETY: arguments match kernels/cpq.cu's unpack_postings; the headers and bits
        // passed `PackedPostings::from_words`' checks (every read inside `data`), and `ids`
        // holds `n` words.
        unsafe { args.launch(cfg) }.map_err(cuda_err)?;
    }
    stream.synchronize().map_err(cuda_err)?;
    Ok(ids)
}
