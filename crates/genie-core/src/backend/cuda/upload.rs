//! Uploads of large host arrays (an index's List Array, its dense bitmaps) through page-locked
//! staging memory.
//!
//! Several lanes copy at once: each [`Lane`] holds two pinned slots, takes the next chunk of the
//! source, copies it into a free slot of its own and queues that slot's transfer, so the host's
//! copies and the link's transfers overlap all along, with no lane waiting for another. Measured
//! on an H200's host (`genie-bench --mode ceilings`, docs/BENCHMARKS.md, issue 15): 8 lanes of
//! 2 MiB slots upload at 91% of the pinned ceiling; cached or write-combined slots make no
//! difference; slots of 256 KiB (too many transfers) or 16 MiB (too few in flight) fall to 36% and
//! 63-74%. The earlier scheme, two 16 MiB chunks that all cores filled in turn, reached about 70%.
//! Measured against DMA straight from a mapped file's pages, registered read-only for the copy:
//! registering 948 MB alone took 39.5 ms on an H200's host, as long as a whole staged upload
//! (docs/BENCHMARKS.md, issue 15).

use super::cuda_err;
use crate::error::{GenieError, Result};
use cudarc::driver::{
    result, sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr,
    PinnedHostSlice,
};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes per staging slot of index uploads (two per lane).
pub const SLOT_BYTES: usize = 2 << 20;
/// Lanes of index uploads, at most: 8 lanes of 2 MiB slots (32 MiB pinned) uploaded 1 GiB at 91%
/// of the pinned ceiling on an H200's host, 16 lanes of 1 MiB (as much pinned) at 82-84%, 4 of
/// 4 MiB at 57%.
pub const LANES: usize = 8;
/// Whether the default slots are write-combined (uncached) host memory.
pub const WRITE_COMBINED: bool = false;

/// One core's two staging slots, each with the event of its last queued transfer.
struct Lane {
    /// The slots' first words in the pinned memory.
    slots: [Words; 2],
    done: [CudaEvent; 2],
    /// Whether `done[i]` was recorded (a slot never used has nothing to wait for).
    used: [bool; 2],
    next: usize,
}

/// A slot's place in the pinned memory.
#[derive(Clone, Copy)]
struct Words(*mut u32);
// SAFETY: a slot is written only by the thread holding its lane's lock.
unsafe impl Send for Words {}

/// Pinned staging for uploads: [`Lane`]s working in parallel, all in one pinned allocation (one
/// call pinned 32 MiB in 12-19 ms on an H200's host, 32 calls of 1 MiB in 15-21 ms).
pub struct Stager {
    lanes: Vec<Mutex<Lane>>,
    slot_words: usize,
    /// The slots' memory, freed on drop.
    _pinned: PinnedHostSlice<u32>,
}

/// A 4-byte element a [`Stager`] uploads (its slots are words).
pub trait Word: DeviceRepr + Copy + Send + Sync + 'static {}
impl Word for u32 {}
impl Word for f32 {}

/// Where an upload's time went.
#[derive(Debug, Default, Clone, Copy)]
pub struct UploadTimes {
    /// Allocating the device array.
    pub alloc_ms: f64,
    /// From the first host copy to the last transfer done.
    pub copy_ms: f64,
}

impl Stager {
    /// `lanes` lanes (at most one per thread of the rayon pool does work) of two `slot_bytes`
    /// slots each, pinned now.
    pub fn new(
        ctx: &Arc<CudaContext>,
        lanes: usize,
        slot_bytes: usize,
        write_combined: bool,
    ) -> Result<Self> {
        let slot_words = (slot_bytes / 4).max(1);
        let flags = if write_combined {
            sys::CU_MEMHOSTALLOC_WRITECOMBINED
        } else {
            0
        };
        let count = lanes.max(1);
        // SAFETY: a slot is written by the host before any transfer reads it.
        let mut pinned =
            unsafe { ctx.alloc_pinned_with_flags::<u32>(count * 2 * slot_words, flags) }
                .map_err(cuda_err)?;
        let first = pinned.as_mut_ptr().map_err(cuda_err)?;
        // SAFETY: slot `i` is words [i * slot_words, (i + 1) * slot_words) of the allocation.
        let slot = |i: usize| Words(unsafe { first.add(i * slot_words) });
        let event = || ctx.new_event(None).map_err(cuda_err);
        let lanes = (0..count)
            .map(|l| {
                Ok(Mutex::new(Lane {
                    slots: [slot(2 * l), slot(2 * l + 1)],
                    done: [event()?, event()?],
                    used: [false; 2],
                    next: 0,
                }))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            lanes,
            slot_words,
            _pinned: pinned,
        })
    }

    /// Bytes pinned for staging.
    pub fn pinned_bytes(&self) -> usize {
        self.lanes.len() * 2 * self.slot_words * 4
    }

    /// `host` in a new device array, uploaded on `stream`.
    pub fn upload<T: Word>(
        &self,
        stream: &Arc<CudaStream>,
        host: &[T],
    ) -> Result<(CudaSlice<T>, UploadTimes)> {
        let t = std::time::Instant::now();
        // SAFETY: every element is written by the copies below before any kernel reads it.
        let mut dev = unsafe { stream.alloc::<T>(host.len().max(1)) }.map_err(cuda_err)?;
        let alloc_ms = t.elapsed().as_secs_f64() * 1e3;
        let c = std::time::Instant::now();
        self.copy(stream, host, &mut dev)?;
        Ok((
            dev,
            UploadTimes {
                alloc_ms,
                copy_ms: c.elapsed().as_secs_f64() * 1e3,
            },
        ))
    }

    /// Copies `host` into the start of `dev` on `stream`, and waits for the copies.
    pub fn copy<T: Word>(
        &self,
        stream: &Arc<CudaStream>,
        host: &[T],
        dev: &mut CudaSlice<T>,
    ) -> Result<()> {
        let fill = |at: usize, dst: &mut [T]| dst.copy_from_slice(&host[at..at + dst.len()]);
        self.copy_with(stream, host.len(), dev, fill, |_| Ok(()))?;
        stream.synchronize().map_err(cuda_err)
    }

    /// Copies `host` into the start of `dev` on `stream` as [`Stager::copy`] does, but returns
    /// once the last copy is queued, not done, and calls `ready(words)` as the copies go: once the
    /// copies of all words before `words` are queued on `stream`, every `every` words and at the
    /// end, one call at a time and in increasing `words`, from a copying thread. Work ordered
    /// after an event recorded on `stream` in `ready` sees those words on the device; the lanes
    /// go on copying meanwhile.
    pub fn queue_reporting<T: Word>(
        &self,
        stream: &Arc<CudaStream>,
        host: &[T],
        dev: &mut CudaSlice<T>,
        every: usize,
        ready: impl FnMut(usize) -> Result<()> + Send,
    ) -> Result<()> {
        let (len, slot) = (host.len(), self.slot_words);
        let chunks = len.div_ceil(slot);
        // the chunks queued, the first not queued, the words last reported, `ready`
        let progress = Mutex::new((vec![false; chunks], 0usize, 0usize, ready));
        let fill = |at: usize, dst: &mut [T]| dst.copy_from_slice(&host[at..at + dst.len()]);
        self.copy_with(stream, len, dev, fill, |j| {
            let mut p = progress.lock().map_err(|_| {
                GenieError::Internal("an upload's progress lock is poisoned".into())
            })?;
            let (queued, first, reported, ready) = &mut *p;
            queued[j] = true;
            while *first < chunks && queued[*first] {
                *first += 1;
            }
            let words = (*first * slot).min(len);
            if words > *reported && (words == len || words >= *reported + every) {
                *reported = words;
                ready(words)?;
            }
            Ok(())
        })
    }

    /// Copies `rows` (each `dim` long), one after the other, into the start of `dev` on
    /// `stream`, and waits for the copies: the rows go to the staging slots as they lie, with no
    /// gathered copy on the host.
    pub fn copy_rows<T: Word>(
        &self,
        stream: &Arc<CudaStream>,
        rows: &[&[T]],
        dim: usize,
        dev: &mut CudaSlice<T>,
    ) -> Result<()> {
        if dim == 0 || rows.iter().any(|r| r.len() != dim) {
            return Err(GenieError::Internal(format!(
                "an upload of rows that are not all {dim} long"
            )));
        }
        let fill = |at: usize, dst: &mut [T]| {
            let mut done = 0;
            while done < dst.len() {
                let (r, from) = ((at + done) / dim, (at + done) % dim);
                let take = (dim - from).min(dst.len() - done);
                dst[done..done + take].copy_from_slice(&rows[r][from..from + take]);
                done += take;
            }
        };
        self.copy_with(stream, rows.len() * dim, dev, fill, |_| Ok(()))?;
        stream.synchronize().map_err(cuda_err)
    }

    /// Queues copies of `len` words into the start of `dev` on `stream` (not waiting for them):
    /// `fill(at, slot)` writes words `at..at + slot.len()` of the source into a staging slot, and
    /// `queued(j)` is called once chunk `j`'s copy is queued.
    fn copy_with<T: Word>(
        &self,
        stream: &Arc<CudaStream>,
        len: usize,
        dev: &mut CudaSlice<T>,
        fill: impl Fn(usize, &mut [T]) + Sync,
        queued: impl Fn(usize) -> Result<()> + Sync,
    ) -> Result<()> {
        const { assert!(std::mem::size_of::<T>() == 4) };
        if len > dev.len() {
            return Err(GenieError::Internal(format!(
                "an upload of {} words into a device array of {}",
                len,
                dev.len()
            )));
        }
        let slot = self.slot_words;
        let chunks = len.div_ceil(slot);
        let next = AtomicUsize::new(0);
        let (base, _written) = dev.device_ptr_mut(stream);
        let lanes = self.lanes.len().min(chunks);
        let ctx = stream.context();
        (0..lanes).into_par_iter().try_for_each(|l| -> Result<()> {
            let mut lane = self.lanes[l]
                .lock()
                .map_err(|_| GenieError::Internal("a staging lane's lock is poisoned".into()))?;
            let lane = &mut *lane;
            ctx.bind_to_thread().map_err(cuda_err)?;
            loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                if j >= chunks {
                    return Ok(());
                }
                let b = lane.next;
                lane.next ^= 1;
                if lane.used[b] {
                    lane.done[b].synchronize().map_err(cuda_err)?;
                }
                let words = ((j + 1) * slot).min(len) - j * slot;
                // SAFETY: the slot holds `slot_words >= words` words, written by this lane alone
                // (its lock is held), and no transfer reads it any more (`done[b]` above).
                let dst =
                    unsafe { std::slice::from_raw_parts_mut(lane.slots[b].0.cast::<T>(), words) };
                fill(j * slot, dst);
                // SAFETY: the destination range [j * slot, j * slot + words) lies inside
                // `dev` (checked above) and no other chunk writes it; the slot is not written
                // again before `done[b]`, recorded after this transfer, has completed.
                unsafe {
                    result::memcpy_htod_async(
                        base + (j * slot * 4) as u64,
                        &*dst,
                        stream.cu_stream(),
                    )
                }
                .map_err(cuda_err)?;
                lane.done[b].record(stream).map_err(cuda_err)?;
                lane.used[b] = true;
                queued(j)?;
            }
        })
    }
}
