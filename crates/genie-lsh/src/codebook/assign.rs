//! Where the nearest-centre searches of training and encoding run: every row's nearest coarse
//! cell and every residual slice's nearest codeword, on the GPU when one is chosen
//! (`kernels/vectors.cu` `nearest_scores` and `smallest_rows`, the CPU's arithmetic and ties), else on
//! all cores. Either way the same centre for every row, so a codebook trained and encoded on the
//! GPU is the one the CPU would build, bit for bit.

use super::kmeans::{smallest, Centres};
use crate::error::{LshError, Result};
use crate::gpu::GpuVectors;
use genie_core::backend::cuda_probe;
use genie_core::DeviceChoice;
use rayon::prelude::*;

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

    /// The `top` nearest of `centres` to each row of `rows`, nearest first by (score, index)
    /// (`u32::MAX` past the centres), with their scores `|c|^2 - 2 x.c`: `rows x top` of each.
    pub fn nearest_k(
        &self,
        centres: &Centres,
        rows: &[f32],
        top: usize,
    ) -> Result<(Vec<u32>, Vec<f32>)> {
        if let Some(g) = self.gpu.as_ref() {
            if centres.dim == self.dim && !centres.is_empty() && top > 0 {
                return g
                    .nearest_top(&centres.data, &centres.norms, rows, top)
                    .map_err(LshError::from);
            }
        }
        let (idx, best): (Vec<Vec<u32>>, Vec<Vec<f32>>) = rows
            .par_chunks_exact(self.dim.max(1))
            .map(|x| {
                let (mut scores, mut idx) = (Vec::new(), Vec::new());
                centres.scores(x, &mut scores);
                smallest(&scores, top, &mut idx);
                let mut best: Vec<f32> = idx.iter().map(|&i| scores[i as usize]).collect();
                idx.resize(top, u32::MAX);
                best.resize(top, 0.0);
                (idx, best)
            })
            .unzip();
        Ok((idx.concat(), best.concat()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn nearest_k_ranks_by_score_then_index_and_pads_past_the_centres() {
        // centres 0 and 3 are the same point, as are 1 and 4: equal scores, the lower index first
        let centres = Centres::new(vec![1.0, 0.0, 5.0, 1.0, 0.0], 1);
        let rows = [0.9f32, 4.0];
        let (idx, best) = Assigner::cpu(1).nearest_k(&centres, &rows, 6).unwrap();
        let m = u32::MAX;
        assert_eq!(idx, vec![0, 3, 1, 4, 2, m, 2, 0, 3, 1, 4, m]);
        assert_eq!(best.len(), 12);
        assert_eq!(best[5], 0.0);
        assert_eq!(best[0], 1.0 - 2.0 * 0.9);
        assert_eq!(best[6], 25.0 - 2.0 * 5.0 * 4.0);
    }
}
