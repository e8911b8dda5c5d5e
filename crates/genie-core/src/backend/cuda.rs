//! The CUDA backend's entry point. Until its kernels land it only probes the machine and reports
//! why it cannot run, so callers need no `#[cfg]`.

use super::{Backend, ResidentIndex};
use crate::error::{GenieError, Result};
use crate::index::InvertedIndex;
use std::sync::Arc;

/// Checks that the CUDA driver library, NVRTC and a device are present, without letting cudarc
/// panic on a missing library. The error says what is missing.
pub fn cuda_probe() -> std::result::Result<(), String> {
    #[cfg(feature = "cuda")]
    {
        // SAFETY: only loads the shared libraries to see whether they exist.
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

/// The CUDA backend.
#[derive(Debug)]
pub struct CudaBackend {
    _private: (),
}

impl CudaBackend {
    /// Opens device `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self> {
        cuda_probe().map_err(GenieError::GpuUnavailable)?;
        Err(GenieError::GpuUnavailable(format!(
            "device {ordinal} is present, but this build has no CUDA kernels yet"
        )))
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> String {
        "cuda".into()
    }
    fn memory_budget(&self) -> u64 {
        0
    }
    fn upload(&self, _index: Arc<InvertedIndex>) -> Result<Box<dyn ResidentIndex>> {
        Err(GenieError::GpuUnavailable(
            "no CUDA kernels in this build".into(),
        ))
    }
}
