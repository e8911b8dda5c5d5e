//! The CUDA backend (DESIGN.md section 4): kernels from the crate's `kernels/*.cu` compiled by
//! NVRTC at run time for the device's compute capability, the index uploaded once, batches of
//! queries run through the c-PQ kernels (or the count-table baseline), results identical to the
//! CPU backend.
//!
//! Without the `cuda` feature, or on a machine without a usable GPU, [`CudaBackend::new`] returns
//! [`GenieError::GpuUnavailable`] with the reason, so callers need no `#[cfg]`.
//!
//! Plugins run kernels of their own through the same machinery: a crate declares its source as a
//! [`kernels::KernelModule`] and opens it with [`open_module`], which gives the `cudarc` context,
//! functions and stream its launchers work with (`cudarc` is re-exported, so a plugin builds
//! against the same version).

/// A CUDA driver or NVRTC error as the crate's error.
#[cfg(feature = "cuda")]
pub fn cuda_err(e: impl std::fmt::Debug) -> GenieError {
    GenieError::Cuda(format!("{e:?}"))
}

#[cfg(feature = "cuda")]
pub use cudarc;

#[cfg(feature = "cuda")]
mod args;
#[cfg(feature = "cuda")]
mod buffers;
#[cfg(feature = "cuda")]
mod ceilings;
#[cfg(feature = "cuda")]
mod dense;
#[cfg(feature = "cuda")]
mod gpu;
pub mod kernels;
#[cfg(feature = "cuda")]
mod live;
#[cfg(feature = "cuda")]
mod plan;
#[cfg(feature = "cuda")]
mod postings;
#[cfg(feature = "cuda")]
mod upload;

use super::{Backend, ResidentIndex};
#[cfg(feature = "cuda")]
pub use ceilings::{measure_ceilings, measure_staged_uploads};
#[cfg(feature = "cuda")]
pub use upload::{Stager, UploadTimes, Word, LANES, SLOT_BYTES, WRITE_COMBINED};

/// Hardware ceilings measured on the device (see [`measure_ceilings`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ceilings {
    /// Device-to-device copy, GB/s counting bytes read plus bytes written.
    pub copy_gbs: f64,
    /// Random 32-bit atomic adds into a 1 GiB table, G operations/s.
    pub atomic_gops: f64,
    /// Random increments of 8-bit counters in a 32 KB tile of shared memory (the tiled count's
    /// per-posting work without its lists), G operations/s.
    pub shared_gops: f64,
    /// Host-to-device copy from pinned memory, GB/s.
    pub h2d_pinned_gbs: f64,
    /// Host-to-device copy from pageable memory, GB/s.
    pub h2d_pageable_gbs: f64,
}

/// Without the `cuda` feature there is nothing to measure.
#[cfg(not(feature = "cuda"))]
pub fn measure_ceilings(ordinal: usize) -> Result<Ceilings> {
    let _ = ordinal;
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}

/// The bandwidth of an upload through one layout of pinned staging ([`measure_staged_uploads`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StagedUpload {
    /// Lanes copying in parallel, each with two slots.
    pub lanes: usize,
    /// Bytes per staging slot.
    pub slot_bytes: usize,
    /// Write-combined (uncached) staging, or cached.
    pub write_combined: bool,
    /// Whether this is the layout index uploads use.
    pub default: bool,
    /// Host-to-device GB/s, from the first host copy to the last transfer done.
    pub gbs: f64,
}

/// Without the `cuda` feature there is nothing to measure.
#[cfg(not(feature = "cuda"))]
pub fn measure_staged_uploads(ordinal: usize, bytes: usize) -> Result<Vec<StagedUpload>> {
    let _ = (ordinal, bytes);
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}
use crate::error::{GenieError, Result};
use crate::index::InvertedIndex;
use std::sync::Arc;

/// Checks that the CUDA driver library and a device are present, and that every device has its
/// kernels: built ahead for its architecture ([`kernels::CPQ`]'s builds) or compiled by NVRTC.
/// cudarc is never let panic on a missing library. The error says what is missing.
pub fn cuda_probe() -> std::result::Result<(), String> {
    #[cfg(feature = "cuda")]
    {
        DRIVER_CALLED.store(true, std::sync::atomic::Ordering::SeqCst);
        let t = std::time::Instant::now();
        // SAFETY: only tries to load the shared libraries to see whether they exist.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err("the CUDA driver library (libcuda) is not installed".into());
        }
        let driver = t.elapsed();
        let nvrtc = kernels::nvrtc_available();
        let nvrtc_time = t.elapsed() - driver;
        let count = cudarc::driver::CudaContext::device_count();
        log::trace!(
            "CUDA probe: driver library {driver:.1?}, NVRTC {nvrtc_time:.1?}, devices counted {:.1?}",
            t.elapsed() - driver - nvrtc_time
        );
        let n = match count {
            Ok(0) => return Err("no CUDA device is visible".into()),
            Ok(n) => n,
            Err(e) => return Err(format!("the CUDA driver failed to start: {e}")),
        };
        if !nvrtc {
            for ordinal in 0..n {
                let arch = arch_of(ordinal)
                    .map_err(|e| format!("GPU {ordinal}'s architecture is unknown: {e}"))?;
                if kernels::CPQ.shipped(&arch).is_none() {
                    return Err(format!(
                        "{}, and GPU {ordinal} ({arch}) has no kernels built ahead: only {} has",
                        kernels::nvrtc_missing(),
                        kernels::SHIPPED_ARCH
                    ));
                }
            }
        }
        Ok(())
    }
    #[cfg(not(feature = "cuda"))]
    Err("genie-core was built without the `cuda` feature".into())
}

/// The architecture of GPU `ordinal`, as `sm_XY`, without a context.
#[cfg(feature = "cuda")]
fn arch_of(ordinal: i32) -> std::result::Result<String, cudarc::driver::DriverError> {
    use cudarc::driver::{result::device, sys::CUdevice_attribute as A};
    let dev = device::get(ordinal)?;
    // SAFETY: `dev` comes from `device::get`.
    let (major, minor) = unsafe {
        (
            device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        )
    };
    Ok(format!("sm_{major}{minor}"))
}

/// A context on device `ordinal`, the entry points `entries` of `module` (loaded for the device's
/// architecture by [`kernels::load`]) in that order, and a new stream: what a launcher works
/// with.
#[cfg(feature = "cuda")]
pub fn open_module(
    ordinal: usize,
    module: &kernels::KernelModule,
    entries: &[&str],
) -> Result<(
    Arc<cudarc::driver::CudaContext>,
    Vec<cudarc::driver::CudaFunction>,
    Arc<cudarc::driver::CudaStream>,
)> {
    let ctx = cudarc::driver::CudaContext::new(ordinal).map_err(cuda_err)?;
    let (major, minor) = ctx.compute_capability().map_err(cuda_err)?;
    let loaded = kernels::load(&ctx, module, &format!("sm_{major}{minor}"))?;
    let f = entries
        .iter()
        .map(|e| loaded.load_function(e).map_err(cuda_err))
        .collect::<Result<Vec<_>>>()?;
    let s = ctx.new_stream().map_err(cuda_err)?;
    Ok((ctx, f, s))
}

/// Lets the default memory pool of `ctx`'s device keep up to `bytes` of the memory that streams
/// free, rather than hand it back to the driver at each synchronization: a search's buffers of
/// the same sizes then map no new memory. On an H200 (2026-11-27), with the first batch's sizes
/// kept this way, the CLI's codebook search of 10,000 queries took about 2 ms less.
#[cfg(feature = "cuda")]
pub fn keep_freed_memory(ctx: &cudarc::driver::CudaContext, bytes: u64) -> Result<()> {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut keep = bytes;
    // SAFETY: `pool` receives the default pool of the context's device; the threshold
    // attribute takes a u64.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device())
            .result()
            .and_then(|()| {
                sys::cuMemPoolSetAttribute(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&mut keep as *mut u64).cast(),
                )
                .result()
            })
    }
    .map_err(cuda_err)
}

/// Whether this process has called the CUDA driver (every call goes through [`cuda_probe`]):
/// from then on the devices it sees are fixed.
static DRIVER_CALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The variable that lists the GPUs the CUDA driver shows a process.
const VISIBLE: &str = "CUDA_VISIBLE_DEVICES";

/// How many GPUs the CUDA driver would show this process, counted without starting it (the
/// driver starts every GPU it shows: see [`show_only`]): the entries of `CUDA_VISIBLE_DEVICES`
/// up to the first that names none (`-1`, empty), else the NVIDIA driver's GPUs under
/// `/proc/driver/nvidia/gpus`; [`device_count`] where neither says.
pub fn visible_count() -> usize {
    if let Ok(list) = std::env::var(VISIBLE) {
        return list
            .split(',')
            .map(str::trim)
            .take_while(|e| !e.is_empty() && !e.starts_with('-'))
            .count();
    }
    match std::fs::read_dir("/proc/driver/nvidia/gpus") {
        Ok(dir) => dir.count(),
        Err(_) => device_count(),
    }
}

/// Shows the CUDA driver only the GPUs `ordinals` (of those it would show now) by narrowing
/// `CUDA_VISIBLE_DEVICES`, before the driver starts: it starts every GPU it shows, which took
/// about 0.25 s a GPU on a 4-H200 host (2026-11-26: one GPU of four, 2,137 ms for the whole
/// command, 1,394 ms with the other three hidden). Returns the ordinals the GPUs have then
/// (`0..n`); `None`, changing nothing, once the driver has been called in this process (what it
/// shows is fixed) or when an ordinal is past the list.
pub fn show_only(ordinals: &[usize]) -> Option<Vec<usize>> {
    if DRIVER_CALLED.load(std::sync::atomic::Ordering::SeqCst) || ordinals.is_empty() {
        return None;
    }
    let named: Vec<String> = match std::env::var(VISIBLE) {
        Ok(list) => {
            let entries: Vec<&str> = list.split(',').map(str::trim).collect();
            ordinals
                .iter()
                .map(|&o| entries.get(o).map(|e| (*e).to_string()))
                .collect::<Option<_>>()?
        }
        Err(_) => ordinals.iter().map(usize::to_string).collect(),
    };
    std::env::set_var(VISIBLE, named.join(","));
    Some((0..ordinals.len()).collect())
}

/// Number of CUDA devices visible (0 when there is no usable GPU).
pub fn device_count() -> usize {
    if cuda_probe().is_err() {
        return 0;
    }
    #[cfg(feature = "cuda")]
    return cudarc::driver::CudaContext::device_count().map_or(0, |n| n.max(0) as usize);
    #[cfg(not(feature = "cuda"))]
    0
}

/// Free and total bytes of a GPU's memory (`None` without a usable GPU of that ordinal): what a
/// server reports as device memory in use.
pub fn device_memory(ordinal: usize) -> Option<(u64, u64)> {
    if ordinal >= device_count() {
        return None;
    }
    #[cfg(feature = "cuda")]
    return cudarc::driver::CudaContext::new(ordinal)
        .and_then(|ctx| ctx.mem_get_info())
        .ok()
        .map(|(free, total)| (free as u64, total as u64));
    #[cfg(not(feature = "cuda"))]
    None
}

/// The CUDA backend on one device.
pub struct CudaBackend {
    #[cfg(feature = "cuda")]
    inner: Arc<gpu::Gpu>,
    /// An explicit batch budget; `None` takes a share of the memory free at the time.
    budget: Option<u64>,
    /// The device's ordinal.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    ordinal: usize,
    /// The form of the List Array uploaded.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    postings: PostingsForm,
}

/// The form an index's List Array takes on the device (`crate::packed`). The plain ids are the
/// faster to count (the match kernels are bound by their instructions, and a packed posting costs
/// a dozen more: docs/journal/engine.md, "Packed postings"); the packed form holds 44-67% of
/// their bytes on the suite's workloads, so an index up to twice as large stays on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PostingsForm {
    /// Plain while the ids take at most half the device's free memory, else packed where that
    /// saves at least a quarter ([`crate::packed::PACKED_SHARE`]); the environment's
    /// `GENIE_PACKED_POSTINGS` (`on`, `off`) decides instead when set ([`PostingsForm::resolved`]).
    #[default]
    Auto,
    /// The ids as they are.
    Plain,
    /// Packed in blocks, whatever it saves.
    Packed,
}

impl PostingsForm {
    /// The form an upload takes: `Auto` becomes `Packed` or `Plain` where the environment's
    /// `GENIE_PACKED_POSTINGS` is `on` or `off`; the others stay as they are.
    pub fn resolved(self) -> Self {
        match (self, std::env::var("GENIE_PACKED_POSTINGS").as_deref()) {
            (Self::Auto, Ok("on")) => Self::Packed,
            (Self::Auto, Ok("off")) => Self::Plain,
            (form, _) => form,
        }
    }

    /// Whether to pack a List Array of `plain_bytes` on a device with `free` bytes free (then
    /// [`PostingsForm::keeps`] decides on the packed form).
    pub fn tries_packing(self, plain_bytes: u64, free: u64) -> bool {
        match self {
            Self::Plain => false,
            Self::Packed => true,
            Self::Auto => plain_bytes > free / 2,
        }
    }

    /// Whether to upload `packed` rather than the plain ids, once packed.
    pub fn keeps(self, packed: &crate::packed::PackedPostings) -> bool {
        match self {
            Self::Plain => false,
            Self::Packed => true,
            Self::Auto => crate::packed::pays(packed),
        }
    }
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("name", &self.name())
            .field("budget", &self.budget)
            .finish()
    }
}

/// Default share of the device's free memory a batch may use.
pub const GPU_BUDGET_FRACTION: f64 = 0.5;

impl CudaBackend {
    /// Opens device `ordinal` and compiles the kernels (cached on disk). The batch budget is
    /// half the device memory free when it is asked for (after the index is uploaded), or
    /// `GENIE_GPU_BUDGET_MB` when set.
    pub fn new(ordinal: usize) -> Result<Self> {
        cuda_probe().map_err(GenieError::GpuUnavailable)?;
        #[cfg(feature = "cuda")]
        {
            let inner = Arc::new(gpu::Gpu::open(ordinal)?);
            let budget = std::env::var("GENIE_GPU_BUDGET_MB")
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .map(|mb| mb << 20);
            Ok(Self {
                inner,
                budget,
                ordinal,
                postings: PostingsForm::Auto,
            })
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = ordinal;
            Err(GenieError::GpuUnavailable(
                "built without the `cuda` feature".into(),
            ))
        }
    }

    /// Sets the batch memory budget in bytes.
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = Some(bytes.max(1));
        self
    }

    /// Sets the form of the List Array of the indexes uploaded from now on.
    pub fn with_postings(mut self, form: PostingsForm) -> Self {
        self.postings = form;
        self
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> String {
        #[cfg(feature = "cuda")]
        return self.inner.name();
        #[cfg(not(feature = "cuda"))]
        "cuda (unavailable)".into()
    }

    fn memory_budget(&self) -> u64 {
        #[cfg(feature = "cuda")]
        return self
            .budget
            .unwrap_or_else(|| (self.inner.free_memory() as f64 * GPU_BUDGET_FRACTION) as u64);
        #[cfg(not(feature = "cuda"))]
        self.budget.unwrap_or(0)
    }

    fn gpu_ordinal(&self) -> Option<usize> {
        Some(self.ordinal)
    }

    fn upload(&self, index: Arc<InvertedIndex>) -> Result<Box<dyn ResidentIndex>> {
        #[cfg(feature = "cuda")]
        return Ok(Box::new(gpu::GpuResident::new(
            self.inner.clone(),
            index,
            self.postings,
        )?));
        #[cfg(not(feature = "cuda"))]
        {
            let _ = index;
            Err(GenieError::GpuUnavailable(
                "built without the `cuda` feature".into(),
            ))
        }
    }
}
