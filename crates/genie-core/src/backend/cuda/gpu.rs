//! The device side of the CUDA backend: one context and its compiled kernels ([`Gpu`]), an index
//! uploaded once ([`GpuResident`]), and the pipelined run of a sequence of batches.
//!
//! Three streams: `up` copies a batch's items and metadata from pinned host memory, `compute`
//! clears the counters and runs match and select, `down` copies the top-k back into pinned host
//! memory. Two slots of input and output buffers alternate, so the host prepares batch i + 1 and
//! `up` copies it while `compute` runs batch i and `down` returns batch i - 1. The counting
//! buffers (bitmaps, tables, ZipperArrays) are used by `compute` alone and reused by every batch.
//! Queries flagged by the kernels (full table, lost race) are rerun with a larger table. A search's
//! object mask is uploaded once ([`LiveMask`], kept until a search brings another) and handed to
//! every match kernel as `live`.

use super::args::{push_cpq_counting, push_postings, push_select_tail, MatchWork};
use super::buffers::{Grow, Slot};
use super::dense::{fill_on_device, Dense};
use super::live::LiveMask;
use super::plan::{
    grown_slots, plan, sweep_tiles, Plan, TILE_MAX_LISTS, TILE_WORDS, TILE_WORDS_WIDE,
};
use super::postings::{device_postings, upload_unpacked, DevicePostings};
use super::upload::{Stager, LANES, SLOT_BYTES, WRITE_COMBINED};
use super::{cuda_err, PostingsForm};
use crate::backend::{Method, ResidentIndex, SearchParams, StageTimes};
use crate::cpq::table_slots;
use crate::error::{GenieError, Result};
use crate::index::{InvertedIndex, PreparedQuery};
use crate::model::Hit;
use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, LaunchConfig,
    PushKernelArg,
};
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Threads per block of every kernel.
const BLOCK: u32 = 256;
/// Runs of a flagged query before giving up (the third has a table no run can fill).
const MAX_ATTEMPTS: usize = 4;
const FLAG_TABLE_FULL: u32 = 1;
/// Flagged queries rerun per batch.
const RERUN_BATCH: usize = 64;

/// A CUDA context with the kernels loaded.
pub(crate) struct Gpu {
    ctx: Arc<CudaContext>,
    name: String,
    arch: String,
    cpq_init: CudaFunction,
    cpq_select: CudaFunction,
    ct_select: CudaFunction,
    unpack_postings: CudaFunction,
    /// `dense_bitmaps` and the match kernels, each for plain postings (`[0]`) and packed (`[1]`).
    dense_bitmaps: [CudaFunction; 2],
    cpq_match: [CudaFunction; 2],
    ct_match: [CudaFunction; 2],
    tile_match: [CudaFunction; 2],
    tile_match16: [CudaFunction; 2],
    tile_match_wide: [CudaFunction; 2],
    tile_match16_wide: [CudaFunction; 2],
    /// Pinned staging for index uploads.
    staging: Stager,
    /// Streams and counting buffers of a resident index that was dropped, for the next one (the
    /// parts of a multi-loaded index reuse them).
    spare: Mutex<Option<State>>,
}

impl Gpu {
    /// Opens device `ordinal` and loads the kernels compiled for its architecture.
    pub(crate) fn open(ordinal: usize) -> Result<Self> {
        let t = std::time::Instant::now();
        let ctx = CudaContext::new(ordinal).map_err(cuda_err)?;
        let context_ms = t.elapsed().as_secs_f64() * 1e3;
        let (major, minor) = ctx.compute_capability().map_err(cuda_err)?;
        let arch = format!("sm_{major}{minor}");
        let module = super::kernels::load(&ctx, &super::kernels::CPQ, &arch)?;
        let f = |name: &str| module.load_function(name).map_err(cuda_err);
        // each match kernel and its `_packed` twin; the tiled ones keep their counters in
        // `words` of dynamic shared memory (0: the others)
        let pair = |name: &str, words: u32| {
            let load = |name: &str| {
                let func = f(name)?;
                if words > 0 {
                    func.set_attribute(
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        (words * 4) as i32,
                    )
                    .map_err(cuda_err)?;
                }
                Ok::<_, GenieError>(func)
            };
            Ok::<_, GenieError>([load(name)?, load(&format!("{name}_packed"))?])
        };
        let kernels_ms = t.elapsed().as_secs_f64() * 1e3 - context_ms;
        // the staging is pinned now, while the index may still be loading elsewhere, rather than
        // on the first upload
        let staging = Stager::new(
            &ctx,
            LANES.min(rayon::current_num_threads()),
            SLOT_BYTES,
            WRITE_COMBINED,
        )?;
        log::debug!(
            "GPU {ordinal}: context {context_ms:.1} ms, kernels {kernels_ms:.1} ms, pinned staging ({} MiB) {:.1} ms",
            staging.pinned_bytes() >> 20,
            t.elapsed().as_secs_f64() * 1e3 - context_ms - kernels_ms
        );
        Ok(Self {
            name: ctx.name().map_err(cuda_err)?,
            cpq_init: f("cpq_init")?,
            cpq_select: f("cpq_select")?,
            ct_select: f("ct_select")?,
            unpack_postings: f("unpack_postings")?,
            dense_bitmaps: [f("dense_bitmaps")?, f("dense_bitmaps_packed")?],
            cpq_match: pair("cpq_match", 0)?,
            ct_match: pair("ct_match", 0)?,
            tile_match: pair("tile_match", TILE_WORDS)?,
            tile_match16: pair("tile_match16", TILE_WORDS)?,
            tile_match_wide: pair("tile_match_wide", TILE_WORDS_WIDE)?,
            tile_match16_wide: pair("tile_match16_wide", TILE_WORDS_WIDE)?,
            staging,
            spare: Mutex::new(None),
            ctx,
            arch,
        })
    }

    pub(crate) fn free_memory(&self) -> u64 {
        self.ctx
            .mem_get_info()
            .map(|(free, _)| free as u64)
            .unwrap_or(0)
    }

    pub(crate) fn name(&self) -> String {
        format!("{} ({})", self.name, self.arch)
    }

    /// Copies postings to the device through the pinned staging lanes ([`Stager`]).
    pub(super) fn upload(&self, stream: &Arc<CudaStream>, host: &[u32]) -> Result<CudaSlice<u32>> {
        let (dev, times) = self.staging.upload(stream, host)?;
        let bytes = std::mem::size_of_val(host) as f64;
        if bytes < 1e6 {
            // (an empty set of dense bitmaps is one word)
            return Ok(dev);
        }
        log::debug!(
            "uploaded {:.1} MB staged in {:.1} ms (device allocation {:.1} ms, copies {:.1} ms: {:.1} GB/s): {:.1} GB/s",
            bytes / 1e6,
            times.alloc_ms + times.copy_ms,
            times.alloc_ms,
            times.copy_ms,
            bytes / times.copy_ms / 1e6,
            bytes / (times.alloc_ms + times.copy_ms) / 1e6
        );
        Ok(dev)
    }
}

/// Queries of a batch from which its answers are made on every core (fewer: on the calling thread,
/// as a server's small batches are).
const PARALLEL_UNPACK: usize = 64;

/// The null pointer of a tiled count that is not a sweep.
static NO_CARRY: u64 = 0;

/// Everything the stream work touches, behind one lock.
struct State {
    up: Arc<CudaStream>,
    compute: Arc<CudaStream>,
    down: Arc<CudaStream>,
    bitmaps: Grow<u32>,
    tables: Grow<u64>,
    zipper: Grow<u32>,
    audit: Grow<u32>,
    counts: Grow<u32>,
    /// The list cursors a sweep carries from one range of tiles to the next.
    carried: Grow<u32>,
    slots: [Slot; 2],
    times: StageTimes,
    /// The object mask last uploaded (kept for the next search that brings the same one).
    live: Option<Arc<LiveMask>>,
    /// The host buffer batches are planned into (kept, so its pages stay mapped).
    plan_buf: Vec<u32>,
}

impl State {
    /// Frees the counting buffers of the other method, so that memory serves the one in use.
    fn keep_buffers_of(&mut self, method: Method) -> Result<()> {
        self.compute.synchronize().map_err(cuda_err)?;
        match method {
            Method::Cpq => self.counts.0 = None,
            Method::CountTable => {
                self.bitmaps.0 = None;
                self.tables.0 = None;
            }
        }
        self.compute.synchronize().map_err(cuda_err)
    }
}

/// The locked state of a resident index.
struct StateGuard<'a>(std::sync::MutexGuard<'a, Option<State>>);

impl std::ops::Deref for StateGuard<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        self.0
            .as_ref()
            .expect("checked in lock(); taken only in drop")
    }
}

impl std::ops::DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut State {
        self.0
            .as_mut()
            .expect("checked in lock(); taken only in drop")
    }
}

/// An index resident on the GPU.
pub(crate) struct GpuResident {
    gpu: Arc<Gpu>,
    index: Arc<InvertedIndex>,
    postings: DevicePostings,
    /// The Position Map (list offsets), for the tiled kernel's keyword ranges.
    offsets: CudaSlice<u64>,
    /// The dense lists' bitmaps, rebuilt when a search asks for another `gpu_dense`.
    dense: Mutex<Arc<Dense>>,
    /// `None` only while being dropped.
    state: Mutex<Option<State>>,
}

impl Drop for GpuResident {
    fn drop(&mut self) {
        // hand the streams and counting buffers to the next index on this device
        let state = self.state.get_mut().ok().and_then(|s| s.take());
        if let (Some(mut st), Ok(mut spare)) = (state, self.gpu.spare.lock()) {
            if spare.is_none() && st.compute.synchronize().is_ok() {
                st.times = StageTimes::default();
                st.live = None;
                *spare = Some(st);
            }
        }
    }
}

/// One search's settings and the device arrays it reads besides the index: the dense lists'
/// bitmaps and its object mask's words (`live`, if it has a mask).
#[derive(Clone, Copy)]
struct Search<'a> {
    params: &'a SearchParams,
    dense: &'a Dense,
    live: Option<&'a CudaSlice<u32>>,
}

fn timing_event(stream: &CudaStream) -> Result<CudaEvent> {
    stream
        .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(cuda_err)
}

impl GpuResident {
    pub(crate) fn new(
        gpu: Arc<Gpu>,
        index: Arc<InvertedIndex>,
        form: PostingsForm,
    ) -> Result<Self> {
        let spare = gpu.spare.lock().ok().and_then(|mut s| s.take());
        let state = match spare {
            Some(st) => st,
            None => {
                let new_stream = || gpu.ctx.new_stream().map_err(cuda_err);
                State {
                    up: new_stream()?,
                    compute: new_stream()?,
                    down: new_stream()?,
                    bitmaps: Grow(None),
                    tables: Grow(None),
                    zipper: Grow(None),
                    audit: Grow(None),
                    counts: Grow(None),
                    carried: Grow(None),
                    slots: [Slot::new(), Slot::new()],
                    times: StageTimes::default(),
                    live: None,
                    plan_buf: Vec::new(),
                }
            }
        };
        let t = std::time::Instant::now();
        let up = |host: &[u32]| gpu.upload(&state.up, host);
        let unpacked = |p: &_| upload_unpacked(&gpu.staging, &gpu.unpack_postings, &state.up, p);
        let free = gpu.free_memory();
        let postings = device_postings(index.list_array(), form, free, up, unpacked)?;
        let offsets = state.up.clone_htod(index.offsets()).map_err(cuda_err)?;
        let dense = Dense::build(
            &index,
            crate::backend::DEFAULT_GPU_DENSE,
            gpu.free_memory(),
            up,
            |f, l, w| fill_on_device(&gpu.dense_bitmaps, &state.up, &postings, f, l, w),
        )?;
        log::debug!(
            "uploaded {} postings ({}, {:.1} bits a posting) in {:.3} s",
            index.num_postings(),
            postings.name(),
            8.0 * postings.bytes() as f64 / index.num_postings().max(1) as f64,
            t.elapsed().as_secs_f64()
        );
        Ok(Self {
            gpu,
            index,
            postings,
            offsets,
            dense: Mutex::new(Arc::new(dense)),
            state: Mutex::new(Some(state)),
        })
    }

    /// The dense bitmaps for `params` (rebuilt if built for another `gpu_dense`).
    fn dense_for(&self, st: &State, params: &SearchParams) -> Result<Arc<Dense>> {
        let mut d = self
            .dense
            .lock()
            .map_err(|_| GenieError::Internal("dense lists lock poisoned".into()))?;
        if d.div != params.gpu_dense && params.method == Method::Cpq && params.gpu_tiles {
            st.compute.synchronize().map_err(cuda_err)?;
            *d = Arc::new(Dense::build(
                &self.index,
                params.gpu_dense,
                self.gpu.free_memory(),
                |host| self.gpu.upload(&st.up, host),
                |f, l, w| fill_on_device(&self.gpu.dense_bitmaps, &st.up, &self.postings, f, l, w),
            )?);
        }
        Ok(d.clone())
    }

    fn lock(&self) -> Result<StateGuard<'_>> {
        let guard = self
            .state
            .lock()
            .map_err(|_| GenieError::Internal("GPU state lock poisoned".into()))?;
        if guard.is_none() {
            return Err(GenieError::Internal("GPU state already released".into()));
        }
        Ok(StateGuard(guard))
    }

    /// Copies a batch in and launches its kernels; its results arrive in the slot's pinned buffers.
    fn launch(
        &self,
        st: &mut State,
        si: usize,
        p: &Plan,
        first: usize,
        search: Search<'_>,
    ) -> Result<()> {
        let Search {
            params,
            dense,
            live,
        } = search;
        let gpu = &self.gpu;
        let State {
            up,
            compute,
            down,
            bitmaps,
            tables,
            zipper,
            audit,
            counts,
            carried,
            slots,
            times,
            ..
        } = st;
        let slot = &mut slots[si];
        let (nq, k, n) = (p.nq, params.k, self.index.num_objects());
        let kp = k.next_power_of_two() as usize;

        // up: the batch's items, task prefix sums and metadata
        // the slot's previous upload has finished reading its pinned input (it has, when that
        // batch was finished; this also covers a run that stopped on an error)
        if let Some(e1) = slot.events.get(1) {
            e1.synchronize().map_err(cuda_err)?;
        }
        let h_in = slot.h_in.get(&gpu.ctx, p.len, true)?;
        {
            use rayon::prelude::*;
            h_in.as_mut_slice().map_err(cuda_err)?[..p.len]
                .par_chunks_mut(1 << 18)
                .zip(p.input[..p.len].par_chunks(1 << 18))
                .for_each(|(d, s)| d.copy_from_slice(s));
        }
        let cap = h_in.len();
        let d_in = slot.d_in.get(up, cap)?;
        if let Some(e) = slot.consumed.take() {
            up.wait(&e).map_err(cuda_err)?;
        }
        let e0 = timing_event(up)?;
        {
            // only the plan's prefix of the (reused, possibly larger) pinned buffer
            let src = &h_in.as_slice().map_err(cuda_err)?[..p.len];
            let (dst, _record) = d_in.device_ptr_mut(up);
            // SAFETY: `d_in` holds at least `cap >= p.len` elements; `src` is pinned and is not
            // written again before this copy completes: the next launch on this slot first
            // waits for the event recorded right after it (`e1`).
            unsafe { cudarc::driver::result::memcpy_htod_async(dst, src, up.cu_stream()) }
                .map_err(cuda_err)?;
        }
        let e1 = timing_event(up)?;
        compute.wait(&e1).map_err(cuda_err)?;
        // stage clocks start on the stream that runs the stage, after its waits
        let e1c = timing_event(compute)?;

        // compute: clear, match, select
        let d_keys = slot.d_keys.get(compute, nq * kp)?;
        let d_counts = slot.d_counts.get(compute, nq)?;
        let d_flags = slot.d_flags.get(compute, nq)?;
        compute
            .memset_zeros(&mut d_flags.slice_mut(..nq))
            .map_err(cuda_err)?;
        compute
            .memset_zeros(&mut d_counts.slice_mut(..nq))
            .map_err(cuda_err)?;
        let za = zipper.get(compute, p.zipper as usize)?;
        compute
            .memset_zeros(&mut za.slice_mut(..p.zipper.max(1) as usize))
            .map_err(cuda_err)?;
        let items = d_in.slice(..p.task_start_offset().max(1));
        let task_start = d_in.slice(p.task_start_offset()..p.meta_offset());
        let meta = d_in.slice(p.meta_offset()..p.meta_offset() + 8 * nq);
        let (nq32, kp32) = (nq as u32, kp as u32);
        let cfg = |blocks: u32| LaunchConfig {
            grid_dim: (blocks.max(1), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let form = self.postings.kernels();
        let grid_tasks = p.ntasks.clamp(1, 1 << 22);
        let sublist = params.sublist_len.max(1);
        let work = MatchWork {
            postings: &self.postings,
            live,
            items: &items,
            task_start: &task_start,
            nitems: &p.nitems,
            ntasks: &p.ntasks,
            sublist: &sublist,
        };
        let sizes = [nq32, n, k, kp32];
        let mut batch_bytes = (cap * 4 + nq * (kp * 8 + 8)) as u64 + p.zipper * 4;
        let (e2, e3);
        // SAFETY (all launches): argument types and order match kernels/cpq.cu; every buffer is at
        // least as large as the plan's offsets and counts say, and the kernels index no further.
        match params.method {
            Method::Cpq => {
                let bm = bitmaps.get(compute, p.bitmap_words as usize)?;
                if !p.tiled {
                    // the tiled kernel writes every count word itself
                    compute
                        .memset_zeros(&mut bm.slice_mut(..p.bitmap_words.max(1) as usize))
                        .map_err(cuda_err)?;
                }
                let tab = tables.get(compute, p.table_slots as usize)?;
                let at = audit.get(compute, nq)?;
                batch_bytes += p.bitmap_words * 4 + p.table_slots * 8 + nq as u64 * 4;
                let total_slots = p.table_slots;
                // the tiled count keeps each query's candidates as a list (kernels/cpq.cu
                // `list_insert`): only its length is cleared, not every slot
                let listed = u32::from(p.tiled);
                let init_blocks = if p.tiled {
                    nq as u64
                } else {
                    total_slots.max(nq as u64)
                }
                .div_ceil(u64::from(BLOCK))
                .min(1 << 16) as u32;
                unsafe {
                    compute
                        .launch_builder(&gpu.cpq_init)
                        .arg(&mut *tab)
                        .arg(&total_slots)
                        .arg(&mut *at)
                        .arg(&nq32)
                        .arg(&meta)
                        .arg(&listed)
                        .launch(cfg(init_blocks))
                        .map_err(cuda_err)?;
                    if p.tiled {
                        let ntiles = n.div_ceil(p.tile_words * (32 / p.tile_bits));
                        let sweep = sweep_tiles(nq, ntiles, p.postings, params.gpu_sweep_tiles);
                        // enough (query, tile range) jobs to fill the GPU several times over
                        let chunks = (4096u32.div_ceil(nq32.max(1))).clamp(1, ntiles.max(1));
                        let tiles_per_block = sweep.unwrap_or(ntiles.div_ceil(chunks).max(1));
                        let ranges = ntiles.div_ceil(tiles_per_block);
                        let jobs = match sweep {
                            Some(_) => u64::from(nq32),
                            None => u64::from(nq32) * u64::from(ranges),
                        }
                        .min(1 << 24) as u32;
                        let tcfg = LaunchConfig {
                            grid_dim: (jobs.max(1), 1, 1),
                            block_dim: (512, 1, 1),
                            shared_mem_bytes: p.tile_words * 4,
                        };
                        let dense_recs = d_in.slice(p.dense_offset()..p.dense_start_offset());
                        let dense_start =
                            d_in.slice(p.dense_start_offset()..p.dense_start_offset() + nq + 1);
                        let kernel = &match (p.tile_bits, p.tile_words == TILE_WORDS_WIDE) {
                            (8, false) => &gpu.tile_match,
                            (8, true) => &gpu.tile_match_wide,
                            (_, false) => &gpu.tile_match16,
                            (_, true) => &gpu.tile_match16_wide,
                        }[form];
                        let mut carried = match sweep {
                            Some(_) => Some(carried.get(compute, nq * TILE_MAX_LISTS)?),
                            None => None,
                        };
                        // one launch, or a sweep: one launch per range of tiles
                        for range in 0..if sweep.is_some() { ranges } else { 1 } {
                            let mut args = compute.launch_builder(kernel);
                            push_postings(&mut args, &self.postings, live);
                            args.arg(&self.offsets)
                                .arg(&items)
                                .arg(&task_start)
                                .arg(&nq32)
                                .arg(&n)
                                .arg(&tiles_per_block);
                            push_cpq_counting(&mut args, &meta, [bm, za, at], tab, d_flags, &k);
                            args.arg(&dense.bits)
                                .arg(&dense.words)
                                .arg(&dense_recs)
                                .arg(&dense_start)
                                .arg(&range);
                            match carried.as_deref_mut() {
                                Some(c) => args.arg(c),
                                None => args.arg(&NO_CARRY),
                            };
                            args.launch(tcfg).map_err(cuda_err)?;
                        }
                    } else if p.ntasks > 0 {
                        let mut args = compute.launch_builder(&gpu.cpq_match[form]);
                        work.push(&mut args);
                        push_cpq_counting(&mut args, &meta, [bm, za, at], tab, d_flags, &k);
                        args.launch(cfg(grid_tasks)).map_err(cuda_err)?;
                    }
                }
                e2 = timing_event(compute)?;
                let mut args = compute.launch_builder(&gpu.cpq_select);
                args.arg(&meta)
                    .arg(&mut *bm)
                    .arg(&*at)
                    .arg(&*tab)
                    .arg(&listed);
                push_select_tail(&mut args, &sizes, d_keys, d_counts, d_flags);
                unsafe { args.launch(cfg(nq32)) }.map_err(cuda_err)?;
                e3 = timing_event(compute)?;
            }
            Method::CountTable => {
                let len = (nq * n as usize).max(1);
                let c = counts.get(compute, len)?;
                compute
                    .memset_zeros(&mut c.slice_mut(..len))
                    .map_err(cuda_err)?;
                batch_bytes += len as u64 * 4;
                unsafe {
                    if p.ntasks > 0 {
                        let mut args = compute.launch_builder(&gpu.ct_match[form]);
                        work.push(&mut args);
                        args.arg(&mut *c)
                            .arg(&n)
                            .launch(cfg(grid_tasks))
                            .map_err(cuda_err)?;
                    }
                }
                e2 = timing_event(compute)?;
                let mut args = compute.launch_builder(&gpu.ct_select);
                args.arg(&meta).arg(&*c).arg(&mut *za);
                push_select_tail(&mut args, &sizes, d_keys, d_counts, d_flags);
                unsafe { args.launch(cfg(nq32)) }.map_err(cuda_err)?;
                e3 = timing_event(compute)?;
            }
        }
        slot.consumed = Some(compute.record_event(None).map_err(cuda_err)?);

        // down: the top-k, counts and flags
        down.wait(&e3).map_err(cuda_err)?;
        let e3d = timing_event(down)?;
        let h_keys = slot.h_keys.get(&gpu.ctx, nq * kp, false)?;
        down.memcpy_dtoh(&d_keys.slice(..nq * kp), h_keys)
            .map_err(cuda_err)?;
        let h_counts = slot.h_counts.get(&gpu.ctx, nq, false)?;
        down.memcpy_dtoh(&d_counts.slice(..nq), h_counts)
            .map_err(cuda_err)?;
        let h_flags = slot.h_flags.get(&gpu.ctx, nq, false)?;
        down.memcpy_dtoh(&d_flags.slice(..nq), h_flags)
            .map_err(cuda_err)?;
        let e4 = timing_event(down)?;
        slot.events = vec![e0, e1, e1c, e2, e3, e3d, e4];
        slot.batch = Some((first, nq, kp));
        times.batches += 1;
        times.peak_batch_bytes = times.peak_batch_bytes.max(batch_bytes);
        Ok(())
    }

    /// Waits for slot `si`'s batch and moves its hits and flags into `out` and `flags` (the host
    /// time it takes counts as `host_finish_ms`).
    fn finish(
        &self,
        st: &mut State,
        si: usize,
        out: &mut [Vec<Hit>],
        flags: &mut [u32],
    ) -> Result<()> {
        let started = std::time::Instant::now();
        let State { slots, times, .. } = st;
        let slot = &mut slots[si];
        let Some((first, nq, kp)) = slot.batch.take() else {
            return Ok(());
        };
        let missing = || GenieError::Internal("result buffers missing".into());
        let keys = slot
            .h_keys
            .0
            .as_ref()
            .ok_or_else(missing)?
            .as_slice()
            .map_err(cuda_err)?;
        let counts = slot
            .h_counts
            .0
            .as_ref()
            .ok_or_else(missing)?
            .as_slice()
            .map_err(cuda_err)?;
        let fl = slot
            .h_flags
            .0
            .as_ref()
            .ok_or_else(missing)?
            .as_slice()
            .map_err(cuda_err)?;
        flags[first..first + nq].copy_from_slice(&fl[..nq]);
        let hits_of = |q: usize| -> Vec<Hit> {
            keys[q * kp..q * kp + (counts[q] as usize).min(kp)]
                .iter()
                .map(|&key| Hit {
                    id: key as u32,
                    count: !((key >> 32) as u32),
                })
                .collect()
        };
        let out = &mut out[first..first + nq];
        if nq >= PARALLEL_UNPACK {
            use rayon::prelude::*;
            out.par_iter_mut()
                .enumerate()
                .for_each(|(q, o)| *o = hits_of(q));
        } else {
            for (q, o) in out.iter_mut().enumerate() {
                *o = hits_of(q);
            }
        }
        if let [e0, e1, e1c, e2, e3, e3d, e4] = &slot.events[..] {
            let ms =
                |a: &CudaEvent, b: &CudaEvent| a.elapsed_ms(b).map(f64::from).map_err(cuda_err);
            times.transfer_in_ms += ms(e0, e1)?;
            times.match_ms += ms(e1c, e2)?;
            times.select_ms += ms(e2, e3)?;
            times.transfer_out_ms += ms(e3d, e4)?;
        }
        times.host_finish_ms += started.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// Runs `batches` of `queries` through the pipeline; returns hits and flags per query.
    fn run(
        &self,
        st: &mut State,
        queries: &[PreparedQuery],
        batches: &[Range<usize>],
        slots_of: &[u64],
        search: Search<'_>,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(Vec<Vec<Hit>>, Vec<u32>)> {
        let mut out = vec![Vec::new(); queries.len()];
        let mut flags = vec![0u32; queries.len()];
        for (b, range) in batches.iter().enumerate() {
            // host work for this batch overlaps the device work of the previous one
            let t = std::time::Instant::now();
            let p = plan(
                &self.index,
                &queries[range.clone()],
                &slots_of[range.clone()],
                search.params,
                &search.dense.keywords,
                std::mem::take(&mut st.plan_buf),
            )?;
            st.times.host_plan_ms += t.elapsed().as_secs_f64() * 1e3;
            let t = std::time::Instant::now();
            self.launch(st, b % 2, &p, range.start, search)?;
            st.times.host_launch_ms += t.elapsed().as_secs_f64() * 1e3;
            st.plan_buf = p.input;
            if b > 0 {
                self.finish(st, (b - 1) % 2, &mut out, &mut flags)?;
                progress(batches[b - 1].end);
            }
        }
        if let Some(last) = batches.last() {
            self.finish(st, (batches.len() - 1) % 2, &mut out, &mut flags)?;
            progress(last.end);
        }
        self.gpu.ctx.check_err().map_err(cuda_err)?;
        Ok((out, flags))
    }
}

impl ResidentIndex for GpuResident {
    fn host_index(&self) -> &Arc<InvertedIndex> {
        &self.index
    }

    /// One batch: [`Self::search_planned`] with the batch as its only batch.
    fn search_batch(
        &self,
        batch: &[PreparedQuery],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>> {
        let whole = std::iter::once(0..batch.len()).collect::<Vec<_>>();
        self.search_planned(batch, &whole, params, &mut |_| {})
    }

    fn search_planned(
        &self,
        prepared: &[PreparedQuery],
        batches: &[Range<usize>],
        params: &SearchParams,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<Hit>>> {
        let n = self.index.num_objects();
        let mask = params.mask_for(n)?;
        if params.k == 0 || prepared.is_empty() {
            progress(prepared.len());
            return Ok(vec![Vec::new(); prepared.len()]);
        }
        let mut st = self.lock()?;
        st.keep_buffers_of(params.method)?;
        let dense = self.dense_for(&st, params)?;
        let live = match mask {
            Some(m) => {
                let State { live, compute, .. } = &mut *st;
                Some(LiveMask::cached(live, m, compute)?)
            }
            None => None,
        };
        let search = Search {
            params,
            dense: &dense,
            live: live.as_deref().map(LiveMask::words),
        };
        let mut slots: Vec<u64> = prepared
            .iter()
            .map(|q| table_slots(params.k, q.bound, n, params.table_factor) as u64)
            .collect();
        let batches = super::plan::pipelined(batches);
        let (mut out, mut flags) =
            self.run(&mut st, prepared, &batches, &slots, search, progress)?;
        let mut pending: Vec<usize> = (0..prepared.len()).filter(|&i| flags[i] != 0).collect();
        for attempt in 0..MAX_ATTEMPTS {
            if pending.is_empty() {
                break;
            }
            st.times.reruns += pending.len() as u64;
            for &i in &pending {
                if flags[i] & FLAG_TABLE_FULL != 0 {
                    slots[i] = grown_slots(&self.index, &prepared[i], slots[i], attempt);
                }
            }
            log::debug!(
                "rerun {attempt}: {} queries ({})",
                pending.len(),
                describe_flags(&flags, &pending)
            );
            let sub: Vec<PreparedQuery> = pending.iter().map(|&i| prepared[i].clone()).collect();
            let sub_slots: Vec<u64> = pending.iter().map(|&i| slots[i]).collect();
            let ranges: Vec<Range<usize>> = (0..sub.len())
                .step_by(RERUN_BATCH)
                .map(|a| a..(a + RERUN_BATCH).min(sub.len()))
                .collect();
            let (hits, sub_flags) =
                self.run(&mut st, &sub, &ranges, &sub_slots, search, &mut |_| {})?;
            for ((&i, h), f) in pending.iter().zip(hits).zip(sub_flags) {
                flags[i] = f;
                out[i] = h;
            }
            pending.retain(|&i| flags[i] != 0);
        }
        if pending.is_empty() {
            return Ok(out);
        }
        Err(GenieError::Internal(format!(
            "{} queries still flagged after {MAX_ATTEMPTS} reruns ({})",
            pending.len(),
            describe_flags(&flags, &pending)
        )))
    }

    fn take_stage_times(&self) -> Option<StageTimes> {
        self.lock().ok().map(|mut st| std::mem::take(&mut st.times))
    }
}

/// How many of `pending` carry each flag.
fn describe_flags(flags: &[u32], pending: &[usize]) -> String {
    let count = |bit: u32| pending.iter().filter(|&&i| flags[i] & bit != 0).count();
    format!(
        "table full {}, too many candidates {}, tie fill short {}",
        count(1),
        count(2),
        count(4)
    )
}
