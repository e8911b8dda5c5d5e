//! Device selection (DESIGN.md section 4): `auto` takes the GPU when the CUDA driver library, a
//! device and NVRTC are all there, else the CPU with the reason logged; `cpu` and `gpu` force one,
//! and `gpu` without a GPU is an error. `GENIE_DEVICE` sets the default.

use super::{Backend, CpuBackend, CudaBackend};
use crate::error::{GenieError, Result};
use std::str::FromStr;

/// Which backend to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU when one is usable, else the CPU.
    #[default]
    Auto,
    /// The CPU backend.
    Cpu,
    /// The CUDA backend; an error when no GPU is usable.
    Gpu,
}

impl FromStr for DeviceChoice {
    type Err = GenieError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "gpu" | "cuda" => Ok(Self::Gpu),
            other => Err(GenieError::InvalidParameter(format!(
                "device {other:?}: expected auto, cpu or gpu"
            ))),
        }
    }
}

impl DeviceChoice {
    /// The choice named by `GENIE_DEVICE`, or `auto` when unset.
    pub fn from_env() -> Result<Self> {
        match std::env::var("GENIE_DEVICE") {
            Ok(v) if !v.trim().is_empty() => v.parse(),
            _ => Ok(Self::Auto),
        }
    }
}

/// The backend for a choice. In `auto` a missing GPU is logged and the CPU is used.
pub fn select_backend(choice: DeviceChoice) -> Result<Box<dyn Backend>> {
    match choice {
        DeviceChoice::Cpu => Ok(Box::new(CpuBackend::new())),
        DeviceChoice::Gpu => Ok(Box::new(CudaBackend::new(0)?)),
        DeviceChoice::Auto => match CudaBackend::new(0) {
            Ok(gpu) => Ok(Box::new(gpu)),
            Err(e) => {
                log::info!("using the CPU backend: {e}");
                Ok(Box::new(CpuBackend::new()))
            }
        },
    }
}
