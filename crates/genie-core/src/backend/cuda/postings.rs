//! The List Array on a GPU: the plain ids, or packed in blocks (`crate::packed`), as
//! [`PostingsForm`] chooses at upload.

use super::upload::Stager;
use super::{cuda_err, PostingsForm};
use crate::error::{GenieError, Result};
use crate::index::ListArray;
use crate::packed::{PackedPostings, BLOCK};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
};
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
///   by `unpack` ([`upload_unpacked`]) where the form would not keep it packed: the copy over the
///   bus shrinks by the packing's ratio and the count reads plain ids.
pub(super) fn device_postings(
    list: &ListArray,
    form: PostingsForm,
    free_memory: u64,
    upload: impl Fn(&[u32]) -> Result<CudaSlice<u32>>,
    unpack: impl FnOnce(&PackedPostings) -> Result<CudaSlice<u32>>,
) -> Result<DevicePostings> {
    let form = form.resolved();
    let plain_bytes = 4 * list.len() as u64;
    if let Some(packed) = list.packed() {
        if form.tries_packing(plain_bytes, free_memory) && form.keeps(packed) {
            return Ok(DevicePostings::Packed {
                headers: upload(packed.headers())?,
                data: upload(packed.data())?,
            });
        }
        return Ok(DevicePostings::Plain(unpack(packed)?));
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

/// Words of packed bits copied between launches of the unpacking: 64 MiB, about 30 launches for
/// the SIFT-like 4.5 M index's 1.9 GB, so that the unpacking of the last part, which the copies
/// do not hide, is short.
const SEGMENT_WORDS: usize = 16 << 20;

/// `packed` copied to the device through `stager` on `stream` and unpacked there by `func`
/// (kernel `unpack_postings`) into a new array of its ids, waited for.
///
/// The headers and bits go up as one array (as the file holds them) through the stager's lanes
/// without a pause; each time another segment's copies are queued
/// ([`Stager::queue_reporting`]), the blocks whose bits are then all queued are unpacked on a
/// second stream that waits for them: the unpacking hides under the copies over the bus, but for
/// the last segment's. The ids' array (4 bytes a posting, against 1.8 packed on the
/// SIFT-like shape) is allocated on another thread meanwhile, off the copies' way.
pub(super) fn upload_unpacked(
    stager: &Stager,
    func: &CudaFunction,
    stream: &Arc<CudaStream>,
    packed: &PackedPostings,
) -> Result<CudaSlice<u32>> {
    let t = std::time::Instant::now();
    let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
    // the headers and the bits, one after the other as the file holds them, go up as one array
    let (words, hdr) = (packed.words(), packed.headers());
    let head = hdr.len();
    let n = packed.len();
    let ctx = stream.context();
    let unpacking = ctx.new_stream().map_err(cuda_err)?;
    // SAFETY: every word is written by the copies below before the kernels read it.
    let mut dev = unsafe { stream.alloc::<u32>(words.len().max(1)) }.map_err(cuda_err)?;
    let setup_ms = ms(t);
    // The kernels take raw addresses: a tracked argument would make each next copy on `stream`
    // wait for the unpacking before it. `unpacking` is waited for below before either array is
    // dropped or handed on.
    let hdr_at = dev.device_ptr(&unpacking).0;
    let data_at = hdr_at + 4 * head as u64;
    // the ids' array, allocated on another thread while the bits are copied
    let ids_at = std::sync::OnceLock::<u64>::new();
    let blocks = n.div_ceil(BLOCK as u64) as usize;
    let mut done = 0usize;
    // unpacks the blocks whose bits end before word `end` of `words` (block b's bits end at the
    // first of block b + 1, header word 2 b + 3, after the headers), all copies before them queued
    // on `stream`
    let mut unpack_to = |end: usize| -> Result<()> {
        // (before the ids' array is there, the next call unpacks these blocks too)
        let Some(&ids_at) = ids_at.get() else {
            return Ok(());
        };
        let (mut lo, mut hi) = (done, blocks);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if head + hdr[2 * mid + 3] as usize <= end {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == done {
            return Ok(());
        }
        let copied = stream.record_event(None).map_err(cuda_err)?;
        unpacking.wait(&copied).map_err(cuda_err)?;
        let first = (done * BLOCK) as u64;
        let count = (lo as u64 * BLOCK as u64).min(n) - first;
        let cfg = LaunchConfig {
            grid_dim: (count.div_ceil(256).min(1 << 20) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (h, o) = (hdr_at + 8 * done as u64, ids_at + 4 * first);
        let mut args = unpacking.launch_builder(func);
        args.arg(&h).arg(&data_at).arg(&o).arg(&count);
        // SAFETY: arguments match kernels/cpq.cu's unpack_postings: the headers from block
        // `done` on (the data words they name are absolute), the whole bits, and the ids from
        // posting `first` on, `count` of them inside the array. The headers and bits passed
        // `PackedPostings::from_words`' checks (every read inside the bits), and blocks
        // `done..lo` read only words before `end`, whose copies come before the event waited for.
        unsafe { args.launch(cfg) }.map_err(cuda_err)?;
        done = lo;
        Ok(())
    };
    let (run, allocated) = std::thread::scope(|scope| {
        let alloc = scope.spawn(|| -> Result<(CudaSlice<u32>, f64)> {
            let a = std::time::Instant::now();
            ctx.bind_to_thread().map_err(cuda_err)?;
            // SAFETY: the kernels write each of the `n` words before anything reads them (the
            // one word of an empty array is never read).
            let mut ids = unsafe { unpacking.alloc::<u32>(n.max(1) as usize) }.map_err(cuda_err)?;
            let _ = ids_at.set(ids.device_ptr_mut(&unpacking).0);
            Ok((ids, ms(a)))
        });
        let run = stager.queue_reporting(stream, words, &mut dev, SEGMENT_WORDS, &mut unpack_to);
        let allocated = alloc.join().unwrap_or_else(|_| {
            Err(GenieError::Internal(
                "the thread allocating the ids panicked".into(),
            ))
        });
        (run, allocated)
    });
    let run = run.and_then(|()| unpack_to(words.len()));
    let queued_ms = ms(t);
    let run = run.and_then(|()| {
        if done < blocks {
            return Err(GenieError::Internal(format!(
                "packed postings: {} of {blocks} blocks not unpacked",
                blocks - done
            )));
        }
        stream.synchronize().map_err(cuda_err)
    });
    // the kernels read `dev` and write `ids` by raw address: wait for them whatever happened
    let waited = unpacking.synchronize().map_err(cuda_err);
    let (ids, alloc_ms) = allocated?;
    run.and(waited)?;
    let all_ms = ms(t);
    log::debug!(
        "unpacked {n} postings on the device in {all_ms:.1} ms, {:.1} MB copied: their allocation {setup_ms:.1} ms, the ids' {alloc_ms:.1} ms beside the copies, copies queued {queued_ms:.1} ms after the start, the last unpacking done {:.1} ms after",
        4.0 * words.len() as f64 / 1e6,
        all_ms - queued_ms
    );
    Ok(ids)
}
