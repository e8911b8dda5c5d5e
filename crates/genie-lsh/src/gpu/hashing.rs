//! LSH hashing on the GPU (`kernels/lsh.cu`): all `n x m` (vector, function) pairs at once,
//! signatures identical to the CPU's bit for bit, returned as keywords. One launcher per family
//! kind: projections (E2LSH, L1), sign projections (SRP) and random binning (RBH).

use super::{BinningJob, ProjectionJob, SignJob};
use crate::kernels::LSH;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use genie_core::backend::cuda::{cuda_err, cuda_probe, open_module};
use genie_core::{GenieError, Result};
use std::sync::Arc;

/// A context on device `ordinal`, entry `entry` of `kernels/lsh.cu` and a stream.
pub(super) fn open(
    ordinal: usize,
    entry: &str,
) -> Result<(Arc<CudaContext>, CudaFunction, Arc<CudaStream>)> {
    let (ctx, mut f, s) = open_all(ordinal, &[entry])?;
    let f = f
        .pop()
        .ok_or_else(|| GenieError::Cuda(format!("no entry {entry}")))?;
    Ok((ctx, f, s))
}

/// A context on device `ordinal`, entries `entries` of `kernels/lsh.cu` (one module) and a
/// stream.
pub(super) fn open_all(
    ordinal: usize,
    entries: &[&str],
) -> Result<(Arc<CudaContext>, Vec<CudaFunction>, Arc<CudaStream>)> {
    open_module(ordinal, &LSH, entries)
}

/// A grid-stride launch over `total` threads' worth of work.
fn grid(total: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (total.div_ceil(256).min(1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Vectors and functions of a checked job (`n` fits in 32 bits after `check`).
fn shape(vectors: &[f32], dim: u32, seeds: &[u32]) -> (usize, usize) {
    (vectors.len() / (dim as usize).max(1), seeds.len())
}

/// Runs entry `entry` over the `n x m` (vector, function) pairs of a checked job on device
/// `ordinal`: `launch` copies the job's arrays and launches into the `n x m` keyword buffer; the
/// keywords come back row-major.
fn hash_on_device(
    ordinal: usize,
    entry: &str,
    (n, m): (usize, usize),
    launch: impl FnOnce(&Arc<CudaStream>, &CudaFunction, &mut CudaSlice<u32>) -> Result<()>,
) -> Result<Vec<u32>> {
    if n == 0 || m == 0 {
        return Ok(Vec::new());
    }
    let (ctx, f, s) = open(ordinal, entry)?;
    let mut out = s.alloc_zeros::<u32>(n * m).map_err(cuda_err)?;
    launch(&s, &f, &mut out)?;
    let keywords = s.clone_dtoh(&out).map_err(cuda_err)?;
    s.synchronize().map_err(cuda_err)?;
    ctx.check_err().map_err(cuda_err)?;
    Ok(keywords)
}

/// Hashes E2LSH or L1 `job` on device `ordinal`; the result is `n x m` keywords, row-major.
pub fn project_hash(ordinal: usize, job: &ProjectionJob<'_>) -> Result<Vec<u32>> {
    cuda_probe().map_err(GenieError::GpuUnavailable)?;
    job.check()?;
    let (n, m) = shape(job.vectors, job.dim, job.seeds);
    hash_on_device(ordinal, "project_hash", (n, m), |s, f, out| {
        let vecs = s.clone_htod(job.vectors).map_err(cuda_err)?;
        let a = s.clone_htod(job.a).map_err(cuda_err)?;
        let offsets = s.clone_htod(job.offsets).map_err(cuda_err)?;
        let seeds = s.clone_htod(job.seeds).map_err(cuda_err)?;
        let (n32, m32) = (n as u32, m as u32);
        // SAFETY: argument types and order match `project_hash` in kernels/lsh.cu; `check`
        // sized every array.
        unsafe {
            s.launch_builder(f)
                .arg(&vecs)
                .arg(&n32)
                .arg(&job.dim)
                .arg(&a)
                .arg(&offsets)
                .arg(&job.width)
                .arg(&seeds)
                .arg(&m32)
                .arg(&job.buckets)
                .arg(out)
                .launch(grid(n * m))
                .map_err(cuda_err)?;
        }
        Ok(())
    })
}

/// Hashes SRP `job` on device `ordinal`; the result is `n x m` keywords, row-major.
pub fn sign_hash(ordinal: usize, job: &SignJob<'_>) -> Result<Vec<u32>> {
    cuda_probe().map_err(GenieError::GpuUnavailable)?;
    job.check()?;
    let (n, m) = shape(job.vectors, job.dim, job.seeds);
    hash_on_device(ordinal, "sign_hash", (n, m), |s, f, out| {
        let vecs = s.clone_htod(job.vectors).map_err(cuda_err)?;
        let a = s.clone_htod(job.a).map_err(cuda_err)?;
        let seeds = s.clone_htod(job.seeds).map_err(cuda_err)?;
        let (n32, m32) = (n as u32, m as u32);
        // SAFETY: argument types and order match `sign_hash` in kernels/lsh.cu; `check` sized
        // every array and bounded `bits` to 1..=64.
        unsafe {
            s.launch_builder(f)
                .arg(&vecs)
                .arg(&n32)
                .arg(&job.dim)
                .arg(&a)
                .arg(&job.bits)
                .arg(&seeds)
                .arg(&m32)
                .arg(&job.buckets)
                .arg(out)
                .launch(grid(n * m))
                .map_err(cuda_err)?;
        }
        Ok(())
    })
}

/// Hashes RBH `job` on device `ordinal`; the result is `n x m` keywords, row-major.
pub fn binning_hash(ordinal: usize, job: &BinningJob<'_>) -> Result<Vec<u32>> {
    cuda_probe().map_err(GenieError::GpuUnavailable)?;
    job.check()?;
    let (n, m) = shape(job.vectors, job.dim, job.seeds);
    hash_on_device(ordinal, "binning_hash", (n, m), |s, f, out| {
        let vecs = s.clone_htod(job.vectors).map_err(cuda_err)?;
        let inv_width = s.clone_htod(job.inv_width).map_err(cuda_err)?;
        let shift = s.clone_htod(job.shift).map_err(cuda_err)?;
        let seeds = s.clone_htod(job.seeds).map_err(cuda_err)?;
        let (n32, m32) = (n as u32, m as u32);
        // SAFETY: argument types and order match `binning_hash` in kernels/lsh.cu; `check` sized
        // every array.
        unsafe {
            s.launch_builder(f)
                .arg(&vecs)
                .arg(&n32)
                .arg(&job.dim)
                .arg(&inv_width)
                .arg(&shift)
                .arg(&seeds)
                .arg(&m32)
                .arg(&job.buckets)
                .arg(out)
                .launch(grid(n * m))
                .map_err(cuda_err)?;
        }
        Ok(())
    })
}
