//! LSH projection hashing on the GPU (kernels/lsh.cu): all `n x m` (vector, function) pairs at
//! once, signatures identical to the CPU's bit for bit, returned as keywords.

use super::kernels::{ptx_for, Kernel};
use super::ProjectionJob;
use crate::error::{GenieError, Result};
use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};

fn cuda_err(e: impl std::fmt::Debug) -> GenieError {
    GenieError::Cuda(format!("{e:?}"))
}

/// Hashes `job` on device `ordinal`; the result is `n x m` keywords, row-major.
pub fn project_hash(ordinal: usize, job: &ProjectionJob<'_>) -> Result<Vec<u32>> {
    super::cuda_probe().map_err(GenieError::GpuUnavailable)?;
    job.check()?;
    let dim = job.dim as usize;
    let (n, m) = (job.vectors.len() / dim.max(1), job.seeds.len());
    if n == 0 || m == 0 {
        return Ok(Vec::new());
    }
    let ctx = CudaContext::new(ordinal).map_err(cuda_err)?;
    let (major, minor) = ctx.compute_capability().map_err(cuda_err)?;
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx_for(
            Kernel::Lsh,
            &format!("sm_{major}{minor}"),
        )?))
        .map_err(cuda_err)?;
    let f = module.load_function("project_hash").map_err(cuda_err)?;
    let s = ctx.new_stream().map_err(cuda_err)?;
    let vecs = s.clone_htod(job.vectors).map_err(cuda_err)?;
    let a = s.clone_htod(job.a).map_err(cuda_err)?;
    let offsets = s.clone_htod(job.offsets).map_err(cuda_err)?;
    let seeds = s.clone_htod(job.seeds).map_err(cuda_err)?;
    let total = n * m;
    let mut out = s.alloc_zeros::<u32>(total).map_err(cuda_err)?;
    let (n32, m32) = (n as u32, m as u32);
    let blocks = total.div_ceil(256).min(1 << 20) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: argument types and order match kernels/lsh.cu; `check` sized every array.
    unsafe {
        s.launch_builder(&f)
            .arg(&vecs)
            .arg(&n32)
            .arg(&job.dim)
            .arg(&a)
            .arg(&offsets)
            .arg(&job.width)
            .arg(&seeds)
            .arg(&m32)
            .arg(&job.buckets)
            .arg(&mut out)
            .launch(cfg)
            .map_err(cuda_err)?;
    }
    let keywords = s.clone_dtoh(&out).map_err(cuda_err)?;
    s.synchronize().map_err(cuda_err)?;
    ctx.check_err().map_err(cuda_err)?;
    Ok(keywords)
}
