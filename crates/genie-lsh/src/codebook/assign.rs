//! Where the nearest-centre searches of training and encoding run: every row's nearest coarse
//! cell and every residual slice's nearest codeword, on the GPU when one is chosen
//! (`kernels/vectors.cu` `nearest_scores` and `smallest_rows`, the CPU's arithmetic and ties), else on
//! all cores. Either way the same centre for every row, so a codebook trained and encoded on the
//! GPU is the one the CPU would build, bit for bit.

use super::kmeans::Centres;
use crate::error::{LshError, Result};
use crate::gpu::GpuVectors;
use genie_core::backend::cuda_probe;
use genie_core::DeviceChoice;

/// Nearest-centre searches over rows of one dimension.
pub struct Assigner {
    dim: usize,
    gpu: Option<GpuVectors>,
}

impl std::fmt::Debug for Assigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assigner")
            .field("dim", &self.dim)
            .field("gpu", &self.gpu.is_some())
            .finish()
    }
}

impl Assigner {
    /// On the CPU.
    pub fn cpu(dim: usize) -> Self {
        Self { dim, gpu: None }
    }

    /// For rows of `dim` floats on `device`: `Auto` takes GPU 0 when it is usable (and logs why
    /// not), `Gpu` fails without one.
    pub fn new(device: DeviceChoice, dim: usize) -> Result<Self> {
        if device == DeviceChoice::Cpu {
            return Ok(Self::cpu(dim));
        }
        let gpu =
            cuda_probe().and_then(|()| GpuVectors::new(0, &[], dim).map_err(|e| e.to_string()));
        match (gpu, device) {
            (Ok(g), _) => Ok(Self { dim, gpu: Some(g) }),
            (Err(why), DeviceChoice::Gpu) => Err(LshError::InvalidParameter(format!(
                "codebook training on the GPU: {why}"
            ))),
            (Err(why), _) => {
                log::info!("codebook: training on the CPU ({why})");
                Ok(Self::cpu(dim))
            }
        }
    }

    /// An assigner for rows of `dim` floats where this one runs (the slices of product
    /// quantization); the CPU when the GPU refuses.
    pub fn for_dim(&self, dim: usize) -> Self {
        if self.gpu.is_none() {
            return Self::cpu(dim);
        }
        match GpuVectors::new(0, &[], dim) {
            Ok(g) => Self { dim, gpu: Some(g) },
            Err(why) => {
                log::info!("codebook: slices of {dim} on the CPU ({why})");
                Self::cpu(dim)
            }
        }
    }

    /// Whether the searches run on a GPU.
    pub fn on_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// The nearest of `centres` to each row of `rows` (the lower centre on a tie).
    pub fn nearest(&self, centres: &Centres, rows: &[f32]) -> Result<Vec<u32>> {
        match &self.gpu {
            Some(g) if centres.dim == self.dim && !centres.is_empty() => g
                .nearest_centres(&centres.data, &centres.norms, rows)
                .map_err(LshError::from),
            _ => Ok(centres.nearest_all(rows)),
        }
    }
}
