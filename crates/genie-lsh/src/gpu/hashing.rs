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
    let (ctx, mut f, s) = open_module(ordinal, &LSH, &[entry])?;
    let f = f
        .pop()
        .ok_or_else(|| GenieError::Cuda(format!("no entry {entry}")))?;
    Ok((ctx, f, s))
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

/// A family's kernel argument between `dim` and `seeds`: an array copied to the device before the
/// launch, or a scalar passed by value.
#[derive(Clone, Copy)]
enum Param<'a> {
    Floats(&'a [f32]),
    Doubles(&'a [f64]),
    Double(f64),
    Word(u32),
}

/// A [`Param`] ready for the launch.
enum DeviceParam {
    Floats(CudaSlice<f32>),
    Doubles(CudaSlice<f64>),
    Double(f64),
    Word(u32),
}

impl Param<'_> {
    /// Copies an array to the device on `s`; a scalar stays as it is.
    fn upload(self, s: &Arc<CudaStream>) -> Result<DeviceParam> {
        Ok(match self {
            Param::Floats(v) => DeviceParam::Floats(s.clone_htod(v).map_err(cuda_err)?),
            Param::Doubles(v) => DeviceParam::Doubles(s.clone_htod(v).map_err(cuda_err)?),
            Param::Double(x) => DeviceParam::Double(x),
            Param::Word(x) => DeviceParam::Word(x),
        })
    }
}

/// The hashing kernels' common arguments around a family's own `params`:
/// `(vectors, n, dim, params.., seeds, m, buckets, out)`.
struct HashLaunch<'a> {
    entry: &'static str,
    vectors: &'a [f32],
    dim: u32,
    params: &'a [Param<'a>],
    seeds: &'a [u32],
    buckets: u32,
}

/// Runs a checked hashing job on device `ordinal`: copies the vectors, the family's arrays (in
/// argument order) and the seeds, and launches `launch.entry` over the `n x m` (vector, function)
/// pairs; the result is `n x m` keywords, row-major.
fn hash_job(ordinal: usize, launch: HashLaunch<'_>) -> Result<Vec<u32>> {
    let (n, m) = shape(launch.vectors, launch.dim, launch.seeds);
    hash_on_device(ordinal, launch.entry, (n, m), |s, f, out| {
        let vecs = s.clone_htod(launch.vectors).map_err(cuda_err)?;
        let params = launch
            .params
            .iter()
            .map(|p| p.upload(s))
            .collect::<Result<Vec<_>>>()?;
        let seeds = s.clone_htod(launch.seeds).map_err(cuda_err)?;
        let (n32, m32) = (n as u32, m as u32);
        let mut args = s.launch_builder(f);
        args.arg(&vecs).arg(&n32).arg(&launch.dim);
        for p in &params {
            match p {
                DeviceParam::Floats(d) => args.arg(d),
                DeviceParam::Doubles(d) => args.arg(d),
                DeviceParam::Double(x) => args.arg(x),
                DeviceParam::Word(x) => args.arg(x),
            };
        }
        args.arg(&seeds).arg(&m32).arg(&launch.buckets).arg(out);
        // SAFETY: the callers' `params` follow the argument types and order of `launch.entry` in
        // kernels/lsh.cu between `dim` and `seeds`; their `check` sized every array.
        unsafe { args.launch(grid(n * m)) }.map_err(cuda_err)?;
        Ok(())
    })
}

/// Hashes E2LSH or L1 `job` on device `ordinal`; the result is `n x m` keywords, row-major.
pub fn project_hash(ordinal: usize, job: &ProjectionJob<'_>) -> Result<Vec<u32>> {
    cuda_probe().map_err(GenieError::GpuUnavailable)?;
    job.check()?;
    // `project_hash(vecs, n, dim, a, offsets, width, seeds, m, buckets, out)`.
    let params = [
        Param::Floats(job.a),
        Param::Doubles(job.offsets),
        Param::Double(job.width),
    ];
    hash_job(
        ordinal,
        HashLaunch {
            entry: "project_hash",
            vectors: job.vectors,
            dim: job.dim,
            params: &params,
            seeds: job.seeds,
            buckets: job.buckets,
        },
    )
}

/// Hashes SRP `job` on device `ordinal`; the result is `n x m` keywords, row-major.
pub fn sign_hash(ordinal: usize, job: &SignJob<'_>) -> Result<Vec<u32>> {
    cuda_probe().map_err(GenieError::GpuUnavailable)?;
    // `check` also bounds `bits` to 1..=64.
    job.check()?;
    // `sign_hash(vecs, n, dim, a, bits, seeds, m, buckets, out)`.
    let params = [Param::Floats(job.a), Param::Word(job.bits)];
    hash_job(
        ordinal,
        HashLaunch {
            entry: "sign_hash",
            vectors: job.vectors,
            dim: job.dim,
            params: &params,
            seeds: job.seeds,
            buckets: job.buckets,
        },
    )
}

/// Hashes RBH `job` on device `ordinal`; the result is `n x m` keywords, row-major.
pub fn binning_hash(ordinal: usize, job: &BinningJob<'_>) -> Result<Vec<u32>> {
    cuda_probe().map_err(GenieError::GpuUnavailable)?;
    job.check()?;
    // `binning_hash(vecs, n, dim, inv_width, shift, seeds, m, buckets, out)`.
    let params = [Param::Doubles(job.inv_width), Param::Doubles(job.shift)];
    hash_job(
        ordinal,
        HashLaunch {
            entry: "binning_hash",
            vectors: job.vectors,
            dim: job.dim,
            params: &params,
            seeds: job.seeds,
            buckets: job.buckets,
        },
    )
}
