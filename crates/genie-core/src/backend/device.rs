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

/// The backend for a choice: the first GPU, or the CPU (see [`select_backends`]).
pub fn select_backend(choice: DeviceChoice) -> Result<Box<dyn Backend>> {
    select_backends(choice, Some(&[0]))?
        .pop()
        .ok_or_else(|| GenieError::Internal("no backend was opened".into()))
}

/// The backends for a choice, the one device policy of every front end: the listed GPUs
/// (default: every visible one), each opened on a thread of its own (context and kernels at
/// once), or the CPU. In `auto` a missing GPU is logged and the CPU is used.
pub fn select_backends(
    choice: DeviceChoice,
    devices: Option<&[usize]>,
) -> Result<Vec<Box<dyn Backend>>> {
    let gpus = || -> Result<Vec<Box<dyn Backend>>> {
        let list: Vec<usize> = match devices {
            Some(l) => l.to_vec(),
            None => (0..super::cuda::device_count().max(1)).collect(),
        };
        each_on_a_thread(list, "opening a GPU", |i| {
            CudaBackend::new(i).map(|b| Box::new(b) as Box<dyn Backend>)
        })
    };
    match choice {
        DeviceChoice::Cpu => Ok(vec![Box::new(CpuBackend::new())]),
        DeviceChoice::Gpu => gpus(),
        DeviceChoice::Auto => gpus().or_else(|e| {
            log::info!("using the CPU backend: {e}");
            Ok(vec![Box::new(CpuBackend::new()) as Box<dyn Backend>])
        }),
    }
}

/// `f` of every item, each on a thread of its own (devices open at once), the results in the
/// items' order; the first error, or `what` panicked as an internal error.
pub fn each_on_a_thread<I: Send, T: Send, E: From<GenieError> + Send>(
    items: Vec<I>,
    what: &str,
    f: impl Fn(I) -> std::result::Result<T, E> + Sync,
) -> std::result::Result<Vec<T>, E> {
    std::thread::scope(|s| {
        let running: Vec<_> = items
            .into_iter()
            .map(|item| {
                let f = &f;
                s.spawn(move || f(item))
            })
            .collect();
        running
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(GenieError::Internal(format!("{what} panicked")).into())
                })
            })
            .collect()
    })
}
