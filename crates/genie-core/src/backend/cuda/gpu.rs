//! The device side of the CUDA backend: one context and its compiled kernels ([`Gpu`]), an index
//! uploaded once ([`GpuResident`]), and the run of one batch: lay out the per-query c-PQ buffers,
//! copy the work list, clear, match, select, copy the top-k back, rerun flagged queries.

use super::kernels::{ptx_for, Kernel};
use crate::backend::{Method, ResidentIndex, SearchParams, StageTimes};
use crate::cpq::{bits_for_bound, table_slots, words_for};
use crate::error::{GenieError, Result};
use crate::index::{InvertedIndex, PreparedQuery};
use crate::model::Hit;
use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use std::sync::{Arc, Mutex};

fn cuda_err(e: impl std::fmt::Debug) -> GenieError {
    GenieError::Cuda(format!("{e:?}"))
}

/// Threads per block of every kernel.
const BLOCK: u32 = 256;
/// Attempts for a query whose table filled or whose Gate lost a race.
const MAX_ATTEMPTS: usize = 6;
const FLAG_TABLE_FULL: u32 = 1;

/// A CUDA context with the kernels loaded.
pub(crate) struct Gpu {
    ctx: Arc<CudaContext>,
    name: String,
    arch: String,
    cpq_init: CudaFunction,
    cpq_match: CudaFunction,
    cpq_select: CudaFunction,
    ct_match: CudaFunction,
    ct_select: CudaFunction,
}

impl Gpu {
    /// Opens device `ordinal` and loads the kernels compiled for its architecture.
    pub(crate) fn open(ordinal: usize) -> Result<Self> {
        let ctx = CudaContext::new(ordinal).map_err(cuda_err)?;
        let (major, minor) = ctx.compute_capability().map_err(cuda_err)?;
        let arch = format!("sm_{major}{minor}");
        let ptx = ptx_for(Kernel::Cpq, &arch)?;
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
            .map_err(cuda_err)?;
        let f = |name: &str| module.load_function(name).map_err(cuda_err);
        Ok(Self {
            name: ctx.name().map_err(cuda_err)?,
            cpq_init: f("cpq_init")?,
            cpq_match: f("cpq_match")?,
            cpq_select: f("cpq_select")?,
            ct_match: f("ct_match")?,
            ct_select: f("ct_select")?,
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
}

/// An index resident on the GPU.
pub(crate) struct GpuResident {
    gpu: Arc<Gpu>,
    stream: Arc<CudaStream>,
    index: Arc<InvertedIndex>,
    postings: CudaSlice<u32>,
    times: Mutex<StageTimes>,
    /// One batch at a time on the stream.
    busy: Mutex<()>,
}

impl GpuResident {
    pub(crate) fn new(gpu: Arc<Gpu>, index: Arc<InvertedIndex>) -> Result<Self> {
        let stream = gpu.ctx.new_stream().map_err(cuda_err)?;
        let host: &[u32] = if index.postings().is_empty() {
            &[0]
        } else {
            index.postings()
        };
        let postings = stream.clone_htod(host).map_err(cuda_err)?;
        stream.synchronize().map_err(cuda_err)?;
        Ok(Self {
            gpu,
            stream,
            index,
            postings,
            times: Mutex::default(),
            busy: Mutex::new(()),
        })
    }
}

/// Per-query buffer layout of a batch (see the metadata comment in kernels/cpq.cu).
struct Layout {
    meta: Vec<u32>,
    bitmap_words: u64,
    table_slots: u64,
    zipper: u64,
}

fn layout(
    queries: &[PreparedQuery],
    slots_of: &[u64],
    n: u32,
    params: &SearchParams,
) -> Result<Layout> {
    let mut l = Layout {
        meta: Vec::with_capacity(queries.len() * 8),
        bitmap_words: 0,
        table_slots: 0,
        zipper: 0,
    };
    let cpq = params.method == Method::Cpq;
    for (q, &table) in queries.iter().zip(slots_of) {
        let bits = bits_for_bound(q.bound);
        let words = if cpq {
            (words_for(n, bits) as u64).next_multiple_of(4)
        } else {
            0
        };
        let slots = if cpq { table } else { 0 };
        let za_off = u32::try_from(l.zipper).map_err(|_| {
            GenieError::Capacity("ZipperArrays of one batch exceed 2^32 entries".into())
        })?;
        let (b, t) = (l.bitmap_words, l.table_slots);
        l.meta.extend_from_slice(&[
            b as u32,
            (b >> 32) as u32,
            t as u32,
            (t >> 32) as u32,
            za_off,
            bits.trailing_zeros(),
            slots as u32,
            q.bound,
        ]);
        l.bitmap_words += words;
        l.table_slots += slots;
        l.zipper += u64::from(q.bound) + 2;
    }
    Ok(l)
}

/// The table of a query whose table filled. Thousands of threads may pass the Gate before AT
/// rises, all of one count, so a burst can need a slot per object it touches: the first rerun
/// grows the table 16-fold, the next takes two slots per posting the query scans, which no run
/// can fill (each insert adds at most one entry).
fn grown_slots(index: &InvertedIndex, q: &PreparedQuery, slots: u64, attempt: usize) -> u64 {
    let worst: u64 = q
        .items
        .iter()
        .filter_map(|it| index.slice_of(it.lo, it.hi))
        .map(|(a, b)| b - a)
        .sum();
    let worst = (2 * worst).max(16).next_power_of_two();
    if attempt == 0 {
        (slots * 16).min(worst).max(slots)
    } else {
        worst.max(slots)
    }
}

/// The outcome of one run of a batch on the device.
struct Run {
    hits: Vec<Vec<Hit>>,
    flags: Vec<u32>,
}

fn timing_event(stream: &CudaStream) -> Result<CudaEvent> {
    stream
        .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(cuda_err)
}

impl GpuResident {
    fn run_once(
        &self,
        queries: &[PreparedQuery],
        params: &SearchParams,
        slots_of: &[u64],
    ) -> Result<Run> {
        let (gpu, s) = (&self.gpu, &self.stream);
        let n = self.index.num_objects();
        let nq = queries.len();
        let k = params.k;
        let kp = k.next_power_of_two();
        let l = layout(queries, slots_of, n, params)?;
        let wl = self.index.work_list(queries, params.sublist_len);
        let mut tasks: Vec<u32> = Vec::with_capacity(wl.tasks.len() * 6);
        for t in &wl.tasks {
            tasks.extend_from_slice(&[
                t.start as u32,
                (t.start >> 32) as u32,
                t.len,
                t.query,
                t.weight,
                0,
            ]);
        }
        let ntasks = u32::try_from(wl.tasks.len())
            .map_err(|_| GenieError::Capacity("more than 2^32 tasks in one batch".into()))?;
        tasks.resize(tasks.len().max(6), 0);

        let e0 = timing_event(s)?;
        let tasks_d = s.clone_htod(&tasks).map_err(cuda_err)?;
        let meta_d = s.clone_htod(&l.meta).map_err(cuda_err)?;
        let e1 = timing_event(s)?;
        let flags = s.alloc_zeros::<u32>(nq).map_err(cuda_err)?;
        let out_count = s.alloc_zeros::<u32>(nq).map_err(cuda_err)?;
        // SAFETY: every key a query returns is written by the select kernel before it is counted.
        let keys = unsafe { s.alloc::<u64>(nq * kp as usize) }.map_err(cuda_err)?;
        let zipper = s
            .alloc_zeros::<u32>(l.zipper.max(1) as usize)
            .map_err(cuda_err)?;
        let nq32 = nq as u32;
        let grid_tasks = ntasks.clamp(1, 1 << 22);
        let cfg = |blocks: u32| LaunchConfig {
            grid_dim: (blocks.max(1), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut batch_bytes = (tasks.len() * 4 + l.meta.len() * 4 + nq * 8 + nq * kp as usize * 8)
            as u64
            + l.zipper * 4;
        let (e2, e3);
        match params.method {
            Method::Cpq => {
                let bitmaps = s
                    .alloc_zeros::<u32>(l.bitmap_words.max(1) as usize)
                    .map_err(cuda_err)?;
                // SAFETY: cpq_init writes every slot and every AuditThreshold before use.
                let tables =
                    unsafe { s.alloc::<u64>(l.table_slots.max(1) as usize) }.map_err(cuda_err)?;
                let audit = unsafe { s.alloc::<u32>(nq) }.map_err(cuda_err)?;
                batch_bytes += l.bitmap_words * 4 + l.table_slots * 8 + nq as u64 * 4;
                let total_slots = l.table_slots;
                let init_blocks =
                    (total_slots.max(nq as u64).div_ceil(u64::from(BLOCK))).min(1 << 16) as u32;
                // SAFETY (all launches): argument types and order match kernels/cpq.cu; every
                // buffer is sized by `layout` and the work list as the kernels index it.
                unsafe {
                    s.launch_builder(&gpu.cpq_init)
                        .arg(&tables)
                        .arg(&total_slots)
                        .arg(&audit)
                        .arg(&nq32)
                        .launch(cfg(init_blocks))
                        .map_err(cuda_err)?;
                    if ntasks > 0 {
                        s.launch_builder(&gpu.cpq_match)
                            .arg(&self.postings)
                            .arg(&tasks_d)
                            .arg(&ntasks)
                            .arg(&meta_d)
                            .arg(&bitmaps)
                            .arg(&zipper)
                            .arg(&audit)
                            .arg(&tables)
                            .arg(&flags)
                            .arg(&k)
                            .launch(cfg(grid_tasks))
                            .map_err(cuda_err)?;
                    }
                }
                e2 = timing_event(s)?;
                unsafe {
                    s.launch_builder(&gpu.cpq_select)
                        .arg(&meta_d)
                        .arg(&bitmaps)
                        .arg(&audit)
                        .arg(&tables)
                        .arg(&nq32)
                        .arg(&n)
                        .arg(&k)
                        .arg(&kp)
                        .arg(&keys)
                        .arg(&out_count)
                        .arg(&flags)
                        .launch(cfg(nq32))
                        .map_err(cuda_err)?;
                }
                e3 = timing_event(s)?;
            }
            Method::CountTable => {
                let counts = s
                    .alloc_zeros::<u32>((nq * n as usize).max(1))
                    .map_err(cuda_err)?;
                batch_bytes += nq as u64 * u64::from(n) * 4;
                unsafe {
                    if ntasks > 0 {
                        s.launch_builder(&gpu.ct_match)
                            .arg(&self.postings)
                            .arg(&tasks_d)
                            .arg(&ntasks)
                            .arg(&counts)
                            .arg(&n)
                            .launch(cfg(grid_tasks))
                            .map_err(cuda_err)?;
                    }
                }
                e2 = timing_event(s)?;
                unsafe {
                    s.launch_builder(&gpu.ct_select)
                        .arg(&meta_d)
                        .arg(&counts)
                        .arg(&zipper)
                        .arg(&nq32)
                        .arg(&n)
                        .arg(&k)
                        .arg(&kp)
                        .arg(&keys)
                        .arg(&out_count)
                        .arg(&flags)
                        .launch(cfg(nq32))
                        .map_err(cuda_err)?;
                }
                e3 = timing_event(s)?;
            }
        }
        let flags_h = s.clone_dtoh(&flags).map_err(cuda_err)?;
        let counts_h = s.clone_dtoh(&out_count).map_err(cuda_err)?;
        let keys_h = s.clone_dtoh(&keys).map_err(cuda_err)?;
        let e4 = timing_event(s)?;
        s.synchronize().map_err(cuda_err)?;
        gpu.ctx.check_err().map_err(cuda_err)?;
        {
            let ms =
                |a: &CudaEvent, b: &CudaEvent| a.elapsed_ms(b).map(f64::from).map_err(cuda_err);
            let mut t = self
                .times
                .lock()
                .map_err(|_| GenieError::Internal("stage timer poisoned".into()))?;
            t.transfer_in_ms += ms(&e0, &e1)?;
            t.match_ms += ms(&e1, &e2)?;
            t.select_ms += ms(&e2, &e3)?;
            t.transfer_out_ms += ms(&e3, &e4)?;
            t.batches += 1;
            t.peak_batch_bytes = t.peak_batch_bytes.max(batch_bytes);
        }
        let hits = (0..nq)
            .map(|q| {
                let base = q * kp as usize;
                keys_h[base..base + counts_h[q] as usize]
                    .iter()
                    .map(|&key| Hit {
                        id: key as u32,
                        count: !((key >> 32) as u32),
                    })
                    .collect()
            })
            .collect();
        Ok(Run {
            hits,
            flags: flags_h,
        })
    }
}

impl ResidentIndex for GpuResident {
    fn index(&self) -> &InvertedIndex {
        &self.index
    }

    fn search_batch(
        &self,
        batch: &[PreparedQuery],
        params: &SearchParams,
    ) -> Result<Vec<Vec<Hit>>> {
        if params.k == 0 || batch.is_empty() {
            return Ok(vec![Vec::new(); batch.len()]);
        }
        let _busy = self
            .busy
            .lock()
            .map_err(|_| GenieError::Internal("GPU stream lock poisoned".into()))?;
        let mut out: Vec<Vec<Hit>> = vec![Vec::new(); batch.len()];
        let mut pending: Vec<usize> = (0..batch.len()).collect();
        let n = self.index.num_objects();
        let mut slots: Vec<u64> = batch
            .iter()
            .map(|q| table_slots(params.k, q.bound, n, params.table_factor) as u64)
            .collect();
        let mut last_flags = [0usize; 3];
        for attempt in 0..MAX_ATTEMPTS {
            let queries: Vec<PreparedQuery> = pending.iter().map(|&i| batch[i].clone()).collect();
            let pending_slots: Vec<u64> = pending.iter().map(|&i| slots[i]).collect();
            let run = self.run_once(&queries, params, &pending_slots)?;
            let mut again = Vec::new();
            let mut table_full = false;
            for ((&i, hits), &flag) in pending.iter().zip(run.hits).zip(&run.flags) {
                if flag == 0 {
                    out[i] = hits;
                } else {
                    if flag & FLAG_TABLE_FULL != 0 {
                        table_full = true;
                        slots[i] = grown_slots(&self.index, &batch[i], slots[i], attempt);
                    }
                    for (bit, n) in last_flags.iter_mut().enumerate() {
                        *n += usize::from(flag & (1 << bit) != 0);
                    }
                    again.push(i);
                }
            }
            if again.is_empty() {
                return Ok(out);
            }
            log::debug!(
                "attempt {attempt}: rerunning {} queries (table full: {table_full})",
                again.len()
            );
            if let Ok(mut t) = self.times.lock() {
                t.reruns += again.len() as u64;
            }
            pending = again;
            if attempt + 1 < MAX_ATTEMPTS {
                last_flags = [0; 3];
            }
        }
        Err(GenieError::Internal(format!(
            "{} queries still flagged after {MAX_ATTEMPTS} runs (table full {}, too many candidates {}, tie fill short {})",
            pending.len(),
            last_flags[0],
            last_flags[1],
            last_flags[2]
        )))
    }

    fn take_stage_times(&self) -> Option<StageTimes> {
        self.times.lock().ok().map(|mut t| std::mem::take(&mut *t))
    }
}
