//! Exact distances on the GPU for re-ranking (kernels/lsh.cu `rerank_distance`): the vectors stay
//! resident, each call sends queries and candidate ids and gets the distances back, identical to
//! the CPU's bit for bit.

use super::cuda_err;
use super::VectorDistance;
use crate::error::{GenieError, Result};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

/// Vectors resident on a GPU, for exact distances to candidates.
pub struct GpuVectors {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    func: CudaFunction,
    vecs: CudaSlice<f32>,
    n: u32,
    dim: u32,
}

impl std::fmt::Debug for GpuVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuVectors")
            .field("n", &self.n)
            .field("dim", &self.dim)
            .finish()
    }
}

impl GpuVectors {
    /// Uploads `vectors` (rows of `dim` floats) to device `ordinal`.
    pub fn new(ordinal: usize, vectors: &[f32], dim: usize) -> Result<Self> {
        super::cuda_probe().map_err(GenieError::GpuUnavailable)?;
        if dim == 0 || vectors.len() % dim != 0 {
            return Err(GenieError::InvalidParameter(format!(
                "{} floats are not rows of dimension {dim}",
                vectors.len()
            )));
        }
        let n = u32::try_from(vectors.len() / dim).map_err(|_| {
            GenieError::InvalidParameter("more than 2^32 vectors to re-rank on a GPU".into())
        })?;
        let dim32 = u32::try_from(dim)
            .map_err(|_| GenieError::InvalidParameter(format!("dimension {dim} too large")))?;
        let (ctx, func, stream) = super::lsh::open(ordinal, "rerank_distance")?;
        let vecs = stream
            .clone_htod(if vectors.is_empty() {
                &[0.0f32][..]
            } else {
                vectors
            })
            .map_err(cuda_err)?;
        stream.synchronize().map_err(cuda_err)?;
        Ok(Self {
            ctx,
            stream,
            func,
            vecs,
            n,
            dim: dim32,
        })
    }

    /// Distances from each query (rows of `queries`) to its `per_query` candidates (`candidates`,
    /// query-major; ids at or beyond the vectors give NaN): `queries x per_query` values.
    pub fn distances(
        &self,
        queries: &[f32],
        candidates: &[u32],
        per_query: usize,
        metric: VectorDistance,
    ) -> Result<Vec<f64>> {
        let dim = self.dim as usize;
        let nq = queries.len() / dim;
        if queries.len() % dim != 0 || candidates.len() != nq * per_query {
            return Err(GenieError::InvalidParameter(format!(
                "re-rank: {} query floats of dimension {dim} and {} candidates for {per_query} per query",
                queries.len(),
                candidates.len()
            )));
        }
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let (nq32, kc32) = (
            u32::try_from(nq)
                .map_err(|_| GenieError::InvalidParameter("too many queries".into()))?,
            u32::try_from(per_query)
                .map_err(|_| GenieError::InvalidParameter("too many candidates".into()))?,
        );
        let s = &self.stream;
        let q = s.clone_htod(queries).map_err(cuda_err)?;
        let c = s.clone_htod(candidates).map_err(cuda_err)?;
        let mut out = s.alloc_zeros::<f64>(candidates.len()).map_err(cuda_err)?;
        let m = metric as u32;
        let cfg = LaunchConfig {
            grid_dim: (candidates.len().div_ceil(128).min(1 << 20) as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: argument types and order match kernels/lsh.cu; sizes were checked above.
        unsafe {
            s.launch_builder(&self.func)
                .arg(&self.vecs)
                .arg(&self.n)
                .arg(&self.dim)
                .arg(&q)
                .arg(&c)
                .arg(&kc32)
                .arg(&nq32)
                .arg(&m)
                .arg(&mut out)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        let d = s.clone_dtoh(&out).map_err(cuda_err)?;
        s.synchronize().map_err(cuda_err)?;
        self.ctx.check_err().map_err(cuda_err)?;
        Ok(d)
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}
