//! The CUDA backend (DESIGN.md section 4): kernels from `kernels/*.cu` compiled by NVRTC at run
//! time for the device's compute capability, the index uploaded once, batches of queries run
//! through the c-PQ kernels (or the count-table baseline), results identical to the CPU backend.
//!
//! Without the `cuda` feature, or on a machine without a usable GPU, [`CudaBackend::new`] returns
//! [`GenieError::GpuUnavailable`] with the reason, so callers need no `#[cfg]`.

#[cfg(feature = "cuda")]
mod ceilings;
#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
mod lsh;
#[cfg(feature = "cuda")]
pub use lsh::project_hash;

/// LSH projection hashing of many vectors at once on a GPU (kernels/lsh.cu): for function `i`,
/// `floor((a_i . v + offsets[i]) / width)` re-hashed by MurmurHash3 with `seeds[i]` into
/// `[0, buckets)`, keyword `i * buckets + bucket`; the same arithmetic as genie-lsh's CPU code.
#[derive(Clone, Copy, Debug)]
pub struct ProjectionJob<'a> {
    /// `n x dim` vectors, row-major.
    pub vectors: &'a [f32],
    /// Their dimension.
    pub dim: u32,
    /// `m x dim` projection vectors, row-major.
    pub a: &'a [f32],
    /// `m` offsets b.
    pub offsets: &'a [f64],
    /// The bucket width w.
    pub width: f64,
    /// `m` MurmurHash3 seeds.
    pub seeds: &'a [u32],
    /// Buckets D of the re-hash.
    pub buckets: u32,
}

impl ProjectionJob<'_> {
    /// Checks that the arrays agree in size.
    pub fn check(&self) -> Result<()> {
        let (d, m) = (self.dim as usize, self.seeds.len());
        let ok = d > 0
            && self.vectors.len() % d == 0
            && self.a.len() == m * d
            && self.offsets.len() == m
            && self.buckets > 0
            && self.width > 0.0
            && (m as u64) * u64::from(self.buckets) <= u64::from(u32::MAX);
        if ok {
            Ok(())
        } else {
            Err(GenieError::InvalidParameter(
                "projection job: array sizes disagree".into(),
            ))
        }
    }
}

/// Without the `cuda` feature there is no GPU hashing.
#[cfg(not(feature = "cuda"))]
pub fn project_hash(ordinal: usize, job: &ProjectionJob<'_>) -> Result<Vec<u32>> {
    let _ = (ordinal, job);
    Err(GenieError::GpuUnavailable(
        "built without the `cuda` feature".into(),
    ))
}
pub mod kernels;

use super::{Backend, ResidentIndex};
#[cfg(feature = "cuda")]
pub use ceilings::measure_ceilings;

/// Hardware ceilings measured on the device (see [`measure_ceilings`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ceilings {
    /// Device-to-device copy, GB/s counting bytes read plus bytes written.
    pub copy_gbs: f64,
    /// Random 32-bit atomic adds into a 1 GiB table, G operations/s.
    pub atomic_gops: f64,
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
use crate::error::{GenieError, Result};
use crate::index::InvertedIndex;
use std::sync::Arc;

/// Checks that the CUDA driver library, NVRTC and a device are present, without letting cudarc
/// panic on a missing library. The error says what is missing.
pub fn cuda_probe() -> std::result::Result<(), String> {
    #[cfg(feature = "cuda")]
    {
        // SAFETY: only tries to load the shared libraries to see whether they exist.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err("the CUDA driver library (libcuda) is not installed".into());
        }
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err("NVRTC (libnvrtc) is not installed".into());
        }
        match cudarc::driver::CudaContext::device_count() {
            Ok(0) => Err("no CUDA device is visible".into()),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("the CUDA driver failed to start: {e}")),
        }
    }
    #[cfg(not(feature = "cuda"))]
    Err("genie-core was built without the `cuda` feature".into())
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

/// The CUDA backend on one device.
pub struct CudaBackend {
    #[cfg(feature = "cuda")]
    inner: Arc<gpu::Gpu>,
    /// An explicit batch budget; `None` takes a share of the memory free at the time.
    budget: Option<u64>,
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
            Ok(Self { inner, budget })
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

    fn upload(&self, index: Arc<InvertedIndex>) -> Result<Box<dyn ResidentIndex>> {
        #[cfg(feature = "cuda")]
        return Ok(Box::new(gpu::GpuResident::new(self.inner.clone(), index)?));
        #[cfg(not(feature = "cuda"))]
        {
            let _ = index;
            Err(GenieError::GpuUnavailable(
                "built without the `cuda` feature".into(),
            ))
        }
    }
}
